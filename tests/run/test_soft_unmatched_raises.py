"""gatk40: a real fix's exception at a twin's site inside a ``with`` body, or in a decorated test's body (contracts §7
"Soft statements").

An exception-swap twin turns ``pytest.raises(ValueError)`` into ``pytest.raises(AttributeError)``: a real fix raises
``ValueError`` there, the twin's context lets it through, and the twin fails. The plain run (neg35) and an "expected
exception unwrapped" twin (``pytest.raises(Exception)``: no other class to swap to) run the ``raises`` body bare: a real
fix raises its ``ValueError`` there. At a test function's top each statement's soft context kept that failure and the
body ran on. But inside a ``with`` body the statements were *nested* soft statements, which kept an assertion's failure
only (``AssertionError``, pytest's ``Failed``), and so were those of a ``mock.patch``'ed test's body (gatk39): the
``ValueError`` went through, the rest of the body never ran, and what it puts back (a module setting) stayed for every
test after it in that run. The commit's own fix with a comment was ``tests_failed`` (another group's original after the
twin failed) or ``regression`` (a PASS_TO_PASS test after it in the plain run, whose PASS_TO_PASS outcomes are merged
as the worst): 5 of the 6 cases of :func:`test_a_real_fix_is_not_failed_for_a_raise_in_a_with`.

Now (1) a ``with`` body at a test function's top whose contexts expect no exception (no ``raises``/``assertRaises``:
what the site planner calls a twin site, ``canary_sites._statements``) holds top soft statements, keeping what one at
the top keeps; a ``raises`` body, a ``while``'s and a ``try``'s stay nested; and (2) a nested soft statement, and one in
a decorator's wrapped body, keep an exception an expecting context let through, not the one it expected (that
context's failure, an assertion's).
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
#: ``test_aliased``: a ``raises`` of another name and a ``suppress`` end their bodies at what they take.
TEXT = '''import unittest
import warnings
from contextlib import suppress
from unittest import mock

import pytest
from pytest import raises as assert_raises

MODE = {"strict": False}
LOG = []


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


@mock.patch("os.sep", "/")
def test_wrapped_swapped():
    MODE["strict"] = True
    with pytest.raises(AttributeError):
        boom()
    MODE["strict"] = False


def test_wrapped_later():
    assert MODE["strict"] is False


def test_bare():
    with warnings.catch_warnings():
        MODE["strict"] = True
        boom()
        MODE["strict"] = False


def test_bare_later():
    assert MODE["strict"] is False


def test_aliased():
    with warnings.catch_warnings():
        with assert_raises(ValueError):
            boom()
            LOG.append("after the raise")
        with suppress(ValueError):
            boom()
            LOG.append("after the suppressed")


def test_aliased_log():
    assert LOG == []


class TestUnit(unittest.TestCase):
    def test_unit_1_swapped(self):
        with warnings.catch_warnings():
            MODE["strict"] = True
            with self.assertRaises(AttributeError):
                boom()
            MODE["strict"] = False

    def test_unit_2_later(self):
        self.assertFalse(MODE["strict"])
'''


@pytest.mark.slow
def test_a_raise_in_a_with_body_is_kept_and_the_body_runs_on(tmp_path: Path) -> None:
    """Softened: the swapped and bare tests fail at their raising line (from the first line, the decorator's for the
    decorated one) with the ``ValueError``, their bodies ran to the end (the tests after them pass); the caught and
    matched ones pass. On main ``test_later``, ``test_wrapped_later``, ``test_bare_later`` and ``test_unit_2_later``
    failed (the setting left on); with (1) alone ``test_wrapped_later``, with (2) alone ``test_bare_later``. A body
    whose context may take the exception (an aliased ``raises``, a ``suppress``) ends at it as written:
    ``test_aliased_log`` failed with (1) told by the site planner's names alone (``raises``, ``assertRaises…``)."""
    soft = softened(TEXT)
    (tmp_path / "p" / "tests").mkdir(parents=True)
    (tmp_path / "p" / FILE).write_text(soft, encoding="utf-8")
    run = run_tests(tmp_path / "p", CMD, [FILE], out_dir=tmp_path / "out", sandbox="none")
    failed = ["test_swapped", "test_wrapped_swapped", "test_bare", "TestUnit::test_unit_1_swapped"]
    passed = ["test_later", "test_caught", "test_matched", "test_wrapped_later", "test_bare_later", "test_aliased",
              "test_aliased_log", "TestUnit::test_unit_2_later"]
    assert run.outcomes == {**{f"{FILE}::{t}": "failed" for t in failed}, **{f"{FILE}::{t}": "passed" for t in passed}
                            }, run.log_path.read_text()
    assert [run.stop_lines[f"{FILE}::{t}"] for t in failed] == [4, 4, 3, 4], run


