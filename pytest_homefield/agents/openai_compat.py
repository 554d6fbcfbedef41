"""The ``openai:MODEL`` adapter: one chat completion from an OpenAI-compatible server.

For servers such as llama.cpp, vLLM or Ollama that serve ``POST {base_url}/chat/completions``.
``base_url`` comes from ``settings.base_url``, else ``OPENAI_BASE_URL`` (the attempt's environment,
then the process's), else ``https://api.openai.com/v1``; the key from ``settings.api_key``, else
``OPENAI_API_KEY`` (sent as a bearer token when set). HTTP uses only :mod:`urllib`.

The model gets the rendered prompt plus the full text of every file in ``ctx.hint_files`` (the
files the reference fix touched: the agent is therefore marked ``hinted``), and must answer with
whole files in fenced blocks labelled with their path, or with a unified diff. Whole files are
written; a diff is applied with ``git apply`` (then with its context relaxed), which takes nothing from the
workspace (:func:`~pytest_homefield.sandbox.snapshot.inert_git_env`): no program the reply can configure runs.

Outcomes: HTTP 429/503 → ``rate_limited``; other 5xx, 401/403/404, connection errors →
``infra`` (the server is the model under test: both are its claims, scored once ``--max-retries`` is
spent, docs/contracts.md §8); no answer within ``ctx.timeout_s`` seconds → ``timeout``; a malformed response, a reply
with no usable edit, or a diff that does not apply → ``agent_error``; other 4xx (e.g. the prompt
exceeds the context) → ``agent_error``. The request carries ``max_tokens`` (``settings.max_tokens``,
default :data:`~pytest_homefield.agents.base.OPENAI_MAX_TOKENS`), and ``temperature`` and ``stop`` when
set (:meth:`OpenAIAgent.request`); a reply cut at the cap (``finish_reason: length``) is said in
``agent.err`` and in the error when it has no usable edit. Cost (USD) = tokens × ``settings.prices[model]`` (USD per
million tokens: ``input``, ``output``, optional ``cache_read``); ``None`` without a price.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_homefield.agents.base import (
    AgentContext,
    AgentResult,
    AgentSettings,
    Capable,
    Completion,
    reported_count,
)
from pytest_homefield.agents.environment import agent_passthrough
from pytest_homefield.capabilities import Capabilities
from pytest_homefield.pins import make_folder
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.snapshot import inert_git_env
from pytest_homefield.sandbox.streams import CappedSink

__all__ = [
    "CAPABILITIES",
    "DEFAULT_BASE_URL",
    "SYSTEM_PROMPT",
    "Edits",
    "sampling_error",
    "OpenAIAgent",
    "apply_edits",
    "parse_reply",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"

SYSTEM_PROMPT = """You change a software repository by replying with file contents; you cannot run commands.
For every file you change or create, give its complete new content in a fenced code block whose info
string is the file's path relative to the repository root, for example:

```src/package/module.py
<the whole new file>
```

Alternatively, give a single unified diff (with a/ and b/ path prefixes) in a ```diff block.
Only the blocks are applied; keep explanations outside them."""

#: Seconds allowed for one ``git apply``.
APPLY_TIMEOUT_S = 60.0

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_LABEL_KEYS = ("path=", "file=", "filename=", "title=")
_DIFF_START = re.compile(r"^(diff --git |--- \S)", re.M)


class HttpFailure(Exception):
    """A request that produced no usable response; ``outcome`` says how to record it."""

    def __init__(self, outcome: str, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome


# --- reading the reply ---------------------------------------------------------------------------


@dataclass
class Edits:
    """What a reply asks for: whole files (path → text) and unified diffs, plus rejected labels."""

    files: dict[str, str] = field(default_factory=dict)
    diffs: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.files or self.diffs)


def _path_from_label(token: str, known: set[str]) -> str | None:
    token = token.strip().strip("`*\"':")
    for key in _LABEL_KEYS:
        if token.lower().startswith(key):
            token = token[len(key):].strip("\"'")
    if not token or token in ("diff", "patch"):
        return None
    # a language name ("python", "c++") has neither a slash nor a dot; a path ("calc.py", "src/x",
    # ".gitignore") has one, unless it is a known bare name such as "Makefile"
    if token in known or "/" in token or "." in token:
        return token
    return None


