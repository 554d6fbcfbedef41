"""Twin hits: solves a content picker may have won by luck (docs/contracts.md §10, issue 30, atk22).

A grading runs each hidden test and its contradicted twin apart (§7). Code that sees both versions of a
test (atk22's lock picker: fcntl locks on a file every sandbox binds) can pass exactly one of them, chosen
by content, and fail the other, the same choice in the confirmation run. It cannot tell the original from
the twin (the twins are made to be indistinguishable), so per group it guesses right with chance at most
1/2: right, the attempt is ``solved``; wrong, an excusable twin passed beside its failing original and was
confirmed, as honest code giving exactly the contradicted value does: ``tests_failed`` with ``twin_hits``
> 0 (the record's count). Over one attempt with g groups, P(solved) = 2^-g ≤ 1 − 2^-g = P(a twin hit): such
a picker makes at least as many twin-hit attempts as lucky solves, in expectation.

The report therefore recounts an agent with twin hits: :data:`SOLVES_PER_HIT` of its solved attempts per
twin-hit attempt counted as failed (:func:`picked_outcomes`), and a comparison whose verdict changes so
gives none. Two per hit, not one: with one, a pure picker's surplus ``solved − hits`` is 0 on average but
spreads as √n, and a paired exact test still called it better than an agent that solves nothing in 23% of
400 seeded runs of 48 tasks (14% at 20 tasks, 33% at 100); with two, in 0% (0.5% at 20 tasks); with none,
in every run (``tests/report/test_picks.py`` measures it). Two per hit also covers a picker that tells
the original up to 2 times in 3 (atk22's recipe picker, 4 of 8 demo tasks on one attempt): it solves with
chance q and hits with 1 − q, and q ≤ 2 (1 − q) while q ≤ 2/3. The price: an honest agent whose wrong code
meets a twin's value exactly (a sign error against a twin ``5`` of ``-5``) loses a verdict that rests on
two solves per such coincidence, and the report says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["SOLVES_PER_HIT", "picked_outcomes"]

#: Solved attempts counted as failed per attempt of the agent with a twin hit (see the module docstring).
SOLVES_PER_HIT = 2


def picked_outcomes(outcomes: Mapping[str, Sequence[int]], hits: Mapping[str, Sequence[int]],
                    others: Sequence[Mapping[str, Sequence[int]]]) -> tuple[dict[str, list[int]], int, int]:
    """``(counted, hit_attempts, flipped)``: ``outcomes`` (task id → its scored attempts, 1 solved, 0 not, in
    attempt order) with ``flipped`` = min(solved, :data:`SOLVES_PER_HIT` × ``hit_attempts``) solved attempts
    set to 0, where ``hit_attempts`` counts the attempts whose ``hits`` entry (task id → twin hits per
    scored attempt, in the same order; a task left out has none) is above 0. The solves counted as failed
    are the agent's best case for its opponents: those on the tasks the ``others`` (each task id → 0/1 per
    attempt) solve least (their mean pass rate, a task they lack counting 0), then task id, then the last
    attempt of a task first."""
    hit_attempts = sum(1 for tid, v in hits.items() if tid in outcomes for h in v if h > 0)
    counted = {tid: list(v) for tid, v in outcomes.items()}
    solved = [(tid, i) for tid, v in counted.items() for i, x in enumerate(v) if x]
    flipped = min(len(solved), SOLVES_PER_HIT * hit_attempts)

    def others_rate(tid: str) -> float:
        rates = [sum(o[tid]) / len(o[tid]) if o.get(tid) else 0.0 for o in others]
        return sum(rates) / len(rates) if rates else 0.0

    for tid, i in sorted(solved, key=lambda ti: (others_rate(ti[0]), ti[0], -ti[1]))[:flipped]:
        counted[tid][i] = 0
    return counted, hit_attempts, flipped
