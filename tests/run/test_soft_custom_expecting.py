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
Left: a context's ``__exit__`` is what tells whether it takes an exception, and it runs only at the body's end; a
list of more names is no fix by construction.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import build_fix_task
from helpers.modes_task import BEFORE, FIXED, PARENT, REAL_FIX, SOURCE, TEST, grade_modes

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


def test_scaled():
    MODE['scale'] = 3
    assert compute(2) == 7
    MODE['scale'] = 1


def test_negative():
    seen = []
    with expect(TypeError):
        for value in ('a', 'b'):
            seen.append(value)
            compute(value)
    assert seen == ['a']
    assert compute(-2) == 2


def test_plain():
    assert compute(2) == 2
"""


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
@pytest.mark.xfail(strict=True, reason="gatk41: a with whose own context (named without 'raise') takes the body's "
                   "exception holds top soft statements: the rest of the body runs, a real fix tests_failed")
def test_a_body_a_custom_context_expects_to_raise_stops_there(tmp_path: Path) -> None:
    g = grade_modes(tmp_path, EXPECTING, 1)
    assert g.outcome == "solved", g
