"""soft40: a ``functools.wraps`` decorator that itself catches an ``AssertionError`` (a retry wrapper) under soft
statements (contracts §7).

The body a ``functools.wraps`` decorator wraps keeps an assertion's failure and runs on (gatk39: ``mock.patch``'s body
must put back what it set); a retry wrapper (``for _ in range(3): try: return f() except AssertionError: …``) then
never sees the failure: it does not call the body again, and the call phase fails with the first attempt's failure.
A test whose first attempt fails and whose retry passes (a cold cache, a warm-up) passed as given and failed in every
canary run, with any fix: a real fix ``forged`` (seed 0) and ``tests_failed`` (seed 1). Now the kept failure is raised
when the body returns (the reporter's ``_at_return``), so the decorator meets it after the rest of the body ran.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.modes_task import TEST, grade_modes

RETRIED = """import functools

from modes import MODE, compute

TRIES = []


def retried(f):
    @functools.wraps(f)
    def run(*a, **k):
        for attempt in range(3):
            try:
                return f(*a, **k)
            except AssertionError:
                if attempt == 2:
                    raise
    return run


@retried
def test_scaled():
    TRIES.append(1)
    assert len(TRIES) > 1
    MODE['scale'] = 3
    assert compute(2) == 7
    MODE['scale'] = 1


def test_negative():
    assert compute(-2) == 2


def test_plain():
    assert compute(2) == 2
"""


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_of_a_retried_test_is_solved(tmp_path: Path, seed: int) -> None:
    """soft40: ``test_scaled``'s first attempt fails (``len(TRIES) > 1``), its retry passes: a real fix is ``solved``
    (before: ``forged`` on seed 0, ``tests_failed`` on seed 1)."""
    g = grade_modes(tmp_path, RETRIED, seed, fail_to_pass=[f"{TEST}::test_scaled", f"{TEST}::test_negative"])
    assert g.outcome == "solved", g


WRAPPERS = '''import functools
import warnings

import pytest

MODE = {"scale": 1}
TRIES = {"warm": 0, "always": 0, "returns": 0}


def retried(f):
    @functools.wraps(f)
    def run(*a, **k):
        for attempt in range(3):
            try:
                return f(*a, **k)
            except AssertionError:
                if attempt == 2:
                    raise
    return run


def known_bug(f):
    @functools.wraps(f)
    def run(*a, **k):
        try:
            f(*a, **k)
        except AssertionError:
            pytest.xfail("known bug")
    return run


@retried
def test_warm():
    TRIES["warm"] += 1
    assert TRIES["warm"] > 1
    MODE["scale"] = 1


@retried
def test_returns():
    TRIES["returns"] += 1
    with warnings.catch_warnings():
        assert TRIES["returns"] > 1
        return


@retried
def test_always():
    TRIES["always"] += 1
    MODE["scale"] = 3
    assert MODE["scale"] == 2
    MODE["scale"] = 1


@known_bug
def test_known():
    MODE["scale"] = 3
    assert MODE["scale"] == 2
    MODE["scale"] = 1


def test_later():
    assert MODE["scale"] == 1
    assert TRIES == {"warm": 2, "always": 3, "returns": 2}
'''
FILE = "tests/test_soft.py"


@pytest.mark.slow  # a test process: some 1.5 s of CPU
def test_a_decorator_meets_its_bodys_failure_when_the_body_returns(tmp_path: Path) -> None:
    """soft40, softened: the failure a wrapped body's statement kept is raised when the body returns, so a retry
    wrapper calls it again (``test_warm`` passes on its second attempt, as given; before, it failed: the wrapper met
    no failure and the call phase failed with the first attempt's; so does ``test_returns``, whose ``with`` body a
    ``return`` leaves) and a wrapper turning a failure into an ``xfail``
    does so (``test_known``); each body ran to its end (the setting is back for ``test_later``), and a test failing
    on every attempt fails at its site's line."""
    import shlex
    import sys

    from pytest_homefield.sandbox.canary_soft import softened
    from pytest_homefield.sandbox.testrun import run_tests

    (tmp_path / "p" / "tests").mkdir(parents=True)
    (tmp_path / "p" / FILE).write_text(softened(WRAPPERS), encoding="utf-8")
    cmd = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"
    run = run_tests(tmp_path / "p", cmd, [FILE], out_dir=tmp_path / "out", sandbox="none")
    assert run.outcomes == {f"{FILE}::test_warm": "passed", f"{FILE}::test_returns": "passed",
                            f"{FILE}::test_always": "failed",
                            f"{FILE}::test_known": "xfailed", f"{FILE}::test_later": "passed"}, run.log_path.read_text()
    assert run.stop_lines[f"{FILE}::test_always"] == 4, run  # from the decorator: 0
    assert run.stop_operands[f"{FILE}::test_always"] == ("==", "3", "2"), run
