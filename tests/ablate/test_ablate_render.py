"""The ablation report's renderers and the token counter."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from pytest_homefield.ablate import tokens
from pytest_homefield.ablate.render import CAVEAT, render_html, render_json, render_lines, render_markdown
from pytest_homefield.ablate.rules import split_rules
from pytest_homefield.ablate.table import build_tables, tables_to_dict


def _doc() -> dict[str, Any]:
    rules = split_rules("- KEY <script>alert(1)</script> | pipe\n- filler\n")
    recs = []
    for i in range(8):
        recs += [{"variant": "base", "task_id": f"t{i}", "agent": "a", "attempt": 1, "outcome": "solved"},
                 {"variant": "rule-1", "task_id": f"t{i}", "agent": "a", "attempt": 1, "outcome": "tests_failed"},
                 {"variant": "rule-2", "task_id": f"t{i}", "agent": "a", "attempt": 1, "outcome": "solved"}]
    tables = build_tables(recs, rules, ["a"])
    return {"schema_version": 1, "ablate_id": "x1", "rules_file": "AGENTS.md", "by_section": False, "tasks": 8,
            "attempts": 1, "results": len(recs), "phase": "rules", "cut_short": "budget spent: 1.00 of 1.00 USD",
            "tokenizer": tokens.tokenizer_name(), "rules_paths": {"a": "CLAUDE.md"}, "agents": tables_to_dict(tables),
            "slim": None, "folder": ".homefield/ablate/x1"}


def test_markdown_json_html_and_terminal_say_the_same_thing() -> None:
    doc = _doc()
    md = render_markdown(doc)
    assert "| 1 | KEY \\<script\\>alert(1)\\</script\\> \\| pipe | " in md and "**load-bearing**" in md
    assert "no detectable effect (could detect ≥" in md and CAVEAT in md and "**Cut short:**" in md
    assert "a (reads CLAUDE.md): base pass@1 100% over 8 tasks × 1 attempt" in md
    assert "decided once every per-rule attempt has finished" in md
    page = render_html(doc)
    assert "<script>" not in page and "&lt;script&gt;" in page and "class='lb'" in page
    assert json.loads(render_json(doc))["agents"][0]["rules"][0]["verdict"] == "load-bearing"
    lines = [text for text, _ in render_lines(doc, width=100)]
    assert any("load-bearing" in ln and "+100" in ln for ln in lines)
    assert lines[0].startswith("cut short: budget spent")


def test_a_rules_escape_sequences_are_shown_not_played() -> None:
    """host29: a rule of the repository's rules file holding ``ESC [2J`` reached the terminal summary and
    ``report.md`` raw; every format shows it as its escape."""
    doc = _doc()
    rules = split_rules("- KEY \x1b[2J\x1b[Hall rules load-bearing\u202e\n- filler\n")
    recs = [{"variant": v, "task_id": "t0", "agent": "a", "attempt": 1, "outcome": "solved"}
            for v in ("base", "rule-1", "rule-2")]
    doc["agents"] = tables_to_dict(build_tables(recs, rules, ["a"]))
    lines = [text for text, _ in render_lines(doc, width=100)]
    md = render_markdown(doc)  # Markdown: the escape's backslash and the bracket escaped, read as "\x1b[2J"
    assert "\\\\x1b\\[2J" in md and "\x1b" not in md and "\u202e" not in md
    for out in ("\n".join(lines), render_html(doc)):
        assert "\\x1b[2J" in out and "\x1b" not in out and "\u202e" not in out


def test_a_rules_markdown_reads_as_its_text() -> None:
    """ratk48: the Markdown report escaped only ``|`` of a rule's text, so a rule of the repository's rules file
    rendered as markup on GitHub or any Markdown viewer: an image fetched from anywhere, a link, a bold line
    that reads as a verdict. Every rule, path and name now goes through the report's one escaper."""
    doc = _doc()
    rules = split_rules("- ![x](https://evil.example/p.png) [ok](https://evil.example)\n"
                        "- **ALL LOAD-BEARING** <img src=x onerror=alert(1)>\n- &#x202e; ~~gone~~\n")
    recs = [{"variant": v, "task_id": "t0", "agent": "a", "attempt": 1, "outcome": "solved"}
            for v in ("base", "rule-1", "rule-2", "rule-3")]
    doc["agents"] = tables_to_dict(build_tables(recs, rules, ["a"]))
    doc["rules_paths"] = {"a": "<b>x</b>.md"}
    md = render_markdown(doc)
    for raw in ("[x]", "[ok]", "*ALL", "<img", "&#x202e;", "~gone", "<b>"):  # none without its backslash
        assert re.search(r"(?<!\\)" + re.escape(raw), md) is None, raw
    assert "| !\\[x\\](https://evil.example/p.png) \\[ok\\](https://evil.example) |" in md
    assert "| \\*\\*ALL LOAD-BEARING\\*\\* \\<img src=x onerror=alert(1)\\> |" in md
    assert "| \\&\\#x202e; \\~\\~gone\\~\\~ |" in md and "## a (reads \\<b\\>x\\</b\\>.md)" in md


def test_tokens_use_a_real_tokenizer_when_one_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    class Enc:
        def encode(self, text: str, disallowed_special: Any = ()) -> list[int]:
            return list(range(len(text.split())))

    monkeypatch.setattr(tokens, "_encoder", lambda: Enc())
    assert tokens.count_tokens("three words here") == tokens.TokenCount(3, False)
    assert tokens.tokenizer_name() == "tiktoken cl100k_base"
    monkeypatch.setattr(tokens, "_encoder", lambda: None)
    assert tokens.count_tokens("x" * 10) == tokens.TokenCount(2, True) and str(tokens.count_tokens("abcdefgh")) == "~2"
    assert "approximate" in tokens.tokenizer_name()


def test_every_format_states_the_power_of_the_labels() -> None:
    """Issue 32: the smallest rule effect labelled right 80 % of the time, at the table's tasks and attempts."""
    doc = _doc()
    gap = doc["agents"][0]["label_gap"]
    assert gap is not None and 0.5 < gap <= 1.0  # 8 tasks × 1 attempt, alpha 0.05 / 2 rules
    want = (f"Power: a rule worth ±{round(100 * gap)} pts or more is labelled right at least 80% of the time "
            "with 8 tasks")
    assert want in render_markdown(doc) and want in render_html(doc)
    assert any(want in text for text, _ in render_lines(doc))
    doc["agents"][0]["label_gap"] = 1.0
    assert "no rule effect is labelled right 80% of the time, however large" in render_markdown(doc)
    del doc["agents"][0]["label_gap"]  # an ablation written before issue 32
    assert "Power:" not in render_markdown(doc)
