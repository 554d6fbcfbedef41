"""Terminal rendering of a report dict (from :func:`.compute.build_report`).

:func:`render_text` returns ``(line, markup)`` pairs; the markup dict holds pytest
``TerminalReporter`` keywords (``{"green": True, "bold": True}``), so the plugin writes each pair with
``terminalreporter.write_line(line, **markup)`` and the CLI prints :func:`render_text_plain`.
The small formatting helpers here are shared by the Markdown and HTML renderers.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from pytest_homefield.records import OUTCOMES, UNSCORED_OUTCOMES

__all__ = [
    "render_text",
    "render_text_plain",
    "fmt_pct",
    "fmt_usd",
    "fmt_secs",
    "fmt_tokens",
    "fmt_pp",
    "fmt_p",
    "fmt_test",
    "agent_tags",
    "grid_cell",
    "title_line",
    "no_cost_data",
    "no_time_data",
]

Line = tuple[str, dict[str, bool]]

#: Leaderboard columns dropped, in this order, while the table is wider than the terminal.
_DROP_ORDER = ("pass^k", "#", "tasks", "scored", "p50/p95", "pass@k", "95% CI")

DASH = "—"


# ---------------------------------------------------------------------------- shared formatting


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
    sentences from ``stats`` use their own rounding."""
    if p is None:
        return DASH
    return "<0.001" if p < 0.001 else f"{p:.3g}"


def fmt_test(c: dict[str, Any]) -> str:
    """A comparison's test name for people: ``exact McNemar`` / ``paired permutation``."""
    t = c.get("test")
    if t == "mcnemar":
        return "exact McNemar"
    if t == "permutation":
        return "paired permutation" + ("" if c.get("exact", True) else " (Monte Carlo)")
    return DASH if t is None else str(t)


def agent_tags(a: dict[str, Any]) -> list[str]:
    """Marks for an agent entry: ``sim`` (simulated, ``sim:P``) and ``hinted`` (told the files)."""
    tags = []
    if a.get("simulated"):
        tags.append("sim")
    if a.get("hinted"):
        tags.append("hinted")
    return tags


def agent_label(name: str, a: dict[str, Any]) -> str:
    """``name [sim]`` / ``name [hinted]`` / ``name``."""
    tags = agent_tags(a)
    return f"{name} [{', '.join(tags)}]" if tags else name


def grid_cell(outcomes: Sequence[str], legend: dict[str, str]) -> str:
    """Attempt outcomes → symbols in attempt order (``✓✓✗``); ``·`` for no attempt."""
    return "".join(legend.get(o, "?") for o in outcomes) or "·"


def pass_k_summary(a: dict[str, Any], key: str) -> str:
    """The largest-k entry of ``pass_at_k``/``pass_hat_k`` as ``83% k=3``; ``—`` if only k = 1."""
    d = a.get(key) or {}
    if len(d) < 2:
        return DASH
    k = max(d, key=int)
    return f"{fmt_pct(d[k])} k={k}"


def no_cost_data(agents: dict[str, dict[str, Any]]) -> bool:
    """Every agent's total cost is zero or unknown (reference, simulated and local agents): a cost
    column or chart would only show zeros."""
    return bool(agents) and all(not a.get("cost_usd") for a in agents.values())


def no_time_data(agents: dict[str, dict[str, Any]]) -> bool:
    """Every agent's p50 and p95 wall time is unknown or under half a second, i.e. printed as 0 s
    (agents that answer at once: oracle, noop, sim)."""
    return bool(agents) and all((a.get("wall_s_p50") or 0) < 0.5 and (a.get("wall_s_p95") or 0) < 0.5
                                for a in agents.values())


def title_line(report: dict[str, Any]) -> str:
    """``homefield report: run-a + run-b · 8 tasks · 4 agents · 1–3 attempts``."""
    runs = " + ".join(report["run_ids"]) or "(no run)"
    n_tasks = len(report["tasks"])
    n_agents = len(report["agents"])
    ks = [a["attempts_per_task"] for a in report["agents"].values() if a.get("attempts_per_task")]
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


def outcome_parts(a: dict[str, Any], legend: dict[str, str]) -> tuple[list[str], list[str]]:
    """(scored parts, unscored parts) like ``✓ solved 11`` for one agent's outcome counts."""
    scored = [f"{legend[o]} {o.replace('_', ' ')} {n}" for o, n in a["outcomes"].items() if o not in UNSCORED_OUTCOMES]
    unscored = [f"{legend[o]} {o.replace('_', ' ')} {n}" for o, n in a["outcomes"].items() if o in UNSCORED_OUTCOMES]
    return scored, unscored


