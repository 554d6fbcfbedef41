"""The ablation report: one document, rendered as Markdown, JSON, HTML and terminal lines (issue 14).

:func:`report_doc` gathers the per-agent tables (:mod:`pytest_homefield.ablate.table`) with the
ablation's facts; effects are shown in percentage points (base − without the rule: positive means
the rule helps), p-values with two significant digits, and "no detectable effect" with the smallest
effect this task set could have detected (80 % power). Each agent's rules are one
:class:`~pytest_homefield.report.tables.Table` (:func:`agent_table`), rendered by the report's table
renderers in their compact style.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

from pytest_homefield.ablate.table import (
    HARMFUL,
    LOAD_BEARING,
    NO_EFFECT,
    AgentEntry,
    AgentTable,
    RuleRow,
    tables_to_dict,
)
from pytest_homefield.ablate.tokens import tokenizer_name
from pytest_homefield.layout import read_meta
from pytest_homefield.records import one_line, visible
from pytest_homefield.report.html import html_table
from pytest_homefield.report.markdown import markdown_table, md_escape
from pytest_homefield.report.tables import Column, Row, Table, Text, Tone
from pytest_homefield.report.text import Line, text_table
from pytest_homefield.settings_table import option
from pytest_homefield.store import read_jsonl

if TYPE_CHECKING:
    from pytest_homefield.ablate.session import AblationSession

__all__ = ["CAVEAT", "FORMATS", "AblationDoc", "agent_table", "render_html", "render_json", "render_lines",
           "render_markdown", "report_doc"]

CAVEAT = ("'No detectable effect' is not proof that a rule does nothing: it may matter on tasks this set "
          "lacks, or by less than the detectable effect. Rules are removed one at a time, so two rules that "
          "duplicate each other each look removable; the slimmer file, measured as a whole, is the check.")


class SlimDoc(TypedDict):
    """``slim``: the rules the slimmer file removed, the variant it is an alias of, where it was saved."""

    removed: list[int]
    alias: str | None
    suggested: str
    measured: bool


class AblationDoc(TypedDict, total=False):
    """The ablation report document (``report.json`` of ``.homefield/ablate/<id>/``)."""

    schema_version: int
    ablate_id: str
    rules_file: str
    by_section: bool
    tasks: int
    attempts: int
    results: int
    phase: str
    cut_short: str | None
    tokenizer: str
    rules_paths: dict[str, str]
    agents: list[AgentEntry]
    slim: SlimDoc | None
    folder: str
    shard: str | None
    incomplete: list[str]


#: The document as callers hold it: an :class:`AblationDoc`, or the dict it is (``json.loads`` of it).
Doc = AblationDoc | Mapping[str, Any]


def report_doc(session: AblationSession, tables: Sequence[AgentTable]) -> dict[str, Any]:
    """The report document of ``session``, a plain dict shaped as :class:`AblationDoc`."""
    meta_cut = None
    try:
        meta_cut = read_meta(session.ablate_dir).get("cut_short")
    except ValueError:  # RunError: a meta.json that does not validate; the report goes on without it
        pass
    slim = session.slim_variant
    doc: AblationDoc = {
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
    return cast("dict[str, Any]", doc)


def _shard_lines(doc: AblationDoc) -> list[str]:
    """What a shard or an incomplete merge says first: its table is not over every task."""
    out = []
    if doc.get("shard"):
        out.append(f"Shard {doc.get('shard')}: this table is over this shard's {_n(doc['tasks'], 'task')} only.")
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


def _label(row: RuleRow) -> str:
    v = str(row["verdict"])
    mde = row.get("mde")
    return f"{v} (could detect ≥{round(100 * mde)} pts)" if v == NO_EFFECT and mde is not None else v


_TONES: dict[str, Tone] = {LOAD_BEARING: "good", HARMFUL: "bad"}

#: Column titles, numeric (right-aligned) but for the rule and its label.
HEADERS = ["#", "rule", "tokens", "pass@1 with", "without", "effect (pts)", "95% CI", "p", "Holm p", "label"]


def agent_table(agent: AgentEntry, *, clip: int | None = None) -> Table:
    """One agent's rules: number, text (``clip``: at most that many characters in a terminal), tokens,
    pass@1 with and without, the effect and its CI, p and Holm p, and the label (strong, and the row
    green or red, when load-bearing or harmful)."""
    columns = tuple(Column(Text(h), numeric=h not in ("rule", "label"), clip=clip if h == "rule" else None,
                           tone_class=h == "label") for h in HEADERS)
    rows = []
    for r in agent["rules"]:
        tone = _TONES.get(r["verdict"])
        tok = ("~" if r["tokens_approximate"] else "") + str(r["tokens"])
        cells = (str(r["number"]), r["label"].split(". ", 1)[1], tok, _pct(r["with_rule"]), _pct(r["without_rule"]),
                 _pts(r["effect"]), _ci(r["ci"]), _p(r["p"]), _p(r["p_adjusted"]))
        rows.append(Row((*(Text(c, prose=i == 1) for i, c in enumerate(cells)),
                         Text(_label(r), strong=tone is not None)), tone))
    return Table(columns, tuple(rows))


def _slim_sentence(doc: AblationDoc, agent: AgentEntry) -> str:
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
    return head + f"not measured yet (it runs after the per-rule results; continue with {option('resume')})."


def _power_sentence(a: AgentEntry) -> str:
    """What the labels can see (issue 32): the smallest rule effect labelled right at least 80 % of the
    time (``label_gap``); "" for an ablation written before it was recorded."""
    gap = a.get("label_gap")
    if gap is None:
        return ""
    if gap >= 0.995:
        return (f"Power: with {_n(a['base_tasks'], 'task')} × {_n(a['attempts'], 'attempt')} no rule effect is "
                "labelled right 80% of the time, however large.")
    return (f"Power: a rule worth ±{round(100 * gap)} pts or more is labelled right at least 80% of the time with "
            f"{_n(a['base_tasks'], 'task')} × {_n(a['attempts'], 'attempt')} (the exact paired test's simulated "
            "power at alpha / rules, Holm's first step); smaller effects usually read 'no detectable effect'.")


def _agent_title(doc: AblationDoc, a: AgentEntry) -> str:
    return (f"{a['agent']} (reads {doc['rules_paths'].get(a['agent'], doc['rules_file'])}): base pass@1 "
            f"{_pct(a['base_pass_at_1'])} over {_n(a['base_tasks'], 'task')} × {_n(a['attempts'], 'attempt')}"
            + (f" ({a['incomplete']})" if a.get("incomplete") else ""))


def _n(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render_markdown(document: Doc) -> str:
    """The report as Markdown."""
    doc = cast(AblationDoc, document)
    # the report's one escaper for every free text (a rule's, a path's, an agent's name): a rule holding
    # ``<img src=x onerror=…>``, ``[link](…)`` or ``**all load-bearing**`` reads as itself (ratk48: only ``|`` was)
    e = md_escape
    lines = [f"# Ablation {e(doc['ablate_id'])}: {e(doc['rules_file'])}", ""]
    lines.append(f"{_n(doc['tasks'], 'task')} × {_n(doc['attempts'], 'attempt')}; {_n(doc['results'], 'attempt')} "
                 "recorded. Effect = "
                 "pass@1 with the rule − without it (positive: the rule helps); the test and CI are the report's "
                 "paired test over tasks, p Holm-adjusted across the rules of one agent. Tokens per turn: "
                 f"{doc['tokenizer']}.")  # homefield's own words
    if doc.get("cut_short"):
        lines += ["", f"**Cut short:** {e(str(doc.get('cut_short')))}; continue with `{option('resume')}`."]
    if _shard_lines(doc):
        lines += ["", *map(e, _shard_lines(doc))]
    for a in doc["agents"]:
        lines += ["", f"## {e(_agent_title(doc, a))}", ""]
        lines += markdown_table(agent_table(a), compact=True)
        lines += ["", e(_slim_sentence(doc, a))]
        if _power_sentence(a):
            lines += ["", _power_sentence(a)]
    lines += ["", CAVEAT, ""]
    return visible("\n".join(lines), keep="\n\t")  # a rule's or an error's control characters shown as escapes


def render_json(document: Doc) -> str:
    """The report as JSON (indented, UTF-8 kept readable)."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def render_html(document: Doc) -> str:
    """The report as a standalone HTML page (no scripts, inline CSS)."""
    doc = cast(AblationDoc, document)
    e = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'>",
             f"<title>Ablation {e(doc['ablate_id'])}</title><style>body{{font:14px system-ui,sans-serif;"
             "margin:2em;max-width:1100px}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
             "padding:3px 7px;text-align:right}td:nth-child(2){text-align:left}.lb{color:#0a6b2d;font-weight:bold}"
             ".hm{color:#a31515;font-weight:bold}</style></head><body>",
             f"<h1>Ablation {e(doc['ablate_id'])}: {e(doc['rules_file'])}</h1>",
             f"<p>{_n(doc['tasks'], 'task')} × {_n(doc['attempts'], 'attempt')}; {_n(doc['results'], 'attempt')} "
             "recorded. Effect = "
             "pass@1 with the rule − without it; p Holm-adjusted across one agent's rules. Tokens: "
             f"{e(doc['tokenizer'])}.</p>"]
    if doc.get("cut_short"):
        parts.append(f"<p><b>Cut short:</b> {e(str(doc.get('cut_short')))}</p>")
    parts += [f"<p><b>{e(line)}</b></p>" for line in _shard_lines(doc)]
    for a in doc["agents"]:
        parts.append(f"<h2>{e(_agent_title(doc, a))}</h2>"
                     + html_table(agent_table(a), compact=True, tone_classes={"good": "lb", "bad": "hm"})
                     + f"<p>{e(_slim_sentence(doc, a))}</p>"
                     + (f"<p>{e(_power_sentence(a))}</p>" if _power_sentence(a) else ""))
    parts.append(f"<p><i>{e(CAVEAT)}</i></p></body></html>\n")
    return "".join(parts)


def render_lines(document: Doc, width: int = 120) -> list[Line]:
    """Terminal lines with markup (``{"green": True}``, …) for ``pytest_terminal_summary``."""
    doc = cast(AblationDoc, document)
    out: list[Line] = []
    if doc.get("cut_short"):
        out.append((f"cut short: {doc.get('cut_short')}", {"yellow": True}))
    out += [(line, {"yellow": True}) for line in _shard_lines(doc)]
    for a in doc["agents"]:
        out.append((_agent_title(doc, a), {"bold": True}))
        out += text_table(agent_table(a, clip=max(28, min(48, width - 80))), indent="  ")
        out.append((_slim_sentence(doc, a), {}))
        if _power_sentence(a):
            out.append((_power_sentence(a), {}))
    out.append((CAVEAT, {}))
    return [(one_line(text), markup) for text, markup in out]  # no ESC sequence of a rule reaches the terminal


#: The ablation report's files, by extension, in the order a session writes them.
FORMATS: dict[str, Callable[[Doc], str]] = {"md": render_markdown, "json": render_json, "html": render_html}
