"""What homefield's own pytest entry point costs a test run that does not use it, in one session.

Run on demand (not a test)::

    python benchmarks/entry_point.py --runs 15

Every test run homefield makes (mining's runs, grading's, ``verify``'s) is a pytest process in the
user's environment, where homefield itself is installed: pytest autoloads its entry point
(``pytest11: homefield``), which is inert without a mode option but imports the settings table and
registers every option. :func:`pytest_homefield.sandbox.testrun.build_command` therefore blocks it
(``-p no:homefield``). This times a pytest process over a file of two trivial tests, alternately with
the entry point loaded and blocked, after one warm-up of each, and prints the median CPU seconds of
the child (``getrusage``) of each and the ratio.

Measured on the 2-core machine while other jobs shared it (load 7-18, 12 runs each): 0.377-0.385 s
loaded, 0.314-0.324 s blocked: 0.06 s (16-17%) of every small test run. One end-to-end test file of the suite
(``tests/run/test_forgeries.py``, 19 tests) starts 130 such processes.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def _child_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def _run(argv: list[str], cwd: Path) -> float:
    start = _child_cpu()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return _child_cpu() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "test_x.py").write_text("def test_a():\n    assert 1\n\n\ndef test_b():\n    assert 2\n")
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_x.py"]
        variants = {"loaded": base, "blocked": [*base, "-p", "no:homefield"]}
        times: dict[str, list[float]] = {k: [] for k in variants}
        for argv in variants.values():
            _run(argv, root)  # warm-up
        for _ in range(args.runs):
            for k, argv in variants.items():
                times[k].append(_run(argv, root))
    loaded, blocked = statistics.median(times["loaded"]), statistics.median(times["blocked"])
    print(f"pytest process, entry point loaded:  {loaded:.3f} s CPU (median of {args.runs})")
    print(f"pytest process, entry point blocked: {blocked:.3f} s CPU")
    print(f"saved per test run: {loaded - blocked:.3f} s ({(loaded - blocked) / loaded:.0%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
