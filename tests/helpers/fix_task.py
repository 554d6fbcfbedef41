"""A tiny real repository of two commits whose second fixes one source file and adds one test file, and the
task of that commit (FAIL_TO_PASS / PASS_TO_PASS known to the caller, so no mining is needed): the fixture of
the canary-tell tests (tests/helpers/titles_repo.py, tests/run/test_assert_tell.py, test_parent_agrees.py).

Build a task once per module (a ``scope="module"`` fixture) when its tests only read its snapshot (each grading
copies it): ``grade`` without a ``parent_checks`` store remembers the reference fix's runs and its sealed run per
snapshot folder for the process (``twin_grading._REFERENCE_SEEN``, ``sealed_grading._SEALED_SEEN``), as a run does
for its repository, so a task built again per test pays them again in every test (speed39: 1 to 4 s of CPU a
test)."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.attack_repo import NO_PLUGINS
from helpers.gitrepo import GitRepo
from pytest_homefield.mine.prompt import clean_prompt
from pytest_homefield.mine.redgreen import make_gold_patch, make_test_patch
from pytest_homefield.records import Task
from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.sandbox.snapshot import copy_tree, make_snapshot

__all__ = ["FixTask", "build_fix_task", "grade_source"]


@dataclass
class FixTask:
    """The repository's root, the task of its second commit and the parent's snapshot."""

    root: Path
    task: Task
    pristine: Path


def build_fix_task(dest: Path, *, name: str, source: str, parent: str, fixed: str, test: str, tests: str,
                   first: str, message: str, fail_to_pass: list[str], pass_to_pass: list[str],
                   data: dict[str, str] | None = None, parent_data: dict[str, str] | None = None,
                   tests_before: str | None = None, project: bool = True) -> FixTask:
    """In ``dest``/repo: commit 1 (``first``) adds ``source`` as ``parent``, a passing ``tests/test_other.py``
    and a ``pyproject.toml`` of project ``name`` (and ``test`` as ``tests_before`` when given); commit 2
    (``message``) makes ``source`` ``fixed`` and ``test`` ``tests`` (and ``data``, path → text: more hidden test
    files, ``parent_data`` their versions in commit 1). The task (one canary, as mined with the canary check, the
    teardown canary among those judged: ``canary_teardown``) and the parent's snapshot in ``dest``/pristine.
    ``project``: whether commit 1 adds the ``pyproject.toml`` (gatk48: a repository with no pytest configuration at
    all, whose rootdir pytest takes from a ``setup.py``)."""
    repo = GitRepo.init(dest / "repo")
    first_files = {source: parent, "tests/test_other.py": "def test_ok():\n    assert True\n",
                   **({"pyproject.toml": f'[project]\nname = "{name}"\nversion = "0"\n'} if project else {}),
                   **(parent_data or {})}
    for rel, text in first_files.items():
        repo.write(rel, text)
    if tests_before is not None:
        repo.write(test, tests_before)
    c1 = repo.commit(first, committer_date="2026-01-01T12:00:00+00:00")
    repo.write(source, fixed)
    repo.write(test, tests)
    for rel, text in (data or {}).items():
        repo.write(rel, text)
    hidden = [test, *(data or {})]
    c2 = repo.commit(message, committer_date="2026-01-02T12:00:00+00:00")
    root = repo.path
    task = Task(id=c2[:12], commit=c2, parent=c1, committed_at="2026-01-02T12:00:00+00:00",
                authored_at="2026-01-02T12:00:00+00:00", mode="commit", subject=message, message=message,
                prompt=clean_prompt(message), source_files=[source], test_files=hidden,
                test_patch=make_test_patch(root, c1, c2, hidden), gold_patch=make_gold_patch(root, c1, c2, hidden),
                FAIL_TO_PASS=list(fail_to_pass), PASS_TO_PASS=list(pass_to_pass),
                test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", canaries=1,
                canary_teardown=True)
    return FixTask(root, task, make_snapshot(root, c1, dest=dest / "pristine", init_git=True))


def grade_source(b: FixTask, tmp: Path, rel: str, source: str, **kw: Any) -> Grade:
    """``b``'s task graded on a copy of its parent's snapshot at ``tmp``/work whose file ``rel`` holds ``source`` (the
    agent's whole change), the runs' files in ``tmp``/out, a 120 s run timeout and canaries off unless ``kw`` (more
    of :func:`~pytest_homefield.run.grading.grade`'s options) says otherwise."""
    work = copy_tree(b.pristine, tmp / "work")
    (work / rel).write_text(source, encoding="utf-8")
    return grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp / "out", run_timeout_s=120,
                 **{"canaries": False, **kw})
