"""Statistics for comparing coding agents on the same tasks (issue 7).

Tasks are the unit of analysis. An agent's outcomes are a mapping ``task id -> [0/1, ...]`` (one entry per
scored attempt); its score on a task is the mean of its attempts there, and every task weighs the same.
Two agents are compared on the tasks both attempted, through the per-task differences
``d_t = score_A(t) - score_B(t)`` (fractions in [-1, 1]).

What is here, and where each formula comes from:

* :func:`mcnemar_exact` -- exact McNemar test (binomial test on the discordant tasks), one attempt each.
* :func:`paired_permutation` -- the paired sign-flip (randomization) test on ``d_t`` (Fisher 1935,
  Pitman 1937): exact by convolution whenever the ``d_t`` share a small common denominator (always so
  with counts of attempts), seeded Monte Carlo otherwise.
* :func:`compare` -- the two-agent verdict: Δ, a confidence interval obtained by *inverting the same
  sign-flip test* (so "p < alpha" and "0 outside the CI" always agree), p, the minimum detectable
  effect and a sentence (worded in :mod:`.verdicts`, which re-words it after a Holm adjustment).
* :func:`pass_at_k` / :func:`pass_hat_k` -- Chen et al. (2021) and τ-bench (Yao et al. 2024).
* :func:`holm` -- Holm (1979) step-down adjusted p-values.
* :func:`pass_rate_ci` / :func:`pass_rate` -- one agent's pass@1 with a Wilson interval (task-clustered
  with an effective sample size when tasks have several attempts).
* :func:`mde` -- normal-approximation minimum detectable effect (80 % power by default); the report's
  MDE is the simulated one of :mod:`.power` (issue 32).

The tests and their null distributions are in :mod:`.distributions`, one agent's rates in :mod:`.rates`;
this module is their one entry point (it re-exports them). The background, with worked numbers, is
``shared/reference/prior-art-and-statistics.md`` §4. Plain numpy (no scipy),
nothing about pytest.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_homefield.report.distributions import (
    EXACT_1D_MAX_POINTS,
    EXACT_2D_MAX_CELLS,
    MAX_DENOMINATOR,
    Deferred,
    Outcomes,
    _check_alpha,
    _norm_ppf,
    _null_for,
    _task_counts,
    mcnemar_exact,
    mcnemar_one_sided,
    min_tasks_for_significance,
    paired_permutation,
)
from pytest_homefield.report.power import KeptGaps, detectable_gap
from pytest_homefield.report.rates import pass_at_k, pass_hat_k, pass_rate, pass_rate_ci
from pytest_homefield.report.verdicts import (
    note_exact_bound,
    note_point_interval,
    note_whole_range,
    reword_verdict,
    verdict_for,
)

if TYPE_CHECKING:
    import numpy as np
else:
    np = Deferred("numpy", globals(), "np")  # heavy third-party import, deferred

__all__ = [
    "EXACT_1D_MAX_POINTS",
    "EXACT_2D_MAX_CELLS",
    "MAX_DENOMINATOR",
    "Comparison",
    "Outcomes",
    "compare",
    "holm",
    "mcnemar_exact",
    "mcnemar_one_sided",
    "mde",
    "paired_permutation",
    "pass_at_k",
    "pass_hat_k",
    "pass_rate",
    "pass_rate_ci",
    "reword_verdict",
    "verdict_for",
]


# --------------------------------------------------------------------------------------- compare


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare` for agents ``a`` and ``b`` on their shared tasks.

    Fields (fractions, not percentage points, unless said otherwise):

    * ``a``, ``b``: the names; ``delta``: mean over shared tasks of (A's rate - B's rate) -- always a - b;
    * ``ci``: ``(low, high)`` confidence interval for delta at level ``1 - alpha``, from inverting the
      reported test (see :func:`compare`), inside [-1, 1];
    * ``p_value``: two-sided; ``test``: ``"mcnemar"`` or ``"permutation"``; ``exact``: False when the
      permutation null was sampled (Monte Carlo);
    * ``n_tasks``: shared tasks; ``attempts``: (mean attempts per shared task of A, of B);
    * ``wins``: (tasks where A scored higher, tasks where B scored higher) -- McNemar's (b, c) with one
      attempt; the remaining ``n_tasks - sum(wins)`` tasks are ties;
    * ``sd_diff``: SD (ddof=1) of the per-task differences (0.0 with one task);
    * ``mde``: the gap detectable with 80 % simulated power (:func:`.power.detectable_gap`), at most 1.0;
    * ``alpha``; ``verdict``: the sentence (:func:`.verdicts.verdict_for`); ``note``: what a reader must know about
      a degenerate interval ("" normally); ``p_adjusted``: set by :meth:`with_p_adjusted`, with ``family``
      the number of p-values adjusted together; ``sanity``: set by :meth:`as_sanity_check` (a pair with a
      reference agent, decided unadjusted);
    * ``p_worse``: the one-sided p of "a is worse than b" (Δ < 0) from the same test (exact McNemar:
      ``P(Bin(b + c, 1/2) <= b)``; sign-flip: ``P(sum e_t d_t <= sum d_t)``), what the regression gate uses.
    """

    a: str
    b: str
    delta: float
    ci: tuple[float, float]
    p_value: float
    test: str
    n_tasks: int
    attempts: tuple[float, float]
    mde: float
    verdict: str
    alpha: float = 0.05
    wins: tuple[int, int] = (0, 0)
    sd_diff: float = 0.0
    exact: bool = True
    note: str = ""
    p_adjusted: float | None = None
    family: int | None = None
    sanity: bool = False
    p_worse: float = 1.0

    @property
    def significant(self) -> bool:
        """Whether the decision p (adjusted if set) is below alpha."""
        p = self.p_value if self.p_adjusted is None else self.p_adjusted
        return p < self.alpha

    def with_p_adjusted(self, p_adjusted: float, *, family: int | None = None) -> Comparison:
        """A copy with ``p_adjusted`` set (adjusted over ``family`` p-values, when given) and the verdict
        re-worded from it (:func:`.verdicts.verdict_for`)."""
        return dataclasses.replace(self, p_adjusted=float(p_adjusted), family=family, sanity=False,
                                   verdict=verdict_for(self, p_adjusted=p_adjusted, family=family))

    def as_sanity_check(self) -> Comparison:
        """A copy marked as a sanity check (a pair with a reference agent): no adjusted p, decided by its
        own p, and the verdict says so."""
        return dataclasses.replace(self, p_adjusted=None, family=None, sanity=True,
                                   verdict=verdict_for(self, sanity=True))

    def to_dict(self) -> dict[str, Any]:
        """JSON primitives for the report's ``comparisons[]`` (docs/contracts.md §10): ``a, b, test, n_tasks,
        delta, ci [lo, hi], p_value, p_adjusted, mde, verdict`` plus ``alpha, attempts [A, B], b_c
        [A wins, B wins], ties, sd_diff, exact, significant, note``."""
        return {
            "a": self.a,
            "b": self.b,
            "test": self.test,
            "n_tasks": self.n_tasks,
            "delta": self.delta,
            "ci": [self.ci[0], self.ci[1]],
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "mde": self.mde,
            "verdict": self.verdict,
            "alpha": self.alpha,
            "attempts": [self.attempts[0], self.attempts[1]],
            "b_c": [self.wins[0], self.wins[1]],
            "ties": self.n_tasks - self.wins[0] - self.wins[1],
            "sd_diff": self.sd_diff,
            "exact": self.exact,
            "significant": self.significant,
            "note": self.note,
            "family": self.family,
            "sanity": self.sanity,
        }


