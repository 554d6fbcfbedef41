"""Seeded simulations of ``--adaptive`` (issue 32's acceptance; run on demand, not in the suite).

Usage: ``python benchmarks/adaptive_issue32.py [--reps 2000] [--seed 32] [--tasks 30]``.

Model: ``--tasks`` tasks with base rates ``c_t ~ U(0.2, 0.8)`` (tasks differ in difficulty); agent A
solves task t at ``c_t + g/2``, B at ``c_t - g/2``; attempts are independent. Each repetition draws
fresh tasks and attempts.

* **false alarms**: g = 0, ``--adaptive`` with 5 looks (``--attempts 5``): share of repetitions where
  the pair stops with a difference at any look (:func:`pytest_homefield.report.adaptive.adaptive_pairs`,
  the run's own decision rule), against alpha = 0.05; beside it the fixed 3-attempt design's false
  alarms (the report's test, :func:`~pytest_homefield.report.stats.compare`, p < 0.05);
* **power at 20 points** of both designs;
* **the realistic mix** (half the pairs tied, half 20 points apart): attempts each design spends per
  pair (both agents, all tasks), the power on the 20-point pairs, the false alarms on the tied ones,
  and the attempts and USD saved (at ``--usd`` per attempt, default 0.50) by ``--adaptive``.

Nothing is asserted; the README quotes the figures.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pytest_homefield.report import stats
from pytest_homefield.report.adaptive import adaptive_pairs

AGENTS = [("a", "cmd:a"), ("b", "cmd:b")]


def draw(rng: np.random.Generator, t: int, gap: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """0/1 outcomes ``(t, k)`` of A and B."""
    c = rng.uniform(0.2, 0.8, t)
    pa, pb = np.clip(c + gap / 2, 0, 1), np.clip(c - gap / 2, 0, 1)
    return (rng.random((t, k)) < pa[:, None]).astype(int), (rng.random((t, k)) < pb[:, None]).astype(int)


def adaptive_one(a: np.ndarray, b: np.ndarray, looks: int) -> tuple[bool, int]:
    """(stopped with a difference, rounds run) of one pair, deciding after each round as the run does."""
    t = a.shape[0]
    recs: list[dict] = []
    for r in range(1, looks + 1):
        for i in range(t):
            for name, m in (("a", a), ("b", b)):
                recs.append({"task_id": f"t{i}", "agent": name, "attempt": r,
                             "outcome": "solved" if m[i, r - 1] else "tests_failed"})
        p = adaptive_pairs(recs, AGENTS, looks=looks, through=r, with_p=False)[0]
        if p.settled or r == looks:
            return p.why == "difference", r
    raise AssertionError("unreachable")


def fixed_one(a: np.ndarray, b: np.ndarray, k: int) -> bool:
    ta = {f"t{i}": a[i, :k].tolist() for i in range(a.shape[0])}
    tb = {f"t{i}": b[i, :k].tolist() for i in range(b.shape[0])}
    return stats.compare(ta, tb).p_value < 0.05


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--tasks", type=int, default=30)
    ap.add_argument("--looks", type=int, default=5)
    ap.add_argument("--fixed", type=int, default=3)
    ap.add_argument("--usd", type=float, default=0.50)
    ns = ap.parse_args()
    rng = np.random.default_rng(ns.seed)
    t0 = time.time()
    res: dict[float, dict[str, list]] = {}
    for gap in (0.0, 0.2):
        rows: dict[str, list] = {"ad_rej": [], "ad_rounds": [], "fx_rej": []}
        for _ in range(ns.reps):
            a, b = draw(rng, ns.tasks, gap, max(ns.looks, ns.fixed))
            rej, rounds = adaptive_one(a, b, ns.looks)
            rows["ad_rej"].append(rej)
            rows["ad_rounds"].append(rounds)
            rows["fx_rej"].append(fixed_one(a, b, ns.fixed))
        res[gap] = rows
    t = ns.tasks
    se = lambda p: (p * (1 - p) / ns.reps) ** 0.5  # noqa: E731
    fa_ad, fa_fx = np.mean(res[0.0]["ad_rej"]), np.mean(res[0.0]["fx_rej"])
    pw_ad, pw_fx = np.mean(res[0.2]["ad_rej"]), np.mean(res[0.2]["fx_rej"])
    print(f"{ns.reps} repetitions per cell, {t} tasks, base rates U(0.2, 0.8), seed {ns.seed}")
    print(f"false alarms (gap 0): adaptive {ns.looks} looks {fa_ad:.3f} ± {se(fa_ad):.3f}; "
          f"fixed {ns.fixed} attempts {fa_fx:.3f} ± {se(fa_fx):.3f} (alpha 0.05)")
    print(f"power at 20 pts: adaptive {pw_ad:.3f} ± {se(pw_ad):.3f}; fixed {pw_fx:.3f} ± {se(pw_fx):.3f}")
    for gap in (0.0, 0.2):
        r = np.array(res[gap]["ad_rounds"])
        print(f"  gap {round(100 * gap)} pts: rounds run by adaptive: mean {r.mean():.2f}, "
              + ", ".join(f"stopped at look {k}: {np.mean(r == k):.0%}" for k in range(1, ns.looks + 1)))
    ad = 2 * t * (np.mean(res[0.0]["ad_rounds"]) + np.mean(res[0.2]["ad_rounds"])) / 2
    fx = 2 * t * ns.fixed
    print(f"realistic mix (half tied, half 20 pts apart): attempts per pair fixed {fx}, adaptive {ad:.1f} "
          f"(saved {fx - ad:.1f} = {100 * (fx - ad) / fx:.0f}%, {ns.usd * (fx - ad):.2f} USD per pair at "
          f"{ns.usd:.2f} USD per attempt); power on the 20-pt pairs adaptive {pw_ad:.3f} vs fixed {pw_fx:.3f}; "
          f"false alarms on the tied pairs adaptive {fa_ad:.3f} vs fixed {fa_fx:.3f}")
    print(f"({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
