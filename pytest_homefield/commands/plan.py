"""``homefield plan``: how many agent runs a run would make, how long they take and what they cost,
before anything is spent (the estimates: :mod:`pytest_homefield.run.cost`), and the power of the
report's paired test against gaps of 5, 10 and 20 points (:func:`pytest_homefield.report.power.power_line`);
``homefield plan --probe``: the probe's calls and USD.

Hours are sequential (agent plus grading time of every run); with ``-n N`` workers a run takes about
``1/N`` of that. USD are the agent's own costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from pytest_homefield.agents.reference import same_change_line
from pytest_homefield.agents.registry import parse_spec
from pytest_homefield.errors import ProbeError
from pytest_homefield.layout import HomefieldDir, partial_mine_note
from pytest_homefield.probe.probe_plan import plan_lines
from pytest_homefield.probe.prompt import gold_lines
from pytest_homefield.probe.session import resume_state
from pytest_homefield.probe.similarity import code_tokens
from pytest_homefield.probe.verdicts import control_pairs
from pytest_homefield.probe_records import probe_path
from pytest_homefield.records import SCORED_OUTCOMES, Task, counts_solved, load_tasks
from pytest_homefield.report.family import is_reference_spec
from pytest_homefield.report.power import power_line
from pytest_homefield.report.runs import load_meta, load_results
from pytest_homefield.run.cost import Estimate, estimate
from pytest_homefield.run.memorized import excluded_for_run
from pytest_homefield.settings import Settings, option
from pytest_homefield.terminal.progress import fmt_duration, plural

__all__ = ["plan_agents", "plan_rows", "plan_text", "probe_plan_text", "plan_dict"]


def _tasks(settings: Settings) -> list[Task]:
    if not settings.tasks_path.exists():
        raise ValueError(f"no tasks at {settings.tasks_path}: run `homefield mine` first")
    tasks = load_tasks(settings.tasks_path)
    if not settings.agents:
        raise ValueError(f"no agent given: add {option('agent')} SPEC")
    if settings.exclude_memorized:  # as `homefield run --exclude-memorized` would, from the newest verdicts
        try:
            gone = set(excluded_for_run(settings.homefield_dir, plan_agents(settings))["tasks"])
        except ProbeError as exc:
            raise ValueError(str(exc)) from None
        tasks = [t for t in tasks if t.id not in gone]
    if settings.run_max_tasks is not None:
        tasks = tasks[: settings.run_max_tasks]
    return tasks


def plan_agents(settings: Settings) -> list[SimpleNamespace]:
    """(name, spec) of each ``--agent`` as namespaces, without building the agents (named agents
    resolve to their spec). Raises ``ValueError`` when none is given."""
    if not settings.agents:
        raise ValueError(f"no agent given: add {option('agent')} SPEC")
    out = []
    for text in settings.agents:
        p = parse_spec(text, named=settings.agent_defs)
        spec = settings.agent_defs[p.arg]["spec"] if p.kind == "named" and p.arg else p.spec
        out.append(SimpleNamespace(name=p.name, spec=spec))
    return out


def probe_plan_text(settings: Settings) -> str:
    """``homefield plan --probe``: the probe's plan lines (:func:`pytest_homefield.probe.probe_plan.plan_lines`)
    for the tasks and agents the same ``homefield probe`` flags would use, counting answered calls (and those
    whose ``--max-retries`` is spent) as done (as ``--resume`` would). Raises ``ValueError`` without tasks or agents."""
    if not settings.tasks_path.exists():
        raise ValueError(f"no tasks at {settings.tasks_path}: run `homefield mine` first")
    tasks = load_tasks(settings.tasks_path)[: settings.run_max_tasks]
    probed = [t for t in tasks if code_tokens(gold_lines(t))]
    ids = [t.id for t in probed]
    agents = plan_agents(settings)
    cutoff = str(settings.cutoff)[:10] if settings.cutoff else None
    done = {a.name: resume_state(probe_path(settings.homefield_dir, a.name), settings.max_retries)[0]
            for a in agents}
    return "\n".join(plan_lines(settings.homefield_dir, [(a.name, a.spec) for a in agents], ids,
                                settings.samples, cutoff, done, control_pairs(probed)))


def plan_rows(settings: Settings, *, seconds_per_run: float | None = None,
              cost_per_run: float | None = None) -> list[Estimate]:
    """The estimates of a ``homefield run`` with ``settings`` (``seconds_per_run`` / ``cost_per_run``
    default to the settings' ``--seconds-per-run`` / ``--cost-per-run``). Raises ``ValueError`` when there are no
    tasks or no agents, ``AgentSpecError`` for a bad spec."""
    tasks = _tasks(settings)
    return estimate(settings, tasks, settings.agents, len(tasks) * settings.attempts,
                    seconds_per_run=settings.seconds_per_run if seconds_per_run is None else seconds_per_run,
                    cost_per_run=settings.cost_per_run if cost_per_run is None else cost_per_run)


def _f(v: float | None, fmt: str) -> str:
    return "?" if v is None else format(v, fmt)


def _span(low: float | None, high: float | None, fmt: str) -> str:
    """``'0.41-0.45'`` (a plan's range, as Total says it: plan66), ``'0.41'`` when ``high`` is ``None`` or
    formats the same, ``'?'`` when ``low`` is unknown."""
    if low is None:
        return "?"
    lo = format(low, fmt)
    hi = lo if high is None else format(max(low, high), fmt)
    return lo if hi == lo else f"{lo}-{hi}"


def _by_agent(said: Sequence[tuple[str, str]]) -> str:
    """``(agent, basis)`` pairs said once each: one basis alone, else ``'oracle: B; claude: as oracle × 2: …'``
    (a basis that extends another's names that one and says only what it adds: ux67)."""
    bases = list(dict.fromkeys(b for _, b in said))
    if len(bases) == 1:
        return bases[0]
    names = {b: ", ".join(a for a, x in said if x == b) for b in bases}
    out = []
    for b in bases:
        base = next((x for x in bases if x != b and b.startswith(x)), None)
        out.append(f"{names[b]}: " + (b if base is None else f"as {names[base]}{b[len(base):]}"))
    return "; ".join(out)


def _high(r: Estimate) -> float | None:
    """The high end of an agent's grading seconds when the plan has one (:attr:`Estimate.grading_high_basis`)."""
    return r.grading_s_high if r.grading_high_basis else None


def _hours(h: float) -> str:
    """``'0.41 hours'``; under 0.1, the duration too (``'0.00 hours (10s)'``: plan66, more-itertools' 8 gradings)."""
    return f"{h:.2f} hours" + (f" ({fmt_duration(h * 3600)})" if h < 0.1 else "")


def plan_text(settings: Settings, *, seconds_per_run: float | None = None, cost_per_run: float | None = None) -> str:
    """The plan as printed by ``homefield plan``."""
    rows = plan_rows(settings, seconds_per_run=seconds_per_run, cost_per_run=cost_per_run)
    n_tasks = rows[0].runs // settings.attempts if rows else 0
    lines = [f"Plan: {plural(n_tasks, 'task')} × {plural(len(rows), 'agent')} × "
             f"{plural(settings.attempts, 'attempt')} = {plural(sum(r.runs for r in rows), 'agent run')}"]
    width = max([len(r.agent) for r in rows] + [5])
    lines.append(f"{'agent':<{width}} {'runs':>5} {'agent s':>8} {'grade s':>10} {'USD/run':>8} {'hours':>9} "
                 f"{'USD':>8}  basis (per run)")
    for r in rows:  # grade s and hours: the range Total says (ux67: the table gave the low end only)
        lines.append(f"{r.agent:<{width}} {r.runs:>5} {_f(r.agent_s_per_run, '.0f'):>8} "
                     f"{_span(r.grading_s_per_run, _high(r), '.1f'):>10} {_f(r.usd_per_run, '.2f'):>8} "
                     f"{_span(r.hours, r.hours_high, '.2f'):>9} {_f(r.usd, '.2f'):>8}  {r.basis}")
    hours = [r.hours for r in rows]
    usd = [r.usd for r in rows]
    low = sum(h for h in hours if h is not None)
    total = f"Total: {_hours(low)} sequential"
    high = sum(h for r in rows if (h := r.hours_high) is not None)
    if high > low * 1.01:  # the range's high end, as verify's line (eta46, plan66): the grading line says why
        total += f", up to {_hours(high)} with gradings planned from their seconds as measured"
    if None in hours:
        total += " (without agents of unknown time)"
    total += f", {sum(u for u in usd if u is not None):.2f} USD"
    if None in usd:
        total += " (without agents of unknown cost)"
    if settings.budget is not None:
        total += f"; run budget {settings.budget:.2f} USD"
    lines.append(total)
    agents = plan_agents(settings)
    if all(a.spec in ("oracle", "noop") for a in agents):  # as the run's header says it (nu32)
        again = same_change_line([a.name for a in agents], settings.attempts)
        if again:
            lines.append(again[0].upper() + again[1:])
    partial = partial_mine_note(HomefieldDir(settings.root))
    if partial:
        lines.append(partial)
    if rows:
        graded = [r for r in rows if r.grading_basis != "exact: an empty patch is not graded"] or rows[:1]
        named = len(graded) > 1
        figures = ", ".join(f"{r.agent + ' ' if named else ''}{_span(r.grading_s_per_run, _high(r), '.1f')} s"
                            for r in graded)
        low = _by_agent([(r.agent, r.grading_basis) for r in graded])
        high = [(r.agent, r.grading_high_basis) for r in graded if _high(r) is not None]
        said = f". Low end: {low}. High end: {_by_agent(high)}" if high else f": {low}"
        lines.append(f"Grading time per run: {figures}{said}. Assumed figures are defaults for the client "
                     f"(README: Planning); {option('seconds-per-run')} and {option('cost-per-run')} replace them.")
    if n_tasks:  # issue 32: what the run could detect, before anything is spent
        earlier = earlier_base_rate(settings)
        if earlier is None and not any(not is_reference_spec(a.spec) for a in agents):
            # nu27: a plan of oracle, sim:0.5 and noop after a run of those said "no earlier run of these agents"
            lines.append("Base rate: 50% assumed (every agent of this plan is a reference agent: oracle, noop and "
                         "sim:P, whose pass rates are no agent's; the most noise, so the power below is the least "
                         "it can be)")
        elif earlier is None:
            lines.append("Base rate: 50% assumed (no earlier run of these agents; the most noise, so the power "
                         "below is the least it can be)")
        else:
            lines.append(f"Base rate: {100 * earlier[0]:.0f}% {earlier[1]}")
        lines.append(power_line(n_tasks, settings.attempts, alpha=settings.alpha,
                                base_rate=0.5 if earlier is None else earlier[0]))
    if settings.services:
        lines.append("Services: " + ", ".join(f"{s.name} ({s.scope} scope)" for s in settings.services)
                     + ": homefield starts them for the hidden tests (homefield services --check tries them)")
    return "\n".join(lines)


def earlier_base_rate(settings: Settings) -> tuple[float, str] | None:
    """The solve rate (fraction) of the plan's non-reference agents in the newest earlier run that scored
    any of them, with where it comes from (``from run <id> (<n> scored attempts of <agents>)``); ``None``
    when there is no such run (the power is then stated at 50 %). Runs of ``homefield verify`` and
    unreadable runs are skipped."""
    names = {a.name for a in plan_agents(settings) if not is_reference_spec(a.spec)}
    runs = HomefieldDir(settings.root).runs
    if not names or not runs.is_dir():
        return None
    found = []
    for d in runs.iterdir():
        if d.name.startswith("verify-") or not (d / "meta.json").exists():
            continue
        try:
            found.append((str(load_meta(d).get("created_at") or ""), d))
        except ValueError:
            continue
    for _, d in sorted(found, reverse=True):
        try:
            scored = [r for r in load_results(d) if r.agent in names and r.variant == "base"
                      and r.outcome in SCORED_OUTCOMES]
        except ValueError:
            continue
        if scored:
            agents = ", ".join(sorted({r.agent for r in scored}))
            return (sum(counts_solved(r) for r in scored) / len(scored),
                    f"from run {d.name} ({len(scored)} scored attempts of {agents})")
    return None


def plan_dict(rows: Sequence[Estimate]) -> list[dict[str, Any]]:
    """The estimates as JSON primitives (for ``--format json`` style callers)."""
    return [{**r.__dict__, "hours": r.hours, "hours_high": r.hours_high, "usd": r.usd} for r in rows]
