"""gatk41: a ``with`` at a test's top whose context takes the exception its body raises, named otherwise than the
softener's rule reads (contracts §7 "Soft statements", ``canary_soft._may_take``: a name holding ``raise``, or
``suppress``).

gatk40 made the body of a ``with`` expecting no exception hold top soft statements (a real fix's exception is kept and
the body runs on, so an exception-swap twin or the plain run's bare body leaves what its original leaves); which
``with`` expects one is told by its contexts' names. A repository's own expecting context (``@contextmanager def
expect(kind): try: yield / except kind: return``) is no such name: a real fix's expected ``TypeError`` at the body's
first statement is kept, the rest of the body runs (what the original never ran: here a loop's next item), and the
``TypeError`` is raised at the body's end, where ``expect`` takes it; what the rest did stays (``seen`` holds both
items), and the test fails in every canary run: the real fix ``tests_failed`` on seeds 0 and 1 (passes as given).

soft42: such a ``with``'s header hands the reporter what makes its contexts (``lambda: (expect, )``), read when an
exception that is no assertion's failure reaches a top soft statement of its body; the code of ``expect`` (a
``contextmanager`` whose ``yield`` is in a ``try`` with an ``except``) takes exceptions, so it goes on as written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import build_fix_task
from helpers.modes_task import (
    BEFORE,
    EXPECTING_TESTS,
    FIXED,
    PARENT,
    REAL_FIX,
    SOURCE,
    TEST,
    grade_modes,
    softened_outcomes,
)

from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.snapshot import copy_tree

EXPECTING = """from contextlib import contextmanager

from modes import MODE, compute


@contextmanager
def expect(kind):
    try:
        yield
    except kind:
        return
    raise AssertionError(kind.__name__ + ' not raised')
""" + EXPECTING_TESTS


@pytest.mark.slow
def test_the_real_fix_passes_without_canaries(tmp_path: Path) -> None:
    """The test as given: the real fix (``compute('a')`` raises ``TypeError``) passes it, ungraded by canaries."""
    b = build_fix_task(tmp_path / "modes", name="modes", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=EXPECTING, first="modes", message="compute: scaled one more, negatives mirrored",
                       fail_to_pass=[f"{TEST}::test_scaled", f"{TEST}::test_negative"],
                       pass_to_pass=[f"{TEST}::test_plain"], tests_before=BEFORE)
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(REAL_FIX, encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canaries=False,
              run_timeout_s=120)
    assert g.outcome == "solved", g


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_body_a_custom_context_expects_to_raise_stops_there(tmp_path: Path, seed: int) -> None:
    """soft42: ``solved`` on seeds 0 and 1 (a strict xfail before, gatk41: ``tests_failed``): the reporter reads the
    code of what made the ``with``'s context (``expect``, a ``contextmanager`` whose ``yield`` is in a ``try`` with an
    ``except``), which takes exceptions, and the fix's ``TypeError`` goes to it at its statement, as written."""
    g = grade_modes(tmp_path, EXPECTING, seed)
    assert g.outcome == "solved", g


#: soft42: which contexts take a top soft statement's exception (no assertion's failure) is read from their code:
#: ``expect`` (a ``contextmanager`` catching at its ``yield``) and ``Absorb`` (an ``__exit__`` returning ``True``) end
#: their bodies at it, as written; ``keep`` (a ``try``/``finally`` only) and ``warnings.catch_warnings`` (an
#: ``__exit__`` returning nothing) do not take it: kept there, the body runs on and puts the setting back.
CONTEXTS = '''import warnings
from contextlib import contextmanager

LOG = []


@contextmanager
def expect(kind):
    try:
        yield
    except kind:
        return
    raise AssertionError("not raised")


class Absorb:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True


@contextmanager
def keep():
    try:
        yield
    finally:
        LOG.append("kept")


def boom():
    raise TypeError("fixed")


def test_expect():
    with expect(TypeError):
        boom()
        LOG.append("after expect")


def test_absorb():
    absorb = Absorb()
    with absorb:
        boom()
        LOG.append("after absorb")


def test_keep():
    with keep():
        LOG.append("on")
        boom()
        LOG.append("off")


def test_warnings():
    with warnings.catch_warnings():
        LOG.append("on")
        boom()
        LOG.append("off")


def test_log():
    assert LOG == ["on", "off", "kept", "on", "off"]
'''


def test_a_context_taking_exceptions_is_told_by_its_code(tmp_path: Path) -> None:
    """Softened: ``test_expect`` and ``test_absorb`` pass with nothing after the exception run (before soft42 both
    ran on, ``test_log`` failed), ``test_keep`` and ``test_warnings`` fail at their ``boom()`` with their bodies run
    to the end."""
    got, log = softened_outcomes(tmp_path, CONTEXTS)
    outcomes = {"test_expect": "passed", "test_absorb": "passed", "test_keep": "failed", "test_warnings": "failed",
                "test_log": "passed"}
    assert got == outcomes, log


#: soft42 left it (a strict xfail), gatk43 closed it: ``pytest.raises`` under a name holding no ``raise`` is a plain
#: function returning a context, whose code ``_takes`` does not read; it is now read as taking by being
#: ``pytest.raises`` (one of the expecting functions whose contexts the reporter watches), whatever the test names it.
ALIASED = '''from pytest import raises as expect_error

LOG = []


def boom():
    raise TypeError("fixed")


def test_aliased():
    with expect_error(TypeError):
        boom()
        LOG.append("after")


def test_log():
    assert LOG == []
'''


def test_an_aliased_raises_ends_its_body_at_what_it_takes(tmp_path: Path) -> None:
    """gatk43: ``expect_error`` is ``pytest.raises``: the body ends at the ``TypeError`` it takes (before, a strict
    xfail: it ran on, ``LOG`` held ``"after"`` and ``test_log`` failed)."""
    got, log = softened_outcomes(tmp_path, ALIASED)
    assert got == {"test_aliased": "passed", "test_log": "passed"}, log
