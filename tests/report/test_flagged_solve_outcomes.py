"""gatk51: the report's outcomes per agent (terminal line, report.md and report.html's Outcomes table, ``homefield
view``'s run page) counted a solve flagged ``suspicious`` under ``✓ solved`` beside a leaderboard whose ``solved``
(``records.counts_solved``, ratk48) did not: ``✓ solved 2`` under ``solved 1``. Now the flagged solves have their
own count, ``!``, and ``✓ solved`` the others; since sus60 every rate counts both (the flag a hint), so the two add
up to the leaderboard's ``solved``. Over one run folder of hand-written result records:
``t0`` solved and flagged, ``t1`` solved clean, ``t2`` failed and flagged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.report_tasks import FLAGGED_IDS as IDS
from helpers.report_tasks import flagged_report, flagged_run, plain_task

from pytest_homefield.report import render_html, render_markdown, render_text_plain
from pytest_homefield.view import build_site


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return flagged_run(tmp_path)


def test_the_terminal_outcomes_count_a_flagged_solve_apart(run: Path) -> None:
    rep = flagged_report(run)
    assert rep.agents["x"].solved == 2 and rep.agents["x"].flagged_solves == 1
    text = render_text_plain(rep)
    line = text.splitlines()[text.splitlines().index("outcomes (scored | unscored, left out of every rate):") + 1]
    assert "✓ solved 1 · ! flagged solve (counted solved) 1 · ✗ tests failed 1" in line, line  # before: ✓ solved 2


def test_the_markdown_and_html_outcomes_tables_count_a_flagged_solve_apart(run: Path) -> None:
    md = render_markdown(flagged_report(run))
    table = md[md.index("## Outcomes"):]
    assert "| Agent | ✓ solved | ! flagged solve (counted solved) | ✗ tests failed |" in table, table
    assert "| `x` | 1 | 1 | 1 |" in table, table  # before: | `x` | 2 | 1 | 1 |
    page = render_html(flagged_report(run))
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
