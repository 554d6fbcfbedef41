"""gatk38: a decorated test's body under soft statements (contracts §7 "Soft statements").

A canary run softens every test body (twin37): a failed statement's exception is kept and the body runs on. A
decorated test's body is called by its decorator, not by pytest, and the decorator may take what the body raises as
part of its protocol: hypothesis's ``@given`` calls the body once per drawn example and passes over one whose
``assume(...)`` raised ``UnsatisfiedAssumption`` (an ``Exception``). Kept by the soft statement, that exception never
reached the decorator and failed the test at the end of its call phase, in every canary run and with any fix: a
hypothesis test using ``assume`` among the PASS_TO_PASS ids made every real fix but the reference's bytes (graded
without canaries) ``regression`` (measured with hypothesis 6.170 itself, /tmp, before this change: the softened
``@given`` test failed with ``UnsatisfiedAssumption``, the file as written passed). Now only the frame of the function
pytest calls for the test (``item.obj``) keeps a soft failure; a decorator's body raises as written.

The fixture's decorator does what ``given`` and ``assume`` do, without hypothesis (not in the test extra).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task

from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.canary_soft import SOFT, softened
from pytest_homefield.sandbox.snapshot import copy_tree
from pytest_homefield.sandbox.testrun import run_tests

SOURCE = "src/halves/__init__.py"
TEST = "tests/test_halves.py"
PARENT = "def half(x):\n    return x / 2\n"
FIXED = "def half(x):\n    return x // 2\n"

#: ``examples`` is ``given`` over a fixed list, ``Rejected`` its ``UnsatisfiedAssumption``.
HELPERS = '''

class Rejected(Exception):
    """An example the test does not take (hypothesis's UnsatisfiedAssumption)."""


def assume(cond):
    if not cond:
        raise Rejected


def examples(*xs):
    def deco(f):
        def run():
            for x in xs:
                try:
                    f(x)
                except Rejected:
                    continue
        return run
    return deco
'''
TESTS = "from halves import half\n" + HELPERS + '''

def test_int():
    assert half(5) == 2


@examples(1, 2, 3, 4)
def test_even(x):
    assume(x % 2 == 0)
    assert half(x) * 2 == x
'''

CMD = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"
FILE = "tests/test_soft.py"


def test_a_decorated_body_raises_to_its_decorator_as_written(tmp_path: Path) -> None:
    """Softened, the decorated test whose rejected examples raise passes as written, one whose body fails a taken
    example fails (the decorator lets that through); an undecorated body still runs on past its failed statement and
    fails at its site (``test_plain``'s setting put back: ``test_later`` passes). On main the first failed
    (``Rejected`` kept by the soft statement)."""
    text = "MODE = {'scale': 1}\n" + HELPERS + '''

@examples(1, 2, 3, 4)
def test_taken(x):
    assume(x % 2 == 0)
    assert x % 2 == 0


@examples(2, 4)
def test_wrong(x):
    assume(x > 1)
    assert x == 2


def test_plain():
    MODE["scale"] = 3
    assert MODE["scale"] == 2
    MODE["scale"] = 1


def test_later():
    assert MODE["scale"] == 1
'''
    soft = softened(text)
    assert soft.count(SOFT) == 8, soft
    (tmp_path / "p" / "tests").mkdir(parents=True)
    (tmp_path / "p" / FILE).write_text(soft, encoding="utf-8")
    run = run_tests(tmp_path / "p", CMD, [FILE], out_dir=tmp_path / "out", sandbox="none")
    assert run.outcomes == {f"{FILE}::test_taken": "passed", f"{FILE}::test_wrong": "failed",
                            f"{FILE}::test_plain": "failed", f"{FILE}::test_later": "passed"}, \
        run.log_path.read_text()
    assert run.stop_lines[f"{FILE}::test_plain"] == 2, run


@pytest.fixture(scope="module")
def halves(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    """The task, built once for the module: every grading copies its parent's snapshot (read only), and the
    reference fix's runs and sealed run, the same for every grading of a seed and sandbox, are made once per process,
    as in a run (``twin_grading._REFERENCE_SEEN``, ``sealed_grading._SEALED_SEEN``: keyed by that snapshot's folder)."""
    return build_fix_task(tmp_path_factory.mktemp("halves"), name="halves", source=SOURCE, parent=PARENT, fixed=FIXED,
                          test=TEST, tests=TESTS, first="halves", message="half: integer halves",
                          fail_to_pass=[f"{TEST}::test_int"], pass_to_pass=[f"{TEST}::test_even"])


def _graded(b: FixTask, tmp_path: Path, source: str, sandbox: str) -> Grade:
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(source, encoding="utf-8")
    return grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=0,
                 run_timeout_s=120, sandbox=sandbox)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_real_fix_passes_a_decorated_test_that_rejects_examples(halves: FixTask, tmp_path: Path,
                                                                    sandbox: str) -> None:
    """The commit's fix with a comment (graded with canaries, the decorated PASS_TO_PASS test in every run):
    ``solved`` (was ``regression``: ``test_even`` failed with ``Rejected`` in every canary run)."""
    if sandbox == "bwrap":
        try:
            probe()
        except BwrapUnavailable as exc:
            pytest.skip(str(exc))
    g = _graded(halves, tmp_path, FIXED.replace("def half", "# floor\ndef half"), sandbox)
    assert (g.outcome, g.failing_p2p, g.canaries) == ("solved", [], 3), g  # a twin, the two teardown canaries


@pytest.mark.slow
def test_a_fix_breaking_the_decorated_test_is_a_regression(halves: FixTask, tmp_path: Path) -> None:
    """A fix of ``half(5)`` that breaks the taken examples (``half(4) == 1``): ``regression`` as before."""
    g = _graded(halves, tmp_path, "def half(x):\n    return x // 2 if x % 2 else x // 4\n", "none")
    assert (g.outcome, g.failing_p2p) == ("regression", [f"{TEST}::test_even"]), g
