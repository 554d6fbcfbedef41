"""A commit whose only test file is one the repository's own ``conftest.py`` leaves out of collection in this
environment (nu58, python-attrs/cattrs: ``collect_ignore_glob = ["*_695.py"]`` on Python < 3.12) cannot be
verified here: pytest collects a file it was named, ignores or not, so mining's runs failed on its syntax at the
parent and at the commit, and the drop read "reference fails" with a hint to install a missing package."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from helpers.attack_repo import NO_PLUGINS
from helpers.gitrepo import GitRepo

from pytest_homefield.mine.redgreen import verify_candidate

#: Syntax no Python parses, as cattrs' ``type Alias = ...`` files are to a Python before 3.12.
NEWER = "def test_alias(:\n    assert True\n"


def _verify(repo: GitRepo, tests: list[str], tmp_path: Path):  # type: ignore[no-untyped-def]
    parent, commit = repo.git("rev-parse", "HEAD~1").strip(), repo.git("rev-parse", "HEAD").strip()
    return verify_candidate(repo.path, commit=commit, parent=parent, test_files=tests, runnable_tests=tests,
                            test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                            stability_runs=1, run_timeout_s=60, log_dir=tmp_path / "logs")


def _repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/alias.py", "def alias(x):\n    return None\n")
    repo.write("tests/conftest.py", 'collect_ignore_glob = ["*_newer.py"]\n')
    repo.write("tests/test_alias.py", "def test_old():\n    assert True\n")
    repo.commit("Start the package with an alias helper and its test")
    return repo


def test_a_commit_whose_test_file_the_repository_leaves_out_is_skipped_not_failed(tmp_path: Path) -> None:
    """Before: ``reference_fails``, "collection errors at the parent and at the commit: tests/test_x_newer.py
    (SyntaxError…)"; after: ``tests_skipped``, naming the file and why."""
    repo = _repo(tmp_path)
    repo.write("pkg/alias.py", "def alias(x):\n    return x\n")
    repo.write("tests/test_x_newer.py", NEWER)
    repo.commit("alias: return its argument instead of None")
    v = _verify(repo, ["tests/test_x_newer.py"], tmp_path)
    assert v.reason == "tests_skipped", v
    assert "left out of collection by the repository's own pytest configuration" in v.detail, v.detail
    assert "tests/test_x_newer.py" in v.detail and not v.missing_modules, v


def test_a_left_out_file_beside_a_collected_one_keeps_the_task(tmp_path: Path) -> None:
    """The commit's other test file is verified as ever: its red→green test is the task."""
    repo = _repo(tmp_path)
    repo.write("pkg/alias.py", "def alias(x):\n    return x\n")
    repo.write("tests/test_x_newer.py", NEWER)
    repo.write("tests/test_alias.py", "from pkg.alias import alias\n\n\ndef test_old():\n    assert True\n\n\n"
                                      "def test_returns_its_argument():\n    assert alias(3) == 3\n")
    repo.commit("alias: return its argument instead of None")
    v = _verify(repo, ["tests/test_alias.py", "tests/test_x_newer.py"], tmp_path)
    assert v.reason is None, v
    assert v.FAIL_TO_PASS == ["tests/test_alias.py::test_returns_its_argument"], v


def test_a_broken_file_the_repository_collects_still_fails_the_reference(tmp_path: Path) -> None:
    """Without the ignore, the same file's collection error is the reference's failure, as before."""
    repo = _repo(tmp_path)
    repo.write("pkg/alias.py", "def alias(x):\n    return x\n")
    repo.write("tests/test_x_broken.py", NEWER)
    repo.commit("alias: return its argument instead of None")
    v = _verify(repo, ["tests/test_x_broken.py"], tmp_path)
    assert v.reason == "reference_fails", v
    assert v.detail.startswith("collection errors at the parent and at the commit"), v.detail
