"""The small protocol every agent implements, and what it is given (docs/contracts.md §9).

An agent is called once per attempt with an :class:`AgentContext` and returns an
:class:`AgentResult`. It edits files in ``ctx.workspace``; grading (not the agent) decides the
outcome from the hidden tests, unless the agent reports a terminal condition in
``AgentResult.outcome`` (timeout, budget, rate limit, infra, agent error).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pytest_homefield.capabilities import Capabilities
from pytest_homefield.records import reported_count, reported_usd
from pytest_homefield.sandbox.limits import WriteLimits

__all__ = ["Agent", "AgentContext", "AgentResult", "AgentSettings", "CallBox", "CallSandbox", "Capable", "Completer",
           "Completion", "OPENAI_MAX_TOKENS", "PROMPT_TEMPLATE", "can_complete", "render_prompt", "reported_count",
           "reported_usd", "MAX_ATTEMPT_USD", "over_cost_cap", "believable"]

#: The fixed template around a task's ``prompt`` (docs/contracts.md §9). ``{shell}`` promises shell access
#: only to agents that have it.
PROMPT_TEMPLATE = """You are working in a software repository (the current directory).
Make the code change that the following request describes. Edit the source files directly; do not
commit. {shell}

Request:
{prompt}
"""
SHELL_YES = "You may run shell commands, including the existing tests."
SHELL_NO = "You can read and edit files, but you cannot run commands."



#: The most one attempt's reported cost is believed (USD; docs/contracts.md §8). A reported cost is the
#: agent's claim and spends its share of ``--budget``: past this ceiling (no coding-agent attempt costs
#: that much) the attempt is ``agent_error`` and spends only the ceiling (atk11 G2: ``1e300`` spent the share
#: at the task the agent chose and left its later attempts unrun).
MAX_ATTEMPT_USD = 1000.0


def over_cost_cap(usd: float | None) -> str | None:
    """The ``agent_error`` line of a reported cost (USD) above :data:`MAX_ATTEMPT_USD`
    (``reported cost 1e+300 USD is over the per-attempt cap of 1000 USD``), else ``None``."""
    if usd is None or usd <= MAX_ATTEMPT_USD:
        return None
    return f"reported cost {usd:.3g} USD is over the per-attempt cap of {MAX_ATTEMPT_USD:g} USD"


def believable(res: AgentResult) -> AgentResult:
    """``res`` with its numbers as a record may hold them (docs/contracts.md §8), whichever adapter made them:
    the cost through :func:`reported_usd`, each count through :func:`reported_count` (one that is not is
    ``None``). A usage line is read so already; an adapter that computes its own (``openai:`` priced a server's
    negative count at -2000 USD, claude sums per-model counts, an agent a conftest's hook adds returns what it
    likes) is held to the same where the record is made (xatk31)."""
    return replace(res, cost_usd=reported_usd(res.cost_usd), input_tokens=reported_count(res.input_tokens),
                   output_tokens=reported_count(res.output_tokens),
                   cache_read_tokens=reported_count(res.cache_read_tokens),
                   cache_write_tokens=reported_count(res.cache_write_tokens), turns=reported_count(res.turns))


def render_prompt(task_prompt: str, *, allow_shell: bool, shell_known: bool = True) -> str:
    """The text an agent receives for a task whose ``prompt`` field is ``task_prompt``.

    ``allow_shell`` promises shell access (:data:`SHELL_YES`); otherwise an agent whose tools
    homefield controls (``shell_known``) is told it cannot run commands (:data:`SHELL_NO`), and a
    ``cmd:`` program, whose tools homefield does not know (it runs in a shell itself), is told
    neither."""
    shell = SHELL_YES if allow_shell else (SHELL_NO if shell_known else "")
    text = PROMPT_TEMPLATE.format(shell=shell, prompt=task_prompt.strip())
    return text.replace(" \n", "\n")


@dataclass
class AgentContext:
    """Everything an agent may use for one attempt.

    * ``workspace``: the snapshot (a one-commit git repository of the parent tree); also the cwd.
    * ``prompt``: the full rendered prompt (:func:`render_prompt`).
    * ``env``: the environment of docs/contracts.md §9, already built (no task id, sha or parent id).
    * ``timeout_s``: wall-clock seconds for the attempt; the adapter must stop by then.
    * ``budget_usd``: per-attempt spend cap in USD, or ``None``.
    * ``allow_shell``: whether the agent may run commands.
    * ``artifacts``: folder for ``agent.out`` / ``agent.err`` (outside the workspace).
    * ``seed``: deterministic per (task, agent, attempt), for simulated agents.
    * ``gold_patch``: the reference fix; only the reference agents (``oracle``, ``sim:P``) read it.
    * ``hint_files``: paths the reference fix touched; only ``hinted`` agents (``openai:``) read them.
    * ``task_id``: the task's id; only the replay agent (``preds:``) reads it, to find its patch. It is
      never put into ``env`` or the prompt.
    * ``wrap``: ``wrap(argv, env)`` turns the argv of the agent's program (to run with environment
      ``env``) into the argv that runs it in the attempt's sandbox (``argv`` itself without one);
      adapters that start a program must start ``ctx.wrap(argv, env)`` with that same ``env``.
    * ``sandbox``: which sandbox ``wrap`` applies: ``bwrap``, ``landlock``, ``hook`` or ``none`` (docs/contracts.md §8).
    * ``task``: the whole task record, given only to agents with ``reference = True`` (oracle, sim:P,
      the built-in attack agents of ``homefield verify --attacks``); ``None`` for every other agent.
    * ``limits``: what the agent may write (bytes per output stream, per file, in all); ``watch``:
      the check that stops it when its folders grow past the total while it runs. Adapters that
      start a program pass both to :func:`pytest_homefield.sandbox.procs.run_agent`, which writes
      ``agent.out`` / ``agent.err``.
    """

    workspace: Path
    prompt: str
    env: dict[str, str]
    timeout_s: float
    artifacts: Path
    attempt: int = 1
    budget_usd: float | None = None
    allow_shell: bool = False
    seed: int = 0
    gold_patch: str = ""
    hint_files: list[str] = field(default_factory=list)
    task_id: str = ""
    wrap: Callable[[list[str], Mapping[str, str]], list[str]] = field(default=lambda argv, env: list(argv))
    sandbox: str = "none"
    task: Any = None
    limits: WriteLimits = field(default_factory=WriteLimits)
    watch: Callable[[], str | None] | None = None


#: The default cap on an ``openai:`` reply, in tokens (``max_tokens``; issue 33). Without a cap a small
#: local model repeats itself until the server's context is full (SmolLM2-135M under llama.cpp did). 4096
#: is the smallest output limit among common chat models (gpt-3.5-turbo's), so no server refuses it, and
#: holds a few whole files of a few hundred lines.
OPENAI_MAX_TOKENS = 4096


@dataclass
class AgentSettings:
    """Per-agent settings merged from flags and ``.homefield.yml`` ``agents.<name>`` (docs/contracts.md §3).

    * ``timeout_s``: seconds per attempt (``--timeout`` / ``agents.<n>.timeout``; default 900);
    * ``budget_usd``: USD per attempt (``agents.<n>.budget_usd``, else ``--attempt-budget``);
    * ``env``: names of extra environment variables passed through to the agent;
    * ``base_url`` / ``api_key``: for ``openai:`` agents;
    * ``prices``: model id -> {"input": USD per 1M tokens, "output": USD per 1M tokens};
    * ``allow_shell``: the agent may run commands (``--allow-shell``);
    * ``preds_policy``: which of several predictions of an instance a ``preds:`` agent replays
      (``--preds-policy``: ``last``, ``first`` or ``attempts``).
    * ``max_tokens``, ``temperature``, ``stop``: what an ``openai:`` agent asks of the server (the most
      tokens a reply may have, default :data:`OPENAI_MAX_TOKENS`, ``None``: no cap sent; the sampling
      temperature, ``None``: the server's default; stop sequences, ``[]``: none sent).
    """

    timeout_s: float = 900.0
    budget_usd: float | None = None
    env: list[str] = field(default_factory=list)
    base_url: str | None = None
    api_key: str | None = None
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    allow_shell: bool = False
    preds_policy: str = "last"
    max_tokens: int | None = OPENAI_MAX_TOKENS
    temperature: float | None = None
    stop: list[str] = field(default_factory=list)


@dataclass
class AgentResult:
    """What an agent reports about its attempt. Units: USD, tokens.

    ``outcome`` is ``None`` when the hidden tests should decide; otherwise one of ``timeout``,
    ``agent_error``, ``budget_exceeded``, ``missing`` (a ``preds:`` file has no patch for it; scored) or
    ``rate_limited``, ``infra`` (unscored).
    ``cost_partial`` marks a cost estimated from an interrupted attempt.
    ``established``: homefield itself established the unscored outcome (the agent's program could not be
    started, the reference fix did not apply); an unscored outcome read from the agent's own output (a
    usage line, claude's result line, an ``openai:`` server's reply) or raised by its adapter is the
    agent's claim, which ``--max-retries`` bounds (docs/contracts.md §8).
    """

    outcome: str | None = None
    exit_code: int | None = None
    cost_usd: float | None = None
    cost_partial: bool = False
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    turns: int | None = None
    model: str | None = None
    error: str | None = None
    established: bool = False


@runtime_checkable
class Agent(Protocol):
    """A coding agent. Attributes:

    * ``name``: unique, ``[A-Za-z0-9_.-]+`` (docs/contracts.md §5); ``spec``: the spec it came from;
    * ``simulated``: results are not a real agent's (``sim:P``); ``hinted``: it was told which files
      the fix touches (``openai:``). Both are marked in every report.

    What else an agent can do is its :class:`~pytest_homefield.capabilities.Capabilities` (built-in
    agents: ``capabilities``; hook agents may declare the optional attributes that
    :func:`~pytest_homefield.capabilities.declared_capabilities` reads).
    """

    name: str
    spec: str

    @property
    def simulated(self) -> bool: ...

    @property
    def hinted(self) -> bool: ...

    def version(self) -> str | None:
        """The client's version string, or ``None``; recorded in ``meta.json``."""
        ...

    def run(self, ctx: AgentContext) -> AgentResult:
        """Attempt the task in ``ctx.workspace`` within ``ctx.timeout_s`` seconds.

        Must not raise for agent-side failures (return ``outcome="agent_error"`` / ``"infra"``);
        an exception is recorded as ``infra``, the agent's claim (``AgentResult.established``).
        """
        ...


