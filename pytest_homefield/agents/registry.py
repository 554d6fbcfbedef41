"""Agent specs → agent objects (docs/contracts.md §5).

Specs: ``oracle``, ``noop``, ``sim:P``, ``cmd:SHELL``, ``claude``, ``claude:MODEL``,
``openai:MODEL``, ``preds:FILE`` (a SWE-bench predictions file, named by its ``model_name_or_path``),
``attack:NAME`` (a built-in attack agent, :mod:`pytest_homefield.agents.attacks`), a name from
``.homefield.yml`` ``agents:``, or a name registered through the ``pytest_homefield_agents`` hook;
any spec may be prefixed ``NAME=``. Default names: ``claude:MODEL`` / ``openai:MODEL`` → MODEL,
``sim:0.7`` → ``sim-0.7``, ``cmd:…`` → ``cmd``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.agents.attacks import ATTACKS, attack_agent
from pytest_homefield.agents.base import Agent, AgentSettings
from pytest_homefield.agents.claude import ClaudeAgent
from pytest_homefield.agents.command import CommandAgent
from pytest_homefield.agents.openai_compat import OpenAIAgent
from pytest_homefield.agents.predictions import PredictionsAgent, load_predictions
from pytest_homefield.agents.recipes import RECIPE_SANDBOX, RECIPES
from pytest_homefield.agents.reference import NoopAgent, OracleAgent, SimAgent
from pytest_homefield.errors import AgentSpecError, PredictionsError

__all__ = ["ParsedSpec", "parse_spec", "build_agents", "agent_settings"]

NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class ParsedSpec:
    """``name``: the agent's name; ``kind``: oracle/noop/sim/cmd/claude/openai/named/hook;
    ``arg``: P, the shell command or the model (or ``None``); ``spec``: the spec without ``NAME=``."""

    name: str
    kind: str
    arg: str | None
    spec: str


def parse_spec(text: str, *, named: Mapping[str, Any] = (), registered: Sequence[str] = ()) -> ParsedSpec:  # type: ignore[assignment]
    """Parse one ``--agent`` value. Raises :class:`AgentSpecError` for unknown kinds, bad names or
    a bad probability."""
    text = text.strip()
    name: str | None = None
    eq, colon = text.find("="), text.find(":")
    if eq >= 0 and (colon < 0 or eq < colon):  # NAME=SPEC (a '=' after the kind's ':' belongs to the spec)
        name, text = text[:eq].strip(), text[eq + 1 :].strip()
        if not NAME_RE.fullmatch(name):
            raise AgentSpecError(f"agent name {name!r} (in NAME=SPEC) must match [A-Za-z0-9_.-]+: "
                                 "letters, digits, '_', '.' and '-' only")
        if not text:
            raise AgentSpecError(f"agent {name!r}: NAME=SPEC needs a spec after '='")
    kind, _, arg = text.partition(":")
    if kind in ("oracle", "noop") and not arg:
        parsed = ParsedSpec(name or kind, kind, None, text)
    elif kind == "sim":
        try:
            p = float(arg)
        except ValueError:
            raise AgentSpecError(f"agent spec {text!r}: sim:P needs a probability, e.g. sim:0.6") from None
        if not 0 <= p <= 1:
            raise AgentSpecError(f"agent spec {text!r}: P must be between 0 and 1")
        parsed = ParsedSpec(name or f"sim-{arg}", "sim", arg, text)
    elif kind == "cmd":
        if not arg.strip():
            raise AgentSpecError(f"agent spec {text!r}: cmd: needs a shell command")
        parsed = ParsedSpec(name or "cmd", "cmd", arg, text)
    elif kind == "claude":
        parsed = ParsedSpec(name or (arg or "claude"), "claude", arg or None, text)
    elif kind == "attack":
        if arg not in {a.name for a in ATTACKS}:
            raise AgentSpecError(f"agent spec {text!r}: attack:NAME needs one of {', '.join(a.name for a in ATTACKS)}")
        parsed = ParsedSpec(name or f"attack-{arg}", "attack", arg, text)
    elif kind == "openai":
        if not arg:
            raise AgentSpecError(f"agent spec {text!r}: openai: needs a model, e.g. openai:qwen3-coder")
        parsed = ParsedSpec(name or arg, "openai", arg, text)
    elif kind == "preds":
        if not arg:
            raise AgentSpecError(f"agent spec {text!r}: preds: needs a predictions file, e.g. preds:preds.json")
        try:
            _, model = load_predictions(Path(arg))
        except PredictionsError as exc:
            raise AgentSpecError(f"agent spec {text!r}: {exc}") from None
        parsed = ParsedSpec(name or model or "preds", "preds", arg, text)
    elif not arg and text in named:
        parsed = ParsedSpec(name or text, "named", text, text)
    elif not arg and text in registered:
        parsed = ParsedSpec(name or text, "hook", text, text)
    else:
        known = ", ".join(sorted(set(named) | set(registered))) or "none"
        raise AgentSpecError(
            f"unknown agent {text!r}: use oracle, noop, sim:P, cmd:SHELL, claude[:MODEL], openai:MODEL, preds:FILE "
            f"or a named agent (named here: {known})"
        )
    if not NAME_RE.fullmatch(parsed.name):
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", parsed.name).strip("-") or "agent"
        if name is not None:
            raise AgentSpecError(f"agent name {parsed.name!r} must match [A-Za-z0-9_.-]+")
        parsed = ParsedSpec(safe, parsed.kind, parsed.arg, parsed.spec)
    return parsed


def agent_settings(settings: Any, definition: Mapping[str, Any] | None = None) -> AgentSettings:
    """Per-agent settings: ``agents.<name>`` values over the run-wide flags/config (docs/contracts.md §3)."""
    d = dict(definition or {})
    return AgentSettings(
        timeout_s=float(d.get("timeout", settings.timeout)),
        budget_usd=d.get("budget_usd", settings.attempt_budget),
        env=list(d.get("env", [])),
        base_url=d.get("base_url", settings.base_url),
        api_key=d.get("api_key", settings.api_key),
        prices=dict(settings.prices),
        allow_shell=bool(settings.allow_shell),
    )


def _make(parsed: ParsedSpec, settings: Any, definition: Mapping[str, Any] | None) -> Agent:
    s = agent_settings(settings, definition)
    if parsed.kind == "oracle":
        return OracleAgent(name=parsed.name, spec=parsed.spec)
    if parsed.kind == "noop":
        return NoopAgent(name=parsed.name, spec=parsed.spec)
    if parsed.kind == "sim":
        return SimAgent(name=parsed.name, spec=parsed.spec, p=float(parsed.arg or 0))
    if parsed.kind == "cmd":
        # only the unmodified built-in recipes may report infra (their helper reads the client's error)
        recipe = next((name for name, spec in RECIPES.items() if spec == parsed.spec), None)
        return CommandAgent(name=parsed.name, spec=parsed.spec, command=parsed.arg or "", settings=s,
                            trust_infra=recipe is not None, client=RECIPE_SANDBOX.get(recipe or ""))
    if parsed.kind == "claude":
        return ClaudeAgent(name=parsed.name, spec=parsed.spec, model=parsed.arg, settings=s)
    if parsed.kind == "attack":
        return attack_agent(parsed.arg or "", agent_name=parsed.name)
    if parsed.kind == "openai":
        return OpenAIAgent(name=parsed.name, spec=parsed.spec, model=parsed.arg or "", settings=s)
    if parsed.kind == "preds":
        return PredictionsAgent(name=parsed.name, spec=parsed.spec, path=Path(parsed.arg or ""))
    raise AgentSpecError(f"agent spec {parsed.spec!r} cannot be built directly")


def build_agents(specs: Sequence[str], settings: Any, hook_agents: Mapping[str, Agent] | None = None) -> list[Agent]:
    """Build the agents for ``--agent`` values in order. Named agents from ``.homefield.yml`` and hook
    agents resolve by name; ``NAME=`` renames. Raises :class:`AgentSpecError` on a bad spec or when two
    agents share a name."""
    hook_agents = dict(hook_agents or {})
    named = settings.agent_defs
    agents: list[Agent] = []
    for text in specs:
        parsed = parse_spec(text, named=named, registered=list(hook_agents))
        if parsed.kind == "named":
            definition = named[parsed.arg or ""]
            inner = parse_spec(definition["spec"], named={}, registered=list(hook_agents))
            if inner.kind == "hook":
                agent = hook_agents[inner.arg or ""]
            else:
                agent = _make(ParsedSpec(parsed.name, inner.kind, inner.arg, inner.spec), settings, definition)
        elif parsed.kind == "hook":
            agent = hook_agents[parsed.arg or ""]
            if parsed.name != agent.name:
                agent.name = parsed.name
        else:
            agent = _make(parsed, settings, named.get(parsed.name))
        agents.append(agent)
    seen: set[str] = set()
    for a in agents:
        if a.name in seen:
            raise AgentSpecError(f"two agents are named {a.name!r}: rename one with NAME=SPEC")
        seen.add(a.name)
    return agents
