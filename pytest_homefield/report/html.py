"""HTML rendering of a report dict: one self-contained file (inline CSS and inline SVG, no script,
nothing fetched), written as ``report.html``.

Two plots are drawn here as SVG: ``#forest-plot`` (each head-to-head Δ with its CI, zero line
marked) and ``#cost-vs-pass`` (cost per solved task in USD against pass@1, one labelled point per
agent, with the pass@1 CI as a horizontal whisker).
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from pytest_homefield.records import OUTCOMES, UNSCORED_OUTCOMES
from pytest_homefield.report.text import (
    DASH,
    LEADERBOARD_HEADERS,
    agent_tags,
    fmt_ci,
    fmt_p,
    fmt_pct,
    fmt_pp,
    fmt_test,
    fmt_tokens,
    fmt_usd,
    leaderboard_cells,
    memorization_lines,
    no_cost_data,
    sandbox_line,
    title_line,
)

__all__ = ["render_html", "forest_svg", "cost_vs_pass_svg"]

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
.o-infra, .o-rate_limited { color: var(--unscored); }
svg { font: 12px system-ui, sans-serif; fill: var(--fg); max-width: 100%; height: auto; }
svg .axis, svg .grid-line { stroke: var(--line); }
svg .zero { stroke: var(--bad); stroke-dasharray: 4 3; }
svg .ci { stroke: var(--accent); stroke-width: 2; }
svg #cost-vs-pass .ci, #cost-vs-pass .ci { stroke-opacity: .45; }
svg .pt { fill: var(--accent); stroke: var(--accent); stroke-width: 2; }
svg .pt.open { fill: var(--bg); }
svg .pt.sim { fill: var(--sim); stroke: var(--sim); }
svg text.muted { fill: var(--muted); }
"""


def _e(x: Any) -> str:
    return escape(str(x), quote=True)


def _agent(name: str, a: dict[str, Any]) -> str:
    tags = "".join(f'<span class="tag">{_e(t)}</span>' for t in agent_tags(a))
    return f"<code>{_e(name)}</code>{tags}"


