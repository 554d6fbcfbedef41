"""The helpers shared by ``homefield ablate`` and the plugin: the rules file, agents, workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_homefield.ablate.ablate_plan import workers_from
from pytest_homefield.ablate.rules import load_rules, resolve_rules_file
from pytest_homefield.ablate.variants import agent_rows
from pytest_homefield.settings import resolve_settings


def test_the_rules_file_must_be_a_file_inside_the_repository(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "AGENTS.md").write_text("- a\n")
    (tmp_path / "outside.md").write_text("- a\n")
    assert resolve_rules_file("AGENTS.md", root / "docs", root)[1] == "docs/AGENTS.md"
    with pytest.raises(ValueError, match="not found"):
        resolve_rules_file("CLAUDE.md", root, root)
    with pytest.raises(ValueError, match="outside the repository"):
        resolve_rules_file(str(tmp_path / "outside.md"), root, root)
    (root / ".homefield").mkdir()
    (root / ".homefield" / "x.md").write_text("- a\n")
    with pytest.raises(ValueError, match="not under .homefield"):
        resolve_rules_file(".homefield/x.md", root, root)


def test_a_file_without_rules_or_not_utf8_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# only a heading\n")
    with pytest.raises(ValueError, match="no rules"):
        load_rules(tmp_path / "a.md", by_section=False)
    with pytest.raises(ValueError, match="no ## sections"):
        load_rules(tmp_path / "a.md", by_section=True)
    (tmp_path / "b.md").write_bytes(b"- caf\xe9\n")
    with pytest.raises(ValueError, match="not UTF-8"):
        load_rules(tmp_path / "b.md", by_section=False)


def test_agent_rows_name_spec_and_the_file_each_reads(tmp_path: Path) -> None:
    s = resolve_settings(tmp_path, {"agent": ["claude:claude-sonnet-4-5", "h=claude:claude-haiku-4-5", "codex",
                                              "cmd:./go.sh"]})
    rows = agent_rows(s, "docs/RULES.md")
    assert [(n, p) for n, _, p in rows] == [("claude-sonnet-4-5", "CLAUDE.md"), ("h", "CLAUDE.md"),
                                           ("codex", "AGENTS.md"), ("cmd", "docs/RULES.md")]
    assert rows[2][1].startswith("cmd:codex exec")
    with pytest.raises(ValueError, match="no agent given"):
        agent_rows(resolve_settings(tmp_path, {}), "CLAUDE.md")
    with pytest.raises(ValueError, match="share a name"):
        agent_rows(resolve_settings(tmp_path, {"agent": ["oracle", "oracle"]}), "CLAUDE.md")


@pytest.mark.parametrize(("value", "n"), [(None, 1), ("0", 1), ("3", 3), ("auto", None), ("bad", 1)])
def test_workers_from(value: object, n: int | None) -> None:
    assert workers_from(value) == (n if n is not None else workers_from("logical"))