def _label_path(info: str, previous_line: str, known: set[str]) -> str | None:
    """The path a block is labelled with: from its info string (``python calc.py``, ``calc.py``,
    ``path=calc.py``), else from the line just before the fence (``calc.py``, ``**calc.py**``,
    ``# File: calc.py``)."""
    for token in info.split():
        path = _path_from_label(token, known)
        if path:
            return path
    line = previous_line.strip().lstrip("#").strip()
    for prefix in ("File:", "file:", "Path:", "path:"):
        if line.startswith(prefix):
            line = line[len(prefix):].strip()
    if line and len(line.split()) == 1:
        return _path_from_label(line, known)
    return None


def _safe_path(path: str) -> str | None:
    """``path`` as a clean relative POSIX path inside the workspace, or ``None`` when it is
    absolute, climbs out with ``..`` or has a ``.git`` component (any case, at any depth)."""
    p = PurePosixPath(path.replace("\\", "/"))
    if p.is_absolute() or not p.parts or ".." in p.parts or any(part.lower() == ".git" for part in p.parts):
        return None
    clean = str(PurePosixPath(*[part for part in p.parts if part != "."]))
    return clean if clean and clean != "." else None


def parse_reply(text: str, known_paths: set[str] | None = None) -> Edits:
    """The edits in a model reply.

    Fenced blocks (``` or ~~~, three or more) labelled ``diff``/``patch`` or whose body starts like a
    unified diff are diffs; blocks labelled with a path are whole files (``known_paths`` lets a
    bare name such as ``Makefile`` count as a path). A reply with no fenced block that is itself a
    unified diff counts as one diff. Unsafe paths go to ``rejected``.
    """
    known = known_paths or set()
    edits = Edits()
    lines = text.splitlines()
    i = 0
    saw_block = False
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group("fence"), m.group("info").strip()
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            close = lines[j].strip()
            if close and set(close) == {fence[0]} and len(close) >= len(fence):
                break
            body.append(lines[j])
            j += 1
        saw_block = True
        content = "\n".join(body) + "\n" if body else ""
        first = info.split()[0].lower() if info else ""
        path = None if first in ("diff", "patch", "udiff") else _label_path(
            info, lines[i - 1] if i > 0 else "", known)
        if path is None and (first in ("diff", "patch", "udiff") or _DIFF_START.match(content)):
            edits.diffs.append(content)
        elif path is not None:
            safe = _safe_path(path)
            if safe is None:
                edits.rejected.append(path)
            else:
                edits.files[safe] = content
        i = j + 1
    if not saw_block and _DIFF_START.search(text):
        start = _DIFF_START.search(text)
        assert start is not None
        edits.diffs.append(text[start.start():].rstrip("\n") + "\n")
    return edits


# --- applying it ---------------------------------------------------------------------------------


