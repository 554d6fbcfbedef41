"""The run page (``view/index.html``, then ``index-2.html`` … for more tasks): the report's answer
sentence, notes, probe verdicts and tables, the per-task grid where every attempt symbol links to its
attempt page and every task id to its task page, and the filters (agent, outcome, task,
well-specified, flagged; :mod:`.assets` runs them).

Only the first page holds the report's tables; every page holds :data:`TASKS_PER_PAGE` rows of the
grid and the pager, whose links keep the filter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import quote

from pytest_homefield.records import OUTCOMES
from pytest_homefield.report import tables
from pytest_homefield.report.compute import SYMBOLS
from pytest_homefield.report.fmt import (
    FLAGGED_SOLVES,
    SUSPICIOUS_SOLVE_SYMBOL,
    SUSPICIOUS_SOLVE_WORDS,
    grid_flagged_solves,
    grid_symbol,
    memorization_lines,
    outcome_words,
    title_line,
)
from pytest_homefield.report.headline import headline
from pytest_homefield.report.html import forest_svg, html_table
from pytest_homefield.report.model import Report, TaskRow
from pytest_homefield.view.common import attempt_page_name, e, frame, outcome_span, task_page_name
from pytest_homefield.view.data import AttemptRef, SiteData

__all__ = ["TASKS_PER_PAGE", "index_name", "render_run_pages"]

#: Rows of the per-task grid on one page (1,000 tasks × 5 agents × 3 attempts: about 0.5 MB a page).
TASKS_PER_PAGE = 200


def index_name(page: int) -> str:
    """``index.html`` for page 1, ``index-N.html`` after."""
    return "index.html" if page == 1 else f"index-{page}.html"


def _filters(report: Report, agents: Sequence[str]) -> str:
    used = [o for o in OUTCOMES if any(o in a.outcomes for a in report.agents.values())]
    agent_opts = "".join(f'<option value="{e(a)}">{e(a)}</option>' for a in agents)
    outcome_opts = "".join(f'<option value="{e(o)}">{e(outcome_words(o))}</option>' for o in used)
    return ('<div class="filters" id="filters">'
            f'<label>agent <select id="f-agent"><option value="">all</option>{agent_opts}</select></label>'
            f'<label>outcome <select id="f-outcome"><option value="">any</option>{outcome_opts}</select></label>'
            '<label>task <input type="text" id="f-task" placeholder="id or words (/)" size="18"></label>'
            '<label>well-specified <select id="f-ws"><option value="">any</option><option value="1">yes</option>'
            '<option value="0">no</option></select></label>'
            '<label><input type="checkbox" id="f-flagged" value="1"> flagged only</label>'
            '<span class="muted"><span id="shown"></span> tasks shown on this page · j/k select, o opens</span></div>')


def _grid(data: SiteData, rows: Sequence[TaskRow], extra_ids: Sequence[str]) -> str:
    agents = data.agents
    head = "".join(f'<th data-agent="{e(a)}"><code>{e(a)}</code></th>' for a in agents)
    body = []
    items: list[tuple[str, TaskRow | None]] = [(t.id, t) for t in rows] + [(i, None) for i in extra_ids]
    for tid, row in items:
        by_agent = data.by_task.get(tid, {})
        ws = "" if row is None or row.well_specified is None else ("1" if row.well_specified else "0")
        subject = row.subject if row is not None else "(not in tasks.jsonl)"
        flags = ""
        if row is not None and row.well_specified is False:
            flags += ' <span class="tag">vague</span>'
        if row is not None and row.red_by_import_error:
            flags += ' <span class="tag">red by import error</span>'
        flagged = any(data.flagged(ref) for refs in by_agent.values() for ref in refs)
        cells = []
        for a in agents:
            links = []
            refs = by_agent.get(a, [])
            # the report's own flags (``tasks[].suspicious``, one per attempt in attempt order, as ``refs``);
            # a task the report lacks has only its records
            marks = row.suspicious.get(a, []) if row is not None else [bool(r.result.suspicious) for r in refs]
            for i, ref in enumerate(refs):
                links.append(_attempt_link(data, ref, ref.result.outcome == "solved" and i < len(marks) and marks[i]))
            cells.append(f'<td data-agent="{e(a)}">{"".join(links) or "·"}</td>')
        body.append(f'<tr data-task="{e(tid)}" data-subject="{e(subject)}" data-ws="{ws}" '
                    f'data-flagged="{"1" if flagged else ""}"><td><a class="task" href="{task_page_name(tid)}">'
                    f"<code>{e(tid)}</code></a></td><td>{e(subject)}{flags}</td>{''.join(cells)}</tr>")
    return (f'<table class="grid"><thead><tr><th>Task</th><th>Subject</th>{head}</tr></thead><tbody>'
            + "\n".join(body) + "</tbody></table>")


def _attempt_link(data: SiteData, ref: AttemptRef, flagged_solve: bool = False) -> str:
    """One attempt's grid symbol linking to its page; ``flagged_solve``: a solve flagged suspicious (the report's
    ``tasks[].suspicious``), shown with its own mark and class ``o-suspicious``."""
    r = ref.result
    flag = " flag" if data.flagged(ref) else ""
    css = "suspicious" if flagged_solve else r.outcome
    words = SUSPICIOUS_SOLVE_WORDS if flagged_solve else outcome_words(r.outcome)
    tip = f"attempt {r.attempt}: {words}" + (f" — {r.error}" if r.error else "")
    sym = grid_symbol(r.outcome, flagged_solve, SYMBOLS)
    return (f'<a class="att o-{css}{flag}" data-outcome="{r.outcome}" title="{e(tip[:200])}" '
            f'href="{attempt_page_name(r.task_id, r.agent, r.attempt)}">{sym}</a>')


def _flagged(data: SiteData) -> str:
    refs = [ref for ref in data.attempts if data.flagged(ref)]
    if not refs:
        return '<p class="muted">No attempt was flagged.</p>'
    rows = []
    for ref in refs:
        r = ref.result
        href = attempt_page_name(r.task_id, r.agent, r.attempt)
        why = "; ".join(x for x in (r.suspicious_reason if r.suspicious else "", "touched tests" if r.touched_tests
                                    else "", f"canary passed: {r.canary}" if r.canary else "") if x)
        rows.append(f'<tr><td><a href="{href}"><code>{e(r.task_id)}</code></a></td><td><a href="{href}">'
                    f'<code>{e(r.agent)}</code></a></td><td><a href="{href}">{r.attempt}</a></td>'
                    f"<td>{outcome_span(r.outcome)}</td><td>{e(why)}</td></tr>")
    return ('<table id="flagged"><thead><tr><th>Task</th><th>Agent</th><th>Attempt</th><th>Outcome</th><th>Why</th>'
            "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _outcomes(rep: Report) -> list[str]:
    """Attempts per outcome per agent, each count linking to the grid filtered to those attempts."""
    used, counts = tables.outcome_columns(rep)
    if not used:
        return []
    head = "".join(f"<th>{outcome_span(o, SUSPICIOUS_SOLVE_SYMBOL, flagged_solve=True)}</th>" if o == FLAGGED_SOLVES
                   else f"<th>{outcome_span(o, SYMBOLS.get(o, ''))}</th>" for o in used)
    rows = []
    for name in rep.agents:
        c = counts[name]
        cells = "".join(f'<td class="n">{c[o]}</td>' if o == FLAGGED_SOLVES and c.get(o) else
                        f'<td class="n"><a href="index.html?agent={quote(name)}&amp;outcome={o}#tasks">'
                        f"{c[o]}</a></td>" if c.get(o) else '<td class="n">0</td>' for o in used)
        link = f'<a href="index.html?agent={quote(name)}#tasks"><code>{e(name)}</code></a>'
        rows.append(f"<tr><td>{link}</td>{cells}</tr>")
    return ["<h2>Outcomes</h2>", f'<table id="outcomes"><thead><tr><th>Agent</th>{head}</tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>",
            '<p class="note">Each count opens the per-task grid filtered to that agent and outcome.</p>']


def _pager(page: int, pages: int) -> str:
    if pages <= 1:
        return ""
    links = [f"<span>page {page} of {pages}:</span>"]
    for p in range(1, pages + 1):
        links.append(f"<b>{p}</b>" if p == page else f'<a class="keepq" href="{index_name(p)}">{p}</a>')
    return f'<p class="pager">{"".join(links)}</p>'


def _report_tables(rep: Report, data: SiteData) -> list[str]:
    b: list[str] = []
    if rep.cut_short:
        b.append(f'<p class="banner">Cut short: {e(rep.cut_short)}.</p>')
    top = headline(rep)
    if top:  # the answer on top, as every report opens (issue 35)
        b.append(f'<p class="headline" id="headline">{e(top)}</p>')
    if rep.notes:
        b.append('<ul class="notes">' + "".join(f"<li>{e(n)}</li>" for n in rep.notes) + "</ul>")
    memo = memorization_lines(rep)
    if memo:
        b.append('<h2>Memorization probe</h2><ul id="memorization">' + "".join(f"<li>{e(m)}</li>" for m in memo)
                 + "</ul>")
    if not rep.agents:
        return [*b, "<p>No results yet.</p>"]
    b += ["<h2>Leaderboard</h2>", html_table(tables.leaderboard(rep, tokens=True))]
    b += _outcomes(rep)
    if rep.comparisons:
        b += ["<h2>Head to head</h2>", forest_svg(rep.comparisons), html_table(tables.head_to_head(rep))]
    b += ["<h2>Flagged attempts</h2>", _flagged(data)]
    errors = tables.errors_table(rep)
    if errors:
        b += ["<h2>Most common error lines</h2>", html_table(errors)]
    b += ["<h2>Runs</h2>", html_table(tables.runs_table(rep)), html_table(tables.agents_table(rep))]
    return b


def render_run_pages(data: SiteData, view_command: str, per_page: int = TASKS_PER_PAGE) -> Mapping[str, str]:
    """Every run page by file name (``index.html``, ``index-2.html`` …)."""
    rep = data.report
    title = title_line(rep)
    known = {t.id for t in rep.tasks}
    extra = [tid for tid in data.by_task if tid not in known]
    n = len(rep.tasks) + len(extra)
    pages = max(1, -(-n // per_page))
    out: dict[str, str] = {}
    for page in range(1, pages + 1):
        lo, hi = (page - 1) * per_page, page * per_page
        rows = rep.tasks[lo:hi]
        extra_here = extra[max(0, lo - len(rep.tasks)): max(0, hi - len(rep.tasks))]
        b = [f"<h1>{e(title)}</h1>"]
        if page == 1:
            b += _report_tables(rep, data)
        b.append(f'<h2 id="tasks">Per task <small class="muted">{n} task{"s" if n != 1 else ""}</small></h2>')
        legend = " · ".join(f'<span class="o-{o}">{SYMBOLS[o]}</span> {e(outcome_words(o))}' for o in OUTCOMES
                            if o in SYMBOLS and any(o in a.outcomes for a in rep.agents.values()))
        if grid_flagged_solves(rep):
            legend += f' · <span class="o-suspicious">{SUSPICIOUS_SOLVE_SYMBOL}</span> {e(SUSPICIOUS_SOLVE_WORDS)}'
        b.append(f'<p class="note">{legend}. Every symbol opens its attempt; a task id opens the task with every '
                 "agent's attempts side by side. Dashed: flagged.</p>")
        b += [_filters(rep, data.agents), _pager(page, pages), _grid(data, rows, extra_here), _pager(page, pages)]
        b.append(f'<p class="muted">Built by <code>{e(view_command)}</code>.</p>')
        out[index_name(page)] = frame(title, b, depth=0)
    return out
