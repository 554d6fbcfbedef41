"""The OpenAI Responses API (``POST …/responses``, always streamed) as ``codex exec`` uses it.

Per turn: ``response.created``, then for the text and each tool call an
``response.output_item.added`` / ``response.output_item.done`` pair (text also gets
``response.output_text.delta``), then ``response.completed`` with ``usage`` (``input_tokens``
includes cached tokens, as in the real API). A tool call with ``"type": "custom"`` becomes a
``custom_tool_call`` whose ``input`` is a string (codex's freeform ``apply_patch``); otherwise a
``function_call`` with JSON ``arguments``. ``stream_error`` ends the stream with ``response.failed``.
"""

from __future__ import annotations

import json
from typing import Any

from .server import Reply, Request, ScriptedServer, iter_tool_calls, sse

__all__ = ["OpenAIResponses", "openai_responses_server"]


class OpenAIResponses:
    """Renders turns as Responses API SSE streams."""

    def is_step(self, req: Request) -> bool:
        return req.method == "POST" and req.path.split("?")[0].endswith("/responses")

    def other(self, req: Request) -> Reply:
        if req.path.split("?")[0].endswith("/models"):
            return Reply(chunks=[b'{"object": "list", "data": [], "models": []}'])
        return Reply(status=404, chunks=[b'{"error": {"message": "not found"}}'])

    def render(self, turn: dict[str, Any], req: Request, step: int) -> Reply:
        body = req.body if isinstance(req.body, dict) else {}
        rid = f"resp_fake{step:04d}"
        base = {"id": rid, "object": "response", "model": body.get("model", "fake"), "status": "in_progress"}
        events = [sse("response.created", {"type": "response.created", "response": base})]
        items: list[dict[str, Any]] = []
        if turn.get("text"):
            items.append({"type": "message", "id": f"msg_{step}", "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": turn["text"], "annotations": []}]})
        for n, call in iter_tool_calls(turn):
            call_id = f"call_{step}_{n}"
            if call.get("type") == "custom":
                items.append({"type": "custom_tool_call", "id": f"ctc_{step}_{n}", "call_id": call_id,
                              "name": call["name"], "input": call.get("input", ""), "status": "completed"})
            else:
                args = call.get("input", {})
                items.append({"type": "function_call", "id": f"fc_{step}_{n}", "call_id": call_id,
                              "name": call["name"], "status": "completed",
                              "arguments": args if isinstance(args, str) else json.dumps(args)})
        for index, item in enumerate(items):
            events.append(sse("response.output_item.added", {"type": "response.output_item.added",
                                                             "output_index": index, "item": item}))
            if item["type"] == "message":
                events.append(sse("response.output_text.delta", {
                    "type": "response.output_text.delta", "item_id": item["id"], "output_index": index,
                    "content_index": 0, "delta": turn["text"]}))
            events.append(sse("response.output_item.done", {"type": "response.output_item.done",
                                                            "output_index": index, "item": item}))
        if "stream_error" in turn:
            err = turn["stream_error"]
            events.append(sse("response.failed", {"type": "response.failed", "response": {
                **base, "status": "failed",
                "error": {"code": err.get("type", "server_error"), "message": err.get("message", "boom")}}}))
            return Reply(content_type="text/event-stream", chunks=events)
        u = turn.get("usage") or {}
        cached = int(u.get("cache_read_tokens", 0))
        inp = int(u.get("input_tokens", 100)) + cached
        out = int(u.get("output_tokens", 10))
        usage = {"input_tokens": inp, "input_tokens_details": {"cached_tokens": cached},
                 "output_tokens": out, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": inp + out}
        events.append(sse("response.completed", {"type": "response.completed", "response": {
            **base, "status": "completed", "output": items, "usage": usage}}))
        return Reply(content_type="text/event-stream", chunks=events)


def openai_responses_server(script: list[dict[str, Any]], **kw: Any) -> ScriptedServer:
    """A started :class:`ScriptedServer` speaking the OpenAI Responses API."""
    return ScriptedServer(OpenAIResponses(), script, **kw)
