"""OpenAI Chat Completions: read a request, render a reply plan (pure; no IO).

Design: docs/design/modelserver.md#harness.modelserver.openai_chat
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.modelserver.errors import ApiErrorSpec, openai_error_body
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
from harness.modelserver.sse import DONE, Frame, ReplyIds, json_pieces, sse
from harness.modelserver.tools import ToolOffer

__all__ = ["API", "FINISH_REASONS", "error_reply", "read_request", "render_json", "render_stream"]

API = "openai-chat"

#: Neutral stop reasons (Anthropic's words) -> ``finish_reason``.
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def read_request(body: Mapping[str, Any]) -> Conversation:
    """The provider-neutral view of a Chat Completions request body."""
    system: list[str] = []
    messages = _messages(body.get("messages") or (), system)
    tools = _tool_offers(body.get("tools") or (), body.get("functions") or ())
    schema = _structured(body.get("response_format"))
    choice = body.get("tool_choice")
    forced = None
    if isinstance(choice, dict) and isinstance(choice.get("function"), Mapping):
        name = choice["function"].get("name")
        forced = str(name) if isinstance(name, str) else None
    options = body.get("stream_options")
    return Conversation(
        api=API,
        model=str(body.get("model", "")),
        stream=body.get("stream") is True,
        messages=messages,
        tools=tools,
        system_text="\n".join(system),
        structured_schema=schema,
        structured_source="response_format" if schema is not None else "",
        forced_tool=forced,
        include_usage=isinstance(options, dict) and options.get("include_usage") is True,
    )


def _messages(raw_messages: Any, system: list[str]) -> tuple[Message, ...]:
    """One message per entry; non-empty system and developer texts also go to ``system``."""
    messages: list[Message] = []
    for raw in raw_messages:
        if not isinstance(raw, dict):
            continue
        role = str(raw.get("role", ""))
        text = _text_of(raw.get("content"))
        if role in ("system", "developer") and text:
            system.append(text)
        messages.append(
            Message(
                role,
                text,
                tool_result=role in ("tool", "function"),
                tool_call=bool(raw.get("tool_calls") or raw.get("function_call")),
            )
        )
    return tuple(messages)


def _tool_offers(tools: Any, functions: Any) -> tuple[ToolOffer, ...]:
    """The named functions of ``tools``, then those of the legacy ``functions`` list."""
    declared = [t.get("function") if isinstance(t, dict) else None for t in tools]
    return tuple(
        ToolOffer(
            str(fn["name"]),
            str(fn.get("description", "")),
            params if isinstance(params := fn.get("parameters"), dict) else {},
        )
        for fn in [*declared, *functions]
        if isinstance(fn, dict) and isinstance(fn.get("name"), str)
    )


def _structured(fmt: Any) -> Mapping[str, Any] | None:
    """The schema ``response_format`` asks for (``json_object``: any object), else None."""
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        holder = fmt.get("json_schema")
        found = holder.get("schema") if isinstance(holder, dict) else None
        return found if isinstance(found, dict) else {}
    if isinstance(fmt, dict) and fmt.get("type") == "json_object":
        return {"type": "object"}
    return None


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_read_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.thought_tokens},
    }


def _finish(plan: ReplyPlan) -> str:
    return FINISH_REASONS.get(plan.stop_reason, "stop")


def render_stream(plan: ReplyPlan, conv: Conversation, ids: ReplyIds) -> list[Frame]:
    """The SSE chunks of a streaming reply (MODEL-CHAT-001)."""
    head = {
        "id": ids.make("chatcmpl"),
        "object": "chat.completion.chunk",
        "created": ids.created,
        "model": conv.model or "mock-model",
        "system_fingerprint": None,
    }

    def chunk(delta: Mapping[str, Any], finish: str | None = None) -> bytes:
        return sse(
            {
                **head,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            }
        )

    frames: list[Frame] = [chunk({"role": "assistant", "content": ""})]
    tool_index = 0
    for block in plan.blocks:
        if isinstance(block, Pause):
            frames.append(block)
        elif isinstance(block, HangBlock):
            frames.append(block)
            return frames
        elif isinstance(block, ErrorBlock):
            # An error after content: OpenAI sends an ``error`` object as a data line.
            frames.append(sse(openai_error_body(block.spec)))
            return frames
        elif isinstance(block, (ThinkingBlock, TextBlock)):
            key = "reasoning_content" if isinstance(block, ThinkingBlock) else "content"
            for piece in block.pieces:
                if isinstance(piece, Pause):
                    frames.append(piece)
                elif piece:
                    frames.append(chunk({key: piece}))
        elif isinstance(block, ToolBlock):
            call = block.call
            frames.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": tool_index,
                                "id": call.call_id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": ""},
                            }
                        ]
                    }
                )
            )
            for part in json_pieces(call.payload):
                frames.append(
                    chunk({"tool_calls": [{"index": tool_index, "function": {"arguments": part}}]})
                )
            tool_index += 1
    frames.append(chunk({}, _finish(plan)))
    # MODEL-CHAT-001, real-clis.md: "opencode and pi-style clients need
    # stream_options.include_usage honoured": a usage chunk with no choices, then [DONE].
    if conv.include_usage:
        frames.append(sse({**head, "choices": [], "usage": _usage(plan.usage)}))
    frames.append(DONE)
    return frames


def render_json(plan: ReplyPlan, conv: Conversation, ids: ReplyIds) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` object (MODEL-CHAT-002)."""
    text = "".join(b.text for b in plan.blocks if isinstance(b, TextBlock))
    thinking = "".join(b.text for b in plan.blocks if isinstance(b, ThinkingBlock))
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if thinking:
        message["reasoning_content"] = thinking
    calls = [
        {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.payload}}
        for c in plan.tool_calls
    ]
    if calls:
        message["tool_calls"] = calls
    return {
        "id": ids.make("chatcmpl"),
        "object": "chat.completion",
        "created": ids.created,
        "model": conv.model or "mock-model",
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": _finish(plan)}
        ],
        "usage": _usage(plan.usage),
    }


def error_reply(spec: ApiErrorSpec) -> tuple[int, dict[str, Any]]:
    """HTTP status and body of a failed request (MODEL-ERR-001)."""
    return spec.status, openai_error_body(spec)
