"""run/bookkeeping.py: run ids, ``meta.json``, resume checks and the attempts never redone
(contracts §4, §8)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_homefield.agents.reference import NoopAgent, OracleAgent, SimAgent
from pytest_homefield.errors import RunError
from pytest_homefield.layout import newest_run, read_meta, write_meta
from pytest_homefield.run.bookkeeping import build_meta, check_resume, done_keys, pick_run_id
from pytest_homefield.store import append_jsonl

AGENTS = [OracleAgent(name="oracle", spec="oracle"), SimAgent(name="s", spec="sim:0.5", p=0.5)]
SETTINGS = SimpleNamespace(timeout=900.0, budget=None, attempt_budget=1.5, allow_shell=False)


def _meta(**kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = dict(run_id="r1", agents=AGENTS, attempts=3, tasks_digest="d1", task_ids=["t1", "t2"],
                                created_at="2026-01-01T00:00:00+00:00", settings=SETTINGS)
    args.update(kw)
    return build_meta(**args)


def test_meta_round_trip(tmp_path: Path) -> None:
    assert read_meta(tmp_path / "none") == {}
    meta = _meta()
    write_meta(tmp_path / "r1", meta)
    assert read_meta(tmp_path / "r1") == json.loads(json.dumps(meta))
    assert meta["agents"] == [
        {"name": "oracle", "spec": "oracle", "version": AGENTS[0].version(), "model": None, "simulated": False,
         "hinted": False},
        {"name": "s", "spec": "sim:0.5", "version": AGENTS[1].version(), "model": None, "simulated": True,
         "hinted": False},
    ]
    assert (meta["attempts"], meta["tasks_digest"], meta["task_ids"]) == (3, "d1", ["t1", "t2"])
    assert meta["cut_short"] is None
    assert meta["limits"] == {"timeout_s": 900.0, "budget_usd": None, "attempt_budget_usd": 1.5, "allow_shell": False}
    assert set(meta["versions"]) == {"pytest-homefield", "pytest", "python", "platform"}


def test_an_agent_whose_version_fails_records_none() -> None:
    class Broken(NoopAgent):
        def version(self) -> str | None:
            raise OSError("no binary")

    assert _meta(agents=[Broken(name="b", spec="noop")])["agents"][0]["version"] is None


def _run(root: Path, name: str, created_at: str) -> None:
    write_meta(root / name, {"run_id": name, "created_at": created_at})


def test_newest_run_goes_by_created_at_and_skips_verify_runs(tmp_path: Path) -> None:
    assert newest_run(tmp_path / "runs") is None
    runs = tmp_path / "runs"
    _run(runs, "zzz-named", "2026-01-01T00:00:00+00:00")
    _run(runs, "20260102-000000-abcd", "2026-01-02T00:00:00+00:00")
    _run(runs, "verify-20260103-000000-abcd", "2026-01-03T00:00:00+00:00")
    (runs / "no-meta").mkdir()
    assert newest_run(runs) == "20260102-000000-abcd"


def test_pick_run_id(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    assert pick_run_id(runs, run_id=None, resume=False, new_id="fresh") == "fresh"
    assert pick_run_id(runs, run_id="mine", resume=False, new_id="fresh") == "mine"
    with pytest.raises(RunError, match=r"^--homefield-run-id 'a b' must match \[A-Za-z0-9_.-\]\+$"):
        pick_run_id(runs, run_id="a b", resume=False, new_id="fresh")
    with pytest.raises(RunError, match=f"^--homefield-resume: no run to resume in {runs}$"):
        pick_run_id(runs, run_id=None, resume=True, new_id="fresh")
    _run(runs, "old", "2026-01-01T00:00:00+00:00")
    with pytest.raises(RunError, match="^run 'old' already exists: add --homefield-resume"):
        pick_run_id(runs, run_id="old", resume=False, new_id="fresh")
    assert pick_run_id(runs, run_id=None, resume=True, new_id="fresh") == "old"
    assert pick_run_id(runs, run_id="old", resume=True, new_id="fresh") == "old"
    with pytest.raises(RunError, match="no run named 'gone'"):
        pick_run_id(runs, run_id="gone", resume=True, new_id="fresh")


def test_check_resume() -> None:
    meta = _meta()
    check_resume(meta, agents=AGENTS, attempts=3, tasks_digest="d1")
    with pytest.raises(RunError, match=r"agents differ from run r1: run has oracle=oracle, s=sim:0.5; "
                                       r"flags give oracle=oracle$"):
        check_resume(meta, agents=AGENTS[:1], attempts=3, tasks_digest="d1")
    with pytest.raises(RunError, match="run r1 has 3 attempts; flags give 5"):
        check_resume(meta, agents=AGENTS, attempts=5, tasks_digest="d1")
    with pytest.raises(RunError, match=r"tasks.jsonl changed since run r1 started \(digest d1 -> d2\)"):
        check_resume(meta, agents=AGENTS, attempts=3, tasks_digest="d2")


def test_done_keys_are_the_scored_base_attempts(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    assert done_keys(path) == set()
    for rec in [
        {"task_id": "t1", "agent": "a", "attempt": 1, "outcome": "solved"},
        {"task_id": "t1", "agent": "a", "attempt": 2, "outcome": "infra"},          # unscored: redone
        {"task_id": "t2", "agent": "a", "attempt": 1, "outcome": "rate_limited"},   # unscored: redone
        {"task_id": "t2", "agent": "a", "attempt": 1, "outcome": "tests_failed"},   # ... and then scored
        {"task_id": "t3", "agent": "a", "attempt": 1, "outcome": "solved"},
        {"task_id": "t3", "agent": "a", "attempt": 1, "outcome": "infra"},          # last line wins
        {"task_id": "t1", "agent": "a", "attempt": 1, "variant": "v2", "outcome": "solved"},
    ]:
        append_jsonl(path, {"run_id": "r", **rec})  # a result record always names its run
    assert done_keys(path) == {("t1", "a", 1), ("t2", "a", 1)}
