"""``--adaptive``'s waiting for the rounds before (:mod:`pytest_homefield.run.rounds`), with a fake clock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_homefield.records import Result, load_results
from pytest_homefield.run.bookkeeping import done_keys
from pytest_homefield.run.rounds import adaptive_refusal, not_needed_result, wait_for_rounds

START = "2026-01-01T00:00:00.000+00:00"


def _line(task: str, agent: str, n: int, started: str = "2026-01-01T00:00:01.000+00:00") -> str:
    return json.dumps({"task_id": task, "agent": agent, "attempt": n, "variant": "base", "outcome": "solved",
                       "started_at": started}) + "\n"


class Clock:
    def __init__(self) -> None:
        self.t = 0.0
        self.sleeps = 0

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.t += s
        self.sleeps += 1


def test_waits_until_every_key_is_recorded_this_session(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(_line("t1", "a", 1, started="2025-12-31T23:00:00+00:00"))  # an earlier session's record
    clock = Clock()
    calls = []

    def sleep(s: float) -> None:
        clock.sleep(s)
        calls.append(s)
        if len(calls) == 3:  # the record arrives while waiting
            with path.open("a") as f:
                f.write(_line("t1", "a", 1))

    recs = wait_for_rounds(path, {("t1", "a", 1)}, session_start=START, stop=lambda: None, stall_s=100,
                           clock=clock, sleep=sleep)
    assert len(calls) == 3 and len(recs) == 2


def test_wait_ends_on_a_stop_or_a_stall(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    clock = Clock()
    assert wait_for_rounds(path, {("t1", "a", 1)}, session_start=START, stop=lambda: "budget spent: 1 of 1 USD",
                           stall_s=100, clock=clock, sleep=clock.sleep) == []
    assert clock.sleeps == 0
    wait_for_rounds(path, {("t1", "a", 1)}, session_start=START, stop=lambda: None, stall_s=10, clock=clock,
                    sleep=clock.sleep)
    assert 10 <= clock.t <= 10.5
    # the missing records are all of agents that start no further attempt (their budget shares spent)
    path.write_text(_line("t1", "a", 1))
    clock = Clock()
    assert len(wait_for_rounds(path, {("t1", "a", 1), ("t1", "b", 1), ("t2", "b", 1)}, session_start=START,
                               stop=lambda: None, stopped=lambda agent: agent == "b", stall_s=100, clock=clock,
                               sleep=clock.sleep)) == 1
    assert clock.sleeps == 0


def test_not_needed_record_is_done_and_unscored(tmp_path: Path) -> None:
    r = not_needed_result("r1", "t1", "a", 2, "settled at look 1: a vs b (difference)")
    assert r.outcome == "not_needed" and not r.scored and not r.solved
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(r.to_dict()) + "\n")
    assert [x.outcome for x in load_results(path)] == ["not_needed"]
    assert done_keys(path) == {("t1", "a", 2)}  # --resume never redoes it
    assert isinstance(Result.from_dict(r.to_dict()), Result)


@pytest.mark.usefixtures("cli_spelling")
def test_refusals() -> None:
    assert adaptive_refusal(shard=None, dist="load") is None and adaptive_refusal(shard=None, dist=None) is None
    assert "--shard" in str(adaptive_refusal(shard="1/2", dist=None))
    assert "--dist load" in str(adaptive_refusal(shard=None, dist="worksteal"))
    assert "share" in str(adaptive_refusal(shard=None, dist="load", shared=False))
