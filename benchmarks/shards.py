"""Wall time of one run vs the same run as N shards, side by side in one session (issue 17).

Run on demand (not a test), on a repository with mined tasks::

    python benchmarks/shards.py /path/to/repo --agent sim:0.5 --attempts 2 --shards 3 [--parallel]

It copies the repository (with ``.homefield/tasks.jsonl``) into a temp folder per machine, times
``homefield run`` once on all tasks, then the N shards — one after another by default (the CPU cost of
sharding: per-process start-up plus snapshot builds), or all at once with ``--parallel`` (what a CI
matrix of N machines sees, here on one machine's cores) — and prints both wall times and the ratio
shards / one run. It also checks that the merged shards report the same per-task outcomes.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_homefield.store import read_jsonl


def _copy(repo: Path, dest: Path) -> Path:
    shutil.copytree(repo, dest, symlinks=True, ignore=shutil.ignore_patterns("runs", "mine"))
    return dest


def _cmd(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest_homefield.cli", "run", *args]


def _outcomes(run: Path) -> list[tuple[str, str, int, str]]:
    return sorted((r["task_id"], r["agent"], r["attempt"], r["outcome"]) for r in read_jsonl(run / "results.jsonl"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo", type=Path)
    ap.add_argument("--agent", action="append", default=[])
    ap.add_argument("--attempts", default="2")
    ap.add_argument("--shards", type=int, default=3)
    ap.add_argument("-n", default="0")
    ap.add_argument("--parallel", action="store_true")
    a = ap.parse_args()
    agents = [x for spec in (a.agent or ["sim:0.5"]) for x in ("--agent", spec)]
    base = [*agents, "--attempts", a.attempts, "-n", a.n]
    with tempfile.TemporaryDirectory() as tmp:
        one = _copy(a.repo, Path(tmp) / "one")
        t0 = time.monotonic()
        subprocess.run(_cmd([*base, "--run-id", "one"]), cwd=one, check=True, capture_output=True)
        t_one = time.monotonic() - t0
        machines = [_copy(a.repo, Path(tmp) / f"m{k}") for k in range(1, a.shards + 1)]
        cmds = [_cmd([*base, "--shard", f"{k}/{a.shards}", "--run-id", f"s{k}"]) for k in range(1, a.shards + 1)]
        t0 = time.monotonic()
        if a.parallel:
            procs = [subprocess.Popen(c, cwd=m, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                     for c, m in zip(cmds, machines, strict=True)]
            assert all(p.wait() == 0 for p in procs)
        else:
            for c, m in zip(cmds, machines, strict=True):
                subprocess.run(c, cwd=m, check=True, capture_output=True)
        t_shards = time.monotonic() - t0
        merged = sorted(o for k, m in enumerate(machines, 1) for o in _outcomes(m / ".homefield/runs" / f"s{k}"))
        same = merged == _outcomes(one / ".homefield/runs/one")
    mode = "in parallel" if a.parallel else "one after another"
    print(f"one run: {t_one:.1f} s; {a.shards} shards {mode}: {t_shards:.1f} s; ratio {t_shards / t_one:.2f}; "
          f"same per-task outcomes: {same}")


if __name__ == "__main__":
    main()
