"""An agent's ``agent.out`` as a list of turns: text, tool calls and their results.

:func:`parse_transcript` recognises the output by its content (the spec only breaks ties), one
parser per format, each following the format the real client prints (sources:
/work/shared/reference/claude-cli.md §5 and agent-clients.md, the clients observed against scripted
servers):

* ``claude stream-json`` (the claude adapter's ``--output-format stream-json --verbose``): the
  ``system``/``init`` line, one ``assistant`` line per content block (``text``, ``thinking``,
  ``tool_use``), one ``user`` line per ``tool_result``, the final ``result`` object; the
  ``stream_event`` partial-message lines are left out (the blocks repeat them whole);
* ``claude json`` (``--output-format json``): the one ``result`` object;
* ``codex json`` (``codex exec --json``): ``item.completed`` items ``agent_message``,
  ``reasoning``, ``command_execution`` (a call and its output), ``file_change``, ``mcp_tool_call``,
  ``error``; ``turn.completed`` usage and ``turn.failed``;
* ``gemini json`` (``--output-format json``: ``response`` and ``stats``, whose ``tools.byName``
  counts the calls) and ``gemini stream-json`` (``message``, ``tool_use``, ``tool_result``,
  ``result``);
* ``aider`` (its ``--no-pretty`` stdout or chat history Markdown: ``#### `` user lines, ``> `` tool
  lines, SEARCH/REPLACE blocks as edit calls);
* ``stdout`` (any ``cmd:`` program): the text as it is.

A ``cmd:`` program's last line, when it is a JSON object (the usage line of
:mod:`pytest_homefield.agents.cmd_agent`), is one ``usage`` entry. Nothing here raises on bad input:
a line that is not what its format says is shown as ``stdout``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pytest_homefield.view.attempt_files import json_lines

__all__ = ["Entry", "Transcript", "parse_transcript", "FORMATS"]

#: Every format :func:`parse_transcript` returns.
FORMATS = ("claude stream-json", "claude json", "codex json", "gemini json", "gemini stream-json", "aider",
           "stdout", "empty")

#: Entry kinds, in the words the page shows.
KINDS = ("system", "user", "assistant", "thinking", "tool_call", "tool_result", "result", "usage", "error",
         "stdout")


@dataclass(frozen=True)
class Entry:
    """One step of a transcript: ``kind`` (one of :data:`KINDS`), its ``text``, a short ``title`` (a
    tool's name, a model, a status) and ``is_error`` (a failed tool call, an error result)."""

    kind: str
    text: str
    title: str = ""
    is_error: bool = False


@dataclass
class Transcript:
    """The parsed output: its ``format`` (one of :data:`FORMATS`), the ``entries`` in order, and
    ``tool_calls``, the number of ``tool_call`` entries."""

    format: str
    entries: list[Entry] = field(default_factory=list)

    @property
    def tool_calls(self) -> int:
        return sum(e.kind == "tool_call" for e in self.entries)


def _obj(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the decoder goes (atk19)
        return None
    return value if isinstance(value, dict) else None


def _pretty(value: object) -> str:
    """A tool's input or output for reading: a string as it is; an object one ``key: value`` line per
    key, string values as they are (an Edit's ``old_string`` keeps its lines), others as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(f"{k}: {v}" if isinstance(v, str) else f"{k}: {json.dumps(v, ensure_ascii=False)}"
                         for k, v in value.items())
    return json.dumps(value, ensure_ascii=False)


def _events(lines: list[str], out: Transcript) -> Iterator[dict[str, Any]]:
    """The JSON objects of ``lines`` (one a line), in order; every other non-blank line is added to
    ``out`` as a ``stdout`` entry where it stands (before the next object is yielded)."""
    for line in lines:
        obj = _obj(line)
        if obj is not None:
            yield obj
        elif line.strip():
            out.entries.append(Entry("stdout", line))


#: The keys of a ``cmd:`` usage line (:mod:`pytest_homefield.agents.cmd_agent`).
_USAGE_KEYS = {"cost_usd", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "turns",
               "model", "outcome", "error"}


def _split_usage(text: str) -> tuple[str, dict[str, Any] | None]:
    """``(text without its last line, usage object)`` when the last non-empty line is a JSON object
    without a ``type`` (a ``cmd:`` usage line), else ``(text, None)``."""
    end = len(text)
    while end and text[end - 1].isspace():  # the last line found without copying a long text
        end -= 1
    start = text.rfind("\n", 0, end) + 1
    obj = _obj(text[start:end])
    if obj is None or not _USAGE_KEYS & obj.keys() or {"type", "event", "session_id", "stats"} & obj.keys():
        return text, None
    return text[: max(start - 1, 0)], obj


# ------------------------------------------------------------------------------------------- claude


def _claude_content(content: object, role: str) -> Iterator[Entry]:
    if isinstance(content, str):
        if content.strip():
            yield Entry("assistant" if role == "assistant" else "user", content)
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and str(block.get("text", "")).strip():
            yield Entry("assistant" if role == "assistant" else "user", str(block["text"]))
        elif btype == "thinking" and str(block.get("thinking", "")).strip():
            yield Entry("thinking", str(block["thinking"]))
        elif btype == "tool_use":
            yield Entry("tool_call", _pretty(block.get("input", {})), title=str(block.get("name", "?")))
        elif btype == "tool_result":
            body = block.get("content")
            if isinstance(body, list):
                body = "\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in body)
            yield Entry("tool_result", str(body if body is not None else ""), is_error=bool(block.get("is_error")))


def _claude_result(obj: dict[str, Any]) -> Entry:
    errors = obj.get("errors")
    text = obj.get("result")
    if not text and isinstance(errors, list):
        text = "\n".join(str(e) for e in errors)
    bits = [str(obj.get("subtype") or ""), str(obj.get("terminal_reason") or "")]
    if obj.get("num_turns") is not None:
        bits.append(f"{obj['num_turns']} turns")
    if isinstance(obj.get("total_cost_usd"), (int, float)):
        bits.append(f"${obj['total_cost_usd']:.4f}")
    denials = obj.get("permission_denials")
    if isinstance(denials, list) and denials:
        text = f"{text or ''}\npermission denied: " + ", ".join(
            str(d.get("tool_name")) for d in denials if isinstance(d, dict))
    return Entry("result", str(text or ""), title=" · ".join(b for b in bits if b), is_error=bool(obj.get("is_error")))


def _claude_stream(lines: list[str]) -> Transcript:
    out = Transcript("claude stream-json")
    # the partial-message lines (most of them) are not parsed: the whole blocks follow them
    objs = json_lines([ln for ln in lines if ln.startswith("{")], skip='{"type":"stream_event"')
    out.entries += [Entry("stdout", ln) for ln in lines if ln.strip() and not ln.startswith("{")]
    for obj in objs:
        kind = obj.get("type")
        if kind == "system" and obj.get("subtype") == "init":
            tools = obj.get("tools") or []
            out.entries.append(Entry("system", f"tools: {', '.join(map(str, tools))}" if tools else "",
                                     title=f"init · {obj.get('model') or '?'} · {obj.get('permissionMode') or ''}"))
        elif kind in ("assistant", "user"):
            message = obj.get("message") or {}
            out.entries.extend(_claude_content(message.get("content"), str(message.get("role") or kind)))
        elif kind == "result":
            out.entries.append(_claude_result(obj))
        elif kind == "stream_event":
            continue
        elif kind == "system":
            out.entries.append(Entry("system", _pretty({k: v for k, v in obj.items() if k != "type"}),
                                     title=str(obj.get("subtype") or "system")))
    return out


# -------------------------------------------------------------------------------------------- codex


def _codex(lines: list[str]) -> Transcript:
    out = Transcript("codex json")
    for obj in _events(lines, out):
        kind = obj.get("type")
        if kind == "item.completed":
            item = obj.get("item") or {}
            out.entries.extend(_codex_item(item))
        elif kind == "turn.completed":
            out.entries.append(Entry("usage", _pretty(obj.get("usage") or {}), title="turn completed"))
        elif kind == "turn.failed":
            err = obj.get("error") or {}
            out.entries.append(Entry("error", str(err.get("message") if isinstance(err, dict) else err),
                                     title="turn failed", is_error=True))
        elif kind == "error":
            out.entries.append(Entry("error", str(obj.get("message") or ""), is_error=True))
        elif kind == "thread.started":
            out.entries.append(Entry("system", "", title=f"thread {obj.get('thread_id') or ''}".strip()))
    return out


def _codex_item(item: dict[str, Any]) -> Iterator[Entry]:
    itype = item.get("type") or item.get("item_type")
    if itype == "agent_message":
        yield Entry("assistant", str(item.get("text") or ""))
    elif itype == "reasoning":
        yield Entry("thinking", str(item.get("text") or ""))
    elif itype == "command_execution":
        code = item.get("exit_code")
        yield Entry("tool_call", str(item.get("command") or ""), title="shell")
        yield Entry("tool_result", str(item.get("aggregated_output") or ""),
                    title=f"exit {code}" if code is not None else str(item.get("status") or ""),
                    is_error=code not in (0, None) or item.get("status") == "failed")
    elif itype == "file_change":
        changes = item.get("changes") or []
        text = "\n".join(f"{c.get('kind', '?')} {c.get('path', '?')}" for c in changes if isinstance(c, dict))
        yield Entry("tool_call", text, title="apply_patch")
        yield Entry("tool_result", str(item.get("status") or ""), is_error=item.get("status") == "failed")
    elif itype == "mcp_tool_call":
        yield Entry("tool_call", _pretty(item.get("arguments") or {}),
                    title=f"{item.get('server', '')}.{item.get('tool', '?')}".lstrip("."))
        if item.get("result") is not None or item.get("error") is not None:
            yield Entry("tool_result", _pretty(item.get("result") if item.get("error") is None else item["error"]),
                        is_error=item.get("error") is not None)
    elif itype == "error":
        yield Entry("error", str(item.get("message") or ""), is_error=True)
    else:
        yield Entry("system", _pretty(item), title=str(itype or "item"))


# ------------------------------------------------------------------------------------------- gemini


def _gemini_json(obj: dict[str, Any]) -> Transcript:
    out = Transcript("gemini json")
    stats = obj.get("stats") if isinstance(obj.get("stats"), dict) else {}
    tools = (stats.get("tools") or {}) if isinstance(stats, dict) else {}
    by_name = tools.get("byName") if isinstance(tools, dict) else None
    if isinstance(by_name, dict):  # the JSON output keeps counts of calls, not the calls
        for name, s in by_name.items():
            if isinstance(s, dict):
                text = ", ".join(f"{k} {v}" for k, v in s.items() if not isinstance(v, dict))
                out.entries.append(Entry("tool_call", text, title=str(name), is_error=bool(s.get("fail"))))
    if obj.get("response"):
        out.entries.append(Entry("assistant", str(obj["response"])))
    error = obj.get("error")
    if error:
        msg = error.get("message") if isinstance(error, dict) else error
        out.entries.append(Entry("error", str(msg), title=str(error.get("code", "")) if isinstance(error, dict) else "",
                                 is_error=True))
    models = stats.get("models") if isinstance(stats, dict) else None
    if isinstance(models, dict):
        for model, m in models.items():
            tokens = m.get("tokens") if isinstance(m, dict) else None
            api = m.get("api") if isinstance(m, dict) else None
            out.entries.append(Entry("usage", _pretty({"tokens": tokens, "api": api}), title=str(model)))
    if isinstance(stats, dict) and isinstance(stats.get("files"), dict):
        out.entries.append(Entry("usage", _pretty(stats["files"]), title="files"))
    return out


def _gemini_stream(lines: list[str]) -> Transcript:
    out = Transcript("gemini stream-json")
    for obj in _events(lines, out):
        kind = obj.get("type")
        if kind == "init":
            out.entries.append(Entry("system", "", title=f"init · {obj.get('model') or '?'}"))
        elif kind == "message":
            role = "user" if obj.get("role") == "user" else "assistant"
            text = str(obj.get("content") or "")
            last = out.entries[-1] if out.entries else None
            if obj.get("delta") and last is not None and last.kind == role:  # streamed pieces of one message
                out.entries[-1] = Entry(role, last.text + text)
            else:
                out.entries.append(Entry(role, text))
        elif kind == "tool_use":
            out.entries.append(Entry("tool_call", _pretty(obj.get("parameters") or {}),
                                     title=str(obj.get("tool_name") or "?")))
        elif kind == "tool_result":
            status = str(obj.get("status") or "")
            body = obj.get("output") if obj.get("output") is not None else obj.get("error")
            out.entries.append(Entry("tool_result", _pretty(body) if body is not None else "", title=status,
                                     is_error=status not in ("success", "")))
        elif kind == "result":
            out.entries.append(Entry("result", _pretty(obj.get("stats") or {}), title=str(obj.get("status") or ""),
                                     is_error=obj.get("status") not in ("success", None)))
        elif kind == "error":
            out.entries.append(Entry("error", str(obj.get("message") or ""), is_error=True))
    return out


# -------------------------------------------------------------------------------------------- aider

_AIDER_MARK = re.compile(r"^(Aider v\d|#### |# aider chat started|Tokens: .* sent|Applied edit to )", re.M)
_AIDER_SYSTEM = re.compile(r"^(Aider v\d|Model: |Git repo: |Repo-map: |Added .* to the chat|Main model: |Weak model: |"
                           r"Tokens: |Cost: |Applied edit to |Commit [0-9a-f]+ |Detected dumb terminal|"
                           r"# aider chat started|Update git name|Use /help|https://aider\.chat/)")
_FENCE = re.compile(r"^(`{3,}|~{3,})")


def _aider(text: str) -> Transcript:
    out = Transcript("aider")
    lines = text.splitlines()
    buf: list[str] = []
    buf_kind = "assistant"

    def flush() -> None:
        body = "\n".join(buf).strip("\n")
        if body.strip():
            out.entries.append(Entry(buf_kind, body, title="aider" if buf_kind == "system" else ""))
        buf.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence and i + 1 < len(lines) and lines[i + 1].startswith("<<<<<<< SEARCH"):
            # FILE (the line before), ```lang, <<<<<<< SEARCH … >>>>>>> REPLACE, ```: one edit call
            path = buf.pop().strip() if buf_kind == "assistant" and buf and buf[-1].strip() else "?"
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].startswith(">>>>>>> REPLACE"):
                j += 1
            out.entries.append(Entry("tool_call", "\n".join(lines[i + 1: j + 1]), title=f"edit {path}"))
            i = j + 2 if j + 1 < len(lines) and _FENCE.match(lines[j + 1]) else j + 1
            buf_kind = "assistant"
            continue
        if line.startswith("#### "):
            kind = "user"
            line = line[5:]
        elif line.startswith("> ") or line == ">":
            kind = "system"
            line = line[2:]
        elif line.startswith("Applied edit to "):
            kind = "tool_result"
        elif _AIDER_SYSTEM.match(line):
            kind = "system"
        else:
            kind = "assistant" if line.strip() or buf_kind != "system" else buf_kind
        if kind != buf_kind:
            flush()
            buf_kind = kind
        buf.append(line)
        i += 1
    flush()
    return out


# -------------------------------------------------------------------------------------------- entry


def _sniff(lines: list[str]) -> str:
    """The format of the output (one of :data:`FORMATS`), from its first JSON lines."""
    seen = 0
    for line in lines:
        obj = _obj(line)
        if obj is None:
            continue
        kind = str(obj.get("type") or "")
        if kind in ("thread.started", "turn.started", "item.started", "item.completed", "turn.completed",
                    "turn.failed"):
            return "codex json"
        if kind == "init" or (kind in ("message", "tool_use", "tool_result") and "timestamp" in obj):
            return "gemini stream-json"
        if kind in ("system", "assistant", "user", "stream_event") and ("session_id" in obj or "message" in obj
                                                                        or "event" in obj):
            return "claude stream-json"
        if kind == "result" and ("num_turns" in obj or "total_cost_usd" in obj or "terminal_reason" in obj):
            return "claude stream-json" if seen else "claude json"
        seen += 1
        if seen > 5:
            break
    return ""


def parse_transcript(text: str, *, spec: str | None = None) -> Transcript:
    """The transcript of an attempt's ``agent.out`` (``text``); ``spec`` is the agent's spec
    (``claude:…``, ``cmd:…``), used only when the content does not say. Never raises: output in no shape
    its format allows (any process of the agent can write it: an object where a ``message`` goes, a cost
    too large for a float; esc30) is shown as the text it is."""
    body, usage = _split_usage(text)
    if (not body or body.isspace()) and usage is None:
        return Transcript("empty")
    try:
        out = _parsed(body, spec)
    except Exception:  # noqa: BLE001 - by construction: whatever a parser meets, the text is shown
        out = _plain(body)
    return _with_usage(out, usage)


def _plain(body: str) -> Transcript:
    return Transcript("stdout", [Entry("stdout", body.strip("\n"))] if body.strip() else [])


def _parsed(body: str, spec: str | None) -> Transcript:
    """The transcript of ``body`` in the format it shows (:func:`parse_transcript`); may raise on a shape
    its format does not allow."""
    lines = body.splitlines()
    fmt = _sniff(lines[:50])
    if fmt == "" and body.lstrip()[:1] == "{":  # one (pretty-printed) object: claude json or gemini json
        try:
            obj, _ = json.JSONDecoder().raw_decode(body.lstrip())
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict):
            if obj.get("type") == "result":
                return Transcript("claude json", [_claude_result(obj)])
            if "stats" in obj or ("response" in obj and "session_id" in obj) or "error" in obj:
                return _gemini_json(obj)
    if fmt == "claude stream-json" or fmt == "claude json":
        out = _claude_stream(lines)
        if fmt == "claude json":
            out.format = fmt
        return out
    if fmt == "codex json":
        return _codex(lines)
    if fmt == "gemini stream-json":
        return _gemini_stream(lines)
    if _AIDER_MARK.search(body) or (spec or "").find("aider ") >= 0:
        return _aider(body)
    return _plain(body)


def _with_usage(out: Transcript, usage: dict[str, Any] | None) -> Transcript:
    if usage is not None:
        out.entries.append(Entry("usage", _pretty(usage), title="usage line",
                                 is_error=bool(usage.get("outcome") or usage.get("error"))))
    return out
