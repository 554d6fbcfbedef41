"""up60: ``homefield ablate --yes`` checks its agents' clients once, before anything runs, as a run does
(:func:`~pytest_homefield.run.run_plugin.refuse_unstartable`, contracts §8): a client that is not installed, or
whose install is the home while its attempts are sandboxed, is one line, exit 4, and no ablation folder. Before,
nothing was checked: each attempt of every variant was ``infra``, one by one."""

from __future__ import annotations

from pathlib import Path

from helpers.client_refusal import assert_home_client_refused_only_when_sandboxed, assert_refused, homefield
from helpers.e2e_repo import cli_env
from helpers.home_client import tiny_repo

ABLATE = ["ablate", "CLAUDE.md", "--attempts", "1", "--yes", "-n", "0"]


def test_an_ablation_refuses_a_missing_client_once_before_anything_runs(tmp_path: Path) -> None:
    repo = tiny_repo(tmp_path / "repo", 8)
    missing = tmp_path / "no-claude"
    env = {**cli_env(), "HOMEFIELD_CLAUDE_BIN": str(missing), "PATH": "/usr/bin:/bin"}
    proc = homefield(repo, env, *ABLATE, "--agent", "oracle", "--agent", "codex", "--agent",
                     "c=claude:claude-haiku-4-5")
    assert_refused(proc, [
        "ERROR: pytest-homefield: agent 'codex': cannot start codex: not found on the agent's PATH (install it: "
        "npm i -g @openai/codex) (and 1 more); nothing was run"], repo / ".homefield" / "ablate")


def test_an_ablation_refuses_a_home_installed_client_only_when_sandboxed(tmp_path: Path) -> None:
    assert_home_client_refused_only_when_sandboxed(tmp_path, ABLATE, 8, "ablate", "run")
