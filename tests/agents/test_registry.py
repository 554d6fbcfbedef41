"""agents/registry.py: ``--agent`` specs → agent objects (contracts §5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.agents.base import SHELL_NO, SHELL_YES, AgentSettings, render_prompt
from pytest_homefield.agents.claude import ClaudeAgent
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.agents.openai_compat import OpenAIAgent
from pytest_homefield.agents.reference import NoopAgent, OracleAgent, SimAgent
from pytest_homefield.agents.registry import ParsedSpec, agent_settings, build_agents, parse_spec, unstartable
from pytest_homefield.errors import AgentSpecError
from pytest_homefield.settings import resolve_settings


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("oracle", ParsedSpec("oracle", "oracle", None, "oracle")),
        (" noop ", ParsedSpec("noop", "noop", None, "noop")),
        ("sim:0.7", ParsedSpec("sim-0.7", "sim", "0.7", "sim:0.7")),
        ("sim:1", ParsedSpec("sim-1", "sim", "1", "sim:1")),
        ("claude", ParsedSpec("claude", "claude", None, "claude")),
        ("claude:claude-haiku-4-5",
         ParsedSpec("claude-haiku-4-5", "claude", "claude-haiku-4-5", "claude:claude-haiku-4-5")),
        ("openai:qwen3-coder", ParsedSpec("qwen3-coder", "openai", "qwen3-coder", "openai:qwen3-coder")),
        ("cmd:./fix.sh --fast", ParsedSpec("cmd", "cmd", "./fix.sh --fast", "cmd:./fix.sh --fast")),
        # NAME=SPEC renames; the spec keeps its own text
        ("fast=claude:claude-haiku-4-5", ParsedSpec("fast", "claude", "claude-haiku-4-5", "claude:claude-haiku-4-5")),
        ("base=sim:0.5", ParsedSpec("base", "sim", "0.5", "sim:0.5")),
        # an '=' inside a cmd: spec belongs to the command
        ("cmd:X=1 ./fix.sh", ParsedSpec("cmd", "cmd", "X=1 ./fix.sh", "cmd:X=1 ./fix.sh")),
        ("mine=cmd:X=1 ./fix.sh", ParsedSpec("mine", "cmd", "X=1 ./fix.sh", "cmd:X=1 ./fix.sh")),
        # a model id that is no valid agent name gives a sanitised default name
        ("openai:org/model:free", ParsedSpec("org-model-free", "openai", "org/model:free", "openai:org/model:free")),
    ],
)
def test_parse_spec(text: str, expected: ParsedSpec) -> None:
    assert parse_spec(text) == expected


def test_named_and_registered_specs() -> None:
    assert parse_spec("fast", named={"fast": {"spec": "claude"}}) == ParsedSpec("fast", "named", "fast", "fast")
    assert parse_spec("mine", registered=["mine"]) == ParsedSpec("mine", "hook", "mine", "mine")
    assert parse_spec("x=mine", registered=["mine"]) == ParsedSpec("x", "hook", "mine", "mine")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sim:often", "agent spec 'sim:often': sim:P needs a probability, e.g. sim:0.6"),
        ("sim:1.5", "agent spec 'sim:1.5': P must be between 0 and 1"),
        ("cmd:  ", "agent spec 'cmd:': cmd: needs a shell command"),
        ("openai:", "agent spec 'openai:': openai: needs a model, e.g. openai:qwen3-coder"),
        ("bad name=oracle", "agent name 'bad name' (in NAME=SPEC) must match [A-Za-z0-9_.-]+"),
        ("a/b=oracle", "agent name 'a/b' (in NAME=SPEC) must match [A-Za-z0-9_.-]+"),
    ],
)
def test_bad_specs_are_one_line(text: str, message: str) -> None:
    with pytest.raises(AgentSpecError) as err:
        parse_spec(text)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_unknown_agent_lists_the_named_ones() -> None:
    with pytest.raises(AgentSpecError) as err:
        parse_spec("gpt", named={"fast": {}}, registered=["hooked"])
    assert str(err.value) == ("unknown agent 'gpt': use oracle, noop, sim:P, cmd:SHELL, claude[:MODEL], "
                              "openai:MODEL, preds:FILE or a named agent (named here: fast, hooked)")
    with pytest.raises(AgentSpecError, match=r"\(named here: none\)$"):
        parse_spec("oracle:x")


def _settings(root: Path, yml: str = "", **flags: Any) -> Any:
    if yml:
        (root / ".homefield.yml").write_text(yml)
    return resolve_settings(root, flags)


def test_build_agents_makes_each_kind(tmp_path: Path) -> None:
    s = _settings(tmp_path, timeout=30)
    agents = build_agents(["oracle", "noop", "sim:0.25", "cmd:true", "claude:m1", "openai:m2"], s)
    assert [type(a) for a in agents] == [OracleAgent, NoopAgent, SimAgent, CommandAgent, ClaudeAgent, OpenAIAgent]
    assert [a.name for a in agents] == ["oracle", "noop", "sim-0.25", "cmd", "m1", "m2"]
    sim, cmd, claude = agents[2], agents[3], agents[4]
    assert isinstance(sim, SimAgent) and sim.p == 0.25
    assert isinstance(cmd, CommandAgent) and cmd.command == "true" and cmd.settings.timeout_s == 30
    assert isinstance(claude, ClaudeAgent) and claude.model == "m1"


def test_named_agent_definition_overrides_run_settings(tmp_path: Path) -> None:
    s = _settings(tmp_path, "agents:\n  fast:\n    spec: claude:m1\n    timeout: 5\n    budget_usd: 0.5\n",
                  timeout=30, attempt_budget=2.0)
    (fast,) = build_agents(["fast"], s)
    assert isinstance(fast, ClaudeAgent)
    assert (fast.name, fast.spec, fast.model) == ("fast", "claude:m1", "m1")
    assert (fast.settings.timeout_s, fast.settings.budget_usd) == (5.0, 0.5)
    (renamed,) = build_agents(["quick=fast"], s)
    assert renamed.name == "quick"
    assert agent_settings(s).timeout_s == 30.0 and agent_settings(s).budget_usd == 2.0


def test_hook_agents_resolve_by_name_and_rename(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    mine = NoopAgent(name="mine", spec="mine")
    assert build_agents(["mine"], s, {"mine": mine}) == [mine]
    (renamed,) = build_agents(["other=mine"], s, {"mine": mine})
    assert renamed is mine and mine.name == "other"


def test_two_agents_with_one_name_are_refused(tmp_path: Path) -> None:
    with pytest.raises(AgentSpecError, match="two agents are named 'sim-0.5': rename one with NAME=SPEC"):
        build_agents(["sim:0.5", "sim:0.5"], _settings(tmp_path))
    assert [a.name for a in build_agents(["sim:0.5", "b=sim:0.5"], _settings(tmp_path))] == ["sim-0.5", "b"]


# --- issue 21: a bad NAME names the rule; a cmd: program's prompt makes no claim ---

@pytest.mark.parametrize("text", ["my agent=oracle", "bad/name=noop", "=oracle", "ü=sim:0.5"])
def test_a_bad_name_names_the_rule(text: str) -> None:
    name = text.split("=", 1)[0]
    with pytest.raises(AgentSpecError) as err:
        parse_spec(text)
    assert str(err.value) == (f"agent name {name!r} (in NAME=SPEC) must match [A-Za-z0-9_.-]+: "
                              "letters, digits, '_', '.' and '-' only")


def test_equals_signs_inside_a_spec_belong_to_it() -> None:
    assert parse_spec("a=cmd:FOO=1 sh run.sh").arg == "FOO=1 sh run.sh"
    assert parse_spec("cmd:FOO=1 sh").name == "cmd"
    with pytest.raises(AgentSpecError, match=r"^agent 'x': NAME=SPEC needs a spec after '='$"):
        parse_spec("x=")


def test_a_cmd_program_is_told_nothing_about_running_commands() -> None:
    text = render_prompt("Fix it", allow_shell=False, shell_known=False)
    assert SHELL_NO not in text and SHELL_YES not in text and " \n" not in text
    assert SHELL_NO in render_prompt("Fix it", allow_shell=False)
    assert SHELL_YES in render_prompt("Fix it", allow_shell=True, shell_known=False)


def test_unstartable_names_each_agent_whose_client_is_missing(tmp_path: Path) -> None:
    """The run's controller refuses these before anything is spent (run_plugin): claude's CLI and a
    recipe's client looked for as each attempt would (its ``PATH``); agents with no client never listed."""
    s = resolve_settings(tmp_path, {})
    agents = build_agents(["oracle", "cmd:true", "codex"], s)
    agents.append(ClaudeAgent(name="c", spec="claude", model=None, settings=AgentSettings(),
                              executable=str(tmp_path / "no-claude")))
    assert unstartable(agents, {"PATH": str(tmp_path)}) == [
        "agent 'codex': cannot start codex: not found on the agent's PATH (install it: npm i -g @openai/codex)",
        f"agent 'c': cannot start {tmp_path / 'no-claude'}: no such executable (install the Claude Code CLI: "
        "npm i -g @anthropic-ai/claude-code, or set HOMEFIELD_CLAUDE_BIN to its path)"]
    fake = tmp_path / "bin" / "codex"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert unstartable(agents[:3], {"PATH": str(fake.parent)}) == []
