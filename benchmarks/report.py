"""What ``homefield report`` costs on a large run: 100 tasks × 5 agents × 5 attempts, side by side
with a baseline checkout of the package, in one session.

Run on demand (not a test)::

    git -C /work/main worktree add --detach /tmp/hf-base <commit before the change>
    python benchmarks/report.py --baseline /tmp/hf-base --runs 5

It builds (once, under ``--dir``, default a temporary folder) a git repository whose
``.homefield/`` holds a synthetic run in the real record format: ``tasks.jsonl`` (100 task records
with gold patches of 6–40 changed lines), ``runs/<id>/meta.json`` (5 agents), ``results.jsonl``
(2,500 result records, outcomes drawn per agent and task, seeded) and one ``diff.patch`` per attempt
(the gold patch, part of it, or unrelated lines). Then it runs ``homefield report <id>`` as a
subprocess, alternately with this checkout and with ``--baseline`` on ``PYTHONPATH`` (one warm-up of
each first), and prints the median wall and CPU (user+sys) seconds of each and the medians of the
per-run ratios this / baseline; it also checks that both wrote the same ``report.md`` and
``report.json`` bytes. Without ``--baseline`` only this checkout is timed. Targets (issue 35, CPU
seconds: the machines are shared): 100 × 5 × 5 at most 0.5 s, ``--tasks 1000`` at most 3 s.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
AGENTS = {"alpha": 0.62, "bravo": 0.55, "charlie": 0.48, "delta": 0.40, "echo": 0.25}
OUTCOMES_FAILED = ["tests_failed", "tests_failed", "tests_failed", "regression", "empty_patch", "timeout",
                   "agent_error"]


def _gold_patch(rng: random.Random, i: int) -> tuple[str, list[str]]:
    """A unified diff of ``pkg/mod_<i>.py`` with 3–20 removed and added lines, and its added lines."""
    n = rng.randint(3, 20)
    old = [f"    value = compute_{i}_{k}(x, y)  # step {k}" for k in range(n)]
    new = [f"    value = compute_{i}_{k}(x, y, strict=True)  # step {k}" for k in range(n)]
    body = [f"@@ -10,{n + 2} +10,{n + 2} @@", " def handler(x, y):"]
    body += [f"-{line}" for line in old] + [f"+{line}" for line in new] + ["     return value"]
    header = [f"diff --git a/pkg/mod_{i}.py b/pkg/mod_{i}.py", "index 1111111..2222222 100644",
              f"--- a/pkg/mod_{i}.py", f"+++ b/pkg/mod_{i}.py"]
    return "\n".join(header + body) + "\n", new


def _agent_patch(rng: random.Random, i: int, gold: str, solved: bool) -> str:
    """The gold patch (most solved attempts), a partial rewrite, or unrelated lines."""
    if solved and rng.random() < 0.6:
        return gold
    lines = gold.splitlines()
    keep = [ln for ln in lines if not ln.startswith("+") or ln.startswith("+++") or rng.random() < 0.5]
    extra = [f"+    log.debug('attempt {rng.randint(0, 10**6)}')" for _ in range(rng.randint(1, 8))]
    out = keep + extra + [f"diff --git a/tests/test_mod_{i}.py b/tests/test_mod_{i}.py",
                          f"--- a/tests/test_mod_{i}.py", f"+++ b/tests/test_mod_{i}.py", "@@ -1,1 +1,2 @@",
                          " import pytest", "+assert True"]
    return "\n".join(out) + "\n"


def build(root: Path, *, tasks: int = 100, attempts: int = 5, seed: int = 18) -> str:
    """Write the synthetic repository and run into ``root``; returns the run id."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    home = root / ".homefield"
    run_id = "20261201-120000-bench"
    run = home / "runs" / run_id
    run.mkdir(parents=True, exist_ok=True)
    task_records, golds = [], {}
    for i in range(tasks):
        tid = f"{i:012x}"
        gold, _ = _gold_patch(rng, i)
        golds[tid] = gold
        day = f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00+00:00"
        task_records.append({
            "schema_version": 1, "id": tid, "commit": tid + "0" * 28, "parent": "f" * 40, "committed_at": day,
            "authored_at": day, "mode": "commit", "subject": f"Make handler {i} strict", "message":
            f"Make handler {i} strict\n\nThe handler now passes strict=True to every step.",
            "prompt": f"Make handler {i} strict\n\nThe handler now passes strict=True to every step.",
            "source_files": [f"pkg/mod_{i}.py"], "test_files": [f"tests/test_mod_{i}.py"],
            "test_patch": f"diff --git a/tests/test_mod_{i}.py b/tests/test_mod_{i}.py\n", "gold_patch": gold,
            "FAIL_TO_PASS": [f"tests/test_mod_{i}.py::test_strict"], "PASS_TO_PASS": [], "excluded": {},
            "test_cmd": "python -m pytest", "setup_cmd": None, "env_fingerprint": "0" * 16,
            "spec_score": round(rng.uniform(0.2, 0.9), 3), "well_specified": rng.random() < 0.7,
            "languages": ["python"], "diff_lines": 0, "verify": {"stability_runs": 3}, "prompt_sources": None,
            "red_by_import_error": False})
    tasks_text = "".join(json.dumps(t, separators=(",", ":")) + "\n" for t in task_records)
    (home / "tasks.jsonl").write_text(tasks_text)
    digest = hashlib.sha256(tasks_text.encode()).hexdigest()[:16]
    meta = {"schema_version": 1, "run_id": run_id, "created_at": "2026-12-01T12:00:00+00:00",
            "agents": [{"name": n, "spec": f"cmd:./agent-{n}", "version": "1.0", "model": None, "simulated": False,
                        "hinted": False} for n in AGENTS],
            "attempts": attempts, "tasks_digest": digest, "task_ids": [t["id"] for t in task_records],
            "versions": {}, "limits": {}, "cut_short": None}
    (run / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    lines = []
    for t in task_records:
        difficulty = rng.uniform(-0.3, 0.3)
        for name, p in AGENTS.items():
            for k in range(1, attempts + 1):
                solved = rng.random() < min(0.95, max(0.02, p + difficulty))
                outcome = "solved" if solved else rng.choice(OUTCOMES_FAILED)
                if rng.random() < 0.01:
                    outcome = "infra"
                patch = _agent_patch(rng, int(t["id"], 16), golds[t["id"]], solved)
                adir = run / "attempts" / t["id"] / name / str(k)
                adir.mkdir(parents=True, exist_ok=True)
                (adir / "diff.patch").write_text(patch)
                cost = round(rng.uniform(0.02, 0.4), 4)
                lines.append({
                    "schema_version": 1, "run_id": run_id, "task_id": t["id"], "agent": name, "attempt": k,
                    "outcome": outcome, "variant": "base", "solved": outcome == "solved",
                    "scored": outcome != "infra", "cost_usd": cost, "cost_partial": False, "exit_code": 0,
                    "input_tokens": rng.randint(2000, 90000), "output_tokens": rng.randint(200, 9000),
                    "cache_read_tokens": None, "cache_write_tokens": None, "turns": rng.randint(1, 30),
                    "wall_s": round(rng.uniform(20, 600), 3), "test_s": round(rng.uniform(1, 30), 3),
                    "model": None, "agent_version": "1.0", "touched_tests": rng.random() < 0.05,
                    "suspicious": False, "suspicious_reason": None, "sandbox": "bwrap", "test_sandbox": "bwrap",
                    "started_at": "2026-12-01T12:00:00+00:00", "finished_at": "2026-12-01T12:05:00+00:00",
                    "error": "agent exited 1" if outcome == "agent_error" else None, "similarity": None})
    (run / "results.jsonl").write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines))
    return run_id


