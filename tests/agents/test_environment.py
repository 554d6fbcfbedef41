"""The agent environment of contracts §9."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_homefield.agents.base import AgentSettings
from pytest_homefield.agents.environment import (
    agent_passthrough,
    build_agent_env,
    check_passthrough,
)

SOURCE = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/u",
    "USER": "u",
    "LANG": "en_US.UTF-8",
    "LC_ALL": "C.UTF-8",
    "LC_CTYPE": "C.UTF-8",
    "TERM": "xterm",
    "SHELL": "/bin/bash",
    "TMPDIR": "/tmp/shared",
    "PYTEST_CURRENT_TEST": "tasks.jsonl::abc123::claude[1]",
    "PYTEST_XDIST_WORKER": "gw0",
    "HOMEFIELD_TASK": "abc123",
    "HOMEFIELD_RUN_DIR": "/x/.homefield/runs/r1",
    "PYTHONPATH": "/x",
    "VIRTUAL_ENV": "/venv",
    "ANTHROPIC_API_KEY": "sk-ant",
    "OPENAI_API_KEY": "sk-oai",
    "MY_TOKEN": "t",
    "AWS_SECRET_ACCESS_KEY": "aws",
}


def test_exactly_the_contract_variables(tmp_path: Path) -> None:
    env = build_agent_env(prompt="do it", attempt=2, tmpdir=tmp_path / "t", source=SOURCE)
    assert env == {
        "PATH": "/usr/bin:/bin", "HOME": "/home/u", "USER": "u", "LANG": "en_US.UTF-8",
        "LC_ALL": "C.UTF-8", "LC_CTYPE": "C.UTF-8", "TERM": "xterm", "SHELL": "/bin/bash",
        "TMPDIR": str(tmp_path / "t"), "HOMEFIELD_PROMPT": "do it", "HOMEFIELD_ATTEMPT": "2",
    }
    assert (tmp_path / "t").is_dir()


def test_passthrough_only_names_that_are_set(tmp_path: Path) -> None:
    names = agent_passthrough("claude", AgentSettings(env=["MY_TOKEN", "UNSET_VAR"]))
    env = build_agent_env(prompt="p", attempt=1, tmpdir=tmp_path, passthrough=names, source=SOURCE)
    assert env["ANTHROPIC_API_KEY"] == "sk-ant" and env["MY_TOKEN"] == "t"
    absent_names = ("UNSET_VAR", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY",
                    "PYTHONPATH")
    for absent in absent_names:
        assert absent not in env


def test_passthrough_never_leaks_pytest_or_homefield_state(tmp_path: Path) -> None:
    env = build_agent_env(prompt="p", attempt=1, tmpdir=tmp_path, source=SOURCE,
                          passthrough=["PYTEST_CURRENT_TEST", "HOMEFIELD_TASK", "HOMEFIELD_PROMPT"])
    assert not [k for k in env if k.startswith("PYTEST_")]
    assert sorted(k for k in env if k.startswith("HOMEFIELD_")) == ["HOMEFIELD_ATTEMPT", "HOMEFIELD_PROMPT"]
    assert env["HOMEFIELD_PROMPT"] == "p"
    assert "abc123" not in str(env)


def test_default_passthrough_per_adapter() -> None:
    assert agent_passthrough("claude") == [
        "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR"]
    assert agent_passthrough("openai", AgentSettings(env=["OPENAI_API_KEY", "X"])) == [
        "OPENAI_API_KEY", "OPENAI_BASE_URL", "X"]
    assert agent_passthrough("cmd", AgentSettings(env=["X"])) == ["X"]


def test_defaults_to_os_environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TOKEN", "from-os")
    env = build_agent_env(prompt="p", attempt=1, tmpdir=tmp_path, passthrough=["MY_TOKEN"])
    assert env["MY_TOKEN"] == "from-os" and "PYTEST_CURRENT_TEST" not in env


@pytest.mark.parametrize("bad", ["PYTEST_ADDOPTS", "HOMEFIELD_TASK", "homefield_x", "1ABC", "A-B", ""])
def test_check_passthrough_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        check_passthrough([bad])


def test_check_passthrough_accepts() -> None:
    check_passthrough(["MY_TOKEN", "_X1"])
