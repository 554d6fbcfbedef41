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
  effect and a sentence. :func:`verdict_for` re-words it after a Holm adjustment.
* :func:`pass_at_k` / :func:`pass_hat_k` -- Chen et al. (2021) and τ-bench (Yao et al. 2024).
* :func:`holm` -- Holm (1979) step-down adjusted p-values.
* :func:`pass_rate_ci` / :func:`pass_rate` -- one agent's pass@1 with a Wilson interval (task-clustered
  with an effective sample size when tasks have several attempts).
* :func:`mde` -- normal-approximation minimum detectable effect (80 % power by default).

The background, with worked numbers, is ``shared/reference/prior-art-and-statistics.md`` §4. This module
is plain numpy (scipy for very large nulls only) and knows nothing about pytest.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any


class _Deferred:
    """A module imported on first attribute access: ``homefield run``'s xdist workers import this
    package's report modules with the run plugin but never compute a report, and numpy costs them
    about 0.2 s of CPU each."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._name)
        globals()["np"] = module  # later uses go straight to the module
        return getattr(module, attr)


if TYPE_CHECKING:
    import numpy as np
else:
    np = _Deferred("numpy")  # heavy third-party import, deferred

# scipy is imported inside the functions that use it, and only the part they need: scipy.special
# (about 0.2 s of CPU) for the binomial, normal and t functions, never scipy.stats (1–1.5 s), and
# scipy.signal only for the 2-D and FFT convolutions of very large exact nulls (one-dimensional
# direct convolution is ``numpy.convolve``, what ``scipy.signal.convolve(method="direct")`` calls), so
# that ``homefield report`` on a large run takes well under a second (issue 18).

__all__ = [
    "Comparison",
    "compare",
    "holm",
    "mcnemar_exact",
    "mde",
    "paired_permutation",
    "pass_at_k",
    "pass_hat_k",
    "pass_rate",
    "pass_rate_ci",
    "reword_verdict",
    "verdict_for",
]

Outcomes = Mapping[str, Sequence[int]]

#: Largest common denominator of the per-task differences for which the exact (lattice) null is used.
MAX_DENOMINATOR = 1000
#: Largest support (2 * sum|m| + 1 integer points) of the exact 1-D sign-flip distribution.
EXACT_1D_MAX_POINTS = 4_000_000
#: Largest (subset size x subset sum) table of the exact 2-D null used for p and CI in :func:`compare`.
EXACT_2D_MAX_CELLS = 4_000_000
#: Above these products of array sizes the convolutions switch from direct (exact) to FFT (1-D, 2-D).
_DIRECT_1D_MAX = 20_000_000
_DIRECT_2D_MAX = 100_000
#: Largest (tasks + groups) x table cells for the exact shift-and-add build of the 2-D null: numpy
#: does about 10^8 of these multiply-adds in 0.1-0.2 s, which covers 100 tasks whose attempt counts
#: differ (denominator 20) without the FFT (and without importing scipy.signal).
_SHIFT_ADD_MAX = 100_000_000


# --------------------------------------------------------------------------------------- validation


def _task_counts(outcomes: Outcomes, who: str) -> dict[str, tuple[int, int]]:
    """``{task: (successes, attempts)}`` for tasks with at least one attempt; outcomes must be 0/1.

    Raises ``ValueError`` for an empty mapping, a mapping where no task has an attempt, or an outcome
    that is not 0, 1, False or True.
    """
    if not isinstance(outcomes, Mapping):
        raise TypeError(f"{who}: outcomes must be a mapping task id -> list of 0/1, got {type(outcomes)}")
    if not outcomes:
        raise ValueError(f"{who}: no tasks (empty outcomes)")
    counts: dict[str, tuple[int, int]] = {}
    for task, values in outcomes.items():
        vals = list(values)
        for v in vals:
            if v not in (0, 1):
                raise ValueError(f"{who}: task {task!r} has outcome {v!r}; outcomes must be 0 or 1")
        if vals:
            counts[str(task)] = (int(sum(int(v) for v in vals)), len(vals))
    if not counts:
        raise ValueError(f"{who}: no task has any attempt")
    return counts


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


def _check_count(name: str, value: int) -> int:
    if isinstance(value, bool) or int(value) != value or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


# --------------------------------------------------------------------------------------- distributions
# The functions scipy.stats would call, taken from scipy.special (about 0.2 s of CPU to import instead
# of 1–1.5 s for scipy.stats): the same ufuncs, hence bit for bit the same numbers (and the same
# rounding of the report's p-values); tests/report/test_stats.py checks them against scipy.stats.


def _special() -> Any:
    """``scipy.special._ufuncs`` (imported on first use): ``_binom_pmf``/``_binom_cdf``/``_binom_sf``
    (the functions behind ``scipy.stats.binom``), ``ndtri`` and ``stdtrit``."""
    from scipy.special import _ufuncs

    return _ufuncs


def _binom_half_pmf(n: int) -> np.ndarray:
    """``P(J = j)`` for ``J ~ Binomial(n, 1/2)``, ``j = 0..n`` (``scipy.stats.binom.pmf(j, n, 0.5)``)."""
    return np.asarray(_special()._binom_pmf(np.arange(n + 1, dtype=np.float64), n, 0.5), dtype=np.float64)


@functools.lru_cache(maxsize=256)
def _norm_ppf(q: float) -> float:
    """Standard normal quantile (``scipy.stats.norm.ppf``: ``scipy.special.ndtri``)."""
    return float(_special().ndtri(q))


@functools.lru_cache(maxsize=256)
def _t_ppf(q: float, df: int) -> float:
    """Student t quantile (``scipy.stats.t.ppf``: ``scipy.special.stdtrit``)."""
    return float(_special().stdtrit(df, q))


def _binom_search(a: Any, d: float, lo: int, hi: int) -> int:
    """The index ``i`` in ``[lo, hi]`` with ``a(i) <= d < a(i + 1)`` for ascending ``a`` (the binary
    search of ``scipy.stats.binomtest``)."""
    while lo < hi:
        mid = lo + (hi - lo) // 2
        midval = a(mid)
        if midval < d:
            lo = mid + 1
        elif midval > d:
            hi = mid - 1
        else:
            return mid
    return lo if a(lo) <= d else lo - 1


def _binom_two_sided_half(k: int, n: int) -> float:
    """Two-sided binomial p of ``k`` successes in ``n >= 1`` trials at p = 1/2, as
    ``scipy.stats.binomtest(k, n, 0.5).pvalue`` computes it (the tail beyond the mirror point whose
    mass is at most that of ``k``, with its relative tolerance 1e-7); for p = 1/2 this is
    ``min(1, 2 * P(J <= min(k, n - k)))``."""
    sc = _special()

    def pmf(x: int) -> float:
        return float(sc._binom_pmf(x, n, 0.5)) if 0 <= x <= n else 0.0

    def cdf(x: int) -> float:
        return 0.0 if x < 0 else 1.0 if x >= n else float(sc._binom_cdf(x, n, 0.5))

    def sf(x: int) -> float:
        return 1.0 if x < 0 else 0.0 if x >= n else float(sc._binom_sf(x, n, 0.5))

    d = pmf(k)
    rerr = 1 + 1e-7
    if k * 2 == n:
        return 1.0
    if k * 2 < n:
        ix = _binom_search(lambda x: -pmf(x), -d * rerr, (n + 1) // 2, n)
        y = n - ix + int(d * rerr == pmf(ix))
        pval = cdf(k) + sf(n - y)
    else:
        ix = _binom_search(pmf, d * rerr, 0, n // 2)
        pval = cdf(ix) + sf(k - 1)
    return min(1.0, pval)


# --------------------------------------------------------------------------------------- McNemar


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant task counts.

    ``b`` = tasks only A solved, ``c`` = tasks only B solved (concordant tasks carry no information and
    are not passed). Under H0 ``b ~ Binomial(b + c, 1/2)``; the p-value is
    ``min(1, 2 * sum_{i <= min(b, c)} C(b+c, i) / 2**(b+c))``, computed as
    ``scipy.stats.binomtest(b, b + c, 0.5)`` computes it (:func:`_binom_two_sided_half`); ``1.0`` when
    ``b + c == 0``.

    Source: McNemar (1947), Psychometrika 12:153-157, exact conditional form (Fagerland, Lydersen &
    Laake 2013, BMC Med. Res. Methodol. 13:91). Known value: ``mcnemar_exact(12, 3) == 0.03516`` (to 4
    significant digits; ``tests/test_stats.py::test_mcnemar_known_values``).

    Raises ``ValueError`` when ``b`` or ``c`` is not a non-negative integer.
    """
    b = _check_count("b", b)
    c = _check_count("c", c)
    if b + c == 0:
        return 1.0
    return _binom_two_sided_half(b, b + c)


