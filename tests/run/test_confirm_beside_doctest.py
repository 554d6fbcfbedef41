"""gatk60: the confirmation run's checks beside a FAIL_TO_PASS file that is not Python (a doctest of
``docs/guide.rst``, a test file by the task's ``test_globs``). The grading tree holds the plan's sentinel module
beside it (``canaries._sentinel_module``), a target of the confirmation run; the reference fix's check of that layout
(``twin_grading.reference_together``, gatk58) and the parent's (``_parent_gives``) ran the same targets on copies
without it: pytest exited 4 (``file or directory not found``), no test ran, and the reference check came back with
no outcome at all, which excused every original failing in the confirmation run. Measured before (``--sandbox
none``): the gatk58 task (``test_name_reading_confirm``) with the doctest beside it, the SPITE change (failing its
original wherever the file holds the group's members side by side) ``solved`` on seeds 0 to 3, where without the
doctest seeds 2 and 3 are ``tests_failed`` (the reference fix passes the original there). Now both copies hold the
module (``twin_grading.lay_missing``) and an id the reference run did not report excuses nothing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source
from run.test_exception_twins import ENTERED, FRAMES, READER, SWALLOW
from run.test_exception_twins import F2P as X_F2P
from run.test_exception_twins import FIXED as X_FIXED
from run.test_exception_twins import OTHER as X_OTHER
from run.test_exception_twins import PARENT as X_PARENT
from run.test_exception_twins import SOURCE as X_SOURCE
from run.test_exception_twins import TEST as X_TEST
from run.test_exception_twins import TESTS as X_TESTS
from run.test_name_reading_confirm import FIXED, OTHER, PARENT, SOURCE, SPITE, TEST, TESTS

from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.sandbox.snapshot import copy_tree

GUIDE = "docs/guide.rst"
KIND = "\nKIND = 'reader'\n"


@pytest.fixture(scope="module")
def beside_doctest(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    b = build_fix_task(tmp_path_factory.mktemp("doctest"), name="pkg", source=SOURCE, parent=PARENT, fixed=FIXED,
                       test=TEST, tests=TESTS, first="add", message="Suffix strings",
                       fail_to_pass=[f"{TEST}::test_two", f"{GUIDE}::guide.rst"], pass_to_pass=[f"{TEST}::test_other"],
                       data={"tests/golden/test_two.txt": "x-lima-mike-4417",
                             GUIDE: ">>> from pkg import f\n>>> f('q')\n'q-lima-mike-4417'\n"})
    return dataclasses.replace(b, task=dataclasses.replace(b.task, test_cmd=b.task.test_cmd + " --doctest-glob=*.rst"))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_is_solved_beside_a_doctest_with_the_checks_run(beside_doctest: FixTask, tmp_path: Path,
                                                                    seed: int) -> None:
    g = grade_source(beside_doctest, tmp_path, SOURCE, OTHER, canaries=True, canary_seed=seed, sandbox="none",
                     test_globs=["docs/*.rst"])
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)
    parent_log = (tmp_path / "out" / "confirm-parent.log").read_text()
    assert "file or directory not found" not in parent_log and "passed" in parent_log, parent_log[-800:]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3])
def test_an_original_the_reference_fix_passes_there_must_pass_there_beside_a_doctest(
        beside_doctest: FixTask, tmp_path: Path, seed: int) -> None:
    g = grade_source(beside_doctest, tmp_path, SOURCE, SPITE, canaries=True, canary_seed=seed, sandbox="none",
                     test_globs=["docs/*.rst"])
    assert g.outcome == "tests_failed" and "confirmation run" in (g.error or ""), (g.outcome, g.error)


#: the doctest of the plain-run task: a name the fix adds (the forgers below add it too; the doctest, a sentinel's
#: only, is listed unprotected: what is judged here is the exception-swap group's function)
DOC = ">>> import streams\n>>> streams.KIND\n'reader'\n"


def _grade_beside_doctest(tmp_path: Path, code: str, seed: int) -> Grade:
    """``test_exception_twins``' task with :data:`DOC` beside it (``docs/guide.rst``, a FAIL_TO_PASS id), its
    module written as ``code`` (plus the fix's ``KIND``), graded with no sandbox at ``seed``: the grading."""
    b = build_fix_task(tmp_path / "t", name="streams", source=X_SOURCE, parent=X_PARENT, fixed=X_FIXED + KIND,
                       test=X_TEST, tests=X_TESTS, first="streams", message="Refuse to seek an unseekable stream",
                       fail_to_pass=[*X_F2P, f"{GUIDE}::guide.rst"], pass_to_pass=[], data={GUIDE: DOC})
    task = dataclasses.replace(b.task, test_cmd=b.task.test_cmd + " --doctest-glob=*.rst")
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / X_SOURCE).write_text(code + KIND)
    return grade(task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=seed,
                 run_timeout_s=120, test_globs=["docs/*.rst"], sandbox="none")


@pytest.mark.slow
@pytest.mark.parametrize("source", ["fix", "entered", "frames"])
def test_code_raising_only_inside_a_raises_is_forged_beside_a_doctest(tmp_path: Path, source: str) -> None:
    """The plain run's reference check (``twin_grading.reference_plain``) beside the same doctest: its copy had no
    sentinel module, pytest exited 4, every id was left unconfirmed there, and the agent's unconfirmed ids were
    excused: ``test_exception_twins``' forgers raising only inside a ``raises`` (a patched ``__enter__``, a walk of
    the frames) were ``solved`` at seed 1 with no fix (``forged`` without the doctest). Now ``forged``; the fix
    ``solved``."""
    g = _grade_beside_doctest(tmp_path, {"fix": X_FIXED, "entered": ENTERED, "frames": FRAMES}[source], seed=1)
    assert g.outcome == ("solved" if source == "fix" else "forged"), (g.outcome, g.error)


@pytest.mark.slow
@pytest.mark.parametrize("source", ["fix", "reader", "swallow"])
def test_an_exception_twins_forger_is_forged_beside_a_doctest(tmp_path: Path, source: str) -> None:
    """The reference fix's runs apart (``twin_grading.reference_passes``, made for a twin mining's check does not
    cover, an exception swap here) beside the same doctest: made once the grading tree is gone, on a copy without
    the sentinel module, every run exited 4 and the check was not made, so ``test_exception_twins``' forgers passing
    the swap twin (a reader raising the class the ``raises`` names, one replacing ``pytest.raises``) were
    ``tests_failed`` ("the reference fix's runs … did not complete"), not ``forged`` (seed 7; ``forged`` without the
    doctest). Now ``forged``, the other real fix ``solved``."""
    g = _grade_beside_doctest(tmp_path, {"fix": X_OTHER, "reader": READER, "swallow": SWALLOW}[source], seed=7)
    assert g.outcome == ("solved" if source == "fix" else "forged"), (g.outcome, g.error)
