"""up60: a command that starts agents (``homefield ablate``, ``homefield probe``) checks their clients once, before
anything runs (:func:`~pytest_homefield.run.run_plugin.refuse_unstartable`, contracts §8): one ``ERROR:`` line,
exit 4, and no results folder. The run of such a command and the check of its refusal, shared by their tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers.bwrap import bwrap_or_skip
from helpers.e2e_repo import cli_env
from helpers.home_client import home_prefixed_aider, tiny_repo


def homefield(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m pytest_homefield.cli *args`` in ``repo`` with exactly ``env`` (120 s at most); its output."""
    return subprocess.run([sys.executable, "-m", "pytest_homefield.cli", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)


def assert_refused(proc: subprocess.CompletedProcess[str], errors: list[str], folder: Path | None = None) -> None:
    """``proc`` exited 4 with exactly ``errors`` as its ``ERROR:`` lines (stdout and stderr), and ``folder``, when
    given, was not made. Raises AssertionError otherwise (with the output's tail)."""
    said = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.startswith("ERROR:")]
    assert (proc.returncode, said) == (4, errors), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert folder is None or not folder.exists(), folder


def assert_missing_client_refused(tmp_path: Path, command: list[str], n_tasks: int, folder: str,
                                  agents: list[str], error: str) -> None:
    """``homefield *command --agent a …`` for each of ``agents``, in a :func:`tiny_repo` of ``n_tasks`` tasks whose
    ``PATH`` is ``/usr/bin:/bin`` and whose ``HOMEFIELD_CLAUDE_BIN`` is ``tmp_path/no-claude`` (missing): refused
    with the one line ``error`` (``{missing}`` in it: that path), no ``.homefield/<folder>`` made. Raises
    AssertionError."""
    repo = tiny_repo(tmp_path / "repo", n_tasks)
    missing = tmp_path / "no-claude"
    env = {**cli_env(), "HOMEFIELD_CLAUDE_BIN": str(missing), "PATH": "/usr/bin:/bin"}
    proc = homefield(repo, env, *command, *(a for agent in agents for a in ("--agent", agent)))
    assert_refused(proc, [error.format(missing=missing)], repo / ".homefield" / folder)


def assert_home_client_refused_only_when_sandboxed(tmp_path: Path, command: list[str], n_tasks: int,
                                                   folder: str, verb: str) -> None:
    """``homefield *command --agent aider``, the client installed in the home (:func:`home_prefixed_aider`), in a
    :func:`tiny_repo` of ``n_tasks`` tasks: with ``--sandbox bwrap`` refused as it cannot be sandboxed, no
    ``.homefield/<folder>`` made; with ``--sandbox none`` past that check, stopped by the next one (no tasks to
    ``verb``, the task file emptied). Skips without a working bubblewrap; raises AssertionError."""
    bwrap_or_skip()
    home = tmp_path / "home"
    home_prefixed_aider(home)
    repo = tiny_repo(tmp_path / "repo", n_tasks)
    env = {**cli_env(), "HOME": str(home), "PATH": f"{home / 'bin'}:/usr/bin:/bin"}
    proc = homefield(repo, env, *command, "--agent", "aider", "--sandbox", "bwrap")
    assert_refused(proc, [
        f"ERROR: pytest-homefield: agent 'aider': cannot sandbox aider: it needs {home}, your home folder, which no "
        "sandbox is given (install it outside your home, or pass --sandbox none to accept the risk); nothing was run"
    ], repo / ".homefield" / folder)
    # unsandboxed it passes the check: the next check (the tasks: none here) is the one that stops it
    (repo / ".homefield" / "tasks.jsonl").write_text("")
    proc = homefield(repo, env, *command, "--agent", "aider", "--sandbox", "none")
    assert_refused(proc, [
        f"ERROR: pytest-homefield: no tasks to {verb}: {repo / '.homefield' / 'tasks.jsonl'} holds none (run "
        "`homefield mine`, or widen --since)"])