class Capable:
    """The base of the built-in agents: ``capabilities`` (their kind's, from its row of
    :data:`pytest_homefield.agents.registry.KINDS`) and the agent protocol's ``simulated`` and
    ``hinted``, read from it."""

    capabilities: Capabilities = Capabilities()

    @property
    def simulated(self) -> bool:
        """Results are a simulation (``capabilities.simulated``)."""
        return self.capabilities.simulated

    @property
    def hinted(self) -> bool:
        """Told which files the fix touches (``capabilities.hinted``)."""
        return self.capabilities.hinted


@dataclass
class Completion:
    """The answer to a plain text prompt (:meth:`Completer.complete`). Units: USD, tokens, seconds.

    ``text`` is the answer (``""`` when there is none); ``outcome`` is ``None`` when the agent
    answered, else ``timeout``, ``agent_error``, ``budget_exceeded``, ``rate_limited`` or ``infra``
    with a one-line ``error``; ``established`` as :attr:`AgentResult.established` (homefield's own
    ``infra``: the program or its sandbox could not be started), which a probe never scores.
    """

    text: str = ""
    outcome: str | None = None
    error: str | None = None
    cost_usd: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    model: str | None = None
    wall_s: float = 0.0
    established: bool = False

    @classmethod
    def from_result(cls, text: str, res: AgentResult, wall_s: float = 0.0) -> Completion:
        """A completion carrying ``res``'s outcome, error, cost, tokens and model (``text`` only
        when there is no outcome)."""
        res = believable(res)
        return cls(text=text if res.outcome is None else "", outcome=res.outcome, error=res.error,
                   cost_usd=res.cost_usd, input_tokens=res.input_tokens, output_tokens=res.output_tokens,
                   cache_read_tokens=res.cache_read_tokens, cache_write_tokens=res.cache_write_tokens,
                   model=res.model, wall_s=wall_s, established=res.established)


