"""The mining check of the canaries (docs/contracts.md §7, issue 30): the reference fix must fail every
canary of a task (:mod:`pytest_homefield.sandbox.canaries`) while its FAIL_TO_PASS ids still pass.

A canary the reference does not fail means the rewrite is wrong for that test (an assertion in a
branch the test skips, an ``__eq__`` that is not transitive, …): it is planted again as a sentinel,
which a real fix always fails, rather than the task dropped. Only what still does not hold then
drops the candidate as ``reference_passes_canary``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pytest_homefield.sandbox.canaries import Canary, CanaryPlan, function_id
from pytest_homefield.sandbox.testrun import TestRun

__all__ = ["CanaryCheck", "check_canaries"]

#: What a canary run returns instead of a test run when it could not run (verification's drop record).
Stop = TypeVar("Stop")


@dataclass
class CanaryCheck:
    """Result of :func:`check_canaries`: ``canaries`` (how many the reference failed), ``sentinels``
    (functions planted as sentinels), ``reason``/``detail`` (``None`` when the check held; else
    ``reference_passes_canary`` or ``timeout``), ``seconds`` spent in canary runs."""

    canaries: int = 0
    sentinels: list[str] = field(default_factory=list)
    reason: str | None = None
    detail: str = ""
    seconds: float = 0.0


def check_canaries(fail_to_pass: Sequence[str],
                   canary_run: Callable[[set[str], int], tuple[TestRun | Stop, CanaryPlan]]) -> CanaryCheck | Stop:
    """``canary_run(forced, k)`` runs the FAIL_TO_PASS ids and the canaries planted in a fresh copy of
    the commit (``forced``: functions that get a sentinel) and returns the run and its plan, or what
    stopped it (returned as it is). Every canary must fail (``failed``/``error`` in each instance,
    none passing or missing) and every FAIL_TO_PASS id still pass. A canary that does not fail is
    planted again as a sentinel (so is every canary of a file whose FAIL_TO_PASS ids broke), once;
    what still does not hold is ``reference_passes_canary``; a run that timed out is ``timeout``."""
    forced: set[str] = set()
    check = CanaryCheck()
    broken: list[str] = []
    bad: list[Canary] = []
    last: tuple[TestRun, CanaryPlan] | None = None
    for k in (1, 2):
        r, plan = canary_run(forced, k)
        if not isinstance(r, TestRun):
            return r
        check.seconds += r.wall_s
        if r.timed_out:
            check.reason, check.detail = "timeout", f"the canary run exceeded the run timeout after {r.wall_s:.0f} s"
            return check
        last = (r, plan)
        broken = [i for i in fail_to_pass if r.outcomes.get(i) != "passed"]
        failing = plan.failing(r.outcomes)
        bad = [c for c in plan.canaries if c not in failing]
        if not bad and not broken:
            check.canaries, check.sentinels = len(plan.canaries), sorted(forced)
            return check
        files = {i.split("::", 1)[0] for i in broken}
        forced |= {c.source for c in bad} | {function_id(i) for i in fail_to_pass if i.split("::", 1)[0] in files}
    assert last is not None
    passed = last[1].passed(last[0].outcomes)
    if passed:
        c, tid = passed[0]
        why = f"canary {tid} ({c.kind} of {c.source}: {c.how}) passed with the reference fix"
    elif broken:
        why = f"{len(broken)} FAIL_TO_PASS id(s) did not pass with the canaries planted, e.g. {broken[0]}"
    else:
        why = f"canary {bad[0].node} ({bad[0].kind} of {bad[0].source}) did not run"
    check.reason, check.detail = "reference_passes_canary", why
    return check
