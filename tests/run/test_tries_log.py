"""``tries.jsonl`` lines (docs/contracts.md §4): one writer for a run's and an ablation's attempt items."""

from __future__ import annotations

from pathlib import Path

from pytest_homefield.run.tries_log import TryLog
from pytest_homefield.store import read_jsonl


def test_a_start_and_one_end_per_attempt_item_with_the_variant_of_an_ablation(tmp_path: Path) -> None:
    run = TryLog(tmp_path / "run.jsonl", "S1")
    run.event("tasks.jsonl::t1::cmd[2]", "start")
    run.event("tasks.jsonl::t1::cmd[2]", "end")
    run.event("tasks.jsonl::t1::cmd[2]", "end")  # a second report of the item (teardown) is no second end
    run.event("tasks.jsonl::t1", "start")  # not an attempt item
    run.event("tasks.jsonl::t1::cmd[x]", "start")
    assert list(read_jsonl(tmp_path / "run.jsonl")) == [
        {"task_id": "t1", "agent": "cmd", "attempt": 2, "event": "start", "session": "S1"},
        {"task_id": "t1", "agent": "cmd", "attempt": 2, "event": "end", "session": "S1"}]
    ablation = TryLog(tmp_path / "ablate.jsonl", "S2")
    ablation.event("CLAUDE.md::rule-3::t2::claude[1]", "start", variant=True)
    ablation.event("tasks.jsonl::t1::cmd[2]", "start", variant=True)  # a run's id has no variant
    assert list(read_jsonl(tmp_path / "ablate.jsonl")) == [
        {"task_id": "t2", "agent": "claude", "attempt": 1, "variant": "rule-3", "event": "start", "session": "S2"}]


def test_a_linked_tries_file_is_never_written_through_and_said_once(tmp_path: Path) -> None:
    """fix45: graded code under ``--sandbox none`` replaced a run's ``tries.jsonl`` with a link to a file of the
    user. Before: the try lines were appended to that file (outside ``.homefield``), silently. Now nothing is
    written there and the session says so once, in one line."""
    from pytest_homefield.sandbox import phases

    user_file = tmp_path / "notes.txt"
    user_file.write_text("mine\n")
    path = tmp_path / "runs" / "r" / "tries.jsonl"
    path.parent.mkdir(parents=True)
    path.symlink_to(user_file)
    said: list[str] = []
    phases.set_notice(said.append)
    try:
        log = TryLog(path, "S1")
        log.event("tasks.jsonl::t1::cmd[1]", "start")
        log.event("tasks.jsonl::t1::cmd[1]", "end")
    finally:
        phases.set_notice(None)
    assert user_file.read_text() == "mine\n" and path.is_symlink()
    assert said == [f"homefield: {path}: a symlink, never followed; tries are not logged (a try an interruption "
                    "cuts short is then not counted as one)"], said
