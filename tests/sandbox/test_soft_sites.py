"""Soft statements (twin37, contracts §7): a canary run's test body runs to its end after a failed statement and fails
there with the first failure, at that statement's line, whatever the rest of the body does."""

from __future__ import annotations

import importlib
import shlex
import sys
from pathlib import Path

import pytest

from pytest_homefield.sandbox.canary_soft import SOFT, softened
from pytest_homefield.sandbox.testrun import REPORTER_DIR, TestRun, run_tests

CMD = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"

#: Each test sets the module's setting, fails a comparison (a twin's contradicted site, line 2 of its function), runs
#: what a forger could put after it, then puts the setting back; ``test_later`` relies on it being back.
TESTS = '''import sys

import pytest

MODE = {"scale": 1}


def test_reset():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1


def test_raises_after():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1
    raise RuntimeError("a forger raising after the site")


def test_skips_after():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1
    pytest.skip("a forger skipping after the site")


def test_xfails_after():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1
    pytest.xfail("a forger marking it xfail after the site")


def test_exits_after():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1
    sys.exit(0)


def test_later_assert_fails_too():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1
    assert MODE["scale"] == 5


def test_not_raised():
    MODE["scale"] = 3
    with pytest.raises(ValueError):
        int("3")
    MODE["scale"] = 1


def test_then_fails_in_try():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1
    try:
        assert MODE["scale"] == 9
    finally:
        pass


def test_in_loop():
    for n in (1, 2, 3):
        MODE["scale"] = n
        assert n != 2
    MODE["scale"] = 1


def test_skipped_first():
    pytest.skip("skipped before anything failed")


def test_later():
    assert MODE["scale"] == 1


def test_passes():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 6
    MODE["scale"] = 1
'''

FILE = "tests/test_soft.py"


def _run(tmp_path: Path, text: str, extra: str = "") -> TestRun:
    (tmp_path / "p" / "tests").mkdir(parents=True)
    (tmp_path / "p" / FILE).write_text(text, encoding="utf-8")
    return run_tests(tmp_path / "p", CMD + extra, [FILE], out_dir=tmp_path / "out", sandbox="none")


def test_softened_keeps_every_line_and_softens_every_test_body_alike() -> None:
    """Every line stays where it was; the soft statements are those of test functions' bodies (under ``if``/``for``
    too), never one inside a ``try``, ``with`` or ``while``, a fixture's, a helper's, a ``unittest.TestCase``'s, a
    docstring, one sharing its line, a ``with`` whose header is parenthesized."""
    text = ('import unittest\n\nimport pytest\n\n\n@pytest.fixture\ndef test_data():\n    x = 1\n    return x\n\n\n'
            'def helper():\n    assert 1\n\n\n'
            'def test_a(test_data):\n    """Doc."""\n    x = test_data\n    x += 1\n    y: int = 2\n'
            '    assert (x ==\n            2)\n    print(x); print(y)\n'
            '    if x:\n        helper()\n    for i in range(2):\n        assert i < 2  # a comment\n'
            '    try:\n        assert x\n    finally:\n        pass\n'
            '    with pytest.raises(ValueError) as e:\n        int("x")\n'
            '    with (open(__file__)) as f:\n        f.read()\n    while x:\n        x = 0\n'
            '\n\nclass TestPlain:\n    def test_m(self):\n        assert 1\n\n\n'
            'class TestUnit(unittest.TestCase):\n    def test_u(self):\n        self.assertEqual(1, 1)\n')
    out = softened(text)
    assert out.count("\n") == text.count("\n")
    soft = [n for n, line in enumerate(out.splitlines(), 1) if SOFT in line]
    assert soft == [18, 19, 20, 21, 25, 27, 32, 42], out
    assert "    with " + SOFT + ", pytest.raises(ValueError) as e:\n" in out
    assert "        with " + SOFT + ": assert i < 2  # a comment\n" in out
    assert softened(out.replace("def ", "def (")) == out.replace("def ", "def (")  # what does not parse: as it is
    compile(out, "t.py", "exec")


