"""Splitting a rules file into rules: list items, paragraphs, what belongs to them, sections."""

from __future__ import annotations

import pytest

from pytest_homefield.ablate.rules import first_words, split_rules

SIX = """# Project

- RULE-A use pathlib.
- RULE-B never print.
- RULE-C run the tests first.
- RULE-D keep functions short.
- RULE-E write docstrings.
- RULE-F type everything.
"""

MIXED = """# Rules

- A wrapped item that goes on
  over a second line, with code:

  ```python
  def f() -> int: ...
  ```

Then a paragraph that
wraps.
"""


@pytest.mark.parametrize("text", [SIX, MIXED, "", "no newline at the end", "a\r\nb\r\n\r\n- c\r\n",
                                  "---\ntitle: x\n---\n\n- one\n", "```\nunclosed fence\n- not a rule\n"])
def test_render_without_removal_gives_the_input_back(text: str) -> None:
    assert split_rules(text).render() == text
    assert split_rules(text, by_section=True).render() == text


def test_six_items_are_six_rules_and_the_title_stays() -> None:
    rs = split_rules(SIX)
    assert [r.kind for r in rs.rules] == ["item"] * 6
    assert [r.text for r in rs.rules][2] == "- RULE-C run the tests first."
    out = rs.render([3])
    assert "RULE-C" not in out and out.startswith("# Project\n") and out.count("RULE-") == 5


def test_wrapped_item_with_code_and_a_paragraph_are_two_rules() -> None:
    rs = split_rules(MIXED)
    assert [r.kind for r in rs.rules] == ["item", "para"]
    assert "def f() -> int" in rs.rules[0].text and "second line" in rs.rules[0].text
    without_para = rs.render([2])
    assert "def f() -> int" in without_para and "Then a paragraph" not in without_para
    assert "def f()" not in rs.render([1]) and "Then a paragraph" in rs.render([1])


def test_fences_tables_and_imports_belong_to_the_rule_they_sit_in() -> None:
    text = ("## Style\n\nFormat code like this:\n\n~~~\n- not an item\n## not a heading\n~~~\n\n"
            "| tool | use |\n|---|---|\n| ruff | lint |\n\n@docs/style.md\n\n- Next rule.\n")
    rs = split_rules(text)
    assert [r.kind for r in rs.rules] == ["para", "item"]
    first = rs.rules[0].text
    assert "~~~" in first and "| ruff | lint |" in first and "@docs/style.md" in first
    assert rs.rules[0].heading == "Style"


def test_blocks_right_after_a_heading_are_rules_of_their_own() -> None:
    text = "# T\n\n```bash\nmake test\n```\n\n@AGENTS.md\n\n| a |\n|---|\n"
    rs = split_rules(text)
    assert [r.kind for r in rs.rules] == ["code", "import", "table"]


def test_headings_breaks_comments_and_front_matter_are_never_rules() -> None:
    text = ("---\nname: x\n---\n# Title\n\nSetext title\n============\n\n<!-- a note\nfor humans -->\n\n***\n\n"
            "- only rule\n")
    rs = split_rules(text)
    assert [r.text for r in rs.rules] == ["- only rule"]


def test_nested_items_and_lazy_lines_continue_the_top_level_item() -> None:
    text = ("- top\n  - nested a\n  - nested b\nlazy line\n- second\n\n  indented after a blank line\n"
            "1. third\n2) fourth\n")
    rs = split_rules(text)
    assert [r.text.splitlines()[0] for r in rs.rules] == ["- top", "- second", "1. third", "2) fourth"]
    assert "lazy line" in rs.rules[0].text and "indented after" in rs.rules[1].text


def test_removing_a_rule_leaves_no_doubled_or_trailing_blank_line() -> None:
    text = "# T\n\nfirst para\n\nsecond para\n\nthird para\n"
    rs = split_rules(text)
    assert rs.render([2]) == "# T\n\nfirst para\n\nthird para\n"
    assert rs.render([3]) == "# T\n\nfirst para\n\nsecond para\n"
    assert rs.render([1, 2, 3]) == "# T\n"
    with pytest.raises(ValueError, match="no rule numbered 4"):
        rs.render([4])


def test_by_section_units_are_h2_sections_and_the_preamble_stays() -> None:
    text = "# Title\n\nintro\n\n## A\n\nx\n\n### A.1\n\nmore\n\n## B\n\ny\n"
    rs = split_rules(text, by_section=True)
    assert [r.heading for r in rs.rules] == ["A", "B"]
    assert "### A.1" in rs.rules[0].text
    assert rs.render([1]) == "# Title\n\nintro\n\n## B\n\ny\n"
    assert split_rules("# only\n\n- a\n", by_section=True).rules == ()


def test_first_words() -> None:
    assert first_words("- Always run the whole test suite before you say you are done") == \
        "Always run the whole test suite before you…"
    assert first_words("1. short") == "short"
    assert first_words("para\nsecond line") == "para…"
