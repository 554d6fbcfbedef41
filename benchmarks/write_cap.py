"""What the write cap of a test run costs per graded run (issue 30, ``max_test_write_mb``), in one session.

Run on demand (not a test)::

    python benchmarks/write_cap.py --runs 9 --tree /path/to/a/checkout

A copy of ``--tree`` (default: this checkout) gets one trivial test file; ``run_tests`` runs it (a
pytest process with the plugins this environment autoloads switched off), alternately without the
cap (``write_mb=None``: no ``RLIMIT_FSIZE``, no watch, an unsized tmpfs) and with the default cap
(the reaper's ``RLIMIT_FSIZE``, the baseline walk of the run's folders, a ``statvfs`` poll every
0.5 s and once at the end), after one warm-up of each, with ``--sandbox none`` (the copy is walked)
and, where bubblewrap works, ``bwrap`` (it is not: bound read-only). Printed: the median CPU seconds
of this process and its children (``getrusage``) per run, and the median wall seconds; then the
CPU of the watch's own part (the two walks of the copy, one poll). The same
script run with ``PYTHONPATH`` at a checkout of an older main (no ``write_mb``) prints that code's
runs under ``main``.

Measured on the 2-core machine, shared (this checkout, 707 entries; 15 runs, twice, main alternated):
per run 0.36–0.46 s of CPU capped, uncapped or main alike (the differences, ±0.05 s, are the noise of
the shared machine); the watch's own part 11–12 ms of CPU per run under ``--sandbox none`` (two
``lstat`` walks, ~8 µs per entry each: a copy of 59,000 entries, a CPython stdlib, costs 0.85 s per run
there), nothing to walk in the copy under bubblewrap (bound read-only), 14–19 µs per poll.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.testrun import run_tests

PLUGINS_OFF = ("-p no:hypothesispytest -p no:benchmark -p no:xdist -p no:xdist.looponfail -p no:timeout "
               "-p no:homefield -p no:anyio -p no:randomly")
TEST = "def test_nothing():\n    assert True\n"

from caps import _measure  # noqa: E402  (the same CPU clock as the agent caps' benchmark)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent)
    args = ap.parse_args()
    capped = "write_mb" in inspect.signature(run_tests).parameters
    variants: dict[str, dict[str, object]] = {"uncapped": {"write_mb": None}, "capped": {}} if capped else \
        {"main": {}}
    sandboxes = ["none"]
    try:
        probe()
        sandboxes.append("bwrap")
    except BwrapUnavailable:
        pass
    cmd = f"{shlex.quote(sys.executable)} -m pytest -q {PLUGINS_OFF}"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "w"
        shutil.copytree(args.tree, work, symlinks=True, ignore=shutil.ignore_patterns(".git", "__pycache__"))
        (work / "test_bench_nothing.py").write_text(TEST)
        entries = sum(1 for _ in work.rglob("*"))
        for sandbox in sandboxes:
            runs = {name: functools.partial(run_tests, work, cmd, ["test_bench_nothing.py"], out_dir=Path(tmp) / "out",
                                            timeout_s=120, sandbox=sandbox, **kw)  # type: ignore[arg-type]
                    for name, kw in variants.items()}
            for fn in runs.values():
                fn()
            got: dict[str, list[tuple[float, float]]] = {k: [] for k in runs}
            for _ in range(args.runs):
                for k, fn in runs.items():
                    got[k].append(_measure(fn))
            for k, rows in got.items():
                wall, cpu = statistics.median(w for w, _ in rows), statistics.median(c for _, c in rows)
                print(f"{sandbox:5s} {k:8s} cpu {cpu:.3f} s  wall {wall:.3f} s per run "
                      f"(a copy of {entries} entries, median of {args.runs})")
        if capped:  # the watch's own part of a run: its baseline walk (the copy: --sandbox none) and a poll
            from pytest_homefield.sandbox.limits import limits_for_tests, watch_test_folders

            walks = []
            for _ in range(args.runs):
                t0 = time.process_time()
                watch = watch_test_folders(Path(tmp) / "out", work, limits_for_tests(1024))
                assert watch is not None and watch.settle() is None
                walks.append(time.process_time() - t0)
            t0 = time.process_time()
            for _ in range(1000):
                watch()
            print(f"watch {statistics.median(walks) * 1000:.1f} ms cpu per run (its baseline and its final walk of "
                  f"{entries} entries), {(time.process_time() - t0) * 1000:.0f} µs cpu per poll without growth")
    return 0


if __name__ == "__main__":
    sys.exit(main())
