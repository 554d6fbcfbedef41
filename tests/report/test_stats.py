"""Tests for :mod:`pytest_homefield.report.stats` (issue 7): known values, edge cases, the test/CI agreement and
seeded simulations of false alarms, power, the minimum detectable effect and CI coverage.

The simulations are sized to run in a few seconds; they print their measured numbers (``-s`` shows them).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pytest_homefield.report import distributions as stats
from pytest_homefield.report.stats import (
    Comparison,
    compare,
    holm,
    mcnemar_exact,
    mde,
    paired_permutation,
    pass_at_k,
    pass_hat_k,
    pass_rate,
    pass_rate_ci,
    reword_verdict,
    verdict_for,
)

Outcomes = dict[str, list[int]]


# ------------------------------------------------------------------------------------------ helpers


def brute_sign_flip(d: list[float] | np.ndarray) -> float:
    """Two-sided sign-flip p by enumerating all 2**T sign patterns (small T only)."""
    x = np.asarray(d, dtype=float)
    obs = abs(x.sum())
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=x.size)))
    return float(np.mean(np.abs(signs @ x) >= obs - 1e-9))


def draw(rng: np.random.Generator, pa: np.ndarray, pb: np.ndarray, k: int) -> tuple[Outcomes, Outcomes]:
    """Simulated outcomes: task t solved by A (B) with probability pa[t] (pb[t]) on each of k attempts."""
    t = len(pa)
    xa = (rng.random((t, k)) < pa[:, None]).astype(int)
    xb = (rng.random((t, k)) < pb[:, None]).astype(int)
    ids = [f"t{i:03d}" for i in range(t)]
    return dict(zip(ids, xa.tolist(), strict=True)), dict(zip(ids, xb.tolist(), strict=True))


def outcomes(*rows: list[int]) -> Outcomes:
    return {f"t{i:03d}": list(r) for i, r in enumerate(rows)}


# ------------------------------------------------------------------------------------------ McNemar


def test_mcnemar_known_values() -> None:
    assert mcnemar_exact(12, 3) == pytest.approx(0.0352, abs=5e-5)
    assert mcnemar_exact(12, 3) == pytest.approx(2 * (1 + 15 + 105 + 455) / 2**15)
    # prior-art §4.2 worked examples
    assert mcnemar_exact(15, 5) == pytest.approx(0.041, abs=5e-4)
    assert mcnemar_exact(10, 3) == pytest.approx(0.092, abs=5e-4)
    assert mcnemar_exact(12, 4) == pytest.approx(0.077, abs=5e-4)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(3, 12) == mcnemar_exact(12, 3)
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64)


@pytest.mark.parametrize("b, c", [(-1, 2), (1.5, 2), (True, 2), (2, -3)])
def test_mcnemar_rejects_bad_counts(b: int, c: int) -> None:
    with pytest.raises(ValueError, match="non-negative integer"):
        mcnemar_exact(b, c)


# ------------------------------------------------------------------------------------------ sign flip


def test_sign_flip_known_values() -> None:
    assert paired_permutation([1, 1, 1, 1]) == pytest.approx(0.125, rel=1e-12)
    assert paired_permutation([0, 0]) == 1.0
    assert paired_permutation([1, -1]) == 1.0
    assert paired_permutation([0.5] * 6 + [0.0] * 4) == pytest.approx(2 / 64, rel=1e-12)
    assert paired_permutation([1 / 3, 2 / 3, -1 / 3]) == pytest.approx(brute_sign_flip([1, 2, -1]))


def test_sign_flip_exact_matches_enumeration() -> None:
    rng = np.random.default_rng(11)
    for _ in range(60):
        t = int(rng.integers(1, 13))
        ka = rng.integers(1, 5, t)
        kb = rng.integers(1, 5, t)
        d = rng.integers(0, ka + 1) / ka - rng.integers(0, kb + 1) / kb
        assert paired_permutation(d) == pytest.approx(brute_sign_flip(d), abs=1e-12)


def test_sign_flip_monte_carlo_without_lattice() -> None:
    d = np.random.default_rng(2).normal(0.3, 1.0, 12)  # no small common denominator -> Monte Carlo
    assert stats._lattice(d) is None
    exact = brute_sign_flip(d)
    p = paired_permutation(d, n_resamples=20_000, seed=5)
    assert p == pytest.approx(exact, abs=0.015)
    assert paired_permutation(d, n_resamples=20_000, seed=5) == p  # seeded: reproducible
    assert 0.0 < paired_permutation(d, n_resamples=10, seed=1) <= 1.0


def test_sign_flip_exact_stays_fast_for_hundreds_of_tasks() -> None:
    rng = np.random.default_rng(3)
    for t, k in [(300, 3), (1000, 5)]:
        d = rng.integers(0, k + 1, t) / k - rng.integers(0, k + 1, t) / k
        start = time.perf_counter()
        p = paired_permutation(d)
        took = time.perf_counter() - start
        assert took < 2.0, (t, k, took)  # ~10 ms here; generous for a loaded CI machine
        # agrees with an independent Monte Carlo of the same null (5,000 sign patterns, SE <= 0.007)
        signs = np.where(rng.random((5_000, t)) < 0.5, -1.0, 1.0)
        mc = float(np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-9))
        assert p == pytest.approx(mc, abs=0.03)


def test_sign_flip_unequal_attempts_uses_common_denominator() -> None:
    d = np.array([1 / 2 - 1 / 3, 2 / 5 - 1 / 4, -1 / 3, 3 / 4 - 1 / 5] * 3)
    lat = stats._lattice(d)
    assert lat is not None and lat[1] == 60
    assert paired_permutation(d) == pytest.approx(brute_sign_flip(d), abs=1e-12)


def test_fft_convolution_paths_match_the_exact_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Large inputs switch from shift-and-add / direct convolution to FFT; the numbers must not move."""
    rng = np.random.default_rng(6)
    a, b = draw(rng, rng.uniform(0.2, 0.9, 60), rng.uniform(0.1, 0.8, 60), 3)
    d = np.array([np.mean(a[t]) - np.mean(b[t]) for t in a])
    ref, ref_p = compare(a, b), paired_permutation(d)
    monkeypatch.setattr(stats, "_SHIFT_ADD_MAX", 0)
    monkeypatch.setattr(stats, "_DIRECT_2D_MAX", 0)
    monkeypatch.setattr(stats, "_DIRECT_1D_MAX", 0)
    fft = compare(a, b)
    assert fft.p_value == pytest.approx(ref.p_value, rel=1e-9, abs=1e-14)
    assert fft.ci == pytest.approx(ref.ci, abs=1e-12)
    assert paired_permutation(d) == pytest.approx(ref_p, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("bad", [[], [float("nan")], [1.0, float("inf")]])
def test_paired_permutation_rejects_bad_input(bad: list[float]) -> None:
    with pytest.raises(ValueError, match="paired_permutation"):
        paired_permutation(bad)


def test_paired_permutation_rejects_zero_resamples() -> None:
    with pytest.raises(ValueError, match="n_resamples"):
        paired_permutation([0.1, 0.2], n_resamples=0)


def test_permutation_equals_mcnemar_with_one_attempt() -> None:
    for b in range(0, 16):
        for c in range(0, 16):
            d = [1] * b + [-1] * c + [0] * 5
            p = mcnemar_exact(b, c)
            assert paired_permutation(d) == pytest.approx(p, rel=1e-9, abs=1e-15)
            null = stats._SignFlipNull.exact_table(np.array(d, dtype=np.int64), 1)
            assert null.p_value(0.0) == pytest.approx(p, rel=1e-9, abs=1e-15)
    rng = np.random.default_rng(4)
    for _ in range(40):
        a, bb = draw(rng, rng.uniform(0, 1, 25), rng.uniform(0, 1, 25), 1)
        cmp = compare(a, bb)
        diffs = [a[t][0] - bb[t][0] for t in a]
        assert cmp.test == "mcnemar"
        assert cmp.p_value == pytest.approx(paired_permutation(diffs), rel=1e-9)


# ------------------------------------------------------------------------------------------ pass@k


def test_pass_at_k_known_values() -> None:
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(10, 8, 5) == 1.0
    assert pass_at_k(5, 2, 3) == pytest.approx(0.9)
    assert pass_at_k(10, 0, 3) == 0.0
    assert pass_at_k(2, 0, 2) == 0.0


def test_pass_at_k_and_pass_hat_k_are_unbiased() -> None:
    vec = [1, 0, 0, 1, 0, 0, 0, 1, 0, 0]
    for k in range(1, 11):
        subsets = list(itertools.combinations(vec, k))
        assert pass_at_k(10, 3, k) == pytest.approx(np.mean([any(s) for s in subsets]))
        assert pass_hat_k(10, 3, k) == pytest.approx(np.mean([all(s) for s in subsets]))


def test_pass_hat_k_known_values() -> None:
    assert pass_hat_k(5, 4, 3) == pytest.approx(0.4)
    assert pass_hat_k(5, 2, 3) == 0.0
    assert pass_hat_k(4, 4, 4) == 1.0


@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k])
@pytest.mark.parametrize("n, c, k", [(2, 0, 5), (3, 1, 0), (3, 4, 1), (-1, 0, 1), (3, 1.5, 1)])
def test_pass_at_k_rejects_bad_arguments(fn: object, n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        fn(n, c, k)  # type: ignore[operator]


def test_pass_at_k_error_message_names_the_problem() -> None:
    with pytest.raises(ValueError, match="k=5 exceeds the n=2 attempts"):
        pass_at_k(2, 0, 5)


# ------------------------------------------------------------------------------------------ Holm


def test_holm_known_values() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([]) == []
    assert holm([0.5]) == [0.5]
    assert holm([0.4, 0.3, 0.9]) == pytest.approx([0.9, 0.9, 0.9])
    assert holm([0.01, 0.01]) == pytest.approx([0.02, 0.02])
    adj = holm([0.002, 0.5, 0.011, 0.04])
    assert adj == pytest.approx([0.008, 0.5, 0.033, 0.08])
    assert all(a >= p for a, p in zip(adj, [0.002, 0.5, 0.011, 0.04], strict=True))


@pytest.mark.parametrize("bad", [[-0.1], [1.5], [float("nan")]])
def test_holm_rejects_bad_pvalues(bad: list[float]) -> None:
    with pytest.raises(ValueError, match="p-values"):
        holm(bad)


# ------------------------------------------------------------------------------------------ mde


def test_mde_formula() -> None:
    # prior-art §4.5 table: Var(d) = 0.10 -> 12.5 pts at T = 50, 6.3 at T = 200
    assert mde(50, sd_diff=math.sqrt(0.10)) == pytest.approx(0.125, abs=0.001)
    assert mde(200, sd_diff=math.sqrt(0.10)) == pytest.approx(0.063, abs=0.001)
    # base rate: sd = sqrt(2 p (1 - p) / k) = 0.4 for p = 0.6, k = 3
    assert mde(30, base_rate=0.6, attempts=3) == pytest.approx(2.8016 * 0.4 / math.sqrt(30), rel=1e-3)
    assert mde(30, sd_diff=0.0) == 0.0
    assert mde(30, sd_diff=0.4, alpha=0.01) > mde(30, sd_diff=0.4)
    assert mde(30, sd_diff=0.4, power=0.9) > mde(30, sd_diff=0.4)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_tasks": 0, "sd_diff": 0.3},
        {"n_tasks": 30},
        {"n_tasks": 30, "sd_diff": 0.3, "base_rate": 0.5},
        {"n_tasks": 30, "base_rate": 1.5},
        {"n_tasks": 30, "sd_diff": -1.0},
        {"n_tasks": 30, "sd_diff": 0.3, "alpha": 0.0},
        {"n_tasks": 30, "sd_diff": 0.3, "power": 1.0},
        {"n_tasks": 30, "base_rate": 0.5, "attempts": 0},
    ],
)
def test_mde_rejects_bad_arguments(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        mde(**kwargs)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ pass rate


def test_pass_rate_ci_is_wilson_with_one_attempt() -> None:
    o = outcomes(*([[1]] * 17 + [[0]] * 3))
    lo, hi = pass_rate_ci(o)
    assert (lo, hi) == pytest.approx((0.640, 0.948), abs=5e-4)
    assert pass_rate(o) == pytest.approx(0.85)
    lo, hi = pass_rate_ci(outcomes(*([[1]] * 20)))
    assert lo == pytest.approx(0.839, abs=5e-4) and hi == 1.0
    lo, hi = pass_rate_ci(outcomes(*([[0]] * 20)))
    assert lo == 0.0 and hi == pytest.approx(0.161, abs=5e-4)


def test_pass_rate_ci_is_task_clustered_with_attempts() -> None:
    # all-or-nothing tasks: 60 attempts carry the information of 20 tasks, not 60
    o = outcomes(*([[1, 1, 1]] * 10 + [[0, 0, 0]] * 10))
    lo, hi = pass_rate_ci(o)
    naive = pass_rate_ci(outcomes(*([[1]] * 30 + [[0]] * 30)))
    per_task = pass_rate_ci(outcomes(*([[1]] * 10 + [[0]] * 10)))
    assert hi - lo > naive[1] - naive[0]
    assert hi - lo >= per_task[1] - per_task[0]  # plus the small-df (t vs z) widening
    assert (lo, hi) == pytest.approx(per_task, abs=0.02)
    # no within-task noise at all: capped at all attempts independent
    mixed = outcomes(*([[1, 0, 0]] * 20))
    lo, hi = pass_rate_ci(mixed)
    assert lo < 1 / 3 < hi and hi - lo < 0.3
    # all passed with three attempts: not degenerate, each task counts once (conservative)
    lo, hi = pass_rate_ci(outcomes(*([[1, 1, 1]] * 20)))
    assert hi == 1.0 and 0.8 < lo < pass_rate_ci(outcomes(*([[1]] * 20)))[0]
    # unequal attempts and one task stay inside [0, 1]
    for o in (outcomes([1, 0], [1], [0, 0, 1, 1]), outcomes([1, 1]), outcomes([0, 1, 1])):
        lo, hi = pass_rate_ci(o)
        assert 0.0 <= lo <= pass_rate(o) <= hi <= 1.0


def test_pass_rate_and_its_interval_are_numpy_s_to_the_bit_without_numpy() -> None:
    """pass@1 and its interval sum the way numpy does (pairwise, in blocks of 8 and 128), so they equal
    numpy's mean and variance to the bit, from 1 task to more than two blocks, with no numpy imported."""
    from pytest_homefield.report.rates import _mean, _var1

    rng = np.random.default_rng(8)
    for n in (1, 2, 7, 8, 9, 16, 17, 127, 128, 129, 257, 1031):
        for _ in range(20):
            k = rng.integers(1, 8, n)
            rates = (rng.integers(0, 8, n) % (k + 1)) / k
            assert _mean(list(rates)) == float(np.mean(rates))
            if n > 1:
                assert _var1(list(rates)) == float(np.var(rates, ddof=1))
    code = ("import sys; from pytest_homefield.report.rates import pass_rate, pass_rate_ci; "
            "o = {'a': [1, 0, 1], 'b': [0], 'c': [1, 1]}; print(pass_rate(o), pass_rate_ci(o), 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[-1] == "False"


def test_pass_rate_ci_coverage_with_attempts() -> None:
    """Seeded simulation: 30 tasks of varying difficulty x 3 attempts; nominal 95 %."""
    rng = np.random.default_rng(21)
    hits = 0
    reps = 1000
    for _ in range(reps):
        p = rng.beta(1.2, 0.8, 30)  # population pass@1 = 0.6
        o, _ = draw(rng, p, p, 3)
        lo, hi = pass_rate_ci(o)
        hits += lo <= 0.6 <= hi
    print(f"\npass_rate_ci coverage (30 tasks x 3 attempts, nominal 95%): {hits / reps:.3f}")
    assert 0.93 <= hits / reps <= 0.97


@pytest.mark.parametrize(
    "bad, match",
    [({}, "no tasks"), ({"t": []}, "no task has any attempt"), ({"t": [2]}, "0 or 1"), ({"t": [0.5]}, "0 or 1")],
)
def test_pass_rate_ci_rejects_bad_input(bad: Outcomes, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        pass_rate_ci(bad)
    with pytest.raises(ValueError, match=match):
        pass_rate(bad)


# ------------------------------------------------------------------------------------------ compare


CONTRACT_KEYS = {"a", "b", "test", "n_tasks", "delta", "ci", "p_value", "p_adjusted", "mde", "verdict"}


def test_compare_one_attempt_uses_mcnemar() -> None:
    a = outcomes(*([[1]] * 14 + [[0]] * 6))
    b = outcomes(*([[0]] * 12 + [[1]] * 8))
    cmp = compare(a, b, names=("alpha", "beta"))
    assert cmp.test == "mcnemar"
    assert cmp.wins == (12, 6)
    assert cmp.p_value == mcnemar_exact(12, 6)
    assert cmp.delta == pytest.approx((14 - 8) / 20)
    assert cmp.attempts == (1.0, 1.0)
    assert cmp.exact


def test_compare_attempts_use_permutation() -> None:
    rng = np.random.default_rng(8)
    a, b = draw(rng, np.full(30, 0.7), np.full(30, 0.5), 3)
    cmp = compare(a, b)
    diffs = [np.mean(a[t]) - np.mean(b[t]) for t in a]
    assert cmp.test == "permutation"
    assert cmp.p_value == pytest.approx(paired_permutation(diffs), rel=1e-9)
    assert cmp.delta == pytest.approx(np.mean(diffs))
    assert cmp.sd_diff == pytest.approx(np.std(diffs, ddof=1))
    assert cmp.attempts == (3.0, 3.0)
    assert cmp.ci[0] <= cmp.delta <= cmp.ci[1]


def test_compare_counts_only_shared_tasks_with_attempts() -> None:
    a = {"x": [1, 1], "y": [1, 0], "only_a": [1, 1], "empty": []}
    b = {"x": [0, 0], "y": [0, 1, 1], "only_b": [0], "empty": [0]}
    cmp = compare(a, b)
    assert cmp.n_tasks == 2
    assert cmp.delta == pytest.approx(((1 - 0) + (0.5 - 2 / 3)) / 2)
    assert cmp.attempts == (2.0, 2.5)
    assert "2.2 attempts on average" in cmp.verdict or "no gap can reach" in cmp.verdict


def test_compare_winner_is_named_first_with_positive_delta() -> None:
    strong = outcomes(*([[1, 1, 1]] * 25 + [[1, 0, 0]] * 5))
    weak = outcomes(*([[0, 0, 1]] * 20 + [[1, 1, 1]] * 10))
    ab = compare(strong, weak, names=("A", "B"))
    ba = compare(weak, strong, names=("A", "B"))
    assert ab.delta > 0 and ba.delta == pytest.approx(-ab.delta)
    assert ab.verdict.startswith("A beats B (Δ=+")
    assert ba.verdict.startswith("B beats A (Δ=+")
    # same numbers from the winner's side in both sentences
    assert ab.verdict.split("(")[1] == ba.verdict.split("(")[1]
    assert ba.ci == pytest.approx((-ab.ci[1], -ab.ci[0]))
    assert ba.to_dict()["delta"] < 0  # JSON keeps a - b
    pattern = r"^A beats B \(Δ=\+\d+ pts, 95% CI \+\d+…\+\d+, p[=<][\d.]+, paired permutation over 30 tasks\)$"
    assert re.match(pattern, ab.verdict), ab.verdict


def test_compare_no_difference_wording() -> None:
    rng = np.random.default_rng(1)
    p = rng.uniform(0.2, 0.9, 30)
    a, b = draw(rng, p, p, 3)
    cmp = compare(a, b)
    assert cmp.p_value >= 0.05
    pattern = (
        r"^A vs B: no detectable difference \(Δ=(0|[+−][\d.]+) pts, 95% CI [+−]?[\d.]+…[+−]?[\d.]+, "
        r"p=[\d.]+; gaps under \d+ pts would usually go unseen with 30 tasks × 3 attempts\)$"
    )
    assert re.match(pattern, cmp.verdict), cmp.verdict
    assert f"gaps under {round(100 * cmp.mde)} pts" in cmp.verdict


def test_compare_to_dict_is_json() -> None:
    rng = np.random.default_rng(2)
    a, b = draw(rng, np.full(12, 0.6), np.full(12, 0.4), 2)
    d = compare(a, b).to_dict()
    assert CONTRACT_KEYS <= set(d)
    assert json.loads(json.dumps(d)) == d
    assert isinstance(d["ci"], list) and len(d["ci"]) == 2
    assert d["ties"] == d["n_tasks"] - sum(d["b_c"])


def test_compare_is_frozen() -> None:
    cmp = compare(outcomes([1], [0]), outcomes([0], [0]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        cmp.delta = 1.0  # type: ignore[misc]


def test_compare_rejects_empty_inputs() -> None:
    some = outcomes([1, 0])
    with pytest.raises(ValueError, match="A: no tasks"):
        compare({}, some)
    with pytest.raises(ValueError, match="B: no tasks"):
        compare(some, {})
    with pytest.raises(ValueError, match="no task has any attempt"):
        compare({"t": []}, some)


def test_compare_rejects_disjoint_tasks() -> None:
    with pytest.raises(ValueError, match="cc vs dd: no shared tasks"):
        compare({"x": [1]}, {"y": [0]}, names=("cc", "dd"))


@pytest.mark.parametrize("bad", [[2], [0.5], ["1"], [-1]])
def test_compare_rejects_non_binary_outcomes(bad: list[object]) -> None:
    with pytest.raises(ValueError, match="0 or 1"):
        compare({"t": bad}, {"t": [1]})  # type: ignore[dict-item]


def test_compare_accepts_bools() -> None:
    cmp = compare({"t": [True, False]}, {"t": [False, False]})
    assert cmp.delta == pytest.approx(0.5)


def test_compare_all_ties_gives_rule_of_three_interval() -> None:
    rng = np.random.default_rng(3)
    rows = [list(r) for r in (rng.random((30, 3)) < 0.6).astype(int)]
    a = outcomes(*rows)
    cmp = compare(a, dict(a))
    u = 1 - 0.05 ** (1 / 30)
    assert cmp.p_value == 1.0 and cmp.delta == 0.0 and cmp.wins == (0, 0)
    assert cmp.ci == pytest.approx((-u, u))
    assert 0.09 < u < 0.1  # ≈ 3/T, the rule of three
    assert "all tied" in cmp.note
    assert cmp.verdict.startswith("A vs B: no detectable difference (Δ=0 pts, 95% CI −10…+10, p=1;")
    assert cmp.mde > 0.05


def test_compare_zero_discordant_with_one_attempt() -> None:
    a = outcomes(*([[1]] * 8 + [[0]] * 12))
    cmp = compare(a, dict(a))
    assert cmp.test == "mcnemar" and cmp.p_value == 1.0
    assert cmp.ci[0] < 0 < cmp.ci[1] and cmp.note


def test_compare_all_equal_nonzero_differences() -> None:
    cmp = compare(outcomes(*([[1]] * 30)), outcomes(*([[0]] * 30)))
    u = 1 - 0.05 ** (1 / 30)
    assert cmp.p_value == pytest.approx(2 / 2**30)
    assert cmp.ci == pytest.approx((1 - 2 * u, 1.0))
    assert cmp.ci[0] > 0 and "same +100 pts" in cmp.note
    # rare case: the bound would cross 0 while the test rejects -> the point is kept, and said so
    cmp = compare(outcomes(*([[1, 0, 0]] * 8)), outcomes(*([[0, 0, 0]] * 8)))
    assert cmp.p_value < 0.05
    assert cmp.ci == pytest.approx((1 / 3, 1 / 3))
    assert "single point" in cmp.note


def test_compare_one_task() -> None:
    cmp = compare({"t": [1, 1, 0]}, {"t": [0, 0, 0]})
    assert cmp.n_tasks == 1 and cmp.p_value == 1.0
    assert -1.0 <= cmp.ci[0] < 0 < cmp.ci[1] <= 1.0
    assert cmp.mde == 1.0
    assert cmp.verdict.endswith("; with 1 task no gap can reach p<0.05)")


def test_compare_too_few_tasks_for_significance() -> None:
    a = outcomes([1], [1], [1], [1], [0])
    b = outcomes([0], [0], [0], [0], [0])
    cmp = compare(a, b)
    assert cmp.p_value == pytest.approx(2 / 16)
    assert cmp.ci == (-1.0, 1.0)
    assert "no gap can reach p<0.05" in cmp.verdict and cmp.note
    # six tasks all the same way is already significant (v0.2 wrongly required 8)
    six = compare(outcomes(*([[1]] * 6)), outcomes(*([[0]] * 6)))
    assert six.p_value == pytest.approx(2 / 64) and six.verdict.startswith("A beats B")


def test_compare_rejects_bad_alpha() -> None:
    with pytest.raises(ValueError, match="alpha"):
        compare({"t": [1]}, {"t": [0]}, alpha=1.5)


def test_verdict_after_holm_adjustment() -> None:
    strong = outcomes(*([[1, 1, 1]] * 16 + [[0, 0, 0]] * 14))
    weak = outcomes(*([[0, 1, 0]] * 8 + [[1, 1, 1]] * 8 + [[0, 0, 0]] * 14))
    cmp = compare(strong, weak)
    assert cmp.p_value < 0.05 and cmp.verdict.startswith("A beats B")
    still = verdict_for(cmp, p_adjusted=min(1.0, 2 * cmp.p_value))
    if 2 * cmp.p_value < 0.05:
        assert still.startswith("A beats B") and "Holm-adjusted p=" in still
    lost = reword_verdict(cmp, 0.2)
    assert lost.startswith("A vs B: no detectable difference after Holm adjustment (Δ=+")
    assert "unadjusted 95% CI" in lost and "Holm-adjusted p=0.2;" in lost
    adjusted = cmp.with_p_adjusted(0.2)
    assert adjusted.p_adjusted == 0.2 and adjusted.verdict == lost and not adjusted.significant
    assert adjusted.to_dict()["p_adjusted"] == 0.2
    assert cmp.significant and cmp.p_adjusted is None


def test_verdict_p_formatting_never_contradicts_the_decision() -> None:
    base = compare(outcomes(*([[1]] * 12)), outcomes(*([[0]] * 12)))
    near = dataclasses.replace(base, p_value=0.0496)
    assert "p=0.0496" in verdict_for(near)
    assert "p=0.05;" in verdict_for(dataclasses.replace(base, p_value=0.0504, ci=(-0.1, 0.9)))
    assert "p=0.0499" in verdict_for(dataclasses.replace(base, p_value=0.04994))
    assert "p<0.001" in verdict_for(base)


def test_verdict_shows_small_bounds_without_rounding_to_zero() -> None:
    cmp = Comparison(
        a="A",
        b="B",
        delta=0.05,
        ci=(0.002, 0.1),
        p_value=0.03,
        test="permutation",
        n_tasks=200,
        attempts=(3.0, 3.0),
        mde=0.04,
        verdict="",
    )
    assert "95% CI +0.2…+10" in verdict_for(cmp)


def test_compare_monte_carlo_path(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(9)
    a, b = draw(rng, rng.uniform(0.3, 0.9, 40), rng.uniform(0.2, 0.8, 40), 3)
    exact = compare(a, b)
    monkeypatch.setattr(stats, "EXACT_2D_MAX_CELLS", 0)
    mc = compare(a, b, seed=4)
    assert not mc.exact and exact.exact
    assert "paired permutation (Monte Carlo)" in mc.verdict or "no detectable" in mc.verdict
    assert mc.p_value == pytest.approx(exact.p_value, abs=0.01)
    assert mc.ci == pytest.approx(exact.ci, abs=0.02)
    assert compare(a, b, seed=4) == mc


# ------------------------------------------------------------------------------------------ agreement


def _agreement_datasets(rng: np.random.Generator) -> list[tuple[Outcomes, Outcomes]]:
    sets = []
    for _ in range(150):
        t = int(rng.integers(6, 40))
        k = int(rng.choice([1, 2, 3, 5]))
        base = rng.uniform(0.1, 0.9, t)
        gap = rng.uniform(-0.3, 0.3)
        sets.append(draw(rng, np.clip(base + gap / 2, 0, 1), np.clip(base - gap / 2, 0, 1), k))
    for _ in range(50):  # unequal attempts
        t = int(rng.integers(6, 30))
        a = {f"t{i}": list((rng.random(rng.integers(1, 5)) < 0.6).astype(int)) for i in range(t)}
        b = {f"t{i}": list((rng.random(rng.integers(1, 5)) < 0.45).astype(int)) for i in range(t)}
        sets.append((a, b))
    return sets


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2])
def test_p_below_alpha_iff_zero_outside_ci(alpha: float) -> None:
    rng = np.random.default_rng(int(alpha * 1000))
    outcomes_seen = set()
    for a, b in _agreement_datasets(rng):
        cmp = compare(a, b, alpha=alpha)
        outside = not (cmp.ci[0] <= 0.0 <= cmp.ci[1])
        assert (cmp.p_value < alpha) == outside, cmp
        assert cmp.ci[0] <= cmp.delta <= cmp.ci[1]
        assert -1.0 <= cmp.ci[0] <= cmp.ci[1] <= 1.0
        outcomes_seen.add(outside)
    assert outcomes_seen == {True, False}


def test_p_below_alpha_iff_zero_outside_ci_monte_carlo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stats, "EXACT_2D_MAX_CELLS", 0)
    rng = np.random.default_rng(17)
    seen = set()
    for a, b in _agreement_datasets(rng)[::4]:
        cmp = compare(a, b, n_resamples=2000)
        outside = not (cmp.ci[0] <= 0.0 <= cmp.ci[1])
        if cmp.test == "permutation":
            assert (cmp.p_value < 0.05) == outside, cmp
            seen.add(outside)
    assert seen == {True, False}


def test_ci_is_the_inverted_test() -> None:
    """The endpoints are the extreme shifts the test does not reject: just beyond them, it rejects."""
    rng = np.random.default_rng(5)
    for _ in range(30):
        t, k = int(rng.integers(8, 30)), int(rng.choice([2, 3]))
        a, b = draw(rng, rng.uniform(0.1, 0.9, t), rng.uniform(0.1, 0.9, t), k)
        d = np.array([np.mean(a[x]) - np.mean(b[x]) for x in a])
        null = stats._null_for(d, stats._lattice(d), 10_000, 0)
        lo, hi = null.ci(0.05)
        if len(set(d.tolist())) == 1:
            continue
        assert null.p_value(lo) >= 0.05 and null.p_value(hi) >= 0.05
        assert null.p_value(lo - 1e-7) < 0.05 and null.p_value(hi + 1e-7) < 0.05
        for shift in np.linspace(lo, hi, 7):
            assert null.p_value(float(shift)) >= 0.05
        # the p-value of each shifted test is the brute-force enumeration (small T)
        if t <= 12:
            for shift in (lo, lo - 1e-7, 0.5 * (lo + hi) + 1e-7 * math.pi, hi, hi + 1e-7):
                assert null.p_value(shift) == pytest.approx(brute_sign_flip(d - shift), abs=1e-9)


# ------------------------------------------------------------------------------------------ simulations


def test_false_alarms_identical_agents() -> None:
    """Acceptance: identical agents, 30 tasks of varying difficulty x 3 attempts, 500 repetitions."""
    rng = np.random.default_rng(3)
    reps = 500
    alarms = 0
    for _ in range(reps):
        p = rng.uniform(0.2, 0.95, 30)
        a, b = draw(rng, p, p, 3)
        alarms += compare(a, b).significant
    bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)
    print(f"\nfalse alarm rate (identical agents, 30 x 3, {reps} reps): {alarms / reps:.3f} (bound {bound:.4f})")
    assert alarms / reps <= bound


def test_power_for_a_large_gap() -> None:
    """Acceptance: 0.9 vs 0.4 on 30 tasks x 3 attempts is detected (A named the winner) in >= 95 %."""
    rng = np.random.default_rng(4)
    reps = 200
    found = 0
    for _ in range(reps):
        a, b = draw(rng, np.full(30, 0.9), np.full(30, 0.4), 3)
        cmp = compare(a, b)
        found += cmp.significant and cmp.verdict.startswith("A beats B")
    print(f"\npower 0.9 vs 0.4 (30 x 3, {reps} reps): {found / reps:.3f}")
    assert found / reps >= 0.95


@pytest.mark.slow
def test_mde_agrees_with_simulated_power() -> None:
    """Acceptance: at a 60 % base rate, 30 tasks x 3 attempts, the analytic MDE and the gap a seeded
    simulation detects with 80 % power agree within 5 points."""
    analytic = mde(30, base_rate=0.6, attempts=3)
    rng = np.random.default_rng(7)
    reps = 400
    gaps = [0.14, 0.18, 0.22, 0.26, 0.30]
    powers = []
    reported = []
    for g in gaps:
        hits = 0
        for _ in range(reps):
            a, b = draw(rng, np.full(30, 0.6 + g / 2), np.full(30, 0.6 - g / 2), 3)
            cmp = compare(a, b)
            hits += cmp.significant
            reported.append(cmp.mde)
        powers.append(hits / reps)
    assert all(x <= y + 0.03 for x, y in itertools.pairwise(powers))  # monotone up to MC noise
    simulated = float(np.interp(0.8, powers, gaps))
    curve = ", ".join(f"{100 * g:.0f} pts: {p:.2f}" for g, p in zip(gaps, powers, strict=True))
    print(
        f"\nMDE at 60% base rate, 30 x 3: analytic {100 * analytic:.1f} pts, simulated 80%-power gap "
        f"{100 * simulated:.1f} pts, mean mde printed by compare {100 * np.mean(reported):.1f} pts\n"
        f"power curve: {curve}"
    )
    assert abs(analytic - simulated) <= 0.05
    assert abs(float(np.mean(reported)) - simulated) <= 0.05


@pytest.mark.slow
def test_ci_coverage_30_tasks_3_attempts() -> None:
    """Acceptance: coverage of the 95 % interval is 93-97 % for 30 tasks x 3 attempts (tasks of varying
    difficulty, true gap 10 points on every task; new tasks each repetition)."""
    rng = np.random.default_rng(12)
    reps = 1000
    covered = 0
    for _ in range(reps):
        pb = rng.uniform(0.2, 0.8, 30)
        a, b = draw(rng, pb + 0.1, pb, 3)
        lo, hi = compare(a, b).ci
        covered += lo <= 0.1 <= hi
    print(f"\nCI coverage (30 x 3, true gap 10 pts, {reps} reps, nominal 95%): {covered / reps:.3f}")
    assert 0.93 <= covered / reps <= 0.97


def test_ci_coverage_with_task_specific_effects() -> None:
    """Coverage when the gap differs between tasks (population gap 10 points), 30 x 3."""
    rng = np.random.default_rng(13)
    reps = 600
    covered = 0
    for _ in range(reps):
        base = rng.uniform(0.2, 0.8, 30)
        eff = rng.uniform(-0.1, 0.3, 30)
        a, b = draw(rng, np.clip(base + eff / 2, 0, 1), np.clip(base - eff / 2, 0, 1), 3)
        lo, hi = compare(a, b).ci
        covered += lo <= 0.1 <= hi
    print(f"\nCI coverage (30 x 3, task-specific gaps, mean 10 pts, {reps} reps): {covered / reps:.3f}")
    assert 0.92 <= covered / reps <= 0.98


@pytest.mark.slow
def test_the_stdlib_distribution_functions_give_scipy_stats_numbers() -> None:
    """The report takes binomial, normal and t values from the standard library (:mod:`.quantiles`,
    no scipy import, issue 35): they agree with scipy.stats to 1e-11 relative (the t quantile of
    thousands of degrees of freedom far in the tail is the least exact, about 1e-12), so reports do not
    move (their floats are rounded to 6 decimals)."""
    from scipy import stats as sps

    def close(x: float, y: float) -> bool:
        return math.isclose(x, y, rel_tol=1e-11, abs_tol=1e-300)

    for n in range(1, 120):
        assert np.allclose(stats._binom_half_pmf(n), sps.binom.pmf(np.arange(n + 1), n, 0.5), rtol=1e-12, atol=0)
    for n in [*range(1, 31), 37, 50, 69]:  # every small n, where exact and asymptotic differ most
        for k in range(n + 1):
            assert close(stats._binom_two_sided_half(k, n), float(min(1.0, sps.binomtest(k, n, 0.5).pvalue))), (k, n)
            if n % 7 == 1:
                assert close(stats.mcnemar_one_sided(k, n - k),
                             float(sps.binomtest(k, n, 0.5, alternative="less").pvalue)), (k, n)
            ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
            lo, hi = stats._wilson_counts(k, n, stats._norm_ppf(0.975))
            assert close(lo, ci.low) and close(hi, ci.high), (k, n)
    for q in (0.025, 0.2, 0.6, 0.8, 0.9, 0.95, 0.975, 0.995, 0.9995):
        assert close(stats._norm_ppf(q), float(sps.norm.ppf(q)))
        for df in (1, 2, 3, 4, 7, 29, 99, 499, 999, 2500):
            assert close(stats._t_ppf(q, df), float(sps.t.ppf(q, df))), (q, df)


def test_a_report_imports_neither_scipy_stats_nor_scipy_signal(tmp_path: Path) -> None:
    """``homefield report`` on 20 tasks x 3 agents x 3 attempts (with a few unscored attempts, so the
    attempt counts differ): scipy.stats and scipy.signal stay unimported."""
    bench = Path(__file__).resolve().parents[2] / "benchmarks" / "report.py"
    code = (
        "import runpy, sys; from pathlib import Path\n"
        f"build = runpy.run_path({str(bench)!r})['build']\n"
        f"run_id = build(Path({str(tmp_path / 'repo')!r}), tasks=20, attempts=3)\n"
        "from pytest_homefield.records import load_tasks\n"
        "from pytest_homefield.report import build_report\n"
        f"home = Path({str(tmp_path / 'repo' / '.homefield')!r})\n"
        "report = build_report([home / 'runs' / run_id], load_tasks(home / 'tasks.jsonl'))\n"
        "assert report['comparisons'] and all(c['exact'] for c in report['comparisons'])\n"
        "print(sorted(m for m in sys.modules if m in ('scipy.stats', 'scipy.signal')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_the_numpy_convolutions_give_scipy_signal_numbers() -> None:
    """The exact nulls are convolved with numpy alone (importing scipy.signal cost 1.4 s of CPU, issue
    35): direct 2-D and FFT results agree with ``scipy.signal.convolve`` to round-off."""
    from scipy import signal

    from pytest_homefield.report import distributions as dist

    rng = np.random.default_rng(35)
    for shape_x, shape_y in (((3, 7), (5, 4)), ((1, 9), (6, 2)), ((8, 8), (1, 1))):
        x, y = rng.random(shape_x), rng.random(shape_y)
        assert np.allclose(dist._convolve_2d_direct(x, y), signal.convolve(x, y, method="direct"), rtol=1e-13, atol=0)
        assert np.allclose(dist._fft_convolve(x, y), signal.convolve(x, y, method="fft"), rtol=1e-9, atol=1e-13)
    x, y = rng.random(3001), rng.random(2500)
    assert np.allclose(dist._fft_convolve(x, y), signal.convolve(x, y, method="fft"), rtol=1e-9, atol=1e-12)
    from scipy.fft import next_fast_len

    assert [dist._fast_len(n) for n in range(1, 3000)] == [next_fast_len(n, real=True) for n in range(1, 3000)]
    big = [np.asarray(dist._binom_half_pmf(n)) for n in (300, 410, 520)]
    assert np.allclose(dist._convolve_all(big, direct_max=1), dist._convolve_all(big, direct_max=10**9), atol=1e-15)


def test_too_few_tasks_print_no_interval() -> None:
    """Issue 35: over fewer than 6 tasks (alpha 0.05) no difference can reach p<0.05, and the report
    printed "95% CI −100…+100" (or an exact bound) as if it were a finding. The verdict, the
    head-to-head table and the gate's line now say "too few tasks (N) for an interval"; 6 tasks get one."""
    from types import SimpleNamespace

    from pytest_homefield.report.gate import GateLine
    from pytest_homefield.report.model import ComparisonRow
    from pytest_homefield.report.tables import Text, head_to_head
    from pytest_homefield.report.verdicts import too_few_for_interval

    assert too_few_for_interval(5, 0.05) == "too few tasks (5) for an interval"
    assert too_few_for_interval(6, 0.05) is None
    few = compare(outcomes(*([[1]] * 3)), outcomes(*([[0]] * 3)), names=("a", "b"))  # every task +1
    assert "too few tasks (3) for an interval" in few.verdict and "CI" not in few.verdict, few.verdict
    assert few.note.startswith("too few tasks (3) for an interval"), few.note
    enough = compare(outcomes(*([[1]] * 6)), outcomes(*([[0]] * 6)), names=("a", "b"))
    assert "95% CI" in enough.verdict and "too few" not in enough.verdict
    rows = [ComparisonRow(a="a", b="b", test="mcnemar", n_tasks=n, delta=1.0, ci=[-1.0, 1.0], p_value=0.25,
                          p_adjusted=None, mde=1.0, verdict="", alpha=0.05) for n in (3, 6)]
    cells = [row.cells[3] for row in head_to_head(SimpleNamespace(comparisons=rows)).rows]  # type: ignore[arg-type]
    assert cells == [Text("too few tasks (3) for an interval", prose=True), Text("−100.0 pp … +100.0 pp")]
    gate = GateLine(agent="a", candidate=0.0, baseline=1.0, delta=-1.0, p_value=0.125, test="mcnemar", n_tasks=3,
                    alpha=0.05, baseline_run="r0", worse=False)
    assert "too few tasks (3) for an interval" in gate.text and "cannot fail" in gate.text
    assert "too few" not in dataclasses.replace(gate, n_tasks=5).text