@pytest.mark.parametrize("xdist", [False, True])
def test_a_soft_failure_runs_the_body_to_its_end_and_fails_there_at_its_site(tmp_path: Path, xdist: bool) -> None:
    """The first failure is what the test reports, at its line (2: the comparison) with its operands, whatever came
    after it (a raise, a skip, an ``xfail``, ``sys.exit``, another failed assertion, a failure inside a ``try``);
    the line putting the setting back ran each time, so ``test_later`` passes (on main, without soft statements, it
    failed: the setting left at 3). A ``raises`` that took nothing fails at its ``with``; a loop's first failed row
    is what a loop reports; a test that passes passes, one skipped before any failure is skipped."""
    if xdist:
        pytest.importorskip("xdist")
    run = _run(tmp_path, softened(TESTS), " -n 1" if xdist else "")
    ids = {n: f"{FILE}::test_{n}" for n in ("reset", "raises_after", "skips_after", "xfails_after", "exits_after",
                                             "later_assert_fails_too", "then_fails_in_try", "not_raised", "in_loop",
                                             "skipped_first", "passes", "later")}
    assert run.outcomes == {**{i: "failed" for i in ids.values()}, ids["skipped_first"]: "skipped",
                            ids["passes"]: "passed", ids["later"]: "passed"}, run.log_path.read_text()
    site = {n for n in ids if n not in ("skipped_first", "passes", "later", "in_loop")}
    assert run.stop_lines == {**{ids[n]: 2 for n in site}, ids["in_loop"]: 3}, run
    assert run.stop_operands == {**{ids[n]: ("==", "6", "7") for n in site if n != "not_raised"},
                                 ids["in_loop"]: ("!=", "2", "2")}, run


def test_without_soft_statements_the_left_setting_fails_a_later_test(tmp_path: Path) -> None:
    """The same file as given (no soft statement): every test stops at its site, and ``test_later`` fails on the
    setting they left (what a failing twin did to the tests after it)."""
    run = _run(tmp_path, TESTS)
    assert run.outcomes[f"{FILE}::test_later"] == "failed", run
    assert run.stop_lines[f"{FILE}::test_reset"] == 2


def test_a_soft_statement_outside_a_call_phase_of_the_reporter_changes_nothing() -> None:
    """Where the reporter is imported but no call phase of its hook runs (not loaded as a plugin, or in a fixture),
    a soft statement's failure goes through as without it: never a failure swallowed."""
    sys.path.insert(0, str(REPORTER_DIR))
    try:
        reporter = importlib.import_module("homefield_reporter")
    finally:
        sys.path.remove(str(REPORTER_DIR))
    with pytest.raises(ValueError), reporter.soft():
        raise ValueError("goes through")
    assert not reporter._soft_first


def test_every_target_file_of_a_canary_run_is_softened_alike(tmp_path: Path) -> None:
    """A canary run's copy holds every test file it targets softened, a group's (the run's files) or not, so a soft
    statement tells no group's file; a link at a target is not followed (written as the copy has it); the sealed
    run's copy (``soft=False``) holds its files as they are."""
    from pytest_homefield.run.twin_grading import _fresh_copies

    gdir = tmp_path / "g"
    (gdir / "tests").mkdir(parents=True)
    body = "def test_x():\n    assert 1 == 1\n"
    (gdir / "tests" / "test_other.py").write_text(body, encoding="utf-8")
    (tmp_path / "outside.py").write_text(body, encoding="utf-8")
    (gdir / "tests" / "test_link.py").symlink_to(tmp_path / "outside.py")
    targets = ["tests/test_group.py::test_x", "tests/test_other.py", "tests/test_link.py"]
    run = {"tests/test_group.py": body.encode()}
    soft_copy, = _fresh_copies(gdir, tmp_path, [run], targets=targets)
    assert (soft_copy / "tests" / "test_group.py").read_text() == softened(body) != body
    assert (soft_copy / "tests" / "test_other.py").read_text() == softened(body)
    assert (soft_copy / "tests" / "test_link.py").is_symlink() and (tmp_path / "outside.py").read_text() == body
    sealed, = _fresh_copies(gdir, tmp_path, [run], targets=targets, soft=False)
    assert (sealed / "tests" / "test_group.py").read_text() == body
    assert (sealed / "tests" / "test_other.py").read_text() == body
