"""The ``claude[:MODEL]`` adapter: runs the Claude Code CLI in print mode on the workspace.

Command (source: /work/shared/reference/claude-cli.md, observed with CLI 2.1.328)::

    claude -p PROMPT --output-format stream-json --verbose --include-partial-messages
           --no-session-persistence --setting-sources "" --strict-mcp-config --add-dir .
           --permission-mode acceptEdits --disallowedTools Bash --restricted  # edit-only (default)
           --permission-mode acceptEdits --allowedTools Bash                  # with ctx.allow_shell
           [--model MODEL] [--max-budget-usd USD] [--max-turns N]

with ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` and ``CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1``
added to the attempt's environment. No configuration file of the workspace is read (:data:`ISOLATION_FLAGS`):
a commit's ``.claude/settings.json`` hooks, ``apiKeyHelper`` or ``.mcp.json`` servers never run, its
``CLAUDE.md`` still reaches the model; ``--restricted`` is the CLI's own mode without tools that run code
(``Bash``, ``Workflow`` scripts). The stream
is written to ``agent.out``; its last ``result`` line is the same object as ``--output-format json``
prints. The partial-message events (``message_start`` / ``message_delta`` usage per API message)
let a killed attempt keep an estimate of what it spent, priced with the CLI's own table
(:data:`CLAUDE_PRICES`) and marked ``cost_partial``.

Outcomes come from ``is_error`` / ``terminal_reason`` (never ``subtype``, which says ``success`` on
API errors): ``max_turns`` → ``agent_error``; ``budget_exhausted`` → ``budget_exceeded``;
``api_error`` with status 429/529 (or a rate-limit/overload type) → ``rate_limited``, other API
errors → ``infra``; a wall-clock timeout → ``timeout``; a missing binary → ``infra``. The result line
is the CLI's stdout, which any process the agent starts can write (``/proc/<pid>/fd/1``): it counts only
when the CLI exited on its own (a CLI killed by a signal → ``agent_error``, cost estimated from the
stream), and an unscored outcome read from it is the agent's claim, which ``--max-retries`` bounds
(docs/contracts.md §8).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.agents.base import (
    AgentContext,
    AgentResult,
    AgentSettings,
    CallSandbox,
    Capable,
    Completion,
    reported_count,
    reported_usd,
)
from pytest_homefield.agents.environment import agent_passthrough, build_agent_env
from pytest_homefield.capabilities import Capabilities
from pytest_homefield.key_shapes import redact
from pytest_homefield.sandbox.bwrap import BwrapUnavailable
from pytest_homefield.sandbox.limits import WriteLimits
from pytest_homefield.sandbox.procs import run_agent
from pytest_homefield.sandbox.tempdirs import scratch
from pytest_homefield.store import own_text

__all__ = [
    "ANTHROPIC_API_HOST",
    "CAPABILITIES",
    "CLAUDE_PRICES",
    "ISOLATION_FLAGS",
    "UNKNOWN_MODEL_PRICE",
    "ClaudeAgent",
    "LOGIN_KEYS",
    "StreamSummary",
    "claude_cost",
    "claude_price",
    "classify_result",
    "copy_login",
    "summarize_stream",
]

#: USD per million tokens (input, output, cache write, cache read), keyed by the model id the CLI
#: sends (which is the ``modelUsage`` key). Observed against CLI 2.1.328 (claude-cli.md §6); the
#: cache prices of the rows marked "derived" follow the observed 1.25x / 0.1x input pattern.
CLAUDE_PRICES: dict[str, tuple[float, float, float, float]] = {
    "claude-sonnet-4-5": (3.0, 15.0, 3.75, 0.30),
    "claude-sonnet-4-6": (3.0, 15.0, 3.75, 0.30),
    "claude-sonnet-4-20250514": (3.0, 15.0, 3.75, 0.30),  # derived cache prices
    "claude-sonnet-4-0": (3.0, 15.0, 3.75, 0.30),  # derived cache prices
    "claude-haiku-4-5": (1.0, 5.0, 1.25, 0.10),
    "claude-3-5-haiku-20241022": (0.8, 4.0, 1.0, 0.08),  # derived cache prices
    "claude-opus-4-5": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-6": (5.0, 25.0, 6.25, 0.50),
    "claude-opus-4-1": (15.0, 75.0, 18.75, 1.50),  # only with CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP=1
    "claude-opus-5-5": (4.0, 20.0, 5.0, 0.20),  # `opus` alias, the CLI's default, opus-4-1 remap
    "claude-sonnet-5-5": (2.0, 10.0, 2.5, 0.20),  # `sonnet` alias; derived cache prices
    "claude-haiku-5-5": (0.1, 0.5, 0.125, 0.01),  # `haiku` alias; derived cache prices
}
#: What the CLI charges for a model it does not know (``costBasis: "unknown"``).
UNKNOWN_MODEL_PRICE = (4.0, 20.0, 5.0, 0.20)

#: Where the CLI's requests go without ``ANTHROPIC_BASE_URL``.
ANTHROPIC_API_HOST = "api.anthropic.com:443"

#: Variables the adapter adds to the attempt's environment. ``CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD``
#: makes ``--add-dir .`` (:data:`ISOLATION_FLAGS`) load the workspace's ``CLAUDE.md`` files.
CLAUDE_ENV = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD": "1"}

#: What the CLI reads of its configuration (esc30): no settings file at all (``--setting-sources ""``: neither
#: the workspace's ``.claude/settings.json`` / ``settings.local.json``, whose hooks, ``apiKeyHelper``, ``env``
#: and MCP approvals come from the task's commit or the agent, nor the user's), no MCP server
#: (``--strict-mcp-config`` with no ``--mcp-config``: the workspace's ``.mcp.json`` starts nothing), and the
#: workspace (the cwd) added as a ``CLAUDE.md`` folder, so its ``CLAUDE.md``, ``.claude/CLAUDE.md`` and
#: ``.claude/rules/*.md`` still reach the model as they did through the ``project`` source (a subfolder's
#: ``CLAUDE.md``, loaded on demand, and ``CLAUDE.local.md`` no longer do). Observed with CLI 2.1.328: under
#: ``--setting-sources project,local`` a commit's ``.claude/settings.json`` ran its hooks and
#: ``apiKeyHelper`` and its ``.mcp.json`` server in an edit-only attempt.
ISOLATION_FLAGS = ("--setting-sources", "", "--strict-mcp-config", "--add-dir", ".")

#: argv elements longer than this (bytes) go through stdin instead (Linux caps one at 128 KiB).
MAX_ARG_BYTES = 100_000

_RATE_TEXT = re.compile(r"rate.?limit|usage limit|overloaded|too many requests|\b(429|529)\b", re.I)


def claude_price(model: str | None) -> tuple[float, float, float, float]:
    """USD per million tokens (input, output, cache write, cache read) that the CLI charges for
    ``model``; :data:`UNKNOWN_MODEL_PRICE` for ids it does not know."""
    return CLAUDE_PRICES.get(model or "", UNKNOWN_MODEL_PRICE)


def claude_cost(model: str | None, input_tokens: int, output_tokens: int,
                cache_write_tokens: int = 0, cache_read_tokens: int = 0) -> float:
    """USD for one request's tokens, computed as the CLI does (claude-cli.md §6)."""
    p_in, p_out, p_cw, p_cr = claude_price(model)
    return (input_tokens * p_in + output_tokens * p_out
            + cache_write_tokens * p_cw + cache_read_tokens * p_cr) / 1e6


