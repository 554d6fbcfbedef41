"""The null distributions and exact tests behind :mod:`.stats` (issue 7), and the quantiles they need:
:func:`mcnemar_exact`; :func:`paired_permutation`, the sign-flip test (Fisher 1935, Pitman 1937),
exact by convolution whenever the per-task differences share a small denominator, seeded Monte
Carlo otherwise; :class:`_SignFlipNull`, its null in the form that inverts into :func:`.stats.compare`'s
interval (Hartigan 1969); the binomial, normal and t functions scipy.stats would call; the Wilson
interval; and the outcome validation shared with :mod:`.rates`. Plain numpy, no scipy, no pytest.
"""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from pytest_homefield.report.quantiles import (
    binom_half_cdf,
    binom_half_pmf,
    binom_two_sided_half,
    norm_ppf,
    t_ppf,
)

__all__ = ["Deferred", "Outcomes", "mcnemar_exact", "mcnemar_one_sided", "min_tasks_for_significance",
           "paired_permutation"]


class Deferred:
    """A module imported on first attribute access, then put in place of this object under ``name``
    in ``namespace`` (the importing module's ``globals()``): ``homefield run``'s xdist workers import
    this package's report modules with the run plugin but never compute a report, and numpy costs
    them about 0.2 s of CPU each."""

    def __init__(self, module: str, namespace: MutableMapping[str, object], name: str) -> None:
        self._module, self._namespace, self._name = module, namespace, name

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._module)
        self._namespace[self._name] = module  # later uses go straight to the module
        return getattr(module, attr)


if TYPE_CHECKING:
    import numpy as np
else:
    np = Deferred("numpy", globals(), "np")  # heavy third-party import, deferred

# No scipy at all (issue 35): the binomial, normal and t functions are :mod:`.quantiles` (standard
# library) and every convolution numpy's (:func:`_convolve_all`; one-dimensional direct convolution is
# ``numpy.convolve``, what ``scipy.signal.convolve(method="direct")`` calls), so that ``homefield
# report`` on a large run takes well under a second (issues 18, 35).

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
#: differ (denominator 20) without the FFT.
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
# The binomial, normal and t functions scipy.stats would call, from the standard library
# (:mod:`.quantiles`; importing scipy.special for them cost a third of a large report, issue 35);
# tests/report/test_stats.py checks them against scipy.stats.


@functools.lru_cache(maxsize=1024)
def _binom_half_pmf(n: int) -> np.ndarray:
    """``P(J = j)`` for ``J ~ Binomial(n, 1/2)``, ``j = 0..n`` (``scipy.stats.binom.pmf(j, n, 0.5)``);
    cached, so read-only."""
    out = np.asarray(binom_half_pmf(n), dtype=np.float64)
    out.setflags(write=False)
    return out


def _norm_ppf(q: float) -> float:
    """Standard normal quantile (``scipy.stats.norm.ppf``; :func:`.quantiles.norm_ppf`)."""
    return norm_ppf(q)


def _t_ppf(q: float, df: int) -> float:
    """Student t quantile (``scipy.stats.t.ppf``; :func:`.quantiles.t_ppf`)."""
    return t_ppf(q, df)


def _binom_two_sided_half(k: int, n: int) -> float:
    """Two-sided binomial p of ``k`` successes in ``n >= 1`` trials at p = 1/2, as
    ``scipy.stats.binomtest(k, n, 0.5).pvalue`` computes it: ``min(1, 2 * P(J <= min(k, n - k)))``
    (:func:`.quantiles.binom_two_sided_half`)."""
    return binom_two_sided_half(k, n)


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


def min_tasks_for_significance(alpha: float) -> int:
    """Smallest number of non-zero paired differences whose exact two-sided p (2 / 2**n) can be < alpha."""
    n = 1
    while 2.0 * 0.5**n >= alpha:
        n += 1
    return n


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


