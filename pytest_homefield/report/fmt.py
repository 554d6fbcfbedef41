"""How the report writes a number or a line, the same in every format: percentages, USD, seconds,
tokens, percentage points, p-values, and the lines every renderer shows (title, memorization probe,
sandbox). Plain text; each renderer escapes it for its format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_homefield.records import UNSCORED_OUTCOMES
from pytest_homefield.report.model import AgentSummary, ComparisonRow, Report, SandboxCounts
from pytest_homefield.terminal.progress import plural

__all__ = [
    "DASH",
    "FLAGGED_SOLVES",
    "flagged_label",
    "SUSPICIOUS_SOLVE_SYMBOL",
    "SUSPICIOUS_SOLVE_WORDS",
    "fmt_ci",
    "fmt_p",
    "fmt_pct",
    "fmt_pp",
    "fmt_secs",
    "fmt_test",
    "fmt_tokens",
    "fmt_usd",
    "grid_flagged_solves",
    "outcome_counts",
    "grid_symbol",
    "memorization_lines",
    "no_cost_data",
    "no_time_data",
    "no_agent_time",
    "outcome_parts",
    "outcome_words",
    "pass_k_summary",
    "sandbox_line",
    "title_line",
]

DASH = "—"
#: The per-task grid's mark of a solve flagged ``suspicious`` (``tasks[].suspicious``, docs/contracts.md §10):
#: every rate counts it solved (:func:`~pytest_homefield.records.counts_solved`: the flag is a pattern list's hint)
#: and a verdict resting on it is withheld, so the grid shows it apart from the ``✓`` of a solve (grid50: a flagged
#: solve read as any other). Single-width in a terminal.
SUSPICIOUS_SOLVE_SYMBOL = "!"
#: The legend's words for :data:`SUSPICIOUS_SOLVE_SYMBOL`.
SUSPICIOUS_SOLVE_WORDS = "solved but flagged suspicious, counted solved (a hint; verdicts resting on it withheld)"


def flagged_label(a: AgentSummary) -> str | None:
    """``K solves flagged suspicious: counted solved, pass@1 P% counted failed`` for an agent with solves flagged
    ``suspicious`` (``a.flagged_solves``; P its ``counted_pass_at_1``, every doubt counted failed), else ``None``."""
    if not a.flagged_solves:
        return None
    p = "n/a" if a.counted_pass_at_1 is None else fmt_pct(a.counted_pass_at_1)
    return f"{plural(a.flagged_solves, 'solve')} flagged suspicious: counted solved, pass@1 {p} counted failed"


def grid_symbol(outcome: str, suspicious: bool, legend: Mapping[str, str]) -> str:
    """The per-task grid's one character for an attempt: :data:`SUSPICIOUS_SOLVE_SYMBOL` for a solve flagged
    ``suspicious``, else ``legend[outcome]`` (``?`` for an outcome it lacks)."""
    return SUSPICIOUS_SOLVE_SYMBOL if outcome == "solved" and suspicious else legend.get(outcome, "?")


def grid_flagged_solves(report: Report) -> int:
    """How many attempts of the report's per-task grid are solves flagged suspicious (``tasks[].suspicious``)."""
    return sum(o == "solved" and sus for t in report.tasks for n, outs in t.attempts.items()
               for o, sus in zip(outs, t.suspicious.get(n, ()), strict=False))


def fmt_pct(x: float | None, nd: int = 0) -> str:
    """Fraction → percent (``0.6667`` → ``67%``); ``—`` for ``None``."""
    return DASH if x is None else f"{100 * x:.{nd}f}%"


def fmt_ci(ci: Sequence[float | None] | None, nd: int = 0) -> str:
    """[lo, hi] fractions → ``47–87%``; ``—`` when unknown."""
    if not ci or ci[0] is None or ci[1] is None:
        return DASH
    return f"{100 * ci[0]:.{nd}f}–{100 * ci[1]:.{nd}f}%"


def fmt_usd(x: float | None, partial: bool = False) -> str:
    """USD → ``$3.20`` (≥ $1) or ``$0.291`` (< $1); ``~`` marks an estimate; ``—`` for ``None``."""
    if x is None:
        return DASH
    s = f"${x:,.2f}" if abs(x) >= 1 else f"${x:.3f}"
    return ("~" if partial else "") + s


def fmt_secs(x: float | None) -> str:
    """Seconds → ``106s`` / ``15.0m`` (≥ 10 min); ``—`` for ``None``."""
    if x is None:
        return DASH
    return f"{x / 60:.1f}m" if x >= 600 else f"{x:.0f}s"


def fmt_tokens(x: int | None) -> str:
    """Token count → ``4.22M`` / ``211k`` / ``950``; ``—`` for ``None``."""
    if x is None:
        return DASH
    if x >= 1_000_000:
        return f"{x / 1_000_000:.2f}M"
    if x >= 1_000:
        return f"{x / 1_000:.0f}k"
    return str(x)


