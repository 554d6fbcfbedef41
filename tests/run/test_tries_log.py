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