# ---------------------------------------------------------------------------------- terminal


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[: max(0, n - 1)] + "…"


def _table(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        out.append("  ".join(cells).rstrip())
    return out


def memorization_lines(report: dict[str, Any]) -> list[str]:
    """One sentence per probed agent: "NAME recites N of M tasks; control K mismatched pairs, 95th
    percentile X", with the flagged tasks and their best/mean scores. Empty without probe data."""
    out = []
    for name, m in ((report.get("memorization") or {}).get("agents") or {}).items():
        what = (f"{m['control_n']} tasks authored after {m['cutoff']}" if m.get("cutoff")
                else f"{m['control_n']} mismatched pairs")
        p95 = "n/a" if m.get("control_p95") is None else f"{m['control_p95']:.2f}"
        line = f"{name} recites {m['recites']} of {m['judged']} tasks; control {what}, 95th percentile {p95}"
        if m["flagged"]:
            line += ": " + ", ".join(f"{f['task_id']} ({f['best']:.2f} best, {f['mean']:.2f} mean)"
                                     for f in m["flagged"])
        out.append(line)
    return out


def render_text(report: dict[str, Any], *, width: int = 100, verbose: bool = False) -> list[Line]:
    """The report as terminal lines with markup, at most ``width`` columns where possible.

    Always: title, cut-short banner, leaderboard, outcomes per agent, head to head, tasks no agent
    solved, notes. With ``verbose``: tokens and similarity columns, the pass@k curves, the per-task
    grid with its legend, the well-specified subset and the per-language breakdown.
    """
    lines: list[Line] = []
    legend: dict[str, str] = report.get("legend") or {}
    agents: dict[str, dict[str, Any]] = report["agents"]

    def add(text: str = "", **markup: bool) -> None:
        lines.append((text, {k: True for k, v in markup.items() if v}))

    add(title_line(report), bold=True)
    if report.get("cut_short"):
        add(
            f"! run cut short: {report['cut_short']}; numbers cover only the attempts that ran",
            red=True,
            bold=True,
        )

    if not agents or not any(a["attempts"] for a in agents.values()):
        add(f"no results yet ({len(agents)} agent{'s' if len(agents) != 1 else ''}, no attempt recorded)", yellow=True)
        for note in report.get("notes") or []:
            add(f"note: {note}", yellow=True)
        return lines

    # --- leaderboard (columns dropped from the right of _DROP_ORDER until it fits the width)
    cols: dict[str, list[str]] = {
        "#": [str(a["rank"]) for a in agents.values()],
        "agent": [_clip(agent_label(n, a), 28) for n, a in agents.items()],
        "tasks": [str(a["tasks"]) for a in agents.values()],
        "scored": [f"{a['scored']}/{a['attempts']}" for a in agents.values()],
        "solved": [str(a["solved"]) for a in agents.values()],
        "pass@1": [fmt_pct(a["pass_at_1"]) for a in agents.values()],
        "95% CI": [fmt_ci(a["pass_at_1_ci"]) for a in agents.values()],
        "pass@k": [pass_k_summary(a, "pass_at_k") for a in agents.values()],
        "pass^k": [pass_k_summary(a, "pass_hat_k") for a in agents.values()],
        "cost": [fmt_usd(a["cost_usd"], a["cost_partial"]) for a in agents.values()],
        "$/solved": [fmt_usd(a["cost_per_solved_usd"], a["cost_partial"]) for a in agents.values()],
        "p50/p95": [f"{fmt_secs(a['wall_s_p50'])}/{fmt_secs(a['wall_s_p95'])}" for a in agents.values()],
    }
    right = {"#", "tasks", "scored", "solved", "pass@1", "cost", "$/solved", "p50/p95"}
    missing = []
    if no_cost_data(agents):
        cols.pop("cost"), cols.pop("$/solved")
        missing.append("no cost data (every agent reported zero or no cost)")
    if no_time_data(agents):
        cols.pop("p50/p95")
        missing.append("no time data (every agent answered in under a second)")
    for drop in (None, *_DROP_ORDER):
        if drop is not None:
            cols.pop(drop, None)
        names_ = list(cols)
        table = _table(
            [names_, *map(list, zip(*cols.values(), strict=True))],
            right={i for i, c in enumerate(names_) if c in right},
        )
        if max(len(t) for t in table) <= width:
            break
    add(table[0], bold=True)
    for a, text in zip(agents.values(), table[1:], strict=True):
        markup: dict[str, bool] = {}
        if not a["scored"] or a["outcomes"].get("agent_error", 0) == a["scored"]:
            markup = {"red": True}
        elif a.get("simulated"):
            markup = {"cyan": True}
        add(text, **markup)
    if missing:
        add("; ".join(missing))

    # --- outcomes
    add("outcomes (scored | unscored, left out of every rate):", bold=True)
    namew = min(28, max(len(n) for n in agents))
    pad = " " * namew
    for name, a in agents.items():
        scored, unscored = outcome_parts(a, legend)
        text = f"  {_clip(name, namew).ljust(namew)}  {' · '.join(scored) or DASH}"
        if unscored:
            text += f" | {' · '.join(unscored)}"
        add(text, yellow=bool(unscored))
        if verbose:
            if len(a["pass_at_k"]) > 1:
                curve = " ".join(f"@{k} {fmt_pct(v)}" for k, v in a["pass_at_k"].items())
                hat = " ".join(f"^{k} {fmt_pct(v)}" for k, v in a["pass_hat_k"].items())
                add(f"  {pad}  pass{curve} · pass{hat}")
            if any(a[k] is not None for k in ("input_tokens", "output_tokens", "cache_read_tokens")):
                add(
                    f"  {pad}  tokens in {fmt_tokens(a['input_tokens'])} · out {fmt_tokens(a['output_tokens'])}"
                    f" · cache read {fmt_tokens(a['cache_read_tokens'])}"
                    f" · cache write {fmt_tokens(a['cache_write_tokens'])}"
                )
            if a["similarity_n"]:
                add(
                    f"  {pad}  diff vs gold: edit-F1 {a['similarity_mean']:.2f} over {a['similarity_n']} diffs,"
                    f" {a['similarity_exact']} exact"
                )

    # --- head to head
    comps = report.get("comparisons") or []
    if comps:
        m = sum(1 for c in comps if c["p_value"] is not None)
        adj = f", Holm-adjusted over {m} pairs" if m > 1 else ""
        add(f"head to head (pass@1 over shared tasks{adj}):", bold=True)
        skipped = [f"{c['a']}–{c['b']}" for c in comps if c["test"] is None]
        for c in comps:
            if c["test"] is None:
                continue
            good = bool(c.get("significant"))
            for j, part in enumerate(textwrap.wrap(c["verdict"], max(40, width - 2), subsequent_indent="    ")):
                add(f"  {part}", green=good, bold=good and j == 0)

        if skipped:
            for part in textwrap.wrap(
                "not compared (no task with scored attempts from both): " + ", ".join(skipped),
                max(40, width - 2),
                subsequent_indent="    ",
            ):
                add(f"  {part}", yellow=True)

    # --- unsolved
    unsolved = report.get("unsolved_by_all") or []
    if unsolved:
        titles = {t["id"]: t.get("subject") or "" for t in report.get("tasks", [])}
        add(f"solved by no agent ({len(unsolved)}):")
        for tid in unsolved[:8]:
            add(_clip(f"  {tid}  {titles.get(tid, '')}".rstrip(), width))
        if len(unsolved) > 8:
            add(f"  … and {len(unsolved) - 8} more")

    # --- memorization probe
    memo = memorization_lines(report)
    if memo:
        add("memorization probe (best sample vs the control's 95th percentile):", bold=True)
        for line in memo:
            for part in textwrap.wrap(line, max(40, width - 2), subsequent_indent="    "):
                add(f"  {part}", yellow="recites 0 of" not in line)

    # --- verbose sections
    if verbose:
        lines.extend(_grid_lines(report, width))
        ws = report.get("well_specified") or {}
        if ws.get("agents"):
            add(f"well-specified tasks only ({ws.get('tasks', 0)}):", bold=True)
            add("  " + " · ".join(f"{n} {fmt_pct(v)}" for n, v in ws["agents"].items()))
        if report.get("languages"):
            add("per language (pass@1; tasks):", bold=True)
            for lang, n in report["languages"].items():
                vals = " · ".join(f"{name} {fmt_pct(a['per_language'].get(lang))}" for name, a in agents.items())
                add(f"  {lang} ({n}): {vals}")
        flagged = report.get("flagged") or []
        if flagged:
            add(f"flagged attempts ({len(flagged)}): suspicious diff or edited tests", yellow=True, bold=True)
            for f in flagged[:20]:
                what = ", ".join(k.replace("_", " ") for k in ("suspicious", "touched_tests") if f[k])
                if f.get("reason"):
                    what = what.replace("suspicious", f"suspicious ({f['reason']})", 1)
                add(f"  {f['task_id']} {f['agent']}#{f['attempt']} {f['outcome']}: {what}", yellow=True)
    else:
        n_flag = len(report.get("flagged") or [])
        if n_flag:
            add(f"{n_flag} attempt(s) flagged suspicious or edited tests (see the report)", yellow=True)

    sb = report.get("sandbox")
    if sb:
        add(sandbox_line(sb))
    for note in report.get("notes") or []:
        for part in textwrap.wrap(f"note: {note}", max(40, width), subsequent_indent="      "):
            add(part, yellow=True)
    return lines


def sandbox_line(sb: dict[str, Any]) -> str:
    """``sandbox: oracle none ×24, cmd bwrap ×3; test runs bwrap ×27`` from the report's ``sandbox``."""
    def counts(c: dict[str, int]) -> str:
        return "/".join(f"{k} ×{v}" for k, v in c.items())
    agents = ", ".join(f"{n} {counts(c)}" for n, c in sb.get("agents", {}).items())
    return f"sandbox: {agents}; test runs {counts(sb.get('tests') or {}) or 'none'}"


def _grid_lines(report: dict[str, Any], width: int) -> list[Line]:
    """Per-task grid: one row per task, one cell of attempt symbols per agent."""
    legend: dict[str, str] = report.get("legend") or {}
    names = list(report["agents"])
    used = {o for row in report["tasks"] for outs in row["attempts"].values() for o in outs}
    key = "  ".join(f"{legend[o]} {o.replace('_', ' ')}" for o in OUTCOMES if o in used)
    out: list[Line] = [(f"per task ({key}  · no attempt):", {"bold": True})]
    rows = [["task", *names]]
    for row in report["tasks"]:
        rows.append([row["id"], *(grid_cell(row["attempts"].get(n, []), legend) for n in names)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, r in enumerate(rows):
        text = "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))
        if i == 0:
            out.append((f"{text}  subject", {"bold": True}))
            continue
        task = report["tasks"][i - 1]
        room = max(0, width - len(text) - 2)
        subj = task["subject"] or "(unknown task)"
        if task.get("well_specified") is False:
            subj = "[vague] " + subj
        if task.get("red_by_import_error"):
            subj = "[red by import error] " + subj
        out.append((f"{text}  {_clip(subj, room)}" if room >= 8 else text.rstrip(), {}))
    return out


def render_text_plain(report: dict[str, Any], *, width: int = 100, verbose: bool = True) -> str:
    """:func:`render_text` without markup, as one string ending in a newline (verbose by default)."""
    return "\n".join(line for line, _ in render_text(report, width=width, verbose=verbose)) + "\n"


#: Column titles of :func:`leaderboard_cells`, shared by the Markdown and HTML leaderboards.
LEADERBOARD_HEADERS = ("#", "Agent", "Tasks", "Attempts", "Scored", "Solved", "pass@1", "95% CI", "pass@k",
                       "pass^k", "Cost", "Cost / solved", "p50 wall", "p95 wall")


def leaderboard_cells(a: dict[str, Any], agent_cell: str, usd: Callable[[float | None, bool], str]) -> list[str]:
    """The leaderboard cells shared by the Markdown and HTML tables, for agent entry ``a`` of the
    report: rank, agent (``agent_cell``, already rendered), tasks, attempts, scored, solved, pass@1,
    its CI, pass@k and pass^k at the largest k, cost and cost per solved task (through ``usd``, which
    renders USD and marks estimates), p50 and p95 wall time."""
    k = max(a["pass_at_k"], key=int) if a["pass_at_k"] else None
    return [
        str(a["rank"]),
        agent_cell,
        str(a["tasks"]),
        str(a["attempts"]),
        str(a["scored"]),
        str(a["solved"]),
        fmt_pct(a["pass_at_1"], 1),
        fmt_ci(a["pass_at_1_ci"], 1),
        f"{fmt_pct(a['pass_at_k'][k], 1)} (k={k})" if k and k != "1" else DASH,
        f"{fmt_pct(a['pass_hat_k'][k], 1)} (k={k})" if k and k != "1" else DASH,
        usd(a["cost_usd"], a["cost_partial"]),
        usd(a["cost_per_solved_usd"], a["cost_partial"]),
        fmt_secs(a["wall_s_p50"]),
        fmt_secs(a["wall_s_p95"]),
    ]
