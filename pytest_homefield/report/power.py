"""Power of the report's paired test, by simulation, and the minimum detectable effect it implies (issue 32).

The normal-approximation MDE (:func:`.stats.mde`, ``2.8 * sd / sqrt(T)``) ignores the t and
discreteness corrections: at 30 tasks it printed 20.3 points where 80 % simulated power needs 21.8,
so a gap "that would usually be seen" was seen only about 70 % of the time. Here power is computed
for **the test the report actually uses** -- the exact two-sided sign-flip test on the per-task
differences, which is exact McNemar with one attempt per task -- under its exact null, by seeded
simulation of the data:

* **model**: ``T`` tasks, ``k`` attempts per task for each agent, every task at rate ``c + g/2`` for
  A and ``c - g/2`` for B, ``c`` the base rate moved inside ``[g/2, 1 - g/2]`` (homogeneous tasks: the
  most discordance for a given gap, so the MDE errs on the large side when task difficulty varies and
  both agents share it);
* **test**: per repetition the integer differences ``m_t = successes_A - successes_B``; the exact
  null of ``S = sum m_t`` given the ``|m_t|`` is the convolution of one ``v * (2 Bin(n_v, 1/2) - n_v)``
  per value ``v = |m_t|`` (Fisher 1935; the same null as :func:`.distributions.paired_permutation`),
  tabulated once per count vector ``(n_1 .. n_k)`` (cached), and the repetition rejects when
  ``P(|S'| >= |S|) < alpha`` (with one attempt this is exact McNemar; with several attempts and more
  than :data:`EXACT_MAX_NONZERO` non-zero differences the null of ``S`` is taken as normal with
  variance ``sum m_t^2``, continuity-corrected, which keeps a report fast);
* **search**: common random numbers (the same seeded uniforms for every gap); from the normal
  approximation's guess, galloping to a bracket and bisection over whole points for the smallest gap
  whose simulated power reaches the target.

Results are cached per ``(T, k, base rate to 0.01, alpha, power)`` and seeded, so a report prints
the same MDE every time. Above :data:`SIMULATE_MAX_TASKS` tasks the normal approximation with the t
correction is used instead (the discreteness no longer matters there). No pytest.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_homefield.layout import read_own_file
from pytest_homefield.report.distributions import (
    _DIRECT_1D_MAX,
    Deferred,
    _binom_half_pmf,
    _check_alpha,
    _convolve_all,
    _norm_ppf,
    _t_ppf,
    min_tasks_for_significance,
)
from pytest_homefield.store import write_atomic

if TYPE_CHECKING:
    import numpy as np
else:
    np = Deferred("numpy", globals(), "np")  # heavy third-party import, deferred

__all__ = ["DEFAULT_REPS", "PLAN_GAPS", "SIMULATE_MAX_TASKS", "KeptGaps", "detectable_gap", "gap_key", "power_at",
           "power_curve", "power_line", "results_key", "stats_code_digest"]

#: Simulated repetitions per gap (Monte Carlo SE of a power near 80 %: about 1.3 points).
DEFAULT_REPS = 1000
#: Above this many tasks the MDE is the normal approximation with the t correction.
SIMULATE_MAX_TASKS = 400
#: With several attempts, repetitions with at most this many non-zero differences use the exact null;
#: beyond it the null of ``S`` is normal with variance ``sum m_t^2`` (continuity-corrected), whose
#: tail is then within a few thousandths of the exact one.
EXACT_MAX_NONZERO = 20


def _check(n_tasks: int, attempts: int, base_rate: float, alpha: float) -> None:
    if isinstance(n_tasks, bool) or int(n_tasks) != n_tasks or n_tasks < 1:
        raise ValueError(f"n_tasks must be a positive integer, got {n_tasks!r}")
    if isinstance(attempts, bool) or int(attempts) != attempts or attempts < 1:
        raise ValueError(f"attempts must be a positive integer, got {attempts!r}")
    if not 0.0 <= base_rate <= 1.0:
        raise ValueError(f"base_rate must be in [0, 1], got {base_rate!r}")
    _check_alpha(alpha)


@functools.lru_cache(maxsize=8192)
def _tail(counts: tuple[int, ...]) -> np.ndarray:
    """``tail[s] = P(|S'| >= s)``, ``s = 0 .. sum v n_v``, under the sign-flip null of ``n_v`` tasks with
    ``|m_t| = v`` (``counts[v - 1] = n_v``)."""
    kernels = []
    for v, n in enumerate(counts, start=1):
        if n:
            k = np.zeros(2 * v * n + 1)
            k[:: 2 * v] = _binom_half_pmf(n)
            kernels.append(k)
    if not kernels:
        return np.ones(1)
    pmf = _convolve_all(kernels, _DIRECT_1D_MAX)
    w = (pmf.size - 1) // 2
    upper = np.cumsum(pmf[::-1])[::-1][w:]  # P(S' >= s), s = 0..w
    out = np.minimum(1.0, 2.0 * upper)
    out[0] = 1.0
    return out


def _successes(u: np.ndarray, rate: float, k: int) -> np.ndarray:
    """Successes of ``k`` attempts at ``rate`` by inversion of the binomial CDF at the uniforms ``u``
    (so a higher rate never gives fewer successes for the same ``u``: common random numbers)."""
    cdf = np.cumsum([math.comb(k, j) * rate**j * (1.0 - rate) ** (k - j) for j in range(k + 1)])
    cdf[-1] = 1.0
    # ``searchsorted(cdf, u, side="left")`` counts the cdf points below each uniform; with k + 1 points
    # that count is k comparisons of the whole array (the last point, 1.0, is never below a uniform in
    # [0, 1)): the same integers several times faster than a binary search per uniform (issue 35)
    out = np.zeros(u.shape, dtype=np.intp)
    for point in cdf[:-1].tolist():
        out += u > point
    return out


@functools.lru_cache(maxsize=65536)
def _critical(counts: tuple[int, ...], alpha: float) -> int:
    """The smallest ``|S|`` the exact test rejects at ``alpha`` (``P(|S'| >= |S|) < alpha``) given the
    count vector; one more than the largest possible ``|S|`` when none is rejected."""
    below = np.nonzero(_tail(counts) < alpha)[0]
    return int(below[0]) if below.size else len(_tail(counts))


class _Sim:
    """Seeded uniforms for one (T, k) and the rejection share of the exact test at any gap."""

    def __init__(self, n_tasks: int, attempts: int, reps: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.k = attempts
        self.ua = rng.random((reps, n_tasks))
        self.ub = rng.random((reps, n_tasks))

    def power(self, gap: float, base_rate: float, alpha: float) -> float:
        c = min(max(base_rate, gap / 2.0), 1.0 - gap / 2.0)
        m = _successes(self.ua, c + gap / 2.0, self.k) - _successes(self.ub, c - gap / 2.0, self.k)
        reps, k = m.shape[0], self.k
        s = np.abs(m.sum(axis=1))
        exact = np.count_nonzero(m, axis=1) <= EXACT_MAX_NONZERO
        if k == 1:
            exact[:] = True
        hits = 0
        if not exact.all():
            # many non-zero differences: the sign-flip null of S is close to normal with variance sum m_t^2
            # (half-step continuity correction: S moves in steps of 2)
            sd = np.sqrt(np.einsum("ij,ij->i", m, m)[~exact])
            hits = int(((s[~exact] - 1.0) / sd > _norm_ppf(1.0 - alpha / 2.0)).sum())
        if exact.any():
            # the count vector (n_1 .. n_k) of each such repetition: how many |m_t| equal each value
            me = np.abs(m[exact])
            keys = me + (k + 1) * np.arange(me.shape[0])[:, None]
            counts = np.bincount(keys.ravel(), minlength=me.shape[0] * (k + 1)).reshape(-1, k + 1)[:, 1:]
            rows, which = np.unique(counts, axis=0, return_inverse=True)
            crit = np.array([_critical(tuple(r), alpha) for r in rows.tolist()])
            hits += int((s[exact] >= crit[which.ravel()]).sum())
        return float(hits / reps)


@functools.lru_cache(maxsize=16)
def _sim(n_tasks: int, attempts: int, reps: int, seed: int) -> _Sim:
    return _Sim(n_tasks, attempts, reps, seed)


def power_at(gap: float, n_tasks: int, *, attempts: int = 1, base_rate: float = 0.5, alpha: float = 0.05,
             reps: int = DEFAULT_REPS, seed: int = 0) -> float:
    """Simulated power (share of ``reps`` seeded repetitions, in [0, 1]) of the exact two-sided sign-flip
    test at ``alpha`` to detect a gap of ``gap`` (fraction, 0.1 = 10 points) between two agents on
    ``n_tasks`` tasks with ``attempts`` attempts each, around ``base_rate`` (module docstring).

    Raises ``ValueError`` for a gap outside [0, 1], fewer than one task, attempt or repetition, a
    base rate outside [0, 1] or a bad alpha."""
    _check(n_tasks, attempts, base_rate, alpha)
    if not 0.0 <= gap <= 1.0:
        raise ValueError(f"gap must be in [0, 1], got {gap!r}")
    if reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps!r}")
    return _sim(int(n_tasks), int(attempts), int(reps), int(seed)).power(float(gap), float(base_rate), alpha)


def power_curve(gaps: tuple[float, ...], n_tasks: int, *, attempts: int = 1, base_rate: float = 0.5,
                alpha: float = 0.05, reps: int = DEFAULT_REPS, seed: int = 0) -> list[float]:
    """:func:`power_at` for each of ``gaps`` (fractions), with the same seeded draws."""
    return [power_at(g, n_tasks, attempts=attempts, base_rate=base_rate, alpha=alpha, reps=reps, seed=seed)
            for g in gaps]


class KeptGaps:
    """What an earlier report of a run computed, kept in the run folder's ``mde.json`` (docs/contracts.md
    §4): ``{"version": 1, "gaps": {"<T> <k> <base rate> <alpha> <power> <reps> <seed>": gap},
    "results": {key: value}}``, so that a report of the same run does not compute it again.

    * ``gaps``: simulated MDEs (the simulation and numpy's random module were a tenth of a 100-task
      report, issue 35). A gap is a pure function of its key (:data:`VERSION` names the simulation): an
      entry that is no whole number of points in (0, 1] is ignored.
    * ``results`` (left out when empty): the comparisons and pass@1 intervals of the last report
      (:meth:`recall`, :meth:`keep`), each under the SHA-256 of its inputs and of the code that computes
      it (:func:`stats_code_digest`), so that a second report of the same results imports no numpy
      (0.1-0.2 s of CPU, issue 35) and a changed line of that code computes them again. :meth:`save`
      writes only the entries this report recalled or kept.

    An unreadable or foreign file is ignored. :meth:`save` rewrites the file atomically when something
    changed; never raises for a folder that cannot be written."""

    VERSION = 1

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.gaps: dict[str, float] = {}
        self.results: dict[str, Any] = {}
        self._used: set[str] = set()
        self._dirty = False
        if path is None:
            return
        try:
            data = json.loads(read_own_file(path))  # never a link, a fifo or a huge file (hatk41)
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("version") == self.VERSION and isinstance(data.get("gaps"), dict):
            self.gaps = {k: float(v) for k, v in data["gaps"].items() if isinstance(k, str) and _whole_points(v)}
            if isinstance(data.get("results"), dict):
                self.results = {k: v for k, v in data["results"].items() if isinstance(k, str)}

    def get(self, key: str) -> float | None:
        """The kept gap of ``key`` (:func:`gap_key`), or ``None``."""
        return self.gaps.get(key)

    def put(self, key: str, gap: float) -> None:
        """Keep ``gap`` under ``key``."""
        if self.gaps.get(key) != gap:
            self.gaps[key] = gap
            self._dirty = True

    def recall(self, inputs: list[Any]) -> Any | None:
        """The kept value computed from ``inputs`` (a JSON-able list naming the function first and
        holding every argument it depends on), or ``None``: the caller checks its shape."""
        key = results_key(inputs)
        if key is None or key not in self.results:
            return None
        self._used.add(key)
        return self.results[key]

    def keep(self, inputs: list[Any], value: Any) -> None:
        """Keep ``value`` (JSON-able; floats come back bit for bit) as computed from ``inputs``."""
        key = results_key(inputs)
        if key is None:
            return
        self._used.add(key)
        if self.results.get(key) != value:
            self.results[key] = value
            self._dirty = True

    def save(self) -> None:
        """Write the file when a gap or a result was added, or a kept result went unused."""
        if self.path is None or not (self._dirty or self._used != set(self.results)):
            return
        self.results = {k: v for k, v in self.results.items() if k in self._used}
        data: dict[str, Any] = {"version": self.VERSION, "gaps": self.gaps}
        if self.results:
            data["results"] = self.results
        try:
            write_atomic(self.path, json.dumps(data, sort_keys=True) + "\n")
        except OSError:
            return
        self._dirty = False


#: The modules whose code decides a kept result (:meth:`KeptGaps.recall`), relative to the package.
_STATS_CODE = ("report/stats.py", "report/distributions.py", "report/quantiles.py", "report/rates.py",
               "report/power.py", "report/verdicts.py", "terminal/progress.py")


@functools.cache
def stats_code_digest() -> str | None:
    """SHA-256 (hex) of the Python version, numpy's version file and the source of :data:`_STATS_CODE`:
    what a kept comparison or interval depends on besides its inputs; ``None`` (nothing is kept) when a
    file cannot be read. Reads about 90 kB, without importing numpy."""
    digest = hashlib.sha256(sys.version.encode())
    package = Path(__file__).resolve().parent.parent
    try:
        for rel in _STATS_CODE:
            digest.update((package / rel).read_bytes())
        spec = importlib.util.find_spec("numpy")
        if spec is None or spec.origin is None:
            return None
        digest.update((Path(spec.origin).parent / "version.py").read_bytes())
    except (OSError, ImportError, ValueError):
        return None
    return digest.hexdigest()


def results_key(inputs: list[Any]) -> str | None:
    """The :class:`KeptGaps` key of a result computed from ``inputs``: its function's name and the
    SHA-256 of the inputs and :func:`stats_code_digest`; ``None`` without a digest."""
    code = stats_code_digest()
    if code is None:
        return None
    text = json.dumps([code, inputs], separators=(",", ":"))
    return f"{inputs[0]} {hashlib.sha256(text.encode()).hexdigest()[:32]}"


def _whole_points(v: object) -> bool:
    """Whether ``v`` is a gap :func:`detectable_gap` can return: a whole number of points in (0, 1]."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    return 0.0 < v <= 1.0 and abs(v * 100 - round(v * 100)) < 1e-9


def gap_key(n_tasks: int, attempts: int, base_rate: float, alpha: float, power: float, reps: int, seed: int) -> str:
    """The :class:`KeptGaps` key of :func:`detectable_gap`'s arguments (base rate to 0.01, as cached)."""
    return f"{int(n_tasks)} {int(attempts)} {round(float(base_rate), 2):.2f} {float(alpha)!r} {float(power)!r} " \
           f"{int(reps)} {int(seed)}"


def detectable_gap(n_tasks: int, *, attempts: int = 1, base_rate: float = 0.5, alpha: float = 0.05,
                   power: float = 0.8, reps: int = DEFAULT_REPS, seed: int = 0, kept: KeptGaps | None = None) -> float:
    """The minimum detectable effect (fraction, a whole number of points): the smallest gap whose
    simulated power (:func:`power_at`) reaches ``power``; 1.0 when even a 100-point gap does not (fewer
    tasks than :func:`.distributions.min_tasks_for_significance`).

    Above :data:`SIMULATE_MAX_TASKS` tasks: ``(t_{1-alpha/2, T-1} + z_power) * sd / sqrt(T)`` with
    ``sd = sqrt(2 p (1 - p) / k)`` (Chow, Shao & Wang, *Sample Size Calculations*, §3.2). Cached per
    ``(T, k, base rate to 0.01, alpha, power, reps, seed)``.

    ``kept``: gaps simulated earlier (a run folder's ``mde.json``): a simulated gap is taken from it, or
    simulated and put there.

    Raises ``ValueError`` as :func:`power_at` does, and for a power outside (0, 1)."""
    _check(n_tasks, attempts, base_rate, alpha)
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    simulated = min_tasks_for_significance(alpha) <= n_tasks <= SIMULATE_MAX_TASKS
    key = gap_key(n_tasks, attempts, base_rate, alpha, power, reps, seed) if kept is not None and simulated else None
    if key is not None and kept is not None and (gap := kept.get(key)) is not None:
        return gap
    gap = _detectable(int(n_tasks), int(attempts), round(float(base_rate), 2), float(alpha), float(power),
                      int(reps), int(seed))
    if key is not None and kept is not None:
        kept.put(key, gap)
    return gap


@functools.lru_cache(maxsize=256)
def _detectable(n_tasks: int, attempts: int, base_rate: float, alpha: float, power: float, reps: int,
                seed: int) -> float:
    if n_tasks < min_tasks_for_significance(alpha):
        return 1.0
    if n_tasks > SIMULATE_MAX_TASKS:
        p = min(max(base_rate, 0.05), 0.95)
        sd = math.sqrt(2.0 * p * (1.0 - p) / attempts)
        z = _t_ppf(1.0 - alpha / 2.0, n_tasks - 1) + _norm_ppf(power)
        return min(1.0, math.ceil(100.0 * z * sd / math.sqrt(n_tasks)) / 100.0)
    sim = _sim(n_tasks, attempts, reps, seed)

    def reaches(points: int) -> bool:
        return sim.power(points / 100.0, base_rate, alpha) >= power

    # bracket from the normal approximation's guess (galloping), then bisect: usually 3-5 evaluations
    p = min(max(base_rate, 0.05), 0.95)
    guess = (_t_ppf(1.0 - alpha / 2.0, n_tasks - 1) + _norm_ppf(power)) * math.sqrt(2.0 * p * (1.0 - p) / attempts)
    start = min(100, max(1, math.ceil(100.0 * guess / math.sqrt(n_tasks))))
    step = 1
    if reaches(start):
        lo, hi = start - 1, start  # power(lo) < target <= power(hi); 0 points: power is about alpha
        while lo > 0 and reaches(lo):
            hi, lo, step = lo, max(0, lo - 2 * step), 2 * step
    else:
        lo, hi = start, min(100, start + 1)
        while not reaches(hi):
            if hi == 100:
                return 1.0
            lo, hi, step = hi, min(100, hi + 2 * step), 2 * step
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if reaches(mid):
            hi = mid
        else:
            lo = mid
    return hi / 100.0


#: The gaps ``homefield plan`` states the power against (fractions: 5, 10, 20 points).
PLAN_GAPS = (0.05, 0.10, 0.20)


def power_line(n_tasks: int, attempts: int, *, alpha: float = 0.05, base_rate: float = 0.5) -> str:
    """The sentence ``homefield plan`` prints before anything is spent: the simulated power of the
    report's paired test against gaps of 5, 10 and 20 points (:data:`PLAN_GAPS`) and the gap it sees
    with 80 % power, for ``n_tasks`` tasks × ``attempts`` attempts at ``base_rate`` (50 %, the most
    noise, unless known). E.g. ``Power to see a gap between two agents (30 tasks × 3 attempts, 50% base
    rate, exact paired test at alpha 0.05): 5 pts 7%, 10 pts 19%, 20 pts 70%; 80% power from 23 pts.``"""
    head = (f"Power to see a gap between two agents ({n_tasks} task{'s' if n_tasks != 1 else ''} × {attempts} "
            f"attempt{'s' if attempts != 1 else ''}, {100 * base_rate:.0f}% base rate, exact paired test at "
            f"alpha {alpha:g}): ")
    if n_tasks < min_tasks_for_significance(alpha):
        return head + f"none: with fewer than {min_tasks_for_significance(alpha)} tasks no gap can reach p<{alpha:g}."
    powers = power_curve(PLAN_GAPS, n_tasks, attempts=attempts, base_rate=base_rate, alpha=alpha)
    curve = ", ".join(f"{round(100 * g)} pts {100 * p:.0f}%" for g, p in zip(PLAN_GAPS, powers, strict=True))
    gap = detectable_gap(n_tasks, attempts=attempts, base_rate=base_rate, alpha=alpha)
    return head + curve + f"; 80% power from {round(100 * gap)} pts."