@dataclass
class CallBox:
    """The sandbox of one text-only call of an agent that starts a program (:meth:`Completer.complete`):
    ``wrap(argv, env)`` as :attr:`AgentContext.wrap` (the call's program must be started as
    ``wrap(argv, env)`` with that same ``env``), ``limits`` and ``watch`` as :class:`AgentContext`'s,
    for :func:`pytest_homefield.sandbox.procs.run_agent`; ``sandbox`` as :attr:`AgentContext.sandbox` (the configured
    backend: ``bwrap``, ``landlock`` or ``none``)."""

    wrap: Callable[[list[str], Mapping[str, str]], list[str]]
    limits: WriteLimits = field(default_factory=WriteLimits)
    watch: Callable[[], str | None] | None = None
    sandbox: str = "none"


class CallSandbox(Protocol):
    """What the probe hands the ``complete()`` of an agent whose capabilities say ``process``:
    ``sandbox(agent, workspace=…, box=…, env=…)`` is a context manager giving the :class:`CallBox` of
    one call whose cwd is ``workspace`` and whose private folder is ``box`` (``box/tmp`` its ``TMPDIR``,
    ``box/home`` its ``HOME`` when confined); ``env`` (built by the agent) is changed in place as an
    attempt's is (``HOME``, the client's configuration). Leaving it stops the call's proxy and relay.
    Raises :class:`~pytest_homefield.sandbox.bwrap.BwrapUnavailable` where the agent must be confined
    and cannot be (docs/contracts.md §9)."""

    def __call__(self, agent: Any, *, workspace: Path, box: Path,
                 env: dict[str, str]) -> AbstractContextManager[CallBox]: ...


@runtime_checkable
class Completer(Protocol):
    """The text-only capability an agent may add (the memorization probe uses it): no tools, no
    workspace, no repository access."""

    name: str
    spec: str

    def complete(self, prompt: str, *, timeout_s: float, gold_answer: str = "") -> Completion:
        """Answer ``prompt`` within ``timeout_s`` seconds. ``gold_answer`` is the answer a perfect
        memoriser would give; only the reference agents (``oracle``, ``sim:P``) read it. Must not
        raise for agent-side failures (return an ``outcome``). An agent whose capabilities say
        ``process`` is also given ``sandbox=`` (a :class:`CallSandbox`, required) and must start its
        program inside it."""
        ...


def can_complete(agent: object) -> bool:
    """True when ``agent`` has a callable ``complete`` (see :class:`Completer`)."""
    return callable(getattr(agent, "complete", None))