def compare(
    a: Outcomes,
    b: Outcomes,
    *,
    alpha: float = 0.05,
    seed: int = 0,
    names: tuple[str, str] = ("A", "B"),
    n_resamples: int = 10_000,
    kept: KeptGaps | None = None,
) -> Comparison:
    """Compare two agents on the tasks both attempted; tasks are the unit.

    ``a``, ``b``: task id -> list of 0/1 outcomes (one per scored attempt). Only tasks with at least one
    attempt on both sides count; each side's per-task score is the mean of its attempts, and
    ``d_t = score_A - score_B``. ``delta = mean_t d_t`` (a - b, fraction).

    Test: exact McNemar (:func:`mcnemar_exact`) when every shared task has exactly one attempt on both
    sides, else the paired sign-flip permutation test (:func:`paired_permutation`). The two coincide with
    one attempt.

    Confidence interval -- test inversion, so it always agrees with the test: ``ci`` is the set of shifts
    ``delta0`` for which the sign-flip test of ``d_t - delta0`` is *not* rejected (two-sided p >= alpha).
    By Hartigan's (1969) subset-mean identity the endpoints are quantiles of the means of d over the
    subsets of tasks, computed exactly from a (subset size, subset sum) convolution table when the
    differences lie on a lattice ``1/D`` and the table has at most :data:`EXACT_2D_MAX_CELLS` cells
    (roughly 1,000 tasks with 3 attempts or 2,000 with one; milliseconds for 30-300 tasks), else from
    ``n_resamples`` seeded random subsets (the same draws then give the permutation p, ``exact=False``).
    Consequently ``p < alpha`` if and only if 0 is outside ``ci``
    (``tests/test_stats.py::test_p_below_alpha_iff_zero_outside_ci``); with one attempt McNemar's p and
    the inverted sign-flip test are the same test (equal up to float rounding), except that beyond the
    exact table (over ~2,000 single-attempt tasks) McNemar's exact p sits beside a Monte Carlo interval
    and the two agree only up to Monte Carlo error. The decision rule is "significant iff p < alpha".
    Sources: Fisher (1935); Hartigan (1969) JASA 64:1303-1317; Lehmann & Romano, *Testing Statistical
    Hypotheses*, 3rd ed., §3.5 (duality of tests and confidence sets).

    Degenerate data (documented behaviour, with ``note`` set):

    * Too few tasks to reject any shift (fewer than 6 at alpha = 0.05): the inversion is unbounded and the
      CI is the whole range [-1, 1]; the verdict says no gap can reach significance.
    * All per-task differences equal (``c``; e.g. all tasks tied, 0 discordant): the inversion would
      collapse to the point ``c``. Instead the CI uses the exact bound on the share ψ of tasks whose
      difference is not ``c``: no such task among T gives ψ <= u = 1 - alpha**(1/T) (Clopper-Pearson with
      0 events, the "rule of three" ≈ 3/T), hence ``[c - (1 + c) u, c + (1 - c) u]`` clipped to [-1, 1]
      (±u around 0 for all ties). In the rare case that this range would contain 0 while the test rejects
      (|c| < 1 with few tasks), the point ``[c, c]`` is kept so that the CI still agrees with the test.

    ``mde``: the gap this test detects with 80 % simulated power (:func:`.power.detectable_gap`, issue
    32) for ``n_tasks``, the mean attempts per task (rounded) and the pooled base rate ``(successes + 1)
    / (attempts + 2)`` of both agents, seeded and cached; 1.0 when there are too few tasks to ever reach
    significance. (The normal approximation :func:`mde` printed about 10 % too small a gap at 30 tasks.)
    ``kept``: what earlier reports computed (:class:`.power.KeptGaps`, a run folder's ``mde.json``), read
    and added to: simulated gaps, and whole comparisons under their inputs (the counts per shared task in
    task order, the names, ``alpha``, ``seed``, ``n_resamples``) and the statistics code: a kept one is
    returned without numpy.

    Raises ``ValueError`` for empty outcomes, outcomes other than 0/1, no shared task with attempts on both
    sides (the message names both agents), a bad alpha, or ``n_resamples < 1``.
    """
    _check_alpha(alpha)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples!r}")
    name_a, name_b = str(names[0]), str(names[1])
    ca = _task_counts(a, name_a)
    cb = _task_counts(b, name_b)
    shared = sorted(set(ca) & set(cb))
    if not shared:
        raise ValueError(f"{name_a} vs {name_b}: no shared tasks (no task has attempts from both agents)")
    inputs: list[Any] = ["compare", name_a, name_b, alpha, seed, n_resamples,
                         [[*ca[t], *cb[t]] for t in shared]]  # all it depends on (task order, not ids)
    if kept is not None and (earlier := _comparison_from(kept.recall(inputs), name_a, name_b)) is not None:
        return earlier
    sa = np.array([ca[t][0] for t in shared], dtype=np.int64)
    ka = np.array([ca[t][1] for t in shared], dtype=np.int64)
    sb = np.array([cb[t][0] for t in shared], dtype=np.int64)
    kb = np.array([cb[t][1] for t in shared], dtype=np.int64)
    t = len(shared)
    diffs = sa / ka - sb / kb
    delta = float(diffs.mean())
    one_attempt = bool(np.all(ka == 1) and np.all(kb == 1))

    den = 1
    for k in set(ka.tolist()) | set(kb.tolist()):
        den = math.lcm(den, k)
    lattice = None
    if den <= MAX_DENOMINATOR:
        lattice = (sa * (den // ka) - sb * (den // kb), den)
    if lattice is not None:  # exact mean: no -1e-17 for a true 0
        delta = int(lattice[0].sum()) / (den * t)
    null = _null_for(diffs, lattice, n_resamples, seed)

    m_int = lattice[0] if lattice is not None else None
    wins_a = int((m_int > 0).sum()) if m_int is not None else int((diffs > 0).sum())
    wins_b = int((m_int < 0).sum()) if m_int is not None else int((diffs < 0).sum())
    if one_attempt:
        test, p = "mcnemar", mcnemar_exact(wins_a, wins_b)
        p_worse = mcnemar_one_sided(wins_a, wins_b)
    else:
        test, p = "permutation", null.p_value(0.0)
        p_worse = min(1.0, null.p_minus(0.0))

    lo, hi = null.ci(alpha)
    note = ""
    n_min = min_tasks_for_significance(alpha)
    spread_zero = bool(np.all(diffs == diffs[0])) if m_int is None else bool(np.all(m_int == m_int[0]))
    if t < n_min:  # no interval is shown (issue 35); the numbers below stay in the JSON
        note = note_whole_range(t, alpha)
    if spread_zero:
        c = float(diffs[0])
        u = 1.0 - alpha ** (1.0 / t)
        w_lo, w_hi = max(-1.0, c - (1.0 + c) * u), min(1.0, c + (1.0 - c) * u)
        if p < alpha and w_lo <= 0.0 <= w_hi:
            lo, hi = c, c
            note = note_point_interval(t, c)
        else:
            lo, hi = w_lo, w_hi
            note = note or note_exact_bound(t, c, u)
    lo, hi = max(-1.0, lo), min(1.0, hi)

    sd = float(diffs.std(ddof=1)) if t > 1 else 0.0
    k_mean = float((ka.sum() + kb.sum()) / (2 * t))
    pooled = float((sa.sum() + sb.sum() + 1) / (ka.sum() + kb.sum() + 2))
    gap = 1.0 if t < n_min else detectable_gap(t, attempts=max(1, round(k_mean)), base_rate=pooled, alpha=alpha,
                                               kept=kept)

    cmp = Comparison(
        a=name_a,
        b=name_b,
        delta=delta,
        ci=(float(lo), float(hi)),
        p_value=float(p),
        test=test,
        n_tasks=t,
        attempts=(float(ka.mean()), float(kb.mean())),
        mde=float(gap),
        verdict="",
        alpha=float(alpha),
        wins=(wins_a, wins_b),
        sd_diff=sd,
        exact=null.exact,
        note=note,
        p_worse=float(p_worse),
    )
    cmp = dataclasses.replace(cmp, verdict=verdict_for(cmp))
    if kept is not None:
        kept.keep(inputs, {f.name: getattr(cmp, f.name) for f in dataclasses.fields(cmp)})
    return cmp


def _comparison_from(kept: object, name_a: str, name_b: str) -> Comparison | None:
    """The :class:`Comparison` a :class:`~.power.KeptGaps` entry holds (its fields, the tuples as
    lists), or ``None`` for anything else."""
    if not isinstance(kept, dict) or kept.get("a") != name_a or kept.get("b") != name_b:
        return None
    try:
        cmp = Comparison(**{**kept, "ci": tuple(kept["ci"]), "attempts": tuple(kept["attempts"]),
                            "wins": tuple(kept["wins"])})
    except (TypeError, KeyError, ValueError):
        return None
    if len(cmp.ci) != 2 or len(cmp.attempts) != 2 or len(cmp.wins) != 2:
        return None
    return cmp


# --------------------------------------------------------------------------------------- Holm


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order.

    With ``m`` p-values sorted ascending, the adjusted value at rank ``r`` (0-based) is
    ``max_{j <= r} min(1, (m - j) * p_(j))``. Rejecting where the adjusted p is below alpha controls the
    family-wise error rate at alpha under any dependence; never less powerful than Bonferroni.

    Source: Holm (1979) Scand. J. Statist. 6:65-70. Known value: ``holm([0.01, 0.04, 0.03]) ==
    [0.03, 0.06, 0.06]``. ``[]`` gives ``[]``.

    Raises ``ValueError`` when a p-value is not a number in [0, 1].
    """
    p = [float(x) for x in pvalues]
    for x in p:
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"p-values must be in [0, 1], got {x!r}")
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


# --------------------------------------------------------------------------------------- power


def mde(
    n_tasks: int,
    *,
    sd_diff: float | None = None,
    base_rate: float | None = None,
    attempts: float = 1,
    alpha: float = 0.05,
    power: float = 0.8,
) -> float:
    """Minimum detectable effect: the gap (fraction, e.g. 0.18 = 18 points) a two-sided paired test at
    ``alpha`` detects with probability ``power`` over ``n_tasks`` tasks -- normal approximation.

    ``mde = (z_{1 - alpha/2} + z_{power}) * sd_diff / sqrt(n_tasks)`` (normal quantiles; 2.80 *
    sd / sqrt(T) at the defaults). ``sd_diff`` is the SD of the per-task differences. Without it, give
    ``base_rate`` p and the ``attempts`` k per task: ``sd_diff = sqrt(2 p (1 - p) / k)``, the within-task
    binomial noise of two agents at rate p on homogeneous tasks (an upper bound when tasks vary in
    difficulty and both agents share it). Approximate: it ignores the t-correction and discreteness,
    which matter below ~20 tasks; :func:`compare` floors it at the smallest gap that can reach
    significance at all.

    Source: the standard sample-size formula for a paired mean difference (e.g. Chow, Shao & Wang,
    *Sample Size Calculations in Clinical Research*, §3.2); Miller (2024) "Adding Error Bars to Evals",
    arXiv:2411.00640, §power analysis; prior-art §4.5 table.

    Raises ``ValueError`` for ``n_tasks < 1``, a bad ``alpha``/``power``/``attempts``, ``base_rate``
    outside [0, 1], a negative ``sd_diff``, or when neither or both of ``sd_diff``/``base_rate`` are given.
    """
    if isinstance(n_tasks, bool) or int(n_tasks) != n_tasks or n_tasks < 1:
        raise ValueError(f"n_tasks must be a positive integer, got {n_tasks!r}")
    _check_alpha(alpha)
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    if (sd_diff is None) == (base_rate is None):
        raise ValueError("give exactly one of sd_diff (observed SD of per-task differences) or base_rate")
    if sd_diff is None:
        assert base_rate is not None
        if not 0.0 <= base_rate <= 1.0:
            raise ValueError(f"base_rate must be in [0, 1], got {base_rate!r}")
        if not attempts > 0:
            raise ValueError(f"attempts must be > 0, got {attempts!r}")
        sd_diff = math.sqrt(2.0 * base_rate * (1.0 - base_rate) / attempts)
    if not sd_diff >= 0.0 or not math.isfinite(sd_diff):
        raise ValueError(f"sd_diff must be a finite number >= 0, got {sd_diff!r}")
    return _z_sum(alpha, power) * sd_diff / math.sqrt(n_tasks)


@functools.lru_cache(maxsize=64)
def _z_sum(alpha: float, power: float) -> float:
    """``z_{1 - alpha/2} + z_{power}`` (normal quantiles, :func:`_norm_ppf`), cached: mde runs for every
    comparison."""
    return _norm_ppf(1.0 - alpha / 2.0) + _norm_ppf(power)
