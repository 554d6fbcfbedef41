"""The report's tables, built once from a :class:`~.model.Report`; :mod:`.text`, :mod:`.markdown` and
:mod:`.html` (and the ablation report) only render them.

A :class:`Table` has :class:`Column` s and :class:`Row` s of cells. A cell says *what* it shows
(:class:`Text`, a :class:`Code` name or id, an :class:`AgentName` with its marks, a task
:class:`Subject` with its flags, an :class:`OutcomeHead`, a task's :class:`Attempts`); each renderer
decides how that looks in its format (a Markdown code span, an HTML ``<code>``, plain text).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pytest_homefield.records import OUTCOMES, UNSCORED_OUTCOMES
from pytest_homefield.report.fmt import (
    DASH,
    FLAGGED_SOLVES,
    SUSPICIOUS_SOLVE_SYMBOL,
    flagged_label,
    fmt_ci,
    fmt_p,
    fmt_p_adjusted,
    fmt_pct,
    fmt_pp,
    fmt_secs,
    fmt_test,
    fmt_tokens,
    fmt_usd,
    grid_symbol,
    no_cost_data,
    no_time_data,
    outcome_counts,
    outcome_words,
    pass_k_summary,
)
from pytest_homefield.report.kinds import KIND_WORDS
from pytest_homefield.report.model import AgentSummary, Report, SimilaritySplit, TaskRow
from pytest_homefield.report.verdicts import too_few_for_interval

__all__ = [
    "AgentName", "Attempts", "Cell", "Code", "Column", "Flag", "OutcomeHead", "Row", "Subject", "Table", "Text",
    "agents_table", "errors_table", "first_errors_table", "flagged_table", "head_to_head", "leaderboard",
    "outcomes_table", "pass_k_table",
    "per_language", "per_task", "runs_table", "similarity_table", "task_grid", "terminal_leaderboard",
    "tokens_table", "used_outcomes", "well_specified_table",
]

#: How a row reads at a glance: ``good`` (green), ``bad`` (red), ``sim`` (a simulated agent, cyan).
Tone = Literal["good", "bad", "sim"]


@dataclass(frozen=True)
class Text:
    """Words or a number. ``prose``: free text (subjects, errors, verdicts, money) that Markdown
    escapes; ``strong``: the cell to notice (a significant verdict, a load-bearing rule)."""

    text: str
    prose: bool = False
    strong: bool = False


@dataclass(frozen=True)
class Code:
    """A name or an id, shown as code."""

    text: str


@dataclass(frozen=True)
class AgentName:
    """An agent's name with its marks (``sim``, ``hinted``)."""

    name: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Flag:
    """A mark on a task's subject (``vague``), with why it is there (an HTML tooltip)."""

    label: str
    why: str = ""


@dataclass(frozen=True)
class Subject:
    """A task's subject (``""``: the task is not in the tasks file) and its flags."""

    text: str
    flags: tuple[Flag, ...] = ()


@dataclass(frozen=True)
class OutcomeHead:
    """The title of an outcome's column: its symbol and words, marked when the outcome is unscored."""

    outcome: str
    symbol: str
    unscored: bool


@dataclass(frozen=True)
class Attempts:
    """One agent's attempts at one task in attempt order: outcome, its symbol (a solve flagged suspicious:
    :data:`~.fmt.SUSPICIOUS_SOLVE_SYMBOL`), the edit-F1 of each diff against the gold patch (``None``:
    no diff), and whether each is a solve flagged suspicious (counted solved, shown apart)."""

    outcomes: tuple[str, ...]
    symbols: tuple[str, ...]
    f1: tuple[float | None, ...]
    flagged_solve: tuple[bool, ...] = ()


Cell = Text | Code | AgentName | Subject | OutcomeHead | Attempts


