"""End to end with the real uv, offline: a commit that adds a dependency is a ``dependency_change``
drop by default and a task with ``--env uv`` (red in the commit's environment, oracle solves it);
an unresolvable dependency is ``setup_failed`` with uv's message; ``homefield envs`` lists and prunes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.bwrap import bwrap_works
from helpers.e2e_repo import cli_env
from helpers.env_repo import build_env_repo, build_find_links, offline_env

from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow


def homefield(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``homefield ARGS`` in ``repo``: :func:`cli_env` (this machine's unused pytest plugins blocked in the
    homefield session, about 0.7 s of CPU each; the repository's test runs never see it) plus ``env``."""
    full = cli_env()
    return subprocess.run([sys.executable, "-m", "pytest_homefield.cli", *args], cwd=repo, env={**full, **env},
                          capture_output=True, text=True, timeout=600)


def verified(repo: Path) -> dict[str, dict]:
    mine = sorted((repo / ".homefield" / "mine").iterdir())[-1]
    return {r["subject"]: r for r in read_jsonl(mine / "results.jsonl")}


def test_dependency_changes_become_tasks_with_env_uv(tmp_path: Path) -> None:
    repo = build_env_repo(tmp_path / "repo").path
    env = offline_env(build_find_links(tmp_path / "links"), tmp_path / "cache")

    plain = homefield(repo, env, "mine", "--stability-runs", "1", "--list-candidates")
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "0 candidates from 3 commits; rejected: dependency change 2, root commit 1" in plain.stdout, plain.stdout

    proc = homefield(repo, env, "mine", "--env", "uv", "--stability-runs", "1", "-v")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    recs = verified(repo)
    double = recs["Double numbers with the hfdep package"]
    assert double["reason"] is None, double
    task = double["task"]
    assert task["FAIL_TO_PASS"] == ["tests/test_double.py::test_double"]
    assert task["env"]["key"] == double["env"]["key"] and task["env"]["groups"] == ["test"]
    assert double["dependency_files"] == ["pyproject.toml"] and "pyproject.toml" in task["gold_patch"]
    triple = recs["Triple numbers with the hfmissing package"]
    assert triple["reason"] == "setup_failed" and "hfmissing" in triple["detail"], triple
    assert triple["detail"].startswith("environment: No solution found when resolving dependencies")
    assert "Initial project with add" not in recs  # the root commit has no parent state: dropped at the scan
    assert "Environments: 1 distinct, 1 built" in out and "1 failed to build" in out, out

    run = homefield(repo, env, "run", "--agent", "oracle", "--attempts", "1")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    runs = sorted((repo / ".homefield" / "runs").iterdir())[-1]
    results = list(read_jsonl(runs / "results.jsonl"))
    outcomes = {r["task_id"]: r["outcome"] for r in results}
    assert outcomes == {task["id"]: "solved"}, outcomes
    # the default sandbox (auto): where bubblewrap works, mining and grading ran inside it, with the
    # environment from the user cache bound read-only
    assert {r["test_sandbox"] for r in results} == {"bwrap" if bwrap_works() else "none"}

    listed = homefield(repo, env, "envs")
    assert listed.returncode == 0 and "1 environment" in listed.stdout, listed.stdout + listed.stderr
    pruned = homefield(repo, env, "envs", "--prune")
    assert "removed 0" in pruned.stdout, pruned.stdout  # it is used by a task of this repository
