"""HTML rendering of a report (:class:`~.model.Report` or its dict): one self-contained file (inline
CSS and inline SVG, no script, nothing fetched), written as ``report.html``.

Two plots are drawn here as SVG: ``#forest-plot`` (each head-to-head Δ with its CI, zero line
marked) and ``#cost-vs-pass`` (cost per solved task in USD against pass@1, one labelled point per
agent, with the pass@1 CI as a horizontal whisker). Tables come from :mod:`.tables`
(:func:`html_table`, also the ablation report's).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from html import escape

from pytest_homefield.records import OUTCOMES, visible
from pytest_homefield.report import tables
from pytest_homefield.report.fmt import (
    DASH,
    SUSPICIOUS_SOLVE_SYMBOL,
    SUSPICIOUS_SOLVE_WORDS,
    fmt_p,
    fmt_p_adjusted,
    fmt_pct,
    fmt_pp,
    fmt_usd,
    grid_flagged_solves,
    memorization_lines,
    no_cost_data,
    outcome_words,
    p_rule,
    sandbox_line,
    title_line,
)
from pytest_homefield.report.headline import headline
from pytest_homefield.report.model import AgentSummary, ComparisonRow, JsonObject, Report, as_report
from pytest_homefield.report.tables import (
    AgentName,
    Attempts,
    Cell,
    Code,
    OutcomeHead,
    Subject,
    Table,
    Text,
    Tone,
)
from pytest_homefield.report.verdicts import too_few_for_interval

__all__ = ["cost_vs_pass_svg", "forest_svg", "html_cell", "html_table", "render_html"]

_CSS = """
:root { --fg:#1b1f24; --bg:#fff; --muted:#57606a; --line:#d0d7de; --head:#f6f8fa; --accent:#0969da;
  --ok:#1a7f37; --bad:#cf222e; --warn:#9a6700; --unscored:#8250df; --sim:#bf8700; }
@media (prefers-color-scheme: dark) { :root { --fg:#e6edf3; --bg:#0d1117; --muted:#8d96a0; --line:#30363d;
  --head:#161b22; --accent:#4493f8; --ok:#3fb950; --bad:#f85149; --warn:#d29922; --unscored:#a371f7;
  --sim:#e3b341; } }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); margin: 2rem auto; max-width: 1200px; padding: 0 1rem; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid var(--line); }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
th, td { border: 1px solid var(--line); padding: .25rem .5rem; vertical-align: top; }
th { background: var(--head); text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.muted, .note { color: var(--muted); }
.banner { border: 2px solid var(--bad); color: var(--bad); padding: .5rem .75rem; font-weight: 600; }
.notes li { color: var(--warn); }
.tag { font-size: .75rem; border: 1px solid var(--sim); color: var(--sim); border-radius: 3px;
  padding: 0 .25rem; margin-left: .25rem; }
.sig { color: var(--ok); font-weight: 600; }
code, .grid td:nth-child(n+3) { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.grid td:nth-child(n+3) span { display: inline-block; min-width: 1.1em; text-align: center; }
.o-solved { color: var(--ok); } .o-tests_failed, .o-regression { color: var(--bad); }
.o-empty_patch, .o-timeout, .o-test_timeout, .o-agent_error, .o-budget_exceeded { color: var(--warn); }
.o-infra, .o-rate_limited { color: var(--unscored); } .o-suspicious { color: var(--bad); font-weight: 700; }
svg { font: 12px system-ui, sans-serif; fill: var(--fg); max-width: 100%; height: auto; }
svg .axis, svg .grid-line { stroke: var(--line); }
svg .zero { stroke: var(--bad); stroke-dasharray: 4 3; }
svg .ci { stroke: var(--accent); stroke-width: 2; }
svg #cost-vs-pass .ci, #cost-vs-pass .ci { stroke-opacity: .45; }
svg .pt { fill: var(--accent); stroke: var(--accent); stroke-width: 2; }
svg .pt.open { fill: var(--bg); }
svg .pt.sim { fill: var(--sim); stroke: var(--sim); }
svg text.muted { fill: var(--muted); }
.headline { font-size: 1.05rem; font-weight: 600; border-left: 4px solid var(--accent); padding: .25rem .75rem; }
.subject, .prose { white-space: pre-wrap; overflow-wrap: anywhere; }
td.n, th { white-space: nowrap; }
h1 { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; max-width: 100%; }
.scroll > table { margin: .5rem 0 1rem; }
.scroll td:first-child, .scroll th:first-child { position: sticky; left: 0; background: var(--bg); }
.scroll th:first-child { background: var(--head); }
@media (max-width: 640px) {
  body { margin: 1rem auto; padding: 0 .5rem; font-size: 15px; }
  th, td { padding: .2rem .35rem; }
  .plot { overflow-x: auto; }
  .plot svg { max-width: none; }
}
"""


def _e(x: object) -> str:
    """``x`` as HTML text: escaped, its control and format characters (newline and tab kept) shown as
    escapes (:func:`~pytest_homefield.records.visible`), as the viewer shows them."""
    return escape(visible(str(x), keep="\n\t"), quote=True)


def html_cell(cell: Cell, *, strong: bool = True) -> str:
    """One cell as HTML (text escaped); ``strong`` cells are marked ``<span class="sig">`` unless
    ``strong`` is false (the compact style marks the row instead)."""
    if isinstance(cell, Text):
        if cell.strong and strong:
            return f'<span class="sig">{_e(cell.text)}</span>'
        return f'<span class="prose">{_e(cell.text)}</span>' if cell.prose and "  " in cell.text else _e(cell.text)
    if isinstance(cell, Code):
        return f"<code>{_e(cell.text)}</code>"
    if isinstance(cell, AgentName):
        return f"<code>{_e(cell.name)}</code>" + "".join(f'<span class="tag">{_e(t)}</span>' for t in cell.tags)
    if isinstance(cell, Subject):
        text = f'<span class="subject">{_e(cell.text)}</span>' if cell.text else "<em>not in the tasks file</em>"
        for f in cell.flags:
            why = f' title="{_e(f.why)}"' if f.why else ""
            text += f' <span class="tag"{why}>{_e(f.label)}</span>'
        return text
    if isinstance(cell, OutcomeHead):
        return (f'<span class="o-{cell.outcome}">{_e(cell.symbol)}</span> {_e(outcome_words(cell.outcome))}'
                + (" <em>(unscored)</em>" if cell.unscored else ""))
    return _attempts_cell(cell)


@functools.lru_cache(maxsize=4096)
def _attempt_span(i: int, o: str, sym: str, f1: str, flagged_solve: bool = False) -> str:
    """One attempt's symbol with its tooltip (a solve flagged suspicious: class ``o-suspicious``, its own
    words); cached: a 1,000-task report has 25,000 attempts and only a few thousand distinct spans (issue 35)."""
    what, css = (SUSPICIOUS_SOLVE_WORDS, "suspicious") if flagged_solve else (outcome_words(o), o)
    tip = f"attempt {i + 1}: {what}; edit-F1 {f1}"
    return f'<span class="o-{css}" title="{_e(tip)}">{_e(sym)}</span>'


def _attempts_cell(cell: Attempts) -> str:
    f1_texts = [DASH if s is None else f"{s:.2f}" for s in cell.f1]
    spans = [_attempt_span(i, o, sym, f1_texts[i] if i < len(f1_texts) else DASH,
                           i < len(cell.flagged_solve) and cell.flagged_solve[i])
             for i, (o, sym) in enumerate(zip(cell.outcomes, cell.symbols, strict=True))]
    f1s = " ".join(f1_texts)
    out = "".join(spans) or "·"
    return out + f' <small class="muted">{f1s}</small>' if f1s else out


def html_table(table: Table, *, compact: bool = False, tone_classes: Mapping[Tone | None, str] | None = None) -> str:
    """The table as one ``<table>`` element. The report's style has ``<thead>``/``<tbody>``, numeric
    cells in ``class="n"`` and strong cells marked; the ``compact`` style (the ablation report's) has
    bare rows, and the cells of a ``tone_class`` column carry ``class='…'`` from ``tone_classes``
    (``''`` for a tone not in it)."""
    th = "".join(f"<th>{html_cell(c.title)}</th>" for c in table.columns)
    if compact:
        classes = tone_classes or {}
        body = "".join(
            "<tr>" + "".join(f"<td class='{classes.get(row.tone, '')}'>{html_cell(c, strong=False)}</td>"
                             if col.tone_class else f"<td>{html_cell(c, strong=False)}</td>"
                             for col, c in zip(table.columns, row.cells, strict=True)) + "</tr>"
            for row in table.rows
        )
        return f"<table><tr>{th}</tr>{body}</table>"
    body = "".join(
        "<tr>" + "".join(f'<td class="n">{html_cell(c)}</td>' if col.numeric else f"<td>{html_cell(c)}</td>"
                         for col, c in zip(table.columns, row.cells, strict=True)) + "</tr>"
        for row in table.rows
    )
    cls = f' class="{table.css}"' if table.css else ""
    return f"<table{cls}><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


# ---------------------------------------------------------------------------------------- plots


def _nice_step(span: float) -> float:
    """A tick step of 1, 2 or 5 × 10^n giving about 4–10 ticks over ``span``."""
    raw = span / 6 if span > 0 else 0.1
    mag: float = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _tick_pp(v: float) -> str:
    """Axis label in percentage points: ``−50``, ``0``, ``+50``."""
    r = round(100 * v)
    return "0" if r == 0 else f"{r:+d}".replace("-", "−")


def _tick_usd(v: float, step: float) -> str:
    """Axis label in USD with as many decimals as the tick step needs."""
    nd = max(2, min(4, -math.floor(math.log10(step)))) if step > 0 else 2
    return f"${v:,.{nd}f}"


def _forest_p(c: ComparisonRow) -> str:
    """The forest plot's p: Holm-adjusted with its family (``0.031 of 3``), or the unadjusted p of a
    sanity check against a reference agent (``0.016 sanity``)."""
    return f"{fmt_p(c.p_value)} sanity" if c.sanity else fmt_p_adjusted(c)


def forest_svg(comparisons: Sequence[ComparisonRow]) -> str:
    """SVG ``#forest-plot``: one row per compared pair, Δ (A − B, percentage points) as a dot (filled
    when significant after Holm), its CI as a bar, and a dashed line at Δ = 0."""
    rows = [(c, c.delta) for c in comparisons if c.delta is not None]
    w, left, right, top, rh = 760, 230, 200, 28, 26  # right: "−12.5 pp, p=0.00781 sanity" fits
    h = top + rh * max(1, len(rows)) + 34
    out = [
        f'<svg id="forest-plot" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" aria-label="Forest plot of pass@1 differences with confidence intervals">',
        "<title>Δ pass@1 (A − B) with confidence intervals</title>",
    ]
    if not rows:
        out.append(
            f'<text x="{w / 2}" y="{h / 2}" text-anchor="middle" class="muted">no pair of agents to compare</text>'
        )
        out.append("</svg>")
        return "".join(out)
    ext: float = max(
        0.1,
        *(abs(d) for _, d in rows),
        *(abs(v) for c, _ in rows if c.ci and not too_few_for_interval(c.n_tasks, c.alpha) for v in c.ci
          if v is not None),
    )
    step = _nice_step(2 * ext)
    lim = min(1.0, math.ceil(ext / step - 1e-9) * step) if ext <= 1 else math.ceil(ext / step) * step
    x0, x1 = left, w - right

    def x(v: float) -> float:
        return x0 + (v + lim) / (2 * lim) * (x1 - x0)

    bottom = top + rh * len(rows)
    n_ticks = int(round(2 * lim / step))
    for i in range(n_ticks + 1):
        v = -lim + i * step
        xv = x(v)
        out.append(f'<line class="grid-line" x1="{xv:.1f}" y1="{top - 6}" x2="{xv:.1f}" y2="{bottom}"/>')
        out.append(f'<text x="{xv:.1f}" y="{bottom + 16}" text-anchor="middle" class="muted">{_tick_pp(v)}</text>')
    out.append(
        f'<text x="{(x0 + x1) / 2:.1f}" y="{bottom + 30}" text-anchor="middle" class="muted">'
        "Δ pass@1 (A − B), percentage points</text>"
    )
    out.append(f'<line id="zero-line" class="zero" x1="{x(0):.1f}" y1="{top - 10}" x2="{x(0):.1f}" y2="{bottom}"/>')
    out.append(f'<text x="{x0}" y="{top - 12}" class="muted">A vs B</text>')
    out.append(f'<text x="{x1 + 8}" y="{top - 12}" class="muted">Δ, p (Holm)</text>')
    for i, (c, delta) in enumerate(rows):
        yc = top + rh * i + rh / 2
        label = f"{c.a} vs {c.b}"
        out.append(f'<g class="row"><title>{_e(c.verdict)}</title>')
        out.append(f'<text x="{x0 - 8}" y="{yc + 4:.1f}" text-anchor="end">{_e(label)}</text>')
        if c.ci and None not in c.ci and not too_few_for_interval(c.n_tasks, c.alpha):  # no bar: too few tasks
            lo, hi = (max(-lim, min(lim, v)) for v in c.ci if v is not None)
            out.append(f'<line class="ci" x1="{x(lo):.1f}" y1="{yc:.1f}" x2="{x(hi):.1f}" y2="{yc:.1f}"/>')
            for v in (lo, hi):
                out.append(f'<line class="ci" x1="{x(v):.1f}" y1="{yc - 5:.1f}" x2="{x(v):.1f}" y2="{yc + 5:.1f}"/>')
        cls = "pt" if c.significant else "pt open"
        out.append(f'<circle class="{cls}" cx="{x(delta):.1f}" cy="{yc:.1f}" r="4.5"/>')
        p = _forest_p(c)  # "<0.001 sanity" reads "p<0.001", not "p=<0.001"
        out.append(f'<text x="{x1 + 8}" y="{yc + 4:.1f}">{_e(fmt_pp(delta))}, p{"" if p.startswith("<") else "="}'
                   f'{_e(p)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


def cost_vs_pass_svg(agents: Mapping[str, AgentSummary]) -> tuple[str, list[str]]:
    """SVG ``#cost-vs-pass``: x = pass@1 (0–100 %), y = cost per solved task (USD), one labelled point
    per agent with its pass@1 CI as a whisker. Returns (svg, names of agents that could not be
    plotted because their pass@1 or cost per solved task is unknown)."""
    pts = [(n, a, a.pass_at_1, a.cost_per_solved_usd) for n, a in agents.items()
           if a.pass_at_1 is not None and a.cost_per_solved_usd is not None]
    left_out = [n for n in agents if n not in {p[0] for p in pts}]
    w, h, ml, mr, mt, mb = 640, 380, 70, 30, 20, 50
    out = [
        f'<svg id="cost-vs-pass" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" aria-label="Cost per solved task against pass@1, one point per agent">',
        "<title>Cost per solved task (USD) against pass@1</title>",
    ]
    x0, x1, y0, y1 = ml, w - mr, h - mb, mt
    ymax_raw = max((cps for _, _, _, cps in pts), default=1.0) or 1.0
    step = _nice_step(ymax_raw * 1.15)
    ymax = math.ceil(ymax_raw * 1.15 / step) * step

    def x(v: float) -> float:
        return x0 + v * (x1 - x0)

    def y(v: float) -> float:
        return y0 - v / ymax * (y0 - y1)

    for i in range(11):
        v = i / 10
        out.append(f'<line class="grid-line" x1="{x(v):.1f}" y1="{y1}" x2="{x(v):.1f}" y2="{y0}"/>')
        if i % 2 == 0:
            out.append(f'<text x="{x(v):.1f}" y="{y0 + 16}" text-anchor="middle" class="muted">{100 * v:.0f}%</text>')
    n_y = int(round(ymax / step))
    for i in range(n_y + 1):
        v = i * step
        out.append(f'<line class="grid-line" x1="{x0}" y1="{y(v):.1f}" x2="{x1}" y2="{y(v):.1f}"/>')
        out.append(
            f'<text x="{x0 - 6}" y="{y(v) + 4:.1f}" text-anchor="end" class="muted">{_e(_tick_usd(v, step))}</text>'
        )
    out.append(f'<line class="axis" x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}"/>')
    out.append(f'<line class="axis" x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}"/>')
    out.append(f'<text x="{(x0 + x1) / 2}" y="{h - 12}" text-anchor="middle" class="muted">pass@1</text>')
    out.append(
        f'<text x="16" y="{(y0 + y1) / 2}" text-anchor="middle" class="muted" '
        f'transform="rotate(-90 16 {(y0 + y1) / 2})">cost per solved task (USD)</text>'
    )
    if not pts:
        out.append(
            f'<text x="{(x0 + x1) / 2}" y="{(y0 + y1) / 2}" text-anchor="middle" class="muted">'
            "no agent with both a pass rate and a cost per solved task</text>"
        )
    for n, a, p1, cps in pts:
        px, py = x(p1), y(cps)
        tip = (f"{n}: pass@1 {fmt_pct(p1, 1)}, {fmt_usd(cps, a.cost_partial)} per solved task"
               + (f" ({a.cost_reported})" if a.cost_reported else ""))
        out.append(f'<g class="agent"><title>{_e(tip)}</title>')
        ci = a.pass_at_1_ci
        if ci and ci[0] is not None and ci[1] is not None:
            out.append(f'<line class="ci" x1="{x(ci[0]):.1f}" y1="{py:.1f}" x2="{x(ci[1]):.1f}" y2="{py:.1f}"/>')
        cls = "pt sim" if a.simulated else "pt"
        out.append(f'<circle class="{cls}" cx="{px:.1f}" cy="{py:.1f}" r="5"/>')
        anchor = "end" if px > (x0 + x1) / 2 else "start"
        dx = -8 if anchor == "end" else 8
        tags = [*a.tags, *([a.cost_reported] if a.cost_reported else [])]  # its height is the agent's word
        label = n + (f" ({', '.join(tags)})" if tags else "")
        out.append(f'<text x="{px + dx:.1f}" y="{py - 8:.1f}" text-anchor="{anchor}">{_e(label)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out), left_out


# ------------------------------------------------------------------------------------ document


def _boxed(table: Table) -> str:
    """:func:`html_table` in a scroll box: a table wider than a phone scrolls inside it, its first column
    kept in view, and the page itself never gets wider than the screen (issue 33)."""
    return f'<div class="scroll">{html_table(table)}</div>'


def render_html(report: Report | JsonObject) -> str:
    """The whole report as one self-contained HTML document."""
    rep = as_report(report)
    agents = rep.agents
    title = title_line(rep)
    b: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
    ]
    if rep.cut_short:
        b.append(f'<p class="banner" id="cut-short">Cut short: {_e(rep.cut_short)}. '
                 "The numbers cover only the attempts that ran.</p>")
    top = headline(rep)
    if top:  # the answer on top (issue 35)
        b.append(f'<p class="headline" id="headline">{_e(top)}</p>')
    if rep.notes:
        b.append('<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in rep.notes) + "</ul>")
    memo = memorization_lines(rep)
    if memo:
        b.append('<h2>Memorization probe</h2><ul id="memorization">' + "".join(f"<li>{_e(m)}</li>" for m in memo)
                 + "</ul>")
    if not agents:
        b += ["<p>No results yet.</p>", "</body></html>"]  # no empty chart (issue 33)
        return "\n".join(b) + "\n"

    b += ["<h2>Leaderboard</h2>", _boxed(tables.leaderboard(rep, tokens=True))]
    b.append(
        '<p class="note">pass@1: mean over tasks of solved / scored attempts. pass@k / pass^k: at least one / all '
        "of k attempts solve a task (unbiased estimators). Cost / solved: total cost / solved attempts; ~ marks "
        "estimates from interrupted attempts; — is unknown"
        + ("; reported by the agent: its own output, which homefield did not measure and which breaks no tie in "
           "the ranking" if any(a.cost_reported for a in agents.values()) else "")
        + ". Wall times are the agent's, over scored attempts; host: homefield's own seconds per attempt outside "
        "the agent, its test runs and waits (the workspace copies, the diff, carrying it into the grading copy, "
        "the clean-up). "
        "Tags: sim = simulated agent, hinted = told which files the fix touched.</p>"
    )
    curve = tables.pass_k_table(rep)
    if curve:
        b.append(_boxed(curve))

    if no_cost_data(agents):  # no empty chart (issue 33): one line instead
        b.append('<p class="note" id="no-cost-data">No cost data: every agent reported a cost of zero or '
                 "none (reference, simulated and local agents), so there is no cost chart.</p>")
    else:
        svg, left_out = cost_vs_pass_svg(agents)
        b += ["<h2>Cost per solved task against pass rate</h2>", f'<div class="plot">{svg}</div>']
        if left_out:
            b.append('<p class="note">Not plotted (pass rate or cost per solved task unknown): '
                     + ", ".join(f"<code>{_e(n)}</code>" for n in left_out) + ".</p>")

    outcomes = tables.outcomes_table(rep)
    if outcomes:
        b += ["<h2>Outcomes</h2>", _boxed(outcomes),
              '<p class="note">Unscored outcomes are counted here and left out of every rate. Failed: did not '
              "fix = the hidden FAIL_TO_PASS tests failed and nothing else broke; broke existing tests = "
              "PASS_TO_PASS tests failed too, or the change crashed the test process.</p>"]
    first = tables.first_errors_table(rep)
    if first:
        b += ["<h2>First error per agent</h2>", _boxed(first)]

    comps = rep.comparisons
    b.append("<h2>Head to head</h2>")
    if comps:
        b.append(
            f'<p class="note">Δ = A − B in percentage points of pass@1 over the tasks both have scored; '
            f"{_e(p_rule(comps, rep.alpha))}. Filled dots: significant after adjustment. MDE: the smallest "
            "difference this many tasks could detect.</p>"
        )
    if any(c.delta is not None for c in comps):
        b.append(f'<div class="plot">{forest_svg(comps)}</div>')
    if comps:
        b.append(_boxed(tables.head_to_head(rep)))
    else:
        b.append('<p class="note">One agent only: nothing to compare.</p>')

    b.append("<h2>Per task</h2>")
    used_t = [o for o in OUTCOMES if any(o in outs for t in rep.tasks for outs in t.attempts.values())]
    b.append(
        '<p class="note">'
        + " · ".join(f'<span class="o-{o}">{_e(rep.legend[o])}</span> {_e(outcome_words(o))}' for o in used_t)
        + (f' · <span class="o-suspicious">{_e(SUSPICIOUS_SOLVE_SYMBOL)}</span> {_e(SUSPICIOUS_SOLVE_WORDS)}'
           if grid_flagged_solves(rep) else "")
        + " · · no attempt. Hover a symbol for the attempt's edit-F1 against the gold patch (secondary); "
        "the small numbers are the same F1 values.</p>"
    )
    b.append(_boxed(tables.per_task(rep)))
    b.append("<h2>Solved by no agent</h2>")
    unsolved = rep.unsolved_by_all
    b.append("<p>" + (", ".join(f"<code>{_e(u)}</code>" for u in unsolved) if unsolved else "None.") + "</p>")

    ws = rep.well_specified
    b.append("<h2>Well-specified tasks only</h2>")
    if ws.tasks:
        excl = ws.excluded
        b.append(f"<p>{ws.tasks} task{'s' if ws.tasks != 1 else ''}"
                 + ("; left out: " + ", ".join(f"<code>{_e(x)}</code>" for x in excl) if excl else "") + ".</p>")
        b.append(_boxed(tables.well_specified_table(rep)))
    else:
        b.append("<p>No well-specified task in this run.</p>")

    langs = tables.per_language(rep)
    if langs:
        b += ["<h2>Per language</h2>", _boxed(langs)]

    b.append("<h2>Similarity to the gold patch (secondary)</h2>")
    b.append(
        '<p class="note">Changed lines of each attempt\'s diff in non-test files against the gold patch, as '
        "multisets: edit-F1 of the overlap; exact = the same lines. Tests decide the result.</p>"
    )
    b.append(_boxed(tables.similarity_table(rep)))

    b.append("<h2>Flagged attempts</h2>")
    b.append("<p>" + "; ".join(f"<code>{_e(n)}</code>: {a.suspicious} suspicious, {a.touched_tests} touched tests"
                               for n, a in agents.items()) + ".</p>")
    if rep.sandbox:
        b.append(f"<p>{_e(sandbox_line(rep.sandbox))} (attempts per sandbox).</p>")
    flagged = tables.flagged_table(rep)
    if flagged:
        b.append(_boxed(flagged))
    errors = tables.errors_table(rep)
    if errors:
        b += ["<h2>Most common error lines</h2>", _boxed(errors)]
    b += ["<h2>Runs</h2>", _boxed(tables.runs_table(rep)), _boxed(tables.agents_table(rep))]
    b.append("</body></html>")
    return "\n".join(b) + "\n"