@dataclass(frozen=True)
class Column:
    """A column: its ``title`` and how its cells line up.

    ``numeric``: right-aligned (HTML class ``n``); ``md_right``: the Markdown alignment when it is not
    ``numeric``'s; in the terminal, ``clip`` shortens longer cells to that many characters (ending in
    ``…``), columns with a ``drop`` rank are dropped in that order (1 first) while the table is wider
    than the terminal, and a ``fill`` column (the last) takes the room left or is left out; in the
    compact HTML style, a ``tone_class`` column's cells carry their row's tone as a class."""

    title: Cell
    numeric: bool = False
    md_right: bool | None = None
    clip: int | None = None
    drop: int | None = None
    fill: bool = False
    tone_class: bool = False


@dataclass(frozen=True)
class Row:
    """One row of cells (one per column) and its tone."""

    cells: tuple[Cell, ...]
    tone: Tone | None = None


@dataclass(frozen=True)
class Table:
    """Columns and rows; ``css``: the HTML class of the table (``grid`` for the per-task grid)."""

    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    css: str = ""


def _cols(*titles: str | Cell, numeric: frozenset[int] | set[int] = frozenset()) -> tuple[Column, ...]:
    return tuple(Column(Text(t) if isinstance(t, str) else t, i in numeric) for i, t in enumerate(titles))


def _table(columns: tuple[Column, ...], rows: list[tuple[Cell, ...]], css: str = "") -> Table:
    return Table(columns, tuple(Row(r) for r in rows), css)


def _agent(a: AgentSummary) -> AgentName:
    return AgentName(a.name, tuple(a.tags))


def _usd(x: float | None, partial: bool, reported: str | None = None) -> Text:
    """A cost cell, with ``(reported by the agent)`` after a known cost homefield did not measure."""
    return Text(fmt_usd(x, partial) + (f" ({reported})" if reported and x is not None else ""), prose=True)


def _two(x: float | None) -> Text:
    return Text(DASH if x is None else f"{x:.2f}")


def used_outcomes(report: Report) -> list[str]:
    """The outcomes some agent has, in :data:`OUTCOMES` order."""
    return [o for o in OUTCOMES if any(o in a.outcomes for a in report.agents.values())]


def outcome_columns(report: Report) -> tuple[list[str], dict[str, dict[str, int]]]:
    """``(columns, counts)`` of a table of attempts per outcome per agent: :func:`used_outcomes`, and
    :data:`FLAGGED_SOLVES` after ``solved`` where some agent has a solve flagged suspicious (counted solved,
    shown apart: gatk51); agent name → its :func:`outcome_counts`."""
    used = used_outcomes(report)
    counts = {name: dict(outcome_counts(a)) for name, a in report.agents.items()}
    if used and any(FLAGGED_SOLVES in c for c in counts.values()):
        used.insert(used.index("solved") + 1, FLAGGED_SOLVES)
    return used, counts


# ------------------------------------------------------------------------------ agents


def leaderboard(report: Report, *, tokens: bool = False) -> Table:
    """One row per agent in rank order: counts, pass@1 and its CI, pass@k / pass^k at the largest k,
    cost, cost per solved attempt, wall times, homefield's own times (``host_s``, left out when no attempt
    recorded one); with ``tokens`` also the four token sums."""
    titles = ["#", "Agent", "Tasks", "Attempts", "Scored", "Solved", "pass@1", "95% CI", "pass@k", "pass^k", "Cost",
              "Cost / solved", "p50 wall", "p95 wall", "p50 host", "p95 host"]
    titles += ["Input tok", "Output tok", "Cache read", "Cache write"] if tokens else []
    columns = tuple(Column(Text(t), numeric=i != 1, md_right=False if t in ("pass@k", "pass^k") else None)
                    for i, t in enumerate(titles))
    rows = []
    for a in report.agents.values():
        k = max(a.pass_at_k, key=int) if a.pass_at_k else None
        at_k = k is not None and k != "1"
        row: list[Cell] = [
            Text(str(a.rank) if a.rank else DASH), _agent(a), Text(str(a.tasks)), Text(str(a.attempts)),
            Text(str(a.scored)),
            Text(str(a.solved)), Text(_with_incomplete(fmt_pct(a.pass_at_1, 1), a)), Text(fmt_ci(a.pass_at_1_ci, 1)),
            Text(f"{fmt_pct(a.pass_at_k[k], 1)} (k={k})" if at_k and k else DASH),
            Text(f"{fmt_pct(a.pass_hat_k[k], 1)} (k={k})" if at_k and k else DASH),
            _usd(a.cost_usd, a.cost_partial, a.cost_reported),
            _usd(a.cost_per_solved_usd, a.cost_partial, a.cost_reported),
            Text(fmt_secs(a.wall_s_p50)), Text(fmt_secs(a.wall_s_p95)),
            Text(fmt_secs(a.host_s_p50)), Text(fmt_secs(a.host_s_p95)),
        ]
        if tokens:
            row += [Text(fmt_tokens(n)) for n in (a.input_tokens, a.output_tokens, a.cache_read_tokens,
                                                  a.cache_write_tokens)]
        rows.append(tuple(row))
    return _without_empty_columns(_table(columns, rows), first=8)


