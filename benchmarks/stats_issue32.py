"""Seeded simulations of issue 32's acceptance numbers (run on demand, not in the suite).

Usage: ``python benchmarks/stats_issue32.py [mde|gate|probe|all] [--reps 2000] [--seed 32]``.

* ``mde``: the MDE the report prints (:func:`pytest_homefield.report.power.detectable_gap`, at a 60 %
  base rate) at 10, 30 and 100 tasks with 1 and 3 attempts, and the power :func:`~pytest_homefield.report.stats.compare`
  actually has at that gap (share of ``--reps`` fresh seeded repetitions with p < 0.05, homogeneous
  tasks at 0.6 ± gap/2) -- the MDE holds when that power is >= 78 %; beside it the normal-approximation
  MDE (:func:`~pytest_homefield.report.stats.mde`) and its power;
* ``gate``: the rejection rate of the one-sided gate (``--fail-if-worse-than``) at Δ = 0 (identical
  agents, per-task rates U(0.2, 0.95)) and its power at Δ = −15 points (baseline U(0.3, 0.9) per task,
  candidate 15 points lower on every task), 30 tasks × 1 and × 3 attempts, and the false alarms of the
  report's two-sided test on the same identical agents;
* ``probe``: the probe's false flags (tasks flagged by Benjamini–Hochberg at 10 % FDR) among 100
  unrecited tasks with a 10- and a 40-task control (scores of both from the same distribution).

Nothing is asserted; the README quotes the figures.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from stats_sim import draw  # benchmarks/ is on sys.path when this script runs

from pytest_homefield.report import power, stats


def rejection_rate(rng: np.random.Generator, t: int, k: int, gap: float, base: float, reps: int) -> float:
    """Share of ``reps`` comparisons of homogeneous agents at base ± gap/2 with two-sided p < 0.05."""
    c = min(max(base, gap / 2), 1 - gap / 2)
    hits = 0
    for _ in range(reps):
        a, b = draw(rng, np.full(t, c + gap / 2), np.full(t, c - gap / 2), k)
        hits += stats.compare(a, b).p_value < 0.05
    return hits / reps


def mde_table(reps: int, seed: int) -> None:
    print(f"MDE at a 60% base rate, alpha 0.05, 80% target; power of compare() at it ({reps} reps each)")
    print("tasks  k   printed  power   | normal approx  power")
    rng = np.random.default_rng(seed)
    for t in (10, 30, 100):
        for k in (1, 3):
            g = power.detectable_gap(t, attempts=k, base_rate=0.6)
            p = rejection_rate(rng, t, k, g, 0.6, reps)
            n = min(1.0, stats.mde(t, base_rate=0.6, attempts=k))
            pn = rejection_rate(rng, t, k, n, 0.6, reps)
            print(f"{t:5d}  {k}  {100 * g:5.0f} pts  {100 * p:5.1f}%  | {100 * n:8.1f} pts  {100 * pn:5.1f}%")


def gate_table(reps: int, seed: int) -> None:
    print(f"\ngate (one-sided at alpha 0.05, one agent), {reps} reps each")
    print("tasks  k   fails at Δ=0   report 2-sided p<0.05 at Δ=0   fails at Δ=−15")
    rng = np.random.default_rng(seed)
    for k in (1, 3):
        null_fail = two_sided = alt_fail = 0
        for _ in range(reps):
            p = rng.uniform(0.2, 0.95, 30)
            cand, base = draw(rng, p, p, k)
            cmp = stats.compare(cand, base)
            null_fail += cmp.delta < 0 and cmp.p_worse < 0.05
            two_sided += cmp.p_value < 0.05
            pb = rng.uniform(0.3, 0.9, 30)
            cand, base = draw(rng, pb - 0.15, pb, k)
            cmp = stats.compare(cand, base)
            alt_fail += cmp.delta < 0 and cmp.p_worse < 0.05
        print(f"   30  {k}   {100 * null_fail / reps:9.2f}%   {100 * two_sided / reps:20.2f}%   "
              f"{100 * alt_fail / reps:16.1f}%")


def probe_table(reps: int, seed: int) -> None:
    from pytest_homefield.probe.verdicts import FDR, bh_flags, percentile

    print(f"\nprobe: false flags among 100 unrecited tasks (BH at {FDR:.0%} FDR; before: above the control's "
          f"95th percentile), scores Beta(2, 5), {reps} reps each")
    rng = np.random.default_rng(seed)
    for n_control in (10, 40):
        flagged = any_flag = old = 0
        for _ in range(reps):
            control = rng.beta(2, 5, n_control).tolist()
            tasks = rng.beta(2, 5, 100).tolist()
            flags = bh_flags(tasks, control)
            flagged += sum(flags)
            any_flag += any(flags)
            p95 = percentile(control) or 0.0
            old += sum(t > p95 for t in tasks)
        print(f"  control {n_control:3d} tasks: {flagged / reps:.3f} false flags per run of 100 "
              f"(a run with any flag {100 * any_flag / reps:.1f}%); 95th percentile rule {old / reps:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", default="all", choices=["mde", "gate", "probe", "all"])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=32)
    args = parser.parse_args()
    start = time.perf_counter()
    if args.what in ("mde", "all"):
        mde_table(args.reps, args.seed)
    if args.what in ("gate", "all"):
        gate_table(args.reps, args.seed)
    if args.what in ("probe", "all"):
        probe_table(args.reps, args.seed)
    print(f"\ntotal {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
