"""OpenAI chat completions (``POST …/chat/completions``), plain JSON or streamed as SSE chunks.

A turn's ``usage`` maps to ``prompt_tokens`` (= input + cache read), ``completion_tokens`` and
``prompt_tokens_details.cached_tokens``. ``tool_calls`` become function calls. ``GET …/models``
lists one model.
"""

from __future__ import annotations

import json
import time
from typing import Any

from .server import Reply, Request, ScriptedServer, iter_tool_calls, sse

__all__ = ["OpenAIChat", "openai_chat_server"]


def _usage(turn: dict[str, Any]) -> dict[str, Any]:
    u = turn.get("usage") or {}
    cached = int(u.get("cache_read_tokens", 0))
    prompt = int(u.get("input_tokens", 100)) + cached
    completion = int(u.get("output_tokens", 10))
    out: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                           "total_tokens": prompt + completion}
    if cached:
        out["prompt_tokens_details"] = {"cached_tokens": cached}
    return out


class OpenAIChat:
    """Renders turns as chat-completion responses."""

    def is_step(self, req: Request) -> bool:
        return req.method == "POST" and req.path.split("?")[0].endswith("/chat/completions")

    def other(self, req: Request) -> Reply:
        if req.path.split("?")[0].endswith("/models"):
            return Reply(chunks=[b'{"object": "list", "data": [{"id": "fake-model", "object": "model"}]}'])
        return Reply(status=404, chunks=[b'{"error": {"message": "not found"}}'])

    def render(self, turn: dict[str, Any], req: Request, step: int) -> Reply:
        body = req.body if isinstance(req.body, dict) else {}
        model = body.get("model", "fake-model")
        calls = [
            {"index": n, "id": f"call_{step}_{n}", "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c.get("input", {}))}}
            for n, c in iter_tool_calls(turn)
        ]
        finish = turn.get("finish") or ("tool_calls" if calls else "stop")  # "length": cut at max_tokens
        base = {"id": f"chatcmpl-fake{step}", "created": int(time.time()), "model": model}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": turn.get("text")}
            if calls:
                message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
            data = {**base, "object": "chat.completion", "usage": _usage(turn),
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
            return Reply(chunks=[json.dumps(data).encode()])
        chunk = {**base, "object": "chat.completion.chunk"}
        events = [sse(None, {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                   "finish_reason": None}]})]
        if turn.get("text"):
            events.append(sse(None, {**chunk, "choices": [{"index": 0, "delta": {"content": turn["text"]},
                                                           "finish_reason": None}]}))
        if calls:
            events.append(sse(None, {**chunk, "choices": [{"index": 0, "delta": {"tool_calls": calls},
                                                           "finish_reason": None}]}))
        events.append(sse(None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
        events.append(sse(None, {**chunk, "choices": [], "usage": _usage(turn)}))
        events.append(b"data: [DONE]\n\n")
        return Reply(content_type="text/event-stream", chunks=events)


def openai_chat_server(script: list[dict[str, Any]], **kw: Any) -> ScriptedServer:
    """A started :class:`ScriptedServer` speaking OpenAI chat completions."""
    return ScriptedServer(OpenAIChat(), script, **kw)
