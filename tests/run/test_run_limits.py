"""Crash safety, budgets and rate limits of a run, end to end through the CLI."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.e2e_repo import cli_env, copy_mined, homefield, homefield_in_process

from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow


def n_tasks(repo: Path) -> int:
    return sum(1 for _ in read_jsonl(repo / ".homefield" / "tasks.jsonl"))


def test_sigkill_then_resume_loses_and_redoes_nothing(mined: Path, tmp_path: Path) -> None:
    """One run SIGKILLed at three moments in a chain: the run after 1 result, its resume after 3, that
    resume's resume after 6 (each killed session having written at least one result of its own), and a
    last resume to the end. At every kill the lines already written stay as they were; at the end
    every attempt has exactly one line (nothing lost, nothing redone)."""
    repo = copy_mined(mined, tmp_path / "repo")
    agent = "slow=cmd:sleep 0.4; echo '{\"cost_usd\": 0.01}'"
    run = ["run", "--agent", agent, "--agent", "oracle", "--attempts", "2", "--run-id", "k"]
    env = cli_env()
    results = repo / ".homefield" / "runs" / "k" / "results.jsonl"
    total = n_tasks(repo) * 2 * 2
    before: list[dict] = []
    for i, kill_after in enumerate((1, 3, 6)):
        # a fresh run first, then resumes; each at -n 2: the controller and its xdist workers are killed
        args = [sys.executable, "-m", "pytest_homefield.cli", *run, *(["--resume"] if i else []), "-n", "2"]
        proc = subprocess.Popen(args, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        target = max(kill_after, len(before) + 1)  # this session writes at least one result before its kill
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and sum(1 for _ in read_jsonl(results)) < target:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # the controller and its xdist workers, mid-run
        proc.wait()
        now = list(read_jsonl(results))
        assert len(now) >= target, (kill_after, len(now))
        assert len(now) < total, f"kill at {kill_after}: the run finished first; slow the agent down"
        assert now[: len(before)] == before, kill_after  # earlier lines untouched by the killed resume
        before = now
    proc2 = homefield(repo, *run, "--resume", "-n", "0")
    assert proc2.returncode == 0, proc2.stdout + proc2.stderr
    after = list(read_jsonl(results))
    keys = [(r["task_id"], r["agent"], r["attempt"]) for r in after]
    assert len(set(keys)) == total  # nothing lost
    assert len(keys) == total  # nothing redone: every finished attempt kept its one line
    assert after[: len(before)] == before  # earlier lines untouched


def test_run_budget_stops_starting_attempts(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    agent = "costly=cmd:echo '{\"cost_usd\": 0.02, \"input_tokens\": 1000, \"output_tokens\": 50}'"
    proc = homefield(repo, "run", "--agent", agent, "--attempts", "2", "--budget", "0.05", "--run-id", "b",
                     "-n", "0")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    recs = list(read_jsonl(repo / ".homefield" / "runs" / "b" / "results.jsonl"))
    assert len(recs) == 3  # 0.02 + 0.02 < 0.05 allows a third; 0.06 >= 0.05 stops the rest
    assert all(r["cost_usd"] == 0.02 and r["input_tokens"] == 1000 for r in recs)
    meta = json.loads((repo / ".homefield" / "runs" / "b" / "meta.json").read_text())
    assert meta["cut_short"] and "budget spent" in meta["cut_short"]
    assert "budget spent" in out
    assert "homefield run --resume --run-id b" in out


def test_rate_limit_stops_scheduling_and_resume_retries(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    flag = tmp_path / "limited"
    flag.write_text("1")
    # reports a rate limit while the flag file exists (the cmd protocol's "outcome" key), else does nothing
    agent = (f"lim=cmd:if [ -e {flag} ]; then echo '{{\"outcome\": \"rate_limited\"}}'; "
             "else echo '{\"cost_usd\": 0}'; fi")
    # --sandbox none: the agent reads a flag file of the test's, which a sandboxed agent cannot see
    proc = homefield(repo, "run", "--agent", agent, "--attempts", "1", "--run-id", "rl", "-n", "0",
                     "--sandbox", "none")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = repo / ".homefield" / "runs" / "rl" / "results.jsonl"
    recs = list(read_jsonl(results))
    assert [r["outcome"] for r in recs] == ["rate_limited"]  # nothing else was started
    assert "rate limited" in proc.stdout
    flag.unlink()
    proc = homefield(repo, "run", "--agent", agent, "--attempts", "1", "--run-id", "rl", "--resume", "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    latest = {(r["task_id"], r["attempt"]): r["outcome"] for r in read_jsonl(results)}
    assert len(latest) == n_tasks(repo) and set(latest.values()) == {"empty_patch"}


def test_plan_and_verify(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    proc = homefield(repo, "plan", "--agent", "oracle", "--agent", "claude:claude-sonnet-4-5", "--attempts", "2")
    assert proc.returncode == 0, proc.stderr
    assert f"Plan: {n_tasks(repo)} tasks × 2 agents × 2 attempts = {n_tasks(repo) * 4} agent runs" in proc.stdout
    assert "assumed (claude default; no earlier attempts)" in proc.stdout  # an estimate before any run
    proc = homefield(repo, "verify", "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"oracle solves all {n_tasks(repo)} tasks in this environment" in proc.stdout
    first = next(iter(read_jsonl(repo / ".homefield" / "tasks.jsonl")))["id"]
    # a selection says what it verified; --max-tasks takes the newest tasks, as run does
    proc = homefield(repo, "verify", "-n", "0", "-k", first, "--max-tasks", "2")
    assert f"oracle solves the 1 selected task (of {n_tasks(repo)}) in this environment" in proc.stdout, proc.stdout
    # issue 35: the header counted the attempts -k leaves out, and the progress line said "homefield run"
    assert re.search(r"homefield verify verify-\S+: 1 attempt \(1 task × oracle\), of 2 \(-k", proc.stdout), \
        proc.stdout
    assert "homefield verify 1/1 · solved 1" in proc.stdout and "homefield run " not in proc.stdout, proc.stdout
    proc = homefield_in_process(repo, "plan", "--agent", "oracle", "--attempts", "2")  # main(): plan had a process
    assert "exact: a reference agent spends nothing" in proc.stdout  # history or not, oracle costs nothing