#: What a cell shows when its column has nothing to say: unknown, no cost, no time.
_EMPTY_CELLS = frozenset({DASH, "$0.000", "~$0.000", "0s"})


def _without_empty_columns(table: Table, *, first: int) -> Table:
    """``table`` without its columns from index ``first`` on whose every cell is empty (:data:`_EMPTY_CELLS`:
    ``—``, ``$0.000``, ``0s``): a leaderboard of reference agents has no cost, time or token column
    (issue 35). Columns before ``first`` (counts, rates) always stay."""
    if not table.rows:
        return table
    def empty(cell: Cell) -> bool:
        return isinstance(cell, Text) and cell.text in _EMPTY_CELLS

    keep = [i for i, _ in enumerate(table.columns) if i < first or not all(empty(r.cells[i]) for r in table.rows)]
    if len(keep) == len(table.columns):
        return table
    return Table(tuple(table.columns[i] for i in keep),
                 tuple(Row(tuple(r.cells[i] for i in keep), r.tone) for r in table.rows), table.css)


def _with_incomplete(pass_at_1: str, a: AgentSummary) -> str:
    """A pass@1 cell with the agent's ``incomplete: k of n scored``, ``K attempts tried again at its word: …``
    ``K attempts passed a contradicted twin exactly: …`` and ``forged on K attempts: …`` labels when it has them."""
    labels = [x for x in (a.incomplete, a.at_its_word, a.twin_hits, flagged_label(a), a.forged) if x]
    return f"{pass_at_1} ({'; '.join(labels)})" if labels else pass_at_1


