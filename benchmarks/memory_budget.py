"""What the machine's memory budget costs per sandboxed command (issue 30, atk25; contracts §9), in one session.

Run on demand (not a test)::

    python benchmarks/memory_budget.py --runs 200 --holders 8

* **the reservation**: :func:`~pytest_homefield.sandbox.memory_budget.reserve` of 4096 MiB and its release
  (opening the gate and the budget file, a look at the free ranges, one lock per range taken, closing both),
  with ``--holders`` other reservations of 512 MiB held by other processes, each of its own ranges (the
  fragmented case, every look sees them all); median and 95th percentile µs of ``--runs``;
* **a command**: ``run_process`` of ``true`` in its cgroups (``proccap.marked``) with a memory cgroup of 4096
  MiB (so a reservation) and without (neither), alternately, median ms of ``--runs // 10`` each: the
  difference is the memory cgroup's and the reservation's together (the reservation alone is the line above).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time

from pytest_homefield.sandbox import memory_budget, proccap
from pytest_homefield.sandbox.phases import PHASE_DIR_VAR
from pytest_homefield.sandbox.procs import run_process

ENV = {"PATH": "/usr/bin:/bin"}


def _hold(ready: object, stop: object) -> None:
    with memory_budget.reserve(512):
        ready.set()  # type: ignore[attr-defined]
        stop.wait()  # type: ignore[attr-defined]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--holders", type=int, default=8)
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="hf-bench-budget-")
    os.environ[PHASE_DIR_VAR] = folder
    memory_budget.configure(4096 + 512 * args.holders + 1024)
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    holders = []
    for _ in range(args.holders):
        ready = ctx.Event()
        holders.append(ctx.Process(target=_hold, args=(ready, stop), daemon=True))
        holders[-1].start()
        ready.wait(30)
    try:
        took = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            with memory_budget.reserve(4096):
                pass
            took.append((time.perf_counter() - t0) * 1e6)
        took.sort()
        print(f"reserve+release 4096 MiB beside {args.holders} holders: median {statistics.median(took):.0f} µs, "
              f"p95 {took[int(0.95 * len(took))]:.0f} µs ({args.runs} runs)")
        if proccap.memory_root() is None:
            print("no writable memory cgroup here: commands reserve nothing")
            return 0
        argv = proccap.marked(["true"])
        with_budget, without = [], []
        for _ in range(max(args.runs // 10, 5)):
            for box, out in ((4096 << 20, with_budget), (None, without)):
                t0 = time.perf_counter()
                run_process(argv, cwd="/", env=ENV, timeout_s=30, box_memory=box)
                out.append((time.perf_counter() - t0) * 1e3)
        print(f"run_process(true) in cgroups: with its memory cgroup and reservation median "
              f"{statistics.median(with_budget):.1f} ms, with neither {statistics.median(without):.1f} ms "
              f"({len(without)} each; the difference is the memory cgroup's and the reservation's)")
    finally:
        stop.set()
        for p in holders:
            p.join(10)
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
