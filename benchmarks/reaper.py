"""What a launch of the reaper costs (``sandbox/_reaper.py``: every test run and every agent goes through one).

Run on demand (not a test)::

    python benchmarks/reaper.py --runs 200 [--other /path/to/another/checkout/pytest_homefield/sandbox/_reaper.py]

Starts ``python -I -S _reaper.py FD PPID 2.0 -- true`` ``--runs`` times, alternately with this checkout's
reaper and ``--other`` (when given), and prints the mean CPU (user + system, ``getrusage`` of the
children: the reaper and its ``true``) per launch of each.

Measured on the 2-core machine while other jobs shared it (load 6-7), 200 launches each, with its
``true``: the reaper importing ``signal.py`` (its enums import ``enum``, ``functools``, ``operator``,
``collections``) 37.4 ms, importing the C ``_signal`` 29.8 ms: 7.6 ms (20%) less per launch. The test
suite launches about 1,440 reapers (``strace -f -e trace=execve`` of ``python -m pytest -n 2``): about
11 s of its CPU.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "pytest_homefield" / "sandbox" / "_reaper.py"


def launch(reaper: Path) -> float:
    """CPU seconds of one reaper launch running ``true`` (and of ``true``)."""
    r, w = os.pipe()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        subprocess.run([sys.executable, "-I", "-S", str(reaper), str(w), str(os.getpid()), "2.0", "--", "true"],
                       pass_fds=[w], check=True)
    finally:
        os.close(w)
        os.close(r)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--other", type=Path, help="another checkout's _reaper.py, timed alternately")
    args = ap.parse_args()
    reapers = {"this": HERE, **({"other": args.other} if args.other else {})}
    spent = dict.fromkeys(reapers, 0.0)
    for path in reapers.values():  # warm-up
        launch(path)
    for _ in range(args.runs):
        for name, path in reapers.items():
            spent[name] += launch(path)
    for name, path in reapers.items():
        print(f"{name:6} {spent[name] / args.runs * 1000:6.1f} ms of CPU per launch  {path}")


if __name__ == "__main__":
    main()
