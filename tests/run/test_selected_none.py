"""A run or verify whose ``-k`` / ``-m`` selects no attempt says so in one line, and where ``--max-tasks`` kept
the tasks the expression chose among, that an older task is not reached (nu32: ``homefield verify --max-tasks 3
-k <the 8th task>`` ran nothing, exited 5 and said only that the task set was partial)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.e2e_repo import copy_mined, homefield

from pytest_homefield.run.run_plugin import selected_none_note
from pytest_homefield.settings_table import spelled_for
from pytest_homefield.store import read_jsonl


@pytest.mark.parametrize("front, cap", [("cli", "--max-tasks"), ("pytest", "--homefield-max-tasks")])
def test_the_line_names_the_expressions_and_the_max_tasks_cut(front: str, cap: str) -> None:
    """The option is named for the front end in use (ux65)."""
    ids = ["aa01", "aa02", "bb03", "cc04", "dd05"]
    cut = {"n": 2, "of": 5}
    head = f"-k 'cc04' selects none of the 2 tasks {cap} 2 kept (the newest 2 of the 5 in tasks.jsonl)"
    with spelled_for(front):
        assert selected_none_note("cc04", "", 2, cut, ids) == (
            f"{head}: task cc04 is number 4 of the 5 (newest first): {cap} 4 reaches it, or leave {cap} out")
    if front == "pytest":
        return
    with spelled_for(front):
        _the_rest(ids, cut)


def _the_rest(ids: list[str], cut: dict[str, int]) -> None:
    assert selected_none_note("B0", "", 2, cut, ids).endswith(  # a part of an id, case aside, as pytest's -k
        ": 'B0' is in task bb03, number 3 of the 5 (newest first): --max-tasks 3 reaches it, or leave --max-tasks out")
    assert selected_none_note("zz", "", 2, cut, ids).endswith(
        "(the newest 2 of the 5 in tasks.jsonl); no task id in tasks.jsonl holds 'zz'")
    # an expression is not looked up: what it matches is pytest's to say
    assert selected_none_note("cc04 and not x", "", 2, cut, ids).endswith(
        "(the newest 2 of the 5 in tasks.jsonl): raise --max-tasks or leave it out to reach an older task")
    assert selected_none_note("abc", "slow", 8, None, ids) == (
        "-k 'abc' and -m 'slow' select none of the 8 tasks of this run")
    assert selected_none_note("zz", "", 5, None, ids) == (
        "-k 'zz' selects none of the 5 tasks of this run; no task id in tasks.jsonl holds 'zz'")
    assert selected_none_note("", "", 1, {"n": 1, "of": 1}) == (  # no cut: --max-tasks 1 of 1 task
        "the selection (-k, -m, --lf or node ids) selects none of the 1 task of this run")


@pytest.mark.slow
def test_verify_and_run_say_the_k_expression_selected_none_of_the_kept_tasks(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    ids = [t["id"] for t in read_jsonl(repo / ".homefield" / "tasks.jsonl")]
    assert len(ids) > 2
    proc = homefield(repo, "verify", "-n", "0", "--max-tasks", "2", "-k", ids[-1])
    out = proc.stdout + proc.stderr
    assert proc.returncode == 5, out  # pytest's "no tests collected" stays (docs/contracts.md §4)
    assert (f"homefield: -k '{ids[-1]}' selects none of the 2 tasks --max-tasks 2 kept (the newest 2 of the "
            f"{len(ids)} in tasks.jsonl): task {ids[-1]} is number {len(ids)} of the {len(ids)} (newest first): "
            f"--max-tasks {len(ids)} reaches it, or leave --max-tasks out") in out, out
    proc = homefield(repo, "run", "--agent", "oracle", "--agent", "noop", "--attempts", "1", "-n", "0",
                     "-k", "no-such-task")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 5, out
    assert (f"homefield: -k 'no-such-task' selects none of the {len(ids)} tasks of this run; no task id in "
            "tasks.jsonl holds 'no-such-task'") in out, out
    proc = homefield(repo, "run", "--agent", "oracle", "--attempts", "1", "-n", "0", "-k", ids[0])
    assert proc.returncode == 0 and "selects none" not in proc.stdout, proc.stdout + proc.stderr
