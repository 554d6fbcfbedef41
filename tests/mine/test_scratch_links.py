"""link48 (issue 30, contracts §9 "host-side file work never follows the agent's links"): mining writes into the
copies it checks a candidate in (a twin run's test files, a sealed run's files, the reference fix's held-back files
put back), copies of the commit's tree after its ``setup_cmd`` ran there: the repository's own code, from any
commit of its history. Before, those writes were ``Path.write_bytes`` and ``shutil.copy2``: a link the tree or the
setup left on the way (``tests`` a link to a folder outside the copy) was followed, and mining wrote its twins into
the folder it named. Now they are made by folder descriptors (``nofollow.write_bytes``, ``copy_entry``,
``remove``): the link is never followed and the candidate is dropped as ``setup_failed``, saying so."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_homefield.mine.redgreen import verify_candidate

CMD = f"{sys.executable} -m pytest -q -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio -p no:xdist"
TEST_ADD = "from pkg.core import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_neg():\n" \
           "    assert add(-1, -2) == -3\n"


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "D",
           "GIT_AUTHOR_EMAIL": "d@example.com", "GIT_COMMITTER_NAME": "D", "GIT_COMMITTER_EMAIL": "d@example.com"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def _commit(repo: Path, files: dict[str, str], msg: str) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", msg)
    return _git(repo, "rev-parse", "HEAD").strip()


@pytest.mark.slow
def test_a_link_the_setup_leaves_on_the_way_is_never_written_through(tmp_path: Path) -> None:
    """``setup_cmd`` moves ``tests/`` out of the copy (the first time) and links it back. Before: the candidate was
    kept and the twin runs' test files were written into ``outside/`` (its ``test_add.py`` no longer the commit's).
    Now ``outside/`` holds the commit's file as the setup copied it, and the candidate is ``setup_failed``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    parent = _commit(repo, {"pkg/__init__.py": "", "pkg/core.py": "def add(a, b):\n    return a - b\n",
                            "tests/test_old.py": "def test_old():\n    pass\n"}, "base")
    commit = _commit(repo, {"pkg/core.py": "def add(a, b):\n    return a + b\n", "tests/test_add.py": TEST_ADD},
                     "add adds")
    outside = tmp_path / "outside"
    o = shlex.quote(str(outside))
    setup = f"if [ ! -d {o} ]; then mkdir {o} && cp -r tests/. {o}/; fi; rm -rf tests && ln -s {o} tests"
    (tmp_path / "work").mkdir()
    v = verify_candidate(repo, commit=commit, parent=parent, test_files=["tests/test_add.py"],
                         runnable_tests=["tests/test_add.py"], test_cmd=CMD, setup_cmd=setup, stability_runs=1,
                         run_timeout_s=120, work_root=tmp_path / "work")
    assert (outside / "test_add.py").read_text() == TEST_ADD  # before: a twin run's file
    assert v.reason == "setup_failed" and "has a link where homefield writes" in (v.detail or ""), (v.reason, v.detail)
