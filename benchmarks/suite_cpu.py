"""CPU of the test suite, test by test: where ``python -m pytest -n 2`` spends the two cores.

The suite is CPU-bound on the 2-core machine (``time``: user + sys ≈ 690 s for a 364 s wall run, so
the floor of a perfectly balanced ``-n 2`` run is about half its CPU), and on a machine shared with other
test runs the wall-clock ``--durations`` mostly measure the neighbours. What a test costs is the CPU of
the processes it starts and waits for (``homefield`` sessions, their xdist workers, test runs, git),
which contention barely changes. Load this file as a plugin:

    python -m pytest -n 2 -p no:randomly -p benchmarks.suite_cpu    # writes $SUITE_CPU_DIR (/tmp/suite-cpu)
    python benchmarks/suite_cpu.py [/tmp/suite-cpu]                  # the 30 costliest files and tests

Each worker appends ``nodeid  wall  own-cpu  children-cpu`` (seconds) per test to a file of its own.
Children are counted when waited for: a background job (the suite's ``homefield demo``, helpers'
daemons) lands on the test that was running when it was reaped (``test_interrupt`` takes the demo's
~50 s), and a process that is never waited for (a daemon's grandchild) is not counted.
"""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path

import pytest

OUT = Path(os.environ.get("SUITE_CPU_DIR", "/tmp/suite-cpu"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    before, start = os.times(), time.monotonic()
    try:
        return (yield)
    finally:
        after = os.times()
        own = after.user - before.user + after.system - before.system
        kids = after.children_user - before.children_user + after.children_system - before.children_system
        OUT.mkdir(parents=True, exist_ok=True)
        with open(OUT / f"cpu-{os.getpid()}.tsv", "a", encoding="utf-8") as fh:
            fh.write(f"{item.nodeid}\t{time.monotonic() - start:.2f}\t{own:.2f}\t{kids:.2f}\n")


def summary(folder: Path, top: int = 30) -> list[str]:
    """The ``top`` costliest test files and tests (own + children CPU) of the records in ``folder``."""
    tests: dict[str, tuple[float, float]] = {}
    for path in folder.glob("cpu-*.tsv"):
        for line in path.read_text(encoding="utf-8").splitlines():
            nodeid, secs, own, kids = line.split("\t")
            tests[nodeid] = (float(secs), float(own) + float(kids))
    files: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for nodeid, (wall, cpu) in tests.items():
        f = files[nodeid.split("::", 1)[0]]
        f[0], f[1], f[2] = f[0] + cpu, f[1] + wall, f[2] + 1
    total = sum(cpu for _, cpu in tests.values())
    walls = sum(w for w, _ in tests.values())
    out = [f"{len(tests)} tests, {total:.0f} s of CPU, {walls:.0f} s of wall (both workers)", "",
           "   cpu s   wall s  tests  file"]
    out += [f"{c:8.1f} {w:8.1f} {n:6.0f}  {name}" for name, (c, w, n) in
            sorted(files.items(), key=lambda kv: -kv[1][0])[:top]]
    out += ["", "   cpu s   wall s  test"]
    out += [f"{c:8.1f} {w:8.1f}  {nodeid}" for nodeid, (w, c) in
            sorted(tests.items(), key=lambda kv: -kv[1][1])[:top]]
    return out


if __name__ == "__main__":
    print("\n".join(summary(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)))
