"""Seeded simulations of :mod:`pytest_homefield.report.stats` at larger sizes than the test suite runs.

Usage: ``python benchmarks/stats_sim.py [--reps 2000] [--seed 1]``. Prints, for 30 tasks x k attempts:
false-alarm rates, power, the analytic vs simulated minimum detectable effect, CI coverage under several
task models, and the run time of :func:`~pytest_homefield.report.stats.compare` for larger task counts. Nothing
here is asserted; ``tests/test_stats.py`` asserts the acceptance numbers on smaller runs.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from pytest_homefield.report import stats

Outcomes = dict[str, list[int]]
#: A task model: rng, number of tasks -> (A's per-task rates, B's per-task rates, population gap A - B).
Model = Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray, float]]


def draw(rng: np.random.Generator, pa: np.ndarray, pb: np.ndarray, k: int) -> tuple[Outcomes, Outcomes]:
    """Outcomes of k attempts per task: A (B) solves task t with probability pa[t] (pb[t])."""
    t = len(pa)
    xa = (rng.random((t, k)) < pa[:, None]).astype(int)
    xb = (rng.random((t, k)) < pb[:, None]).astype(int)
    ids = [f"t{i}" for i in range(t)]
    return dict(zip(ids, xa.tolist(), strict=True)), dict(zip(ids, xb.tolist(), strict=True))


def identical(rng: np.random.Generator, t: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Same per-task rates U(0.2, 0.95) for both agents (v0.2's false-alarm setup)."""
    p = rng.uniform(0.2, 0.95, t)
    return p, p, 0.0


def shift(gap: float) -> Model:
    """Varying difficulty U(0.2, 0.8) for B, A better by ``gap`` on every task."""

    def model(rng: np.random.Generator, t: int) -> tuple[np.ndarray, np.ndarray, float]:
        pb = rng.uniform(0.2, 0.8, t)
        return pb + gap, pb, gap

    return model


def task_specific(rng: np.random.Generator, t: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Shared difficulty U(0.2, 0.8) and a task-specific gap U(-0.1, 0.3) (mean 0.1)."""
    base = rng.uniform(0.2, 0.8, t)
    eff = rng.uniform(-0.1, 0.3, t)
    return base + eff / 2, base - eff / 2, 0.1


def independent(rng: np.random.Generator, t: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Unrelated difficulties: A ~ U(0.3, 1.0), B ~ U(0.1, 0.8) per task (population gap 0.2)."""
    return rng.uniform(0.3, 1.0, t), rng.uniform(0.1, 0.8, t), 0.2


def run(model: Model, k: int, reps: int, seed: int, t: int = 30) -> tuple[float, float]:
    """(share of repetitions with p < 0.05, CI coverage of the population gap)."""
    rng = np.random.default_rng(seed)
    rejected = covered = 0
    for _ in range(reps):
        pa, pb, gap = model(rng, t)
        cmp = stats.compare(*draw(rng, pa, pb, k))
        rejected += cmp.p_value < 0.05
        covered += cmp.ci[0] <= gap <= cmp.ci[1]
    return rejected / reps, covered / reps


def homogeneous(pa: float, pb: float) -> Model:
    """Every task has rate ``pa`` for A and ``pb`` for B."""

    def model(rng: np.random.Generator, t: int) -> tuple[np.ndarray, np.ndarray, float]:
        return np.full(t, pa), np.full(t, pb), pa - pb

    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    reps, seed = args.reps, args.seed
    start = time.perf_counter()

    print(f"30 tasks, {reps} repetitions per row, seed {seed}\n")
    print("model                              k  p<0.05   CI coverage")
    rows: list[tuple[str, Model]] = [
        ("identical, U(0.2, 0.95)", identical),
        ("shift +10 pts, U(0.2, 0.8)", shift(0.1)),
        ("shift +20 pts, U(0.2, 0.8)", shift(0.2)),
        ("task-specific gaps, mean +10", task_specific),
        ("independent difficulties, +20", independent),
        ("0.9 vs 0.4", homogeneous(0.9, 0.4)),
        ("0.75 vs 0.60 (v0.2: 'half')", homogeneous(0.75, 0.60)),
    ]
    for name, model in rows:
        for k in (1, 3):
            rej, cov = run(model, k, reps, seed)
            print(f"{name:34s} {k}  {rej:6.3f}   {cov:6.3f}")

    print("\nMDE at a 60% base rate, 30 tasks x 3 attempts (A = 0.6 + g/2, B = 0.6 - g/2)")
    gaps = np.arange(0.12, 0.32, 0.02)
    powers = [run(homogeneous(0.6 + g / 2, 0.6 - g / 2), 3, reps // 2, seed)[0] for g in gaps]
    for g, p in zip(gaps, powers, strict=True):
        print(f"  gap {100 * g:4.0f} pts: power {p:.3f}")
    analytic = stats.mde(30, base_rate=0.6, attempts=3)
    print(
        f"  analytic mde {100 * analytic:.1f} pts; simulated 80% power at {100 * np.interp(0.8, powers, gaps):.1f} pts"
    )

    print("\ncompare() run time (A 0.6, B 0.5, homogeneous)")
    rng = np.random.default_rng(seed)
    for t, k in [(30, 1), (30, 3), (100, 3), (300, 3), (300, 5), (1000, 3), (2000, 1)]:
        a, b = draw(rng, np.full(t, 0.6), np.full(t, 0.5), k)
        t0 = time.perf_counter()
        cmp = stats.compare(a, b)
        took = time.perf_counter() - t0
        print(f"  {t:5d} tasks x {k}: {1000 * took:7.1f} ms  exact={cmp.exact}  {cmp.verdict}")
    print(f"\ntotal {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
