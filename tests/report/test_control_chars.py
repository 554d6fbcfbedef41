"""A commit's control characters never reach a reader of the report (issue 30, host29).

A task's subject and test ids are the commit's words: ``git commit -m`` takes an ESC, a carriage return
or U+202E as readily as a letter. Played on a terminal (the report printed at a run's end,
``homefield report``, ``cat report.md``), ``ESC [2J ESC [H`` clears the screen and what follows stands
where the ranking was. Each renderer shows them as escapes (``\\x1b``), as the viewer does.
"""

from __future__ import annotations

import json
import re

import pytest

from pytest_homefield.records import Task
from pytest_homefield.report import build_report, render_html, render_markdown, render_text_plain
from pytest_homefield.store import write_jsonl_atomic

#: Clears the screen, homes the cursor and writes a fake verdict in green; the rest is hidden by CR and RLO.
SUBJECT = "Fix it\x1b[2J\x1b[H\x1b[32mevil: 100% solved\x1b[0m\r\u202edevlos"
PLAYED = ("\x1b", "\r", "\u202e")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    return _report(tmp_path_factory, SUBJECT)


def _report(tmp_path_factory: pytest.TempPathFactory, subject: str) -> dict[str, object]:
    """The report of one run of agent ``a`` failing one task whose commit subject is ``subject``."""
    t = Task(id="a" * 12, commit="a" * 40, parent="b" * 40, committed_at="", authored_at="", mode="commit",
             subject=subject, message=subject, prompt=subject, source_files=[], test_files=["tests/t.py"],
             test_patch="", gold_patch="", FAIL_TO_PASS=["tests/t.py::test_\x1b[2Jx"], PASS_TO_PASS=[])
    run = tmp_path_factory.mktemp("ctl") / "r1"
    run.mkdir()
    (run / "meta.json").write_text(json.dumps({"run_id": "r1", "created_at": "2026-12-01T10:00:00+00:00",
                                               "agents": [{"name": "a", "spec": "noop"}], "attempts": 1,
                                               "task_ids": [t.id]}))
    write_jsonl_atomic(run / "results.jsonl", [{"schema_version": 1, "run_id": "r1", "task_id": t.id, "agent": "a",
                                                "attempt": 1, "variant": "base", "outcome": "tests_failed",
                                                "solved": False, "scored": True}])
    return build_report([run], [t])


@pytest.mark.parametrize("render", [render_text_plain, render_markdown, render_html],
                         ids=["text", "markdown", "html"])
def test_a_subjects_control_characters_are_shown_as_escapes(report: dict[str, object], render: object) -> None:
    out = render(report)  # type: ignore[operator]
    assert "\\x1b" in out  # the subject is there, its ESC written as an escape
    assert [c for c in PLAYED if c in out] == []


#: ASCII text that a Markdown renderer turns into what ``visible`` keeps out: character references (GitHub's
#: renderer writes ``&#x202e;`` as a real U+202E and ``&#x200b;`` as a zero-width space) and GFM strikethrough.
ENTITIES = "Fix &#x202e;devlos &#x200b;&lt;b&gt; ~~unsolved~~"


def test_a_subjects_character_references_are_written_escaped_in_markdown(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every ``&`` and ``~`` of a subject is written ``\\&`` / ``\\~`` (CommonMark shows the character itself), so
    no renderer of report.md decodes a reference into a right-to-left override or strikes text through."""
    md = render_markdown(_report(tmp_path_factory, ENTITIES))
    shown = [line for line in md.splitlines() if "devlos" in line]
    written = "Fix \\&\\#x202e;devlos \\&\\#x200b;\\&lt;b\\&gt; \\~\\~unsolved\\~\\~"
    assert shown and all(written in line for line in shown)
    assert [line for line in shown if re.search(r"(?<!\\)[&~]", line)] == []  # no bare one where the subject is
