"""The group-sequential test of ``--adaptive`` (issue 32): spending, boundaries, repeated p, decisions."""

from __future__ import annotations

import itertools
import math

import pytest

from pytest_homefield.report.adaptive import (
    adaptive_notes,
    adaptive_pairs,
    adaptive_section,
    not_needed_reason,
    savings,
)
from pytest_homefield.report.sequential import (
    futile,
    look_stats,
    normal_boundaries,
    obf_spending,
    repeated_p,
    sign_boundaries,
)


def test_spending_known_values() -> None:
    assert obf_spending(0.0, 0.05) == 0.0 and obf_spending(1.0, 0.05) == 0.05
    # 2 - 2 Phi(1.959964 / sqrt(0.2)) = 2 - 2 Phi(4.38304)
    assert obf_spending(0.2, 0.05) == pytest.approx(1.1726e-5, rel=1e-3)
    assert obf_spending(0.5, 0.05) == pytest.approx(2 - 2 * 0.5 * math.erfc(-2.771808 / math.sqrt(2)) / 1.0, rel=1e-4)


def test_normal_boundaries_known_values() -> None:
    assert normal_boundaries(1) == pytest.approx((1.959964,), abs=1e-4)
    c = normal_boundaries(5)
    assert c[0] == pytest.approx(1.959964 / math.sqrt(0.2), abs=1e-3)  # the first look spends alpha(1/5) alone
    # K = 5, alpha 0.05, two-sided Lan-DeMets O'Brien-Fleming: checked by 2e6 simulated Brownian paths
    assert c == pytest.approx((4.3830, 3.0997, 2.5540, 2.2543, 2.0633), abs=2e-3)
    assert list(c) == sorted(c, reverse=True)


def test_normal_boundaries_two_looks_by_direct_integration() -> None:
    """P(|Z1| < c1, |Z2| < c2) by integrating over W1 = Z1 (W2 = W1 + N(0, 1)), not by the grid recursion."""
    c1, c2 = normal_boundaries(2)
    h = 1e-4
    z = [-c1 + h * (i + 0.5) for i in range(int(2 * c1 / h))]
    cdf = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
    b2 = c2 * math.sqrt(2)
    inside = sum(math.exp(-w * w / 2) / math.sqrt(2 * math.pi) * (cdf(b2 - w) - cdf(-b2 - w)) for w in z) * h
    assert c1 == pytest.approx(1.959964 / math.sqrt(0.5), abs=1e-3)
    assert 1 - inside == pytest.approx(0.05, abs=2e-4)


def test_sign_boundary_one_look_is_the_exact_sign_test() -> None:
    # 10 discordant pairs: P(|S| >= 8) = 2 * 11 / 1024 = 0.0215 <= 0.05 < P(|S| >= 6) = 0.109
    assert sign_boundaries([10], 1) == [8]
    assert sign_boundaries([11], 1) == [9]  # P(|S| >= 9) = 2 * 12 / 2048 = 0.0117; |S| = 7: 0.065
    assert sign_boundaries([5], 1) == [6]  # 5 pairs cannot reach 0.05: no boundary within reach
    with pytest.raises(ValueError):
        sign_boundaries([4, 3], 2)


@pytest.mark.parametrize("counts", [(6, 12), (4, 9, 14)])
def test_sign_boundaries_spend_no_more_than_the_function_by_enumeration(counts: tuple[int, ...]) -> None:
    looks = len(counts)
    b = sign_boundaries(list(counts), looks)
    n = counts[-1]
    first = [0] * looks
    for signs in itertools.product((-1, 1), repeat=n):
        for lk, (cnt, bound) in enumerate(zip(counts, b, strict=True)):
            if abs(sum(signs[:cnt])) >= bound:
                first[lk] += 1
                break
    spent = 0.0
    for lk in range(looks):
        spent += first[lk] / 2**n
        assert spent <= obf_spending((lk + 1) / looks, 0.05) + 1e-12
    assert spent > 0.01  # not vacuous: the design does spend


def test_repeated_p_one_look_is_the_exact_two_sided_p() -> None:
    assert repeated_p([8], [10], 1) == pytest.approx(22 / 1024, abs=2e-4)
    assert repeated_p([0], [10], 1) == 1.0


def test_look_stats_and_futility() -> None:
    tied = look_stats([[0, 0, 0, 1, -1] * 6], 5)
    assert tied[0].power is not None and tied[0].power < 0.1 and not tied[0].rejects
    assert futile(tied[0], 0.10) is not None and futile(tied[0], 0.10).startswith("conditional power")
    strong = look_stats([[1] * 12 + [0] * 18] * 2, 5)
    assert [lk.rejects for lk in strong] == [False, True]  # 12 wins of 12: b_1 = 13 out of reach, b_2 = 16 <= 24
    assert strong[1].ci[0] > 0 and strong[1].p < 0.05
    assert futile(strong[0], 0.10) is None
    with pytest.raises(ValueError):
        look_stats([[2]], 1)


def _rec(task: str, agent: str, n: int, outcome: str, cost: float | None = None) -> dict:
    return {"task_id": task, "agent": agent, "attempt": n, "variant": "base", "outcome": outcome, "cost_usd": cost}


AGENTS = [("a", "cmd:x"), ("b", "cmd:y"), ("c", "cmd:z"), ("oracle", "oracle")]