def terminal_leaderboard(report: Report) -> Table:
    """The leaderboard for a terminal: short titles, pass@1 in whole percent, scored/attempts in one
    column, no cost columns without cost data, time column without time data nor pass@k / pass^k columns
    when no agent has k > 1 (as :func:`leaderboard`); red rows for agents
    that only errored, cyan for simulated ones. Columns drop from the right of a fixed order when
    the terminal is narrow."""
    agents = list(report.agents.values())
    cost, time = not no_cost_data(report.agents), not no_time_data(report.agents)
    host = any(a.host_s_p50 is not None for a in agents)  # homefield's own seconds (host_s), when recorded
    # pass@k and pass^k at some k > 1 (ux63: with 1 attempt per task both are pass@1 or nothing; the columns of
    # ``—`` came and went with the terminal's width, a verify report showing pass^k where a run's did not)
    at_k = any(pass_k_summary(a.pass_at_k) != DASH for a in agents)
    spec: list[tuple[str, bool, int | None, bool]] = [  # title, numeric, drop rank, shown
        ("#", True, 2, True), ("agent", False, None, True), ("tasks", True, 3, True), ("scored", True, 4, True),
        ("solved", True, None, True), ("pass@1", True, None, True), ("95% CI", False, 7, True),
        ("pass@k", False, 6, at_k), ("pass^k", False, 1, at_k), ("cost", True, None, cost),
        ("$/solved", True, None, cost), ("p50/p95", True, 5, time), ("host p50/p95", True, 1, host),
    ]
    cells: dict[str, list[Cell]] = {
        "#": [Text(str(a.rank) if a.rank else DASH) for a in agents],
        "agent": [_agent(a) for a in agents],
        "tasks": [Text(str(a.tasks)) for a in agents],
        "scored": [Text(f"{a.scored}/{a.attempts}") for a in agents],
        "solved": [Text(str(a.solved)) for a in agents],
        "pass@1": [Text(fmt_pct(a.pass_at_1) + ("*" if a.incomplete or a.at_its_word or a.twin_hits
                                                or a.flagged_solves else ""))
                   for a in agents],
        "95% CI": [Text(fmt_ci(a.pass_at_1_ci)) for a in agents],
        "pass@k": [Text(pass_k_summary(a.pass_at_k)) for a in agents],
        "pass^k": [Text(pass_k_summary(a.pass_hat_k)) for a in agents],
        "cost": [Text(fmt_usd(a.cost_usd, a.cost_partial)) for a in agents],  # a reported cost: labelled under it
        "$/solved": [Text(fmt_usd(a.cost_per_solved_usd, a.cost_partial)) for a in agents],
        "p50/p95": [Text(f"{fmt_secs(a.wall_s_p50)}/{fmt_secs(a.wall_s_p95)}") for a in agents],
        "host p50/p95": [Text(f"{fmt_secs(a.host_s_p50)}/{fmt_secs(a.host_s_p95)}") for a in agents],
    }
    shown = [(t, num, drop) for t, num, drop, on in spec if on]
    columns = tuple(Column(Text(t), numeric=num, drop=drop, clip=28 if t == "agent" else None)
                    for t, num, drop in shown)
    tones: list[Tone | None] = ["bad" if a.only_errors else "sim" if a.simulated else None for a in agents]
    rows = tuple(Row(tuple(cells[t][i] for t, _, _ in shown), tones[i]) for i in range(len(agents)))
    return Table(columns, rows)


def pass_k_table(report: Report) -> Table | None:
    """pass@1 … pass@k and pass^2 … pass^k of every agent; ``None`` when no agent has k > 1."""
    kmax = max((len(a.pass_at_k) for a in report.agents.values()), default=0)
    if kmax <= 1:
        return None
    titles = ["Agent", *(f"pass@{k}" for k in range(1, kmax + 1)), *(f"pass^{k}" for k in range(2, kmax + 1))]
    rows: list[tuple[Cell, ...]] = [
        (_agent(a), *(Text(fmt_pct(a.pass_at_k.get(str(k)), 1)) for k in range(1, kmax + 1)),
         *(Text(fmt_pct(a.pass_hat_k.get(str(k)), 1)) for k in range(2, kmax + 1)))
        for a in report.agents.values()
    ]
    return _table(_cols(*titles, numeric=set(range(1, 2 * kmax))), rows)


def outcomes_table(report: Report) -> Table | None:
    """Attempts per outcome per agent (unscored outcomes marked); ``None`` without any outcome."""
    used, counts = outcome_columns(report)
    if not used:
        return None
    heads: list[str | Cell] = [OutcomeHead(o, SUSPICIOUS_SOLVE_SYMBOL if o == FLAGGED_SOLVES
                                           else report.legend.get(o, ""), o in UNSCORED_OUTCOMES) for o in used]
    kinds = [k for k in KIND_WORDS if any(k in (a.failure_kinds or {}) for a in report.agents.values())]
    heads += [f"Failed: {KIND_WORDS[k]}" for k in kinds]  # the failures by kind (issue 35)
    rows: list[tuple[Cell, ...]] = [(_agent(a), *(Text(str(counts[name].get(o, 0))) for o in used),
                                     *(Text(str((a.failure_kinds or {}).get(k, 0))) for k in kinds))
                                    for name, a in report.agents.items()]
    return _table(_cols("Agent", *heads, numeric=set(range(1, len(heads) + 1))), rows)


def first_errors_table(report: Report) -> Table | None:
    """Each agent's first error (task, attempt, the line); ``None`` when no agent has one."""
    rows: list[tuple[Cell, ...]] = [(_agent(a), Code(str(a.first_error[0])), Text(str(a.first_error[1])),
                                     Text(str(a.first_error[2]), prose=True))
                                    for a in report.agents.values() if a.first_error]
    return _table(_cols("Agent", "Task", "Attempt", "First error", numeric={2}), rows) if rows else None


