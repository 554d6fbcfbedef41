"""How honest are ``homefield plan``'s and ``homefield verify``'s time estimates on recorded sessions? (plan66)

Run on demand (not a test)::

    PYTHONPATH=$PWD python benchmarks/time_estimates.py

Part 1, the plan's grading seconds (:func:`~pytest_homefield.run.cost.estimate`, oracle, no earlier run): the low
end (the mined seconds ÷ the load per CPU at mining), the high end (as measured × ``MINED_TO_GRADED``) and what the
same gradings took in all (``test_s + host_s``, sequential), at the load per CPU they were graded at.

Part 2, verify's high end on a machine busier or quieter than its earlier gradings were timed at: the allowance
(``LOADED``, or what earlier attempts took over their gradings) and the load ratio now / then are taken as the more
of the two (``Estimate.factor``); their product is the alternative eta46 left open. Printed: each rule's range and
the session's seconds, and the ratio each grading took over its history beside the load ratio.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(HERE / "tests")]

from helpers.recorded_timings import (  # noqa: E402  (the figures, written once there)
    DEMO_ETA46,
    DEMO_RUN,
    MIT_GRADED,
    MIT_RUN,
    demo_tasks,
    mit_tasks,
)
from helpers.report_tasks import plain_task  # noqa: E402

from pytest_homefield.commands.verify import LOADED, time_estimate  # noqa: E402
from pytest_homefield.records import Task  # noqa: E402
from pytest_homefield.run.cost import estimate  # noqa: E402
from pytest_homefield.settings import Settings  # noqa: E402


def plan_range(tasks: list[Task]) -> tuple[float, float]:
    """The plan's oracle grading seconds for one attempt of each task, sequential: ``(low, high)``."""
    with tempfile.TemporaryDirectory() as tmp:
        (oracle,) = estimate(Settings(root=Path(tmp)), tasks, ["oracle"], len(tasks), load_now=1.0)
    assert oracle.grading_s_per_run is not None and oracle.grading_s_high is not None
    return oracle.grading_s_per_run * len(tasks), oracle.grading_s_high * len(tasks)


def part1() -> None:
    print("plan: oracle gradings, sequential seconds")
    print(f"{'session':<38} {'low':>6} {'high':>6} {'took':>6} {'took/low':>8} {'took/high':>9} {'in':>3}")
    mit_low, mit_high = plan_range(mit_tasks())
    demo_low, demo_high = plan_range(demo_tasks())
    cases = (("more-itertools, r45 verify at 2.3/CPU", mit_low, mit_high, sum(t + h for t, h, _ in MIT_GRADED)),
             ("more-itertools, plan66 run at 8.5/CPU", mit_low, mit_high, sum(t + h for t, h, _, _ in MIT_RUN)),
             ("demo, plan66 run at 7-26/CPU", demo_low * 3, demo_high * 3, sum(t + h for _, t, h, _ in DEMO_RUN)))
    for name, low, high, took in cases:
        print(f"{name:<38} {low:>6.1f} {high:>6.1f} {took:>6.1f} {took / low:>8.2f} {took / high:>9.2f} "
              f"{'yes' if low <= took <= high else 'no':>3}")


def part2() -> None:
    print("\nverify: the high end's factor, the more of the allowance and the load ratio (max) or their product")
    print(f"{'session':<38} {'ratio':>5} {'each':>5} {'low':>6} {'max':>6} {'product':>7} {'took':>6}")
    demo_hist = [t + h for _, t, h, _ in DEMO_RUN]
    cases = (
        # eta46: the demo after its run (gradings at 2.47/CPU), verified at 9.4 on 2 CPUs, 6 s of start-up
        ("demo, eta46, busier", [(f"t{i}", s, 2.47) for i, s in enumerate(DEMO_ETA46)], (9.4, 2.0), 6.0, 16.3, 2.4),
        # plan66: the demo after its run (7-26/CPU), verified at 29.8 on 2 CPUs, 5 s of start-up
        ("demo, plan66, quieter", [(f"t{task}", t + h, load) for task, t, h, load in DEMO_RUN], (29.8, 2.0), 5.0,
         12.0, 1.01),
        # plan66: more-itertools' oracle run at -n 2 after r45's verify (2.3/CPU), started at 21.9 on 2 CPUs
        ("more-itertools, plan66 run, busier", [(f"t{i}", t + h, load) for i, (t, h, load) in enumerate(MIT_GRADED)],
         (21.9, 2.0), 4.4, 254.0, sum(t + h for t, h, _, _ in MIT_RUN) / sum(t + h for t, h, _ in MIT_GRADED)),
    )
    for name, hist, machine, startup, took, each in cases:
        ids = sorted({tid for tid, _, _ in hist})
        graded = {tid: [s for t, s, _ in hist if t == tid] for tid in ids}
        earlier = [{"test_s": s, "host_s": 0.0, "wall_s": 0.0, "wait_s": 0.0, "load_per_cpu": load}
                   for _, s, load in hist]
        said = time_estimate(_tasks(ids), len(ids), 2, graded,
                             earlier=earlier, machine=machine, startup_s=startup)
        assert said is not None
        e = said[1]
        product = e.startup_s + e.planned_s * max(LOADED, e.took or 0.0) * max(1.0, e.scaled)
        print(f"{name:<38} {e.scaled:>5.2f} {each:>5.2f} {e.first_s:>6.1f} {e.last_s:>6.1f} {product:>7.1f} "
              f"{took:>6.1f}")


def _tasks(ids: list[str]) -> list[Task]:
    return [plain_task(tid) for tid in ids]


if __name__ == "__main__":
    part1()
    part2()