def test_not_needed_decisions() -> None:
    tasks = [f"t{i}" for i in range(20)]
    recs = [_rec(t, ag, 1, "tests_failed", 0.5) for t in tasks for ag in ("a", "b")]  # a, b tied: futile
    recs += [_rec(t, "c", 1, "solved" if i < 12 else "tests_failed", 0.5)  # 12 wins of 12: not yet at look 1
             for i, t in enumerate(tasks)]
    recs += [_rec(t, "oracle", 1, "solved") for t in tasks]
    assert not_needed_reason(recs, AGENTS, "oracle", 2, looks=5) == "reference agent: round 1 only"
    assert not_needed_reason(recs, AGENTS, "a", 1, looks=5) is None
    assert not_needed_reason(recs, AGENTS, "a", 2, looks=5) is None  # a vs c still open
    pairs = {(p.a, p.b): p for p in adaptive_pairs(recs, AGENTS, looks=5)}
    assert pairs[("a", "b")].settled and pairs[("a", "b")].why.startswith("futility")
    assert pairs[("a", "c")].why == "open"
    recs += [_rec(t, ag, 2, o) for t in tasks for ag, o in (("a", "tests_failed"), ("b", "tests_failed"),
                                                             ("c", "solved"))]
    why = not_needed_reason(recs, AGENTS, "a", 3, looks=5)  # 32 wins of 32 by look 2: a vs c difference
    assert why is not None and why.startswith("settled at look 2: ") and "a vs c (difference)" in why
    assert not_needed_reason(recs, [("a", "cmd:x"), ("oracle", "oracle")], "a", 2, looks=5) is None  # no pair


def test_a_suspicious_solve_settles_nothing_the_report_would_not() -> None:
    """ratk48: the adaptive looks counted a solve flagged ``suspicious`` solved, so an agent whose every solve was
    flagged (c: 20 of 20 here) settled its pair 'difference' from a at look 1 and its later attempts were not run.
    Since sus60 a flagged solve counts solved (the flag a hint) and a verdict resting on flagged solves is withheld
    (contracts §10): as recorded 'difference', with c's flagged solves counted failed a tie (futility), so the pair
    is not settled and its attempts go on."""
    tasks = [f"t{i}" for i in range(20)]
    recs = [_rec(t, "a", n, "tests_failed") for t in tasks for n in (1, 2)]
    recs += [{**_rec(t, "c", n, "solved"), "suspicious": True} for t in tasks for n in (1, 2)]
    pair = {(p.a, p.b): p for p in adaptive_pairs(recs, [("a", "cmd:x"), ("c", "cmd:z")], looks=5)}[("a", "c")]
    assert not pair.settled and pair.why.startswith("no verdict: it rests on c's flagged solves"), pair.why
    assert "counted as failed: futility" in pair.why, pair.why


def test_a_flagged_solve_that_decides_nothing_settles_as_recorded() -> None:
    """sus60: a flag withholds only what rests on it. c solves every attempt, one flagged (a real fix of a listed
    shape); a solves none: 'difference' at look 1 as recorded and with the flagged solve counted failed, so the
    pair is settled there."""
    tasks = [f"t{i}" for i in range(20)]
    recs = [_rec(t, "a", n, "tests_failed") for t in tasks for n in (1, 2)]
    recs += [{**_rec(t, "c", n, "solved"), "suspicious": (t, n) == ("t0", 1)} for t in tasks for n in (1, 2)]
    pair = {(p.a, p.b): p for p in adaptive_pairs(recs, [("a", "cmd:x"), ("c", "cmd:z")], looks=5)}[("a", "c")]
    assert (pair.why, pair.look) == ("difference", 1), pair


def test_section_and_savings() -> None:
    recs = [_rec("t1", "a", 1, "tests_failed", 0.5), _rec("t1", "a", 2, "not_needed"),
            _rec("t1", "b", 1, "tests_failed", 0.25), _rec("t1", "b", 2, "not_needed")]
    assert savings(recs) == {"a": (1, 0.5), "b": (1, 0.25)}
    meta = {"adaptive": {"looks": 2, "alpha": 0.05, "margin": 0.1}, "agents": [{"name": "a", "spec": "cmd:x"},
                                                                              {"name": "b", "spec": "cmd:y"}]}
    sec = adaptive_section(recs, meta)
    # a cmd: agent's USD is its own report (int24): the saving says so
    assert sec is not None and sec["pairs"][0]["look"] == 1
    assert sec["saved"]["a"] == {"attempts": 1, "usd": 0.5, "cost_reported": "reported by the agent"}
    assert "adaptive: attempts not needed: a 1 (~0.50 USD, reported by the agent), b 1 (~0.25 USD, reported by " \
           "the agent)" in adaptive_notes(sec)
    # a cost homefield measures (a reference agent's) carries no label; an openai: server's token counts are its
    # own words (ratk54): labelled as every agent's
    reference = [{"name": "a", "spec": "sim:0.5"}, {"name": "b", "spec": "b=openai:m"}]
    measured = adaptive_section(recs, {**meta, "agents": reference})
    assert measured is not None and measured["saved"]["a"] == {"attempts": 1, "usd": 0.5}
    assert measured["saved"]["b"] == {"attempts": 1, "usd": 0.25, "cost_reported": "reported by the agent"}
    assert adaptive_section(recs, {"agents": []}) is None