def _clean(run: Path) -> None:
    """Remove what a report run leaves beside the results (reports, caches) so each run starts cold."""
    for p in run.iterdir():
        if p.is_file() and p.name not in ("meta.json", "results.jsonl"):
            p.unlink()


def _time(code: Path, repo: Path, run_id: str, *, cold: bool) -> tuple[float, float, bytes, bytes]:
    """One ``homefield report`` with ``code`` first on PYTHONPATH: wall s, CPU s (user+sys of the
    child), report.md and report.json bytes. ``cold``: remove earlier reports and caches first."""
    run = repo / ".homefield" / "runs" / run_id
    if cold:
        _clean(run)
    # byte-compiled modules, as every install has them: with PYTHONDONTWRITEBYTECODE (set on the team's
    # machines) each run would compile the package, numpy and the standard library from source, about
    # 0.3 s of CPU that is no part of the report (the warm-up run writes the .pyc files)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(code)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "report", run_id, "--format", "md"], cwd=repo,
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, (run / "report.md").read_bytes(), (run / "report.json").read_bytes()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="a checkout of the package to compare with")
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each (default 5)")
    parser.add_argument("--dir", type=Path, help="where to build the synthetic run (default: a temp folder)")
    parser.add_argument("--tasks", type=int, default=100, help="tasks of the synthetic run (default 100; "
                        "issue 35's targets: 100 x 5 x 5 <= 0.5 s CPU, 1000 x 5 x 5 <= 3 s)")
    parser.add_argument("--cold", action="store_true",
                        help="remove every report and cache (similarity.json, mde.json) before each run (the first "
                        "report of a run)")
    args = parser.parse_args(argv)
    tmp = None
    if args.dir is None:
        tmp = Path(tempfile.mkdtemp(prefix="hf-report-bench-"))
        args.dir = tmp
    repo = args.dir / "repo"
    try:
        if not (repo / ".homefield").exists():
            t0 = time.perf_counter()
            run_id = build(repo, tasks=args.tasks)
            print(f"built {args.tasks} tasks x {len(AGENTS)} agents x 5 attempts in {time.perf_counter() - t0:.1f} s: "
                  f"{repo}")
        else:
            run_id = "20261201-120000-bench"
        codes = {"this": HERE} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
        for code in codes.values():  # warm-up (and, when not --cold, the cache a first report writes)
            _clean(repo / ".homefield" / "runs" / run_id)
            _time(code, repo, run_id, cold=False)
        walls: dict[str, list[float]] = {n: [] for n in codes}
        cpus: dict[str, list[float]] = {n: [] for n in codes}
        outputs: dict[str, tuple[bytes, bytes]] = {}
        for _ in range(args.runs):
            for name, code in codes.items():
                w, c, md, js = _time(code, repo, run_id, cold=args.cold)
                walls[name].append(w)
                cpus[name].append(c)
                outputs[name] = (md, js)
        mode = "cold (no cache)" if args.cold else "warm (after one report of the run: similarity.json, mde.json)"
        print(f"homefield report, {mode}, {args.runs} runs each, python {sys.version.split()[0]}")
        for name in codes:
            print(f"  {name:<9} wall median {statistics.median(walls[name]):6.3f} s   "
                  f"cpu median {statistics.median(cpus[name]):6.3f} s")
        if args.baseline:
            rw = statistics.median(a / b for a, b in zip(walls["this"], walls["baseline"], strict=True))
            rc = statistics.median(a / b for a, b in zip(cpus["this"], cpus["baseline"], strict=True))
            same = outputs["this"] == outputs["baseline"]
            print(f"  ratio this/baseline: wall {rw:.2f}x, cpu {rc:.2f}x; "
                  f"report.md and report.json {'identical' if same else 'DIFFER'}")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
