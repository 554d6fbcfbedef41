"""Terminal rendering of a report (:class:`~.model.Report` or its dict).

:func:`render_text` returns ``(line, markup)`` pairs; the markup dict holds pytest
``TerminalReporter`` keywords (``{"green": True, "bold": True}``), so the plugin writes each pair with
``terminalreporter.write_line(line, **markup)`` and the CLI prints :func:`render_text_plain`.
:func:`text_table` lays out a :class:`~.tables.Table` for a terminal (also the ablation report's).
"""

from __future__ import annotations

import textwrap

from pytest_homefield.records import OUTCOMES, one_line
from pytest_homefield.report import tables
from pytest_homefield.report.family import COST_REPORTED
from pytest_homefield.report.fmt import (
    DASH,
    SUSPICIOUS_SOLVE_SYMBOL,
    SUSPICIOUS_SOLVE_WORDS,
    flagged_label,
    fmt_pct,
    fmt_tokens,
    grid_flagged_solves,
    memorization_lines,
    no_agent_time,
    no_cost_data,
    no_time_data,
    outcome_parts,
    outcome_words,
    sandbox_line,
    title_line,
)
from pytest_homefield.report.headline import headline
from pytest_homefield.report.kinds import kinds_line
from pytest_homefield.report.model import JsonObject, Report, as_report
from pytest_homefield.report.tables import AgentName, Attempts, Cell, Code, OutcomeHead, Subject, Table, Text

__all__ = ["Line", "render_text", "render_text_plain", "text_cell", "text_table"]

#: One terminal line and its markup (``{"bold": True}``).
Line = tuple[str, dict[str, bool]]

#: The markup of a row's tone.
_TONE_MARKUP = {"good": "green", "bad": "red", "sim": "cyan"}


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[: max(0, n - 1)] + "…"


def text_cell(cell: Cell) -> str:
    """One cell as plain text: an agent as ``name [sim, hinted]``, a subject with its flags in front
    (``[vague] Fix rounding``), a task's attempts as their symbols (``✓✗``, ``·`` for none)."""
    if isinstance(cell, Text | Code):
        return cell.text
    if isinstance(cell, AgentName):
        return f"{cell.name} [{', '.join(cell.tags)}]" if cell.tags else cell.name
    if isinstance(cell, Subject):
        text = cell.text or "(unknown task)"
        for f in cell.flags:
            text = f"[{f.label}] {text}"
        return text
    if isinstance(cell, OutcomeHead):
        return f"{cell.symbol} {outcome_words(cell.outcome)}"
    assert isinstance(cell, Attempts)
    return "".join(cell.symbols) or "·"


def _layout(head: list[str], rows: list[list[str]], right: list[bool], indent: str) -> list[str]:
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    return [indent + "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True))
            .rstrip() for cells in (head, *rows)]


def text_table(table: Table, *, width: int = 100, indent: str = "") -> list[Line]:
    """The table as terminal lines, the header bold and each row marked by its tone.

    Columns with a ``drop`` rank are dropped (1 first) until every line fits ``width``; a ``fill``
    column (the last) is written after the others, clipped to the room left, and left out of rows
    with less than 8 columns of room."""
    head = [one_line(text_cell(c.title)) for c in table.columns]  # widths counted on the text as shown
    rows = [[one_line(text_cell(c)) for c in row.cells] for row in table.rows]
    for i, col in enumerate(table.columns):
        if col.clip:
            head[i] = _clip(head[i], col.clip)
            for r in rows:
                r[i] = _clip(r[i], col.clip)
    marks = [{_TONE_MARKUP[row.tone]: True} if row.tone else {} for row in table.rows]
    if table.columns and table.columns[-1].fill:
        return _fill_layout(head, rows, marks, width)
    keep = list(range(len(table.columns)))
    droppable = sorted((col.drop, i) for i, col in enumerate(table.columns) if col.drop)
    for drop in [None, *droppable]:
        if drop is not None:
            keep.remove(drop[1])
        lines = _layout([head[i] for i in keep], [[r[i] for i in keep] for r in rows],
                        [table.columns[i].numeric for i in keep], indent)
        if max(len(t) for t in lines) - len(indent) <= width:
            break
    return [(lines[0], {"bold": True}), *zip(lines[1:], marks, strict=True)]


def _fill_layout(head: list[str], rows: list[list[str]], marks: list[dict[str, bool]], width: int) -> list[Line]:
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head) - 1)]
    out: list[Line] = []
    for i, r in enumerate((head, *rows)):
        text = "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False))
        if i == 0:
            out.append((f"{text}  {r[-1]}", {"bold": True}))
            continue
        room = max(0, width - len(text) - 2)
        out.append((f"{text}  {_clip(r[-1], room)}" if room >= 8 else text.rstrip(), marks[i - 1]))
    return out


