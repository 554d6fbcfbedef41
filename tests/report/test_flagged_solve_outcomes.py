"""gatk51: the report's outcomes per agent (terminal line, report.md and report.html's Outcomes table, ``homefield
view``'s run page) counted a solve flagged ``suspicious`` under ``✓ solved`` beside a leaderboard whose ``solved``
(``records.counts_solved``, ratk48) does not: ``✓ solved 2`` under ``solved 1``. Now ``✓ solved`` counts what every
rate counts and the flagged solves have their own count, ``!``. Over one run folder of hand-written result records:
``t0`` solved and flagged, ``t1`` solved clean, ``t2`` failed and flagged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.report_tasks import plain_task

from pytest_homefield.records import Result
from pytest_homefield.report import compute_report, render_html, render_markdown, render_text_plain
from pytest_homefield.report.model import Report
from pytest_homefield.view import build_site

IDS = ["t0", "t1", "t2"]
ROWS = [("t0", "solved", True), ("t1", "solved", False), ("t2", "tests_failed", True)]


@pytest.fixture
def run(tmp_path: Path) -> Path:
    folder = tmp_path / ".homefield" / "runs" / "r1"
    folder.mkdir(parents=True)
    results = [Result(run_id="r1", task_id=t, agent="x", attempt=1, outcome=o, suspicious=s,
                      suspicious_reason="deleted the assertion" if s else None) for t, o, s in ROWS]
    (folder / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in results))
    (folder / "meta.json").write_text(json.dumps({"run_id": "r1", "attempts": 1, "task_ids": IDS,
                                                  "agents": [{"name": "x", "spec": "x"}]}))
    return folder


def _report(run: Path) -> Report:
    return compute_report([run], [plain_task(t) for t in IDS])


def test_the_terminal_outcomes_count_a_flagged_solve_apart(run: Path) -> None:
    rep = _report(run)
    assert rep.agents["x"].solved == 1
    text = render_text_plain(rep)
    line = text.splitlines()[text.splitlines().index("outcomes (scored | unscored, left out of every rate):") + 1]
    assert "✓ solved 1 · ! flagged solve (counted unsolved) 1 · ✗ tests failed 1" in line, line  # before: ✓ solved 2


def test_the_markdown_and_html_outcomes_tables_count_a_flagged_solve_apart(run: Path) -> None:
    md = render_markdown(_report(run))
    table = md[md.index("## Outcomes"):]
    assert "| Agent | ✓ solved | ! flagged solve (counted unsolved) | ✗ tests failed |" in table, table
    assert "| `x` | 1 | 1 | 1 |" in table, table  # before: | `x` | 2 | 1 | 1 |
    page = render_html(_report(run))
    box = page[page.index("<h2>Outcomes</h2>"):]
    box = box[:box.index("</table>")]
    assert re.findall(r'<span class="o-([a-z_]+)">', box) == ["solved", "suspicious", "tests_failed"], box
    assert re.findall(r">(\d+)</td>", box)[:3] == ["1", "1", "1"], box


def test_the_view_run_page_counts_a_flagged_solve_apart(run: Path) -> None:
    build_site([run], [plain_task(t) for t in IDS], run / "view")
    page = (run / "view" / "index.html").read_text()
    box = page[page.index('<table id="outcomes">'):]
    box = box[:box.index("</table>")]
    assert re.findall(r'<span class="o-([a-z_]+)"', box) == ["solved", "suspicious", "tests_failed"], box
    assert re.findall(r">(\d+)</(?:a|td)>", box) == ["1", "1", "1"], box  # before: 2, 1
