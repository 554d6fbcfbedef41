"""What ``homefield view`` costs on a large run: 1,000 tasks × 5 agents × 3 attempts (issue 34).

Run on demand (not a test)::

    python benchmarks/view.py [--tasks 1000] [--attempts 3] [--dir DIR]

It builds (under ``--dir``, default a temporary folder, reused when it holds the run) the synthetic run
of ``benchmarks/report.py`` (task records, ``meta.json``, results, one ``diff.patch`` per attempt) and
gives every attempt the rest of its artifacts: ``prompt.txt``; ``agent.out`` — for ``alpha`` and
``bravo`` a claude ``stream-json`` transcript in the real CLI's line shapes (init, then per turn an
assistant tool call and a user tool result holding 1–6 KB of file text, a final text and the
``result`` line; 8–40 turns), for the others a ``cmd:`` program's stdout with its usage line; one
attempt's ``agent.out`` is 5 MiB and one diff 3 MiB (the caps); ``outcomes.jsonl`` (the reporter's
events for one FAIL_TO_PASS and 20 PASS_TO_PASS ids), ``tests.log`` with a failure section when
the attempt failed, and ``canaries.json``. Then it times :func:`pytest_homefield.view.build_site` in
this process and prints the CPU seconds (user and system) of a first build, the page count, the
largest page and the total size. The report is written first, as every run's end writes it, and is
timed apart (cold: no similarity cache); the build reuses it. Targets: under 30 s of CPU, no page
over 2 MB.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import build  # noqa: E402  (benchmarks/report.py: the synthetic run)

from pytest_homefield.records import load_tasks  # noqa: E402
from pytest_homefield.report import compute_report, write_reports  # noqa: E402
from pytest_homefield.view import build_site  # noqa: E402

CLAUDE_AGENTS = ("alpha", "bravo")


def _claude_out(rng: random.Random, i: int) -> str:
    """A claude ``stream-json`` transcript (the line shapes of claude-cli.md §5)."""
    sid = f"{rng.getrandbits(64):016x}"
    lines = [{"type": "system", "subtype": "init", "cwd": "/tmp/ws", "session_id": sid, "model": "claude-sonnet-4-5",
              "permissionMode": "acceptEdits", "tools": ["Read", "Edit", "Write", "Glob", "Grep"]}]
    for k in range(rng.randint(8, 40)):
        tool_id = f"toolu_{i}_{k}"
        name = rng.choice(["Read", "Grep", "Edit"])
        lines.append({"type": "assistant", "session_id": sid, "parent_tool_use_id": None, "message": {
            "id": f"msg_{i}_{k}", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": tool_id, "name": name,
                         "input": {"file_path": f"pkg/mod_{i}.py", "pattern": "strict"}}],
            "usage": {"input_tokens": 1000 + k, "output_tokens": 1}}})
        body = "\n".join(f"{n:6}\t    value = compute_{i}_{n}(x, y)  # step {n}" for n in range(rng.randint(20, 120)))
        lines.append({"type": "user", "session_id": sid, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": body, "is_error": False}]}})
    lines.append({"type": "assistant", "session_id": sid, "message": {"id": f"msg_{i}_end", "role": "assistant",
                  "content": [{"type": "text", "text": "Made the handler strict."}]}})
    lines.append({"type": "result", "subtype": "success", "is_error": False, "num_turns": len(lines) // 2,
                  "result": "Made the handler strict.", "total_cost_usd": 0.12, "terminal_reason": "completed",
                  "session_id": sid})
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def _artifacts(run: Path, rng: random.Random) -> None:
    tasks = {}
    for line in (run.parent.parent / "tasks.jsonl").read_text().splitlines():
        t = json.loads(line)
        tasks[t["id"]] = t
    for r in map(json.loads, (run / "results.jsonl").read_text().splitlines()):
        art = run / "attempts" / r["task_id"] / r["agent"] / str(r["attempt"])
        t = tasks[r["task_id"]]
        (art / "prompt.txt").write_text("You are working in a software repository.\n\nRequest:\n" + t["prompt"])
        if r["agent"] in CLAUDE_AGENTS:
            out = _claude_out(rng, int(r["task_id"], 16))
        else:
            out = "".join(f"step {k}: edited pkg/mod.py\n" for k in range(rng.randint(5, 60)))
            out += '\n{"cost_usd": 0.05, "input_tokens": 1000, "output_tokens": 100}\n'
        (art / "agent.out").write_text(out)
        (art / "agent.err").write_text("")
        f2p = t["FAIL_TO_PASS"][0]
        p2p = [f"tests/test_mod.py::test_keep_{n}" for n in range(20)]
        ok = r["outcome"] == "solved"
        ev = [{"event": "start", "pid": 2}, {"event": "collected", "count": 21, "pid": 2}]
        ev += [{"event": "phase", "nodeid": n, "when": "call", "outcome": "passed", "duration": 0.01, "message": None,
                "pid": 2} for n in p2p]
        ev.append({"event": "phase", "nodeid": f2p, "when": "call", "outcome": "passed" if ok else "failed",
                   "duration": 0.02, "message": None if ok else "AssertionError: assert 1 == 2", "pid": 2})
        ev.append({"event": "finish", "exitstatus": 0 if ok else 1, "pid": 2})
        (art / "outcomes.jsonl").write_text("".join(json.dumps(x) + "\n" for x in ev))
        log = "" if ok else (f"_____ test_strict _____\n\n    def test_strict():\n>       assert 1 == 2\nE       "
                             f"AssertionError\n\n{f2p.split('::')[0]}:3: AssertionError\n===== 1 failed =====\n")
        (art / "tests.log").write_text(log + "===== done =====\n")
        (art / "canaries.json").write_text(json.dumps({"seed": 1, "canaries": [
            {"node": f2p + "_c", "source": f2p, "kind": "contradiction", "how": "expected 1 -> 7", "strong": True}]}))
    first = next((run / "attempts").iterdir())
    art = next(next(first.iterdir()).iterdir())
    (art / "agent.out").write_text("x" * 80 + "\n" + ("y" * 99 + "\n") * 52_000)  # 5 MiB, the --max-output-mb cap
    (art / "diff.patch").write_text("diff --git a/big b/big\n--- a/big\n+++ b/big\n@@ -0,0 +1,30000 @@\n"
                                    + ("+" + "z" * 99 + "\n") * 30_000)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--attempts", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None)
    ns = ap.parse_args()
    root = ns.dir or Path(tempfile.mkdtemp(prefix="hf-view-bench-"))
    home = root / ".homefield"
    if not (home / "tasks.jsonl").exists():
        t0 = time.perf_counter()
        run_id = build(root, tasks=ns.tasks, attempts=ns.attempts, seed=34)
        _artifacts(home / "runs" / run_id, random.Random(34))
        print(f"built the synthetic run in {root} ({time.perf_counter() - t0:.0f} s)")
    (run,) = [d for d in (home / "runs").iterdir() if d.is_dir()]
    tasks = load_tasks(home / "tasks.jsonl")
    (run / "similarity.json").unlink(missing_ok=True)  # a cold report: nothing cached from an earlier build
    (run / "report.json").unlink(missing_ok=True)
    shutil.rmtree(run / "view", ignore_errors=True)  # a first build (a rebuild also removes the old site)
    t0 = time.process_time()
    write_reports(compute_report([run], tasks), run)  # what the run's end does
    report_s = time.process_time() - t0
    print(f"the report (the run's end, or homefield report): {report_s:.1f} s CPU, cold")
    before = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    stats = build_site([run], tasks, run / "view", tasks_mtime=(home / "tasks.jsonl").stat().st_mtime)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF)
    print(f"CPU: user {after.ru_utime - before.ru_utime:.1f} s, system {after.ru_stime - before.ru_stime:.1f} s")
    print(f"{len(tasks)} tasks x 5 agents x {ns.attempts} attempts: {stats.pages} pages, "
          f"{stats.total_bytes / 1e6:.0f} MB in all, largest {stats.largest / 1e6:.2f} MB ({stats.largest_name})")
    print(f"build: {stats.cpu_s:.1f} s CPU, {wall:.1f} s wall (targets: < 30 s CPU, no page > 2 MB)")
    return 0 if stats.cpu_s < 30 and stats.largest < 2 * 1024 * 1024 else 1


if __name__ == "__main__":
    sys.exit(main())