# --------------------------------------------------------------------------------------- sign-flip null


def _lattice(diffs: np.ndarray, max_den: int = MAX_DENOMINATOR) -> tuple[np.ndarray, int] | None:
    """Integers ``m`` and a denominator ``D`` with ``diffs == m / D``, or ``None`` if ``D > max_den``.

    Each distinct value is matched to the nearest fraction with denominator ``<= max_den`` and accepted
    within 1e-9 (relative); ``D`` is the lcm of those denominators.
    """
    uniq = np.unique(diffs)
    den = 1
    fracs: dict[float, Fraction] = {}
    for x in uniq.tolist():
        f = Fraction(x).limit_denominator(max_den)
        if abs(float(f) - x) > 1e-9 * max(1.0, abs(x)):
            return None
        fracs[x] = f
        den = math.lcm(den, f.denominator)
        if den > max_den:
            return None
    m = np.array([int(fracs[x] * den) for x in diffs.tolist()], dtype=np.int64)
    return m, den


def _convolve_all(arrays: list[np.ndarray], direct_max: int) -> np.ndarray:
    """Convolve (full mode, any dimension) a list of non-negative arrays, pairwise in a balanced tree.

    Small products use direct convolution (exact sums of products: ``numpy.convolve`` in one
    dimension, as ``scipy.signal.convolve(method="direct")`` does, ``scipy.signal`` in two); large ones
    FFT (``scipy.signal``), after which tiny negative round-off is clipped to 0 and entries below
    1e-15 of the maximum are zeroed. ``scipy.signal`` is imported only when one of those is needed.
    """
    items = list(arrays)
    while len(items) > 1:
        nxt: list[np.ndarray] = []
        for i in range(0, len(items) - 1, 2):
            x, y = items[i], items[i + 1]
            if x.size * y.size <= direct_max and x.ndim == 1 and y.ndim == 1:
                z = np.convolve(x, y, mode="full")
            elif x.size * y.size <= direct_max:
                from scipy import signal

                z = signal.convolve(x, y, mode="full", method="direct")
            else:
                from scipy import signal

                z = signal.convolve(x, y, mode="full", method="fft")
                np.maximum(z, 0.0, out=z)
                z[z < 1e-15 * z.max()] = 0.0
            nxt.append(z)
        if len(items) % 2:
            nxt.append(items[-1])
        items = nxt
    return items[0]


