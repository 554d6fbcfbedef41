"""How long grading's test run may take (docs/contracts.md §7 "Grading"): the run timeout, or less for a
task whose parent hangs.

A task mined from a commit that fixes a hang has ``verify.parent_bound`` (mining stopped a parent run at
the bound set by the commit's time, :mod:`pytest_homefield.mine.redgreen`). A wrong fix of such a task
hangs as the parent did, and without a bound its grading would hold a worker for the whole
``--run-timeout``. :func:`grading_bound` gives it the mining bound's rule over the commit's recorded test
seconds (``verify.commit_s``: every commit run of the verification, and its setup, so at least one whole
run of the hidden tests): :data:`HANG_FACTOR` × those seconds, at least :data:`HANG_FLOOR_S`, never above
the run timeout. A run stopped there is ``test_timeout`` (scored, a failed attempt), never ``infra``.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_homefield.records import Task
from pytest_homefield.sandbox.limits import HANG_FACTOR, HANG_FLOOR_S, hang_bound_s

__all__ = ["GradeBound", "grading_bound"]


@dataclass(frozen=True)
class GradeBound:
    """``seconds`` for grading's test run and ``why`` (the phrase an error names it by: ``"600 s"``, or
    the task's bound and where it comes from)."""

    seconds: float
    why: str


def grading_bound(task: Task, run_timeout_s: float) -> GradeBound:
    """The bound of ``task``'s grading runs (s): ``run_timeout_s``, or for a task whose parent hangs
    (``verify.parent_bound``, with ``verify.commit_s`` > 0)
    :func:`~pytest_homefield.sandbox.limits.hang_bound_s` of ``commit_s``, mining's rule."""
    plain = GradeBound(run_timeout_s, f"{run_timeout_s:g} s")
    verify = task.verify if isinstance(task.verify, dict) else {}
    commit_s = verify.get("commit_s")
    if not verify.get("parent_bound") or not isinstance(commit_s, int | float) or commit_s <= 0:
        return plain
    seconds = hang_bound_s(float(commit_s), run_timeout_s, floor_s=HANG_FLOOR_S)
    if seconds >= run_timeout_s:
        return plain
    return GradeBound(seconds, f"the task's bound of {seconds:.0f} s ({HANG_FACTOR:g}× the {commit_s:.1f} s of "
                               f"its commit's tests when mined, at least {HANG_FLOOR_S:g} s: its parent hangs)")
