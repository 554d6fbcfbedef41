"""pytest's rootdir of the grading copy, read with the hidden tests in it (gatk49).

gatk48 holds back a ``setup.py`` (or configuration file) a change adds or deletes when it moves pytest's setup for
the task's tests away from the parent's. Mining compares the setups with the commit's test files in the tree; grading
compared them before the hidden tests were applied. The hidden tests can hold a configuration of their own: a commit
that deletes ``pkg/tests/pytest.ini`` makes its ids relative to the tree's top (no configuration, no ``setup.py``).
A real fix adding ``pkg/setup.py`` there moved nothing by grading's reading (the parent's ``pkg/tests/pytest.ini`` was
still the configuration), was carried, and with the hidden tests applied made ``pkg/`` the rootdir: pytest reported
``tests/test_circles.py::…``, no id of the task, and the fix was ``tests_failed`` (measured on 052e643). Mining,
reading with the test patch, held the reference's own ``pkg/setup.py`` back, so the reference fix itself, graded, was
``tests_failed`` too."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.fix_task import FixTask
from helpers.gitrepo import GitRepo

from pytest_homefield.mine.prompt import clean_prompt
from pytest_homefield.mine.redgreen import make_gold_patch, make_test_patch
from pytest_homefield.records import Task
from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.snapshot import apply_patch, copy_tree, make_snapshot

SOURCE = "pkg/circles.py"
TEST = "pkg/tests/test_circles.py"
INI = "pkg/tests/pytest.ini"
PARENT = "def area(r):\n    return 3 * r * r\n"
FIXED = "import math\n\n\ndef area(r):\n    return math.pi * r * r\n"
TESTS = ("import pytest\n\nfrom pkg.circles import area\n\n\n"
         "def test_unit_circle():\n"
         "    assert area(1) == pytest.approx(3.14159, rel=1e-4)\n")
SETUP_PY = "from setuptools import setup\n\nsetup(name='pkg')\n"


def _task(dest: Path, *, commit_setup_py: bool) -> FixTask:
    """The parent holds ``pkg/tests/pytest.ini`` (ids relative to ``pkg/tests/``); the commit fixes ``area``, adds
    its test and deletes that file (and adds ``pkg/setup.py`` with its fix when ``commit_setup_py``: mining's commit
    runs hold it back, gatk48): the task's ids are from the tree's top."""
    repo = GitRepo.init(dest / "repo")
    for rel, text in {"pkg/__init__.py": "", SOURCE: PARENT, INI: "[pytest]\n",
                      TEST: "def test_ok():\n    assert True\n"}.items():
        repo.write(rel, text)
    c1 = repo.commit("circles", committer_date="2026-01-01T12:00:00+00:00")
    repo.write(SOURCE, FIXED)
    if commit_setup_py:
        repo.write("pkg/setup.py", SETUP_PY)
    repo.write(TEST, TESTS)
    repo.rm(INI)
    c2 = repo.commit("Use pi for a circle's area", committer_date="2026-01-02T12:00:00+00:00")
    hidden = [TEST, INI]
    task = Task(id=c2[:12], commit=c2, parent=c1, committed_at="2026-01-02T12:00:00+00:00",
                authored_at="2026-01-02T12:00:00+00:00", mode="commit", subject="pi", message="pi",
                prompt=clean_prompt("Use pi for a circle's area"),
                source_files=[SOURCE, *(["pkg/setup.py"] if commit_setup_py else [])], test_files=hidden,
                test_patch=make_test_patch(repo.path, c1, c2, hidden),
                gold_patch=make_gold_patch(repo.path, c1, c2, hidden),
                FAIL_TO_PASS=[f"{TEST}::test_unit_circle"], PASS_TO_PASS=[],
                test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", canaries=1,
                canary_teardown=True)
    return FixTask(repo.path, task, make_snapshot(repo.path, c1, dest=dest / "pristine", init_git=True))


@pytest.fixture(scope="module")
def ini_deleted(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return _task(tmp_path_factory.mktemp("rootdir-test-patch"), commit_setup_py=False)


@pytest.fixture(scope="module")
def reference_adds_setup_py(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return _task(tmp_path_factory.mktemp("rootdir-test-patch-ref"), commit_setup_py=True)


@pytest.mark.slow
@pytest.mark.parametrize("with_setup_py", [False, True])
def test_a_real_fix_adding_setup_py_where_the_hidden_tests_drop_a_config_is_solved(
        ini_deleted: FixTask, tmp_path: Path, with_setup_py: bool) -> None:
    """With the hidden tests applied, ``pkg/setup.py`` moves the rootdir to ``pkg/``: held back, the fix is
    ``solved`` (``tests_failed`` before); the same fix without it is the control."""
    work = copy_tree(ini_deleted.pristine, tmp_path / "work")
    (work / SOURCE).write_text(FIXED, encoding="utf-8")
    if with_setup_py:
        (work / "pkg/setup.py").write_text(SETUP_PY, encoding="utf-8")
    g = grade(ini_deleted.task, workspace=work, pristine=ini_deleted.pristine, out_dir=tmp_path / "out",
              run_timeout_s=120, canaries=False)
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)
    assert g.carried == [SOURCE] and g.dropped == (["pkg/setup.py"] if with_setup_py else []), g


@pytest.mark.slow
def test_the_reference_fix_adding_setup_py_is_solved(reference_adds_setup_py: FixTask, tmp_path: Path) -> None:
    """The oracle: the commit's own fix, ``pkg/setup.py`` with it, graded (mining held that file back reading with
    the test patch; grading, reading without it, carried it: ``tests_failed`` before). It is the reference fix, graded
    without twins (ref60: ``is_reference_fix`` compared the ``pkg/setup.py`` grading held back after carrying, so the
    oracle's grading planted canary twins, ``canaries.json`` in its folder)."""
    b = reference_adds_setup_py
    work = copy_tree(b.pristine, tmp_path / "work")
    apply_patch(work, b.task.gold_patch)
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", run_timeout_s=120)
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)
    assert g.carried == [SOURCE] and g.dropped == ["pkg/setup.py"], g
    assert not (tmp_path / "out" / "canaries.json").exists()


@pytest.mark.slow
def test_another_setup_py_beside_the_reference_fix_is_graded_with_twins(reference_adds_setup_py: FixTask,
                                                                       tmp_path: Path) -> None:
    """ref60: the reference fix's source change beside a ``pkg/setup.py`` of other bytes, held back as it moves the
    rootdir too: not the reference fix's grading by construction (``is_reference_fix`` takes a moved file as the
    reference fix's only with its bytes), so it is graded with twins, and still ``solved``."""
    b = reference_adds_setup_py
    work = copy_tree(b.pristine, tmp_path / "work")
    apply_patch(work, b.task.gold_patch)
    (work / "pkg/setup.py").write_text(SETUP_PY + "# another\n", encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", run_timeout_s=120)
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)
    assert g.carried == [SOURCE] and g.dropped == ["pkg/setup.py"], g
    assert (tmp_path / "out" / "canaries.json").exists()
