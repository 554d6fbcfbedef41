"""gatk38: pytest's stepwise plugin in a repository's ``addopts`` (contracts §7: every selected test reports).

``--sw`` (``--stepwise``, ``--stepwise-skip``, ``--sw-reset``) stops the session at its first failed test. homefield's
``--maxfail=0`` overrides ``-x``/``--maxfail`` but not stepwise, whose own hook sets ``session.shouldstop``; its fresh
cache (``-o cache_dir``) gave it nothing to skip, so it parsed and ran -- until a test failed. In a canary run a twin
fails every real fix: the tests after it went unreported. With two FAIL_TO_PASS groups, the run apart holding one
group's original after the other's twin never ran that original, nor did the confirmation run: a real fix was
``tests_failed`` on every seed, the reference fix (graded without canaries) ``solved``. The reporter now clears
stepwise's options before its ``pytest_configure`` reads them.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task

from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.snapshot import copy_tree
from pytest_homefield.sandbox.testrun import run_tests

SOURCE = "src/halves/__init__.py"
TEST = "tests/test_halves.py"
PARENT = "def half(x):\n    return x / 2\n"
FIXED = "def half(x):\n    return x // 2\n"
TESTS = ("from halves import half\n\n\ndef test_int():\n    assert half(5) == 2\n\n\ndef test_odd():\n"
         "    assert half(7) == 3\n\n\ndef test_even():\n    assert half(4) * 2 == 4\n")
CMD = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"


@pytest.mark.parametrize("opt", ["--sw", "--stepwise-skip", pytest.param("--sw -n 1", marks=pytest.mark.slow)])
def test_a_test_run_reports_every_test_under_stepwise_addopts(tmp_path: Path, opt: str) -> None:
    """Three failing tests and a passing one after them, ``addopts = --sw`` (or ``--stepwise-skip``, which stops at
    the second failure; or ``--sw`` with an xdist worker, which parses ``addopts`` again): every one reported (on
    main: the session stopped at the first failure, or the second)."""
    if "-n" in opt:
        pytest.importorskip("xdist")
    root = tmp_path / "p"
    (root / "tests").mkdir(parents=True)
    (root / "pytest.ini").write_text(f"[pytest]\naddopts = {opt}\n", encoding="utf-8")
    (root / "tests" / "test_s.py").write_text(
        "def test_a():\n    assert 0\n\n\ndef test_b():\n    assert 0\n\n\ndef test_c():\n    assert 0\n\n\n"
        "def test_d():\n    assert 1\n", encoding="utf-8")
    run = run_tests(root, CMD, ["tests/test_s.py"], out_dir=tmp_path / "out", sandbox="none")
    f = "tests/test_s.py::test_"
    assert run.outcomes == {f + "a": "failed", f + "b": "failed", f + "c": "failed", f + "d": "passed"}, \
        run.log_path.read_text()


@pytest.fixture(scope="module")
def halves(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    """The task, built once for the module: every grading copies its parent's snapshot (read only), and the
    reference fix's runs and sealed run, the same for every grading of a seed and sandbox, are made once per process,
    as in a run (``twin_grading._REFERENCE_SEEN``, ``sealed_grading._SEALED_SEEN``: keyed by that snapshot's folder)."""
    return build_fix_task(tmp_path_factory.mktemp("halves"), name="halves", source=SOURCE, parent=PARENT, fixed=FIXED,
                          test=TEST, tests=TESTS, first="halves", message="half: integer halves",
                          fail_to_pass=[f"{TEST}::test_int", f"{TEST}::test_odd"],
                          pass_to_pass=[f"{TEST}::test_even"], parent_data={"pytest.ini": "[pytest]\naddopts = --sw\n"})


def _graded(b: FixTask, tmp_path: Path, source: str, seed: int, sandbox: str = "none") -> Grade:
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(source, encoding="utf-8")
    return grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=seed,
                 run_timeout_s=120, sandbox=sandbox)


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "sandbox"), [(0, "none"), (1, "none"), (0, "bwrap")])
def test_a_real_fix_is_solved_under_stepwise_addopts(halves: FixTask, tmp_path: Path, seed: int,
                                                     sandbox: str) -> None:
    """The commit's fix with a comment, two groups' twins: ``solved`` (was ``tests_failed``: ``test_odd`` not
    reported in the run apart and the confirmation run holding its original after ``test_int``'s failed twin)."""
    if sandbox == "bwrap":
        try:
            probe()
        except BwrapUnavailable as exc:
            pytest.skip(str(exc))
    g = _graded(halves, tmp_path, FIXED.replace("def half", "# floor\ndef half"), seed, sandbox)
    assert (g.outcome, g.canaries) == ("solved", 4), g  # and the two teardown canaries (tcan50, can52)


@pytest.mark.slow
def test_a_fix_of_one_group_only_still_fails(halves: FixTask, tmp_path: Path) -> None:
    """``half(5) == 2`` fixed, ``half(7)`` left wrong: ``tests_failed`` as before, never solved."""
    g = _graded(halves, tmp_path, "def half(x):\n    return 2 if x == 5 else x / 2\n", 0)
    assert (g.outcome, g.failing_f2p) == ("tests_failed", [f"{TEST}::test_odd"]), g
