"""The ``modes`` task of the soft-statement tests (twin37's case, ``tests/run/test_after_twin.py``), graded with a real
fix: ``src/modes`` holds a module setting ``MODE``; the commit's tests are ``test_scaled`` (FAIL_TO_PASS), which sets
it, asserts and puts it back, ``test_negative`` (FAIL_TO_PASS, run after it), which relies on it being back, and
``test_plain`` (PASS_TO_PASS). Where a test's body is not soft, a failing twin stops at its site and leaves the setting
at 3, and another group's original after it fails: a real fix is ``tests_failed`` (or ``forged``, when another
group's twin passes beside the leaked setting). Used by ``tests/run/test_soft_*.py``, each with its own shape of
``test_scaled`` (wrapped, marked, nested, in a parenthesized ``with``, named by ``python_functions``)."""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path

from helpers.fix_task import build_fix_task
from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.sandbox.canary_soft import softened
from pytest_homefield.sandbox.snapshot import copy_tree
from pytest_homefield.sandbox.testrun import run_tests

__all__ = ["BEFORE", "EXPECTING_TESTS", "FIXED", "PARENT", "REAL_FIX", "SOURCE", "TEST", "grade_modes",
           "softened_outcomes"]

SOURCE = "src/modes/__init__.py"
TEST = "tests/test_modes.py"
PARENT = "MODE = {'scale': 1}\n\n\ndef compute(x):\n    return x * MODE['scale']\n"
FIXED = ("MODE = {'scale': 1}\n\n\ndef compute(x):\n    if x < 0:\n        return -x * MODE['scale']\n"
         "    return x * MODE['scale'] + (1 if MODE['scale'] > 1 else 0)\n")
#: The test file at the parent (``test_plain`` only).
BEFORE = "from modes import compute\n\n\ndef test_plain():\n    assert compute(2) == 2\n"
#: The commit's fix with a comment: a real fix whose text is not the reference's.
REAL_FIX = FIXED.replace("def compute", "# mirrored\ndef compute")
#: The commit's tests after an ``expect`` the test file defines (``tests/run/test_soft_*_expecting.py``,
#: ``test_soft_plain_maker.py``: each its own maker of an expecting context): ``test_negative``'s ``with
#: expect(TypeError)`` body must end at the real fix's ``TypeError`` (``seen`` holds one item).
EXPECTING_TESTS = """

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
#: The command and file of :func:`softened_outcomes`.
SOFT_CMD = (f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest "
            "-p no:anyio")
CONTEXTS_FILE = "tests/test_contexts.py"


def softened_outcomes(tmp_path: Path, source: str) -> tuple[dict[str, str], str]:
    """``source`` (a test file's text) written softened (:func:`~pytest_homefield.sandbox.canary_soft.softened`) as
    :data:`CONTEXTS_FILE` of a tree under ``tmp_path`` and run alone by real pytest (``--sandbox none``): ``({test
    name: outcome}, the run's log)``."""
    (tmp_path / "p" / "tests").mkdir(parents=True)
    (tmp_path / "p" / CONTEXTS_FILE).write_text(softened(source), encoding="utf-8")
    run = run_tests(tmp_path / "p", SOFT_CMD, [CONTEXTS_FILE], out_dir=tmp_path / "out", sandbox="none")
    return {i.rsplit("::", 1)[1]: o for i, o in run.outcomes.items()}, run.log_path.read_text()


def grade_modes(tmp_path: Path, tests: str, seed: int, *, fail_to_pass: list[str] | None = None,
                pass_to_pass: list[str] | None = None, tests_before: str = BEFORE,
                beside: dict[str, str] | None = None, source: str = REAL_FIX, options: str = "") -> Grade:
    """The ``modes`` task built in ``tmp_path/modes`` with ``tests`` as the commit's :data:`TEST` (``fail_to_pass``,
    ``pass_to_pass``: its ids, by default ``test_scaled`` and ``test_negative``, and ``test_plain``; ``beside``: files
    of the parent beside the source, e.g. a pytest configuration), graded (:func:`grade`, unconfined, 120 s a run)
    with ``source`` as the agent's :data:`SOURCE` and canary seed ``seed``; ``options``: more of pytest's options, at
    the end of the task's test command (``-o python_functions=…``)."""
    b = build_fix_task(tmp_path / "modes", name="modes", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=tests, first="modes", message="compute: scaled one more, negatives mirrored",
                       fail_to_pass=fail_to_pass or [f"{TEST}::test_scaled", f"{TEST}::test_negative"],
                       pass_to_pass=pass_to_pass or [f"{TEST}::test_plain"], tests_before=tests_before,
                       parent_data=beside or None)
    task = dataclasses.replace(b.task, test_cmd=f"{b.task.test_cmd} {options}") if options else b.task
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(source, encoding="utf-8")
    return grade(task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=seed,
                 run_timeout_s=120)