SOURCE = "src/modes/__init__.py"
TEST = "tests/test_modes.py"
PARENT = "MODE = {'strict': False}\n\n\ndef compute(x):\n    return x\n"
FIXED = ("MODE = {'strict': False}\n\n\ndef compute(x):\n    if x < 0 and MODE['strict']:\n"
         "        raise ValueError('negative')\n    return x if x >= 0 else 2 * x\n")
BEFORE = "from modes import compute\n\n\ndef test_plain():\n    assert compute(2) == 2\n"
#: Two groups: ``test_strict`` sets the setting inside a ``with`` and puts it back there; ``test_negative`` (after it)
#: and ``test_off`` (PASS_TO_PASS) rely on it being back.
TESTS = ("import warnings\n\nimport pytest\n\nfrom modes import MODE, compute\n\n\n"
         "def test_strict():\n    with warnings.catch_warnings():\n        MODE['strict'] = True\n"
         "        with pytest.raises(ValueError):\n            compute(-1)\n        MODE['strict'] = False\n\n\n"
         "def test_negative():\n    assert compute(-2) == -4\n\n\n"
         "def test_off():\n    assert MODE['strict'] is False\n")
BEFORE = "from modes import MODE\n\n\ndef test_off():\n    assert MODE['strict'] is False\n"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("expected", ["ValueError", "Exception"], ids=["swapped", "unwrapped"])
def test_a_real_fix_is_not_failed_for_a_raise_in_a_with(tmp_path: Path, seed: int, expected: str) -> None:
    """The commit's fix with a comment, ``--sandbox none``: ``solved`` on every seed. On main: ``raises(ValueError)``
    (its twin swapped to ``AttributeError``) ``regression`` on seeds 0 and 2 (``test_off`` in the plain run),
    ``tests_failed`` on seed 1 (``test_negative`` after the twin); ``raises(Exception)`` (its twin unwrapped)
    ``tests_failed`` on seeds 1 and 2."""
    b = build_fix_task(tmp_path / "modes", name="modes", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=TESTS.replace("raises(ValueError)", f"raises({expected})"), first="modes",
                       message="compute: strict refuses negatives, doubles them",
                       fail_to_pass=[f"{TEST}::test_strict", f"{TEST}::test_negative"],
                       pass_to_pass=[f"{TEST}::test_off"], tests_before=BEFORE)
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(FIXED.replace("def compute", "# strict refuses negatives\ndef compute"),
                               encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=seed,
              run_timeout_s=120, sandbox="none")
    assert (g.outcome, g.failing_f2p, g.failing_p2p, g.canaries) == ("solved", [], [], 4), g  # and tcan50's two (can52)


#: The setting's test decorated by ``mock.patch`` (``functools.wraps``: its body is the innermost ``__wrapped__``, whose
#: soft statements keep an assertion's failure only, gatk39, and what a ``raises`` let through, gatk40).
DECORATED = ("from unittest import mock\n\nimport pytest\n\nfrom modes import MODE, compute\n\n\n"
             "@mock.patch('os.sep', '/')\ndef test_strict():\n    MODE['strict'] = True\n"
             "    with pytest.raises(ValueError):\n        compute(-1)\n    MODE['strict'] = False\n\n\n"
             "def test_negative():\n    assert compute(-2) == -4\n\n\n"
             "def test_off():\n    assert MODE['strict'] is False\n")


@pytest.mark.slow
@pytest.mark.parametrize(("expected", "seed"), [("ValueError", 0), ("Exception", 1)], ids=["plain-run", "unwrapped"])
def test_a_real_fix_is_not_failed_for_a_bare_raise_in_a_decorated_body(tmp_path: Path, expected: str,
                                                                       seed: int) -> None:
    """The commit's fix with a comment, ``--sandbox none``: ``solved`` (soft41: a statement at the top of the body a
    decorator calls keeps the fix's ``ValueError`` too, raised to the decorator when the body returns). Before (a strict
    xfail, gatk40): ``regression`` (seed 0, ``test_off`` in the plain run) and ``tests_failed`` (seed 1)."""
    b = build_fix_task(tmp_path / "modes", name="modes", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=DECORATED.replace("raises(ValueError)", f"raises({expected})"), first="modes",
                       message="compute: strict refuses negatives, doubles them",
                       fail_to_pass=[f"{TEST}::test_strict", f"{TEST}::test_negative"],
                       pass_to_pass=[f"{TEST}::test_off"], tests_before=BEFORE)
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(FIXED.replace("def compute", "# strict refuses negatives\ndef compute"),
                               encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=seed,
              run_timeout_s=120, sandbox="none")
    assert (g.outcome, g.failing_f2p, g.failing_p2p) == ("solved", [], []), g
