"""The Gemini API as ``gemini`` (the Gemini CLI) uses it:
``POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`` per step.

Each turn is one SSE ``data:`` chunk holding a candidate whose parts are the text and one
``functionCall`` per tool call, with ``usageMetadata`` (``promptTokenCount`` includes cached
tokens, as in the real API). Non-streaming ``:generateContent`` and ``:countTokens`` requests get
small side answers without taking a turn.
"""

from __future__ import annotations

import json
from typing import Any

from .server import Reply, Request, ScriptedServer, iter_tool_calls, sse

__all__ = ["GeminiAPI", "gemini_server"]


class GeminiAPI:
    """Renders turns as ``streamGenerateContent`` SSE responses."""

    def is_step(self, req: Request) -> bool:
        return req.method == "POST" and ":streamGenerateContent" in req.path

    def other(self, req: Request) -> Reply:
        if ":countTokens" in req.path:
            return Reply(chunks=[b'{"totalTokens": 100}'])
        if ":generateContent" in req.path:
            data = {"candidates": [{"content": {"role": "model", "parts": [{"text": "{}"}]},
                                    "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}
            return Reply(chunks=[json.dumps(data).encode()])
        return Reply(status=404, chunks=[b'{"error": {"code": 404, "message": "not found"}}'])

    def render(self, turn: dict[str, Any], req: Request, step: int) -> Reply:
        model = req.path.split("/models/")[-1].split(":")[0] if "/models/" in req.path else "gemini-fake"
        parts: list[dict[str, Any]] = []
        if turn.get("text"):
            parts.append({"text": turn["text"]})
        for _, call in iter_tool_calls(turn):
            parts.append({"functionCall": {"name": call["name"], "args": call.get("input", {})}})
        u = turn.get("usage") or {}
        cached = int(u.get("cache_read_tokens", 0))
        prompt = int(u.get("input_tokens", 100)) + cached
        out = int(u.get("output_tokens", 10))
        usage: dict[str, Any] = {"promptTokenCount": prompt, "candidatesTokenCount": out,
                                 "totalTokenCount": prompt + out}
        if cached:
            usage["cachedContentTokenCount"] = cached
        chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": usage, "modelVersion": model, "responseId": f"resp-fake-{step}"}
        return Reply(content_type="text/event-stream", chunks=[sse(None, chunk)])


def gemini_server(script: list[dict[str, Any]], **kw: Any) -> ScriptedServer:
    """A started :class:`ScriptedServer` speaking the Gemini streaming API."""
    return ScriptedServer(GeminiAPI(), script, **kw)
