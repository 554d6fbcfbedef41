"""report/merge (shards reported together) and report/gate (--fail-if-worse-than), on run folders
written here (no agents run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.errors import MergeError
from pytest_homefield.layout import write_meta
from pytest_homefield.report.gate import GateError, gate_summary, worse_than
from pytest_homefield.report.shard_checks import check_runs
from pytest_homefield.store import append_jsonl


def _run(root: Path, run_id: str, outcomes: dict[tuple[str, int], str], *, shard: str | None = None,
         digest: str = "d1", agent: str = "a") -> Path:
    d = root / run_id
    meta: dict[str, Any] = {"run_id": run_id, "created_at": "2026-12-01T00:00:00+00:00", "tasks_digest": digest,
                            "attempts": 1, "agents": [{"name": agent, "spec": "sim:0.5"}], "shard": shard,
                            **({"split": "sha256"} if shard else {})}
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


def test_a_shard_claiming_tasks_outside_its_share_is_refused(tmp_path: Path) -> None:
    """hatk36: with this repository's tasks (t1 t5 t3 t7, by id hash 1/2 {t1, t3}, 2/2 {t5, t7}) a shard's task_ids
    are its share: s2 claiming t1 (and solving it) was counted when s1 was not reported with it."""
    ids = ["t1", "t5", "t3", "t7"]

    def shard(run_id: str, k: int, outcomes: dict[tuple[str, int], str], task_ids: list[str], **meta: Any) -> Path:
        d = _run(tmp_path, run_id, outcomes, shard=f"{k}/2")
        write_meta(d, {**json.loads((d / "meta.json").read_text()), "task_ids": task_ids, "shard_of": ids, **meta})
        return d

    one = shard("s1", 1, {("t1", 1): "tests_failed", ("t3", 1): "solved"}, ["t1", "t3"])
    two = shard("s2", 2, {("t5", 1): "solved", ("t7", 1): "solved"}, ["t5", "t7"])
    three = shard("s3", 1, {("t3", 1): "solved"}, ["t1", "t3"])
    assert check_runs([one, two], ids, "d1").incomplete == []
    claims = shard("c2", 2, {("t5", 1): "solved", ("t1", 1): "solved"}, ["t1", "t5", "t7"])
    # shard38: refused by its id alone, with or without this repository's tasks (before: taken at its word without)
    for runs, repo in (([three, claims], ids), ([one, claims], ids), ([three, claims], None), ([claims], None)):
        with pytest.raises(MergeError, match=r"run c2: its meta.json claims task t1, which is shard 1/2's \(a task's "
                                             r"shard is its id's sha256 mod 2, plus 1\), not shard 2/2's"):
            check_runs(runs, repo, "d1" if repo else None)
    other = shard("o2", 2, {("t5", 1): "solved"}, ["t5"], shard_of=["t1", "t5", "t3"])  # its own selection
    with pytest.raises(MergeError, match="run s1 and run o2 split different selections"):
        check_runs([one, other], ids, "d1")
    with pytest.raises(MergeError, match="run s1 is shard 1/2 of another tasks.jsonl"):
        check_runs([one, two], ids, "d2")
    bare = _run(tmp_path, "b2", {("t1", 1): "solved"}, shard="2/2")  # no task_ids: not a plan to take
    with pytest.raises(MergeError, match="run b2: its meta.json task_ids is not a list"):
        check_runs([one, bare], ids, "d1")
    # shard38: a shard of the split by position (no split: "sha256") is refused whole, alone or not
    old = shard("p1", 1, {("t1", 1): "solved"}, ["t1", "t3"], split=None)
    for runs in ([old], [old, two]):
        with pytest.raises(MergeError, match=r"run p1: a shard split by position, the rule before shard38"):
            check_runs(runs, ids, "d1")


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


def _multi(root: Path, run_id: str, solved: dict[str, list[int]]) -> Path:
    """A run folder of one attempt per task for several agents: ``solved[agent][i]`` is task ``t{i}``."""
    d = root / run_id
    write_meta(d, {"run_id": run_id, "created_at": "2026-12-01T00:00:00+00:00", "tasks_digest": "d1",
                   "attempts": 1, "agents": [{"name": a, "spec": f"cmd:{a}"} for a in solved]})
    for agent, xs in solved.items():
        for i, x in enumerate(xs):
            append_jsonl(d / "results.jsonl", {
                "schema_version": 1, "run_id": run_id, "task_id": f"t{i}", "agent": agent, "attempt": 1,
                "variant": "base", "outcome": "solved" if x else "tests_failed", "solved": bool(x),
                "scored": True, "wall_s": 1.0, "test_s": 0.5, "started_at": "x", "finished_at": "y"})
    return d


#: issue 32: 30 tasks x 1 attempt, the candidate loses 10 (solved in the baseline only) and wins 3
LOSES_10_WINS_3 = ([0] * 10 + [1] * 3 + [0] * 17, [1] * 10 + [0] * 3 + [0] * 17)


def test_gate_is_one_sided_at_alpha(tmp_path: Path) -> None:
    cand, base = LOSES_10_WINS_3
    (g,) = worse_than([_multi(tmp_path, "c", {"a": cand})], _multi(tmp_path, "b", {"a": base}))
    # the two-sided exact p is 0.092 (the old gate passed); one-sided P(Bin(13, 1/2) <= 3) = 378/8192
    assert g.p_value == pytest.approx(378 / 8192) and round(g.p_value, 3) == 0.046
    assert g.worse and g.family == 1 and g.p_adjusted == g.p_value and g.delta == pytest.approx(-7 / 30)
    assert g.method == "one-sided exact McNemar, Holm over 1 agent, alpha 0.05"
    assert "mcnemar one-sided p=0.0461, alpha=0.05): WORSE: the gate fails" in g.text
    assert gate_summary([g]) == "gate: fail (a worse than b; one-sided exact McNemar, Holm over 1 agent, alpha 0.05)"


def test_gate_is_holm_adjusted_across_candidates(tmp_path: Path) -> None:
    cand, base = LOSES_10_WINS_3
    same = [1] * 15 + [0] * 15
    c = _multi(tmp_path, "c", {"a": cand, "b": same})
    b = _multi(tmp_path, "base", {"a": base, "b": same})
    ga, gb = worse_than([c], b)
    # a's one-sided 0.046 is the smaller of two: Holm doubles it to 0.092, above alpha: the gate passes
    assert ga.p_value == pytest.approx(378 / 8192) and ga.p_adjusted == pytest.approx(2 * 378 / 8192)
    assert ga.family == gb.family == 2 and not ga.worse and not gb.worse
    assert "Holm-adjusted p=0.0923 over 2 agents" in ga.text and ga.text.endswith("not significantly worse")
    assert gate_summary([ga, gb]) == "gate: pass (one-sided exact McNemar, Holm over 2 agents, alpha 0.05)"
    # with several attempts the same one-sided sign-flip test (three identical attempts: the same p)
    c3 = _run(tmp_path, "c3", {(f"t{i}", k): "solved" if x else "tests_failed" for i, x in enumerate(cand)
                               for k in (1, 2, 3)})
    b3 = _run(tmp_path, "b3", {(f"t{i}", k): "solved" if x else "tests_failed" for i, x in enumerate(base)
                               for k in (1, 2, 3)})
    (g3,) = worse_than([c3], b3)
    assert g3.test == "permutation" and g3.p_value == pytest.approx(378 / 8192) and g3.worse
    assert g3.method == "one-sided paired sign-flip permutation, Holm over 1 agent, alpha 0.05"