def _git_apply(args: list[str], patch_file: Path, workspace: Path) -> tuple[bool, str]:
    """``git apply ARGS PATCH_FILE`` in ``workspace`` with :func:`inert_git_env`: (applied, git's output)."""
    with inert_git_env() as env:
        try:
            proc = subprocess.run(["git", "apply", "--recount", "--whitespace=nowarn", *args, str(patch_file)],
                                  cwd=workspace, env=env, capture_output=True, text=True,
                                  timeout=APPLY_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, str(exc)
    return proc.returncode == 0, " ".join((proc.stdout + proc.stderr).split())


def _apply_diff(diff: str, workspace: Path, scratch: Path, log: list[str]) -> bool:
    """Apply one diff of the reply: ``git apply``, else ``git apply -C0 --ignore-whitespace`` (context
    lines that do not match are dropped one by one, nearest the change last, as GNU ``patch``'s fuzz
    does; the removed lines must still match). Only git runs, and it takes nothing from the workspace
    (:func:`inert_git_env`): it refuses paths into ``.git``, absolute or climbing out with ``..``, and
    paths beyond a symlink."""
    patch_file = scratch / f"reply-{len(list(scratch.glob('reply-*.patch')))}.patch"
    # the entry replaced, never written through a link put there (link48: the attempt's folder, which graded code of
    # another attempt can write in under --sandbox none)
    nofollow.write_bytes(scratch, patch_file.name, diff.encode("utf-8"))
    for label, args in (("git apply", []), ("git apply -C0", ["-C0", "--ignore-whitespace"])):
        ok, out = _git_apply(args, patch_file, workspace)
        log.append(f"{label}: {'ok' if ok else out}")
        if ok:
            return True
    return False


def apply_edits(edits: Edits, workspace: Path, *, scratch: Path) -> tuple[int, list[str]]:
    """Write the whole files and apply the diffs of ``edits`` to ``workspace``.

    ``scratch`` (outside the workspace) receives the diff files (:func:`_apply_diff`). Returns
    (number of edits applied, log lines). A whole file whose real location resolves outside the
    workspace (through a symlink) is skipped. Never raises for a bad edit.
    """
    log: list[str] = [f"rejected path {p!r}" for p in edits.rejected]
    root = workspace.resolve()
    applied = 0
    for rel, content in edits.files.items():
        target = workspace / rel
        try:
            if not target.resolve().is_relative_to(root):
                log.append(f"skipped {rel}: outside the workspace")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        except OSError as exc:
            log.append(f"cannot write {rel}: {exc}")
            continue
        log.append(f"wrote {rel}")
        applied += 1
    make_folder(scratch)  # below the attempt's pinned folder: from its descriptor (link52)
    for diff in edits.diffs:
        applied += _apply_diff(diff, workspace, scratch, log)
    return applied, log


# --- talking to the server -----------------------------------------------------------------------


def _is_loopback(url: str) -> bool:
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _post_json(url: str, body: dict[str, Any], api_key: str | None, timeout_s: float) -> dict[str, Any]:
    """POST ``body`` and return the decoded JSON object. Raises :class:`HttpFailure` (outcome:
    ``rate_limited`` for 429/503, ``infra`` for other 5xx, 401/403/404 and connection errors,
    ``agent_error`` for other 4xx and malformed bodies, ``timeout``). Proxies are bypassed for
    loopback URLs."""
    # urllib.request (with http.client, ssl and email) only when an openai: agent talks to its server:
    # importing it here cost every homefield process, the inert plugin's too, about 15 ms (issue 35)
    import urllib.error
    import urllib.request

    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    handlers: list[Any] = [urllib.request.ProxyHandler({})] if _is_loopback(url) else []
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(req, timeout=timeout_s) as resp:
            raw = resp.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:300].decode(errors="replace")
        msg = f"HTTP {exc.code} from {url}: {' '.join(detail.split())}"
        if exc.code in (429, 503):
            raise HttpFailure("rate_limited", msg) from None
        if exc.code >= 500 or exc.code in (401, 403, 404):
            raise HttpFailure("infra", msg) from None
        raise HttpFailure("agent_error", msg) from None
    except TimeoutError:
        raise HttpFailure("timeout", f"no response from {url} within {timeout_s:g} s") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise HttpFailure("timeout", f"no response from {url} within {timeout_s:g} s") from None
        raise HttpFailure("infra", f"cannot reach {url}: {exc.reason}") from None
    except OSError as exc:  # connection reset, remote end closed
        raise HttpFailure("infra", f"connection to {url} failed: {exc}") from None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the decoder goes
        raise HttpFailure("agent_error", f"malformed response (not JSON): {raw[:120]!r}") from None
    if not isinstance(data, dict):
        raise HttpFailure("agent_error", "malformed response (not a JSON object)")
    return data


def _call_with_deadline(url: str, body: dict[str, Any], api_key: str | None,
                        timeout_s: float) -> dict[str, Any]:
    """:func:`_post_json` bounded by ``timeout_s`` seconds of wall clock in all (a server that
    trickles bytes cannot stretch it)."""
    box: dict[str, Any] = {}

    def call() -> None:
        try:
            box["data"] = _post_json(url, body, api_key, timeout_s)
        except HttpFailure as exc:
            box["error"] = exc
        except Exception as exc:  # noqa: BLE001 - reported as infra, never raised from the adapter
            box["error"] = HttpFailure("infra", f"{type(exc).__name__}: {exc}")

    worker = threading.Thread(target=call, daemon=True, name="homefield-openai")
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise HttpFailure("timeout", f"no complete response from {url} within {timeout_s:g} s")
    if "error" in box:
        raise box["error"]
    data: dict[str, Any] = box["data"]
    return data


