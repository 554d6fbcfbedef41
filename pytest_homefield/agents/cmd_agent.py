"""The ``cmd:SHELL`` adapter: any program, run as ``sh -c SHELL`` in the workspace.

The program gets the environment of docs/contracts.md §9 (the prompt is in ``$HOMEFIELD_PROMPT``) and the
attempt's wall-clock limit; on timeout its whole process tree is killed
(:func:`pytest_homefield.sandbox.procs.run_agent`) and the outcome is ``timeout``. stdout and stderr go
through pipes to ``agent.out`` / ``agent.err``, each capped (``--max-output-mb``; the last lines are
kept). The exit status is recorded but is not a failure by itself: the hidden tests decide. For the
memorization probe (:meth:`CommandAgent.complete`) the same program gets the probe question in
``$HOMEFIELD_PROMPT`` in an empty folder and answers on stdout.

**Usage line.** When the last non-empty line of stdout is a JSON object, these keys are read (all
optional; wrong types, negative numbers and non-finite ones — ``Infinity``, ``NaN``, ``1e400`` — are
ignored):

* ``cost_usd`` (USD), ``input_tokens``, ``output_tokens``, ``cache_read_tokens``,
  ``cache_write_tokens`` (tokens), ``turns``, ``model``;
* ``outcome``: one of ``agent_error``, ``budget_exceeded``, ``rate_limited`` — a wrapper that
  recognises its client's rate limit can say so (see :mod:`.recipes`). ``infra`` is taken only from
  the built-in recipes (``trust_infra``), whose helper reads the client's own output; any other
  command reporting it gets ``agent_error`` (scored): an agent that could make its failures unscored
  would be retried until luck helps (issue 15). Either unscored outcome is the agent's claim
  (``AgentResult.established`` false): ``--resume`` retries it at most ``--max-retries`` times, then
  it is scored (docs/contracts.md §8);
* ``error``: one line.

Example: ``{"cost_usd": 0.0123, "input_tokens": 3300, "output_tokens": 120}``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
from collections.abc import Mapping
from dataclasses import replace
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
from pytest_homefield.agents.recipes import ClientSandbox
from pytest_homefield.capabilities import Capabilities
from pytest_homefield.key_shapes import redact
from pytest_homefield.sandbox.bwrap import BwrapUnavailable
from pytest_homefield.sandbox.modes import CONFINED_BACKENDS
from pytest_homefield.sandbox.procs import run_agent
from pytest_homefield.sandbox.tempdirs import scratch
from pytest_homefield.store import open_own_file

__all__ = ["CAPABILITIES", "REPORTABLE_OUTCOMES", "CommandAgent", "parse_usage_line", "read_usage_line",
           "distrust_infra", "program_missing"]

#: Outcomes a command may report on its usage line.
REPORTABLE_OUTCOMES = ("agent_error", "budget_exceeded", "rate_limited", "infra")

#: Bytes read from the end of ``agent.out`` to find the usage line.
TAIL_BYTES = 65536


def parse_usage_line(line: str) -> dict[str, Any]:
    """The recognised keys of a usage line (see the module docstring), or ``{}`` when ``line`` is
    not a JSON object. Never raises."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: nested past the decoder (atk14)
        return {}
    if not isinstance(obj, dict):
        return {}
    out: dict[str, Any] = {}
    cost = reported_usd(obj.get("cost_usd"))
    if cost is not None:
        out["cost_usd"] = cost
    for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "turns"):
        value = reported_count(obj.get(key))
        if value is not None:
            out[key] = value
    if isinstance(obj.get("model"), str) and obj["model"]:
        out["model"] = obj["model"]
    if obj.get("outcome") in REPORTABLE_OUTCOMES:
        out["outcome"] = obj["outcome"]
    if isinstance(obj.get("error"), str) and obj["error"].strip():
        # redacted before its lines are joined: a wrapped key is one key only while its line break is there (ratk48)
        out["error"] = " ".join(redact(obj["error"]).split())[:300]
    return out


