"""pytest-homefield conftest template: your own agent, written in Python around a model SDK.

Copy this file to your repository root as ``conftest.py`` (or merge it into the one you have; it
does not need to be committed), edit the settings below, then::

    homefield run --agent sdk-agent --attempts 3
    homefield run --agent sdk-agent --agent claude:claude-sonnet-4-5   # compare it with another agent

How it works:

* ``pytest_homefield_agents`` returns agent objects; ``--agent NAME`` picks one by its ``name``. The
  hook is marked ``optionalhook=True`` so your own test suite still runs where pytest-homefield is
  not installed.
* An agent implements the small protocol of ``pytest_homefield.agents.Agent``: the attributes
  ``name``, ``spec``, ``simulated``, ``hinted`` and the methods ``version()`` and ``run(ctx)``.
  ``run`` edits files in ``ctx.workspace`` (a copy of the parent commit's tree; nothing else of the
  task is visible there) and returns an ``AgentResult``. Grading is homefield's: it runs the hidden
  tests on a clean copy with your change, so the agent never reports "solved" itself.
* ``ctx.prompt`` is the task in homefield's fixed template; this agent adds the repository's text
  files to it and asks the model for whole files back, between ``=== FILE: path`` and
  ``=== END`` lines. One model call, no tools: replace :meth:`SdkAgent.run` with a loop if yours
  needs several turns (stop by ``ctx.timeout_s`` and ``ctx.budget_usd``).
* Cost and tokens go into the result, so the report shows USD per solved task.
* Failures map to outcomes: a rate limit or provider outage → ``rate_limited`` (not scored; the run
  stops scheduling and can be continued with ``homefield run --resume``), a timeout → ``timeout``,
  anything else the SDK raises → ``agent_error``. Never let an exception escape for these: an
  exception is recorded as ``infra`` (the harness failed, not the agent).
* The agent runs inside homefield's pytest process (on an xdist worker with ``-n``), so it sees that
  process's environment, including your API key. ``ctx.env`` is the smaller environment of
  contracts §9: give that one to any subprocess you start.

:func:`call_model` uses the Anthropic Python SDK (``pip install anthropic``; ``ANTHROPIC_API_KEY``).
To use another SDK, replace that one function: it takes the system and user text and returns a
:class:`Reply`.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# --- settings ---------------------------------------------------------------------------------
AGENT_NAME = "sdk-agent"  # what --agent selects; [A-Za-z0-9_.-]+
MODEL = os.environ.get("SDK_AGENT_MODEL", "claude-sonnet-4-5")
MAX_OUTPUT_TOKENS = 16000
MAX_CONTEXT_CHARS = 200_000  # repository text put into the prompt, at most
#: USD per million tokens (input, output), to report cost; a model missing here reports no cost.
PRICES = {"claude-sonnet-4-5": (3.0, 15.0), "claude-haiku-4-5": (1.0, 5.0), "claude-opus-4-1": (15.0, 75.0)}

SYSTEM = """You change source code to fulfil a request. You are shown the repository's files.
Reply with the complete new content of every file you change or create, each as:
=== FILE: relative/path
<the whole file>
=== END
To delete a file, write a line "=== DELETE: relative/path". Write nothing else outside these blocks
except, at most, a short explanation before the first block."""


@dataclass
class Reply:
    """What one model call returned. Tokens are ``None`` when the SDK does not say."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    model: str | None = None


class RateLimited(Exception):
    """The provider refused for now (rate limit, overload): the attempt is not scored."""


class ModelTimeout(Exception):
    """The call did not finish in time."""


def call_model(system: str, user: str, *, model: str, timeout_s: float, max_tokens: int) -> Reply:
    """One model call through the Anthropic SDK. Replace this function to use another SDK; raise
    :class:`RateLimited` or :class:`ModelTimeout` for those two cases, anything else for an error."""
    import anthropic  # imported here: the conftest must load where the SDK is not installed

    client = anthropic.Anthropic(timeout=timeout_s, max_retries=2)
    try:
        msg = client.messages.create(
            model=model, max_tokens=max_tokens, system=system, messages=[{"role": "user", "content": user}]
        )
    except (anthropic.RateLimitError, anthropic.InternalServerError) as exc:
        raise RateLimited(str(exc)) from exc
    except anthropic.APITimeoutError as exc:
        raise ModelTimeout(str(exc)) from exc
    text = "".join(getattr(block, "text", "") for block in msg.content)
    return Reply(text=text, input_tokens=msg.usage.input_tokens, output_tokens=msg.usage.output_tokens,
                 model=msg.model)


def sdk_version() -> str | None:
    """The SDK's version for ``meta.json``."""
    try:
        import anthropic

        return f"anthropic {anthropic.__version__}"
    except ImportError:
        return None