def sampling_error(max_tokens: object, temperature: object) -> str | None:
    """Why ``max_tokens`` / ``temperature`` cannot be sent, or ``None`` when they can: ``max_tokens`` is
    ``None`` or an int of at least 1; ``temperature`` is ``None`` or a number from 0 to 2 (the range of
    OpenAI's chat completions API, which llama.cpp, vLLM and Ollama accept)."""
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
        return f"max_tokens must be an integer of at least 1 (or null: no cap), got {max_tokens!r}"
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, (int, float))
                                    or not 0 <= temperature <= 2):
        return f"temperature must be a number from 0 to 2, got {temperature!r}"
    return None


def _finish_reason(data: dict[str, Any]) -> str | None:
    try:
        reason = data["choices"][0].get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return reason if isinstance(reason, str) else None


def _content(data: dict[str, Any]) -> str:
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise HttpFailure("agent_error", "malformed response: no choices[0].message.content") from None
    if not isinstance(content, str):
        raise HttpFailure("agent_error", "malformed response: message content is not text")
    # JSON can carry a lone surrogate (``"\\ud800"``), which no file write can encode: the reply is made valid
    # UTF-8 text here, where it enters, so that no edit of it raises (host29: ``UnicodeEncodeError`` from
    # writing a whole-file block made the attempt ``agent raised: …``, an unscored ``infra``)
    return content.encode("utf-8", errors="replace").decode("utf-8")


#: In-process (no program to sandbox), edits only, shown the files the fix touches (``hinted``). Its
#: provider is its server: ``openai:<base URL>``, set per agent.
CAPABILITIES = Capabilities(hinted=True)


