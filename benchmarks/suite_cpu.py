"""CPU of the test suite, test by test: where ``python -m pytest -n 2`` spends the two cores.

The suite is CPU-bound on the 2-core machine (``time``: user + sys ≈ 690 s for a 364 s wall run, so
the floor of a perfectly balanced ``-n 2`` run is about half its CPU), and on a machine shared with other
test runs the wall-clock ``--durations`` mostly measure the neighbours. What a test costs is the CPU of
the processes it starts and waits for (``homefield`` sessions, their xdist workers, test runs, git),
which contention barely changes. Load this file as a plugin:

    python -m pytest -n 2 -p no:randomly -p benchmarks.suite_cpu    # writes $SUITE_CPU_DIR (/tmp/suite-cpu)
    python benchmarks/suite_cpu.py [/tmp/suite-cpu]                  # the 30 costliest files and tests
    python benchmarks/suite_cpu.py --slow 1.5 [/tmp/suite-cpu]       # the functions to mark slow

Run it with ``-m "slow or not slow"`` to measure both tiers. README command 2 deselects the ``slow`` tier: a
test function whose costliest instance takes 1.5 s of CPU or more is marked ``slow`` (r31: that put 2,067 of
the suite's 2,296 measured CPU seconds in the slow tier, 229 s in command 2).

Each worker appends ``nodeid  wall  own-cpu  children-cpu  start`` (seconds; ``start`` on the machine's
monotonic clock, which all processes share) per test to a file of its own: ``python
benchmarks/suite_cpu.py --timeline DIR`` shows when each worker ran what and how long one stood idle at the
end.
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
            fh.write(f"{item.nodeid}\t{time.monotonic() - start:.2f}\t{own:.2f}\t{kids:.2f}\t{start:.2f}\n")


def summary(folder: Path, top: int = 30) -> list[str]:
    """The ``top`` costliest test files and tests (own + children CPU) of the records in ``folder``."""
    tests: dict[str, tuple[float, float]] = {}
    for path in folder.glob("cpu-*.tsv"):
        for line in path.read_text(encoding="utf-8").splitlines():
            nodeid, secs, own, kids = line.split("\t")[:4]
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


def slow_functions(folder: Path, above: float) -> list[str]:
    """The test functions (``file::[Class::]name``, parameters folded) of the records in ``folder`` whose
    costliest instance took at least ``above`` seconds of CPU (own + children): the ones to mark ``slow``
    (tests/conftest.py deselects them unless ``-m`` names ``slow``), sorted by id."""
    worst: dict[str, float] = defaultdict(float)
    for rows in _records(folder).values():
        for _, _, nodeid, cpu in rows:
            function = nodeid.split("[", 1)[0]
            worst[function] = max(worst[function], cpu)
    return sorted(f for f, cpu in worst.items() if cpu >= above)


def _records(folder: Path) -> dict[str, list[tuple[float, float, str, float]]]:
    """Per worker file: ``(start, wall, nodeid, cpu)`` of each test, in the order it started (s; ``cpu``: its
    own and its children's)."""
    workers: dict[str, list[tuple[float, float, str, float]]] = {}
    for path in sorted(folder.glob("cpu-*.tsv")):
        rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
        workers[path.stem] = sorted((float(r[4]), float(r[1]), r[0], float(r[2]) + float(r[3]))
                                    for r in rows if len(r) > 4)
    return workers


def replay(walls: list[float], workers: int = 2) -> tuple[float, list[float]]:
    """When the last of ``workers`` ends, running tests of these ``walls`` (s) in this order as xdist's
    ``load`` scheduler hands them out at ``--maxschedchunk 1`` (tests/conftest.py): each worker is first
    given two tests, runs one while the next waits in its queue, and gets the next pending test each time
    one ends. Returns the makespan and each worker's end (s from the first start)."""
    pending = list(range(len(walls)))
    queues: list[list[int]] = [[] for _ in range(workers)]
    for q in queues:
        q.extend(pending[:2])
        del pending[:2]
    clock = [0.0] * workers
    done = [False] * workers
    while not all(done):
        # the worker whose running test ends first moves on
        w = min((i for i in range(workers) if not done[i]), key=lambda i: clock[i])
        if not queues[w]:
            done[w] = True
            continue
        clock[w] += walls[queues[w].pop(0)]
        if pending:
            queues[w].append(pending.pop(0))
    return max(clock), clock


def timeline(folder: Path) -> list[str]:
    """Each worker's first start, last end and busy seconds, the idle tail (one worker done, the other
    still running), the tests running in that tail, and :func:`replay` of the measured walls in the order
    they ran and longest first."""
    workers = _records(folder)
    t0 = min(rows[0][0] for rows in workers.values() if rows)
    out = ["worker           first   last end     busy    gaps   tests"]
    ends = {}
    for name, rows in workers.items():
        end = max(s + w for s, w, _, _ in rows)
        busy = sum(w for _, w, _, _ in rows)
        ends[name] = end
        out.append(f"{name:14} {rows[0][0] - t0:7.1f} {end - t0:10.1f} {busy:8.1f} {end - rows[0][0] - busy:7.1f}"
                   f" {len(rows):7}")
    first_done, last_done = min(ends.values()), max(ends.values())
    out.append(f"idle tail: {last_done - first_done:.1f} s (of {last_done - t0:.1f} s from the first test's start)")
    out.append("tests running in the tail (start, wall):")
    for rows in workers.values():
        out += [f"  {s - t0:7.1f} {w:7.1f}  {nodeid}" for s, w, nodeid, _ in rows if s + w > first_done]
    ran = sorted(row for rows in workers.values() for row in rows)
    for what, times in (("walls", [w for _, w, _, _ in ran]), ("CPU seconds", [c for _, _, _, c in ran])):
        as_run, _ = replay(times)
        longest, _ = replay(sorted(times, reverse=True))
        out.append(f"replay of the measured {what}: {as_run:.1f} s in the order run, {longest:.1f} s longest first, "
                   f"{sum(times) / 2:.1f} s = half their sum")
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--slow"]:  # --slow SECONDS [DIR]: the functions to mark slow
        print("\n".join(slow_functions(Path(sys.argv[3]) if len(sys.argv) > 3 else OUT, float(sys.argv[2]))))
    elif sys.argv[1:2] == ["--timeline"]:
        print("\n".join(timeline(Path(sys.argv[2]) if len(sys.argv) > 2 else OUT)))
    else:
        print("\n".join(summary(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)))
