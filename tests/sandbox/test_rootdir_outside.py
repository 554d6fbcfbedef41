"""A test command naming a ``--rootdir`` outside the repository (ops52, gatk49's left item).

Every test run is in a copy of the tree elsewhere: ``--rootdir=../elsewhere`` names no folder there (pytest stops:
``--confcutdir must be a directory``), ``--rootdir=..`` puts the copy's own folder name in every id, and an absolute
path names the user's checkout. Before, mining ran every candidate and dropped each as ``reference fails`` with a
hint to install what the tests import; now the settings are refused at the start, in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.gitrepo import GitRepo

from pytest_homefield.errors import ConfigError
from pytest_homefield.settings import resolve_settings

PLAIN = "-p no:randomly -p no:cacheprovider"


def _settings(root: Path, test_cmd: str) -> None:
    (root / ".homefield.yml").write_text(f"test_cmd: {test_cmd!r}\n".replace("\\\\", "\\"))
    resolve_settings(root, {}, mode="mine")


@pytest.mark.parametrize("test_cmd", [
    "python -m pytest --rootdir=../elsewhere", "python -m pytest --rootdir ..", "pytest --rootdir=tests/../..",
    "PYTEST_ADDOPTS='-q --rootdir=..' python -m pytest", "env PYTEST_ADDOPTS=--rootdir=../x pytest",
    "uv run --no-sync pytest --rootdir=../x", "python -m pytest --rootdir={root}/tests",
    "python -m pytest --rootdir=tests --rootdir=..",
])
def test_a_rootdir_outside_the_tree_is_refused_in_one_line(tmp_path: Path, test_cmd: str) -> None:
    cmd = test_cmd.format(root=tmp_path)
    with pytest.raises(ConfigError) as info:
        _settings(tmp_path, cmd)
    text = str(info.value)
    assert text.startswith(f"test_cmd: test command {cmd!r}: --rootdir ") and "\n" not in text, text


@pytest.mark.parametrize("test_cmd", [
    "python -m pytest", "python -m pytest --rootdir=tests", "python -m pytest --rootdir .",
    "python -m pytest --rootdir=$PWD", "python -m pytest --rootdir=.. --rootdir=tests", "./ci/t.sh -- --rootdir=..",
])
def test_a_rootdir_in_the_tree_is_taken(tmp_path: Path, test_cmd: str) -> None:
    _settings(tmp_path, test_cmd)


@pytest.mark.slow
def test_mine_with_a_rootdir_outside_says_so_at_the_start(tmp_path: Path) -> None:
    """The real ``homefield mine`` on a real repository with one fix: one line naming the option, no candidate
    run (before: 1 candidate verified, dropped as ``reference fails``, a hint about ``setup_cmd``)."""
    (tmp_path / "elsewhere").mkdir()
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("calc/__init__.py", "")
    repo.write("calc/ops.py", "def add(a, b):\n    return a - b\n")
    repo.write("tests/test_ops.py", "from calc.ops import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n")
    repo.commit("calc", committer_date="2026-01-01T12:00:00+00:00")
    repo.write("calc/ops.py", "def add(a, b):\n    return a + b\n")
    repo.write("tests/test_ops.py", "from calc.ops import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n\n\n"
                                    "def test_add():\n    assert add(2, 3) == 5\n")
    repo.commit("Fix add: it subtracted its arguments", committer_date="2026-01-02T12:00:00+00:00")
    (repo.path / ".homefield.yml").write_text(
        f'test_cmd: "{sys.executable} -m pytest --rootdir=../elsewhere {PLAIN}"\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "mine", "--since", "2025-12-01"],
                         cwd=repo.path, env=env, capture_output=True, text=True, timeout=300)
    said = out.stdout + out.stderr
    assert out.returncode != 0, said
    assert "--rootdir ../elsewhere lies outside the repository" in said, said
    assert "candidate" not in said and not (repo.path / ".homefield" / "tasks.jsonl").exists(), said
