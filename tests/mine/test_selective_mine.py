"""What a selective or bounded mine's summary says (nu41, psf/requests, more-itertools): a ``-k`` mine of one
dropped candidate said ``Mined 0 tasks from 3 candidates`` and ``No task kept: the exit status is 1`` over the
tasks earlier mines left in ``tasks.jsonl``; ``Candidates: reused 0`` stood beside tasks kept by earlier mines,
whose records this mine never reached. On one tiny repository mined once (module scope): two tasks and one
candidate that passes without its change; the later mines reuse every record and run no test."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.e2e_repo import homefield
from helpers.gitrepo import GitRepo

from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow

ARGS = ("mine", "--stability-runs", "1", "--sandbox", "none", "-n", "0")


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The repository after a first mine (2 tasks kept, 1 dropped), and the dropped candidate's id."""
    repo = GitRepo.init(tmp_path_factory.mktemp("selective") / "repo")
    repo.write(".homefield.yml", f"test_cmd: {json.dumps(f'{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}')}\n")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/base.py", "def base():\n    return 1\n")
    repo.write("tests/__init__.py", "")
    repo.commit("Start the package with a base function")
    repo.write("pkg/f1.py", "def f1():\n    return 1\n")
    repo.write("tests/test_f1.py", "from pkg.f1 import f1\n\n\ndef test_f1():\n    assert f1() == 1\n")
    repo.commit("Add function f1 returning the number 1")
    repo.write("pkg/base.py", "def base():\n    \"\"\"The base number.\"\"\"\n    return 1\n")
    repo.write("tests/test_base.py", "from pkg.base import base\n\n\ndef test_base():\n    assert base() == 1\n")
    dropped = repo.commit("Document the base function and test what it returns")
    repo.write("pkg/f2.py", "def f2():\n    return 2\n")
    repo.write("tests/test_f2.py", "from pkg.f2 import f2\n\n\ndef test_f2():\n    assert f2() == 2\n")
    repo.commit("Add function f2 returning the number 2")
    first = homefield(repo.path, *ARGS)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "Mined 2 tasks from 3 candidates" in first.stdout, first.stdout
    assert "passes without change 1" in first.stdout, first.stdout
    return repo.path, dropped[:12]


def _tasks(repo: Path) -> list[str]:
    return [t["id"] for t in read_jsonl(repo / ".homefield" / "tasks.jsonl")]


@pytest.mark.parametrize("reverify", [False, True], ids=["reused", "reverify"])
def test_a_k_mine_of_one_dropped_candidate_says_what_it_did_and_what_the_file_holds(
        mined: tuple[Path, str], reverify: bool) -> None:
    repo, dropped = mined
    before = _tasks(repo)
    proc = homefield(repo, *ARGS, *(["--reverify"] if reverify else []), "-k", dropped)
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr  # a verdict on what -k selected; the task set is whole
    assert (f"Mined 0 tasks from 1 candidate selected by -k {dropped} (of 3 candidates frozen; 4 commits "
            "examined); .homefield/tasks.jsonl holds 2 tasks") in out, out
    assert f"No task kept by this mine (1 candidate selected by -k {dropped}); tasks.jsonl holds 2 tasks: the " \
           "exit status is 0." in out, out
    assert "No task kept: the exit status is 1" not in out and "from 3 candidates" not in out, out
    assert _tasks(repo) == before
    if reverify:  # --reverify reuses nothing, so no record is said to wait
        assert "Candidates: reused 0, verified 1\n" in out, out
    else:  # the 2 tasks' records were not reached by this mine: said, not counted as reused
        assert ("Candidates: reused 1, verified 0 (earlier verification records of the same inputs; --reverify "
                "runs them again); 2 candidates this mine did not reach have earlier records (2 of them tasks in "
                "tasks.jsonl), reused by a mine that reaches them") in out, out


def test_a_k_mine_that_keeps_nothing_over_an_empty_task_file_still_exits_1(mined: tuple[Path, str],
                                                                             tmp_path: Path) -> None:
    repo, dropped = mined
    tasks = repo / ".homefield" / "tasks.jsonl"
    saved = tasks.read_text()
    tasks.write_text("")
    try:
        proc = homefield(repo, *ARGS, "-k", dropped)
    finally:
        tasks.write_text(saved)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "No task kept: the exit status is 1." in proc.stdout, proc.stdout


def test_a_bounded_mine_says_the_earlier_records_it_did_not_reach(mined: tuple[Path, str]) -> None:
    """--stop-after-tasks 1, newest first: the newest candidate (a task) is reused, the other two are not reached;
    the line says so beside "reused 1" (nu41, more-itertools: "reused 0" beside "2 kept from earlier mines")."""
    repo, _ = mined
    proc = homefield(repo, *ARGS, "--stop-after-tasks", "1")
    out = proc.stdout
    assert "tasks.jsonl is partial (1 task from the 1 verified, 1 kept from earlier mines)" in out, out
    assert ("Candidates: reused 1, verified 0 (earlier verification records of the same inputs; --reverify runs "
            "them again); 2 candidates this mine did not reach have earlier records (1 of them a task in "
            "tasks.jsonl), reused by a mine that reaches them") in out, out


def test_a_bounded_k_mine_counts_what_k_selected(mined: tuple[Path, str]) -> None:
    """-k of the two tasks with --stop-after-tasks 1: the newest is reused and kept, the other not verified; the
    lines count the 2 selected, never the 3 frozen ("2 of 3 candidates not verified" was 1 too many)."""
    repo, _ = mined
    f2, f1 = _tasks(repo)  # newest first
    proc = homefield(repo, *ARGS, "--stop-after-tasks", "1", "-k", f"{f1} or {f2}")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert (f"Mined 1 task from 1 of 2 candidates selected by -k '{f1} or {f2}' (of 3 candidates frozen; 4 commits "
            "examined); .homefield/tasks.jsonl holds 2 tasks") in out, out
    assert "Stopped: --stop-after-tasks 1 reached; 1 of 2 candidates not verified: tasks.jsonl is partial" in out, out
