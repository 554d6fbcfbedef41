"""Bad inputs through the CLI, as a careless user gives them: one clear line, a non-zero exit, and
nothing already written lost or changed (issue 21). Each case states the exact line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.e2e_repo import cli_env, copy_mined, git, homefield, homefield_in_process
from helpers.shared_repo import built_once
from helpers.tmpfs import mounted_tmpfs

from pytest_homefield.store import read_jsonl, read_jsonl_lines

pytestmark = pytest.mark.slow


def last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
    return next((ln for ln in lines if ln.startswith(("ERROR:", "homefield"))), lines[-1] if lines else "")


def test_corrupt_task_records_are_refused_and_never_rewritten(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    tasks = repo / ".homefield" / "tasks.jsonl"
    good = tasks.read_text().splitlines()
    first = json.loads(good[0])
    cases = {
        "truncated": (good[1][: len(good[1]) // 2], "line 2: not valid JSON (truncated or garbage)"),
        "missing": (json.dumps({k: v for k, v in first.items() if k != "PASS_TO_PASS"} | {"id": "x1"}),
                    "line 2: field 'PASS_TO_PASS' is missing"),
        "version": (json.dumps({**first, "id": "x2", "schema_version": 2}),
                    "line 2: field 'schema_version' is 2; this version of homefield reads 1 only"),
    }
    for name, (line, message) in cases.items():
        tasks.write_text("\n".join([good[0], line, *good[2:]]) + "\n")
        before = tasks.read_bytes()
        run = homefield(repo, "run", "--agent", "oracle", "--attempts", "1", "-n", "0")
        assert run.returncode == 4 and last_line(run) == f"ERROR: pytest-homefield: {tasks}: {message}", name
        mine = homefield(repo, "mine", "--stability-runs", "1", "-n", "0")
        assert mine.returncode == 4 and last_line(mine) == f"ERROR: pytest-homefield: {tasks}: {message}", name
        assert tasks.read_bytes() == before, f"{name}: tasks.jsonl was rewritten"
    assert not (repo / ".homefield" / "runs").exists()


def test_run_options_are_checked_before_anything_is_spent(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    # the flags' own checks: before any session, one line naming the flag as typed, exit 2 (they exited 4
    # naming the --homefield-* option the command made); the session's checks name it as typed too
    cases = [
        (["--timeout", "nan"], 2, "homefield run: --timeout must be a finite number of seconds, got nan"),
        (["--fail-under", "1.5"], 2, "homefield run: --fail-under '1.5': RATE is a fraction between 0 and 1"),
        (["--fail-under", "nobody=0.5"], 4,
         "ERROR: --fail-under 'nobody=0.5': no agent named 'nobody' in this run (agents: oracle)"),
        (["--max-tasks", "0"], 2, "homefield run: --max-tasks must be at least 1, got 0"),
        (["--max-ta", "0"], 2, "homefield run: --max-ta must be at least 1, got 0"),
        (["--attempts", "x"], 2, "homefield run: argument --attempts: invalid int value: 'x' "
                                 "(see homefield run --help)"),
        (["--agent", "my agent=noop"], 4, "ERROR: agent name 'my agent' (in NAME=SPEC) must match "
                                          "[A-Za-z0-9_.-]+: letters, digits, '_', '.' and '-' only"),
    ]
    for extra, code, message in cases:
        proc = homefield(repo, "run", "--agent", "oracle", "--attempts", "1", "-n", "0", *extra)
        assert proc.returncode == code and last_line(proc) == message, (extra, proc.stdout + proc.stderr)
        assert len((proc.stdout + proc.stderr).strip().splitlines()) == 1 or code == 4, proc.stdout + proc.stderr
    assert not (repo / ".homefield" / "runs").exists()  # no run folder, no attempt
    (repo / ".homefield" / "tasks.jsonl").write_text("")
    proc = homefield(repo, "run", "--agent", "oracle", "-n", "0")
    assert proc.returncode == 4 and last_line(proc) == (
        f"ERROR: pytest-homefield: no tasks to run: {repo / '.homefield' / 'tasks.jsonl'} holds none "
        "(run `homefield mine`, or widen --since)")


def test_resume_checks_and_nothing_to_resume(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    base = ["run", "--agent", "noop", "--attempts", "1", "--run-id", "r", "-n", "0"]  # noop: nothing to grade
    first = homefield(repo, *base, "--max-tasks", "1")
    assert first.returncode == 0
    assert "homefield: Note: the task set is partial: --max-tasks 1 ran the first 1 of the " in first.stdout
    proc = homefield(repo, *base, "--max-tasks", "2", "--resume")
    assert proc.returncode == 4 and last_line(proc) == (
        "ERROR: --resume: run r ran 1 task; these flags select 2 (a changed --max-tasks or task "
        "filter); resume with the same selection or start a new run")
    proc = homefield(repo, *base, "--max-tasks", "1", "--resume")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "nothing to resume: every attempt of run r is already recorded" in proc.stdout
    results = repo / ".homefield" / "runs" / "r" / "results.jsonl"
    assert len(list(read_jsonl(results))) == 1
    report_md = repo / ".homefield" / "runs" / "r" / "report.md"
    report_md.unlink()
    report_md.mkdir()  # a report that cannot be written: the results stand, the exit says so
    proc = homefield(repo, *base, "--max-tasks", "1", "--resume")
    assert proc.returncode == 1 and "reports not saved: " in proc.stdout, proc.stdout + proc.stderr
    report_md.rmdir()
    meta = repo / ".homefield" / "runs" / "r" / "meta.json"
    meta.write_text(meta.read_text()[:40])  # a torn meta.json
    proc = homefield(repo, *base, "--max-tasks", "1", "--resume")
    assert proc.returncode == 4 and last_line(proc).startswith(f"ERROR: {meta}: not valid JSON (")
    proc = homefield(repo, "report", "r")
    assert proc.returncode == 2 and last_line(proc).startswith(f"homefield report: {meta}: not valid JSON (")
    meta.write_text(json.dumps({"schema_version": 1, "run_id": "r", "agents": "oracle"}))
    proc = homefield_in_process(repo, "report", "r")  # the same main(): the refusal above had a process
    assert proc.returncode == 2 and last_line(proc) == (
        f"homefield report: {meta}: field 'agents' must be a list of {{name, spec}} objects, got string 'oracle'")
    assert len(list(read_jsonl(results))) == 1  # the results were never touched


#: A ``cmd:`` agent that declares a rate limit (its provider: none other in the run).
RATE_LIMITED = "lim=cmd:echo '{\"outcome\": \"rate_limited\"}'"


@pytest.fixture(scope="session")
def rate_limited_run(mined: Path, tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """A copy of the mined fixture with run ``rl``: :data:`RATE_LIMITED` and ``x=oracle``, one attempt of each
    task, made once per test session (shared by xdist workers; read only: a test that adds to it copies it).
    The rate-limit test reads it; the report test adds a run of ``x=noop`` to a copy (it made a run of
    ``x=oracle`` of its own, the same kind of session)."""

    def make(repo: Path) -> None:
        shutil.rmtree(repo.with_name("repo-making"), ignore_errors=True)
        work = copy_mined(mined, repo.with_name("repo-making"))
        proc = homefield(work, "run", "--agent", RATE_LIMITED, "--agent", "x=oracle", "--attempts", "1",
                         "--run-id", "rl", "-n", "0")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        work.rename(repo)  # whole or absent: built_once makes it again after a failure

    return built_once(tmp_path_factory, testrun_uid, "bad-inputs-rate-limited", make)


def test_report_refuses_one_agent_name_for_two_specs(rate_limited_run: Path, tmp_path: Path) -> None:
    repo = copy_mined(rate_limited_run, tmp_path / "repo")
    shutil.copytree(rate_limited_run / ".homefield" / "runs" / "rl", repo / ".homefield" / "runs" / "rl")
    assert homefield(repo, "run", "--agent", "x=noop", "--attempts", "1", "--max-tasks", "1", "--run-id", "b",
                     "-n", "0").returncode == 0
    proc = homefield_in_process(repo, "report", "rl", "b")  # main() here: report refusals had their process above
    assert proc.returncode == 2 and last_line(proc) == (
        "homefield report: agent 'x' is 'oracle' in run rl but 'noop' in run b: report these runs apart, "
        "or rename one agent (NAME=SPEC)")


def test_mine_with_no_commits_leaves_nothing(tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    proc = homefield(repo, "mine", "-n", "0")
    assert proc.returncode == 4
    assert last_line(proc) == f"ERROR: pytest-homefield: {repo} has no commits yet: nothing to mine"
    assert not (repo / ".homefield" / "mine").exists()


def test_a_committed_homefield_folder_is_never_part_of_a_task_or_workspace(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")  # mined: .homefield/ holds tasks.jsonl and the miner's files
    # a careless user commits .homefield/ together with a real change
    (repo / "calc" / "__init__.py").write_text((repo / "calc" / "__init__.py").read_text() +
                                              "\n\ndef half(a):\n    return a / 2\n")
    (repo / "tests" / "test_half.py").write_text("from calc import half\n\n\ndef test_half():\n"
                                                 "    assert half(4) == 2\n")
    git(repo, "add", "-f", ".homefield", "calc", "tests")
    git(repo, "commit", "-q", "-m", "Add half() dividing a number by two", date="2026-02-01T12:00:00+00:00")
    assert "tasks.jsonl" in git(repo, "ls-files", ".homefield")
    # newest first: the one task mined is the commit that carries .homefield/
    proc = homefield(repo, "mine", "--stability-runs", "1", "--max-tasks", "1", "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tasks = list(read_jsonl_lines(repo / ".homefield" / "tasks.jsonl", strict=True))
    half = next(t for _, t in tasks if t["subject"].startswith("Add half"))
    assert half["source_files"] == ["calc/__init__.py"] and ".homefield" not in half["gold_patch"]
    marker = tmp_path / "saw-homefield"
    agent = f"look=cmd:if [ -e .homefield ]; then touch {marker}; fi"
    proc = homefield(repo, "run", "--agent", agent, "--attempts", "1", "-k", half["id"], "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists(), "the workspace held .homefield/"


def test_per_test_timeout_is_test_timeout_even_without_plugin_autoload(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    assert "--disable-plugin-autoload" in (repo / ".homefield.yml").read_text()
    neg = next(t for t in read_jsonl(repo / ".homefield" / "tasks.jsonl") if t["subject"].startswith("Add neg"))
    # a "fix" whose function hangs: only the per-test limit stops it
    agent = "hang=cmd:printf 'import time\\n\\ndef neg(a):\\n    time.sleep(60)\\n' >> calc/__init__.py"
    proc = homefield(repo, "run", "--agent", agent, "--attempts", "1", "--test-timeout", "1", "--run-timeout", "50",
                     "-k", neg["id"], "--run-id", "t", "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (rec,) = list(read_jsonl(repo / ".homefield" / "runs" / "t" / "results.jsonl"))
    assert rec["outcome"] == "test_timeout", rec
    assert rec["error"] == "1 hidden test(s) exceeded the per-test limit of 1 s (pytest-timeout)"
    assert rec["test_s"] < 40


def test_a_rate_limit_stops_only_the_agents_behind_that_provider(rate_limited_run: Path) -> None:
    """Run ``rl`` (:func:`rate_limited_run`, exit status 0): ``lim`` stops at its first attempt, ``x``
    (the oracle) runs every task."""
    repo = rate_limited_run
    recs = list(read_jsonl(repo / ".homefield" / "runs" / "rl" / "results.jsonl"))
    n = sum(1 for _ in read_jsonl(repo / ".homefield" / "tasks.jsonl"))
    assert [r["outcome"] for r in recs if r["agent"] == "lim"] == ["rate_limited"]
    assert [r["outcome"] for r in recs if r["agent"] == "x"] == ["solved"] * n


@pytest.fixture
def tiny_runs(tmp_path: Path) -> Path:
    """``repo/.homefield/runs`` on a real 256 KiB tmpfs (root only); unmounted afterwards."""
    with mounted_tmpfs(tmp_path / "runs-fs", "256k") as runs:
        yield runs


def test_a_full_disk_stops_the_run_loses_nothing_and_resume_finishes(mined: Path, tmp_path: Path,
                                                                       tiny_runs: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    (repo / ".homefield" / "runs").symlink_to(tiny_runs)
    # each attempt leaves ~60 KB of agent output in its artifacts: the disk fills after a few
    agent = "loud=cmd:head -c 60000 /dev/zero | tr '\\0' x; echo; echo '{\"cost_usd\": 0.01}'"
    args = ["run", "--agent", agent, "--attempts", "3", "--run-id", "full", "-n", "0"]
    proc = homefield(repo, *args)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "No space left on device" in out or "short write" in out, out
    assert "Traceback" not in out and "INTERNALERROR" not in out, out
    results = tiny_runs / "full" / "results.jsonl"
    before = [r for _, r in read_jsonl_lines(results, strict=True)]  # every line whole
    # an attempt whose output hit the full disk is infra (redone), never scored without its cost
    assert all(r["cost_usd"] == 0.01 for r in before if r["outcome"] != "infra"), before
    subprocess.run(["mount", "-o", "remount,size=16m", str(tiny_runs)], check=True)  # space is freed
    proc = homefield(repo, *args, "--resume")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = [r for _, r in read_jsonl_lines(results, strict=True)]
    assert after[: len(before)] == before
    scored = {(r["task_id"], r["attempt"]) for r in after if r["outcome"] not in ("infra", "rate_limited")}
    n = sum(1 for _ in read_jsonl(repo / ".homefield" / "tasks.jsonl"))
    assert len(scored) == n * 3


def test_an_agent_whose_client_is_not_installed_is_refused_before_anything_is_spent(mined: Path,
                                                                                   tmp_path: Path) -> None:
    """nu19: with no claude CLI on the machine every claude attempt of a run was ``infra``, one by one, to the
    end of the run. With every worker local the run now stops first, one line naming the agent and how to
    install its client, exit 4, no run folder."""
    repo = copy_mined(mined, tmp_path / "repo")
    missing = tmp_path / "no-claude"
    env = {**cli_env(), "HOMEFIELD_CLAUDE_BIN": str(missing)}
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", "oracle", "--agent",
                           "fast=claude:claude-haiku-4-5", "-n", "0"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 4 and last_line(proc) == (
        f"ERROR: pytest-homefield: agent 'fast': cannot start {missing}: no such executable (install the Claude "
        "Code CLI: npm i -g @anthropic-ai/claude-code, or set HOMEFIELD_CLAUDE_BIN to its path); nothing was run"
    ), proc.stdout + proc.stderr
    assert not (repo / ".homefield" / "runs").exists()