def _sign_flip_pvalue_exact(m: np.ndarray) -> float:
    """Exact two-sided sign-flip p-value ``P(|sum e_t m_t| >= |sum m_t|)`` for integer ``m``.

    Tasks are grouped by ``|m_t| = v``; a group of ``n`` tasks contributes ``v * (2J - n)`` with
    ``J ~ Binomial(n, 1/2)`` (:func:`_binom_half_pmf`), and the groups' distributions are convolved.
    """
    m = m[m != 0]
    if m.size == 0:
        return 1.0
    s_obs = int(abs(m.sum()))
    vals, counts = np.unique(np.abs(m), return_counts=True)
    kernels = []
    offset = 0
    for v, n in zip(vals.tolist(), counts.tolist(), strict=True):
        k = np.zeros(2 * v * n + 1)
        k[:: 2 * v] = _binom_half_pmf(n)
        kernels.append(k)
        offset -= v * n
    pmf = _convolve_all(kernels, _DIRECT_1D_MAX)
    support = np.arange(pmf.size) + offset
    p = float(pmf[np.abs(support) >= s_obs].sum())
    return min(1.0, max(p, 2.0 * 0.5**m.size))


@dataclass(frozen=True)
class _SignFlipNull:
    """The sign-flip null of ``d_1..d_T`` in the form that inverts into a confidence interval.

    Flipping the signs of the tasks in a subset ``N`` moves the signed sum of ``d_t - delta`` above its
    observed value exactly when ``mean_{t in N} d_t <= delta`` (Hartigan 1969, JASA 64:1303-1317). So with
    ``N`` uniform over subsets (each task in with probability 1/2):

    * ``p_plus(delta)  = P(N empty) + P(N non-empty and mean_N(d) <= delta)``  (one-sided, "Δ > delta"),
    * ``p_minus(delta) = P(N empty) + P(N non-empty and mean_N(d) >= delta)``  (one-sided, "Δ < delta"),
    * two-sided ``p(delta) = min(1, 2 * min(p_plus, p_minus))`` -- with the symmetric sign-flip null this
      equals ``P(|sum e_t (d_t - delta)| >= |sum (d_t - delta)|)`` exactly.

    ``values`` are the subset means (in units of ``1/scale``), sorted; ``cum``/``rcum`` the forward and
    reverse cumulative masses; ``empty`` the mass of the empty subset (the identity permutation).
    """

    values: np.ndarray
    cum: np.ndarray
    rcum: np.ndarray
    empty: float
    scale: int
    exact: bool

    @classmethod
    def _from_points(
        cls, values: np.ndarray, masses: np.ndarray, empty: float, scale: int, exact: bool
    ) -> _SignFlipNull:
        order = np.argsort(values, kind="stable")
        v = values[order]
        w = masses[order]
        return cls(v, np.cumsum(w), np.cumsum(w[::-1])[::-1], float(empty), scale, exact)

    @classmethod
    def exact_table(cls, m: np.ndarray, scale: int) -> _SignFlipNull:
        """Exact null from integer numerators ``m`` (``d = m / scale``).

        The joint distribution of (subset size, subset sum) is the 2-D convolution, over the distinct
        values ``v`` (``n`` tasks each), of the binomial "diagonal" ``P(j tasks picked) = C(n, j) / 2**n``
        at (``j``, ``j * v``). Small tables are built by exact shift-and-add, large ones by FFT.
        """
        t = m.size
        vals, counts = np.unique(m, return_counts=True)
        groups = list(zip(vals.tolist(), counts.tolist(), strict=True))
        pmfs = [_binom_half_pmf(n) for _, n in groups]
        s_lo = sum(min(v, 0) * n for v, n in groups)
        width = sum(abs(v) * n for v, n in groups) + 1
        if (t + len(groups)) * (t + 1) * width <= _SHIFT_ADD_MAX:
            table = np.zeros((t + 1, width))
            table[0, -s_lo] = 1.0
            # only the reachable block is touched: rows 0..done (tasks so far), columns lo..hi (their
            # sums); the cells outside it are zero, so the sums (and their rounding) are those of
            # shifting the whole table
            done, lo, hi = 0, -s_lo, -s_lo
            for (v, n), pmf in zip(groups, pmfs, strict=True):
                new = np.zeros_like(table)
                src = table[: done + 1, lo : hi + 1]
                for j in range(n + 1):
                    sh = j * v
                    new[j : j + done + 1, lo + sh : hi + 1 + sh] += pmf[j] * src
                table = new
                done, lo, hi = done + n, lo + min(0, n * v), hi + max(0, n * v)
        else:
            kernels = []
            for (v, n), pmf in zip(groups, pmfs, strict=True):
                k = np.zeros((n + 1, abs(v) * n + 1))
                picked = np.arange(n + 1)
                k[picked, (picked if v >= 0 else n - picked) * abs(v)] = pmf
                kernels.append(k)
            table = _convolve_all(kernels, _DIRECT_2D_MAX)
        rows, cols = np.nonzero(table[1:] > 0)
        masses = table[1:][rows, cols]
        values = (cols + s_lo).astype(np.float64) / (rows + 1).astype(np.float64)
        return cls._from_points(values, masses, 0.5**t, scale, True)

    @classmethod
    def monte_carlo(
        cls, diffs: np.ndarray, lattice: tuple[np.ndarray, int] | None, n_resamples: int, seed: int
    ) -> _SignFlipNull:
        """Monte Carlo null from ``n_resamples`` uniformly random subsets (``numpy`` PCG64, ``seed``).

        The observed labelling counts once, as in ``(1 + #extreme) / (R + 1)``: every draw has mass
        ``1 / (R + 1)`` and the empty-subset mass is ``(1 + #empty draws) / (R + 1)``. With a lattice the
        subset sums are exact integers, so ties with ``delta = 0`` are resolved exactly.
        """
        rng = np.random.default_rng(seed)
        t = diffs.size
        if lattice is not None:
            x: np.ndarray = lattice[0]
            scale = lattice[1]
        else:
            x, scale = diffs, 1
        sums, sizes = [], []
        chunk = max(1, 4_000_000 // max(t, 1))
        left = n_resamples
        while left > 0:
            r = min(chunk, left)
            pick = rng.random((r, t)) < 0.5
            sums.append(pick.astype(x.dtype) @ x)
            sizes.append(pick.sum(axis=1))
            left -= r
        s = np.concatenate(sums)
        n = np.concatenate(sizes)
        keep = n > 0
        values = s[keep].astype(np.float64) / n[keep].astype(np.float64)
        if lattice is None:  # float sums that should be 0 (e.g. 0.1 + 0.2 - 0.3) are ties with delta = 0
            values[np.abs(values) <= 1e-9] = 0.0
        mass = 1.0 / (n_resamples + 1)
        empty = (1 + int((~keep).sum())) * mass
        return cls._from_points(values, np.full(values.size, mass), empty, scale, False)

    def p_plus(self, delta: float) -> float:
        """One-sided p for "Δ > delta" (``delta`` as a fraction). Subset means within a relative 1e-12
        of ``delta`` count as ties (as extreme), which absorbs the rounding of ``delta * scale``."""
        x = delta * self.scale
        i = int(np.searchsorted(self.values, x + 1e-12 * max(1.0, abs(x)), side="right"))
        return self.empty + (float(self.cum[i - 1]) if i > 0 else 0.0)

    def p_minus(self, delta: float) -> float:
        """One-sided p for "Δ < delta" (``delta`` as a fraction); ties as in :meth:`p_plus`."""
        x = delta * self.scale
        i = int(np.searchsorted(self.values, x - 1e-12 * max(1.0, abs(x)), side="left"))
        return self.empty + (float(self.rcum[i]) if i < self.values.size else 0.0)

    def p_value(self, delta: float = 0.0) -> float:
        """Two-sided p of H0 "the d_t are symmetric about delta"."""
        return min(1.0, 2.0 * min(self.p_plus(delta), self.p_minus(delta)))

    def ci(self, alpha: float) -> tuple[float, float]:
        """``{delta : p_value(delta) >= alpha}`` as ``(low, high)`` fractions; ``-inf``/``inf`` when no
        shift at all can be rejected on that side (too few tasks). Closed interval; see the class doc."""
        thr = alpha / 2.0
        lo_ok = np.nonzero(self.empty + self.cum >= thr)[0]
        hi_ok = np.nonzero(self.empty + self.rcum >= thr)[0]
        lo = -math.inf if self.empty >= thr or lo_ok.size == 0 else float(self.values[lo_ok[0]]) / self.scale
        hi = math.inf if self.empty >= thr or hi_ok.size == 0 else float(self.values[hi_ok[-1]]) / self.scale
        return lo, hi


def _null_for(diffs: np.ndarray, lattice: tuple[np.ndarray, int] | None, n_resamples: int, seed: int) -> _SignFlipNull:
    """Exact 2-D null when the lattice table fits :data:`EXACT_2D_MAX_CELLS`, else Monte Carlo."""
    if lattice is not None:
        m = lattice[0]
        width = int(m[m > 0].sum() - m[m < 0].sum()) + 1
        if (m.size + 1) * width <= EXACT_2D_MAX_CELLS:
            return _SignFlipNull.exact_table(m, lattice[1])
    return _SignFlipNull.monte_carlo(diffs, lattice, n_resamples, seed)


def _as_diffs(diffs: Sequence[float] | np.ndarray) -> np.ndarray:
    d = np.asarray(diffs, dtype=np.float64).ravel()
    if d.size == 0:
        raise ValueError("paired_permutation: no differences (empty input)")
    if not np.all(np.isfinite(d)):
        raise ValueError("paired_permutation: differences must be finite numbers")
    return d


def paired_permutation(diffs: Sequence[float] | np.ndarray, *, n_resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided paired sign-flip (randomization) test of "mean difference = 0" over tasks.

    ``diffs``: shape ``(T,)``, one paired difference per task (e.g. A's minus B's success rate, fractions).
    Under H0 the two agents' labels are exchangeable within a task, so each ``d_t`` keeps or flips its sign
    with probability 1/2, independently. Statistic ``|sum_t d_t|``; p = ``P(|sum e_t d_t| >= |sum d_t|)``.
    Zero differences never change the statistic.

    * **Exact** whenever the ``d_t`` are multiples of ``1/D`` with ``D <= MAX_DENOMINATOR`` (1000) -- always
      so for rates from counts of attempts, ``D = lcm`` of the attempt counts -- and the integer support
      has at most :data:`EXACT_1D_MAX_POINTS` points: the distribution of the signed integer sum is
      convolved from one binomial per distinct ``|d_t|`` (fast for thousands of tasks).
    * Otherwise **Monte Carlo** with ``n_resamples`` seeded random sign patterns (uniform subsets),
      ``p = min(1, 2 * min(p_plus, p_minus))`` with each one-sided ``p = (1 + #as-extreme) / (R + 1)``
      (see :func:`compare`; the same draws give its confidence interval).

    Source: Fisher (1935) *The Design of Experiments* §21; Pitman (1937) JRSS Suppl. 4:119-130. With one
    attempt per task (``d_t`` in {-1, 0, 1}) it equals :func:`mcnemar_exact`
    (``tests/test_stats.py::test_permutation_equals_mcnemar_with_one_attempt``); four ``+1`` differences
    give ``2/16 = 0.125``.

    Raises ``ValueError`` for empty input, non-finite values or ``n_resamples < 1``.
    """
    d = _as_diffs(diffs)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples!r}")
    lat = _lattice(d)
    if lat is not None:
        m = lat[0]
        if 2 * int(np.abs(m).sum()) + 1 <= EXACT_1D_MAX_POINTS:
            return _sign_flip_pvalue_exact(m)
    return _SignFlipNull.monte_carlo(d, lat, n_resamples, seed).p_value(0.0)


# --------------------------------------------------------------------------------------- pass@k


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


def _mde_from_base_rate(
    t: int, sa: np.ndarray, ka: np.ndarray, sb: np.ndarray, kb: np.ndarray, k_mean: float, alpha: float
) -> float:
    """MDE when the observed differences have no spread: base rate ``p = (successes + 1) / (attempts +
    2)`` pooled over both agents, and the gap ``g`` solved from ``g = z * sd(g) / sqrt(T)`` with
    ``sd(g)^2 = (p (1 - p) + q (1 - q)) / k``, ``q = p`` moved by ``g`` towards 1/2 (the other agent under
    the alternative). Near 0 % or 100 % this avoids the near-zero SD of the observed rate."""
    p = float((sa.sum() + sb.sum() + 1) / (ka.sum() + kb.sum() + 2))
    gap = mde(t, base_rate=p, attempts=k_mean, alpha=alpha)
    z = gap * math.sqrt(t) / math.sqrt(2.0 * p * (1.0 - p) / k_mean)
    for _ in range(50):
        q = min(1.0, max(0.0, p - gap if p >= 0.5 else p + gap))
        gap = z * math.sqrt((p * (1.0 - p) + q * (1.0 - q)) / k_mean) / math.sqrt(t)
    return gap


def _min_tasks_for_significance(alpha: float) -> int:
    """Smallest number of non-zero paired differences whose exact two-sided p (2 / 2**n) can be < alpha."""
    n = 1
    while 2.0 * 0.5**n >= alpha:
        n += 1
    return n


# --------------------------------------------------------------------------------------- one agent


def pass_rate(outcomes: Outcomes) -> float:
    """pass@1 of one agent: the mean over tasks of (successes / attempts on that task), tasks weighted
    equally. ``outcomes``: task id -> list of 0/1 (tasks with no attempt are ignored). Fraction in [0, 1].

    Raises ``ValueError`` when there is no attempt or an outcome is not 0/1.
    """
    counts = _task_counts(outcomes, "pass_rate")
    return float(np.mean([s / k for s, k in counts.values()]))


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def _wilson_counts(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson score interval of ``k`` successes in ``n`` with normal quantile ``z``, in the form of
    ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")`` (Newcombe 1998): 0 when ``k == 0``,
    1 when ``k == n``."""
    p = k / n
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    delta = z / denom * math.sqrt(4 * n * p * (1 - p) + z**2)
    return (0.0 if k == 0 else center - delta), (1.0 if k == n else center + delta)


def pass_rate_ci(outcomes: Outcomes, *, alpha: float = 0.05) -> tuple[float, float]:
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

    Raises ``ValueError`` for empty outcomes / no attempts, outcomes other than 0/1, or a bad alpha.
    """
    _check_alpha(alpha)
    counts = _task_counts(outcomes, "pass_rate_ci")
    s = np.array([c[0] for c in counts.values()], dtype=np.float64)
    k = np.array([c[1] for c in counts.values()], dtype=np.float64)
    t = s.size
    if np.all(k == 1):
        lo, hi = _wilson_counts(int(s.sum()), t, _norm_ppf(0.5 + 0.5 * (1.0 - alpha)))
        return float(max(0.0, lo)), float(min(1.0, hi))
    rates = s / k
    p = float(rates.mean())
    n_eff = float(t)
    if t > 1 and 0.0 < p < 1.0:
        se2 = float(rates.var(ddof=1)) / t
        n_eff = float(k.sum()) if se2 <= 0.0 else min(float(k.sum()), p * (1.0 - p) / se2)
    z = _norm_ppf(1.0 - alpha / 2.0)
    if t > 1:  # Korn & Graubard's degrees-of-freedom adjustment: T - 1 task clusters, not infinitely many
        n_eff *= (z / _t_ppf(1.0 - alpha / 2.0, t - 1)) ** 2
    return _wilson(p, n_eff, z)


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
    * ``mde``: the gap detectable with 80 % power (see :func:`mde`), at most 1.0;
    * ``alpha``; ``verdict``: the sentence (:func:`verdict_for`); ``note``: what a reader must know about
      a degenerate interval ("" normally); ``p_adjusted``: set by :meth:`with_p_adjusted`.
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

    @property
    def significant(self) -> bool:
        """Whether the decision p (adjusted if set) is below alpha."""
        p = self.p_value if self.p_adjusted is None else self.p_adjusted
        return p < self.alpha

    def with_p_adjusted(self, p_adjusted: float) -> Comparison:
        """A copy with ``p_adjusted`` set and the verdict re-worded from it (see :func:`verdict_for`)."""
        return dataclasses.replace(self, p_adjusted=float(p_adjusted), verdict=verdict_for(self, p_adjusted=p_adjusted))

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
        }


def compare(
    a: Outcomes,
    b: Outcomes,
    *,
    alpha: float = 0.05,
    seed: int = 0,
    names: tuple[str, str] = ("A", "B"),
    n_resamples: int = 10_000,
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

    ``mde``: :func:`mde` at ``alpha`` with the observed SD of d (ddof=1), or -- when that SD is 0 or there
    is one task -- with the pooled base rate ``(successes + 1) / (attempts + 2)`` of both agents and the
    mean attempts per task; floored at the smallest observable gap that can be significant (6 tasks moved
    by one attempt each, at alpha = 0.05) and capped at 1.0; 1.0 when there are too few tasks to ever
    reach significance.

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
    else:
        test, p = "permutation", null.p_value(0.0)

    lo, hi = null.ci(alpha)
    note = ""
    n_min = _min_tasks_for_significance(alpha)
    spread_zero = bool(np.all(diffs == diffs[0])) if m_int is None else bool(np.all(m_int == m_int[0]))
    if spread_zero:
        c = float(diffs[0])
        u = 1.0 - alpha ** (1.0 / t)
        w_lo, w_hi = max(-1.0, c - (1.0 + c) * u), min(1.0, c + (1.0 - c) * u)
        if p < alpha and w_lo <= 0.0 <= w_hi:
            lo, hi = c, c
            note = (
                f"every one of the {t} tasks differs by the same {_pts(c)} pts, so the test-inversion "
                "interval is a single point"
            )
        else:
            lo, hi = w_lo, w_hi
            what = "all tied" if c == 0.0 else f"all differing by the same {_pts(c)} pts"
            note = (
                f"{t} task{'s' if t != 1 else ''} {what}: the interval is the exact bound from 0 of {t} "
                f"tasks differing otherwise (share <= {u:.3f}), not a test inversion"
            )
    elif t < n_min:
        note = f"with {t} tasks no difference can reach p<{_fmt_num(alpha)}: the interval is the whole range"
    lo, hi = max(-1.0, lo), min(1.0, hi)

    sd = float(diffs.std(ddof=1)) if t > 1 else 0.0
    k_mean = float((ka.sum() + kb.sum()) / (2 * t))
    if t < n_min:
        gap = 1.0
    else:
        if sd > 0.0:
            normal = mde(t, sd_diff=sd, alpha=alpha)
        else:
            normal = _mde_from_base_rate(t, sa, ka, sb, kb, k_mean, alpha)
        gap = min(1.0, max(normal, n_min / (t * k_mean)))

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
    )
    return dataclasses.replace(cmp, verdict=verdict_for(cmp))


# --------------------------------------------------------------------------------------- wording


def _fmt_num(x: float) -> str:
    return f"{x:.3g}"


def _pts(x: float) -> str:
    """A fraction as signed percentage points: "+12", "−9", "0", "+0.4" (Unicode minus)."""
    v = 100.0 * x
    if abs(v) < 0.005:
        return "0"
    r = round(v)
    s = f"{v:+.2g}" if r == 0 else f"{r:+d}"
    return s.replace("-", "\u2212")


def _fmt_p(p: float, alpha: float) -> str:
    """p with 2 significant digits ("<0.001" below 0.001), more when rounding would cross alpha."""
    if p < 0.001:
        return "<0.001"
    for digits in (2, 3, 4, 6):
        s = f"{p:.{digits}g}"
        if (float(s) < alpha) == (p < alpha):
            return "=" + s
    return "=" + repr(p)


def _attempts_phrase(cmp: Comparison) -> str:
    k_a, k_b = cmp.attempts
    tasks = f"{cmp.n_tasks} task{'s' if cmp.n_tasks != 1 else ''}"
    if k_a == k_b and float(k_a).is_integer():
        k = int(k_a)
        return f"{tasks} \u00d7 {k} attempt{'s' if k != 1 else ''}"
    return f"{tasks} \u00d7 {(k_a + k_b) / 2:.1f} attempts on average"


def _test_phrase(cmp: Comparison) -> str:
    if cmp.test == "mcnemar":
        name = "exact McNemar"
    else:
        name = "paired permutation" if cmp.exact else "paired permutation (Monte Carlo)"
    return f"{name} over {cmp.n_tasks} task{'s' if cmp.n_tasks != 1 else ''}"


def verdict_for(comparison: Comparison, *, p_adjusted: float | None = None, alpha: float | None = None) -> str:
    """The one-line verdict for ``comparison``, decided by ``p_adjusted`` when given (e.g. Holm across all
    pairs, :func:`holm`) else by its own p; ``alpha`` defaults to the comparison's.

    Significant (decision p < alpha): the winner is named first and Δ and the CI are shown from the
    winner's side (winner - loser, so positive), e.g.
    ``"B beats A (Δ=+12 pts, 95% CI +3…+21, p=0.01, paired permutation over 30 tasks)"``;
    with ``p_adjusted`` the Holm-adjusted p follows p.
    Otherwise Δ and the CI are first-named minus second-named (a - b), followed by the power statement:
    ``"A vs B: no detectable difference (Δ=+2 pts, 95% CI −9…+13, p=0.71; gaps under 18 pts would
    usually go unseen with 30 tasks × 3 attempts)"``; "after Holm adjustment" (and an "unadjusted" CI)
    when only the adjustment removed significance; "with 5 tasks no gap can reach p<0.05" when too few
    tasks exist for any significance. Points are rounded to whole points (2 significant digits below 1).

    Source of the wording: issue 7; v0.2's always-"a - b" sign (reference §9.5 item 8) is fixed here.
    """
    cmp = comparison
    alpha = cmp.alpha if alpha is None else alpha
    p_dec = cmp.p_value if p_adjusted is None else float(p_adjusted)
    level = f"{_fmt_num(100.0 * (1.0 - cmp.alpha))}% CI"
    p_txt = f"p{_fmt_p(cmp.p_value, alpha)}"
    if p_adjusted is not None:
        p_txt += f", Holm-adjusted p{_fmt_p(float(p_adjusted), alpha)}"
    lo, hi = cmp.ci
    if p_dec < alpha and cmp.delta != 0.0:
        if cmp.delta > 0:
            win, lose, d, lo_w, hi_w = cmp.a, cmp.b, cmp.delta, lo, hi
        else:
            win, lose, d, lo_w, hi_w = cmp.b, cmp.a, -cmp.delta, -hi, -lo
        return (
            f"{win} beats {lose} (\u0394={_pts(d)} pts, {level} {_pts(lo_w)}\u2026{_pts(hi_w)}, {p_txt}, "
            f"{_test_phrase(cmp)})"
        )
    after_holm = p_adjusted is not None and cmp.p_value < alpha
    head = "no detectable difference" + (" after Holm adjustment" if after_holm else "")
    ci_txt = f"{'unadjusted ' if after_holm else ''}{level} {_pts(lo)}\u2026{_pts(hi)}"
    n_min = _min_tasks_for_significance(alpha)
    if cmp.n_tasks < n_min:
        power = f"with {cmp.n_tasks} task{'s' if cmp.n_tasks != 1 else ''} no gap can reach p<{_fmt_num(alpha)}"
    else:
        power = f"gaps under {round(100.0 * cmp.mde)} pts would usually go unseen with {_attempts_phrase(cmp)}"
    return f"{cmp.a} vs {cmp.b}: {head} (\u0394={_pts(cmp.delta)} pts, {ci_txt}, {p_txt}; {power})"


def reword_verdict(comparison: Comparison, p_adjusted: float, *, alpha: float | None = None) -> str:
    """:func:`verdict_for` with a positional ``p_adjusted`` (the report's call after Holm); same text."""
    return verdict_for(comparison, p_adjusted=p_adjusted, alpha=alpha)
