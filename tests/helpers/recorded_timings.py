"""Timings recorded on real repositories, for the estimates' tests (plan and verify lines): figures, not fixtures."""

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
    """:data:`MIT_MINED` as tasks ``t0`` … ``t7`` (:func:`~helpers.report_tasks.plain_task`)."""
    return [dataclasses.replace(plain_task(f"t{i}"), verify={"stability_runs": 3, "commit_s": s, "load_per_cpu": load})
            for i, (s, load) in enumerate(MIT_MINED)]