def mcnemar_one_sided(b: int, c: int) -> float:
    """One-sided exact McNemar p of "A is worse than B": ``P(J <= b)`` for ``J ~ Binomial(b + c, 1/2)``.

    ``b`` = tasks only A solved, ``c`` = tasks only B solved; ``1.0`` when ``b + c == 0``. This is
    ``scipy.stats.binomtest(b, b + c, 0.5, alternative="less").pvalue``. Known value (issue 32): A wins 3
    and loses 10 of 30 single-attempt tasks, ``mcnemar_one_sided(3, 10) == 378 / 8192 = 0.0461`` where
    the two-sided p is 0.092.

    Raises ``ValueError`` when ``b`` or ``c`` is not a non-negative integer.
    """
    b = _check_count("b", b)
    c = _check_count("c", c)
    if b + c == 0 or b >= b + c:
        return 1.0
    return min(1.0, binom_half_cdf(b, b + c))


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
    """Convolve (full mode, one or two dimensions) a list of non-negative arrays, pairwise in a
    balanced tree.

    Small products use direct convolution (sums of products: ``numpy.convolve`` in one dimension, as
    ``scipy.signal.convolve(method="direct")`` does, and row by row in two: :func:`_convolve_2d_direct`);
    large ones FFT (:func:`_fft_convolve`, ``numpy.fft``), after which tiny negative round-off is clipped
    to 0 and entries below 1e-15 of the maximum are zeroed. No scipy: importing ``scipy.signal`` cost
    1.4 s of CPU, half of a 1,000-task report (issue 35).
    """
    items = list(arrays)
    while len(items) > 1:
        nxt: list[np.ndarray] = []
        for i in range(0, len(items) - 1, 2):
            x, y = items[i], items[i + 1]
            if x.size * y.size <= direct_max and x.ndim == 1 and y.ndim == 1:
                z = np.convolve(x, y, mode="full")
            elif x.size * y.size <= direct_max:
                z = _convolve_2d_direct(x, y)
            else:
                z = _fft_convolve(x, y)
                np.maximum(z, 0.0, out=z)
                z[z < 1e-15 * z.max()] = 0.0
            nxt.append(z)
        if len(items) % 2:
            nxt.append(items[-1])
        items = nxt
    return items[0]


def _convolve_2d_direct(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Full 2-D convolution of two small arrays by direct sums: each pair of rows convolved
    (``numpy.convolve``) and added at the sum of their row indices."""
    if x.shape[0] < y.shape[0]:
        x, y = y, x
    z = np.zeros((x.shape[0] + y.shape[0] - 1, x.shape[1] + y.shape[1] - 1), dtype=np.float64)
    for i in range(y.shape[0]):
        row = y[i]
        if not row.any():
            continue
        for r in range(x.shape[0]):
            z[i + r] += np.convolve(x[r], row, mode="full")
    return z


@functools.lru_cache(maxsize=512)
def _fast_len(n: int) -> int:
    """The smallest 5-smooth number (2^a 3^b 5^c) at least ``n``: a length the FFT is fast at, as
    ``scipy.fft.next_fast_len`` pads to."""
    best = 1 << max(0, (n - 1).bit_length())
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            q = p35 << max(0, (-(-n // p35) - 1).bit_length())  # times the smallest power of 2 reaching n
            best = min(best, q)
            p35 *= 3
        p5 *= 5
    return best


def _fft_convolve(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Full convolution (any dimension) through ``numpy.fft.rfftn`` / ``irfftn``, each axis padded to a
    fast length (:func:`_fast_len`) and the result cut back to the full shape."""
    full = [a + b - 1 for a, b in zip(x.shape, y.shape, strict=True)]
    shape = [_fast_len(n) for n in full]
    axes = list(range(len(shape)))
    z = np.fft.irfftn(np.fft.rfftn(x, shape, axes=axes) * np.fft.rfftn(y, shape, axes=axes), shape, axes=axes)
    return np.ascontiguousarray(z[tuple(slice(0, n) for n in full)], dtype=np.float64)


def _spectral_product(kernels: list[np.ndarray]) -> np.ndarray:
    """Full convolution of several non-negative 2-D arrays as one product of their spectra: each is
    transformed once (``numpy.fft.rfftn``) at the full shape padded to fast lengths, the spectra are
    multiplied and one inverse transform gives the result, cut back to the full shape. Round-off as in
    :func:`_convolve_all`'s FFT step: negatives clipped to 0, entries below 1e-15 of the maximum zeroed.
    The tree of pairwise FFT convolutions it replaces transformed three arrays per pair: six comparisons of
    400-2,000 tasks took 0.73 s that way, 0.62 s this way (issue 35)."""
    full = [sum(k.shape[i] - 1 for k in kernels) + 1 for i in (0, 1)]
    shape = [_fast_len(n) for n in full]
    spec = np.fft.rfftn(kernels[0], shape, axes=[0, 1])
    for k in kernels[1:]:
        spec *= np.fft.rfftn(k, shape, axes=[0, 1])
    z = np.fft.irfftn(spec, shape, axes=[0, 1])
    z = np.ascontiguousarray(z[: full[0], : full[1]], dtype=np.float64)
    np.maximum(z, 0.0, out=z)
    z[z < 1e-15 * z.max()] = 0.0
    return z


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
            table = _convolve_all(kernels, _DIRECT_2D_MAX) if (t + 1) * width <= _DIRECT_2D_MAX else \
                _spectral_product(kernels)
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
