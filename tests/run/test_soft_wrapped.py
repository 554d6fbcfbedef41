"""gatk39: a test wrapped by a decorator (``functools.wraps``, ``mock.patch``) under soft statements (contracts §7).

gatk38 kept a soft failure only in the frame of the function pytest calls for the test (``item.obj``): a decorated
test's body raises to its decorator as written. But ``mock.patch``, ``freezegun.freeze_time`` and any
``functools.wraps`` wrapper make ``item.obj`` the wrapper: the test's own body was no longer soft at all, and a failing
twin there stopped at its site again, leaving what the rest of its body puts back (twin37's very case,
``tests/run/test_after_twin.py``): another group's original after it failed, and a real fix was ``tests_failed``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.modes_task import REAL_FIX, TEST, grade_modes

from pytest_homefield.run.grading import Grade

#: ``test_scaled`` sets the setting, asserts and puts it back; ``test_negative`` (run after it) relies on it.
WRAPPERS = {
    "wraps": ("import functools\n\n\ndef logged(f):\n    @functools.wraps(f)\n    def run(*a, **k):\n"
              "        return f(*a, **k)\n    return run\n\n\n", "@logged\n"),
    "mock": ("from unittest import mock\n\n\n", "@mock.patch('os.sep', '/')\n"),
}
BODY = ("from modes import MODE, compute\n\n\n{deco}def test_scaled():\n    MODE['scale'] = 3\n"
        "    assert compute(2) == 7\n    MODE['scale'] = 1\n\n\ndef test_negative():\n    assert compute(-2) == 2\n\n\n"
        "def test_plain():\n    assert compute(2) == 2\n")


def _graded(tmp_path: Path, wrapper: str, source: str, seed: int) -> Grade:
    head, deco = WRAPPERS[wrapper]
    return grade_modes(tmp_path, head + BODY.format(deco=deco), seed, source=source)


@pytest.mark.slow
@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_a_real_fix_is_not_failed_for_what_a_wrapped_twin_left(tmp_path: Path, wrapper: str) -> None:
    g = _graded(tmp_path, wrapper, REAL_FIX, 0)
    assert g.outcome == "solved", g


#: ``retried`` calls the body again while it raises ``Rejected`` (as hypothesis's ``given`` passes over an example whose
#: ``assume`` failed), a wrapper made with ``functools.wraps`` (a ``__wrapped__``).
HELPERS = '''import functools

MODE = {'scale': 1}


class Rejected(Exception):
    """An example the test does not take (hypothesis's UnsatisfiedAssumption)."""


def assume(cond):
    if not cond:
        raise Rejected


def retried(f):
    @functools.wraps(f)
    def run():
        for _ in range(3):
            try:
                return f()
            except Rejected:
                continue
    return run


def logged(f):
    @functools.wraps(f)
    def run(*a, **k):
        return f(*a, **k)
    return run
'''
FILE = "tests/test_soft.py"


@pytest.mark.slow  # a test process: some 1.5 s of CPU
def test_a_wrapped_body_keeps_only_an_assertions_failure(tmp_path: Path) -> None:
    """Softened: a wrapped body's failed assertion is kept and the body runs on (``test_wrapped`` puts the setting
    back, ``test_later`` passes; on main it stopped there and ``test_later`` failed), failing at its line; what else
    a wrapped body raises goes to the wrapper as written (``test_taken``'s first call, rejected: passed)."""
    import shlex
    import sys

    from pytest_homefield.sandbox.canary_soft import softened
    from pytest_homefield.sandbox.testrun import run_tests

    text = HELPERS + '''

TRIES = []


@retried
def test_taken():
    TRIES.append(1)
    assume(len(TRIES) == 2)
    assert len(TRIES) == 2


@logged
def test_wrapped():
    MODE["scale"] = 3
    assert MODE["scale"] == 2
    MODE["scale"] = 1


def test_later():
    assert MODE["scale"] == 1
'''
    (tmp_path / "p" / "tests").mkdir(parents=True)
    (tmp_path / "p" / FILE).write_text(softened(text), encoding="utf-8")
    cmd = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"
    run = run_tests(tmp_path / "p", cmd, [FILE], out_dir=tmp_path / "out", sandbox="none")
    assert run.outcomes == {f"{FILE}::test_taken": "passed", f"{FILE}::test_wrapped": "failed",
                            f"{FILE}::test_later": "passed"}, run.log_path.read_text()
    assert run.stop_lines[f"{FILE}::test_wrapped"] == 3, run  # from the decorator: 0


#: The same groups as ``unittest`` methods (run in name order), the setting's test patched by ``mock.patch``.
UNIT_TESTS = ("import unittest\nfrom unittest import mock\n\nfrom modes import MODE, compute\n\n\n"
              "class TestModes(unittest.TestCase):\n    @mock.patch('os.sep', '/')\n"
              "    def test_1_scaled(self):\n        MODE['scale'] = 3\n        self.assertEqual(compute(2), 7)\n"
              "        MODE['scale'] = 1\n\n    def test_2_negative(self):\n"
              "        self.assertEqual(compute(-2), 2)\n\n"
              "    def test_3_plain(self):\n        self.assertEqual(compute(2), 2)\n")
UNIT = f"{TEST}::TestModes"
UNIT_BEFORE = ("import unittest\n\nfrom modes import compute\n\n\nclass TestModes(unittest.TestCase):\n"
               "    def test_3_plain(self):\n        self.assertEqual(compute(2), 2)\n")


@pytest.mark.slow
def test_a_real_fix_is_not_failed_for_what_a_patched_unittest_twin_left(tmp_path: Path) -> None:
    """A ``unittest`` method patched by ``mock.patch`` (``item.obj`` a bound method of the wrapper): ``solved``."""
    g = grade_modes(tmp_path, UNIT_TESTS, 0, fail_to_pass=[f"{UNIT}::test_1_scaled", f"{UNIT}::test_2_negative"],
                    pass_to_pass=[f"{UNIT}::test_3_plain"], tests_before=UNIT_BEFORE)
    assert g.outcome == "solved", g
