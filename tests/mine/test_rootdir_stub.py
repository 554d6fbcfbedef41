"""The stubbed parent run (ms35) of a repository whose pytest configuration lies in its test folder (root47).

With a ``tests/pytest.ini`` the ids are relative to ``tests/`` (``test_mul.py::test_other``), and mining's targeted
runs give them as targets from the tree's top, where pytest finds no such file. A targeted parent or commit run that
reports a selected id of no collection error is made again on the whole files (a cost: one more run each), but the
stubbed parent run has no such fallback: it reports nothing, and a test red at the parent only because a name its
module imports is missing (``passes_with_stub``) was kept as FAIL_TO_PASS. The targets are now the ids from
pytest's rootdir for the whole run (``redgreen._targets``, ``pytest_config.from_top``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mine.test_rootdir_canaries import CMD, _commit, _git

from pytest_homefield.mine.redgreen import verify_candidate

TEST = """\
from pkg.mul import mul


def test_mul():
    assert mul(2, 3) == 6


def test_other():
    pass
"""


def _excluded(tmp_path: Path, config: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """Mine a commit adding ``pkg/mul.py`` and its test (``test_other`` never calls it) in a repository holding
    ``config``: the task's FAIL_TO_PASS and its excluded ids."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    parent = _commit(repo, "base", {"pkg/__init__.py": "", "tests/test_old.py": "def test_old():\n    pass\n",
                                    **config})
    commit = _commit(repo, "Add mul", {"pkg/mul.py": "def mul(a, b):\n    return a * b\n",
                                       "tests/test_mul.py": TEST})
    (tmp_path / "work").mkdir()
    v = verify_candidate(repo, commit=commit, parent=parent, test_files=["tests/test_mul.py"],
                         runnable_tests=["tests/test_mul.py"], test_cmd=CMD, setup_cmd=None, stability_runs=1,
                         run_timeout_s=60, work_root=tmp_path / "work")
    assert v.reason is None, v.detail
    return v.FAIL_TO_PASS, v.excluded


@pytest.mark.slow
def test_a_test_red_for_a_missing_name_alone_is_excluded_at_the_top(tmp_path: Path) -> None:
    """The control: ids from the tree's top, ``test_other`` passes in the stubbed run and is excluded."""
    f2p, excluded = _excluded(tmp_path, {"pytest.ini": "[pytest]\n"})
    assert f2p == ["tests/test_mul.py::test_mul"]
    assert excluded == {"tests/test_mul.py::test_other": "passes_with_stub"}


@pytest.mark.slow
def test_a_test_red_for_a_missing_name_alone_is_excluded_in_the_test_folder(tmp_path: Path) -> None:
    f2p, excluded = _excluded(tmp_path, {"tests/pytest.ini": "[pytest]\n"})
    assert f2p == ["test_mul.py::test_mul"]
    assert excluded == {"test_mul.py::test_other": "passes_with_stub"}