def render_text(report: Report | JsonObject, *, width: int = 100, verbose: bool = False) -> list[Line]:
    """The report as terminal lines with markup, at most ``width`` columns where possible.

    Always: title, cut-short banner, leaderboard, outcomes per agent, head to head, tasks no agent
    solved, notes. With ``verbose``: tokens and similarity columns, the pass@k curves, the per-task
    grid with its legend, the well-specified subset and the per-language breakdown.

    Every line goes through :func:`~pytest_homefield.records.one_line` here, the one place the terminal
    report is made: a commit's subject or test id holding ESC sequences, a carriage return or U+202E is
    shown as its escape (``\\x1b``) and cannot clear the screen or rewrite the ranking printed above.
    """
    return [(one_line(text), markup) for text, markup in _render_text(report, width=width, verbose=verbose)]



def _wrap(text: str, width: int, indent: str) -> list[str]:
    """``text`` as lines of at most ``max(40, width)`` characters, the later ones after ``indent``, broken at spaces
    only: never inside a word such as "sim-0.5" or "Holm-adjusted", nor a flag such as "--stop-after-tasks" (nu54:
    a note's command read `--stop-` / `after-tasks 8` and no longer ran when copied)."""
    return textwrap.wrap(text, max(40, width), subsequent_indent=indent, break_on_hyphens=False)

def _render_text(report: Report | JsonObject, *, width: int, verbose: bool) -> list[Line]:
    rep = as_report(report)
    lines: list[Line] = []
    agents = rep.agents

    def add(text: str = "", **markup: bool) -> None:
        lines.append((text, {k: True for k, v in markup.items() if v}))

    def wrapped(text: str, indent: str, **markup: bool) -> None:
        for j, part in enumerate(_wrap(text, width - 2, "    ")):
            add(f"{indent}{part}", **{k: v and (k != "bold" or j == 0) for k, v in markup.items()})

    add(title_line(rep), bold=True)
    if rep.cut_short:
        add(f"! run cut short: {rep.cut_short}; numbers cover only the attempts that ran", red=True, bold=True)
    top = headline(rep)
    if top:  # the answer on top (issue 35), never broken inside a word such as "Holm-adjusted"
        for part in _wrap(top, width - 2, "  "):
            add(part, bold=True)
    if not agents or not any(a.attempts for a in agents.values()):
        add(f"no results yet ({len(agents)} agent{'s' if len(agents) != 1 else ''}, no attempt recorded)", yellow=True)
        for note in rep.notes:
            add(f"note: {note}", yellow=True)
        return lines

    lines.extend(text_table(tables.terminal_leaderboard(rep), width=width))
    # each ``*`` of the board's pass@1 is explained under it, the line repeating the cell (``67%*: …``; cnt62)
    for a in agents.values():
        if a.incomplete:  # the board's pass@1 column stays narrow: the label goes under it
            add(f"{a.name} pass@1 {fmt_pct(a.pass_at_1)}*: {a.incomplete}", yellow=True)
        if a.at_its_word:  # a re-roll at the agent's word (atk20 F2)
            add(f"{a.name} pass@1 {fmt_pct(a.pass_at_1)}*: {a.at_its_word}", yellow=True)
        if a.twin_hits:  # solves a content picker may have won by luck (atk22)
            add(f"{a.name} pass@1 {fmt_pct(a.pass_at_1)}*: {a.twin_hits}", yellow=True)
        if a.flagged_solves:  # counted solved, the flag a hint; verdicts resting on them withheld (sus60)
            add(f"{a.name} pass@1 {fmt_pct(a.pass_at_1)}*: {flagged_label(a)}", yellow=True)
        if a.forged:  # not ranked, no comparison, fails the gate (docs/contracts.md §8)
            add(f"{a.name}: {a.forged} (not ranked)", yellow=True)
    reported = [a.name for a in agents.values() if a.cost_reported]
    if reported and not no_cost_data(agents):  # the board's cost columns stay narrow: the label goes under it
        add(f"cost of {', '.join(reported)}: {COST_REPORTED}, not measured by homefield; it breaks no tie")
    missing = [why for why, on in (("no cost data (every agent reported zero or no cost)", no_cost_data(agents)),
                                   (no_agent_time(agents), no_time_data(agents))) if on]
    if missing:
        add("; ".join(missing))

    add("outcomes (scored | unscored, left out of every rate):", bold=True)
    namew = min(28, max(len(n) for n in agents))
    pad = " " * namew
    for name, a in agents.items():
        scored, unscored = outcome_parts(a, rep.legend)
        text = f"  {_clip(name, namew).ljust(namew)}  {' · '.join(scored) or DASH}"
        if a.failure_kinds:
            text += f" ({kinds_line(a.failure_kinds)})"
        add(text + (f" | {' · '.join(unscored)}" if unscored else ""), yellow=bool(unscored))
        if a.first_error and not a.solved and not a.failure_kinds:  # nothing graded: a crashed program says why
            task, attempt, error = a.first_error
            wrapped(f"first error ({task} #{attempt}): {error}", f"  {pad}  ", yellow=True)
        if not verbose:
            continue
        if len(a.pass_at_k) > 1:
            curve = " ".join(f"@{k} {fmt_pct(v)}" for k, v in a.pass_at_k.items())
            hat = " ".join(f"^{k} {fmt_pct(v)}" for k, v in a.pass_hat_k.items())
            add(f"  {pad}  pass{curve} · pass{hat}")
        if any(n is not None for n in (a.input_tokens, a.output_tokens, a.cache_read_tokens)):
            add(f"  {pad}  tokens in {fmt_tokens(a.input_tokens)} · out {fmt_tokens(a.output_tokens)}"
                f" · cache read {fmt_tokens(a.cache_read_tokens)} · cache write {fmt_tokens(a.cache_write_tokens)}")
        if a.similarity_n:
            add(f"  {pad}  diff vs gold: edit-F1 {a.similarity_mean:.2f} over {a.similarity_n} diffs,"
                f" {a.similarity_exact} exact")

    comps = rep.comparisons
    if comps:
        m = sum(1 for c in comps if c.p_value is not None and not c.sanity)
        checks = sum(1 for c in comps if c.p_value is not None and c.sanity)
        add(f"head to head (pass@1 over shared tasks{f', Holm-adjusted over {m} pairs' if m > 1 else ''}"
            f"{f', {checks} sanity check(s) unadjusted' if checks else ''}):", bold=True)
        for c in comps:
            if c.test is not None:
                wrapped(c.verdict, "  ", green=c.significant, bold=c.significant)
        skipped = [f"{c.a}–{c.b}" for c in comps if c.test is None]
        if skipped:
            wrapped("not compared (no task with scored attempts from both): " + ", ".join(skipped), "  ", yellow=True)

    unsolved = rep.unsolved_by_all
    if unsolved:
        titles = {t.id: t.subject or "" for t in rep.tasks}
        add(f"solved by no agent ({len(unsolved)}):")
        for tid in unsolved[:8]:
            add(_clip(f"  {tid}  {titles.get(tid, '')}".rstrip(), width))
        if len(unsolved) > 8:
            add(f"  … and {len(unsolved) - 8} more")

    memo = memorization_lines(rep)
    if memo:
        add("memorization probe (best sample vs the control, Benjamini-Hochberg flags):", bold=True)
        for line in memo:
            wrapped(line, "  ", yellow="recites 0 of" not in line)

    if verbose:
        lines.extend(_verbose_lines(rep, width))
    elif rep.flagged:
        n_forged = sum(1 for f in rep.flagged if f.canary)
        if n_forged:
            add(f"{n_forged} attempt(s) forged: a canary test passed (see the report)", yellow=True)
        if len(rep.flagged) > n_forged:
            add(f"{len(rep.flagged) - n_forged} attempt(s) flagged suspicious or edited tests (see the report)",
                yellow=True)

    if rep.sandbox:
        add(sandbox_line(rep.sandbox))
    for note in rep.notes:
        for part in _wrap(f"note: {note}", width, "      "):
            add(part, yellow=True)
    return lines


