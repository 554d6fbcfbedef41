"""up60: ``homefield probe`` checks its agents' clients once, before any call, as a run does
(:func:`~pytest_homefield.run.run_plugin.refuse_unstartable`, contracts §8): a client that is not installed, or
whose install is the home while its calls are sandboxed, is one line, exit 4, and no probe folder. Before, each
call was ``infra``, one by one (:meth:`~pytest_homefield.probe.call_sandbox.ProbeSandboxes.check` saw only
whether the sandbox works)."""

from __future__ import annotations

from pathlib import Path

from helpers.client_refusal import assert_home_client_refused_only_when_sandboxed, assert_missing_client_refused

PROBE = ["probe", "--samples", "1", "-n", "0"]


def test_a_probe_refuses_a_missing_client_once_before_any_call(tmp_path: Path) -> None:
    assert_missing_client_refused(tmp_path, PROBE, 4, "probe", ["oracle", "c=claude:claude-haiku-4-5", "codex"],
                                  "ERROR: pytest-homefield: agent 'c': cannot start {missing}: no such executable "
                                  "(install the Claude Code CLI: npm i -g @anthropic-ai/claude-code, or set "
                                  "HOMEFIELD_CLAUDE_BIN to its path) (and 1 more); nothing was run")


def test_a_probe_refuses_a_home_installed_client_only_when_sandboxed(tmp_path: Path) -> None:
    assert_home_client_refused_only_when_sandboxed(tmp_path, PROBE, 4, "probe", "probe")
