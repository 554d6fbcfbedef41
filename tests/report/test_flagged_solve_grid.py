"""grid50: a solve flagged ``suspicious`` (counted solved by every rate since sus60, ``records.counts_solved``, a
verdict resting on it withheld; counted unsolved before) was shown as ``✓`` in every format (terminal, report.md,
report.html, ``homefield view``), the list of flagged attempts below it: a reader scanning the grid missed its flag.
Now ``tasks[].suspicious`` (one flag per attempt) gives it its own mark, ``!``, named in each legend. Over one run
folder of hand-written result records: ``t0`` solved and flagged, ``t1`` solved clean, ``t2`` failed and flagged."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from helpers.report_tasks import FLAGGED_IDS as IDS
from helpers.report_tasks import flagged_report, flagged_run, plain_task

from pytest_homefield.report import render_html, render_json, render_markdown, render_text_plain
from pytest_homefield.report.model import Report
from pytest_homefield.view import build_site

WORDS = "solved but flagged suspicious, counted solved (a hint; verdicts resting on it withheld)"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return flagged_run(tmp_path)


def test_the_report_json_flags_each_attempt(run: Path) -> None:
    doc = json.loads(render_json(flagged_report(run)))
    assert {t["id"]: t["suspicious"] for t in doc["tasks"]} == {"t0": {"x": [True]}, "t1": {"x": [False]},
                                                               "t2": {"x": [True]}}
    assert Report.from_dict(doc).to_dict() == doc


def test_the_terminal_grid_marks_a_flagged_solve(run: Path) -> None:
    text = render_text_plain(flagged_report(run))
    cells = {m[1]: m[2] for m in re.finditer(r"^(t\d)\s+(\S+)\s+\[vague\] p$", text, re.M)}
    assert cells == {"t0": "!", "t1": "✓", "t2": "✗"}, text  # before: t0 ✓
    head = next(line for line in text.splitlines() if line.startswith("per task ("))
    assert f"! {WORDS}" in head, head


def test_the_markdown_grid_marks_a_flagged_solve(run: Path) -> None:
    md = render_markdown(flagged_report(run))
    cells = {m[1]: m[2] for m in re.finditer(r"^\| `(t\d)` \| p \*vague\* \| `([^`]*)`", md, re.M)}
    assert cells == {"t0": "!", "t1": "✓", "t2": "✗"}, md  # before: t0 ✓
    legend = next(line for line in md.splitlines() if line.startswith("Legend: "))
    assert f"`!` {WORDS}" in legend


def test_the_html_grid_marks_a_flagged_solve(run: Path) -> None:
    page = render_html(flagged_report(run))
    grid = page[page.index('<table class="grid">'):]
    grid = grid[:grid.index("</table>")]
    rows = {m[1]: m[2] for m in re.finditer(r"<tr><td><code>(t\d)</code></td>(.*?)</tr>", grid)}
    spans = {t: re.findall(r'<span class="(o-[a-z_]+)" title="([^"]*)">([^<]*)</span>', row) for t, row in rows.items()}
    assert [(c, s) for c, _, s in spans["t0"]] == [("o-suspicious", "!")], page  # before: o-solved ✓
    assert WORDS in html.unescape(spans["t0"][0][1])
    assert [(c, s) for c, _, s in spans["t1"]] == [("o-solved", "✓")]
    assert [(c, s) for c, _, s in spans["t2"]] == [("o-tests_failed", "✗")]
    assert f'<span class="o-suspicious">!</span> {WORDS}' in page


def test_the_view_grid_marks_a_flagged_solve(run: Path) -> None:
    build_site([run], [plain_task(t) for t in IDS], run / "view")
    page = (run / "view" / "index.html").read_text()
    rows = {m[1]: m[2] for m in re.finditer(r'<tr data-task="(t\d)"(.*?)</tr>', page)}
    links = {t: re.findall(r'<a class="att (o-[a-z_]+)[^"]*"[^>]*>([^<]*)</a>', row) for t, row in rows.items()}
    assert links == {"t0": [("o-suspicious", "!")], "t1": [("o-solved", "✓")], "t2": [("o-tests_failed", "✗")]}, \
        links  # before: t0 o-solved ✓
    assert f'<span class="o-suspicious">!</span> {WORDS}' in page


def test_the_views_task_and_attempt_pages_name_a_flagged_solve(run: Path) -> None:
    """The task page (every agent's attempts side by side) and the attempt page's title said ``✓ solved`` of a
    flagged solve, the task page nothing of its flag."""
    build_site([run], [plain_task(t) for t in IDS], run / "view")
    heads = {t: re.findall(r'<span class="(o-[a-z_]+)">([^<]*)</span>', (run / "view" / "tasks" / f"{t}.html")
                           .read_text()) for t in IDS}
    assert heads == {"t0": [("o-suspicious", f"! {WORDS}")], "t1": [("o-solved", "✓ solved")],
                     "t2": [("o-tests_failed", "✗ tests failed")]}, heads  # before: t0 o-solved ✓ solved
    title = re.search(r"<h1>.*?</h1>", (run / "view" / "attempts" / "t0--x--1.html").read_text())
    assert title is not None and f'<span class="o-suspicious">! {WORDS}</span>' in title[0], title


def test_each_star_of_the_terminal_board_is_explained_under_it(run: Path) -> None:
    """cnt62: the terminal board marks a pass@1 resting on doubtful attempts (flagged solves, retries, twin hits,
    unscored attempts) with ``*``, and the line under it said ``x pass@1 67%: …``, without the mark it explains.
    Each starred cell now has its line, ``NAME pass@1 67%*: …`` (Markdown, HTML and the view put the label in the
    cell itself, no ``*``)."""
    text = render_text_plain(flagged_report(run))
    starred = re.findall(r"^\d+\s+(\S+)\s.*?\s(\d+%\*)\s", text, re.M)
    assert starred == [("x", "67%*")], text
    for name, cell in starred:
        assert re.search(rf"^{name} pass@1 {re.escape(cell)}: 1 solve flagged suspicious: counted solved", text,
                         re.M), text
    for doc in (render_markdown(flagged_report(run)), render_html(flagged_report(run))):
        assert "%*" not in doc and "67% (1 solve flagged suspicious: counted solved, pass@1 33% counted failed)" in \
            doc.replace("66.7%", "67%")
