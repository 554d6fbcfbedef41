"""Timings recorded on real repositories, for the estimates' tests (plan and verify lines) and
``benchmarks/time_estimates.py``: figures, not fixtures."""

from __future__ import annotations

import dataclasses

from helpers.report_tasks import plain_task

from pytest_homefield.records import Task

#: eta46: more-itertools' 8 tasks as mined (``verify.commit_s`` of 3 runs, the load per CPU at mining) and their
#: oracle gradings in r45's verify (``test_s``, ``host_s``, ``load_per_cpu``), which took 77 s at -n 2.
MIT_MINED = [(63.192, 14.14), (30.964, 18.38), (27.814, 15.62), (30.364, 7.76), (15.857, 4.63), (13.065, 3.31),
             (15.171, 2.62), (11.502, 1.98)]
MIT_GRADED = [(11.223, 1.279, 2.17), (22.279, 1.309, 2.14), (11.697, 0.452, 2.33), (13.585, 0.386, 2.37),
              (13.161, 0.296, 2.37), (12.87, 0.39, 2.44), (23.539, 0.444, 2.45), (12.262, 0.374, 2.42)]


def mit_tasks() -> list[Task]:
    """:data:`MIT_MINED` as tasks ``t0`` … ``t7``."""
    return _mined(MIT_MINED)


#: eta46: the demo's 8 oracle gradings after its run (``test_s + host_s``, the mean of 3 per task; timed at 2.47 per
#: CPU), verified at ``-n 2`` at a load of 9.4 on 2 CPUs in 16.3 s.
DEMO_ETA46 = [1.199, 1.194, 0.977, 0.976, 0.802, 0.753, 0.694, 1.014]

#: plan66: more-itertools' oracle run at -n 2 after r45's verify (``test_s``, ``host_s``, ``wait_s``,
#: ``load_per_cpu`` of its 8 gradings, in the run's order), which took 254 s started at a load of 21.9 on 2 CPUs.
MIT_RUN = [(32.9, 5.1, 0.0, 8.95), (71.4, 5.3, 0.0, 8.95), (43.8, 2.2, 0.0, 8.19), (43.8, 2.8, 0.3, 8.53),
           (43.1, 2.2, 0.0, 8.6), (40.6, 2.6, 0.0, 8.74), (76.0, 3.3, 0.0, 8.45), (31.6, 1.1, 0.0, 7.6)]

#: plan66: ``homefield demo -n 2``'s 8 tasks as mined (``verify.commit_s`` of 3 runs, the load per CPU at mining)
#: and its run's 24 oracle gradings (task index, ``test_s``, ``host_s``, ``load_per_cpu``); the run took 48 s.
DEMO_MINED = [(11.892, 7.13), (14.488, 8.58), (11.3, 7.13), (13.318, 8.58), (9.837, 8.72), (10.588, 8.14),
              (9.147, 8.4), (8.991, 8.0)]
DEMO_RUN = [(3, 1.252, 3.423, 7.4), (2, 1.283, 3.406, 7.4), (2, 0.611, 0.314, 7.3), (3, 0.674, 0.292, 7.3),
            (3, 0.586, 0.297, 7.3), (2, 0.622, 0.278, 7.3), (6, 0.816, 0.349, 12.36), (1, 0.847, 0.509, 15.91),
            (6, 1.09, 0.378, 15.91), (1, 0.882, 0.406, 19.46), (6, 1.154, 0.486, 19.46), (1, 0.762, 0.287, 19.46),
            (4, 0.82, 0.538, 26.39), (4, 0.932, 0.423, 25.49), (7, 0.918, 0.5, 25.49), (4, 1.118, 0.418, 24.59),
            (7, 0.987, 0.257, 24.59), (7, 1.112, 0.372, 24.59), (0, 0.672, 0.461, 22.91), (0, 0.558, 0.288, 22.91),
            (0, 0.486, 0.254, 22.91), (5, 0.76, 0.46, 22.91), (5, 0.824, 0.272, 22.15), (5, 0.734, 0.432, 21.39)]


def _mined(rows: list[tuple[float, float]]) -> list[Task]:
    """``(commit_s, load_per_cpu)`` rows as tasks ``t0`` … mined by 3 runs
    (:func:`~helpers.report_tasks.plain_task`)."""
    return [dataclasses.replace(plain_task(f"t{i}"), verify={"stability_runs": 3, "commit_s": s, "load_per_cpu": load})
            for i, (s, load) in enumerate(rows)]


#: usr66: jd/tenacity's 27 tasks as mined since 2024-01-01 at -n 2 (``verify.commit_s`` of 3 runs, the load per CPU
#: at mining); its first verify (no earlier gradings) at -n 2 started at a load of 19.0 on 2 CPUs, 1 s of start-up,
#: and took 38.8 s.
TENACITY_MINED = [(10.22, 4.1), (11.76, 4.35), (10.1, 4.1), (11.56, 4.35), (11.91, 7.31), (12.22, 7.31),
                  (10.24, 12.44), (10.93, 12.44), (11.94, 12.63), (9.35, 10.08), (10.74, 11.82), (11.91, 9.23),
                  (14.45, 8.07), (8.07, 7.92), (10.46, 6.26), (11.79, 6.72), (8.26, 5.25), (4.0, 5.56), (5.05, 4.88),
                  (6.33, 4.49), (9.59, 9.76), (4.87, 4.25), (8.55, 9.08), (4.83, 14.15), (2.46, 13.56),
                  (2.48, 12.55), (2.06, 12.07)]


def tenacity_tasks() -> list[Task]:
    """:data:`TENACITY_MINED` as tasks ``t0`` … ``t26``."""
    return _mined(TENACITY_MINED)


def demo_tasks() -> list[Task]:
    """:data:`DEMO_MINED` as tasks ``t0`` … ``t7``."""
    return _mined(DEMO_MINED)
