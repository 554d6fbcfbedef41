"""plugin.find_root: the git top level of a session's folder, from ``git rev-parse`` (no gitpython)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_homefield.plugin import find_root


def test_find_root_from_a_subfolder_a_bare_repository_and_outside(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # git never looks above the test's folder
    repo = tmp_path / "repo"
    (repo / "a" / "b").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert find_root(repo / "a" / "b") == repo.resolve()
    assert find_root(repo) == repo.resolve()
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    with pytest.raises(pytest.UsageError, match="bare.git is a bare git repository"):
        find_root(bare)
    outside = tmp_path / "outside"
    outside.mkdir()
    with pytest.raises(pytest.UsageError, match="outside is not inside a git repository"):
        find_root(outside)
    with pytest.raises(pytest.UsageError, match="missing is not inside a git repository"):
        find_root(tmp_path / "missing")
