"""The ablation plan: what would run and what it would cost, printed before anything is spent (issue 14).

Agent runs = tasks × agents × attempts × (rules + 1) for base and the per-rule variants, plus at most
tasks × agents × attempts for the slimmer file afterwards. Seconds and USD per run come, per agent,
from ``--seconds-per-run`` / ``--cost-per-run`` when given (an explicit figure wins), else from the
mean of that agent's earlier scored attempts in ``.homefield/runs/`` and ``.homefield/ablate/``
(:func:`pytest_homefield.run.cost.history_averages`, matched by spec, then name); with neither
the figure is "unknown", never a guess. Hours at ``-n N`` are the sequential hours / N (an ideal
spread; the slowest attempt bounds it from below).

The plan also says how large an effect this task set could see: the minimum detectable effect of one
rule at 80 % power with the Bonferroni level alpha / rules (Holm's first step), at a 50 % base rate
(:func:`pytest_homefield.report.power.detectable_gap`, simulated), and warns when too few tasks exist for any rule to
reach significance after the adjustment.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_homefield.ablate.rules import RuleSet
from pytest_homefield.ablate.tokens import count_tokens, tokenizer_name
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.report.family import REFERENCE_KINDS
from pytest_homefield.report.power import detectable_gap
from pytest_homefield.run.cost import history_averages
from pytest_homefield.settings import Settings
from pytest_homefield.settings_table import option
from pytest_homefield.shard import parse_shard

__all__ = ["AgentEstimate", "AblationPlan", "make_plan", "plan_lines", "merged_history", "min_tasks_for",
           "build_plan", "workers_from"]


@dataclass
class AgentEstimate:
    """One agent: ``name``, ``spec``, the snapshot path it reads its rules from (``rules_path``), its
    agent ``runs`` (per-rule phase) and ``slim_runs`` (at most), seconds and USD per run (``None`` =
    unknown) and where they came from (``basis``)."""

    name: str
    spec: str
    rules_path: str
    runs: int
    slim_runs: int
    s_per_run: float | None
    usd_per_run: float | None
    basis: str

    @property
    def seconds(self) -> float | None:
        """Sequential seconds of the base and per-rule runs, or ``None``."""
        return None if self.s_per_run is None else self.runs * self.s_per_run

    @property
    def usd(self) -> float | None:
        """USD of the base and per-rule runs, or ``None``."""
        return None if self.usd_per_run is None else self.runs * self.usd_per_run


@dataclass
class AblationPlan:
    """Everything the plan prints (see the module docstring)."""

    rules_file: str
    rules: RuleSet
    n_tasks: int
    attempts: int
    workers: int
    agents: list[AgentEstimate] = field(default_factory=list)
    budget_usd: float | None = None
    alpha: float = 0.05

    @property
    def n_variants(self) -> int:
        """base + one per rule (the slimmer file comes later)."""
        return len(self.rules.rules) + 1

    @property
    def runs(self) -> int:
        return sum(a.runs for a in self.agents)

    @property
    def slim_runs(self) -> int:
        return sum(a.slim_runs for a in self.agents)

    @property
    def seconds(self) -> float | None:
        """Sequential seconds of the base and per-rule runs of every agent; ``None`` if any is unknown."""
        s = [a.seconds for a in self.agents]
        return None if any(x is None for x in s) else float(sum(x for x in s if x is not None))

    @property
    def usd(self) -> float | None:
        """USD of the base and per-rule runs of every agent; ``None`` if any is unknown."""
        u = [a.usd for a in self.agents]
        return None if any(x is None for x in u) else float(sum(x for x in u if x is not None))

    @property
    def slim_fraction(self) -> float:
        """The slimmer file's runs (at most) over the per-rule runs: its time and cost scale the same."""
        return self.slim_runs / self.runs if self.runs else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON primitives (saved in ``plan.json`` under ``estimate``)."""
        return {
            "rules_file": self.rules_file, "rules": len(self.rules.rules), "by_section": self.rules.by_section,
            "tasks": self.n_tasks, "attempts": self.attempts, "variants": self.n_variants, "workers": self.workers,
            "runs": self.runs, "slim_runs_at_most": self.slim_runs, "seconds": self.seconds, "usd": self.usd,
            "agents": [dict(a.__dict__) for a in self.agents],
        }


def merged_history(home: HomefieldDir) -> dict[str, dict[str, float | int]]:
    """Per-agent means over earlier runs (``runs/``) and ablations (``ablate/``), weighted by attempts: the
    agent's ``wall_s``, the grading's ``test_s`` and ``cost_usd`` (``nan`` when unknown)."""
    parts = [history_averages(home.runs), history_averages(home.ablate)]
    out: dict[str, dict[str, float | int]] = {}

    def mean(rows: list[dict[str, float | int]], key: str) -> float:
        known = [(float(r[key]), int(r["n"])) for r in rows if r.get(key, float("nan")) == r.get(key, float("nan"))]
        return sum(v * k for v, k in known) / sum(k for _, k in known) if known else float("nan")

    for key in set(parts[0]) | set(parts[1]):
        rows = [p[key] for p in parts if key in p]
        out[key] = {"wall_s": mean(rows, "wall_s"), "test_s": mean(rows, "test_s"), "cost_usd": mean(rows, "cost_usd"),
                    "n": sum(int(r["n"]) for r in rows)}
    return out


def make_plan(*, rules_file: str, rules: RuleSet, n_tasks: int, agents: Sequence[tuple[str, str, str]],
              attempts: int, workers: int, history: Mapping[str, Mapping[str, float | int]],
              seconds_per_run: float | None = None, cost_per_run: float | None = None,
              budget_usd: float | None = None) -> AblationPlan:
    """The plan for ``agents`` given as ``(name, spec, rules path in the snapshot)``."""
    plan = AblationPlan(rules_file, rules, n_tasks, attempts, max(1, workers), budget_usd=budget_usd)
    n_var = len(rules.rules) + 1
    for name, spec, path in agents:
        h = history.get(spec) or history.get(name)
        # a run's time is its agent's and its grading's (stamina, nu25: oracle "per run 0 s", "1 min" planned
        # for an ablation of 70 runs that took 4m41s, their tests about 2 s each)
        grading = float(h.get("test_s", float("nan"))) if h else float("nan")
        grading = grading if grading == grading else 0.0
        wall = float(h["wall_s"]) + grading if h else None
        cost = float(h["cost_usd"]) if h and h["cost_usd"] == h["cost_usd"] else None
        basis = []
        if seconds_per_run is not None:
            wall = seconds_per_run
        if cost_per_run is not None:
            cost = cost_per_run
        if h:
            basis.append(f"{int(h['n'])} earlier attempts" + (
                f": agent {float(h['wall_s']):.0f} s + grading {grading:.0f} s" if grading and seconds_per_run is None
                else ""))
        if seconds_per_run is not None or cost_per_run is not None:
            basis.append(f"{option('seconds-per-run')}/{option('cost-per-run')}")
        plan.agents.append(AgentEstimate(name, spec, path, n_tasks * attempts * n_var, n_tasks * attempts, wall, cost,
                                         "; ".join(basis) or "no earlier runs"))
    return plan


def min_tasks_for(alpha: float) -> int:
    """Fewest tasks whose exact two-sided sign-flip p (2 / 2**T, every task moving the same way) is below
    ``alpha``."""
    return max(1, math.floor(math.log2(2.0 / alpha)) + 1)


def _hours(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{max(1, round(seconds / 60))} min"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _blind(a: AgentEstimate) -> bool:
    """An agent that never reads a rules file: the reference agents, and openai: (prompt and files only)."""
    return a.spec.split(":", 1)[0] in REFERENCE_KINDS | {"openai"}


def plan_lines(plan: AblationPlan, *, will_run: bool) -> list[str]:
    """The plan as printed (``homefield ablate`` and ``pytest --homefield-ablate``)."""
    n_rules = len(plan.rules.rules)
    unit = "section" if plan.rules.by_section else "rule"
    lines = [f"Ablation plan for {plan.rules_file}: {n_rules} {unit}{'s' if n_rules != 1 else ''}, "
             f"{plan.n_tasks} task{'s' if plan.n_tasks != 1 else ''}, {len(plan.agents)} "
             f"agent{'s' if len(plan.agents) != 1 else ''}, {plan.attempts} attempt{'s' if plan.attempts != 1 else ''} "
             f"each, {plan.n_variants} variants (base + one without each {unit})"]
    for r in plan.rules.rules:
        lines.append(f"  {r.number:>3}. {r.label.split('. ', 1)[1]:<62} {str(count_tokens(r.text)):>6} tokens")
    lines.append(f"  (tokens per turn, counted with {tokenizer_name()})")
    for a in plan.agents:
        s = "unknown" if a.s_per_run is None else f"{a.s_per_run:.0f} s"
        u = "unknown" if a.usd_per_run is None else f"${a.usd_per_run:.4f}"
        spec = a.spec if len(a.spec) <= 48 else a.spec[:47] + "…"
        # a reference or openai: agent is given the file too but never reads it (nu25: "agent oracle (oracle) reads
        # CLAUDE.md" above a note that it reads no rules file)
        reads = "reads no rules file" if _blind(a) else f"reads {a.rules_path}"
        lines.append(f"  agent {a.name} ({spec}) {reads}: {a.runs} runs + up to {a.slim_runs} "
                     f"for the slimmer file; per run {s}, {u} ({a.basis})")
    blind = [a.name for a in plan.agents if _blind(a)]
    if blind:
        lines.append(f"Note: {', '.join(blind)}: {'read' if len(blind) > 1 else 'reads'} no rules file (the reference "
                     "agents apply or skip the fix; openai: is sent the prompt and files only), so "
                     f"{'their' if len(blind) > 1 else 'its'} rows can show no effect")
    lines.append(f"Agent runs: {plan.runs} (+ up to {plan.slim_runs} for the slimmer file, after the per-{unit} "
                 "results)")
    sec = plan.seconds
    par = "unknown" if sec is None else _hours(sec / plan.workers)
    usd = "USD unknown" if plan.usd is None else f"${plan.usd:.2f}"
    why = []
    if sec is None:
        why.append(f"time: no earlier runs of an agent and no {option('seconds-per-run')}")
    if plan.usd is None:
        why.append(f"cost: no earlier runs with a cost and no {option('cost-per-run')}")
    lines.append(f"Estimated: {_hours(sec)} sequential, {par} at -n {plan.workers}; {usd}"
                 + (f" ({'; '.join(why)})" if why else ""))
    if sec is not None or plan.usd is not None:
        f = plan.slim_fraction
        extra = [_hours(sec * f) if sec is not None else "", f"${plan.usd * f:.2f}" if plan.usd is not None else ""]
        lines.append(f"The slimmer file adds up to {', '.join(x for x in extra if x)}.")
    if plan.budget_usd is not None:
        lines.append(f"Budget: ${plan.budget_usd:.2f}: no attempt starts once it is spent (resume later)")
    level = plan.alpha / max(1, n_rules)
    need = min_tasks_for(level)
    if plan.n_tasks < need:
        lines.append(f"Warning: with {plan.n_tasks} tasks no {unit} can reach significance after the Holm "
                     f"adjustment over {n_rules} (at least {need} tasks are needed): every label will be "
                     "'no detectable effect'")
    elif plan.n_tasks:
        gap = detectable_gap(plan.n_tasks, base_rate=0.5, attempts=plan.attempts, alpha=level)
        lines.append(f"Sensitivity: effects under about {min(100, round(100 * gap))} pts will usually read 'no "
                     f"detectable effect' with {_plural(plan.n_tasks, 'task')} × {_plural(plan.attempts, 'attempt')} "
                     f"(80% simulated power at a 50% solve rate, alpha {plan.alpha:g}/{n_rules})")
    if not will_run:
        lines.append(f"Nothing run. Re-run with {option('yes')} to start "
                     f"(continue a stopped ablation with {option('resume')}).")
    return lines


def workers_from(value: object) -> int:
    """Workers for ``-n VALUE`` (``auto``/``logical`` = CPUs; none or 0 = 1)."""
    if value in (None, "", 0, "0"):
        return 1
    if str(value) in ("auto", "logical"):
        return os.cpu_count() or 1
    try:
        return max(1, int(str(value)))
    except ValueError:
        return 1


def build_plan(settings: Settings, rel: str, rules: RuleSet, n_tasks: int, rows: list[tuple[str, str, str]],
               workers: int) -> AblationPlan:
    """The :class:`AblationPlan` with history from ``.homefield/runs`` and ``.homefield/ablate``. Raises
    ``ValueError`` for a negative ``--cost-per-run``."""
    if settings.cost_per_run is not None and settings.cost_per_run < 0:
        raise ValueError(f"{option('cost-per-run')} must not be negative, got {settings.cost_per_run}")
    return make_plan(rules_file=rel, rules=rules, n_tasks=n_tasks, agents=rows, attempts=settings.attempts,
                     workers=workers, history=merged_history(HomefieldDir(settings.root)),
                     seconds_per_run=settings.seconds_per_run, cost_per_run=settings.cost_per_run,
                     budget_usd=_shard_budget(settings))


def _shard_budget(settings: Settings) -> float | None:
    """The ``--budget`` (USD) of this session: with ``--shard K/N`` its even part."""
    shard = parse_shard(settings.shard)
    return shard.split_budget(settings.budget) if shard else settings.budget