def distrust_infra(usage: dict[str, Any]) -> dict[str, Any]:
    """``usage`` with a reported ``infra`` outcome turned into ``agent_error`` (scored): an agent
    cannot make its own attempt unscored (issue 15)."""
    if usage.get("outcome") != "infra":
        return usage
    note = "reported infra, which an agent cannot declare (scored as agent_error)"
    return {**usage, "outcome": "agent_error", "error": note + (f": {usage['error']}" if usage.get("error") else "")}


def _tail_lines(path: Path) -> list[str]:
    """The non-empty lines of the last :data:`TAIL_BYTES` of ``path``, an output file of the agent's folder: never
    read through a link the agent put in its place, nor from a fifo or device (link46; ``[]``)."""
    try:
        with open_own_file(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - TAIL_BYTES))
            data = f.read()
    except OSError:
        return []
    return [ln.strip() for ln in data.decode(errors="replace").splitlines() if ln.strip()]


def exit_error(exit_code: int, err_tail: list[str]) -> str:
    """The one-line ``error`` of a command that exited ``exit_code`` (non-zero): the status and the last
    line of its stderr (``err_tail``: :func:`_tail_lines`), cut at 200 characters. The lines are redacted
    together first (:func:`~pytest_homefield.key_shapes.redact`): a key its client wrapped over the last two
    lines is one key there, where the last line alone would be its tail, with no key shape (ratk48)."""
    lines = [ln for ln in redact("\n".join(err_tail)).splitlines() if ln.strip()] if err_tail else []
    return f"command exited {exit_code}" + (f": {lines[-1][:200]}" if lines else "")


def read_usage_line(path: Path) -> dict[str, Any]:
    """:func:`parse_usage_line` of the last non-empty line of the file at ``path`` (``{}`` if the
    file is missing or the line is not JSON)."""
    lines = _tail_lines(path)
    return parse_usage_line(lines[-1]) if lines else {}


#: A first word of a ``cmd:`` command that names its program plainly: no shell syntax (``$``, quotes, ``=``, ``(``,
#: ``;``, globs, ``~``…) that only the shell, at the attempt, resolves (:func:`program_missing`).
PLAIN_WORD = re.compile(r"[A-Za-z0-9_.+/@%:,-]+")