@dataclass
class _Message:
    """Token counts of one API message seen in the stream."""

    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    streamed_chars: int = 0
    finished: bool = False

    def take_usage(self, usage: dict[str, Any] | None) -> None:
        if not isinstance(usage, dict):
            return
        for attr, key in (("input_tokens", "input_tokens"), ("output_tokens", "output_tokens"),
                          ("cache_write_tokens", "cache_creation_input_tokens"),
                          ("cache_read_tokens", "cache_read_input_tokens")):
            value = reported_count(usage.get(key))
            if value is not None and value > getattr(self, attr):
                setattr(self, attr, value)

    @property
    def output_estimate(self) -> int:
        """Output tokens: final when the message finished, else at least 1 per 4 streamed chars."""
        if self.finished:
            return self.output_tokens
        return max(self.output_tokens, math.ceil(self.streamed_chars / 4))


@dataclass
class StreamSummary:
    """What a (possibly cut) ``stream-json`` transcript says.

    ``result`` is the final result object, if the CLI wrote one; ``model`` the main model from the
    ``init`` line; ``messages`` the usage per API message id.
    """

    result: dict[str, Any] | None = None
    model: str | None = None
    messages: dict[str, _Message] = field(default_factory=dict)
    turns: int = 0

    def estimate(self) -> AgentResult:
        """Cost (USD) and tokens of every message seen, priced with :func:`claude_cost` — the
        partial accounting of an interrupted attempt."""
        res = AgentResult(cost_usd=0.0, input_tokens=0, output_tokens=0, cache_read_tokens=0,
                          cache_write_tokens=0, turns=self.turns or None, model=self.model)
        for msg in self.messages.values():
            out = msg.output_estimate
            res.cost_usd = (res.cost_usd or 0.0) + claude_cost(
                msg.model or self.model, msg.input_tokens, out, msg.cache_write_tokens, msg.cache_read_tokens)
            res.input_tokens = (res.input_tokens or 0) + msg.input_tokens
            res.output_tokens = (res.output_tokens or 0) + out
            res.cache_read_tokens = (res.cache_read_tokens or 0) + msg.cache_read_tokens
            res.cache_write_tokens = (res.cache_write_tokens or 0) + msg.cache_write_tokens
        return res


