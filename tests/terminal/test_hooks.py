"""terminal/hooks.py's :class:`InertReasons`: a homefield item's skip or xfail reason reaches pytest's
terminal summary, ``-v`` line and JUnit XML as one line without control characters (host29)."""

from __future__ import annotations

import json

import pytest

from pytest_homefield.terminal.hooks import InertReasons, ProgressHooks

PLAYED = "tests_failed (Fix\x1b[2J\x1b[H\x1b[32mall 8 solved\r\u202e)"


def report(when: str, outcome: str, longrepr: object, keywords: dict[str, int]) -> pytest.TestReport:
    return pytest.TestReport("t.jsonl::a::b[1]", ("t.jsonl", None, "b[1]"), keywords, outcome, longrepr,  # type: ignore[arg-type]
                             when)


def test_xfail_and_skip_reasons_of_homefield_items_are_one_inert_line() -> None:
    xfail = report("call", "skipped", None, {"homefield": 1})
    xfail.wasxfail = "unsolved: " + PLAYED  # type: ignore[attr-defined]
    skip = report("setup", "skipped", ("t.jsonl", 1, "Skipped: rate limited: " + PLAYED), {"homefield": 1})
    hooks = InertReasons()
    hooks.pytest_runtest_logreport(xfail)
    hooks.pytest_runtest_logreport(skip)
    shown = "Fix\\x1b[2J\\x1b[H\\x1b[32mall 8 solved \\u202e)"
    assert xfail.wasxfail == "unsolved: tests_failed (" + shown  # type: ignore[attr-defined]
    assert skip.longrepr == ("t.jsonl", 1, "Skipped: rate limited: tests_failed (" + shown)


def test_other_items_are_left_alone() -> None:
    other = report("setup", "skipped", ("x.py", 1, "Skipped: \x1b[1mbold"), {})
    InertReasons().pytest_runtest_logreport(other)
    assert other.longrepr == ("x.py", 1, "Skipped: \x1b[1mbold")


def _attempt_reports(nodeid: str, outcome: str, *, suspicious: bool) -> list[pytest.TestReport]:
    """The setup, call and teardown reports of a run's attempt item, as ``RunItem`` makes them: its result record
    in ``homefield.result``; a solve flagged ``suspicious`` (and any unsolved attempt) is an xfail."""
    record = {"run_id": "r", "task_id": "t", "agent": "a", "attempt": 1, "outcome": outcome,
              "suspicious": suspicious}
    props = [("homefield.outcome", outcome), ("homefield.result", json.dumps(record))]
    out = []
    for when in ("setup", "call", "teardown"):
        xfail = when == "call" and (outcome != "solved" or suspicious)
        r = pytest.TestReport(nodeid, ("t.jsonl", None, nodeid), {"homefield": 1},  # type: ignore[arg-type]
                              "skipped" if xfail else "passed", None, when, user_properties=props)
        if xfail:
            r.wasxfail = "unsolved: suspicious (solved, flagged: pytest hooks)"  # type: ignore[attr-defined]
        out.append(r)
    return out


def test_the_progress_line_counts_a_flagged_solve_solved_as_the_report_does(pytestconfig: pytest.Config) -> None:
    """cnt62: the attempt item of a solve flagged ``suspicious`` is an xfail (a pass/fail line takes it as failed,
    contracts §10), and the progress line counted it ``unsolved`` while the report counts it solved: ``run 3/3 ·
    solved 1 · unsolved 2`` for a report of 2 solved. It now says what the report will (``records.counts_solved``),
    the flagged ones beside it."""
    hooks = ProgressHooks(pytestconfig, "run", label_for=str, subject_for=lambda nodeid: "", clock=lambda: 1000.0)
    hooks.progress.set_total(3)
    for nodeid, outcome, suspicious in (("t::a[1]", "solved", True), ("t::a[2]", "solved", False),
                                        ("t::a[3]", "tests_failed", True)):
        hooks.progress.start(nodeid, nodeid)
        for r in _attempt_reports(nodeid, outcome, suspicious=suspicious):
            hooks.pytest_runtest_logreport_count(r)
        hooks.pytest_runtest_logfinish(nodeid, None)
    assert hooks.progress.line().startswith("run 3/3 · solved 2 (1 flagged) · unsolved 1 · ")