class OpenAIAgent(Capable):
    """``openai:MODEL``: a single completion per attempt (see the module docstring)."""

    def __init__(self, *, name: str, spec: str, model: str, settings: AgentSettings) -> None:
        self.name = name
        self.spec = spec
        self.model = model
        self.settings = settings
        self.env_passthrough = agent_passthrough("openai", settings)
        self.capabilities = CAPABILITIES

    def version(self) -> str | None:
        """``None``: the adapter is built in; the model id is recorded per attempt."""
        return None

    def endpoint(self, env: Mapping[str, str] | None = None) -> tuple[str, str | None]:
        """(chat-completions URL, API key or ``None``) from settings, then ``env``, then the
        process environment."""
        env = env or {}
        base = (self.settings.base_url or env.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
                or DEFAULT_BASE_URL)
        key = self.settings.api_key or env.get("OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY")
        return base.rstrip("/") + "/chat/completions", key or None

    def provider_hosts(self, env: Mapping[str, str] | None = None) -> list[str]:
        """The base URL the requests go to (:meth:`endpoint`). The agent runs in homefield's own
        process, so no sandbox filters it: declared for the record."""
        return [self.endpoint(env)[0]]

    def price(self, data: dict[str, Any]) -> AgentResult:
        """Tokens and cost (USD) of a response's ``usage`` under ``settings.prices``.

        ``input_tokens`` excludes cached prompt tokens, which are ``cache_read_tokens`` (priced at
        ``cache_read``, else ``input``). The price is looked up under the configured model, then
        the model the server names.

        The counts are the server's words (the server is the model under test, docs/contracts.md §8), read as
        every agent's are (:func:`~.base.reported_count`: an integer from 0 to 2^63 − 1). One that is not, or
        is missing (``cached_tokens`` may be), is unknown (``None``), and so is the cost: a negative count
        priced an attempt below zero, and a missing one at nothing (xatk31). The cost is the server's word, shown
        "reported by the agent" and breaking no tie (``report/family.py`` ``MEASURED_COST_KINDS``; ratk54)."""
        res = AgentResult(turns=1, model=str(data.get("model") or self.model))
        usage = data.get("usage")
        if not isinstance(usage, dict):
            return res
        prompt = reported_count(usage.get("prompt_tokens"))
        details = usage.get("prompt_tokens_details")
        said = details.get("cached_tokens") if isinstance(details, dict) else None
        cached = 0 if said is None else reported_count(said)
        if prompt is not None and cached is not None and cached <= prompt:
            res.input_tokens, res.cache_read_tokens = prompt - cached, cached
        res.output_tokens = reported_count(usage.get("completion_tokens"))
        price = self.settings.prices.get(self.model) or self.settings.prices.get(res.model or "")
        if price and res.input_tokens is not None and cached is not None and res.output_tokens is not None:
            p_in = float(price.get("input", 0.0))
            p_cr = float(price.get("cache_read", p_in))
            res.cost_usd = (res.input_tokens * p_in + cached * p_cr
                            + res.output_tokens * float(price.get("output", 0.0))) / 1e6
        return res

    def request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The chat-completions request body: ``model``, ``messages``, ``max_tokens`` unless
        ``settings.max_tokens`` is ``None``, ``temperature`` unless ``None`` and ``stop`` unless empty."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.settings.max_tokens is not None:
            body["max_tokens"] = self.settings.max_tokens
        if self.settings.temperature is not None:
            body["temperature"] = self.settings.temperature
        if self.settings.stop:
            body["stop"] = list(self.settings.stop)
        return body

    def messages(self, ctx: AgentContext) -> list[dict[str, str]]:
        """The chat messages of an attempt: the output-format rules, then the prompt and the full
        text of each hinted file (a missing one is announced as new)."""
        parts = [ctx.prompt.rstrip(), "", "The change involves these files (full current text):"]
        for rel in ctx.hint_files:
            path = ctx.workspace / rel
            try:
                text = path.read_text(errors="replace")
            except (FileNotFoundError, IsADirectoryError):
                parts += ["", f"{rel}: does not exist yet"]
                continue
            except OSError:
                continue
            fence = "````" if "```" in text else "```"
            parts += ["", f"{fence}{rel}", text.rstrip("\n"), fence]
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(parts)}]

    def run(self, ctx: AgentContext) -> AgentResult:
        """One completion, then apply its edits to ``ctx.workspace``. Writes the reply to
        ``agent.out`` (capped at ``ctx.limits.output_bytes``) and the request/apply log to ``agent.err``.
        Never raises."""
        make_folder(ctx.artifacts)
        url, key = self.endpoint(ctx.env)
        body = self.request(self.messages(ctx))
        log = [f"POST {url} " + " ".join(f"{k}={json.dumps(v) if k == 'stop' else v}" for k, v in body.items()
                                         if k != "messages")]
        out_path, err_path = ctx.artifacts / "agent.out", ctx.artifacts / "agent.err"
        nofollow.write_bytes(ctx.artifacts, out_path.name, b"")  # replaces a link there, never through it (link46)
        try:
            data = _call_with_deadline(url, body, key, ctx.timeout_s)
            res = self.price(data)
            reply = _content(data)
            cut = (f" (cut at max_tokens {self.settings.max_tokens})"
                   if _finish_reason(data) == "length" else "")
            if cut:
                log.append(f"the reply ended at the token cap{cut}")
        except HttpFailure as exc:
            log.append(str(exc))
            nofollow.write_bytes(ctx.artifacts, err_path.name, ("\n".join(log) + "\n").encode())
            return AgentResult(outcome=exc.outcome, error=str(exc)[:300], model=self.model)
        sink = CappedSink(out_path, ctx.limits.output_bytes)  # the cap every agent's stdout has
        sink.write(reply.encode("utf-8", errors="replace"))
        sink.close()
        edits = parse_reply(reply, set(ctx.hint_files))
        applied, apply_log = apply_edits(edits, ctx.workspace, scratch=ctx.artifacts / "scratch")
        log += apply_log
        nofollow.write_bytes(ctx.artifacts, err_path.name, ("\n".join(log) + "\n").encode())
        if not edits:
            res.outcome, res.error = "agent_error", "reply has no file block or diff" + cut
        elif not applied:
            res.outcome, res.error = "agent_error", "no edit of the reply could be applied: " + "; ".join(
                apply_log)[:250]
        return res

    def complete(self, prompt: str, *, timeout_s: float, gold_answer: str = "") -> Completion:
        """One chat completion of ``prompt`` as the only (user) message, with no workspace and no
        system prompt. Cost from ``settings.prices`` as in :meth:`price`. ``gold_answer`` is ignored."""
        url, key = self.endpoint()
        started = time.monotonic()
        try:
            data = _call_with_deadline(url, self.request([{"role": "user", "content": prompt}]), key, timeout_s)
            res = self.price(data)
            text = _content(data)
        except HttpFailure as exc:
            res, text = AgentResult(outcome=exc.outcome, error=str(exc)[:300], model=self.model), ""
        return Completion.from_result(text, res, wall_s=time.monotonic() - started)