def tokens_table(report: Report) -> Table:
    """Input, output, cache-read and cache-write tokens per agent."""
    rows: list[tuple[Cell, ...]] = [
        (_agent(a), *(Text(fmt_tokens(n)) for n in (a.input_tokens, a.output_tokens, a.cache_read_tokens,
                                                    a.cache_write_tokens)))
        for a in report.agents.values()
    ]
    return _table(_cols("Agent", "Input", "Output", "Cache read", "Cache write", numeric={1, 2, 3, 4}), rows)


def similarity_table(report: Report) -> Table:
    """Edit-F1 of each agent's diffs against the gold patch: diffs measured, mean, exact, and the mean
    over solved and over unsolved attempts."""
    rows: list[tuple[Cell, ...]] = []
    for n, a in report.agents.items():
        s = report.similarity.get(n) or SimilaritySplit(None, None)
        rows.append((_agent(a), Text(str(a.similarity_n)), _two(a.similarity_mean), Text(str(a.similarity_exact)),
                     _two(s.mean_f1_solved), _two(s.mean_f1_unsolved)))
    return _table(_cols("Agent", "Diffs", "Mean edit-F1", "Exact", "F1 when solved", "F1 when unsolved",
                        numeric={1, 2, 3, 4, 5}), rows)


def errors_table(report: Report) -> Table | None:
    """The most common error lines of each agent; ``None`` when there is none."""
    rows: list[tuple[Cell, ...]] = [(Code(n), Text(str(e[1])), Text(str(e[0]), prose=True))
                                    for n, a in report.agents.items() for e in a.errors]
    return _table(_cols("Agent", "Count", "Error", numeric={1}), rows) if rows else None


def agents_table(report: Report) -> Table:
    """Spec, model and version of each agent."""
    rows: list[tuple[Cell, ...]] = [(_agent(a), Text(str(a.spec or DASH)), Text(str(a.model or DASH)),
                                     Text(str(a.version or DASH))) for a in report.agents.values()]
    return _table(_cols("Agent", "Spec", "Model", "Version"), rows)


# ------------------------------------------------------------------------------ comparisons


def head_to_head(report: Report) -> Table:
    """Every compared pair: Δ = A − B and its CI in percentage points, p and Holm-adjusted p (with the
    family size, or ``sanity`` for a pair with a reference agent: :func:`.fmt.fmt_p_adjusted`), the test,
    shared tasks, the minimum detectable effect and the verdict (strong when significant). Over fewer
    tasks than any difference needs, the CI cell says so (:func:`.verdicts.too_few_for_interval`)."""
    rows: list[tuple[Cell, ...]] = []
    for c in report.comparisons:
        ci = c.ci
        few = too_few_for_interval(c.n_tasks, c.alpha) if ci else None
        rows.append((
            Code(c.a), Code(c.b), Text(fmt_pp(c.delta, 1)),
            Text(few, prose=True) if few else Text(f"{fmt_pp(ci[0], 1)} … {fmt_pp(ci[1], 1)}" if ci else DASH),
            Text(fmt_p(c.p_value)), Text(fmt_p_adjusted(c)), Text(fmt_test(c)), Text(str(c.n_tasks)),
            Text(fmt_pp(c.mde, 1).lstrip("+") if c.mde is not None else DASH),
            Text(c.verdict, prose=True, strong=c.significant),
        ))
    return _table(_cols("A", "B", "Δ", "95% CI", "p", "p (Holm)", "Test", "Tasks", "MDE", "Verdict",
                        numeric={2, 4, 5, 7, 8}), rows)


# ------------------------------------------------------------------------------ tasks

_VAGUE = Flag("vague")
_RED_BY_IMPORT = Flag("red by import error",
                      "its tests only failed at the parent because their module could not be imported")


def _subject(t: TaskRow) -> Subject:
    flags = ((_VAGUE,) if t.well_specified is False else ()) + ((_RED_BY_IMPORT,) if t.red_by_import_error else ())
    return Subject(t.subject, flags)