def summarize_stream(text: str) -> StreamSummary:
    """Parse a ``--output-format stream-json --verbose --include-partial-messages`` transcript.

    Lines that are not JSON objects (a line cut by a kill, stray output) are skipped, and so is a line
    in no shape the CLI writes (a list where an object goes, a list as a message id: any process of an
    ``--allow-shell`` attempt can write the CLI's stdout, and such a line raised here, which made the
    attempt ``infra`` with its cost unknown; esc30). Main-thread messages are priced by the ``init``
    line's model (the CLI prices by the model it requested); sub-agent messages by the model their
    ``message_start`` names; a model that is no string is none.
    """
    summary = StreamSummary()
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the decoder goes (atk19)
            continue
        if not isinstance(obj, dict):
            continue
        try:
            _take_line(summary, obj)
        except (AttributeError, TypeError):  # a field in another shape than the CLI's: the line is skipped
            continue
    return summary


def _model(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _take_line(summary: StreamSummary, obj: dict[str, Any]) -> None:
    kind = obj.get("type")
    if kind == "system" and obj.get("subtype") == "init":
        summary.model = _model(obj.get("model")) or summary.model
    elif kind == "result":
        summary.result = obj
    elif kind == "stream_event":
        _take_event(summary, obj)
    elif kind == "assistant":
        message = obj.get("message") or {}
        mid = message.get("id")
        if mid:
            msg = summary.messages.setdefault(mid, _Message())
            msg.take_usage(message.get("usage"))
            if obj.get("parent_tool_use_id") and not msg.model:
                msg.model = _model(message.get("model"))


def _take_event(summary: StreamSummary, obj: dict[str, Any]) -> None:
    event = obj.get("event") or {}
    etype = event.get("type")
    if etype == "message_start":
        message = event.get("message") or {}
        mid = message.get("id") or obj.get("api_message_id")
        if not mid:
            return
        msg = summary.messages.setdefault(mid, _Message())
        msg.take_usage(message.get("usage"))
        if obj.get("parent_tool_use_id"):
            msg.model = _model(message.get("model"))
        else:
            summary.turns += 1
        return
    mid = obj.get("api_message_id")
    if not mid:
        return
    msg = summary.messages.setdefault(mid, _Message())
    if etype == "message_delta":
        msg.take_usage(event.get("usage"))
        msg.finished = True
    elif etype == "content_block_delta":
        delta = event.get("delta") or {}
        for key in ("text", "partial_json", "thinking"):
            if isinstance(delta.get(key), str):
                msg.streamed_chars += len(delta[key])


def classify_result(result: dict[str, Any]) -> tuple[str | None, str | None]:
    """(outcome, one-line error) of a CLI result object; outcome ``None`` means "grade it".

    Reads ``is_error``, ``terminal_reason``, ``api_error_status`` / ``api_error_type`` and the
    message text; never ``subtype`` (claude-cli.md §5).
    """
    if not result.get("is_error"):
        return None, None
    reason = result.get("terminal_reason")
    errors = result.get("errors")
    first_error = errors[0] if isinstance(errors, list) and errors else ""
    text = str(result.get("result") or first_error or reason or "")
    text = " ".join(text.split())[:300] or "claude reported an error"
    if reason == "max_turns":
        return "agent_error", text
    if reason == "budget_exhausted":
        return "budget_exceeded", text
    if reason == "api_error":
        status = result.get("api_error_status")
        etype = str(result.get("api_error_type") or "")
        if status in (429, 529) or etype in ("rate_limit_error", "overloaded_error"):
            return "rate_limited", text
        return "infra", text
    if _RATE_TEXT.search(text):
        return "rate_limited", text
    return "agent_error", text


def _usage_from_result(result: dict[str, Any]) -> AgentResult:
    """Cost, the four token counts, turns and model of a result object.

    Tokens are summed over ``modelUsage`` (every model the run used); ``usage`` is the fallback.
    The model is the ``modelUsage`` key with the highest cost. ``num_turns`` counts one more than
    the requests made when ``--max-turns`` stopped the run; that is corrected here.
    """
    res = AgentResult(cost_usd=reported_usd(result.get("total_cost_usd")))
    model_usage = result.get("modelUsage")
    if isinstance(model_usage, dict) and model_usage and all(isinstance(u, dict) for u in model_usage.values()):
        def total(key: str) -> int:
            return sum(reported_count(u.get(key)) or 0 for u in model_usage.values())

        res.input_tokens, res.output_tokens = total("inputTokens"), total("outputTokens")
        res.cache_read_tokens = total("cacheReadInputTokens")
        res.cache_write_tokens = total("cacheCreationInputTokens")
        res.model = max(model_usage, key=lambda k: reported_usd(model_usage[k].get("costUSD")) or 0.0)
    elif isinstance(result.get("usage"), dict):
        usage = result["usage"]
        res.input_tokens = reported_count(usage.get("input_tokens")) or 0
        res.output_tokens = reported_count(usage.get("output_tokens")) or 0
        res.cache_read_tokens = reported_count(usage.get("cache_read_input_tokens")) or 0
        res.cache_write_tokens = reported_count(usage.get("cache_creation_input_tokens")) or 0
    turns = reported_count(result.get("num_turns"))
    if turns is not None:
        res.turns = turns - 1 if result.get("terminal_reason") == "max_turns" and turns > 0 else turns
    return res


def killed_by_signal(exit_code: int | None) -> bool:
    """Whether a process with this exit status was killed by a signal: negative (Python's way) or over
    128 (a shell's or bubblewrap's ``128 + N``). Claude Code exits 0 or 1 on its own."""
    return exit_code is not None and (exit_code < 0 or exit_code > 128)


def _own_text(path: Path) -> str:
    """The text of an output file of the agent's folder (``agent.out``, ``agent.err``); ``""`` when it is missing or
    is no file of homefield's (a link, never followed; a fifo or device, never opened: link46)."""
    try:
        return own_text(path)
    except OSError:
        return ""


def _last_line(path: Path) -> str:
    """The last non-empty line of an output file, cut at 300 characters, of the text redacted whole
    (:func:`~pytest_homefield.key_shapes.redact`): a key its client wrapped over the last two lines is one key
    there, where the last line alone would be its tail, no key shape left to find (ratk48)."""
    lines = [ln for ln in redact(_own_text(path)).splitlines() if ln.strip()]
    return lines[-1].strip()[:300] if lines else ""


#: A program (sandboxed) that runs commands only with ``--allow-shell`` (its Bash tool); the CLI reads
#: ``CLAUDE.md``.
CAPABILITIES = Capabilities(process=True, commands="with_shell", rules_file="CLAUDE.md")


#: The keys of the CLI's ``.claude.json`` copied into an agent's sandbox: what it logs in with (an API
#: key from ``/login``, the account of an OAuth login, the keys the user approved) and who it is. The
#: real CLI (2.1.x) needs nothing else of the file, nor of its folder but ``.credentials.json`` (the
#: OAuth tokens): ``projects`` (per-folder state), ``mcpServers`` (with their tokens) and the rest stay out.
LOGIN_KEYS = ("primaryApiKey", "oauthAccount", "customApiKeyResponses", "userID", "hasCompletedOnboarding")


def copy_login(config: Path, credentials: Path, config_dest: Path, credentials_dest: Path) -> None:
    """Copy ``credentials`` (a regular file) to ``credentials_dest`` and the :data:`LOGIN_KEYS` of the
    JSON object in ``config`` to ``config_dest`` (mode 0600; parents made), each when it exists (a
    ``config`` that is no JSON object is left out). Raises ``OSError`` when a copy cannot be written."""
    if credentials.is_file():
        credentials_dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(credentials, credentials_dest)
        credentials_dest.chmod(0o600)
    try:
        data = json.loads(config.read_text(encoding="utf-8")) if config.is_file() else None
    except (OSError, ValueError):
        data = None
    if isinstance(data, dict):
        config_dest.parent.mkdir(parents=True, exist_ok=True)
        config_dest.write_text(json.dumps({k: data[k] for k in LOGIN_KEYS if k in data}), encoding="utf-8")
        config_dest.chmod(0o600)


class ClaudeAgent(Capable):
    """``claude[:MODEL]``: the Claude Code CLI (``executable``) on the workspace.

    ``executable`` defaults to ``$HOMEFIELD_CLAUDE_BIN``, else ``claude`` on ``PATH``.
    ``max_turns`` (optional) adds ``--max-turns``. ``env_passthrough`` lists the variables the runner
    copies into the attempt's environment (docs/contracts.md §9: the claude defaults + ``settings.env``).
    """

    capabilities = CAPABILITIES

    def sandbox_paths(self, env: Mapping[str, str] | None = None) -> list[Path]:
        """Read-only paths the CLI needs inside a sandbox: its launcher as a file (``node_modules/.bin/claude``,
        ``~/bin/claude``; a link is made that link inside, :func:`~pytest_homefield.sandbox.bwrap.bwrap_argv`), and
        its installed package when it lies in one (``node_modules/@anthropic-ai/claude-code``, above its ``bin/``
        when its real file is there), else its real file alone (the native installer's
        ``~/.local/share/claude/versions/X``, a binary copied to ``~/bin``). Never the folder the launcher or the
        real file merely sits in: ``~/bin`` holds the user's other programs and their scripts' secrets (satk60)."""
        launcher = Path(os.path.abspath(self.executable))
        real = Path(os.path.realpath(launcher))
        package = real.parent.parent if real.parent.name == "bin" else real.parent
        if package.parent.name == "node_modules" or package.parent.parent.name == "node_modules":  # @scope/name
            return list(dict.fromkeys([launcher, package]))
        return list(dict.fromkeys([launcher, real]))

    def provider_hosts(self, env: Mapping[str, str]) -> list[str]:
        """Where the CLI's requests go: ``ANTHROPIC_BASE_URL`` when the attempt's environment sets it
        (a gateway, a local scripted API), else the Anthropic API (``api.anthropic.com:443``). With
        ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` the CLI calls nothing else (claude-cli.md §1).
        Bedrock, Vertex or an OAuth refresh need ``--allow-host``."""
        base = (env.get("ANTHROPIC_BASE_URL") or "").strip()
        return [base] if base else [ANTHROPIC_API_HOST]

    def sandbox_home(self, home: Path, env: dict[str, str]) -> None:
        """Copy what the CLI needs to log in from the user's ``HOME`` (``env["HOME"]``, else this
        process's) into the sandbox's fresh ``home`` (:func:`copy_login`): ``~/.claude.json`` (its
        :data:`LOGIN_KEYS` only) and ``~/.claude/.credentials.json``, and the same two of a
        ``CLAUDE_CONFIG_DIR`` (re-pointed at the copy in ``env``). Never its sessions, history or
        other state (docs/contracts.md §9). Raises ``OSError`` when a copy cannot be written."""
        real_home = Path(env.get("HOME") or os.environ.get("HOME") or Path.home())
        copy_login(real_home / ".claude.json", real_home / ".claude" / ".credentials.json",
                   home / ".claude.json", home / ".claude" / ".credentials.json")
        conf = env.get("CLAUDE_CONFIG_DIR")
        if conf and Path(conf).is_dir():
            dest = home / ".claude-config"
            dest.mkdir(exist_ok=True)
            copy_login(Path(conf) / ".claude.json", Path(conf) / ".credentials.json",
                       dest / ".claude.json", dest / ".credentials.json")
            env["CLAUDE_CONFIG_DIR"] = str(dest)

    def __init__(self, *, name: str, spec: str, model: str | None, settings: AgentSettings,
                 executable: str | None = None, max_turns: int | None = None) -> None:
        self.name = name
        self.spec = spec
        self.model = model
        self.settings = settings
        self.max_turns = max_turns
        exe = executable or os.environ.get("HOMEFIELD_CLAUDE_BIN") or "claude"
        self.executable = shutil.which(exe) or exe
        self.env_passthrough = agent_passthrough("claude", settings)
        self._version: str | None = None
        self._version_read = False

    def missing(self) -> str | None:
        """Why the CLI cannot start (``executable`` is no executable file), else ``None``: checked before each
        attempt, so a machine without the CLI makes unscored ``infra`` attempts (homefield's own finding, not
        the agent's claim), never ``agent_error`` ones scored as failures (nu19: under bubblewrap the relay
        inside the sandbox exited 127 and every attempt was a scored "claude exited 127 without a result")."""
        if os.path.isfile(self.executable) and os.access(self.executable, os.X_OK):
            return None
        return (f"cannot start {self.executable}: no such executable (install the Claude Code CLI: npm i -g "
                "@anthropic-ai/claude-code, or set HOMEFIELD_CLAUDE_BIN to its path)")

    def version(self) -> str | None:
        """``claude --version`` (e.g. ``"2.1.328 (Claude Code)"``), or ``None`` when it cannot run.
        Read once, with a 30 s limit."""
        if not self._version_read:
            self._version_read = True
            try:
                out = subprocess.run([self.executable, "--version"], capture_output=True, text=True,
                                     timeout=30, env={**os.environ, **CLAUDE_ENV}, stdin=subprocess.DEVNULL)
                text = out.stdout.strip().splitlines()
                self._version = text[0] if out.returncode == 0 and text else None
            except (OSError, subprocess.SubprocessError):
                self._version = None
        return self._version

    def command(self, prompt: str, *, allow_shell: bool, budget_usd: float | None,
                tools: str | None = None, max_turns: int | None = None) -> tuple[list[str], str | None]:
        """argv for one run, and the text to send on stdin (a prompt too long for argv, or one that
        starts with ``-``). ``tools`` replaces the permission flags with ``--tools TOOLS``."""
        stdin_text = prompt if len(prompt.encode()) > MAX_ARG_BYTES or prompt.startswith("-") else None
        cmd = [self.executable, "-p"]
        if stdin_text is None:
            cmd.append(prompt)
        cmd += ["--output-format", "stream-json", "--verbose", "--include-partial-messages",
                "--no-session-persistence", *ISOLATION_FLAGS]
        if tools is not None:
            cmd += ["--tools", tools]
        else:
            cmd += ["--permission-mode", "acceptEdits",
                    "--allowedTools" if allow_shell else "--disallowedTools", "Bash"]
            if not allow_shell:
                cmd.append("--restricted")
        if self.model:
            cmd += ["--model", self.model]
        if budget_usd is not None:
            cmd += ["--max-budget-usd", f"{budget_usd:.6f}".rstrip("0").rstrip(".")]
        turns = max_turns if max_turns is not None else self.max_turns
        if turns is not None:
            cmd += ["--max-turns", str(turns)]
        return cmd, stdin_text

    def run(self, ctx: AgentContext) -> AgentResult:
        """One attempt in ``ctx.workspace``; writes ``agent.out`` (the stream) and ``agent.err``.
        Never raises for agent-side failures (see the module docstring for outcomes)."""
        missing = self.missing()
        if missing:  # checked here, on the host: inside a sandbox the relay turns it into exit 127
            return AgentResult(outcome="infra", error=missing, established=True)
        cmd, stdin_text = self.command(ctx.prompt, allow_shell=ctx.allow_shell, budget_usd=ctx.budget_usd)
        env = {**ctx.env, **CLAUDE_ENV}
        return self._execute(ctx.wrap(cmd, env), stdin_text, cwd=ctx.workspace, env=env,
                             timeout_s=ctx.timeout_s, artifacts=ctx.artifacts, limits=ctx.limits, watch=ctx.watch)

    def complete(self, prompt: str, *, timeout_s: float, sandbox: CallSandbox, gold_answer: str = "") -> Completion:
        """Answer a plain prompt with no tools and no workspace: ``--tools ""`` (no tool is offered to
        the model), ``--max-turns 1``, an empty temp folder as cwd, inside ``sandbox`` (as an edit-only
        attempt's), the environment of docs/contracts.md §9 built from ``os.environ``. Cost and tokens
        come from the CLI's result object; ``infra`` when the sandbox cannot be made. ``gold_answer``
        is ignored."""
        missing = self.missing()
        if missing:
            return Completion(outcome="infra", error=missing, established=True)
        started = time.monotonic()
        with scratch() as root:  # removed without following the agent's links (hatk34)
            (root / "cwd").mkdir()
            env = build_agent_env(prompt=prompt, attempt=1, tmpdir=root / "tmp", passthrough=self.env_passthrough)
            cmd, stdin_text = self.command(prompt, allow_shell=False, budget_usd=self.settings.budget_usd,
                                           tools="", max_turns=1)
            try:
                with sandbox(self, workspace=root / "cwd", box=root, env=env) as box:
                    full = {**env, **CLAUDE_ENV}
                    res = self._execute(box.wrap(cmd, full), stdin_text, cwd=root / "cwd", env=full,
                                        timeout_s=timeout_s, artifacts=root, limits=box.limits, watch=box.watch)
            except (OSError, BwrapUnavailable) as exc:
                return Completion(outcome="infra", error=f"cannot prepare the sandbox: {exc}", established=True)
            summary = summarize_stream(_own_text(root / "agent.out"))
        answer = str((summary.result or {}).get("result") or "")
        return Completion.from_result(answer, res, wall_s=time.monotonic() - started)

    def _execute(self, cmd: list[str], stdin_text: str | None, *, cwd: Path, env: dict[str, str],
                 timeout_s: float, artifacts: Path, limits: WriteLimits | None = None,
                 watch: Callable[[], str | None] | None = None) -> AgentResult:
        out_path, err_path = artifacts / "agent.out", artifacts / "agent.err"
        try:
            proc = run_agent(cmd, cwd=cwd, env=env, timeout_s=timeout_s, artifacts=artifacts, limits=limits,
                             watch=watch, stdin_text=stdin_text)
        except OSError as exc:
            return AgentResult(outcome="infra", error=f"cannot start {self.executable}: {exc}", established=True)
        summary = summarize_stream(_own_text(out_path))
        if proc.timed_out:
            res = summary.estimate()
            res.outcome, res.cost_partial, res.exit_code = "timeout", True, None
            res.error = f"no result within {timeout_s:g} s"
            return res
        if proc.over_memory:  # the kernel killed a process of it in its sandbox's memory cgroup: scored
            res = summary.estimate()
            res.outcome, res.cost_partial, res.exit_code, res.error = "agent_error", True, proc.exit_code, \
                proc.over_memory
            return res
        if killed_by_signal(proc.exit_code):  # its stdout is a pipe any process of the sandbox can write
            res = summary.estimate()
            res.outcome, res.cost_partial, res.exit_code = "agent_error", True, proc.exit_code
            res.error = (f"claude was killed by a signal (exit status {proc.exit_code}); a result line is taken "
                         "only from a CLI that exited on its own")
            return res
        if summary.result is None:
            detail = _last_line(err_path) or _last_line(out_path) or "no output"
            return AgentResult(outcome="agent_error", exit_code=proc.exit_code, model=summary.model,
                               error=f"claude exited {proc.exit_code} without a result: {detail}")
        res = _usage_from_result(summary.result)
        res.model = res.model or summary.model
        res.exit_code = proc.exit_code
        res.outcome, res.error = classify_result(summary.result)
        if res.outcome is None and proc.exit_code not in (0, None):
            res.outcome, res.error = "agent_error", f"claude exited {proc.exit_code}"
        return res
