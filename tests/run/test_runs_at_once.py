"""reach46: :func:`~pytest_homefield.run.runs_at_once.planned_runs` laid the FAIL_TO_PASS files alone and passed them as
the twin plan's ``hidden``, where grading passes every test file of the task (seal64). A PASS_TO_PASS test file's
subclass of a FAIL_TO_PASS ``unittest`` class takes that class's teardown twin away in grading's plan (1 run at
once), not in the count at start (4: the teardown twin and its decoy): a memory budget holding grading's runs was
refused."""

from __future__ import annotations

from pathlib import Path

from helpers.gitrepo import GitRepo
from run.test_subclass_elsewhere import TESTS

from pytest_homefield.records import Task
from pytest_homefield.run.runs_at_once import planned_runs
from pytest_homefield.sandbox.twin_runs import most_at_once, plan_twins

TEST = "tests/test_totals.py"
MORE = "tests/test_more.py"
#: Overrides ``test_total`` (it passes at the parent: PASS_TO_PASS), inherits ``setUp`` and ``tearDown``.
SUBCLASS = ("import test_totals\n\nimport totals\n\n\n"
            "class TestMore(test_totals.TestTotal):\n"
            "    def test_total(self):\n        self.assertEqual(totals.fetch(), 2)\n")


def _task(commit: str, test_files: list[str]) -> Task:
    return Task(id=commit[:12], commit=commit, parent="0" * 40, committed_at="", authored_at="", mode="commit",
                subject="t", message="", prompt="", source_files=[], test_files=test_files, test_patch="",
                gold_patch="", FAIL_TO_PASS=[f"{TEST}::TestTotal::test_total"],
                PASS_TO_PASS=[f"{MORE}::TestMore::test_total"])


def test_a_pass_to_pass_files_subclass_counts_as_in_grading(tmp_path: Path) -> None:
    """The count is grading's plan's (1, the function a sentinel; before: 4), the same plan without the subclass's
    file 4 (its teardown twin and decoy: the premise), and a hidden file the commit does not hold is left out, as
    grading leaves it."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.write(TEST, TESTS)
    repo.write(MORE, SUBCLASS)
    commit = repo.commit("Add the tests")
    task = _task(commit, [TEST, MORE])
    graded = plan_twins(repo.path, task.FAIL_TO_PASS, seed=0, pass_to_pass=task.PASS_TO_PASS, teardown=True,
                        hidden=task.test_files)
    alone = plan_twins(repo.path, task.FAIL_TO_PASS, seed=0, pass_to_pass=task.PASS_TO_PASS, teardown=True,
                       hidden=[TEST])
    assert (most_at_once(graded), most_at_once(alone)) == (1, 4)
    assert planned_runs(repo.path, task, unknown=99) == 1
    assert planned_runs(repo.path, _task(commit, [TEST, MORE, "tests/test_gone.py"]), unknown=99) == 1
    assert planned_runs(repo.path, _task(commit, [TEST]), unknown=99) == 4
