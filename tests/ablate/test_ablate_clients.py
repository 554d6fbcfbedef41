"""up60: ``homefield ablate --yes`` checks its agents' clients once, before anything runs, as a run does
(:func:`~pytest_homefield.run.run_plugin.refuse_unstartable`, contracts §8): a client that is not installed, or
whose install is the home while its attempts are sandboxed, is one line, exit 4, and no ablation folder. Before,
nothing was checked: each attempt of every variant was ``infra``, one by one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers.bwrap import bwrap_or_skip
from helpers.e2e_repo import cli_env
from helpers.home_client import home_prefixed_aider, tiny_repo


def _ablate(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "ablate", "CLAUDE.md", "--attempts", "1",
                           "--yes", "-n", "0", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=120)


def _errors(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.startswith("ERROR:")]


def test_an_ablation_refuses_a_missing_client_once_before_anything_runs(tmp_path: Path) -> None:
    repo = tiny_repo(tmp_path / "repo", 8)
    missing = tmp_path / "no-claude"
    env = {**cli_env(), "HOMEFIELD_CLAUDE_BIN": str(missing), "PATH": "/usr/bin:/bin"}
    proc = _ablate(repo, env, "--agent", "oracle", "--agent", "codex", "--agent", "c=claude:claude-haiku-4-5")
    assert (proc.returncode, _errors(proc)) == (4, [
        "ERROR: pytest-homefield: agent 'codex': cannot start codex: not found on the agent's PATH (install it: "
        "npm i -g @openai/codex) (and 1 more); nothing was run"]), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not (repo / ".homefield" / "ablate").exists()


def test_an_ablation_refuses_a_home_installed_client_only_when_sandboxed(tmp_path: Path) -> None:
    bwrap_or_skip()
    home = tmp_path / "home"
    home_prefixed_aider(home)
    repo = tiny_repo(tmp_path / "repo", 8)
    env = {**cli_env(), "HOME": str(home), "PATH": f"{home / 'bin'}:/usr/bin:/bin"}
    proc = _ablate(repo, env, "--agent", "aider", "--sandbox", "bwrap")
    assert (proc.returncode, _errors(proc)) == (4, [
        f"ERROR: pytest-homefield: agent 'aider': cannot sandbox aider: it needs {home}, your home folder, which no "
        "sandbox is given (install it outside your home, or pass --sandbox none to accept the risk); nothing was run"
    ]), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not (repo / ".homefield" / "ablate").exists()
    # unsandboxed it passes the check: the next check (the tasks: none here) is the one that stops it
    (repo / ".homefield" / "tasks.jsonl").write_text("")
    proc = _ablate(repo, env, "--agent", "aider", "--sandbox", "none")
    assert (proc.returncode, _errors(proc)) == (4, [
        f"ERROR: pytest-homefield: no tasks to run: {repo / '.homefield' / 'tasks.jsonl'} holds none (run `homefield "
        "mine`, or widen --since)"]), proc.stdout[-3000:] + proc.stderr[-3000:]
