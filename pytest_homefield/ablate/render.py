"""The ablation report: one document, rendered as Markdown, JSON, HTML and terminal lines (issue 14).

:func:`report_doc` gathers the per-agent tables (:mod:`pytest_homefield.ablate.table`) with the
ablation's facts; effects are shown in percentage points (base − without the rule: positive means
the rule helps), p-values with two significant digits, and "no detectable effect" with the smallest
effect this task set could have detected (80 % power).
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

from pytest_homefield.ablate.table import HARMFUL, LOAD_BEARING, NO_EFFECT, AgentTable, tables_to_dict
from pytest_homefield.ablate.tokens import tokenizer_name
from pytest_homefield.layout import read_meta
from pytest_homefield.store import read_jsonl

__all__ = ["report_doc", "render_markdown", "render_json", "render_html", "render_lines", "CAVEAT"]

CAVEAT = ("'No detectable effect' is not proof that a rule does nothing: it may matter on tasks this set "
          "lacks, or by less than the detectable effect. Rules are removed one at a time, so two rules that "
          "duplicate each other each look removable; the slimmer file, measured as a whole, is the check.")


def report_doc(session: Any, tables: Sequence[AgentTable]) -> dict[str, Any]:
    """The report document of ``session`` (an :class:`~pytest_homefield.ablate.session.AblationSession`)."""
    meta_cut = None
    try:
        meta_cut = read_meta(session.ablate_dir).get("cut_short")
    except ValueError:  # RunError: a meta.json that does not validate; the report goes on without it
        pass
    slim = session.slim_variant
    return {
        "schema_version": 1,
        "ablate_id": session.ablate_id,
        "rules_file": session.rules_file,
        "by_section": session.rules.by_section,
        "tasks": len(session.tasks),
        "attempts": session.settings.attempts,
        "results": sum(1 for _ in read_jsonl(session.results_path)),
        "phase": session.phase,
        "cut_short": meta_cut,
        "tokenizer": tokenizer_name(),
        "rules_paths": dict(session.rules_paths),
        "agents": tables_to_dict(tables),
        "slim": None if slim is None else {
            "removed": list(slim.removed), "alias": session.slim_alias,
            "suggested": str(session.suggested_path.relative_to(session.settings.root)),
            "measured": session.phase == "done",
        },
        "folder": str(session.ablate_dir.relative_to(session.settings.root)),
        "shard": str(session.shard) if session.shard else None,
        "incomplete": list(session.incomplete),
    }


def _shard_lines(doc: dict[str, Any]) -> list[str]:
    """What a shard or an incomplete merge says first: its table is not over every task."""
    out = []
    if doc.get("shard"):
        out.append(f"Shard {doc['shard']}: this table is over this shard's {doc['tasks']} tasks only.")
    out += list(doc.get("incomplete") or [])
    return out


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _pts(x: float | None) -> str:
    if x is None:
        return "–"
    v = round(100 * x)
    return ("+" if v > 0 else "") + str(v).replace("-", "−")


def _ci(ci: Sequence[float] | None) -> str:
    return "–" if ci is None else f"{_pts(ci[0])}…{_pts(ci[1])}"


def _p(p: float | None) -> str:
    if p is None:
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.2g}"


def _label(row: dict[str, Any], strong: tuple[str, str] = ("**", "**")) -> str:
    v = str(row["verdict"])
    if v in (LOAD_BEARING, HARMFUL):
        return f"{strong[0]}{v}{strong[1]}"
    if v == NO_EFFECT and row.get("mde") is not None:
        return f"{v} (could detect ≥{round(100 * row['mde'])} pts)"
    return v


def _slim_sentence(doc: dict[str, Any], agent: dict[str, Any]) -> str:
    slim, s = doc.get("slim"), agent.get("slim")
    if slim is None or s is None:
        if doc["phase"] == "rules":
            return "The slimmer file is decided once every per-rule attempt has finished."
        if doc["phase"] == "merge":
            return ("The slimmer file is decided over every task once all shards are merged "
                    "(homefield ablate FILE --merge DIR…).")
        return "Slimmer file: none (every rule is load-bearing for some agent)."
    removed = ", ".join(str(n) for n in slim["removed"])
    head = (f"Slimmer file (without rules {removed}; {s['tokens_saved']} tokens less per turn), "
            f"saved as {slim['suggested']}: ")
    if agent["rules"] and all((r.get("mde") or 1.0) >= 0.995 for r in agent["rules"]):
        head = ("With this few tasks no rule could show an effect, so this is no evidence for removing any. "
                + head)
    if s.get("comparison"):
        return head + f"pass@1 {_pct(s['slim'])} vs {_pct(s['with_rules'])} with the full file; {s['sentence']}."
    if slim.get("alias"):
        return head + "the same file as one per-rule variant, whose result is its row above."
    return head + "not measured yet (it runs after the per-rule results; continue with --resume)."


def _rows(agent: dict[str, Any]) -> list[list[str]]:
    out = []
    for r in agent["rules"]:
        tok = ("~" if r["tokens_approximate"] else "") + str(r["tokens"])
        out.append([str(r["number"]), r["label"].split(". ", 1)[1], tok, _pct(r["with_rule"]), _pct(r["without_rule"]),
                    _pts(r["effect"]), _ci(r["ci"]), _p(r["p"]), _p(r["p_adjusted"]), r["verdict"]])
    return out


HEADERS = ["#", "rule", "tokens", "pass@1 with", "without", "effect (pts)", "95% CI", "p", "Holm p", "label"]


def _agent_title(doc: dict[str, Any], a: dict[str, Any]) -> str:
    return (f"{a['agent']} (reads {doc['rules_paths'].get(a['agent'], doc['rules_file'])}): base pass@1 "
            f"{_pct(a['base_pass_at_1'])} over {_n(a['base_tasks'], 'task')} × {_n(a['attempts'], 'attempt')}")


def _n(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render_markdown(doc: dict[str, Any]) -> str:
    """The report as Markdown."""
    lines = [f"# Ablation {doc['ablate_id']}: {doc['rules_file']}", ""]
    lines.append(f"{_n(doc['tasks'], 'task')} × {_n(doc['attempts'], 'attempt')}; {doc['results']} attempts "
                 "recorded. Effect = "
                 "pass@1 with the rule − without it (positive: the rule helps); the test and CI are the report's "
                 "paired test over tasks, p Holm-adjusted across the rules of one agent. Tokens per turn: "
                 f"{doc['tokenizer']}.")
    if doc.get("cut_short"):
        lines += ["", f"**Cut short:** {doc['cut_short']}; continue with `--resume`."]
    if _shard_lines(doc):
        lines += ["", *_shard_lines(doc)]
    for a in doc["agents"]:
        lines += ["", f"## {_agent_title(doc, a)}", "", "| " + " | ".join(HEADERS) + " |",
                  "|" + "|".join("---" for _ in HEADERS) + "|"]
        for row, r in zip(_rows(a), a["rules"], strict=True):
            row[1] = row[1].replace("|", "\\|")
            row[-1] = _label(r)
            lines.append("| " + " | ".join(row) + " |")
        lines += ["", _slim_sentence(doc, a)]
    lines += ["", CAVEAT, ""]
    return "\n".join(lines)


def render_json(doc: dict[str, Any]) -> str:
    """The report as JSON (indented, UTF-8 kept readable)."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render_html(doc: dict[str, Any]) -> str:
    """The report as a standalone HTML page (no scripts, inline CSS)."""
    e = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'>",
             f"<title>Ablation {e(doc['ablate_id'])}</title><style>body{{font:14px system-ui,sans-serif;"
             "margin:2em;max-width:1100px}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
             "padding:3px 7px;text-align:right}td:nth-child(2){text-align:left}.lb{color:#0a6b2d;font-weight:bold}"
             ".hm{color:#a31515;font-weight:bold}</style></head><body>",
             f"<h1>Ablation {e(doc['ablate_id'])}: {e(doc['rules_file'])}</h1>",
             f"<p>{doc['tasks']} tasks × {doc['attempts']} attempts; {doc['results']} attempts recorded. Effect = "
             "pass@1 with the rule − without it; p Holm-adjusted across one agent's rules. Tokens: "
             f"{e(doc['tokenizer'])}.</p>"]
    if doc.get("cut_short"):
        parts.append(f"<p><b>Cut short:</b> {e(str(doc['cut_short']))}</p>")
    parts += [f"<p><b>{e(line)}</b></p>" for line in _shard_lines(doc)]
    for a in doc["agents"]:
        parts.append(f"<h2>{e(_agent_title(doc, a))}</h2><table><tr>"
                     + "".join(f"<th>{e(h)}</th>" for h in HEADERS) + "</tr>")
        for row, r in zip(_rows(a), a["rules"], strict=True):
            cls = {LOAD_BEARING: "lb", HARMFUL: "hm"}.get(r["verdict"], "")
            row[-1] = _label(r, ("", ""))
            cells = "".join(f"<td>{e(c)}</td>" for c in row[:-1]) + f"<td class='{cls}'>{e(row[-1])}</td>"
            parts.append(f"<tr>{cells}</tr>")
        parts.append(f"</table><p>{e(_slim_sentence(doc, a))}</p>")
    parts.append(f"<p><i>{e(CAVEAT)}</i></p></body></html>\n")
    return "".join(parts)


