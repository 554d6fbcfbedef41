"""One agent's rates over tasks (issue 7): pass@k and pass^k of a task, pass@1 over tasks and its
confidence interval. Tasks are the unit: every task weighs the same.

An agent's outcomes are a mapping ``task id -> [0/1, ...]`` (one entry per scored attempt).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytest_homefield.report.distributions import (
    Outcomes,
    _check_alpha,
    _check_count,
    _norm_ppf,
    _t_ppf,
    _task_counts,
    _wilson,
    _wilson_counts,
)

if TYPE_CHECKING:
    from pytest_homefield.report.power import KeptGaps

__all__ = ["pass_at_k", "pass_hat_k", "pass_rate", "pass_rate_ci"]


def _check_nck(n: int, c: int, k: int) -> tuple[int, int, int]:
    n = _check_count("n", n)
    c = _check_count("c", c)
    k = _check_count("k", k)
    if c > n:
        raise ValueError(f"c (successes) must be <= n (attempts): c={c}, n={n}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if k > n:
        raise ValueError(f"k={k} exceeds the n={n} attempts of the task: pass@k needs n >= k samples")
    return n, c, k


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task: probability that at least one of ``k`` attempts drawn without
    replacement from the ``n`` recorded ones (``c`` successful) succeeds.

    ``pass@k = 1 - C(n - c, k) / C(n, k)`` (exact integer binomials, one correctly rounded division); 1.0
    when ``n - c < k``. Average it over tasks for a benchmark score; do not plug a pooled rate into
    ``1 - (1 - p)**k`` (biased).

    Source: Chen et al. (2021) "Evaluating Large Language Models Trained on Code", arXiv:2107.03374,
    eq. 1. Known value: ``pass_at_k(10, 3, 5) == 1 - 21/252``.

    Raises ``ValueError`` unless ``0 <= c <= n`` and ``1 <= k <= n`` (integers).
    """
    n, c, k = _check_nck(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k of one task: probability that *all* ``k`` attempts drawn without replacement from
    the ``n`` recorded ones (``c`` successful) succeed -- reliability rather than coverage.

    ``pass^k = C(c, k) / C(n, k)``; 0.0 when ``c < k``.

    Source: Yao et al. (2024) "τ-bench", arXiv:2406.12045, §4 (pass^k). Known value:
    ``pass_hat_k(5, 4, 3) == 0.4``.

    Raises ``ValueError`` unless ``0 <= c <= n`` and ``1 <= k <= n`` (integers).
    """
    n, c, k = _check_nck(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def pass_rate(outcomes: Outcomes) -> float:
    """pass@1 of one agent: the mean over tasks of (successes / attempts on that task), tasks weighted
    equally. ``outcomes``: task id -> list of 0/1 (tasks with no attempt are ignored). Fraction in [0, 1].

    Raises ``ValueError`` when there is no attempt or an outcome is not 0/1.
    """
    counts = _task_counts(outcomes, "pass_rate")
    return _mean([s / k for s, k in counts.values()])


#: numpy's block size of pairwise summation (``PW_BLOCKSIZE`` in ``numpy/_core/src/umath/loops_utils.h``).
_PW_BLOCKSIZE = 128


def _pairwise_sum(xs: list[float], lo: int, n: int) -> float:
    """``numpy.add.reduce`` of ``xs[lo:lo + n]`` (float64, contiguous) bit for bit: numpy's pairwise
    summation (``pairwise_sum`` in ``loops_utils.h.src``): a plain loop under 8 items, eight running
    sums up to :data:`_PW_BLOCKSIZE`, halves (rounded down to a multiple of 8) above. It keeps numpy out
    of a report that only needs pass@1 and its interval (about 0.15 s of CPU per ``homefield run``)."""
    if n < 8:
        total = 0.0
        for i in range(lo, lo + n):
            total += xs[i]
        return total
    if n <= _PW_BLOCKSIZE:
        r = xs[lo:lo + 8]
        end = lo + n - n % 8
        for i in range(lo + 8, end, 8):
            for j in range(8):
                r[j] += xs[i + j]
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for i in range(end, lo + n):
            total += xs[i]
        return total
    half = n // 2
    half -= half % 8
    return _pairwise_sum(xs, lo, half) + _pairwise_sum(xs, lo + half, n - half)


def _mean(xs: list[float]) -> float:
    """``float(numpy.mean(xs))``, bit for bit (:func:`_pairwise_sum`). ``xs`` is not empty."""
    return _pairwise_sum(xs, 0, len(xs)) / len(xs)


def _var1(xs: list[float]) -> float:
    """``float(numpy.var(xs, ddof=1))``, bit for bit: the mean, then the pairwise sum of squared
    deviations over ``len(xs) - 1``. ``xs`` has at least 2 items."""
    m = _mean(xs)
    return _pairwise_sum([(x - m) * (x - m) for x in xs], 0, len(xs)) / (len(xs) - 1)


def pass_rate_ci(outcomes: Outcomes, *, alpha: float = 0.05, kept: KeptGaps | None = None) -> tuple[float, float]:
    """Confidence interval ``(low, high)`` (fractions in [0, 1]) for one agent's pass@1 (:func:`pass_rate`).

    * One attempt on every task: the Wilson score interval on (tasks solved, tasks),
      as ``scipy.stats.binomtest(s, T).proportion_ci(1 - alpha, method="wilson")`` computes it
      (:func:`_wilson_counts`; Wilson 1927, JASA 22:209-212). Never degenerate: 20/20 gives (0.839, 1.0).
    * Otherwise task-clustered: Wilson with the effective sample size ``n_eff = p(1 - p) / SE^2``, where
      ``p`` is the mean of per-task rates and ``SE = sd(per-task rates, ddof=1) / sqrt(T)`` the
      cluster (task) standard error -- the design-effect-adjusted Wilson interval (Kish 1965; Korn &
      Graubard 1998, Survey Methodology 24:193-201). ``n_eff`` is capped at the total number of attempts
      (attempts treated as independent) and is ``T`` when ``p`` is 0 or 1 or there is a single task (each
      task then counts as one trial: conservative); then it is multiplied by ``(z / t_{T-1})**2``, Korn &
      Graubard's adjustment for having only ``T - 1`` degrees of freedom.

    ``kept``: the intervals of an earlier report (:class:`.power.KeptGaps`, a run folder's
    ``mde.json``), read and added to: a kept one is returned without numpy.

    Raises ``ValueError`` for empty outcomes / no attempts, outcomes other than 0/1, or a bad alpha.
    """
    _check_alpha(alpha)
    counts = _task_counts(outcomes, "pass_rate_ci")
    inputs: list[object] = ["pass_rate_ci", alpha, list(counts.values())]
    if kept is not None:
        earlier = kept.recall(inputs)
        if isinstance(earlier, list) and len(earlier) == 2 and all(type(x) is float for x in earlier):
            return earlier[0], earlier[1]
        ci = _pass_rate_ci(counts, alpha)
        kept.keep(inputs, list(ci))
        return ci
    return _pass_rate_ci(counts, alpha)


def _pass_rate_ci(counts: dict[str, tuple[int, int]], alpha: float) -> tuple[float, float]:
    """:func:`pass_rate_ci` of ``{task: (successes, attempts)}``."""
    t = len(counts)
    if all(c[1] == 1 for c in counts.values()):
        lo, hi = _wilson_counts(sum(c[0] for c in counts.values()), t, _norm_ppf(0.5 + 0.5 * (1.0 - alpha)))
        return float(max(0.0, lo)), float(min(1.0, hi))
    rates = [float(c[0]) / float(c[1]) for c in counts.values()]
    p = _mean(rates)
    n_eff = float(t)
    attempts = float(sum(c[1] for c in counts.values()))  # integers: exact in any order
    if t > 1 and 0.0 < p < 1.0:
        se2 = _var1(rates) / t
        n_eff = attempts if se2 <= 0.0 else min(attempts, p * (1.0 - p) / se2)
    z = _norm_ppf(1.0 - alpha / 2.0)
    if t > 1:  # Korn & Graubard's degrees-of-freedom adjustment: T - 1 task clusters, not infinitely many
        n_eff *= (z / _t_ppf(1.0 - alpha / 2.0, t - 1)) ** 2
    return _wilson(p, n_eff, z)