def _attempts(report: Report, t: TaskRow, agent: str) -> Attempts:
    outs = t.attempts.get(agent, [])
    flags = [o == "solved" and sus for o, sus in zip(outs, t.suspicious.get(agent, [False] * len(outs)), strict=True)]
    return Attempts(tuple(outs), tuple(grid_symbol(o, f, report.legend) for o, f in zip(outs, flags, strict=True)),
                    tuple(t.similarity.get(agent, [])), tuple(flags))


def per_task(report: Report) -> Table:
    """One row per task: id, subject with its flags, and each agent's attempts (symbols and edit-F1)."""
    rows: list[tuple[Cell, ...]] = [(Code(t.id), _subject(t), *(_attempts(report, t, n) for n in report.agents))
                                    for t in report.tasks]
    return _table(_cols("Task", "Subject", *(Code(n) for n in report.agents)), rows, css="grid")


def task_grid(report: Report) -> Table:
    """The per-task grid for a terminal: id, one cell of symbols per agent, the subject in the room left."""
    columns = (Column(Text("task")), *(Column(Code(n)) for n in report.agents), Column(Text("subject"), fill=True))
    rows: list[tuple[Cell, ...]] = [(Code(t.id), *(_attempts(report, t, n) for n in report.agents), _subject(t))
                                    for t in report.tasks]
    return _table(columns, rows)


def well_specified_table(report: Report) -> Table:
    """pass@1 and its CI of each agent over the well-specified tasks only."""
    ws = report.well_specified
    rows: list[tuple[Cell, ...]] = [(_agent(report.agents[n]), Text(fmt_pct(v, 1)),
                                     Text(fmt_ci(ws.pass_at_1_ci.get(n), 1))) for n, v in ws.agents.items()]
    return _table(_cols("Agent", "pass@1", "95% CI", numeric={1, 2}), rows)


def per_language(report: Report) -> Table | None:
    """pass@1 of each agent over the tasks of each language; ``None`` without languages."""
    if not report.languages:
        return None
    rows: list[tuple[Cell, ...]] = [
        (Text(lang, prose=True), Text(str(n)), *(Text(fmt_pct(a.per_language.get(lang), 1))
                                                 for a in report.agents.values()))
        for lang, n in report.languages.items()
    ]
    names = [Code(n) for n in report.agents]
    return _table(_cols("Language", "Tasks", *names, numeric=set(range(1, len(names) + 2))), rows)


def flagged_table(report: Report) -> Table | None:
    """Attempts flagged suspicious (with the reason), for editing tests, or forged (a "Canary passed"
    column, only when some attempt was); ``None`` when none is."""
    forged = any(f.canary for f in report.flagged)
    rows: list[tuple[Cell, ...]] = [
        (Code(f.task_id), Code(f.agent), Text(str(f.attempt)), Text(outcome_words(f.outcome)),
         Text((f"yes: {f.reason}" if f.reason else "yes") if f.suspicious else "", prose=True),
         Text("yes" if f.touched_tests else ""),
         *([Code(f.canary) if f.canary else Text("")] if forged else []))
        for f in report.flagged
    ]
    heads = ("Task", "Agent", "Attempt", "Outcome", "Suspicious", "Touched tests",
             *(("Canary passed",) if forged else ()))
    return _table(_cols(*heads, numeric={2}), rows) if rows else None


def runs_table(report: Report) -> Table:
    """The run folders: id, creation time, attempts per task, tasks digest, why a run was cut short."""
    rows: list[tuple[Cell, ...]] = [
        (Code(r.run_id), Text(str(r.created_at or DASH), prose=True),
         Text(str(r.attempts if r.attempts is not None else DASH)),
         Code(str(r.tasks_digest)) if r.tasks_digest else Text(DASH),
         Text(str(r.cut_short), prose=True) if r.cut_short else Text(DASH))
        for r in report.runs
    ]
    return _table(_cols("Run", "Created", "Attempts per task", "Tasks digest", "Cut short", numeric={2}), rows)
