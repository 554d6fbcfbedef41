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
from run.test_name_reading_confirm import FIXED, OTHER, PARENT, SOURCE, SPITE, TEST, TESTS

GUIDE = "docs/guide.rst"


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
