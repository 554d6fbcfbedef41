"""Seeded simulations of the ablation table's labels (issue 14), larger than the test suite runs.

Usage: ``python benchmarks/ablate_power.py [--reps 1000] [--seed 14] [--effects 1.0 1.5]``. It first prints the
power the table states (:func:`pytest_homefield.ablate.table.label_gap`). A 6-rule file, 30 tasks × 3
attempts; rule 2 helps (logit +E when present) and rule 5 hurts (logit −E); rules 1, 3, 4, 6 do
nothing. For several E it prints the true effect in points, how often rule 2 is labelled load-bearing
and rule 5 harmful (each, and both in the same repetition), and how often a null rule is labelled
load-bearing or harmful (per rule, and any of the four in one repetition). Nothing is asserted here;
``tests/ablate/test_table.py`` asserts the acceptance figures on 200 repetitions.
"""

from __future__ import annotations

import argparse
import time

from pytest_homefield.ablate.simulate import label_rates, simulate_labels
from pytest_homefield.ablate.table import HARMFUL, LOAD_BEARING, label_gap


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--tasks", type=int, default=30)
    ap.add_argument("--attempts", type=int, default=3)
    ap.add_argument("--effects", type=float, nargs="+", default=[1.0, 1.5, 1.75, 2.0], help="logit effects E")
    ns = ap.parse_args()
    gap = label_gap(ns.tasks, ns.attempts, 0.5, 0.05 / 6)
    print(f"stated power (label_gap, 80% at alpha/6, 50% base): a rule worth ±{100 * gap:.0f} pts is labelled right")
    print(f"6 rules, {ns.tasks} tasks x {ns.attempts} attempts, {ns.reps} repetitions, seed {ns.seed}; "
          "base pass@1 about 50%, task difficulty logit SD 1")
    print(f"{'logit E':>7} {'rule2 pts':>9} {'rule5 pts':>9} {'rule2 LB':>8} {'rule5 H':>8} {'both':>6} "
          f"{'null/rule':>9} {'any null':>8} {'s':>5}")
    for e in ns.effects:
        t0 = time.perf_counter()
        r = simulate_labels(n_rules=6, effects={2: e, 5: -e}, n_tasks=ns.tasks, attempts=ns.attempts,
                            repetitions=ns.reps, seed=ns.seed)
        rates = label_rates(r)
        print(f"{e:>7.2f} {100 * r.points[2]:>+9.1f} {100 * r.points[5]:>+9.1f} {r.rate(2, LOAD_BEARING):>8.1%} "
              f"{r.rate(5, HARMFUL):>8.1%} {rates['correct_real']:>6.1%} {rates['null_flagged']:>9.2%} "
              f"{rates['null_any']:>8.1%} {time.perf_counter() - t0:>5.1f}")


if __name__ == "__main__":
    main()
