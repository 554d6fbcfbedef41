"""The mining check of the canaries (docs/contracts.md §7, issue 30): the reference fix must fail every
canary twin of a task (:mod:`pytest_homefield.sandbox.canaries`) while its FAIL_TO_PASS ids still
pass.

Verification version 6 (:func:`check_twins`): the twins run apart
(:mod:`pytest_homefield.sandbox.twin_runs`), each at its original's name and place in a test process
of its own on a fresh copy, so no order among them exists to check: one round of the targeted runs;
a function whose original broke or whose twin did not fail gets a sentinel and a second round;
what still does not hold drops the candidate as ``reference_passes_canary``.

Version 5 (:func:`check_canaries`, twins beside the original):
grading put each original at a random place among its twins, so a twin could run before the test it
copies. A stateful test (a counter in redis: ``incr() == 1``) then meets a state its original never
met alone. So each round runs the two worst orders, every group's twins all **before** its original
and all **after** it. A function whose original broke, or a twin did not fail, in one order only gets
the other order fixed (``order``: ``after`` = original first); in both, its twins become a sentinel
(which a real fix always fails). Up to three rounds; what still does not hold drops the candidate as
``reference_passes_canary``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pytest_homefield.sandbox.canaries import ORDERS, CanaryPlan, function_id
from pytest_homefield.sandbox.testrun import TestRun

__all__ = ["CanaryCheck", "check_canaries", "check_twins", "ROUNDS", "TWIN_ROUNDS"]

#: What a canary run returns instead of a test run when it could not run (verification's drop record).
Stop = TypeVar("Stop")
#: Rounds of the two orders at most (free places; fixed orders and sentinels; sentinels).
ROUNDS = 3


@dataclass
class CanaryCheck:
    """Result of :func:`check_canaries`: ``canaries`` (how many the reference failed, in the last
    round's run with the twins after the originals), ``sentinels`` (functions planted as sentinels),
    ``order`` (function id → ``after``/``before``: the original's fixed place), ``reason``/``detail``
    (``None`` when the check held; else ``reference_passes_canary`` or ``timeout``), ``seconds``
    spent in canary runs, ``runs`` made."""

    canaries: int = 0
    sentinels: list[str] = field(default_factory=list)
    order: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    detail: str = ""
    seconds: float = 0.0
    runs: int = 0


def _bad(fail_to_pass: Sequence[str], run: TestRun, plan: CanaryPlan) -> tuple[set[str], str]:
    """The functions whose original did not pass or whose canary did not fail in ``run``, and why
    (one line, for the first)."""
    failing = plan.failing(run.outcomes)
    bad: set[str] = set()
    why = ""
    for c in plan.canaries:
        if c not in failing:
            bad.add(c.source)
            passed = [i for i in run.outcomes if c.matches(i) and run.outcomes[i] == "passed"]
            why = why or (f"canary {passed[0]} ({c.kind} of {c.source}: {c.how}) passed with the reference fix"
                          if passed else f"canary {c.node} ({c.kind} of {c.source}) did not run")
    broken = [i for i in fail_to_pass if run.outcomes.get(i) != "passed"]
    for i in broken:
        bad.add(function_id(i))
    if broken and not why:
        why = f"{len(broken)} FAIL_TO_PASS id(s) did not pass with the canaries planted, e.g. {broken[0]}"
    return bad, why


def check_canaries(fail_to_pass: Sequence[str],
                   canary_run: Callable[[set[str], dict[str, str], str, int], tuple[TestRun | Stop, CanaryPlan]],
                   ) -> CanaryCheck | Stop:
    """``canary_run(forced, order, layout, k)`` runs the FAIL_TO_PASS ids and the canaries planted in a
    fresh copy of the commit, in their planted order (``forced``: functions that get a sentinel;
    ``order``: fixed places; ``layout``: one of :data:`~pytest_homefield.sandbox.canaries.ORDERS`
    for every other group; ``k``: the run's number, from 1) and returns the run and its plan, or
    what stopped it (returned as it is). Every canary must fail (``failed``/``error`` in each
    instance) and every FAIL_TO_PASS id pass, in both orders. A function that breaks in one order
    gets the other fixed; in both (or again), a sentinel; a function already a sentinel that still
    breaks, or anything after :data:`ROUNDS` rounds, is ``reference_passes_canary``; a run that timed
    out is ``timeout``."""
    forced: set[str] = set()
    order: dict[str, str] = {}
    check = CanaryCheck()
    why = ""
    for _round in range(ROUNDS):
        bad: dict[str, set[str]] = {}
        plans: dict[str, CanaryPlan] = {}
        for layout in ORDERS:
            check.runs += 1
            r, plan = canary_run(set(forced), dict(order), layout, check.runs)
            if not isinstance(r, TestRun):
                return r
            check.seconds += r.wall_s
            if r.timed_out:
                check.reason = "timeout"
                check.detail = f"the canary run exceeded the run timeout after {r.wall_s:.0f} s"
                return check
            bad[layout], reason = _bad(fail_to_pass, r, plan)
            why = why if not reason else reason
            plans[layout] = plan
        if not bad["after"] and not bad["before"]:
            check.canaries, check.sentinels, check.order = len(plans["after"].canaries), sorted(forced), order
            return check
        if any(f in forced for f in bad["after"] | bad["before"]):
            break  # a sentinel (which a real fix always fails) broke: nothing left to try
        for fid in sorted(bad["after"] | bad["before"]):
            if fid in order or (fid in bad["after"] and fid in bad["before"]):
                order.pop(fid, None)
                forced.add(fid)
            else:
                order[fid] = "after" if fid in bad["before"] else "before"
    check.reason, check.detail = "reference_passes_canary", why
    return check


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
    ``order`` is always empty (no order to fix)."""
    forced: set[str] = set()
    check = CanaryCheck()
    why = ""
    for k in range(1, TWIN_ROUNDS + 1):
        check.runs += 1
        r, plan = twin_run(set(forced), k)
        if not isinstance(r, TestRun):
            return r
        check.seconds += r.wall_s
        if r.timed_out:
            check.reason = "timeout"
            check.detail = f"the canary run exceeded the run timeout after {r.wall_s:.0f} s"
            return check
        grouped = {g.source for g in plan.groups}
        ran = CanaryPlan(plan.seed, [c for c in plan.canaries if c.source in grouped])  # not the appended ones
        bad, why = _bad([i for i in fail_to_pass if function_id(i) in grouped], r, ran)
        if not bad:
            check.canaries, check.sentinels = len(plan.canaries), sorted(forced)
            return check
        if bad & forced:
            break
        forced |= bad
    check.reason, check.detail = "reference_passes_canary", why
    return check
