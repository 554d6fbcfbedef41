"""Canary twins of a repository whose pytest configuration file lies in its test folder (nu46).

Textualize/rich keeps a ``tests/pytest.ini``: pytest's rootdir is ``tests/`` there, so its node ids are
``test_prompt.py::test_x``, relative to that folder. ``plan_twins`` (sandbox/twin_runs.py) reads each
FAIL_TO_PASS id's file as ``root / path`` from the tree's top, finds no ``test_prompt.py`` there and gives
the function a sentinel module ("sentinel: not a Python test file"): every FAIL_TO_PASS function of
every rich task mined on 2026-12-06 (7 tasks, 12 functions) was ``canary_unprotected`` and the report
said so, where the same test with its ids from the tree's top gets a contradiction twin. Both callers
pass the tree's top (``mine/redgreen.py`` ``twin_run``, ``run/grading.py`` ``plan_for``), and the
mining check and grading must plan alike, so the fix spans grading. Now (root47) both pass pytest's rootdir for the
task's whole run (``plan_twins``' ``rootdir``): the planner reads ``tests/`` + the id's path and names its files from
the tree's top, its canaries by pytest's ids; grading's side is ``tests/run/test_rootdir_twins.py``.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_homefield.mine.redgreen import verify_candidate

CMD = f"{shlex.quote(sys.executable)} -m pytest -q -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"

TEST = """\
from pkg.core import double


def test_double():
    assert double(2) == 4
"""


def _git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout


def _commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=Dev", "-c", "user.email=dev@example.org", "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD").strip()


def _unprotected(tmp_path: Path, config: dict[str, str]) -> tuple[list[str], list[str], list[str] | None]:
    """Mine one fix of ``double`` (its test added with it) in a repository holding ``config``: the task's
    FAIL_TO_PASS ids, its ``canary_unprotected`` and its ``sealed_sites`` (seal47). Each targeted canary run found
    the group functions it selected (none made again on the whole files, ``-full``: root47, the ids given from the
    tree's top)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    parent = _commit(repo, "base", {"pkg/__init__.py": "", "pkg/core.py": "def double(x):\n    return x\n",
                                    "tests/test_old.py": "def test_old():\n    pass\n", **config})
    commit = _commit(repo, "Fix double", {"pkg/core.py": "def double(x):\n    return 2 * x\n",
                                          "tests/test_core.py": TEST})
    (tmp_path / "work").mkdir()
    v = verify_candidate(repo, commit=commit, parent=parent, test_files=["tests/test_core.py"],
                         runnable_tests=["tests/test_core.py"], test_cmd=CMD, setup_cmd=None, stability_runs=1,
                         run_timeout_s=60, work_root=tmp_path / "work", log_dir=tmp_path / "logs")
    assert v.reason is None, v.detail
    runs = sorted(p.name for p in (tmp_path / "logs").iterdir() if p.name.startswith("canaries-"))
    assert runs == ["canaries-1-1", "canaries-1-2"], runs
    return v.FAIL_TO_PASS, v.canary_unprotected, v.sealed_sites


@pytest.mark.slow
def test_a_test_of_a_repository_configured_at_its_top_is_guarded(tmp_path: Path) -> None:
    """The control: ids from the tree's top, the function gets a contradiction twin."""
    f2p, unprotected, sealed = _unprotected(tmp_path, {"pytest.ini": "[pytest]\n"})
    assert f2p == ["tests/test_core.py::test_double"]
    assert unprotected == []
    assert sealed == ["tests/test_core.py::test_double@5"]


@pytest.mark.slow
def test_a_test_of_a_repository_configured_in_its_test_folder_is_guarded(tmp_path: Path) -> None:
    """seal47: and its site is sealed (the reference fix passed it sealed), keyed by pytest's id as grading reads it
    (before, ``sealable_sites`` looked ``test_core.py`` up at the tree's top: ``sealed_sites`` was ``[]``)."""
    f2p, unprotected, sealed = _unprotected(tmp_path, {"tests/pytest.ini": "[pytest]\n"})
    assert f2p == ["test_core.py::test_double"]  # rich's ids: pytest's rootdir is tests/
    assert unprotected == []
    assert sealed == ["test_core.py::test_double@5"]
