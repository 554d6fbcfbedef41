"""A new agent kind is one module and one row of ``agents/registry.py``'s ``KINDS`` (issue 29).

This file is the toy kind's module: :data:`TOY` (its capabilities) and :class:`ToyAgent`, a program
that applies the task's fix with ``git apply`` through the attempt's sandbox. The ``toy`` fixture adds
its row; every part of homefield then treats it by its capabilities alone: the spec parser, the
builder, the rate-limit scope, the ablation's rules file, the sandbox choice, ``meta.json`` and a run
that grades its attempt.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.attack_repo import build, task_for

from pytest_homefield.ablate.variants import rules_path_for
from pytest_homefield.agents.base import Agent, AgentContext, AgentResult, AgentSettings, Capable
from pytest_homefield.agents.registry import (
    KINDS,
    AgentKind,
    ParsedSpec,
    build_agents,
    kind_capabilities,
    make_agents,
    parse_spec,
)
from pytest_homefield.capabilities import Capabilities, capabilities_of
from pytest_homefield.errors import AgentSpecError
from pytest_homefield.layout import read_meta
from pytest_homefield.run.session import RunSession, sandbox_summary
from pytest_homefield.sandbox import modes
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.procs import run_process
from pytest_homefield.settings import Settings

#: The toy kind's capabilities: a program that always runs commands, given the task record, reading
#: TOY.md, and (so that every report says so) simulated.
TOY = Capabilities(process=True, commands="always", rules_file="TOY.md", simulated=True, reference=True)


class ToyAgent(Capable):
    """``toy:WORD``: applies ``ctx.task``'s gold patch with ``git apply``, as a program in the sandbox."""

    capabilities = TOY

    def __init__(self, *, name: str, spec: str, word: str, settings: AgentSettings) -> None:
        self.name, self.spec, self.word, self.settings = name, spec, word, settings

    def version(self) -> str | None:
        return f"toy {self.word}"

    def run(self, ctx: AgentContext) -> AgentResult:
        ctx.artifacts.mkdir(parents=True, exist_ok=True)
        proc = run_process(ctx.wrap(["git", "apply", "-"], ctx.env), cwd=ctx.workspace, env=ctx.env,
                           timeout_s=ctx.timeout_s, stdin_text=ctx.task.gold_patch,
                           stdout_path=ctx.artifacts / "agent.out", stderr_path=ctx.artifacts / "agent.err")
        return AgentResult(exit_code=proc.exit_code, cost_usd=0.0)


def _read(arg: str, text: str) -> tuple[str, str | None]:
    if not arg.isalpha():
        raise AgentSpecError(f"agent spec {text!r}: toy:WORD needs a word of letters")
    return f"toy-{arg}", arg


#: The toy kind's one row.
ROW = AgentKind("toy", TOY, _read, lambda p, s: ToyAgent(name=p.name, spec=p.spec, word=p.arg or "", settings=s),
                "toy:WORD")


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[AgentKind]:
    monkeypatch.setitem(KINDS, ROW.name, ROW)
    yield ROW


def _settings(root: Path, **kw: object) -> Settings:
    s = Settings(root=root, agents=["toy:hi"], attempts=1, sandbox="none")
    for k, v in kw.items():
        setattr(s, k, v)
    return s


def test_the_row_makes_the_spec_and_the_agent(toy: AgentKind, tmp_path: Path) -> None:
    assert parse_spec("toy:hi") == ParsedSpec("toy-hi", "toy", "hi", "toy:hi")
    assert parse_spec("mine=toy:hi") == ParsedSpec("mine", "toy", "hi", "toy:hi")
    with pytest.raises(AgentSpecError, match="^agent spec 'toy:42': toy:WORD needs a word of letters$"):
        parse_spec("toy:42")
    with pytest.raises(AgentSpecError, match=r"openai:MODEL, preds:FILE, toy:WORD or a named agent"):
        parse_spec("nope")
    (agent,) = build_agents(["toy:hi"], _settings(tmp_path, timeout=30.0))
    assert isinstance(agent, ToyAgent) and isinstance(agent, Agent)
    assert agent.settings.timeout_s == 30.0 and agent.simulated is True and agent.hinted is False
    assert capabilities_of(agent) is TOY and kind_capabilities("toy:other") is TOY


def test_without_the_row_there_is_no_such_kind() -> None:
    assert "toy" not in KINDS
    with pytest.raises(AgentSpecError, match="^unknown agent 'toy:hi'"):
        parse_spec("toy:hi")


def test_every_layer_reads_the_capabilities(toy: AgentKind, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (agent,) = make_agents(_settings(tmp_path), {})
    assert rules_path_for("toy:hi", "docs/RULES.md", {}) == "TOY.md"
    assert rules_path_for("mine", "docs/RULES.md", {"mine": {"spec": "toy:hi"}}) == "TOY.md"
    monkeypatch.setattr(SandboxChoice, "available", lambda self: "bubblewrap (bwrap) is not installed")
    monkeypatch.setattr(modes, "landlock_state", lambda: "Landlock is not available here")
    refused = sandbox_summary(_settings(tmp_path, sandbox="auto"), [agent])["agents"]["toy-hi"]
    assert refused == ("refused: agent 'toy-hi' can run commands, but bubblewrap (bwrap) is not installed; "
                       "and Landlock is not available here")
    assert sandbox_summary(_settings(tmp_path, sandbox="auto"), [agent], hooked=True)["agents"]["toy-hi"] == "hook"
    assert sandbox_summary(_settings(tmp_path), [agent])["agents"]["toy-hi"] == "none"


def test_a_run_of_the_toy_kind(toy: AgentKind, tmp_path: Path) -> None:
    fx = build(tmp_path / "repo")
    task = task_for(fx)
    settings = _settings(fx.root, run_id="toy")
    agents = make_agents(settings, {})
    session = RunSession.start(settings, [task], agents)
    try:
        result = session.run_attempt(task, agents[0], 1)
    finally:
        session.close()
    assert (result.agent, result.outcome, result.sandbox, result.agent_version) == ("toy-hi", "solved", "none",
                                                                                     "toy hi")
    (entry,) = read_meta(session.run_dir)["agents"]
    assert entry == {"name": "toy-hi", "spec": "toy:hi", "version": "toy hi", "model": None, "simulated": True,
                     "hinted": False}
