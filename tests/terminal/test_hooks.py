"""terminal/hooks.py's :class:`InertReasons`: a homefield item's skip or xfail reason reaches pytest's
terminal summary, ``-v`` line and JUnit XML as one line without control characters (host29)."""

from __future__ import annotations

import pytest

from pytest_homefield.terminal.hooks import InertReasons

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
