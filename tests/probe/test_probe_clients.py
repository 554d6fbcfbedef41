"""up60: ``homefield probe`` checks its agents' clients once, before any call, as a run does
(:func:`~pytest_homefield.run.run_plugin.refuse_unstartable`, contracts §8): a client that is not installed, or
whose install is the home while its calls are sandboxed, is one line, exit 4, and no probe folder. Before, each
call was ``infra``, one by one (:meth:`~pytest_homefield.probe.call_sandbox.ProbeSandboxes.check` saw only
whether the sandbox works)."""

from __future__ import annotations

from pathlib import Path

from helpers.client_refusal import assert_home_client_refused_only_when_sandboxed, assert_refused, homefield
from helpers.e2e_repo import cli_env
from helpers.home_client import tiny_repo

PROBE = ["probe", "--samples", "1", "-n", "0"]


def test_a_probe_refuses_a_missing_client_once_before_any_call(tmp_path: Path) -> None:
    repo = tiny_repo(tmp_path / "repo", 4)
    missing = tmp_path / "no-claude"
    env = {**cli_env(), "HOMEFIELD_CLAUDE_BIN": str(missing), "PATH": "/usr/bin:/bin"}
    proc = homefield(repo, env, *PROBE, "--agent", "oracle", "--agent", "c=claude:claude-haiku-4-5", "--agent",
                     "codex")
    assert_refused(proc, [
        f"ERROR: pytest-homefield: agent 'c': cannot start {missing}: no such executable (install the Claude Code "
        "CLI: npm i -g @anthropic-ai/claude-code, or set HOMEFIELD_CLAUDE_BIN to its path) (and 1 more); nothing "
        "was run"], repo / ".homefield" / "probe")


def test_a_probe_refuses_a_home_installed_client_only_when_sandboxed(tmp_path: Path) -> None:
    assert_home_client_refused_only_when_sandboxed(tmp_path, PROBE, 4, "probe", "probe")
