"""The group-sequential test behind ``--adaptive`` (issue 32): looks after every round of attempts.

With ``--adaptive`` a run's attempts come in rounds (round r = attempt r of every task and agent) and
after each round -- a *look* -- a pair of agents may stop. Peeking after every round and stopping as
soon as a test says "significant" would raise false alarms far above alpha (five looks at 0.05 each:
about 14 %). The looks are therefore tested with a **group-sequential design with alpha spending**:

* **spending function** (Lan & DeMets 1983, "Discrete sequential boundaries for clinical trials",
  Biometrika 70:659-663, the O'Brien-Fleming type): ``alpha(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t))``,
  the two-sided alpha spent by information fraction ``t``; look r of K takes ``t = r / K`` (rounds are
  equal information, and the schedule is fixed before any data);
* **the test at each look** is the exact sequential sign test on attempt pairs: in round r, task t
  gives ``x = solved_A - solved_B`` of attempt r of each agent (when both are scored). Under the null
  (the agents are exchangeable on every task) the signs of the non-zero ``x`` are fair coins
  independent of which ``x`` are non-zero, so ``S_r = sum x`` over rounds ``<= r`` is a simple random
  walk observed after ``n_r`` discordant pairs. :func:`sign_boundaries` computes, by exact dynamic
  programming over that walk, the integer boundaries ``b_r`` (reject at look r when ``|S_r| >= b_r``)
  whose first-crossing probabilities never exceed the spending function: P(any look rejects) <= alpha
  exactly, whatever the number of discordances and whenever the pair stops (Armitage, McPherson & Rowe
  1969 recursion, here on the binomial lattice). Missing attempts (unscored) are missing pairs;
  stopping for futility only lowers the chance of rejecting ("non-binding" futility);
* **the interval** reported for a pair is the repeated confidence interval (Jennison & Turnbull 1989,
  JRSS-B 51:305-361; *Group Sequential Methods*, 2000, ch. 9): ``mean x +- c_r sd / sqrt(n)`` with
  ``sd = sqrt((discordant + 1) / (n + 1))`` (the sign-flip null's ``sqrt(mean x^2)``, which bounds the sd of
  x, add-one smoothed) and ``c_r`` the normal boundary of the same spending (:func:`normal_boundaries`,
  by numerical integration),
  which covers the gap at every look simultaneously with probability about ``1 - alpha``;
* **the p-value** is the repeated p-value (Jennison & Turnbull 2000, §9.5): the smallest alpha at which
  the design would have rejected by this look (:func:`repeated_p`); anytime-valid in the same sense.

Futility (:func:`futile`): at a look before the last, a pair stops when its repeated interval lies
inside ``+-margin`` or when the conditional power under the current trend (Lan & Wittes 1988,
Biometrics 44:579-585, the B-value) is below :data:`FUTILITY_POWER`. The gap estimated is the one on
*these* tasks (inference conditional on the task set), mean over tasks of the difference of rates.
No pytest, no I/O.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_homefield.report.distributions import Deferred, _binom_half_pmf, _check_alpha, _norm_ppf

if TYPE_CHECKING:
    import numpy as np
else:
    np = Deferred("numpy", globals(), "np")  # heavy third-party import, deferred

__all__ = ["FUTILITY_POWER", "Look", "futile", "normal_boundaries", "obf_spending", "repeated_p",
           "sign_boundaries", "look_stats"]

#: A pair stops for futility when the chance of reaching significance by the last look, were the gap
#: what it looks like now, is below this (conditional power under the current trend).
FUTILITY_POWER = 0.20


def _norm_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def obf_spending(t: float, alpha: float) -> float:
    """Two-sided alpha spent by information fraction ``t`` in [0, 1]: ``2 - 2 Phi(z_{1-alpha/2} / sqrt t)``
    (Lan & DeMets 1983, O'Brien-Fleming type); 0 at ``t = 0``, ``alpha`` at ``t = 1``. Raises
    ``ValueError`` for ``t`` outside [0, 1] or a bad alpha."""
    _check_alpha(alpha)
    if not 0.0 <= t <= 1.0:
        raise ValueError(f"information fraction must be in [0, 1], got {t!r}")
    if t == 0.0:
        return 0.0
    if t == 1.0:
        return alpha
    return 2.0 - 2.0 * _norm_cdf(_norm_ppf(1.0 - alpha / 2.0) / math.sqrt(t))


@functools.lru_cache(maxsize=256)
def normal_boundaries(looks: int, alpha: float = 0.05) -> tuple[float, ...]:
    """Two-sided z boundaries ``c_1 .. c_K`` of the O'Brien-Fleming-type spending (:func:`obf_spending`)
    for ``looks`` = K equally spaced looks: ``P(|Z_r| >= c_r`` for the first time at r) = alpha(r/K) -
    alpha((r-1)/K)`` under the null, for Brownian-motion z statistics ``Z_r = W(r)/sqrt(r)``.

    By the Armitage-McPherson-Rowe recursion on a grid (step 0.005 in the score ``W``): the density of
    ``W`` at look r restricted to the continuation region, convolved with N(0, 1) to the next look, and
    ``c_r`` by bisection on the tail it leaves. Known values (K = 5, alpha = 0.05; Jennison & Turnbull
    2000 table 7.6 / gsDesign ``sfLDOF``): 4.877, 3.357, 2.680, 2.290, 2.031. Raises ``ValueError`` for
    fewer than one look or a bad alpha."""
    _check_alpha(alpha)
    if looks < 1:
        raise ValueError(f"looks must be >= 1, got {looks!r}")
    h = 0.005
    lim = 6.0 * math.sqrt(looks) + 6.0
    grid = np.arange(-lim, lim + h / 2, h)
    kernel_x = np.arange(-8.0, 8.0 + h / 2, h)
    kernel = np.exp(-0.5 * kernel_x**2) / math.sqrt(2.0 * math.pi) * h
    dens = np.exp(-0.5 * grid**2) / math.sqrt(2.0 * math.pi)  # W(1) ~ N(0, 1)
    out: list[float] = []
    for r in range(1, looks + 1):
        if r > 1:
            dens = np.convolve(dens, kernel, mode="same")
        target = obf_spending(r / looks, alpha) - obf_spending((r - 1) / looks, alpha)
        absw = np.abs(grid)
        # U(w) = integral of the density above w (trapezoid), read between grid points by interpolation
        upper = np.concatenate([np.cumsum(((dens[1:] + dens[:-1]) / 2 * h)[::-1])[::-1], [0.0]])
        lo, hi = 0.0, 40.0  # bisection on c: the two tails beyond +-c * sqrt(r)
        for _ in range(60):
            mid = (lo + hi) / 2
            w = mid * math.sqrt(r)
            tail = float(np.interp(w, grid, upper) + (np.interp(-w, grid, upper[0] - upper)))
            if tail > target:
                lo = mid
            else:
                hi = mid
        c = _norm_ppf(1.0 - target / 2.0) if r == 1 else (lo + hi) / 2  # the first look: exactly
        out.append(c)
        dens = np.where(absw < c * math.sqrt(r), dens, 0.0)
    return tuple(out)


def sign_boundaries(discordant: Sequence[int], looks: int, alpha: float = 0.05) -> list[int]:
    """Integer boundaries ``b_1 .. b_r`` of the exact sequential sign test for the looks seen so far:
    ``discordant[l]`` is the cumulative count of non-zero attempt pairs at look ``l + 1`` (non-decreasing),
    ``looks`` the planned number K. Look l rejects when ``|S_l| >= b_l``; ``b_l`` is the smallest
    boundary whose exact first-crossing probability keeps the probability spent so far within
    ``alpha(l / K)`` (:func:`obf_spending`; what discreteness leaves unspent carries to later looks).
    A look that cannot reject gets ``n_l + 1``. Raises ``ValueError`` for decreasing or negative
    counts, more counts than looks, or a bad alpha."""
    _check_alpha(alpha)
    if len(discordant) > looks:
        raise ValueError(f"{len(discordant)} looks seen but only {looks} planned")
    prev = 0
    for n in discordant:
        if n < prev:
            raise ValueError(f"discordant counts must be non-decreasing and >= 0, got {list(discordant)}")
        prev = n
    return list(_sign_boundaries(tuple(int(n) for n in discordant), int(looks), float(alpha)))


@functools.lru_cache(maxsize=65536)
def _sign_boundaries(discordant: tuple[int, ...], looks: int, alpha: float) -> tuple[int, ...]:
    pmf = np.ones(1)  # P(S = s, not yet stopped), s = -n .. n in steps of 1 (odd/even cells stay 0)
    n_prev, spent = 0, 0.0
    out: list[int] = []
    for lk, n in enumerate(discordant, start=1):
        m = n - n_prev
        if m:
            k = np.zeros(2 * m + 1)
            k[::2] = _binom_half_pmf(m)
            pmf = np.convolve(pmf, k)
        n_prev = n
        allowed = obf_spending(lk / looks, alpha) - spent
        s = np.abs(np.arange(-n, n + 1))
        # tail[b] = P(|S| >= b, not stopped) for b = 0 .. n + 1
        by_abs = np.bincount(s, weights=pmf, minlength=n + 2)
        tail = np.cumsum(by_abs[::-1])[::-1]
        ok = np.nonzero(tail <= allowed * (1.0 + 1e-12))[0]
        b = int(ok[0]) if ok.size else n + 1
        b = max(b, 1)  # |S| >= 0 is no test
        if b <= n and (n - b) % 2:  # S has the parity of n: name the boundary |S| can take
            b += 1
        spent += float(tail[b]) if b <= n else 0.0
        out.append(b)
        pmf = np.where(s < b, pmf, 0.0)
    return tuple(out)


@dataclass(frozen=True)
class Look:
    """One pair at one look: ``look`` r of ``looks`` K; ``pairs`` attempt pairs scored (ties included),
    ``discordant`` of them non-zero, ``s`` = wins of A - wins of B, ``delta`` the mean of ``x`` (a
    fraction), ``ci`` the repeated confidence interval (fractions, inside [-1, 1]), ``p`` the repeated
    p-value, ``boundary`` the sign test's ``b_r``, ``power`` the conditional power under the current
    trend (``None`` at the last look)."""

    look: int
    looks: int
    pairs: int
    discordant: int
    s: int
    delta: float
    ci: tuple[float, float]
    p: float
    boundary: int
    power: float | None

    @property
    def rejects(self) -> bool:
        """The sign test crosses its boundary at this look."""
        return self.discordant > 0 and abs(self.s) >= self.boundary


def repeated_p(s_path: Sequence[int], discordant: Sequence[int], looks: int) -> float:
    """The repeated p-value after ``len(s_path)`` looks: the smallest alpha in (0, 1] at which
    :func:`sign_boundaries` for the counts ``discordant`` would have been crossed by ``|S_l|`` =
    ``|s_path[l]|`` at some look so far (bisection to 1e-4; 1.0 when no alpha below 1 rejects)."""
    def crossed(a: float) -> bool:
        b = sign_boundaries(discordant, looks, a)
        return any(n > 0 and abs(s) >= bb for s, n, bb in zip(s_path, discordant, b, strict=True))

    if not crossed(0.9999):
        return 1.0
    lo, hi = 0.0, 0.9999
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2
        if crossed(mid):
            hi = mid
        else:
            lo = mid
    return hi


def look_stats(rounds: Sequence[Sequence[int]], looks: int, alpha: float = 0.05, *,
               with_p: bool = True) -> list[Look]:
    """The pair's :class:`Look` after each round of ``rounds`` (round r: the ``x`` in {-1, 0, 1} of its
    attempt pairs; at most ``looks`` rounds); ``with_p=False`` leaves :attr:`Look.p` at 1.0 (a
    simulation's fast path: the repeated p is a bisection). Raises ``ValueError`` for a value outside {-1, 0, 1} or
    more rounds than looks."""
    if len(rounds) > looks:
        raise ValueError(f"{len(rounds)} rounds but only {looks} looks planned")
    c = normal_boundaries(looks, alpha)
    xs: list[int] = []
    disc: list[int] = []
    path: list[int] = []
    out: list[Look] = []
    for r, xr in enumerate(rounds, start=1):
        for x in xr:
            if x not in (-1, 0, 1):
                raise ValueError(f"attempt-pair differences are -1, 0 or 1, got {x!r}")
        xs.extend(int(x) for x in xr)
        disc.append(sum(1 for x in xs if x))
        path.append(sum(xs))
        b = sign_boundaries(disc, looks, alpha)[-1]
        n = len(xs)
        mean = path[-1] / n if n else 0.0
        # sd of x: the sign-flip null's sqrt(mean x^2) (>= the sample sd), add-one smoothed so that all
        # ties never give a zero-width interval (with 0 of n discordant, about the rule of three's 1/n)
        sd = math.sqrt((disc[-1] + 1) / (n + 1))
        half = c[r - 1] * sd / math.sqrt(max(n, 1))
        power = None
        if r < looks and disc[-1]:
            t = r / looks
            bval = path[-1] / math.sqrt(disc[-1]) * math.sqrt(t)
            drift = bval / t
            ck = c[-1]
            rest = math.sqrt(1.0 - t)
            power = _norm_cdf((abs(bval) + abs(drift) * (1.0 - t) - ck) / rest)
        elif r < looks:
            power = 0.0
        out.append(Look(look=r, looks=looks, pairs=n, discordant=disc[-1], s=path[-1], delta=mean,
                        ci=(max(-1.0, mean - half), min(1.0, mean + half)),
                        p=repeated_p(path, disc, looks) if with_p else 1.0,
                        boundary=b, power=power))
    return out


def futile(look: Look, margin: float) -> str | None:
    """Why the pair stops for futility at ``look`` (before the last), or ``None``: ``"within +-M pts"``
    when its repeated interval lies inside ``(-margin, margin)`` (``margin`` a fraction), ``"conditional
    power P%"`` when :attr:`Look.power` is below :data:`FUTILITY_POWER`."""
    if look.look >= look.looks or look.rejects:
        return None
    if -margin < look.ci[0] and look.ci[1] < margin:
        return f"interval within +-{round(100 * margin)} pts"
    if look.power is not None and look.power < FUTILITY_POWER:
        return f"conditional power {100 * look.power:.0f}%"
    return None
