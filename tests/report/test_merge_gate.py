"""report/merge (shards reported together) and report/gate (--fail-if-worse-than), on run folders
written here (no agents run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.errors import MergeError
from pytest_homefield.layout import write_meta
from pytest_homefield.report.gate import GateError, worse_than
from pytest_homefield.report.shard_checks import check_runs
from pytest_homefield.store import append_jsonl


def _run(root: Path, run_id: str, outcomes: dict[tuple[str, int], str], *, shard: str | None = None,
         digest: str = "d1", agent: str = "a") -> Path:
    d = root / run_id
    meta: dict[str, Any] = {"run_id": run_id, "created_at": "2026-12-01T00:00:00+00:00", "tasks_digest": digest,
                            "attempts": 1, "agents": [{"name": agent, "spec": "sim:0.5"}], "shard": shard}
    write_meta(d, meta)
    for (task, attempt), outcome in outcomes.items():
        append_jsonl(d / "results.jsonl", {
            "schema_version": 1, "run_id": run_id, "task_id": task, "agent": agent, "attempt": attempt,
            "variant": "base", "outcome": outcome, "solved": outcome == "solved", "scored": outcome != "infra",
            "wall_s": 1.0, "test_s": 0.5, "started_at": "x", "finished_at": "y"})
    return d


def test_different_task_sets_are_refused(tmp_path: Path) -> None:
    a = _run(tmp_path, "r1", {("t1", 1): "solved"})
    b = _run(tmp_path, "r2", {("t2", 1): "solved"}, digest="d2")
    with pytest.raises(MergeError, match="runs r1 and r2 are over different task sets"):
        check_runs([a, b])


def test_missing_shards_are_named(tmp_path: Path) -> None:
    runs = [_run(tmp_path, f"s{k}", {(f"t{k}", 1): "solved"}, shard=f"{k}/4") for k in (1, 2, 4)]
    assert check_runs(runs).incomplete == ["incomplete: shard 3/4 missing"]
    assert check_runs([*runs, _run(tmp_path, "s3", {("t3", 1): "solved"}, shard="3/4")]).incomplete == []


def test_a_key_in_two_shards_is_reconciled_or_refused(tmp_path: Path) -> None:
    one = _run(tmp_path, "s1", {("t1", 1): "solved", ("t2", 1): "tests_failed"}, shard="1/2")
    two = _run(tmp_path, "s2", {("t2", 1): "tests_failed", ("t3", 1): "solved"}, shard="2/2")
    assert check_runs([one, two]).reconciled == 1
    bad = _run(tmp_path, "s2b", {("t1", 1): "timeout"}, shard="2/2")
    with pytest.raises(MergeError, match=r"t1 a#1 is in runs s1 \(solved\) and s2b \(timeout\)"):
        check_runs([one, bad])


def test_shards_of_different_splits_are_refused(tmp_path: Path) -> None:
    with pytest.raises(MergeError, match="shards of different splits"):
        check_runs([_run(tmp_path, "x", {}, shard="1/2"), _run(tmp_path, "y", {}, shard="2/3")])


def test_gate_fails_only_when_significantly_worse(tmp_path: Path) -> None:
    tasks = [f"t{i}" for i in range(8)]
    base = _run(tmp_path, "base", {(t, 1): "solved" for t in tasks})
    worse = _run(tmp_path, "worse", {(t, 1): "tests_failed" for t in tasks})
    (g,) = worse_than([worse], base)
    assert g.worse and g.test == "mcnemar" and g.n_tasks == 8 and g.p_value < 0.05
    assert g.text.startswith("gate a: pass@1 0.00 vs 1.00 in baseline base on 8 shared tasks (delta -1.00, mcnemar")
    assert g.text.endswith("WORSE: the gate fails")
    slightly = _run(tmp_path, "slightly", {(t, 1): "solved" if t != "t0" else "timeout" for t in tasks})
    (g,) = worse_than([slightly], base)
    assert not g.worse and g.text.endswith("not significantly worse")
    (g,) = worse_than([worse], base, alpha=0.001)  # McNemar p = 2/2^8 = 0.0078 is not below 0.001
    assert not g.worse


def test_gate_baseline_may_be_a_folder_of_shards(tmp_path: Path) -> None:
    tasks = [f"t{i}" for i in range(6)]
    folder = tmp_path / "baseline"
    for k in (1, 2):
        _run(folder, f"s{k}", {(t, 1): "solved" for t in tasks[k - 1::2]}, shard=f"{k}/2")
    cand = _run(tmp_path, "c", {(t, 1): "tests_failed" for t in tasks})
    (g,) = worse_than([cand], folder)
    assert g.worse and g.n_tasks == 6 and g.baseline_run == "baseline"


def test_gate_errors(tmp_path: Path) -> None:
    cand = _run(tmp_path, "c", {("t", 1): "solved"})
    with pytest.raises(GateError, match="no baseline run 'nope'"):
        worse_than([cand], tmp_path / "nope")
    other = _run(tmp_path, "o", {("t", 1): "solved"}, agent="b")
    with pytest.raises(GateError, match="no agent scored in both runs"):
        worse_than([cand], other)
