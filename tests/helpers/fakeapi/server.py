"""A scripted model API server on 127.0.0.1, run in a daemon thread.

One :class:`ScriptedServer` answers one wire protocol (a :class:`Protocol` object: Anthropic
Messages, OpenAI chat completions, OpenAI Responses, Gemini). Each request that the protocol calls a
*model step* takes the next *turn* from the script; when the script is exhausted the server answers
with a short final text, so a client never hangs on a missing turn. Every request is logged.

A turn is a dict (keys are protocol-neutral; each protocol renders them):

* ``text``: assistant text;
* ``tool_calls``: ``[{"name": str, "input": dict | str, "type": "function" | "custom"}]``;
* ``usage``: ``{"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"}``;
* ``error``: ``{"status": int, "type": str, "message": str}`` → an HTTP error response;
* ``raw``: ``{"status": int, "body": str, "content_type": str}`` → sent as is (malformed replies);
* ``delay``: seconds to wait before answering;
* ``hang``: ``True`` or a number N: send the first N (default 1) events of a streamed reply, or only
  the headers of a plain one, then block until the server is closed (for timeouts);
* ``times``: repeat this turn this many times (default 1).

``side_match`` / ``side_text``: a request whose body contains ``side_match`` is answered with
``side_text`` without taking a turn (for clients' auxiliary requests, e.g. commit messages).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

__all__ = ["Request", "Reply", "WireProtocol", "ScriptedServer"]


@dataclass
class Request:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it is not JSON


@dataclass
class Reply:
    """What a protocol sends for a turn: a status, headers and body chunks.

    ``chunks`` are written and flushed one by one (SSE events); ``hang_after`` is the number of
    chunks after which the server blocks until it is closed (``None``: never).
    """

    status: int = 200
    content_type: str = "application/json"
    chunks: list[bytes] = field(default_factory=list)
    hang_after: int | None = None


class WireProtocol(Protocol):
    """How one API renders turns. ``is_step`` says whether a request consumes a turn."""

    def is_step(self, req: Request) -> bool: ...

    def render(self, turn: dict[str, Any], req: Request, step: int) -> Reply: ...

    def other(self, req: Request) -> Reply: ...


def error_reply(status: int, etype: str, message: str) -> Reply:
    """A JSON error body in the Anthropic/OpenAI shape (both read ``error.message``)."""
    body = {"type": "error", "error": {"type": etype, "message": message, "code": status}}
    return Reply(status=status, chunks=[json.dumps(body).encode()])


class ScriptedServer:
    """A threaded HTTP server on ``127.0.0.1`` (random free port) replaying ``script``.

    Use as a context manager or call :meth:`close`. ``url`` is ``http://127.0.0.1:PORT``;
    ``requests`` is the request log; ``steps`` counts the model steps answered.
    """

    def __init__(
        self,
        protocol: WireProtocol,
        script: list[dict[str, Any]],
        *,
        side_match: str | None = None,
        side_text: str = "Update code",
    ) -> None:
        self.protocol = protocol
        self.turns: list[dict[str, Any]] = []
        for turn in script:
            self.turns.extend([turn] * int(turn.get("times", 1)))
        self.side_match = side_match
        self.side_text = side_text
        self.requests: list[Request] = []
        self.steps = 0
        self._lock = threading.Lock()
        self._closed = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                req = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                reply, delay = server._answer(req, raw)
                if delay and server._closed.wait(delay):
                    return
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                streaming = reply.content_type.startswith("text/event-stream")
                if streaming:
                    self.send_header("Cache-Control", "no-cache")
                    self.send_header("Connection", "close")
                    self.close_connection = True
                else:
                    data = b"".join(reply.chunks)
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    for i, chunk in enumerate(reply.chunks if streaming else [b"".join(reply.chunks)]):
                        if reply.hang_after is not None and i >= reply.hang_after:
                            break
                        self.wfile.write(chunk)
                        self.wfile.flush()
                    if reply.hang_after is not None:
                        server._closed.wait(600)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_POST = _handle
            do_GET = _handle
            do_HEAD = _handle

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def _answer(self, req: Request, raw: bytes) -> tuple[Reply, float]:
        with self._lock:
            self.requests.append(req)
            if not self.protocol.is_step(req):
                return self.protocol.other(req), 0.0
            if self.side_match and self.side_match.encode() in raw:
                return self.protocol.render({"text": self.side_text}, req, -1), 0.0
            turn: dict[str, Any] = self.turns[self.steps] if self.steps < len(self.turns) else {"text": "Done."}
            self.steps += 1
        if "raw" in turn:
            r = turn["raw"]
            reply = Reply(int(r.get("status", 200)), r.get("content_type", "application/json"),
                          [r.get("body", "").encode()])
        elif "error" in turn:
            e = turn["error"]
            reply = error_reply(int(e["status"]), e.get("type", "api_error"),
                                e.get("message", "scripted error"))
        else:
            reply = self.protocol.render(turn, req, self.steps)
        hang = turn.get("hang")
        if hang:
            streaming = reply.content_type.startswith("text/event-stream")
            reply.hang_after = (1 if hang is True else int(hang)) if streaming else 0
        return reply, float(turn.get("delay", 0.0))

    def step_requests(self) -> list[Request]:
        """The logged requests that were model steps."""
        return [r for r in self.requests if self.protocol.is_step(r)]

    def close(self) -> None:
        """Stop serving and release any hanging handler."""
        self._closed.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sse(event: str | None, data: Any) -> bytes:
    """One server-sent event (``event:`` line only when ``event`` is given)."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def iter_tool_calls(turn: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The turn's tool calls, numbered from 0."""
    yield from enumerate(turn.get("tool_calls") or [])
