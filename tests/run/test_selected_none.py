"""A run or verify whose ``-k`` / ``-m`` selects no attempt says so in one line, and where ``--max-tasks`` kept
the tasks the expression chose among, that an older task is not reached (nu32: ``homefield verify --max-tasks 3
-k <the 8th task>`` ran nothing, exited 5 and said only that the task set was partial)."""

from __future__ import annotations

from pathlib import Path

from helpers.e2e_repo import copy_mined, homefield

from pytest_homefield.run.run_plugin import selected_none_note
from pytest_homefield.store import read_jsonl


def test_the_line_names_the_expressions_and_the_max_tasks_cut() -> None:
    assert selected_none_note("abc", "", 3, {"n": 3, "of": 8}) == (
        "-k 'abc' selects none of the 3 tasks --max-tasks 3 kept (the newest 3 of the 8 in tasks.jsonl): "
        "raise --max-tasks or leave it out to reach an older task")
    assert selected_none_note("abc", "slow", 8, None) == "-k 'abc' and -m 'slow' select none of the 8 tasks of this run"
    assert selected_none_note("", "", 1, {"n": 1, "of": 1}) == (  # no cut: --max-tasks 1 of 1 task
        "the selection (-k, -m, --lf or node ids) selects none of the 1 task of this run")


def test_verify_and_run_say_the_k_expression_selected_none_of_the_kept_tasks(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    ids = [t["id"] for t in read_jsonl(repo / ".homefield" / "tasks.jsonl")]
    assert len(ids) > 2
    proc = homefield(repo, "verify", "-n", "0", "--max-tasks", "2", "-k", ids[-1])
    out = proc.stdout + proc.stderr
    assert proc.returncode == 5, out  # pytest's "no tests collected" stays (docs/contracts.md §4)
    assert (f"homefield: -k '{ids[-1]}' selects none of the 2 tasks --max-tasks 2 kept (the newest 2 of the "
            f"{len(ids)} in tasks.jsonl)") in out, out
    proc = homefield(repo, "run", "--agent", "oracle", "--agent", "noop", "--attempts", "1", "-n", "0",
                     "-k", "no-such-task")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 5, out
    assert f"homefield: -k 'no-such-task' selects none of the {len(ids)} tasks of this run" in out, out
    proc = homefield(repo, "run", "--agent", "oracle", "--attempts", "1", "-n", "0", "-k", ids[0])
    assert proc.returncode == 0 and "selects none" not in proc.stdout, proc.stdout + proc.stderr
