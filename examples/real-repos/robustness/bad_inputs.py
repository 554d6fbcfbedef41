"""Bad inputs as a careless user gives them, on a real repository: exit, one clear line, data kept."""
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

base = Path(sys.argv[1])
work = Path("/tmp/hf-bad-inputs-work")
PY = [sys.executable, "-m", "pytest_homefield.cli"]

def snap(root):
    out = {}
    for p in sorted((root / ".homefield").rglob("*")):
        if p.is_file():
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out

def lines(path): return path.read_text().splitlines(keepends=True)
def tasks(r): return r / ".homefield" / "tasks.jsonl"
def edit_task(r, fn):
    ls = lines(tasks(r)); d = json.loads(ls[1]); fn(d); ls[1] = json.dumps(d) + "\n"; tasks(r).write_text("".join(ls))
def append(path, text):
    with open(path, "a") as f: f.write(text)
def meta(r, run="r1"): return r / ".homefield" / "runs" / run / "meta.json"
def results(r, run="r1"): return r / ".homefield" / "runs" / run / "results.jsonl"
def probe_file(r):
    p = r / ".homefield" / "probe" / "x.jsonl"; p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"kind": "task", "task_id": "t", "sample": "one"}) + "\n")
BOMB = ("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)) + "test_globs: *i\n")
def yml(text):
    return lambda r: (r / ".homefield.yml").write_text(text)
def empty_repo(r):
    shutil.rmtree(r / ".git"); subprocess.run(["git", "init", "-q", str(r)], check=True)
    return None

RUN = ["run", "--agent", "noop", "--attempts", "1", "-n", "0"]
cases = [
    # records
    ("tasks.jsonl truncated line (run)", lambda r: append(tasks(r), '{"id": "abc'), RUN),
    ("tasks.jsonl garbage line (run)", lambda r: append(tasks(r), "garbage\n"), RUN),
    ("tasks.jsonl non-object line (run)", lambda r: append(tasks(r), "[1, 2]\n"), RUN),
    ("task missing field (run)", lambda r: edit_task(r, lambda d: d.pop("prompt")), RUN),
    ("task missing field (mine)", lambda r: edit_task(r, lambda d: d.pop("prompt")), ["mine", "--since", "2025-06-01", "-n", "0"]),
    ("task schema_version 2 (run)", lambda r: edit_task(r, lambda d: d.update(schema_version=2)), RUN),
    ("task mistyped FAIL_TO_PASS (run)", lambda r: edit_task(r, lambda d: d.update(FAIL_TO_PASS="t")), RUN),
    ("duplicate task id (run)", lambda r: append(tasks(r), lines(tasks(r))[0]), RUN),
    ("tasks.jsonl garbage (probe)", lambda r: append(tasks(r), "garbage\n"), ["probe", "--agent", "noop"]),
    ("tasks.jsonl garbage (ablate)", lambda r: (append(tasks(r), "garbage\n"), (r / "CLAUDE.md").write_text("- a\n- b\n")), ["ablate", "CLAUDE.md", "--agent", "noop"]),
    ("meta.json corrupt (report)", lambda r: meta(r).write_text('{"run_id": '), ["report", "r1"]),
    ("meta.json corrupt (report newest)", lambda r: meta(r, "r2").write_text("[]"), ["report"]),
    ("meta.json corrupt (run --resume)", lambda r: meta(r).write_text('{"run_id": '), RUN[:1] + ["--agent", "x=noop", "--attempts", "1", "--max-tasks", "2", "--run-id", "r1", "--resume", "-n", "0"]),
    ("meta.json schema_version 2 (report)", lambda r: meta(r).write_text(json.dumps({**json.loads(meta(r).read_text()), "schema_version": 2})), ["report", "r1"]),
    ("results.jsonl non-object (report)", lambda r: append(results(r), "7\n"), ["report", "r1"]),
    ("results.jsonl attempt '1' (report)", lambda r: append(results(r), json.dumps({"run_id": "r1", "task_id": "t", "agent": "x", "attempt": "1", "outcome": "solved"}) + "\n"), ["report", "r1"]),
    ("results.jsonl unknown outcome (run --resume)", lambda r: append(results(r), json.dumps({"run_id": "r1", "task_id": "t", "agent": "x", "attempt": 1, "outcome": "won"}) + "\n"), ["run", "--agent", "x=noop", "--attempts", "1", "--max-tasks", "2", "--run-id", "r1", "--resume", "-n", "0"]),
    ("probe record mistyped (probe --resume)", probe_file, ["probe", "--agent", "x=noop", "--resume", "-n", "0"]),
    ("probe record mistyped (run --exclude-memorized)", probe_file, ["run", "--agent", "x=cmd:true", "--exclude-memorized", "-n", "0"]),
    # settings
    ("--timeout nan", None, RUN + ["--timeout", "nan"]),
    ("--test-timeout inf", None, RUN + ["--test-timeout", "inf"]),
    ("--budget nan", None, RUN + ["--budget", "nan"]),
    ("--fail-under 1.5", None, RUN + ["--fail-under", "1.5"]),
    ("--fail-under half", None, RUN + ["--fail-under", "half"]),
    ("--fail-under for an agent not in the run", None, RUN + ["--fail-under", "nope=0.5"]),
    ("--max-tasks 0", None, RUN + ["--max-tasks", "0"]),
    ("--alpha 1.5", None, RUN + ["--alpha", "1.5"]),
    ("--shard 3/2", None, RUN + ["--shard", "3/2"]),
    ("--shard 9/9 of 4 tasks (empty)", None, RUN + ["--shard", "9/9"]),
    ("YAML alias bomb", yml(BOMB), RUN),
    ("YAML run_timeout: .nan", yml("run_timeout: .nan\n"), RUN),
    ("NAME=SPEC with a bad name", None, ["run", "--agent", "my agent=noop", "-n", "0"]),
    ("unknown agent", None, ["run", "--agent", "gpt5", "-n", "0"]),
    # resume
    ("--resume with a larger --max-tasks", None, ["run", "--agent", "x=noop", "--attempts", "1", "--max-tasks", "3", "--run-id", "r1", "--resume", "-n", "0"]),
    ("--resume with another agent spec", None, ["run", "--agent", "x=oracle", "--attempts", "1", "--max-tasks", "2", "--run-id", "r1", "--resume", "-n", "0"]),
    ("--resume with a shard the run did not have", None, ["run", "--agent", "x=noop", "--attempts", "1", "--max-tasks", "2", "--run-id", "r1", "--resume", "--shard", "1/2", "-n", "0"]),
    ("--resume of a run that does not exist", None, ["run", "--agent", "x=noop", "--run-id", "nope", "--resume", "-n", "0"]),
    ("--resume of a complete run (exit 0 expected)", None, ["run", "--agent", "x=noop", "--attempts", "1", "--max-tasks", "2", "--run-id", "r1", "--resume", "-n", "0"]),
    # repository
    ("empty tasks.jsonl", lambda r: tasks(r).write_text(""), RUN),
    ("mine in a repository with no commits", empty_repo, ["mine", "-n", "0"]),
    ("report RUN1 RUN2: one name, two specs", None, ["report", "r1", "r2"]),
    ("report of a run that does not exist", None, ["report", "nope"]),
]
rows = []
for name, setup, args in cases:
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work, symlinks=True)
    if setup: setup(work)
    before = snap(work) if (work / ".homefield").exists() else {}
    p = subprocess.run(PY + args, cwd=work, capture_output=True, text=True, timeout=600)
    after = snap(work) if (work / ".homefield").exists() else {}
    out = p.stdout + p.stderr
    errs = [l for l in out.splitlines() if l.startswith(("ERROR:", "homefield", "pytest-homefield", "nothing to resume"))
            or "error" in l.lower()[:40]]
    changed = [k for k in before if after.get(k) != before[k] and not k.endswith(("report.md", "report.json", "report.html"))]
    created = [k for k in after if k not in before]
    expect_ok = "exit 0 expected" in name
    clear = ("Traceback" not in out and "INTERNALERROR" not in out and ((p.returncode != 0) != expect_ok)
             and bool(errs or expect_ok))
    line = next((l for l in out.splitlines() if "nothing to resume" in l), None) if expect_ok else (errs[-1] if errs else out.strip().splitlines()[-1:] )
    rows.append({"case": name, "exit": p.returncode, "clear": clear, "changed": changed, "created": created, "line": line})
    print(json.dumps(rows[-1]), flush=True)
print(f"TRIED {len(rows)} CLEAR {sum(r['clear'] for r in rows)} DATA_CHANGED {sum(bool(r['changed']) for r in rows)} CREATED {sum(bool(r['created']) for r in rows)}")