# --- the agent --------------------------------------------------------------------------------

_BLOCK = re.compile(r"^=== FILE: *(?P<path>[^\n]+?) *\n(?P<body>.*?)^=== END *$", re.S | re.M)
_DELETE = re.compile(r"^=== DELETE: *(?P<path>[^\n]+?) *$", re.M)


def repository_text(workspace: Path, limit: int = MAX_CONTEXT_CHARS) -> str:
    """The workspace's tracked text files as ``=== FILE`` blocks, smallest first, up to ``limit``
    characters (a file list stands in for the rest)."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=workspace, capture_output=True, check=False)
    paths = [p for p in out.stdout.decode("utf-8", "replace").split("\0") if p]
    sized = sorted(paths, key=lambda p: ((workspace / p).stat().st_size if (workspace / p).is_file() else 0, p))
    parts, used, left_out = [], 0, []
    for rel in sized:
        try:
            text = (workspace / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # binary or unreadable
        if used + len(text) > limit:
            left_out.append(rel)
            continue
        parts.append(f"=== FILE: {rel}\n{text}{'' if text.endswith(chr(10)) else chr(10)}=== END")
        used += len(text)
    if left_out:
        parts.append("Files not shown (too large): " + ", ".join(sorted(left_out)))
    return "\n".join(parts)


def apply_reply(workspace: Path, text: str) -> list[str]:
    """Write the files of a reply into ``workspace``; returns the paths changed. Paths that leave the
    workspace or point into ``.git`` are ignored."""
    root = workspace.resolve()
    changed = []

    def target(rel: str) -> Path | None:
        path = (root / rel.strip()).resolve()
        if root not in path.parents or ".git" in path.relative_to(root).parts:
            return None
        return path

    for m in _BLOCK.finditer(text):
        path = target(m.group("path"))
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(m.group("body"), encoding="utf-8")
            changed.append(m.group("path").strip())
    for m in _DELETE.finditer(text):
        path = target(m.group("path"))
        if path is not None and path.is_file():
            path.unlink()
            changed.append(m.group("path").strip())
    return changed


class SdkAgent:
    """One model call that returns whole files (see the module docstring)."""

    simulated = False  # True only for agents whose results are not a real agent's (sim:P)
    hinted = False  # True if it is told which files the reference fix touched (ctx.hint_files)

    def __init__(self, name: str = AGENT_NAME, model: str = MODEL) -> None:
        self.name = name
        self.model = model
        self.spec = f"conftest:{model}"  # shown in reports next to the name

    def version(self) -> str | None:
        return sdk_version()

    def run(self, ctx: Any) -> Any:
        from pytest_homefield.agents.base import AgentResult

        user = f"{ctx.prompt}\n\nThe repository:\n\n{repository_text(ctx.workspace)}"
        try:
            reply = call_model(SYSTEM, user, model=self.model, timeout_s=ctx.timeout_s,
                               max_tokens=MAX_OUTPUT_TOKENS)
        except RateLimited as exc:
            return AgentResult(outcome="rate_limited", error=_one_line(exc))
        except ModelTimeout as exc:
            return AgentResult(outcome="timeout", error=_one_line(exc))
        except Exception as exc:  # the SDK's own errors: bad request, auth, connection …
            (ctx.artifacts / "agent.err").write_text(f"{type(exc).__name__}: {exc}\n", encoding="utf-8")
            return AgentResult(outcome="agent_error", exit_code=1, error=_one_line(exc))
        (ctx.artifacts / "agent.out").write_text(reply.text, encoding="utf-8")
        cost = _cost(reply.model or self.model, reply.input_tokens, reply.output_tokens)
        result = AgentResult(exit_code=0, cost_usd=cost, input_tokens=reply.input_tokens,
                             output_tokens=reply.output_tokens, turns=1, model=reply.model or self.model)
        if ctx.budget_usd is not None and cost is not None and cost > ctx.budget_usd:
            result.outcome, result.error = "budget_exceeded", f"{cost:.4f} USD > {ctx.budget_usd:.4f} USD"
            return result  # its edits are not applied, so not graded
        apply_reply(ctx.workspace, reply.text)
        return result


def _cost(model: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
    price = PRICES.get(model) or next((p for m, p in PRICES.items() if model.startswith(m)), None)
    if price is None or input_tokens is None or output_tokens is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1e6


def _one_line(exc: BaseException) -> str:
    lines = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__


@pytest.hookimpl(optionalhook=True)
def pytest_homefield_agents(config: pytest.Config) -> list[SdkAgent]:
    """Called on the controller and on every xdist worker: return fresh objects each time."""
    return [SdkAgent()]
