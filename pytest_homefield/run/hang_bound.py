"""How long grading's test run may take (docs/contracts.md §7 "Grading"): the run timeout, or less for a
task whose parent hangs.

A task mined from a commit that fixes a hang has ``verify.parent_bound`` (mining stopped a parent run at
the bound set by the commit's time, :mod:`pytest_homefield.mine.redgreen`). A wrong fix of such a task
hangs as the parent did, and without a bound its grading would hold a worker for the whole
``--run-timeout``. :func:`grading_bound` gives it the mining bound's rule over the commit's recorded test
seconds (``verify.commit_s``: every commit run of the verification, and its setup, so at least one whole
run of the hidden tests): :data:`HANG_FACTOR` × those seconds, at least :data:`HANG_FLOOR_S`, never above
the run timeout. A run stopped there is ``test_timeout`` (scored, a failed attempt), never ``infra``.

An attack agent's grading (``homefield verify --attacks``) has a bound of its own: :data:`HANG_FACTOR` × the
task's reference grading time (:func:`attack_reference`: oracle's grading of the same task in this run, else
the commit's recorded test seconds), at least :data:`ATTACK_FLOOR_S`, never above the run timeout (pypa/packaging:
four attacks each held a worker for the whole 600 s, 40 of 51 minutes). A grading cut there is ``test_timeout``
as well: a failure, never ``solved``; its error names :data:`ATTACK_BOUND` so that verify can count them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_homefield.records import Task
from pytest_homefield.sandbox.limits import HANG_FACTOR, HANG_FLOOR_S, hang_bound_s
from pytest_homefield.settings_table import option
from pytest_homefield.store import read_jsonl

__all__ = ["ATTACK_BOUND", "ATTACK_FLOOR_S", "GradeBound", "attack_reference", "grading_bound"]

#: An attack's grading run is never stopped before this many seconds (s) by :func:`grading_bound`'s reference.
ATTACK_FLOOR_S = 60.0
#: How a grade's error names the attack bound (``hidden tests exceeded the attack bound of 60 s (…)``).
ATTACK_BOUND = "the attack bound"


@dataclass(frozen=True)
class GradeBound:
    """``seconds`` for grading's test run and ``why`` (the phrase an error names it by: ``"600 s"``, or
    the task's bound and where it comes from)."""

    seconds: float
    why: str


def grading_bound(task: Task, run_timeout_s: float, reference: tuple[float, str] | None = None) -> GradeBound:
    """The bound of ``task``'s grading runs (s): ``run_timeout_s``, or for a task whose parent hangs
    (``verify.parent_bound``, with ``verify.commit_s`` > 0)
    :func:`~pytest_homefield.sandbox.limits.hang_bound_s` of ``commit_s``, mining's rule. ``reference``
    (an attack's grading, :func:`attack_reference`): ``(seconds, where they come from)``; the bound is then
    at most :data:`HANG_FACTOR` × those seconds, at least :data:`ATTACK_FLOOR_S`."""
    bound = _task_bound(task, run_timeout_s)
    if reference is None or reference[0] <= 0:
        return bound
    seconds = hang_bound_s(reference[0], run_timeout_s, floor_s=ATTACK_FLOOR_S)
    if seconds >= bound.seconds:
        return bound
    return GradeBound(seconds, f"{ATTACK_BOUND} of {seconds:.0f} s ({HANG_FACTOR:g}× {reference[1]}, at least "
                               f"{ATTACK_FLOOR_S:g} s; {option('run-timeout', 'cli')} {run_timeout_s:g} s)")


def attack_reference(task: Task, results: Path) -> tuple[float, str] | None:
    """The reference grading time of ``task`` for an attack's bound: oracle's test seconds on it in the run
    whose ``results`` file this is (this machine, now), else the commit's test seconds recorded when it was
    mined (``verify.commit_s``); ``None`` when neither is known (the run timeout alone bounds the grading)."""
    oracle = [r.get("test_s") for r in read_jsonl(results)
              if r.get("task_id") == task.id and r.get("agent") == "oracle" and r.get("outcome") == "solved"]
    measured = [float(s) for s in oracle if isinstance(s, int | float) and s > 0]
    if measured:
        return max(measured), f"oracle's {max(measured):.1f} s grading of this task"
    verify = task.verify if isinstance(task.verify, dict) else {}
    commit_s = verify.get("commit_s")
    if isinstance(commit_s, int | float) and not isinstance(commit_s, bool) and commit_s > 0:
        return float(commit_s), f"the {commit_s:.1f} s of its commit's tests when mined"
    return None


def _task_bound(task: Task, run_timeout_s: float) -> GradeBound:
    """:func:`grading_bound` without a reference."""
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
