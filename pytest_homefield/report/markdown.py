"""Markdown rendering of a report (:class:`~.model.Report` or its dict); written as ``report.md``.

GitHub-flavoured tables (:func:`markdown_table`, also the ablation report's). Dollar signs are
escaped (``\\$``) so that no renderer turns two prices into a formula; grid cells are code spans so
the outcome symbols line up.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pytest_homefield.records import OUTCOMES, one_line, visible
from pytest_homefield.report import tables
from pytest_homefield.report.fmt import (
    DASH,
    SUSPICIOUS_SOLVE_SYMBOL,
    SUSPICIOUS_SOLVE_WORDS,
    grid_flagged_solves,
    memorization_lines,
    outcome_words,
    p_rule,
    sandbox_line,
    title_line,
)
from pytest_homefield.report.headline import headline
from pytest_homefield.report.model import JsonObject, Report, as_report
from pytest_homefield.report.tables import AgentName, Cell, Code, OutcomeHead, Subject, Table, Text
from pytest_homefield.settings_table import option

__all__ = ["markdown_table", "md_code", "md_escape", "render_markdown"]

_TICKS = re.compile("`+")
#: The ASCII punctuation a Markdown renderer may read as syntax in free text: emphasis, code, links, cells,
#: math, HTML, headings, GFM strikethrough (``~``) and character references (``&``: ``&#x202e;`` in a commit
#: subject is a right-to-left override once rendered, ``&lt;b&gt;`` a tag's look, though ``visible`` passed
#: the ASCII through).
_ESCAPE = str.maketrans({c: "\\" + c for c in "\\`*_[]|$<>#~&"})


def md_escape(s: str) -> str:
    """Escape Markdown punctuation (``| $ * _ & ~`` …) in free text such as subjects and error lines: a
    backslash before each (CommonMark shows it as itself), so the text renders as it reads in the file."""
    return one_line(s).translate(_ESCAPE)


def md_code(s: str) -> str:
    """``s`` as one Markdown code span that stays one table cell: a newline becomes a space, ``|`` is
    escaped (GFM splits cells on it even inside a code span), and a text holding backticks gets a
    longer fence (CommonMark: a run of backticks longer than any inside it, padded by a space)."""
    s = one_line(s).replace("|", "\\|")
    if "`" not in s:
        return f"`{s}`"
    longest = max(len(m) for m in _TICKS.findall(s))
    fence = "`" * (longest + 1)
    return f"{fence} {s} {fence}"


def md_cell(cell: Cell, escape: Callable[[str], str] = md_escape) -> str:
    """One cell in Markdown; ``escape`` is applied to free text (prose, subjects, symbols)."""
    if isinstance(cell, Text):
        s = escape(cell.text) if cell.prose else cell.text
        return f"**{s}**" if cell.strong else s
    if isinstance(cell, Code):
        return md_code(cell.text)
    if isinstance(cell, AgentName):
        return f"`{cell.name}`" + (" *(" + ", ".join(cell.tags) + ")*" if cell.tags else "")
    if isinstance(cell, Subject):
        text = escape(cell.text) if cell.text else "*(not in tasks file)*"
        return text + "".join(f" *{f.label}*" for f in cell.flags)
    if isinstance(cell, OutcomeHead):
        return f"{escape(cell.symbol)} {outcome_words(cell.outcome)}" + (" (unscored)" if cell.unscored else "")
    f1 = " ".join(DASH if s is None else f"{s:.2f}" for s in cell.f1)
    return f"`{''.join(cell.symbols) or '·'}` {f1}".rstrip()


def markdown_table(table: Table, *, escape: Callable[[str], str] = md_escape, compact: bool = False) -> list[str]:
    """A GFM table, one string per line. Numeric columns are right-aligned (``---:``); ``compact``
    writes the separator row as ``|---|---|`` without alignment (the ablation report's style)."""
    head = [md_cell(c.title, escape) for c in table.columns]
    if compact:
        rule = "|" + "|".join("---" for _ in table.columns) + "|"
    else:
        right = [c.numeric if c.md_right is None else c.md_right for c in table.columns]
        rule = "| " + " | ".join("---:" if r else "---" for r in right) + " |"
    out = ["| " + " | ".join(head) + " |", rule]
    out += ["| " + " | ".join(md_cell(c, escape) for c in row.cells) + " |" for row in table.rows]
    return out


def render_markdown(report: Report | JsonObject) -> str:
    """The whole report as one Markdown document ending in a newline. The document goes through
    :func:`~pytest_homefield.records.visible` (newline and tab kept) here, the one place it is made: a
    control or format character of a commit's subject, a test id or an agent's line (ESC sequences that
    ``cat report.md`` would play, a carriage return, U+202E) is written as its escape (``\\x1b``),
    whichever cell or line holds it."""
    return visible(_render_markdown(report), keep="\n\t")


def _render_markdown(report: Report | JsonObject) -> str:
    rep = as_report(report)
    agents = rep.agents
    legend = rep.legend
    out: list[str] = [f"# {md_escape(title_line(rep))}", ""]

    if rep.cut_short:
        out += [f"> **Cut short:** {md_escape(str(rep.cut_short))}. The numbers cover only the attempts that ran.", ""]
    top = headline(rep)
    if top:  # the answer on top (issue 35)
        out += [f"**{md_escape(top)}**", ""]
    if rep.notes:
        out += ["**Read first**", "", *(f"- {md_escape(n)}" for n in rep.notes), ""]
    if not agents:
        out += ["No results yet.", ""]
        return "\n".join(out)

    out += ["## Leaderboard", "", *markdown_table(tables.leaderboard(rep))]
    out += [
        "",
        "pass@1: mean over tasks of solved / scored attempts (each task weighs the same). "
        "pass@k: chance that at least one of k attempts solves a task; pass^k: that all k do "
        "(unbiased estimators, k up to the fewest scored attempts on any task). "
        "Cost / solved: total cost / solved attempts; `~` marks costs that include estimates from "
        "interrupted attempts; — means unknown"
        + ("; *reported by the agent*: its own output, which homefield did not measure and which breaks no tie in "
           "the ranking" if any(a.cost_reported for a in agents.values()) else "")
        + ". Wall times are the agent's, over scored attempts; host: homefield's own seconds per attempt outside the "
        "agent, its test runs and waits (the workspace copies, the diff, carrying it into the grading copy, the "
        "clean-up). "
        "*(sim)*: simulated agent, not a real one; *(hinted)*: told which files the fix touched.",
        "",
    ]
    curve = tables.pass_k_table(rep)
    if curve:
        out += ["### pass@k and pass^k", "", *markdown_table(curve), ""]
    outcomes = tables.outcomes_table(rep)
    if outcomes:
        out += ["## Outcomes", "", *markdown_table(outcomes), "",
                "Unscored outcomes (infra, rate limited) are counted here and left out of every rate; "
                "resuming the run retries them.", ""]
    out += ["## Tokens", "", *markdown_table(tables.tokens_table(rep)), ""]

    if rep.comparisons:
        out += ["## Head to head", ""]
        out += [
            "Every pair on the tasks both agents have scored attempts on; Δ = A − B in percentage points of "
            f"pass@1; {p_rule(rep.comparisons, rep.alpha)}. MDE: the smallest difference this many tasks could "
            "detect.",
            "",
            *markdown_table(tables.head_to_head(rep)),
            "",
        ]

    used_t = [o for o in OUTCOMES if any(o in outs for t in rep.tasks for outs in t.attempts.values())]
    out += ["## Per task", ""]
    out += [
        "Legend: " + " · ".join(f"`{legend[o]}` {outcome_words(o)}" for o in used_t)
        + (f" · `{SUSPICIOUS_SOLVE_SYMBOL}` {SUSPICIOUS_SOLVE_WORDS}" if grid_flagged_solves(rep) else "")
        + " · `·` no attempt. "
        "Beside each cell: the edit-F1 of each attempt's diff against the gold patch (secondary; "
        "— when no diff was found). *vague*: not a well-specified task."
        + (" *red by import error*: its tests failed at the parent only because their module could not be "
           "imported." if any(t.red_by_import_error for t in rep.tasks) else ""),
        "",
        *markdown_table(tables.per_task(rep)),
        "",
    ]

    titles = {t.id: t.subject or "" for t in rep.tasks}
    out += ["## Solved by no agent", ""]
    out += [
        "\n".join(f"- `{u}` {md_escape(titles.get(u, ''))}".rstrip() for u in rep.unsolved_by_all)
        if rep.unsolved_by_all else "None: every task was solved by some agent.",
        "",
    ]

    ws = rep.well_specified
    out += ["## Well-specified tasks only", ""]
    if ws.tasks:
        excl = ws.excluded
        out += [f"{ws.tasks} task{'s' if ws.tasks != 1 else ''}"
                + (f"; left out: {', '.join(f'`{x}`' for x in excl)}." if excl else "; none left out."), ""]
        out += [*markdown_table(tables.well_specified_table(rep)), ""]
    else:
        out += ["No well-specified task in this run.", ""]

    langs = tables.per_language(rep)
    if langs:
        out += ["## Per language", "", *markdown_table(langs), "",
                "pass@1 over the tasks whose source files include that language.", ""]

    out += ["## Similarity to the gold patch (secondary)", ""]
    out += [
        "Changed lines (added and removed, stripped) of each attempt's `diff.patch` in non-test files, "
        "compared as multisets with the gold patch: edit-F1 of the overlap; exact = the same lines. "
        "Tests decide the result; this only shows how close the route was.",
        "",
        *markdown_table(tables.similarity_table(rep)),
        "",
    ]

    out += ["## Flagged attempts", ""]
    out += [
        "Suspicious diffs (they reference pytest internals) and edits to test files, which grading "
        "discards. Per agent: "
        + ", ".join(f"`{n}` {a.suspicious} suspicious / {a.touched_tests} touched tests" for n, a in agents.items())
        + ".",
        "",
    ]
    flagged = tables.flagged_table(rep)
    if flagged:
        out += [*markdown_table(flagged), ""]
    if rep.sandbox:
        line = sandbox_line(rep.sandbox)[len("sandbox: "):].capitalize()
        out += ["## Sandbox", "", line + " (attempts per sandbox).", ""]
    errors = tables.errors_table(rep)
    if errors:
        out += ["## Most common error lines", "", *markdown_table(errors), ""]

    memo = memorization_lines(rep)
    if memo:
        out += ["## Memorization probe", ""]
        out += [f"- {md_escape(line)}" for line in memo]
        out += ["", f"A task is flagged by Benjamini–Hochberg (at the probe's `{option('fdr')}`, 10% by default) "
                "on its exceedance p-value, the share of the control scoring at least its best sample (tasks authored "
                "after the cutoff, or prompts paired with another task's files), when its best sample also "
                f"reaches the probe's `{option('recite-floor')}` (0.5 by default); scores are token similarity to "
                "the gold added lines.", ""]

    out += ["## Runs", "", *markdown_table(tables.runs_table(rep)), ""]
    agents_meta = [
        f"`{n}`: {md_escape(str(a.spec or DASH))}"
        + (f", model {md_escape(str(a.model))}" if a.model else "")
        + (f", version {md_escape(str(a.version))}" if a.version else "")
        for n, a in agents.items()
    ]
    out += ["Agents: " + "; ".join(agents_meta) + ".", ""]
    return "\n".join(out)
