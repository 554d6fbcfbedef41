"""``--adaptive`` end to end (issue 32): rounds under ``-n 2``, a settled pair skipping its later
attempts (recorded ``not_needed``), the budget stopping cleanly, ``--resume`` finishing the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.e2e_repo import copy_mined, homefield

from pytest_homefield.store import read_jsonl

# two candidates that change nothing (tied on every task: futile at look 1) and cost 0.01 USD each
_CMD = "cmd:echo '{\"cost_usd\": 0.01}'"


@pytest.mark.slow
def test_adaptive_rounds_skip_settled_pair_and_resume_finishes(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    refused = homefield(repo, "run", "--agent", "oracle", "--adaptive", "--shard", "1/2", "-n", "0")
    assert refused.returncode == 4 and "--adaptive cannot run with --shard" in refused.stdout + refused.stderr
    assert not (repo / ".homefield" / "runs").exists() or not any((repo / ".homefield" / "runs").iterdir())
    args = ("run", "--agent", f"a={_CMD}", "--agent", f"b={_CMD}", "--agent", "sim:0.5", "--attempts", "3",
            "--adaptive", "--sandbox", "none", "-n", "2")
    first = homefield(repo, *args, "--budget", "0.02", "--run-id", "adp")
    assert first.returncode == 0, first.stdout + first.stderr
    run = repo / ".homefield" / "runs" / "adp"
    assert "budget spent" in json.loads((run / "meta.json").read_text())["cut_short"]
    n_tasks = len(list(read_jsonl(repo / ".homefield" / "tasks.jsonl")))
    round1 = [r for r in read_jsonl(run / "results.jsonl") if r["agent"] in ("a", "b") and r["attempt"] == 1]
    assert len(round1) < n_tasks * 2  # round 1 not finished: a and b each stopped at its share of the budget

    second = homefield(repo, *args, "--budget", "1", "--run-id", "adp", "--resume")
    out = second.stdout + second.stderr
    assert second.returncode == 0, out
    last = {(r["task_id"], r["agent"], r["attempt"]): r for r in read_jsonl(run / "results.jsonl")}
    assert len(last) == n_tasks * 3 * 3  # every attempt has its record
    for (_task, agent, attempt), r in last.items():
        if attempt == 1:
            assert r["outcome"] == ("empty_patch" if agent in "ab" else r["outcome"]) and r["scored"]
        else:  # a vs b settled at look 1 (all ties: futile); sim:0.5 is a reference agent: round 1 only
            assert r["outcome"] == "not_needed" and not r["scored"], r
            assert ("settled at look 1: a vs b (futility" in r["error"]) if agent in "ab" else (
                r["error"] == "reference agent: round 1 only")
    report = json.loads((run / "report.json").read_text())
    pair = report["adaptive"]["pairs"][0]
    assert (pair["a"], pair["b"], pair["look"]) == ("a", "b", 1) and pair["why"].startswith("futility")
    assert report["adaptive"]["saved"]["a"]["attempts"] == n_tasks * 2
    assert report["adaptive"]["saved"]["a"]["usd"] == pytest.approx(n_tasks * 2 * 0.01)
    assert "a vs b" in out and "stopped at look 1" in out
