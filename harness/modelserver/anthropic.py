"""Anthropic Messages: read a request, render a reply plan (pure; no IO).

Served at ``POST …/messages`` (claude posts ``/v1/messages?beta=true``) and
``POST …/messages/count_tokens`` (real-clis.md, claude 2.1.332 and claude-code-acp).

Rules: MODEL-SCRIPT-002, MODEL-STRUCT-001.
Design: docs/design/modelserver.md#harness.modelserver.anthropic
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness.modelserver.errors import ApiErrorSpec, anthropic_error_body
from harness.modelserver.scenario_script import (
    Conversation,
    ErrorBlock,
    HangBlock,
    Message,
    Pause,
    ReplyPlan,
    TextBlock,
    ThinkingBlock,
    ToolBlock,
    Usage,
)
from harness.modelserver.sse import Frame, ReplyIds, json_pieces, sse
from harness.modelserver.tools import ToolOffer

__all__ = [
    "API",
    "count_tokens",
    "error_reply",
    "read_request",
    "render_json",
    "render_stream",
]

API = "anthropic-messages"
#: Thinking blocks come back in the next request with their signature; any value will do.
SIGNATURE = "bW9jay1zaWduYXR1cmU="


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def read_request(body: Mapping[str, Any]) -> Conversation:
    """The provider-neutral view of a Messages request body."""
    messages: list[Message] = []
    system = [_text_of(body.get("system"))]
    for raw in body.get("messages") or ():
        if not isinstance(raw, dict):
            continue
        content = raw.get("content")
        blocks = content if isinstance(content, list) else []
        types = {b.get("type") for b in blocks if isinstance(b, dict)}
        if raw.get("role") == "system":
            system.append(_text_of(content))
        messages.append(
            Message(
                role=str(raw.get("role", "")),
                text=_text_of(content),
                tool_result="tool_result" in types,
                tool_call="tool_use" in types,
            )
        )
    tools: list[ToolOffer] = []
    for t in body.get("tools") or ():
        if isinstance(t, dict) and isinstance(t.get("name"), str):
            schema = t.get("input_schema")
            tools.append(
                ToolOffer(
                    name=str(t["name"]),
                    description=str(t.get("description", "")),
                    schema=schema if isinstance(schema, dict) else {},
                )
            )
    structured: Mapping[str, Any] | None = None
    source = ""
    for key in ("output_config", "output_format"):
        holder = body.get(key)
        fmt = (
            holder.get("format")
            if key == "output_config" and isinstance(holder, Mapping)
            else holder
        )
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            found = fmt.get("schema")
            structured, source = (found if isinstance(found, dict) else {}), key
            break
    choice = body.get("tool_choice")
    forced = (
        str(choice["name"])
        if isinstance(choice, dict) and choice.get("type") == "tool" and "name" in choice
        else None
    )
    return Conversation(
        api=API,
        model=str(body.get("model", "")),
        stream=body.get("stream") is True,
        messages=tuple(messages),
        tools=tuple(tools),
        system_text="\n".join(t for t in system if t),
        structured_schema=structured,
        structured_source=source,
        forced_tool=forced,
    )


def _usage(usage: Usage, *, final: bool) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cached_write_tokens,
        "cache_read_input_tokens": usage.cached_read_tokens,
        "output_tokens": usage.output_tokens if final else 0,
    }


def _message(plan: ReplyPlan, conv: Conversation, ids: ReplyIds) -> dict[str, Any]:
    return {
        "id": ids.make("msg"),
        "type": "message",
        "role": "assistant",
        "model": conv.model or "mock-model",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _usage(plan.usage, final=False),
    }


def render_stream(plan: ReplyPlan, conv: Conversation, ids: ReplyIds) -> list[Frame]:
    """The SSE events of a streaming reply (MODEL-ANTH-001)."""
    frames: list[Frame] = [
        sse({"type": "message_start", "message": _message(plan, conv, ids)}, "message_start"),
        sse({"type": "ping"}, "ping"),
    ]
    index = 0
    for block in plan.blocks:
        if isinstance(block, Pause):
            frames.append(block)
            continue
        if isinstance(block, HangBlock):
            frames.append(block)
            return frames
        if isinstance(block, ErrorBlock):
            # An error after content: the API's in-stream ``error`` event.
            frames.append(sse(anthropic_error_body(block.spec), "error"))
            return frames
        frames.extend(_block_frames(block, index))
        index += 1
    # MODEL-ANTH-001: stop_reason (end_turn | tool_use) and the usage come last.
    frames.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": plan.stop_reason, "stop_sequence": None},
                "usage": _usage(plan.usage, final=True),
            },
            "message_delta",
        )
    )
    frames.append(sse({"type": "message_stop"}, "message_stop"))
    return frames


def _block_frames(block: ThinkingBlock | TextBlock | ToolBlock, index: int) -> list[Frame]:
    out: list[Frame] = []

    def start(content_block: Mapping[str, Any]) -> None:
        out.append(
            sse(
                {"type": "content_block_start", "index": index, "content_block": content_block},
                "content_block_start",
            )
        )

    def delta(payload: Mapping[str, Any]) -> None:
        out.append(
            sse(
                {"type": "content_block_delta", "index": index, "delta": payload},
                "content_block_delta",
            )
        )

    if isinstance(block, ThinkingBlock):
        start({"type": "thinking", "thinking": "", "signature": ""})
        for piece in block.pieces:
            if isinstance(piece, Pause):
                out.append(piece)
            elif piece:
                delta({"type": "thinking_delta", "thinking": piece})
        delta({"type": "signature_delta", "signature": SIGNATURE})
    elif isinstance(block, TextBlock):
        start({"type": "text", "text": ""})
        for piece in block.pieces:
            if isinstance(piece, Pause):
                out.append(piece)
            elif piece:
                delta({"type": "text_delta", "text": piece})
    else:
        call = block.call
        start({"type": "tool_use", "id": call.call_id, "name": call.name, "input": {}})
        for part in json_pieces(json.dumps(dict(call.arguments), ensure_ascii=False)):
            delta({"type": "input_json_delta", "partial_json": part})
    out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return out


def render_json(plan: ReplyPlan, conv: Conversation, ids: ReplyIds) -> dict[str, Any]:
    """The non-streaming ``message`` object (MODEL-ANTH-002)."""
    message = _message(plan, conv, ids)
    content: list[dict[str, Any]] = []
    for block in plan.blocks:
        if isinstance(block, ThinkingBlock):
            content.append({"type": "thinking", "thinking": block.text, "signature": SIGNATURE})
        elif isinstance(block, TextBlock):
            content.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolBlock):
            call = block.call
            content.append(
                {
                    "type": "tool_use",
                    "id": call.call_id,
                    "name": call.name,
                    "input": dict(call.arguments),
                }
            )
    message["content"] = content
    message["stop_reason"] = plan.stop_reason
    message["usage"] = _usage(plan.usage, final=True)
    return message


def error_reply(spec: ApiErrorSpec) -> tuple[int, dict[str, Any]]:
    """HTTP status and body of a failed request (MODEL-ERR-001)."""
    return spec.status, anthropic_error_body(spec)


def count_tokens(body: Mapping[str, Any]) -> dict[str, int]:
    """``/messages/count_tokens``: ``{input_tokens}``, about four characters a token."""
    size = len(json.dumps(body.get("messages", []), ensure_ascii=False))
    size += len(json.dumps(body.get("system", ""), ensure_ascii=False))
    size += len(json.dumps(body.get("tools", []), ensure_ascii=False))
    return {"input_tokens": max(1, size // 4)}