def fmt_pp(x: float | None, nd: int = 0) -> str:
    """Fraction difference → signed percentage points (``+28 pp``); ``—`` for ``None``."""
    if x is None:
        return DASH
    v = 100 * x
    if round(v, nd) == 0:
        return "0 pp"
    return f"{v:+.{nd}f} pp".replace("-", "−")


def fmt_p(p: float | None) -> str:
    """p-value → 3 significant digits (``0.0625``, ``0.25``, ``1``) or ``<0.001``; ``—`` for ``None``.

    Three digits keep exact permutation p-values (multiples of 1/2^n) unrounded in tables; the verdict
    sentences of :mod:`.verdicts` use their own rounding."""
    if p is None:
        return DASH
    return "<0.001" if p < 0.001 else f"{p:.3g}"


def fmt_p_adjusted(c: ComparisonRow) -> str:
    """A pair's adjusted p with its Holm family (``0.031 of 3``), ``sanity`` for a pair with a reference
    agent (decided unadjusted, issue 32), ``—`` when not compared; the plain adjusted p for a report
    written before the family was recorded."""
    if c.sanity:
        return "sanity"
    if c.p_adjusted is None or c.family is None:
        return fmt_p(c.p_adjusted)
    return f"{fmt_p(c.p_adjusted)} of {c.family}"


def family_sentence(comparisons: Sequence[ComparisonRow]) -> str:
    """What the head-to-head p-values are: the size of the Holm family (pairs of non-reference agents)
    and how many pairs are unadjusted sanity checks against a reference agent (``oracle``, ``noop``,
    ``sim:P``)."""
    tested = [c for c in comparisons if c.p_value is not None]
    sanity = sum(1 for c in tested if c.sanity)
    m = len(tested) - sanity
    if m == 0 and sanity:  # not "Holm-adjusted across 0 pairs": nothing is adjusted
        text = "no pair of two non-reference agents, so no p-value is Holm-adjusted"
    else:
        text = f"p-values Holm-adjusted across {m} pair{'s' if m != 1 else ''}"
        text += " of non-reference agents" if sanity else ""
    if sanity:
        text += (f"; {sanity} pair{'s' if sanity != 1 else ''} with a reference agent (oracle, noop, sim:P) "
                 f"{'are sanity checks' if sanity != 1 else 'is a sanity check'}, decided by the unadjusted p")
    return text


def p_rule(comparisons: Sequence[ComparisonRow], alpha: float) -> str:
    """:func:`family_sentence` with which p decides the verdicts and ``alpha``: the head-to-head's note in report.md
    and report.html (nu60: with reference agents only it said "no p-value is Holm-adjusted" and then "the verdict
    uses the adjusted p")."""
    tested = [c for c in comparisons if c.p_value is not None]
    adjusted = sum(1 for c in tested if not c.sanity)
    rule = ""
    if adjusted:
        rule = f"; the {'other verdicts use' if adjusted < len(tested) else 'verdict uses'} the adjusted p"
    return f"{family_sentence(comparisons)}{rule} (α = {alpha})"


def fmt_test(c: ComparisonRow) -> str:
    """A comparison's test name for people: ``exact McNemar`` / ``paired permutation``."""
    if c.test == "mcnemar":
        return "exact McNemar"
    if c.test == "permutation":
        return "paired permutation" + ("" if c.exact in (True, None) else " (Monte Carlo)")
    return DASH if c.test is None else str(c.test)


def outcome_words(outcome: str) -> str:
    """``tests_failed`` → ``tests failed``; :data:`FLAGGED_SOLVES` → ``flagged solve (counted solved)``."""
    return "flagged solve (counted solved)" if outcome == FLAGGED_SOLVES else outcome.replace("_", " ")


#: The key of an agent's solves flagged ``suspicious`` in :func:`outcome_counts` (no outcome of its own: a record's
#: outcome is ``solved``), marked :data:`SUSPICIOUS_SOLVE_SYMBOL`, its class ``o-suspicious`` as in the grid.
FLAGGED_SOLVES = "suspicious"


def outcome_counts(a: AgentSummary) -> list[tuple[str, int]]:
    """``(outcome, attempts)`` of one agent in ``a.outcomes``' order, its ``solved`` split in two: ``solved`` the
    solves not flagged, then :data:`FLAGGED_SOLVES` those flagged ``suspicious`` (``a.flagged_solves``: counted solved
    too, :func:`~pytest_homefield.records.counts_solved`, shown apart) when there are any; the two add up to the
    leaderboard's ``solved`` (gatk51: ``✓ solved 2`` beside a leaderboard's ``solved 1``)."""
    out: list[tuple[str, int]] = []
    for o, n in a.outcomes.items():
        if o == "solved":
            flagged = min(n, a.flagged_solves or 0)
            out.append((o, n - flagged))
            if flagged:
                out.append((FLAGGED_SOLVES, flagged))
        else:
            out.append((o, n))
    return out