def _verbose_lines(rep: Report, width: int) -> list[Line]:
    """The per-task grid with its legend, the well-specified subset, per language, flagged attempts."""
    used = {o for row in rep.tasks for outs in row.attempts.values() for o in outs}
    key = "  ".join(f"{rep.legend[o]} {outcome_words(o)}" for o in OUTCOMES if o in used)
    if grid_flagged_solves(rep):
        key += f"  {SUSPICIOUS_SOLVE_SYMBOL} {SUSPICIOUS_SOLVE_WORDS}"
    out: list[Line] = [(f"per task ({key}  · no attempt):", {"bold": True}), *text_table(tables.task_grid(rep),
                                                                                           width=width)]
    ws = rep.well_specified
    if ws.agents:
        out.append((f"well-specified tasks only ({ws.tasks}):", {"bold": True}))
        out.append(("  " + " · ".join(f"{n} {fmt_pct(v)}" for n, v in ws.agents.items()), {}))
    if rep.languages:
        out.append(("per language (pass@1; tasks):", {"bold": True}))
        for lang, n in rep.languages.items():
            vals = " · ".join(f"{name} {fmt_pct(a.per_language.get(lang))}" for name, a in rep.agents.items())
            out.append((f"  {lang} ({n}): {vals}", {}))
    if rep.flagged:
        out.append((f"flagged attempts ({len(rep.flagged)}): suspicious diff or edited tests",
                    {"yellow": True, "bold": True}))
        for f in rep.flagged[:20]:
            what = ", ".join(k.replace("_", " ") for k, on in (("suspicious", f.suspicious),
                                                               ("touched_tests", f.touched_tests)) if on)
            if f.reason:
                what = what.replace("suspicious", f"suspicious ({f.reason})", 1)
            out.append((f"  {f.task_id} {f.agent}#{f.attempt} {f.outcome}: {what}", {"yellow": True}))
    return out


def render_text_plain(report: Report | JsonObject, *, width: int = 100, verbose: bool = True) -> str:
    """:func:`render_text` without markup, as one string ending in a newline (verbose by default)."""
    return "\n".join(line for line, _ in render_text(report, width=width, verbose=verbose)) + "\n"