def render_lines(doc: dict[str, Any], width: int = 120) -> list[tuple[str, dict[str, bool]]]:
    """Terminal lines with markup (``{"green": True}``, …) for ``pytest_terminal_summary``."""
    out: list[tuple[str, dict[str, bool]]] = []
    if doc.get("cut_short"):
        out.append((f"cut short: {doc['cut_short']}", {"yellow": True}))
    out += [(line, {"yellow": True}) for line in _shard_lines(doc)]
    for a in doc["agents"]:
        out.append((_agent_title(doc, a), {"bold": True}))
        rows = [HEADERS] + _rows(a)
        rule_w = max(28, min(48, width - 80))
        for row in rows:
            row[1] = row[1] if len(row[1]) <= rule_w else row[1][: rule_w - 1] + "…"
        widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
        for i, row in enumerate(rows):
            cells = [row[j].ljust(widths[j]) if j in (1, 9) else row[j].rjust(widths[j]) for j in range(len(row))]
            if i and a["rules"][i - 1]["verdict"] == NO_EFFECT and a["rules"][i - 1].get("mde") is not None:
                cells[-1] = f"{row[-1]} (could detect ≥{round(100 * a['rules'][i - 1]['mde'])} pts)"
            verdict = a["rules"][i - 1]["verdict"] if i else ""
            markup = {"bold": True} if i == 0 else {"green": True} if verdict == LOAD_BEARING else \
                {"red": True} if verdict == HARMFUL else {}
            out.append(("  " + "  ".join(cells).rstrip(), markup))
        out.append((_slim_sentence(doc, a), {}))
    out.append((CAVEAT, {}))
    return out