def program_missing(command: str, env: Mapping[str, str]) -> str | None:
    """Why the program of the ``cmd:`` command ``command`` cannot start with ``env["PATH"]`` (ops62), else ``None``:
    its first word (``shlex``), when it names a program plainly (:data:`PLAIN_WORD`), is asked of ``sh`` itself
    (``command -v``: a builtin or keyword, ``echo``, ``exec``, ``if``, counts as found), and an absolute path must be
    an executable file. Not checked (``None``): a first word with shell syntax (``W=$(…)``, ``"$X"``, ``~/bin/a``:
    the shell resolves it at the attempt), a relative path with a ``/`` (``./agent.sh``: relative to the attempt's
    workspace, the task's checkout), a command ``shlex`` cannot read, and when ``sh`` itself cannot be started.
    Nothing else of the line is read: ``cmd:python a.py; b`` checks ``python`` only."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or not PLAIN_WORD.fullmatch(words[0]):
        return None
    first = words[0]
    if "/" in first:
        if not first.startswith("/"):
            return None
        ok = os.path.isfile(first) and os.access(first, os.X_OK)
        return None if ok else f"cannot start {first}: no such executable file (the program of its cmd: command)"
    try:
        found = subprocess.run(["sh", "-c", 'command -v -- "$1"', "sh", first], env={"PATH": env.get("PATH", "")},
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if found.returncode == 0 and found.stdout.strip():
        return None
    return f"cannot start {first}: not found on the agent's PATH (the program of its cmd: command)"


#: A shell program (sandboxed) that always runs commands; homefield does not know what else it can do,
#: so the prompt makes no claim about commands.
CAPABILITIES = Capabilities(process=True, commands="always", shell_known=False)


class CommandAgent(Capable):
    """``cmd:SHELL``: runs ``command`` with ``sh -c`` in the workspace (see the module docstring).

    ``env_passthrough`` is the variable list the runner copies into the environment: ``settings.env``.
    ``trust_infra``: accept ``{"outcome": "infra"}`` on the usage line (built-in recipes only).
    It is a process that can run commands (:data:`CAPABILITIES`): sandboxed.
    ``client``: a built-in recipe's client (:class:`~.recipes.ClientSandbox`), whose install is bound
    read-only into the sandbox and whose configuration is copied into its fresh ``HOME``; its
    ``rules_file`` is the agent's.
    """

    def __init__(self, *, name: str, spec: str, command: str, settings: AgentSettings,
                 trust_infra: bool = False, client: ClientSandbox | None = None) -> None:
        self.name = name
        self.spec = spec
        self.command = command
        self.settings = settings
        self.trust_infra = trust_infra
        self.client = client
        self.env_passthrough = agent_passthrough("cmd", settings)
        self.capabilities = replace(CAPABILITIES, rules_file=client.rules_file) if client else CAPABILITIES

    def sandbox_paths(self, env: Mapping[str, str]) -> list[Path]:
        """Read-only paths inside the sandbox: the recipe client's install found on ``env["PATH"]``
        (``[]`` for other commands, and when the client is not installed)."""
        return self.client.paths(env) if self.client else []

    def provider_hosts(self, env: Mapping[str, str]) -> list[str]:
        """The hosts a built-in recipe's client calls (:meth:`~.recipes.ClientSandbox.provider_hosts`);
        ``[]`` for any other command, whose hosts homefield cannot know (list them with
        ``--allow-host``)."""
        return self.client.provider_hosts(env) if self.client else []

    def sandbox_home(self, home: Path, env: dict[str, str]) -> None:
        """Copy the recipe client's configuration from the user's ``HOME`` (``env["HOME"]``) into the
        sandbox's fresh ``home``, re-pointing its variables in ``env`` (nothing for other commands)."""
        if self.client:
            self.client.fill_home(home, env, Path(env.get("HOME") or os.path.expanduser("~")))

    def version(self) -> str | None:
        """``None``: an arbitrary command has no version to ask for."""
        return None

    def _client_missing(self, env: Mapping[str, str], sandbox: str) -> str | None:
        """Why this recipe's client cannot start in ``env`` under the ``sandbox`` backend
        (:meth:`~.recipes.ClientSandbox.missing`); ``None`` when it can, or for a command that is no recipe's. The
        bwrap and Landlock backends (:data:`~pytest_homefield.sandbox.modes.CONFINED_BACKENDS`) bind the client's
        install, never a path holding the home (satk60)."""
        return self.client.missing(env, confined=sandbox in CONFINED_BACKENDS) if self.client else None

    def run(self, ctx: AgentContext) -> AgentResult:
        """Run the command once. Outcome ``timeout`` when it outlives ``ctx.timeout_s`` seconds,
        ``infra`` when ``sh`` cannot be started or a built-in recipe's client is not on the agent's ``PATH``
        (:meth:`~.recipes.ClientSandbox.missing`), else what its usage line reports (usually
        ``None``: grade it). A non-zero exit status is graded all the same; ``error`` (unless the usage
        line gives one) is then :func:`exit_error`'s line. Never raises for the command's own failures."""
        out_path = ctx.artifacts / "agent.out"
        missing = self._client_missing(ctx.env, ctx.sandbox)
        if missing:  # a recipe's client not installed: homefield's finding, not an agent's empty patch
            return AgentResult(outcome="infra", error=missing, established=True)
        try:
            proc = run_agent(ctx.wrap(["sh", "-c", self.command], ctx.env), cwd=ctx.workspace, env=ctx.env,
                             timeout_s=ctx.timeout_s, artifacts=ctx.artifacts, limits=ctx.limits, watch=ctx.watch)
        except OSError as exc:
            return AgentResult(outcome="infra", error=f"cannot start sh: {exc}", established=True)
        if proc.timed_out:
            return AgentResult(outcome="timeout", error=f"command still running after {ctx.timeout_s:g} s; killed")
        if proc.over_memory:  # the kernel killed a process of it in its sandbox's memory cgroup: scored
            return AgentResult(outcome="agent_error", exit_code=proc.exit_code, error=proc.over_memory)
        usage = read_usage_line(out_path)
        if not self.trust_infra:
            usage = distrust_infra(usage)
        if proc.exit_code not in (0, None) and not usage.get("error"):
            # still graded (its change may be good), but a command that could not run at all (a script
            # outside the sandbox: "sh: 0: cannot open …") must not read as an agent that chose no change
            usage["error"] = exit_error(proc.exit_code, _tail_lines(ctx.artifacts / "agent.err"))
        return AgentResult(exit_code=proc.exit_code, **usage)

    def complete(self, prompt: str, *, timeout_s: float, sandbox: CallSandbox, gold_answer: str = "") -> Completion:
        """Answer a plain prompt: the command runs once with ``sh -c`` in an empty temporary folder,
        inside ``sandbox`` (as an attempt's, with its limits), the prompt in ``$HOMEFIELD_PROMPT``
        (environment of docs/contracts.md §9 built from ``os.environ``); the answer is its stdout. A
        last stdout line that is a usage line (module docstring) is read for cost, tokens and model
        and is not part of the answer. Outcome
        ``timeout`` after ``timeout_s`` seconds (its process tree killed), ``agent_error`` on a
        non-zero exit status, ``infra`` when ``sh`` cannot start or the sandbox cannot be made
        (bubblewrap missing where it is needed). ``gold_answer`` is ignored."""
        started = time.monotonic()
        with scratch() as root:  # removed without following the agent's links (hatk34)
            (root / "cwd").mkdir()
            env = build_agent_env(prompt=prompt, attempt=1, tmpdir=root / "tmp", passthrough=self.env_passthrough)
            missing = self.client.missing(env) if self.client else None
            if missing:
                return Completion(outcome="infra", error=missing, established=True)
            out_path, err_path = root / "agent.out", root / "agent.err"
            try:
                with sandbox(self, workspace=root / "cwd", box=root, env=env) as box:
                    missing = self._client_missing(env, box.sandbox)  # as an attempt's (run)
                    if missing:
                        return Completion(outcome="infra", error=missing, established=True)
                    proc = run_agent(box.wrap(["sh", "-c", self.command], env), cwd=root / "cwd", env=env,
                                     timeout_s=timeout_s, artifacts=root, limits=box.limits, watch=box.watch)
            except (OSError, BwrapUnavailable) as exc:
                return Completion(outcome="infra", error=f"cannot start sh: {exc}", established=True)
            try:  # never through a link the command put in its place (link46)
                with open_own_file(out_path, "rb") as fh:
                    text = fh.read().decode(errors="replace")
            except OSError as exc:
                return Completion(outcome="agent_error", error=f"its output cannot be read: {exc}",
                                  wall_s=time.monotonic() - started)
            err_tail = _tail_lines(err_path)
        wall = time.monotonic() - started
        if proc.timed_out:
            return Completion(outcome="timeout", error=f"no answer within {timeout_s:g} s; killed", wall_s=wall)
        if proc.over_memory:
            return Completion(outcome="agent_error", error=proc.over_memory, wall_s=wall)
        lines = text.rstrip("\n").split("\n")
        usage = parse_usage_line(lines[-1].strip()) if lines and lines[-1].strip() else {}
        if usage:
            text = "\n".join(lines[:-1]) + "\n"
        outcome = usage.pop("outcome", None)
        error = usage.pop("error", None)
        if outcome is None and proc.exit_code not in (0, None):
            outcome = "agent_error"
            error = exit_error(proc.exit_code, err_tail)
        return Completion(text="" if outcome else text, outcome=outcome, error=error, wall_s=wall, **usage)
