"""What the caps on an agent's side effects cost per attempt (issue 30), in one session.

Run on demand (not a test)::

    python benchmarks/caps.py --runs 7 --mb 2 --tree /path/to/a/checkout

* **the pipe**: a command printing ``--mb`` MiB in 200-byte lines (a claude stream-json of a long
  attempt is a few MiB), started by ``run_process`` writing ``agent.out`` itself (the file, as
  before) and by ``run_agent`` (pipes read by a thread into capped files); the median wall seconds and
  the CPU seconds of this process and its children (``getrusage``) of each, alternately, after one
  warm-up of each;
* **the check**: ``Baseline.measure`` (before the agent) plus ``check_folders`` (after it) over
  ``--tree`` (default: this checkout), the two ``lstat`` walks every attempt adds, median seconds
  and the number of entries;
* **the watch**: one ``DiskWatch`` poll that finds no growth (every 0.5 s while an agent runs), µs.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_homefield.sandbox.limits import AgentFolders, Baseline, DiskWatch, WriteLimits, check_folders
from pytest_homefield.sandbox.procs import run_agent, run_process

ENV = {"PATH": "/usr/bin:/bin"}


def _cpu() -> float:
    """CPU seconds (user + system) of this process and its reaped children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _measure(fn: Callable[[], object]) -> tuple[float, float]:
    c0, t0 = _cpu(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, _cpu() - c0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--mb", type=float, default=2.0, help="MiB the command prints (default 2)")
    ap.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent)
    args = ap.parse_args()
    lines = int(args.mb * (1 << 20) / 200)
    code = f"import sys\nline = 'x' * 199 + '\\n'\nfor _ in range({lines}): sys.stdout.write(line)"
    cmd = [sys.executable, "-c", code]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        variants: dict[str, Callable[[], object]] = {
            "file": lambda: run_process(cmd, cwd=d, env=ENV, timeout_s=120, stdout_path=d / "agent.out",
                                        stderr_path=d / "agent.err"),
            "pipe": lambda: run_agent(cmd, cwd=d, env=ENV, timeout_s=120, artifacts=d),
        }
        for fn in variants.values():
            fn()
        got: dict[str, list[tuple[float, float]]] = {k: [] for k in variants}
        for _ in range(args.runs):
            for k, fn in variants.items():
                got[k].append(_measure(fn))
        for k, rows in got.items():
            wall, cpu = statistics.median(w for w, _ in rows), statistics.median(c for _, c in rows)
            print(f"{k:5s} wall {wall:.3f} s  cpu {cpu:.3f} s  ({args.mb:g} MiB of output, median of {args.runs})")
    limits = WriteLimits()
    folders = AgentFolders(args.tree)
    entries = sum(len(files) + len(dirs) for _, dirs, files in os.walk(args.tree))
    walks = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        base = Baseline.measure(folders, limits)
        fault = check_folders(folders, limits, base)
        walks.append(time.perf_counter() - t0)
    print(f"check wall {statistics.median(walks):.3f} s for both walks of {entries} entries "
          f"({base.bytes / (1 << 20):.1f} MiB; fault: {fault.reason if fault else None})")
    watch = DiskWatch(folders, limits, base)
    t0 = time.perf_counter()
    for _ in range(1000):
        watch()
    print(f"watch {(time.perf_counter() - t0) * 1000:.1f} µs per poll without growth")
    return 0


if __name__ == "__main__":
    sys.exit(main())
