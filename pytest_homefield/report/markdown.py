"""Markdown rendering of a report dict (from :func:`.compute.build_report`); written as ``report.md``.

GitHub-flavoured tables. Dollar signs are escaped (``\\$``) so that no renderer turns two prices into
a formula; grid cells are code spans so the outcome symbols line up.
"""

from __future__ import annotations

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
    grid_cell,
    leaderboard_cells,
    memorization_lines,
    sandbox_line,
    title_line,
)

__all__ = ["render_markdown", "md_escape"]

_ESCAPE = str.maketrans({c: "\\" + c for c in "\\`*_[]|$<>#"})


def md_escape(s: str) -> str:
    """Escape Markdown punctuation (``| $ * _`` …) in free text such as subjects and error lines."""
    return s.replace("\n", " ").translate(_ESCAPE)


def _usd(x: float | None, partial: bool = False) -> str:
    return fmt_usd(x, partial).replace("$", "\\$")


def _agent(name: str, a: dict[str, Any]) -> str:
    tags = agent_tags(a)
    label = f"`{name}`"
    return label + (" *(" + ", ".join(tags) + ")*" if tags else "")


def _table(head: list[str], rows: list[list[str]], align: str = "") -> list[str]:
    """A GFM table; ``align`` has one letter per column, ``r`` for right-aligned."""
    seps = ["---:" if (i < len(align) and align[i] == "r") else "---" for i in range(len(head))]
    out = ["| " + " | ".join(head) + " |", "| " + " | ".join(seps) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def render_markdown(report: dict[str, Any]) -> str:
    """The whole report as one Markdown document ending in a newline."""
    agents: dict[str, dict[str, Any]] = report["agents"]
    legend: dict[str, str] = report.get("legend") or {}
    out: list[str] = [f"# {md_escape(title_line(report))}", ""]

    if report.get("cut_short"):
        out += [
            f"> **Cut short:** {md_escape(str(report['cut_short']))}. The numbers cover only the attempts that ran.",
            "",
        ]
    if report.get("notes"):
        out += ["**Read first**", ""]
        out += [f"- {md_escape(n)}" for n in report["notes"]]
        out += [""]
    if not agents:
        out += ["No results yet.", ""]
        return "\n".join(out)

    # --- leaderboard
    out += ["## Leaderboard", ""]
    rows = []
    for name, a in agents.items():
        rows.append(leaderboard_cells(a, _agent(name, a), _usd))
    out += _table(
        list(LEADERBOARD_HEADERS),
        rows,
        "r.rrrrrr..rrrr",
    )
    out += [
        "",
        "pass@1: mean over tasks of solved / scored attempts (each task weighs the same). "
        "pass@k: chance that at least one of k attempts solves a task; pass^k: that all k do "
        "(unbiased estimators, k up to the fewest scored attempts on any task). "
        "Cost / solved: total cost / solved attempts; `~` marks costs that include estimates from "
        "interrupted attempts; — means unknown. Wall times are the agent's, over scored attempts. "
        "*(sim)*: simulated agent, not a real one; *(hinted)*: told which files the fix touched.",
        "",
    ]

    # --- pass@k curve
    kmax = max((len(a["pass_at_k"]) for a in agents.values()), default=0)
    if kmax > 1:
        out += ["### pass@k and pass^k", ""]
        head = [
            "Agent",
            *(f"pass@{k}" for k in range(1, kmax + 1)),
            *(f"pass^{k}" for k in range(2, kmax + 1)),
        ]
        rows = []
        for name, a in agents.items():
            rows.append(
                [
                    _agent(name, a),
                    *(fmt_pct(a["pass_at_k"].get(str(k)), 1) for k in range(1, kmax + 1)),
                    *(fmt_pct(a["pass_hat_k"].get(str(k)), 1) for k in range(2, kmax + 1)),
                ]
            )
        out += _table(head, rows, "." + "r" * (2 * kmax - 1)) + [""]

    # --- outcomes
    used = [o for o in OUTCOMES if any(o in a["outcomes"] for a in agents.values())]
    if used:
        out += ["## Outcomes", ""]
        head = ["Agent"] + [
            f"{md_escape(legend.get(o, ''))} {o.replace('_', ' ')}" + (" (unscored)" if o in UNSCORED_OUTCOMES else "")
            for o in used
        ]
        rows = [[_agent(n, a), *(str(a["outcomes"].get(o, 0)) for o in used)] for n, a in agents.items()]
        out += _table(head, rows, "." + "r" * len(used))
        out += [
            "",
            "Unscored outcomes (infra, rate limited) are counted here and left out of every rate; "
            "resuming the run retries them.",
            "",
        ]

    # --- tokens
    out += ["## Tokens", ""]
    rows = [
        [
            _agent(n, a),
            fmt_tokens(a["input_tokens"]),
            fmt_tokens(a["output_tokens"]),
            fmt_tokens(a["cache_read_tokens"]),
            fmt_tokens(a["cache_write_tokens"]),
        ]
        for n, a in agents.items()
    ]
    out += _table(["Agent", "Input", "Output", "Cache read", "Cache write"], rows, ".rrrr") + [""]

    # --- head to head
    comps = report.get("comparisons") or []
    if comps:
        m = sum(1 for c in comps if c["p_value"] is not None)
        out += ["## Head to head", ""]
        out += [
            f"Every pair on the tasks both agents have scored attempts on; Δ = A − B in percentage points of "
            f"pass@1; p-values Holm-adjusted across {m} pair{'s' if m != 1 else ''}, and the verdict uses the "
            f"adjusted p (α = {report.get('alpha', 0.05)}). MDE: the smallest difference this many tasks "
            "could detect.",
            "",
        ]
        rows = []
        for c in comps:
            ci = c["ci"]
            rows.append(
                [
                    f"`{c['a']}`",
                    f"`{c['b']}`",
                    fmt_pp(c["delta"], 1),
                    f"{fmt_pp(ci[0], 1)} … {fmt_pp(ci[1], 1)}" if ci else DASH,
                    fmt_p(c["p_value"]),
                    fmt_p(c["p_adjusted"]),
                    fmt_test(c),
                    str(c["n_tasks"]),
                    fmt_pp(c["mde"], 1).lstrip("+") if c.get("mde") is not None else DASH,
                    ("**" + md_escape(c["verdict"]) + "**") if c.get("significant") else md_escape(c["verdict"]),
                ]
            )
        out += _table(["A", "B", "Δ", "95% CI", "p", "p (Holm)", "Test", "Tasks", "MDE", "Verdict"], rows, "..r.rr.rr.")
        out += [""]

    # --- per task
    out += ["## Per task", ""]
    used_t = [o for o in OUTCOMES if any(o in outs for t in report["tasks"] for outs in t["attempts"].values())]
    out += [
        "Legend: " + " · ".join(f"`{legend[o]}` {o.replace('_', ' ')}" for o in used_t) + " · `·` no attempt. "
        "Beside each cell: the edit-F1 of each attempt's diff against the gold patch (secondary; "
        "— when no diff was found). *vague*: not a well-specified task."
        + (" *red by import error*: its tests failed at the parent only because their module could not be "
           "imported." if any(t.get("red_by_import_error") for t in report["tasks"]) else ""),
        "",
    ]
    rows = []
    for t in report["tasks"]:
        subj = md_escape(t["subject"]) if t["subject"] else "*(not in tasks file)*"
        if t.get("well_specified") is False:
            subj += " *vague*"
        if t.get("red_by_import_error"):
            subj += " *red by import error*"
        cells = []
        for n in agents:
            outs = t["attempts"].get(n, [])
            sims = t.get("similarity", {}).get(n, [])
            f1 = " ".join(DASH if s is None else f"{s:.2f}" for s in sims)
            cells.append(f"`{grid_cell(outs, legend)}` {f1}".rstrip())
        rows.append([f"`{t['id']}`", subj, *cells])
    out += _table(["Task", "Subject", *(f"`{n}`" for n in agents)], rows) + [""]

    unsolved = report.get("unsolved_by_all") or []
    titles = {t["id"]: t.get("subject") or "" for t in report["tasks"]}
    out += ["## Solved by no agent", ""]
    out += [
        "\n".join(f"- `{u}` {md_escape(titles.get(u, ''))}".rstrip() for u in unsolved) if unsolved
        else "None: every task was solved by some agent.",
        "",
    ]

    # --- well specified
    ws = report.get("well_specified") or {}
    out += ["## Well-specified tasks only", ""]
    if ws.get("tasks"):
        excl = ws.get("excluded") or []
        out += [
            f"{ws['tasks']} task{'s' if ws['tasks'] != 1 else ''}"
            + (f"; left out: {', '.join(f'`{x}`' for x in excl)}." if excl else "; none left out."),
            "",
        ]
        rows = [
            [_agent(n, agents[n]), fmt_pct(v, 1), fmt_ci((ws.get("pass_at_1_ci") or {}).get(n), 1)]
            for n, v in ws["agents"].items()
        ]
        out += _table(["Agent", "pass@1", "95% CI"], rows, ".rr") + [""]
    else:
        out += ["No well-specified task in this run.", ""]

    # --- per language
    langs: dict[str, int] = report.get("languages") or {}
    if langs:
        out += ["## Per language", ""]
        rows = [
            [md_escape(lang), str(n), *(fmt_pct(a["per_language"].get(lang), 1) for a in agents.values())]
            for lang, n in langs.items()
        ]
        out += _table(["Language", "Tasks", *(f"`{n}`" for n in agents)], rows, ".r" + "r" * len(agents))
        out += ["", "pass@1 over the tasks whose source files include that language.", ""]

    # --- similarity
    out += ["## Similarity to the gold patch (secondary)", ""]
    out += [
        "Changed lines (added and removed, stripped) of each attempt's `diff.patch` in non-test files, "
        "compared as multisets with the gold patch: edit-F1 of the overlap; exact = the same lines. "
        "Tests decide the result; this only shows how close the route was.",
        "",
    ]
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
    out += _table(["Agent", "Diffs", "Mean edit-F1", "Exact", "F1 when solved", "F1 when unsolved"], rows, ".rrrrr")
    out += [""]

    # --- flags
    out += ["## Flagged attempts", ""]
    out += [
        "Suspicious diffs (they reference pytest internals) and edits to test files, which grading "
        "discards. Per agent: "
        + ", ".join(
            f"`{n}` {a['suspicious']} suspicious / {a['touched_tests']} touched tests" for n, a in agents.items()
        )
        + ".",
        "",
    ]
    flagged = report.get("flagged") or []
    if flagged:
        rows = [
            [
                f"`{f['task_id']}`",
                f"`{f['agent']}`",
                str(f["attempt"]),
                f["outcome"].replace("_", " "),
                (f"yes: {f['reason']}" if f.get("reason") else "yes") if f["suspicious"] else "",
                "yes" if f["touched_tests"] else "",
            ]
            for f in flagged
        ]
        out += _table(["Task", "Agent", "Attempt", "Outcome", "Suspicious", "Touched tests"], rows, "..r") + [""]

    sb = report.get("sandbox")
    if sb:
        out += ["## Sandbox", "", sandbox_line(sb)[len("sandbox: "):].capitalize() + " (attempts per sandbox).", ""]

    # --- errors
    errs = [(n, e) for n, a in agents.items() for e in a.get("errors") or []]
    if errs:
        out += ["## Most common error lines", ""]
        rows = [[f"`{n}`", str(e[1]), md_escape(str(e[0]))] for n, e in errs]
        out += _table(["Agent", "Count", "Error"], rows, ".r.") + [""]

    # --- memorization probe
    memo = memorization_lines(report)
    if memo:
        out += ["## Memorization probe", ""]
        out += [f"- {md_escape(line)}" for line in memo]
        out += ["", "A task is flagged when its best sample scores above the 95th percentile of the control "
                "(tasks authored after the cutoff, or prompts paired with another task's files); scores are "
                "token similarity to the gold added lines.", ""]

    # --- runs
    out += ["## Runs", ""]
    rows = [
        [
            f"`{r['run_id']}`",
            md_escape(str(r.get("created_at") or DASH)),
            str(r.get("attempts") if r.get("attempts") is not None else DASH),
            f"`{r['tasks_digest']}`" if r.get("tasks_digest") else DASH,
            md_escape(str(r["cut_short"])) if r.get("cut_short") else DASH,
        ]
        for r in report.get("runs") or []
    ]
    out += _table(["Run", "Created", "Attempts", "Tasks digest", "Cut short"], rows, "..r") + [""]
    agents_meta = [
        f"`{n}`: {md_escape(str(a['spec'] or DASH))}"
        + (f", model {md_escape(str(a['model']))}" if a.get("model") else "")
        + (f", version {md_escape(str(a['version']))}" if a.get("version") else "")
        for n, a in agents.items()
    ]
    out += ["Agents: " + "; ".join(agents_meta) + ".", ""]
    return "\n".join(out)
