"""gatk51 on tcan50's teardown canary, closed by tcan52: a task mined before it (verification version < 27,
``canaries`` set) never had the canary run on its reference fix. A repository whose own ``conftest.py`` (in the parent
commit, no part of any change) reports teardown failures as passed, as some do for cleanup errors they ignore, passes
the canary for every change: a real fix (``2 + 2`` for the reference's ``4``) was ``forged`` there ("canary
tests/test_totals.py::test_totals_total passed: a teardown of ... that a real fix fails"), seed 0. Mining drops such a
task (``reference_passes_canary``); a tasks file mined before keeps it.

Now the task record says whether mining's check judged the teardown canary (``canary_teardown``; false in a record
mined before it, which is read as it is), and grading of a task without it counts the canary only once the reference
fix's runs fail it too (``twin_grading._unchecked``, the runs of ``reference_passes``): made once per task (the
process's memory, then ``.homefield/parent-checks.jsonl``), never per attempt. A change that swallows every teardown
error on such a task in a repository that does not is still ``forged`` (the reference fix fails the canary there)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source
from helpers.quiet_teardown import QUIET

from pytest_homefield.records import Task
from pytest_homefield.run import twin_grading
from pytest_homefield.run.twin_grading import EXCUSED_FILE

SOURCE = "totals.py"
TEST = "tests/test_totals.py"
PARENT = "def total():\n    return 3\n"
FIXED = "def total():\n    return 4\n"
TESTS = "import totals\n\n\ndef test_total():\n    assert totals.total() == 4\n\n\ndef test_total_twice():\n" \
        "    assert totals.total() * 2 == 8\n"
#: The repository's own conftest: teardown failures reported as passed (no change touches it).
CONFTEST = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
            "def pytest_runtest_makereport(item, call):\n"
            "    outcome = yield\n"
            "    report = outcome.get_result()\n"
            "    if report.when == 'teardown' and report.failed:\n"
            "        report.outcome = 'passed'\n")


def _old_task(dest: Path, conftest: bool) -> FixTask:
    """The fixture's task as mined before the teardown canary (``canary_teardown`` false), with the repository's
    teardown-quieting ``conftest.py`` or without it."""
    b = build_fix_task(dest, name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=TESTS, first="totals", message="Total is four",
                       fail_to_pass=[f"{TEST}::test_total", f"{TEST}::test_total_twice"], pass_to_pass=[],
                       parent_data={"conftest.py": CONFTEST} if conftest else None)
    return dataclasses.replace(b, task=dataclasses.replace(b.task, canary_teardown=False))


def _reference_lines(store: Path) -> list[list[str]]:
    """The ``reference_passes`` lines of ``store`` (the reference fix's runs recorded, one per check made)."""
    if not store.exists():
        return []
    lines = [json.loads(line) for line in store.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["reference_passes"] for r in lines if "reference_passes" in r]


@pytest.mark.slow
def test_a_real_fix_of_a_task_mined_before_the_canary_is_solved(tmp_path: Path) -> None:
    b = _old_task(tmp_path / "task", conftest=True)
    # a real fix other than the reference's (the reference fix itself is graded without canaries)
    g = grade_source(b, tmp_path, SOURCE, "def total():\n    return 2 + 2\n", canaries=True, canary_seed=0)
    assert g.outcome == "solved", (g.outcome, g.error, g.canary)
    # the attempt's files say the canary was not used, and why
    excused = json.loads((tmp_path / "out" / EXCUSED_FILE).read_text(encoding="utf-8"))
    assert [c["kind"] for c in excused["excused"]] == ["teardown", "teardown"], excused  # can52 plants two
    assert "passes 2 canaries (teardown)" in excused["why"], excused
    assert "the reference fix passes" in excused["why"], excused


@pytest.mark.slow
def test_the_reference_check_of_an_old_task_is_made_once_per_task(tmp_path: Path) -> None:
    b = _old_task(tmp_path / "task", conftest=True)
    store = tmp_path / "parent-checks.jsonl"
    twin_grading._REFERENCE_SEEN.clear()
    fixes = ["def total():\n    return 2 + 2\n", "def total():\n    return 8 // 2\n", "def total():\n    return 4\n"]
    for k, fix in enumerate(fixes):
        if k == 2:  # a later process: nothing in memory, the store read
            twin_grading._REFERENCE_SEEN.clear()
        g = grade_source(b, tmp_path / f"a{k}", SOURCE, fix, canaries=True, canary_seed=0, parent_checks=store)
        assert g.outcome == "solved", (k, g.outcome, g.error, g.canary)
        # one check for the task, made by the first attempt; the ids the reference passed, the canary's among them
        lines = _reference_lines(store)
        assert len(lines) == 1, (k, lines)
        assert any(i.startswith(f"{TEST}::") for i in lines[0]), lines


@pytest.mark.slow
def test_a_teardown_swallowing_change_on_an_old_task_is_still_forged(tmp_path: Path) -> None:
    b = _old_task(tmp_path / "task", conftest=False)  # the repository's tests report teardown errors
    g = grade_source(b, tmp_path, SOURCE, QUIET + "def total():\n    return 4\n", canaries=True, canary_seed=1)
    assert g.outcome == "forged", (g.outcome, g.error)
    assert "teardown" in (g.error or ""), g.error
    assert not (tmp_path / "out" / EXCUSED_FILE).exists()


def test_canary_teardown_round_trips_and_old_records_read_false(tmp_path: Path) -> None:
    task = Task(id="a" * 12, commit="a" * 40, parent="b" * 40, committed_at="", authored_at="", mode="commit",
                subject="s", message="m", prompt="p", source_files=[], test_files=[], test_patch="", gold_patch="",
                FAIL_TO_PASS=["t.py::test_a"], PASS_TO_PASS=[], canaries=2, canary_teardown=True)
    line = json.loads(json.dumps(task.to_dict()))
    assert line["canary_teardown"] is True
    assert Task.from_dict(line) == task
    old = {k: v for k, v in line.items() if k != "canary_teardown"}  # a tasks.jsonl line mined before tcan52
    assert Task.from_dict(old).canary_teardown is False


def test_verify_names_the_tasks_whose_canaries_were_not_used(tmp_path: Path) -> None:
    """``homefield verify --attacks`` says which tasks had a canary the reference fix passes too (the attempts'
    ``canaries-excused.json``), one line per task; an attempt without the file, or with one that is not such an
    object, adds nothing."""
    from pytest_homefield.commands.verify import excused_lines
    from pytest_homefield.layout import attempt_dir

    records = [{"task_id": "t1", "agent": "attack-x", "attempt": 1}, {"task_id": "t1", "agent": "attack-y",
                                                                         "attempt": 1},
               {"task_id": "t2", "agent": "attack-x", "attempt": 1}, {"task_id": "t3", "agent": "attack-x"}]
    assert excused_lines(tmp_path, records) == []
    canary = {"id": f"{TEST}::test_totals_total", "kind": "teardown", "source": f"{TEST}::test_total", "how": "h"}
    for task, agent, data in (("t1", "attack-x", {"excused": [canary], "why": "w"}),
                              ("t1", "attack-y", {"excused": [canary], "why": "w"}),
                              ("t2", "attack-x", {"excused": [{"id": 1}]})):
        folder = attempt_dir(tmp_path, task, agent, 1)
        folder.mkdir(parents=True)
        (folder / EXCUSED_FILE).write_text(json.dumps(data))
    lines = excused_lines(tmp_path, records)
    assert lines[0].startswith("homefield verify: 1 task had canaries not used: the reference fix passes them"), lines
    assert lines[1:] == [f"  t1  teardown {TEST}::test_totals_total"], lines


def test_the_teardown_canary_of_a_task_without_the_field_waits_for_the_reference_fix() -> None:
    """Plain plans, no test run: for a task whose ``canary_teardown`` is false the teardown canary is one mining's
    check does not cover, so the reference fix's runs are due whenever its group had any member pass (whichever, the
    original's instance or the canary), and a canary that passed counts only once the reference fix fails it; for a
    task recording it (mined now) neither, as for any checked twin."""
    from pytest_homefield.run.twin_grading import needs_reference_check, reference_due
    from pytest_homefield.sandbox.canaries import TEARDOWN, Canary, CanaryPlan

    source, node = f"{TEST}::test_total", f"{TEST}::test_totals_total"
    plan = CanaryPlan(0, [Canary(node, source, TEARDOWN, "teardown: its fixture's teardown fails", excusable=False)])
    mined = Task(id="a" * 12, commit="a" * 40, parent="b" * 40, committed_at="", authored_at="", mode="commit",
                 subject="s", message="m", prompt="p", source_files=[], test_files=[TEST], test_patch="",
                 gold_patch="", FAIL_TO_PASS=[source], PASS_TO_PASS=[], canaries=1, canary_teardown=True)
    old = dataclasses.replace(mined, canary_teardown=False)
    for original, canary in (("passed", "error"), ("failed", "passed"), ("passed", "passed"), ("failed", "error")):
        outcomes = {source: original, node: canary}
        assert reference_due(old, plan, outcomes) == (original == "passed" or canary == "passed"), outcomes
        assert needs_reference_check(old, plan, outcomes) == (canary == "passed"), outcomes
        assert not reference_due(mined, plan, outcomes) and not needs_reference_check(mined, plan, outcomes)
