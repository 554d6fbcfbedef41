"""gatk40: an exception-swap twin inside a ``with`` body (contracts §7 "Soft statements").

An exception-swap twin turns ``pytest.raises(ValueError)`` into ``pytest.raises(AttributeError)``: a real fix raises
``ValueError`` there, which the twin's context lets through, and the twin fails. At a test function's top the ``with``
statement's soft context keeps that failure and the body runs on. Inside a ``with`` (or ``while``, ``try``) body the
statement is a *nested* soft statement, which kept an assertion's failure only (``AssertionError``, pytest's
``Failed``): the ``ValueError`` went through, the rest of the body never ran, and what it puts back (a module setting)
stayed for every test after it in the twin's run. Another group's original failed there: the commit's own fix with a
comment was ``tests_failed`` (seed 1 of :func:`test_a_real_fix_is_not_failed_for_a_swapped_raises_in_a_with`, on
main before this change). Now an exception an expecting context (``pytest.raises``, ``assertRaises``) let through,
not being the one it expected, is that context's failure, an assertion's: a nested soft statement keeps it.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.fix_task import build_fix_task

from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.canary_soft import softened
from pytest_homefield.sandbox.snapshot import copy_tree
from pytest_homefield.sandbox.testrun import run_tests

CMD = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"
FILE = "tests/test_soft.py"

#: ``test_swapped`` is a swap twin's shape: its ``raises`` meets a ``ValueError`` it does not expect, in a ``with``
#: body whose last line puts the setting back (``test_later`` relies on it). ``test_caught``: an enclosing ``except``
#: still takes what the ``raises`` let through; ``test_matched``: the expected exception is the ``raises``'s as before;
#: ``test_unittest``: ``assertRaises`` alike.
TEXT = '''import unittest
import warnings

import pytest

MODE = {"strict": False}


def boom():
    raise ValueError("negative")


def test_swapped():
    with warnings.catch_warnings():
        MODE["strict"] = True
        with pytest.raises(AttributeError):
            boom()
        MODE["strict"] = False


def test_later():
    assert MODE["strict"] is False


def test_caught():
    seen = []
    with warnings.catch_warnings():
        try:
            with pytest.raises(AttributeError):
                boom()
        except ValueError:
            seen.append(1)
    assert seen == [1]


def test_matched():
    with warnings.catch_warnings():
        MODE["strict"] = True
        with pytest.raises(ValueError):
            boom()
        MODE["strict"] = False


class TestUnit(unittest.TestCase):
    def test_unit_swapped(self):
        with warnings.catch_warnings():
            MODE["strict"] = True
            with self.assertRaises(AttributeError):
                boom()
            MODE["strict"] = False

    def test_unit_later(self):
        self.assertFalse(MODE["strict"])
'''


@pytest.mark.slow
def test_a_nested_raises_letting_another_exception_through_keeps_it_and_runs_on(tmp_path: Path) -> None:
    """Softened: the swapped tests fail at their ``raises`` line (4 from the ``def``) with the ``ValueError``, their
    bodies ran to the end (the tests after them pass); the caught and matched ones pass. On main ``test_later`` and
    ``test_unit_later`` failed (the setting left on)."""
    soft = softened(TEXT)
    (tmp_path / "p" / "tests").mkdir(parents=True)
    (tmp_path / "p" / FILE).write_text(soft, encoding="utf-8")
    run = run_tests(tmp_path / "p", CMD, [FILE], out_dir=tmp_path / "out", sandbox="none")
    unit = f"{FILE}::TestUnit"
    assert run.outcomes == {f"{FILE}::test_swapped": "failed", f"{FILE}::test_later": "passed",
                            f"{FILE}::test_caught": "passed", f"{FILE}::test_matched": "passed",
                            f"{unit}::test_unit_swapped": "failed", f"{unit}::test_unit_later": "passed"}, \
        run.log_path.read_text()
    assert (run.stop_lines[f"{FILE}::test_swapped"], run.stop_lines[f"{unit}::test_unit_swapped"]) == (4, 4), run


SOURCE = "src/modes/__init__.py"
TEST = "tests/test_modes.py"
PARENT = "MODE = {'strict': False}\n\n\ndef compute(x):\n    return x\n"
FIXED = ("MODE = {'strict': False}\n\n\ndef compute(x):\n    if x < 0 and MODE['strict']:\n"
         "        raise ValueError('negative')\n    return x if x >= 0 else 2 * x\n")
BEFORE = "from modes import compute\n\n\ndef test_plain():\n    assert compute(2) == 2\n"
#: Two groups: ``test_strict`` sets the setting inside a ``with`` and puts it back there; ``test_negative`` (after it)
#: relies on it being back.
TESTS = ("import warnings\n\nimport pytest\n\nfrom modes import MODE, compute\n\n\n"
         "def test_strict():\n    with warnings.catch_warnings():\n        MODE['strict'] = True\n"
         "        with pytest.raises(ValueError):\n            compute(-1)\n        MODE['strict'] = False\n\n\n"
         "def test_negative():\n    assert compute(-2) == -4\n\n\n"
         "def test_plain():\n    assert compute(2) == 2\n")


@pytest.mark.slow
def test_a_real_fix_is_not_failed_for_a_swapped_raises_in_a_with(tmp_path: Path) -> None:
    """The commit's fix with a comment, seed 1 (its plan swaps ``test_strict``'s ``ValueError`` for
    ``AttributeError``, run apart before ``test_negative``'s original): ``solved`` (was ``tests_failed``:
    ``test_negative`` failed with ``ValueError: negative`` after the twin left the setting on)."""
    b = build_fix_task(tmp_path / "modes", name="modes", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=TESTS, first="modes", message="compute: strict refuses negatives, doubles them",
                       fail_to_pass=[f"{TEST}::test_strict", f"{TEST}::test_negative"],
                       pass_to_pass=[f"{TEST}::test_plain"], tests_before=BEFORE)
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(FIXED.replace("def compute", "# strict refuses negatives\ndef compute"),
                               encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=1,
              run_timeout_s=120)
    assert (g.outcome, g.failing_f2p, g.canaries) == ("solved", [], 2), g
    assert "AttributeError" in (tmp_path / "out" / "canaries.json").read_text(), "no swap twin planned"
