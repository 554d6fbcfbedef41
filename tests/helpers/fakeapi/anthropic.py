"""The Anthropic Messages API as the ``claude`` CLI uses it: ``POST /v1/messages`` streamed as SSE.

Events per turn: ``message_start`` (with the input-side usage), one ``content_block_*`` triple per
text or ``tool_use`` block, ``message_delta`` (``stop_reason``, final ``output_tokens``),
``message_stop``. A turn's ``usage`` keys map to ``input_tokens``, ``output_tokens``,
``cache_read_input_tokens`` and ``cache_creation_input_tokens``. Requests to
``/v1/messages/count_tokens``, ``/v1/models`` and anything else get small valid answers.
"""

from __future__ import annotations

import json
from typing import Any

from .server import Reply, Request, ScriptedServer, iter_tool_calls, sse

__all__ = ["AnthropicMessages", "anthropic_server"]


class AnthropicMessages:
    """Renders turns as Anthropic Messages SSE streams."""

    def is_step(self, req: Request) -> bool:
        path = req.path.split("?")[0]
        return req.method == "POST" and path.endswith("/v1/messages")

    def other(self, req: Request) -> Reply:
        path = req.path.split("?")[0]
        if path.endswith("/count_tokens"):
            return Reply(chunks=[b'{"input_tokens": 100}'])
        if path.endswith("/v1/models"):
            return Reply(chunks=[b'{"data": [], "has_more": false}'])
        return Reply(chunks=[b"{}"])

    def render(self, turn: dict[str, Any], req: Request, step: int) -> Reply:
        model = req.body.get("model", "claude-test") if isinstance(req.body, dict) else "claude-test"
        usage = turn.get("usage") or {}
        out_tokens = int(usage.get("output_tokens", 10))
        events = [
            sse("message_start", {
                "type": "message_start",
                "message": {
                    "id": f"msg_fake{step:04d}", "type": "message", "role": "assistant", "model": model,
                    "content": [], "stop_reason": None, "stop_sequence": None,
                    "usage": {
                        "input_tokens": int(usage.get("input_tokens", 100)),
                        "cache_creation_input_tokens": int(usage.get("cache_write_tokens", 0)),
                        "cache_read_input_tokens": int(usage.get("cache_read_tokens", 0)),
                        "output_tokens": 1,
                    },
                },
            }),
        ]
        index = 0
        if turn.get("text"):
            events += [
                sse("content_block_start", {"type": "content_block_start", "index": index,
                                            "content_block": {"type": "text", "text": ""}}),
                sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                            "delta": {"type": "text_delta", "text": turn["text"]}}),
                sse("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
            index += 1
        calls = list(iter_tool_calls(turn))
        for n, call in calls:
            events += [
                sse("content_block_start", {
                    "type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": f"toolu_fake{step:04d}_{n}",
                                      "name": call["name"], "input": {}},
                }),
                sse("content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(call.get("input", {}))},
                }),
                sse("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
            index += 1
        if "stream_error" in turn:
            err = turn["stream_error"]
            events.append(sse("error", {"type": "error", "error": {"type": err.get("type", "api_error"),
                                                                   "message": err.get("message", "boom")}}))
            return Reply(content_type="text/event-stream", chunks=events)
        events += [
            sse("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": "tool_use" if calls else "end_turn",
                                            "stop_sequence": None},
                                  "usage": {"output_tokens": out_tokens}}),
            sse("message_stop", {"type": "message_stop"}),
        ]
        return Reply(content_type="text/event-stream", chunks=events)


def anthropic_server(script: list[dict[str, Any]], **kw: Any) -> ScriptedServer:
    """A started :class:`ScriptedServer` speaking the Anthropic Messages API."""
    return ScriptedServer(AnthropicMessages(), script, **kw)
