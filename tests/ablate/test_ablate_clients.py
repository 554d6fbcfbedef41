"""up60: ``homefield ablate --yes`` checks its agents' clients once, before anything runs, as a run does
(:func:`~pytest_homefield.run.run_plugin.refuse_unstartable`, contracts §8): a client that is not installed, or
whose install is the home while its attempts are sandboxed, is one line, exit 4, and no ablation folder. Before,
nothing was checked: each attempt of every variant was ``infra``, one by one."""

from __future__ import annotations

from pathlib import Path

from helpers.client_refusal import assert_home_client_refused_only_when_sandboxed, assert_missing_client_refused

ABLATE = ["ablate", "CLAUDE.md", "--attempts", "1", "--yes", "-n", "0"]


def test_an_ablation_refuses_a_missing_client_once_before_anything_runs(tmp_path: Path) -> None:
    assert_missing_client_refused(tmp_path, ABLATE, 8, "ablate", ["oracle", "codex", "c=claude:claude-haiku-4-5"],
                                  "ERROR: pytest-homefield: agent 'codex': cannot start codex: not found on the "
                                  "agent's PATH (install it: npm i -g @openai/codex) (and 1 more); nothing was run")


def test_an_ablation_refuses_a_home_installed_client_only_when_sandboxed(tmp_path: Path) -> None:
    assert_home_client_refused_only_when_sandboxed(tmp_path, ABLATE, 8, "ablate", "run")