def _table(head: list[str], rows: list[list[str]], num: frozenset[int] | set[int] = frozenset(), cls: str = "") -> str:
    """Cells are HTML already; columns in ``num`` are right-aligned."""
    th = "".join(f"<th>{h}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f'<td class="n">{c}</td>' if i in num else f"<td>{c}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    c = f' class="{cls}"' if cls else ""
    return f"<table{c}><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


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


def forest_svg(comparisons: list[dict[str, Any]]) -> str:
    """SVG ``#forest-plot``: one row per compared pair, Δ (A − B, percentage points) as a dot (filled
    when significant after Holm), its CI as a bar, and a dashed line at Δ = 0."""
    rows = [c for c in comparisons if c.get("delta") is not None]
    w, left, right, top, rh = 760, 230, 170, 28, 26
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
        *(abs(c["delta"]) for c in rows),
        *(abs(v) for c in rows if c.get("ci") for v in c["ci"] if v is not None),
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
    for i, c in enumerate(rows):
        yc = top + rh * i + rh / 2
        label = f"{c['a']} vs {c['b']}"
        out.append(f'<g class="row"><title>{_e(c["verdict"])}</title>')
        out.append(f'<text x="{x0 - 8}" y="{yc + 4:.1f}" text-anchor="end">{_e(label)}</text>')
        if c.get("ci") and None not in c["ci"]:
            lo, hi = (max(-lim, min(lim, v)) for v in c["ci"])
            out.append(f'<line class="ci" x1="{x(lo):.1f}" y1="{yc:.1f}" x2="{x(hi):.1f}" y2="{yc:.1f}"/>')
            for v in (lo, hi):
                out.append(f'<line class="ci" x1="{x(v):.1f}" y1="{yc - 5:.1f}" x2="{x(v):.1f}" y2="{yc + 5:.1f}"/>')
        cls = "pt" if c.get("significant") else "pt open"
        out.append(f'<circle class="{cls}" cx="{x(c["delta"]):.1f}" cy="{yc:.1f}" r="4.5"/>')
        out.append(
            f'<text x="{x1 + 8}" y="{yc + 4:.1f}">{_e(fmt_pp(c["delta"]))}, p={_e(fmt_p(c.get("p_adjusted")))}</text>'
        )
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


def cost_vs_pass_svg(agents: dict[str, dict[str, Any]]) -> tuple[str, list[str]]:
    """SVG ``#cost-vs-pass``: x = pass@1 (0–100 %), y = cost per solved task (USD), one labelled point
    per agent with its pass@1 CI as a whisker. Returns (svg, names of agents that could not be
    plotted because their pass@1 or cost per solved task is unknown)."""
    pts = [
        (n, a) for n, a in agents.items() if a.get("pass_at_1") is not None and a.get("cost_per_solved_usd") is not None
    ]
    left_out = [n for n in agents if n not in {p[0] for p in pts}]
    w, h, ml, mr, mt, mb = 640, 380, 70, 30, 20, 50
    out = [
        f'<svg id="cost-vs-pass" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" aria-label="Cost per solved task against pass@1, one point per agent">',
        "<title>Cost per solved task (USD) against pass@1</title>",
    ]
    x0, x1, y0, y1 = ml, w - mr, h - mb, mt
    ymax_raw = max((a["cost_per_solved_usd"] for _, a in pts), default=1.0) or 1.0
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
    for n, a in pts:
        px, py = x(a["pass_at_1"]), y(a["cost_per_solved_usd"])
        tip = (
            f"{n}: pass@1 {fmt_pct(a['pass_at_1'], 1)}, "
            f"{fmt_usd(a['cost_per_solved_usd'], a['cost_partial'])} per solved task"
        )
        out.append(f'<g class="agent"><title>{_e(tip)}</title>')
        ci = a.get("pass_at_1_ci")
        if ci and None not in ci:
            out.append(f'<line class="ci" x1="{x(ci[0]):.1f}" y1="{py:.1f}" x2="{x(ci[1]):.1f}" y2="{py:.1f}"/>')
        cls = "pt sim" if a.get("simulated") else "pt"
        out.append(f'<circle class="{cls}" cx="{px:.1f}" cy="{py:.1f}" r="5"/>')
        anchor = "end" if px > (x0 + x1) / 2 else "start"
        dx = -8 if anchor == "end" else 8
        tags = agent_tags(a)
        label = n + (f" ({', '.join(tags)})" if tags else "")
        out.append(f'<text x="{px + dx:.1f}" y="{py - 8:.1f}" text-anchor="{anchor}">{_e(label)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out), left_out


# ------------------------------------------------------------------------------------ document


def render_html(report: dict[str, Any]) -> str:
    """The whole report as one self-contained HTML document."""
    agents: dict[str, dict[str, Any]] = report["agents"]
    legend: dict[str, str] = report.get("legend") or {}
    title = title_line(report)
    b: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
    ]
    if report.get("cut_short"):
        b.append(
            f'<p class="banner" id="cut-short">Cut short: {_e(report["cut_short"])}. '
            "The numbers cover only the attempts that ran.</p>"
        )
    if report.get("notes"):
        b.append('<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in report["notes"]) + "</ul>")
    memo = memorization_lines(report)
    if memo:
        b.append('<h2>Memorization probe</h2><ul id="memorization">' + "".join(f"<li>{_e(m)}</li>" for m in memo)
                 + "</ul>")
    if not agents:
        b.append("<p>No results yet.</p>")
        b.append(cost_vs_pass_svg({})[0])
        b.append(forest_svg([]))
        b.append("</body></html>")
        return "\n".join(b) + "\n"

    # --- leaderboard
    b.append("<h2>Leaderboard</h2>")
    rows = []
    for n, a in agents.items():
        rows.append(
            leaderboard_cells(a, _agent(n, a), lambda x, partial: _e(fmt_usd(x, partial)))
            + [
                fmt_tokens(a["input_tokens"]),
                fmt_tokens(a["output_tokens"]),
                fmt_tokens(a["cache_read_tokens"]),
                fmt_tokens(a["cache_write_tokens"]),
            ]
        )
    b.append(
        _table(
            [
                *LEADERBOARD_HEADERS,
                "Input tok",
                "Output tok",
                "Cache read",
                "Cache write",
            ],
            rows,
            num={0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17},
        )
    )
    b.append(
        '<p class="note">pass@1: mean over tasks of solved / scored attempts. pass@k / pass^k: at least one / all '
        "of k attempts solve a task (unbiased estimators). Cost / solved: total cost / solved attempts; ~ marks "
        "estimates from interrupted attempts; — is unknown. Wall times over scored attempts. "
        "Tags: sim = simulated agent, hinted = told which files the fix touched.</p>"
    )
    kmax = max((len(a["pass_at_k"]) for a in agents.values()), default=0)
    if kmax > 1:
        head = ["Agent", *(f"pass@{k}" for k in range(1, kmax + 1)), *(f"pass^{k}" for k in range(2, kmax + 1))]
        rows = [
            [
                _agent(n, a),
                *(fmt_pct(a["pass_at_k"].get(str(k)), 1) for k in range(1, kmax + 1)),
                *(fmt_pct(a["pass_hat_k"].get(str(k)), 1) for k in range(2, kmax + 1)),
            ]
            for n, a in agents.items()
        ]
        b.append(_table(head, rows, num=set(range(1, 2 * kmax))))

    # --- cost vs pass
    b.append("<h2>Cost per solved task against pass rate</h2>")
    if no_cost_data(agents):
        b.append('<p class="note" id="no-cost-data">No cost data: every agent reported a cost of zero or '
                 "none (reference, simulated and local agents), so there is nothing to plot.</p>")
        svg, left_out = cost_vs_pass_svg({})
    else:
        svg, left_out = cost_vs_pass_svg(agents)
    b.append(svg)
    if left_out:
        b.append(
            '<p class="note">Not plotted (pass rate or cost per solved task unknown): '
            + ", ".join(f"<code>{_e(n)}</code>" for n in left_out)
            + ".</p>"
        )

    # --- outcomes
    used = [o for o in OUTCOMES if any(o in a["outcomes"] for a in agents.values())]
    if used:
        b.append("<h2>Outcomes</h2>")
        head = ["Agent"] + [
            f'<span class="o-{o}">{_e(legend.get(o, ""))}</span> {_e(o.replace("_", " "))}'
            + (" <em>(unscored)</em>" if o in UNSCORED_OUTCOMES else "")
            for o in used
        ]
        rows = [[_agent(n, a), *(str(a["outcomes"].get(o, 0)) for o in used)] for n, a in agents.items()]
        b.append(_table(head, rows, num=set(range(1, len(used) + 1))))
        b.append('<p class="note">Unscored outcomes are counted here and left out of every rate.</p>')

    # --- head to head
    comps = report.get("comparisons") or []
    b.append("<h2>Head to head</h2>")
    if comps:
        m = sum(1 for c in comps if c["p_value"] is not None)
        b.append(
            f'<p class="note">Δ = A − B in percentage points of pass@1 over the tasks both have scored; p-values '
            f"Holm-adjusted across {m} pair{'s' if m != 1 else ''}; the verdict uses the adjusted p "
            f"(α = {_e(report.get('alpha', 0.05))}). Filled dots: significant after adjustment.</p>"
        )
    b.append(forest_svg(comps))
    if comps:
        rows = []
        for c in comps:
            ci = c["ci"]
            verdict = _e(c["verdict"])
            rows.append(
                [
                    f"<code>{_e(c['a'])}</code>",
                    f"<code>{_e(c['b'])}</code>",
                    _e(fmt_pp(c["delta"], 1)),
                    _e(f"{fmt_pp(ci[0], 1)} … {fmt_pp(ci[1], 1)}") if ci else DASH,
                    _e(fmt_p(c["p_value"])),
                    _e(fmt_p(c["p_adjusted"])),
                    _e(fmt_test(c)),
                    str(c["n_tasks"]),
                    _e(fmt_pp(c["mde"], 1).lstrip("+")) if c.get("mde") is not None else DASH,
                    f'<span class="sig">{verdict}</span>' if c.get("significant") else verdict,
                ]
            )
        b.append(
            _table(
                ["A", "B", "Δ", "95% CI", "p", "p (Holm)", "Test", "Tasks", "MDE", "Verdict"], rows, num={2, 4, 5, 7, 8}
            )
        )
    else:
        b.append('<p class="note">One agent only: nothing to compare.</p>')

    # --- per task grid
    b.append("<h2>Per task</h2>")
    used_t = [o for o in OUTCOMES if any(o in outs for t in report["tasks"] for outs in t["attempts"].values())]
    b.append(
        '<p class="note">'
        + " · ".join(f'<span class="o-{o}">{_e(legend[o])}</span> {_e(o.replace("_", " "))}' for o in used_t)
        + " · · no attempt. Hover a symbol for the attempt's edit-F1 against the gold patch (secondary); "
        "the small numbers are the same F1 values.</p>"
    )
    rows = []
    for t in report["tasks"]:
        subj = _e(t["subject"]) if t["subject"] else "<em>not in the tasks file</em>"
        if t.get("well_specified") is False:
            subj += ' <span class="tag">vague</span>'
        if t.get("red_by_import_error"):
            subj += (' <span class="tag" title="its tests only failed at the parent because their module could '
                     'not be imported">red by import error</span>')
        cells = []
        for n in agents:
            outs = t["attempts"].get(n, [])
            sims = t.get("similarity", {}).get(n, [])
            spans = []
            for i, o in enumerate(outs):
                f1 = sims[i] if i < len(sims) else None
                tip = f"attempt {i + 1}: {o.replace('_', ' ')}; edit-F1 {DASH if f1 is None else f'{f1:.2f}'}"
                spans.append(f'<span class="o-{o}" title="{_e(tip)}">{_e(legend.get(o, "?"))}</span>')
            f1s = " ".join(DASH if s is None else f"{s:.2f}" for s in sims)
            cell = "".join(spans) or "·"
            if f1s:
                cell += f' <small class="muted">{f1s}</small>'
            cells.append(cell)
        rows.append([f"<code>{_e(t['id'])}</code>", subj, *cells])
    b.append(_table(["Task", "Subject", *(f"<code>{_e(n)}</code>" for n in agents)], rows, cls="grid"))
    unsolved = report.get("unsolved_by_all") or []
    b.append("<h2>Solved by no agent</h2>")
    b.append("<p>" + (", ".join(f"<code>{_e(u)}</code>" for u in unsolved) if unsolved else "None.") + "</p>")

    # --- well specified
    ws = report.get("well_specified") or {}
    b.append("<h2>Well-specified tasks only</h2>")
    if ws.get("tasks"):
        excl = ws.get("excluded") or []
        b.append(
            f"<p>{ws['tasks']} task{'s' if ws['tasks'] != 1 else ''}"
            + ("; left out: " + ", ".join(f"<code>{_e(x)}</code>" for x in excl) if excl else "")
            + ".</p>"
        )
        rows = [
            [_agent(n, agents[n]), fmt_pct(v, 1), fmt_ci((ws.get("pass_at_1_ci") or {}).get(n), 1)]
            for n, v in ws["agents"].items()
        ]
        b.append(_table(["Agent", "pass@1", "95% CI"], rows, num={1, 2}))
    else:
        b.append("<p>No well-specified task in this run.</p>")

    # --- per language
    langs: dict[str, int] = report.get("languages") or {}
    if langs:
        b.append("<h2>Per language</h2>")
        rows = [
            [_e(lang), str(n), *(fmt_pct(a["per_language"].get(lang), 1) for a in agents.values())]
            for lang, n in langs.items()
        ]
        b.append(
            _table(
                ["Language", "Tasks", *(f"<code>{_e(n)}</code>" for n in agents)],
                rows,
                num=set(range(1, len(agents) + 2)),
            )
        )

    # --- similarity
    b.append("<h2>Similarity to the gold patch (secondary)</h2>")
    b.append(
        '<p class="note">Changed lines of each attempt\'s diff in non-test files against the gold patch, as '
        "multisets: edit-F1 of the overlap; exact = the same lines. Tests decide the result.</p>"
    )
    split = report.get("similarity") or {}
    rows = []
    for n, a in agents.items():
        s = split.get(n, {})
        rows.append(
            [
                _agent(n, a),
                str(a["similarity_n"]),
                DASH if a["similarity_mean"] is None else f"{a['similarity_mean']:.2f}",
                str(a["similarity_exact"]),
                DASH if s.get("mean_f1_solved") is None else f"{s['mean_f1_solved']:.2f}",
                DASH if s.get("mean_f1_unsolved") is None else f"{s['mean_f1_unsolved']:.2f}",
            ]
        )
    b.append(
        _table(
            ["Agent", "Diffs", "Mean edit-F1", "Exact", "F1 when solved", "F1 when unsolved"], rows, num={1, 2, 3, 4, 5}
        )
    )

    # --- flags, errors, runs
    b.append("<h2>Flagged attempts</h2>")
    b.append(
        "<p>"
        + "; ".join(
            f"<code>{_e(n)}</code>: {a['suspicious']} suspicious, {a['touched_tests']} touched tests"
            for n, a in agents.items()
        )
        + ".</p>"
    )
    sb = report.get("sandbox")
    if sb:
        b.append(f"<p>{_e(sandbox_line(sb))} (attempts per sandbox).</p>")
    flagged = report.get("flagged") or []
    if flagged:
        rows = [
            [
                f"<code>{_e(f['task_id'])}</code>",
                f"<code>{_e(f['agent'])}</code>",
                str(f["attempt"]),
                _e(f["outcome"].replace("_", " ")),
                _e(f"yes: {f['reason']}" if f.get("reason") else "yes") if f["suspicious"] else "",
                "yes" if f["touched_tests"] else "",
            ]
            for f in flagged
        ]
        b.append(_table(["Task", "Agent", "Attempt", "Outcome", "Suspicious", "Touched tests"], rows, num={2}))
    errs = [(n, e) for n, a in agents.items() for e in a.get("errors") or []]
    if errs:
        b.append("<h2>Most common error lines</h2>")
        b.append(
            _table(
                ["Agent", "Count", "Error"], [[f"<code>{_e(n)}</code>", str(e[1]), _e(e[0])] for n, e in errs], num={1}
            )
        )
    b.append("<h2>Runs</h2>")
    rows = [
        [
            f"<code>{_e(r['run_id'])}</code>",
            _e(r.get("created_at") or DASH),
            _e(r["attempts"]) if r.get("attempts") is not None else DASH,
            f"<code>{_e(r['tasks_digest'])}</code>" if r.get("tasks_digest") else DASH,
            _e(r["cut_short"]) if r.get("cut_short") else DASH,
        ]
        for r in report.get("runs") or []
    ]
    b.append(_table(["Run", "Created", "Attempts", "Tasks digest", "Cut short"], rows, num={2}))
    rows = [
        [_agent(n, a), _e(a.get("spec") or DASH), _e(a.get("model") or DASH), _e(a.get("version") or DASH)]
        for n, a in agents.items()
    ]
    b.append(_table(["Agent", "Spec", "Model", "Version"], rows))
    b.append("</body></html>")
    return "\n".join(b) + "\n"
