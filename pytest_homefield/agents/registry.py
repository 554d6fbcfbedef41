"""Agent specs → agent objects (docs/contracts.md §5): the table of agent kinds.

Specs: ``oracle``, ``noop``, ``sim:P``, ``cmd:SHELL``, ``claude``, ``claude:MODEL``,
``openai:MODEL``, ``preds:FILE`` (a SWE-bench predictions file, named by its ``model_name_or_path``),
``attack:NAME`` (a built-in attack agent, :mod:`pytest_homefield.agents.attacks`), a name from
``.homefield.yml`` ``agents:``, or a name registered through the ``pytest_homefield_agents`` hook;
any spec may be prefixed ``NAME=``. Default names: ``claude:MODEL`` / ``openai:MODEL`` → MODEL,
``sim:0.7`` → ``sim-0.7``, ``cmd:…`` → ``cmd``.

Each kind is one row of :data:`KINDS` (:class:`AgentKind`): how its spec's argument is read, its
:class:`~pytest_homefield.capabilities.Capabilities` and how its agent is built. A new kind is one
module (the agent class and its capabilities) and one row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pytest_homefield.agents import attacks, claude, cmd_agent, openai_compat, predictions, reference
from pytest_homefield.agents.attacks import ATTACKS, attack_agent
from pytest_homefield.agents.base import Agent, AgentSettings
from pytest_homefield.agents.claude import ClaudeAgent
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.agents.openai_compat import OpenAIAgent, sampling_error
from pytest_homefield.agents.predictions import PredictionsAgent, load_predictions
from pytest_homefield.agents.recipes import RECIPE_SANDBOX, RECIPES
from pytest_homefield.agents.reference import NoopAgent, OracleAgent, SimAgent
from pytest_homefield.capabilities import Capabilities
from pytest_homefield.errors import AgentSpecError, PredictionsError, PredictionsSpecError, RunError
from pytest_homefield.records import split_agent_name
from pytest_homefield.spelling import spell

__all__ = ["ParsedSpec", "AgentKind", "KINDS", "AgentOptions", "parse_spec", "build_agents", "agent_settings",
           "hook_agents", "make_agents", "kind_capabilities", "unstartable"]

NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class ParsedSpec:
    """``name``: the agent's name; ``kind``: a kind of :data:`KINDS`, ``named`` or ``hook``;
    ``arg``: P, the shell command or the model (or ``None``); ``spec``: the spec without ``NAME=``."""

    name: str
    kind: str
    arg: str | None
    spec: str


class AgentOptions(Protocol):
    """What building agents reads of :class:`pytest_homefield.settings.Settings`: the ``--agent`` specs,
    ``.homefield.yml`` ``agents:`` (``agent_defs``) and the run-wide values an agent's settings default
    to (seconds, USD, the OpenAI server, prices per model, ``--allow-shell``)."""

    @property
    def agents(self) -> Sequence[str]: ...
    @property
    def agent_defs(self) -> Mapping[str, Mapping[str, Any]]: ...
    @property
    def timeout(self) -> float: ...
    @property
    def attempt_budget(self) -> float | None: ...
    @property
    def base_url(self) -> str | None: ...
    @property
    def api_key(self) -> str | None: ...
    @property
    def max_tokens(self) -> int | None: ...
    @property
    def temperature(self) -> float | None: ...
    @property
    def stop(self) -> Sequence[str]: ...
    @property
    def prices(self) -> Mapping[str, dict[str, float]]: ...
    @property
    def allow_shell(self) -> bool: ...


@dataclass(frozen=True)
class AgentKind:
    """One row of :data:`KINDS`.

    * ``name``: the spec's kind, before the ``:`` (``claude`` in ``claude:MODEL``);
    * ``capabilities``: what every agent of the kind can do (declared in the kind's module);
    * ``read``: ``read(arg, text)`` → ``(default name, arg)`` for the spec ``text`` whose argument is
      ``arg`` (``""`` without one), ``None`` when ``text`` is no spec of this kind (it may still be a
      named or hook agent); raises :class:`AgentSpecError` (one line) for a bad argument;
    * ``build``: ``build(parsed, settings)`` → the agent, with its per-agent settings;
    * ``usage``: how the kind is written in the unknown-agent message (``None``: not listed).
    """

    name: str
    capabilities: Capabilities
    read: Callable[[str, str], tuple[str, str | None] | None]
    build: Callable[[ParsedSpec, AgentSettings], Agent]
    usage: str | None = None


def _bare(arg: str, text: str) -> tuple[str, str | None] | None:
    return None if arg else (text, None)


def _sim(arg: str, text: str) -> tuple[str, str | None]:
    try:
        p = float(arg)
    except ValueError:
        raise AgentSpecError(f"agent spec {text!r}: sim:P needs a probability, e.g. sim:0.6") from None
    if not 0 <= p <= 1:
        raise AgentSpecError(f"agent spec {text!r}: P must be between 0 and 1")
    return f"sim-{arg}", arg


def _cmd(arg: str, text: str) -> tuple[str, str | None]:
    if not arg.strip():
        raise AgentSpecError(f"agent spec {text!r}: cmd: needs a shell command")
    return "cmd", arg


def _attack(arg: str, text: str) -> tuple[str, str | None]:
    if arg not in {a.name for a in ATTACKS}:
        raise AgentSpecError(f"agent spec {text!r}: attack:NAME needs one of {', '.join(a.name for a in ATTACKS)}")
    return f"attack-{arg}", arg


def _openai(arg: str, text: str) -> tuple[str, str | None]:
    if not arg:
        raise AgentSpecError(f"agent spec {text!r}: openai: needs a model, e.g. openai:qwen3-coder")
    return arg, arg


def _preds(arg: str, text: str) -> tuple[str, str | None]:
    if not arg:
        raise AgentSpecError(f"agent spec {text!r}: preds: needs a predictions file, e.g. preds:preds.json")
    try:
        _, model = load_predictions(Path(arg))
    except PredictionsError as exc:
        raise PredictionsSpecError(f"agent spec {text!r}: {exc}") from None
    return model or "preds", arg


def _command_agent(p: ParsedSpec, s: AgentSettings) -> Agent:
    # only the unmodified built-in recipes may report infra (their helper reads the client's error)
    recipe = next((name for name, spec in RECIPES.items() if spec == p.spec), None)
    return CommandAgent(name=p.name, spec=p.spec, command=p.arg or "", settings=s, trust_infra=recipe is not None,
                        client=RECIPE_SANDBOX.get(recipe or ""))


#: The agent kinds, in the order the unknown-agent message lists them.
KINDS: dict[str, AgentKind] = {k.name: k for k in (
    AgentKind("oracle", reference.ORACLE, _bare, lambda p, s: OracleAgent(name=p.name, spec=p.spec), "oracle"),
    AgentKind("noop", reference.NOOP, _bare, lambda p, s: NoopAgent(name=p.name, spec=p.spec), "noop"),
    AgentKind("sim", reference.SIM, _sim, lambda p, s: SimAgent(name=p.name, spec=p.spec, p=float(p.arg or 0)),
              "sim:P"),
    AgentKind("cmd", cmd_agent.CAPABILITIES, _cmd, _command_agent, "cmd:SHELL"),
    AgentKind("claude", claude.CAPABILITIES, lambda arg, text: (arg or "claude", arg or None),
              lambda p, s: ClaudeAgent(name=p.name, spec=p.spec, model=p.arg, settings=s), "claude[:MODEL]"),
    AgentKind("attack", attacks.CAPABILITIES, _attack, lambda p, s: attack_agent(p.arg or "", agent_name=p.name)),
    AgentKind("openai", openai_compat.CAPABILITIES, _openai,
              lambda p, s: OpenAIAgent(name=p.name, spec=p.spec, model=p.arg or "", settings=s), "openai:MODEL"),
    AgentKind("preds", predictions.CAPABILITIES, _preds,
              lambda p, s: PredictionsAgent(name=p.name, spec=p.spec, path=Path(p.arg or ""),
                                            policy=s.preds_policy), "preds:FILE"),
)}


def parse_spec(text: str, *, named: Mapping[str, Any] = (), registered: Sequence[str] = ()) -> ParsedSpec:  # type: ignore[assignment]
    """Parse one ``--agent`` value. Raises :class:`AgentSpecError` for unknown kinds, bad names or
    a bad argument (e.g. a probability)."""
    name, text = split_agent_name(text)  # NAME=SPEC (a '=' after the kind's ':' belongs to the spec)
    if name is not None:
        if not NAME_RE.fullmatch(name):
            raise AgentSpecError(f"agent name {name!r} (in NAME=SPEC) must match [A-Za-z0-9_.-]+: "
                                 "letters, digits, '_', '.' and '-' only")
        if not text:
            raise AgentSpecError(f"agent {name!r}: NAME=SPEC needs a spec after '='")
    kind, _, arg = text.partition(":")
    row = KINDS.get(kind)
    read = row.read(arg, text) if row else None
    if read is not None:
        parsed = ParsedSpec(name or read[0], kind, read[1], text)
    elif not arg and text in named:
        parsed = ParsedSpec(name or text, "named", text, text)
    elif not arg and text in registered:
        parsed = ParsedSpec(name or text, "hook", text, text)
    else:
        known = ", ".join(sorted(set(named) | set(registered))) or "none"
        usages = [k.usage for k in KINDS.values() if k.usage]
        raise AgentSpecError(f"unknown agent {text!r}: use {', '.join(usages)} or a named agent (named here: {known})")
    if not NAME_RE.fullmatch(parsed.name):
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", parsed.name).strip("-") or "agent"
        if name is not None:
            raise AgentSpecError(f"agent name {parsed.name!r} must match [A-Za-z0-9_.-]+")
        parsed = ParsedSpec(safe, parsed.kind, parsed.arg, parsed.spec)
    return parsed


def agent_settings(settings: AgentOptions, definition: Mapping[str, Any] | None = None) -> AgentSettings:
    """Per-agent settings: ``agents.<name>`` values over the run-wide flags/config (docs/contracts.md §3).
    Raises :class:`AgentSpecError` (one line) for a ``max_tokens`` or ``temperature`` no server accepts
    (:func:`~pytest_homefield.agents.openai_compat.sampling_error`)."""
    d = dict(definition or {})
    max_tokens, temperature = d.get("max_tokens", settings.max_tokens), d.get("temperature", settings.temperature)
    problem = sampling_error(max_tokens, temperature)
    if problem:
        raise AgentSpecError(f"openai: agents ({spell('max-tokens')}, {spell('temperature')} or agents.<name>.*): "
                             f"{problem}")
    return AgentSettings(
        timeout_s=float(d.get("timeout", settings.timeout)),
        budget_usd=d.get("budget_usd", settings.attempt_budget),
        env=list(d.get("env", [])),
        base_url=d.get("base_url", settings.base_url),
        api_key=d.get("api_key", settings.api_key),
        prices=dict(settings.prices),
        allow_shell=bool(settings.allow_shell),
        preds_policy=str(getattr(settings, "preds_policy", "last")),
        max_tokens=max_tokens,
        temperature=None if temperature is None else float(temperature),
        stop=list(d.get("stop", settings.stop)),
    )


def _make(parsed: ParsedSpec, settings: AgentOptions, definition: Mapping[str, Any] | None) -> Agent:
    row = KINDS.get(parsed.kind)
    if row is None:
        raise AgentSpecError(f"agent spec {parsed.spec!r} cannot be built directly")
    return row.build(parsed, agent_settings(settings, definition))


def build_agents(specs: Sequence[str], settings: AgentOptions,
                 hook_agents: Mapping[str, Agent] | None = None) -> list[Agent]:
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


def hook_agents(contributions: Iterable[Any]) -> dict[str, Agent]:
    """Agents from the ``pytest_homefield_agents`` hook results (each a list of agents or a dict of
    them), by name. Raises :class:`RunError` when two are named alike."""
    out: dict[str, Agent] = {}
    for contributed in contributions:
        items = contributed.values() if isinstance(contributed, dict) else contributed
        for agent in items:
            if agent.name in out:
                raise RunError(f"pytest-homefield: two hook agents are named {agent.name!r}")
            out[agent.name] = agent
    return out


def make_agents(settings: AgentOptions, hooked: Mapping[str, Agent]) -> list[Agent]:
    """The ``--homefield-agent`` agents in order. Raises :class:`RunError` when none is given and
    :class:`AgentSpecError` for a bad spec."""
    specs = list(settings.agents)
    if not specs:
        raise RunError(f"pytest-homefield: no agent given: add {spell('agent')} SPEC (e.g. oracle)")
    return build_agents(specs, settings, hooked)


def unstartable(agents: Sequence[Agent], env: Mapping[str, str],
                confined: Callable[[Agent], bool] = lambda agent: False) -> list[str]:
    """One line per agent whose client is not installed on this machine (claude's CLI; a built-in recipe's
    client on ``env["PATH"]``, the ``PATH`` its agent gets) or, where ``confined(agent)`` (its attempts run under
    bubblewrap or Landlock), whose install needs the user's home, which no sandbox is given
    (:meth:`~pytest_homefield.agents.recipes.ClientSandbox.missing`): ``agent 'NAME': cannot start …`` with how to
    install it, ``agent 'NAME': cannot sandbox …``; a plain ``cmd:`` command whose program is not found
    (:func:`~pytest_homefield.agents.cmd_agent.program_missing`, ops62: before, each attempt was the shell's "not
    found" graded as an empty patch). Checked by the controller before anything is spent, where every worker is
    local, and by each worker on its own machine (a remote one may lack what this machine has:
    :func:`~pytest_homefield.run.run_plugin.worker_refusal`). Empty when every agent can start."""
    out = []
    for agent in agents:
        if isinstance(agent, ClaudeAgent):
            why = agent.missing()
        elif isinstance(agent, CommandAgent) and agent.client is not None:
            why = agent.client.missing(env, confined=confined(agent))
        elif isinstance(agent, CommandAgent):  # a plain cmd: command: its program (ops62)
            why = cmd_agent.program_missing(agent.command, env)
        else:
            continue
        if why:
            out.append(f"agent {agent.name!r}: {why}")
    return out


def kind_capabilities(spec: str) -> Capabilities | None:
    """The capabilities of the kind ``spec`` names (``claude`` for ``claude:MODEL``; no ``NAME=``), or
    ``None`` for a spec of no kind in :data:`KINDS` (a named or hook agent)."""
    row = KINDS.get(spec.partition(":")[0])
    return row.capabilities if row else None
