"""The mining check of the canaries (docs/contracts.md §7, issue 30): the reference fix must fail every
canary twin of a task (:mod:`pytest_homefield.sandbox.canaries`) while its FAIL_TO_PASS ids still
pass.

Verification version 6 (:func:`check_twins`): the twins run apart
(:mod:`pytest_homefield.sandbox.twin_runs`), each at its original's name and place in a test process
of its own on a fresh copy, so no order among them exists to check: one round of the targeted runs;
a function whose original broke or whose twin did not fail gets a sentinel and a second round;
what still does not hold drops the candidate as ``reference_passes_canary``.

Version 5 checked twins planted beside their originals in the two worst orders (``canary_order``);
its tasks keep their ``canary_sentinels`` at grading.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pytest_homefield.sandbox.canaries import IDLE, TEARDOWN_TWIN, Canary, CanaryPlan, function_id, teardown_nodes
from pytest_homefield.sandbox.testrun import TestRun
from pytest_homefield.sandbox.twin_runs import TwinPlan, most_at_once

__all__ = ["CanaryCheck", "check_twins", "TWIN_ROUNDS"]

#: What a canary run returns instead of a test run when it could not run (verification's drop record).
Stop = TypeVar("Stop")


@dataclass
class CanaryCheck:
    """Result of :func:`check_twins`: ``canaries`` (how many were planted in the last round),
    ``sentinels`` (functions planted as sentinels), ``order`` (always empty since version 6: the
    task's ``canary_order`` ``{}``), ``unprotected`` (the last plan's FAIL_TO_PASS functions with no
    contradiction twin, :attr:`~pytest_homefield.sandbox.twin_runs.TwinPlan.unprotected`), ``reason``/``detail``
    (``None`` when the check held; else ``reference_passes_canary`` or ``timeout``), ``seconds``
    spent in canary runs, ``runs`` made, ``peak_mb`` the most MiB a canary run's memory cgroup held at once
    (``None``: none had one); ``teardown``: whether the check that held judged a teardown canary
    (:data:`~pytest_homefield.sandbox.canaries.TEARDOWN`, the reference fix failing it: the task's
    ``canary_teardown``, tcan52); ``at_once``: the most test runs a grading of the task makes at once
    (:func:`~pytest_homefield.sandbox.twin_runs.most_at_once` of the last plan: a grading's exception-swap twin that
    plan did not draw counted; 0 before a check held: the task's ``verify.twin_runs``)."""

    canaries: int = 0
    sentinels: list[str] = field(default_factory=list)
    order: dict[str, str] = field(default_factory=dict)
    unprotected: list[str] = field(default_factory=list)
    reason: str | None = None
    detail: str = ""
    seconds: float = 0.0
    peak_mb: float | None = None
    runs: int = 0
    teardown: bool = False
    at_once: int = 0


def _why(c: Canary, outcomes: Mapping[str, str]) -> str:
    """Why canary ``c`` does not hold in ``outcomes`` (one line): an instance passed, an instance was
    skipped or xfailed (every instance, or one whose original's instance is a FAIL_TO_PASS id) or reported
    otherwise (``xpassed``), or none ran: only then "did not run"."""
    passed = [i for i in outcomes if c.matches(i) and outcomes[i] == "passed"]
    if passed:
        return f"canary {passed[0]} ({c.kind} of {c.source}: {c.how}) passed with the reference fix"
    ran = [i for i in outcomes if c.matches(i) and outcomes[i] not in ("failed", "error")]
    idle = [i for i in ran if outcomes[i] in IDLE] or ran  # skipped, xfailed; else xpassed or another word
    if idle:
        return f"canary {c.node} ({c.kind} of {c.source}) did not fail: {idle[0]} was {outcomes[idle[0]]}"
    return f"canary {c.node} ({c.kind} of {c.source}) did not run"


def _bad(fail_to_pass: Sequence[str], run: TestRun, plan: CanaryPlan) -> tuple[set[str], str]:
    """The functions whose original did not pass or whose canary did not fail in ``run``, and why
    (one line, for the first)."""
    failing = plan.failing(run.outcomes, fail_to_pass)
    bad: set[str] = set()
    why = ""
    for c in plan.canaries:
        if c not in failing:
            bad.add(c.source)
            why = why or _why(c, run.outcomes)
    broken = [i for i in fail_to_pass if run.outcomes.get(i) != "passed"]
    for i in broken:
        bad.add(function_id(i))
    if broken and not why:
        why = f"{len(broken)} FAIL_TO_PASS id(s) did not pass with the canaries planted, e.g. {broken[0]}"
    return bad, why


#: Rounds of :func:`check_twins` at most (the twins; then sentinels for what broke).
TWIN_ROUNDS = 2


def check_twins(fail_to_pass: Sequence[str],
                twin_run: Callable[[set[str], int], tuple[TestRun | Stop, CanaryPlan]]) -> CanaryCheck | Stop:
    """``twin_run(forced, k)`` makes the targeted twin runs of a twin plan
    (:class:`~pytest_homefield.sandbox.twin_runs.TwinPlan`) on fresh copies of the commit (``forced``:
    functions that get a sentinel; ``k``: the round, from 1) and returns one run whose outcomes are
    :meth:`~pytest_homefield.sandbox.twin_runs.TwinPlan.merge`'s, with the plan, or what stopped it
    (returned as it is). Every twin must fail in every instance and every FAIL_TO_PASS id of a
    function with twins pass. A function that breaks gets a sentinel; a sentinel that breaks, or
    anything after :data:`TWIN_ROUNDS`, is ``reference_passes_canary``; a timed-out run ``timeout``.
    ``order`` is always empty (no order to fix); ``runs``: rounds made."""
    forced: set[str] = set()
    check = CanaryCheck()
    why = ""
    for k in range(1, TWIN_ROUNDS + 1):
        check.runs += 1
        r, plan = twin_run(set(forced), k)
        if not isinstance(r, TestRun):
            return r
        check.seconds += r.wall_s
        if r.peak_mb is not None:
            check.peak_mb = max(r.peak_mb, check.peak_mb or 0)
        if r.timed_out:
            check.reason = "timeout"
            check.detail = f"the canary run exceeded the run timeout after {r.wall_s:.0f} s"
            return check
        grouped = {g.source for g in plan.groups}
        # not the appended ones, nor a teardown twin, which grading checks on the reference fix (tdtwin56: one a real
        # fix passes only now and then would cost its function the body twin)
        ran = CanaryPlan(plan.seed, [c for c in plan.canaries if c.source in grouped and c.kind != TEARDOWN_TWIN])
        bad, why = _bad([i for i in fail_to_pass if function_id(i) in grouped], r, ran)
        if not bad:
            check.canaries, check.sentinels = len(plan.canaries), sorted(forced)
            check.unprotected = list(getattr(plan, "unprotected", []))
            check.teardown = bool(teardown_nodes(ran))  # judged with its group (tcan52)
            check.at_once = most_at_once(plan) if isinstance(plan, TwinPlan) else 0
            return check
        if bad & forced:
            break
        forced |= bad
    check.reason, check.detail = "reference_passes_canary", why
    return check