def pass_k_summary(values: Mapping[str, float | None]) -> str:
    """The largest-k entry of ``pass_at_k``/``pass_hat_k`` as ``83% k=3``; ``—`` if only k = 1."""
    if len(values) < 2:
        return DASH
    k = max(values, key=int)
    return f"{fmt_pct(values[k])} k={k}"


def no_cost_data(agents: Mapping[str, AgentSummary]) -> bool:
    """Every agent's total cost is zero or unknown (reference, simulated and local agents): a cost
    column or chart would only show zeros."""
    return bool(agents) and all(not a.cost_usd for a in agents.values())


def no_time_data(agents: Mapping[str, AgentSummary]) -> bool:
    """Every agent's p50 and p95 wall time is unknown or under half a second, i.e. printed as 0 s
    (agents that answer at once: oracle, noop, sim)."""
    return bool(agents) and all((a.wall_s_p50 or 0) < 0.5 and (a.wall_s_p95 or 0) < 0.5 for a in agents.values())


def no_agent_time(agents: Mapping[str, AgentSummary]) -> str:
    """The note of a report whose agents' wall time is none (:func:`no_time_data`): of the agents' own time, the
    board's ``p50/p95`` column left out; the ``host p50/p95`` one, when shown, is homefield's own time outside the
    agent (keep66, usr46: "host p50/p95 1s/2s" above "no time data" read as a contradiction)."""
    host = any(a.host_s_p50 is not None for a in agents.values())
    which = "; host p50/p95 is homefield's own time outside the agent" if host else ""
    return f"no agent time data (every agent answered in under a second{which})"


def title_line(report: Report) -> str:
    """``homefield report: run-a + run-b · 8 tasks · 4 agents · 1–3 attempts``."""
    runs = " + ".join(report.run_ids) or "(no run)"
    n_tasks = len(report.tasks)
    n_agents = len(report.agents)
    ks = [a.attempts_per_task for a in report.agents.values() if a.attempts_per_task]
    if ks:
        lo, hi = min(k[0] for k in ks), max(k[1] for k in ks)
        att = f"{lo} attempt{'s' if lo != 1 else ''}" if lo == hi else f"{lo}–{hi} attempts"
        att += " per task"
    else:
        att = "no scored attempt"
    return (
        f"homefield report: {runs} · {n_tasks} task{'s' if n_tasks != 1 else ''} · "
        f"{n_agents} agent{'s' if n_agents != 1 else ''} · {att}"
    )


def outcome_parts(a: AgentSummary, legend: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """(scored parts, unscored parts) like ``✓ solved 11`` for one agent's outcome counts."""
    def symbol(o: str) -> str:
        return SUSPICIOUS_SOLVE_SYMBOL if o == FLAGGED_SOLVES else legend[o]
    counts = [(o, n) for o, n in outcome_counts(a) if n]
    scored = [f"{symbol(o)} {outcome_words(o)} {n}" for o, n in counts if o not in UNSCORED_OUTCOMES]
    unscored = [f"{symbol(o)} {outcome_words(o)} {n}" for o, n in counts if o in UNSCORED_OUTCOMES]
    return scored, unscored


def memorization_lines(report: Report) -> list[str]:
    """One sentence per probed agent: "NAME recites N of M tasks; control K mismatched pairs, 95th
    percentile X", with the flagged tasks and their best/mean scores. Empty without probe data."""
    out = []
    for name, m in (report.memorization.agents if report.memorization else {}).items():
        n_control, judged = m.control_n or 0, m.judged or 0
        what = (f"{plural(n_control, 'task')} authored after {m.cutoff}" if m.cutoff
                else plural(n_control, "mismatched pair"))
        p95 = "n/a" if m.control_p95 is None else f"{m.control_p95:.2f}"
        line = f"{name} recites {m.recites} of {plural(judged, 'task')}; control {what}, 95th percentile {p95}"
        if m.flagged:
            line += ": " + ", ".join(f"{f['task_id']} ({f['best']:.2f} best, {f['mean']:.2f} mean)" for f in m.flagged)
        out.append(line)
    return out


def sandbox_line(sb: SandboxCounts) -> str:
    """``sandbox: oracle none ×24, cmd bwrap ×3; test runs bwrap ×27`` from the report's ``sandbox``: the
    test runs are the graded attempts' (an empty patch runs no hidden test)."""
    def counts(c: Mapping[str, int]) -> str:
        return "/".join(f"{k} ×{v}" for k, v in c.items())
    agents = ", ".join(f"{n} {counts(c)}" for n, c in sb.agents.items())
    return f"sandbox: {agents}; test runs {counts(sb.tests) or '(no hidden test ran)'}"
