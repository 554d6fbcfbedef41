"""A simulated ablation, for the statistics acceptance test and ``benchmarks/ablate_power.py``.

Model (seeded, numpy PCG64): ``n_tasks`` tasks with difficulties on the logit scale drawn from
``N(logit(base_rate), task_sd)``; an attempt of a variant solves its task with probability
``sigmoid(difficulty + sum of the logit effects of the rules present)``, independently. The file has
``n_rules`` rules; ``effects`` maps a rule number to its logit effect when present (positive: the
rule helps, so removing it hurts; negative: the rule hurts). Base has every rule; ``rule-N`` lacks
rule N. Outcomes go through :func:`pytest_homefield.ablate.table.rule_effects`, the code the real
table uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pytest_homefield.ablate.table import HARMFUL, LOAD_BEARING, NO_EFFECT, label_for, rule_effects

__all__ = ["SimulationResult", "simulate_labels", "label_rates"]


@dataclass(frozen=True)
class SimulationResult:
    """Per repetition, the label of each rule: ``labels[rep][rule - 1]``; the logit ``effects``; and
    ``points``: each rule's true effect on pass@1 (base − without, fraction), averaged over the
    simulated task sets; ``base_rate``: base's true pass@1, averaged likewise."""

    labels: list[list[str]]
    effects: dict[int, float]
    points: dict[int, float]
    base_rate: float

    def rate(self, rule: int, label: str) -> float:
        """Share of repetitions in which ``rule`` got ``label``."""
        return sum(1 for rep in self.labels if rep[rule - 1] == label) / len(self.labels)


def simulate_labels(*, n_rules: int = 6, effects: Mapping[int, float] | None = None, n_tasks: int = 30,
                    attempts: int = 3, repetitions: int = 200, base_rate: float = 0.5, task_sd: float = 1.0,
                    seed: int = 14, alpha: float = 0.05) -> SimulationResult:
    """Labels over ``repetitions`` simulated ablations (see the module docstring)."""
    eff = dict(effects if effects is not None else {2: 1.5, 5: -1.5})
    rng = np.random.default_rng(seed)
    shift = np.zeros(n_rules + 1)  # index 0: base (all rules), i: without rule i
    present_sum = sum(eff.values())
    shift[0] = present_sum
    for i in range(1, n_rules + 1):
        shift[i] = present_sum - eff.get(i, 0.0)
    logit0 = float(np.log(base_rate / (1 - base_rate)))
    tasks = [f"t{i}" for i in range(n_tasks)]
    labels: list[list[str]] = []
    true_rates = np.zeros(n_rules + 1)
    for _ in range(repetitions):
        difficulty = rng.normal(logit0, task_sd, size=n_tasks)
        # centre so that base (every rule present) solves at about base_rate
        p = 1.0 / (1.0 + np.exp(-(difficulty[None, :] + shift[:, None] - shift[0])))
        true_rates += p.mean(axis=1) / repetitions
        draws = (rng.random((n_rules + 1, n_tasks, attempts)) < p[:, :, None]).astype(int)
        base = {t: draws[0, j].tolist() for j, t in enumerate(tasks)}
        without = {i: {t: draws[i, j].tolist() for j, t in enumerate(tasks)} for i in range(1, n_rules + 1)}
        cmps = rule_effects(base, without, alpha=alpha)
        labels.append([label_for(cmps[i]) if i in cmps else NO_EFFECT for i in range(1, n_rules + 1)])
    points = {i: float(true_rates[0] - true_rates[i]) for i in range(1, n_rules + 1)}
    return SimulationResult(labels, eff, points, float(true_rates[0]))


def label_rates(result: SimulationResult) -> dict[str, float]:
    """``correct_real``: share of repetitions where every rule with an effect got its right label;
    ``null_flagged``: share of (repetition, null rule) pairs labelled load-bearing or harmful;
    ``null_any``: share of repetitions where any null rule was so labelled."""
    real = {n: (LOAD_BEARING if e > 0 else HARMFUL) for n, e in result.effects.items() if e != 0}
    n_rules = len(result.labels[0])
    nulls = [n for n in range(1, n_rules + 1) if n not in real]
    reps = len(result.labels)
    correct = sum(all(rep[n - 1] == lab for n, lab in real.items()) for rep in result.labels) / reps
    flagged = [rep[n - 1] != NO_EFFECT for rep in result.labels for n in nulls]
    any_null = sum(any(rep[n - 1] != NO_EFFECT for n in nulls) for rep in result.labels) / reps
    return {"correct_real": correct, "null_flagged": sum(flagged) / max(1, len(flagged)), "null_any": any_null}
