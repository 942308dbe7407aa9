"""OpenAI Responses: read a request, render a reply plan (pure; no IO).

Design: docs/design/modelserver.md#harness.modelserver.openai_responses
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
from harness.modelserver.sse import Frame, ReplyIds, json_pieces, pieces, sse
from harness.modelserver.tools import ToolOffer

__all__ = ["API", "error_reply", "read_request", "render_json", "render_stream"]

API = "openai-responses"

_RESULT_ITEMS = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "local_shell_call_output",
        "tool_search_output",
        "mcp_call_output",
    }
)
_CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "mcp_call"})


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
    """The provider-neutral view of a Responses request body."""
    raw_input = body.get("input")
    items: list[Any] = (
        [{"type": "message", "role": "user", "content": raw_input}]
        if isinstance(raw_input, str)
        else list(raw_input or ())
    )
    system: list[str] = [str(body.get("instructions") or "")]
    messages = _messages(items, system)
    tools = _tool_offers(body.get("tools") or ())
    schema = _structured(body.get("text"))
    choice = body.get("tool_choice")
    forced = (
        str(choice["name"])
        if isinstance(choice, dict)
        and choice.get("type") in ("function", "custom")
        and isinstance(choice.get("name"), str)
        else None
    )
    return Conversation(
        api=API,
        model=str(body.get("model", "")),
        stream=body.get("stream") is True,
        messages=messages,
        tools=tools,
        system_text="\n".join(t for t in system if t),
        structured_schema=schema,
        structured_source="text.format" if schema is not None else "",
        forced_tool=forced,
    )


def _messages(items: list[Any], system: list[str]) -> tuple[Message, ...]:
    """One message per input item; system and developer texts also go to ``system``."""
    messages: list[Message] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = str(item.get("type") or "message")
        if kind == "message":
            role, text = str(item.get("role", "")), _text_of(item.get("content"))
            if role in ("system", "developer"):
                system.append(text)
            messages.append(Message(role, text))
        elif kind in _RESULT_ITEMS:
            messages.append(Message(kind, tool_result=True))
        elif kind in _CALL_ITEMS:
            messages.append(Message(kind, tool_call=True))
        else:
            messages.append(Message(kind))
    return tuple(messages)


def _tool_offers(raw: Any) -> tuple[ToolOffer, ...]:
    """The named ``function`` and ``custom`` tools the request offers."""
    tools: list[ToolOffer] = []
    for t in raw:
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            continue
        if t.get("type") == "function":
            params = t.get("parameters")
            tools.append(
                ToolOffer(
                    str(t["name"]),
                    str(t.get("description", "")),
                    params if isinstance(params, dict) else {},
                )
            )
        elif t.get("type") == "custom":
            tools.append(ToolOffer(str(t["name"]), str(t.get("description", "")), {}, "custom"))
    return tuple(tools)


def _structured(text_config: Any) -> Mapping[str, Any] | None:
    """The schema ``text.format`` asks for (``json_object``: any object), else None."""
    fmt = text_config.get("format") if isinstance(text_config, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        found = fmt.get("schema")
        return found if isinstance(found, dict) else {}
    if isinstance(fmt, dict) and fmt.get("type") == "json_object":
        return {"type": "object"}
    return None


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_read_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.thought_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _response(conv: Conversation, ids: ReplyIds, status: str) -> dict[str, Any]:
    return {
        "id": ids.make("resp"),
        "object": "response",
        "created_at": ids.created,
        "status": status,
        "model": conv.model or "mock-model",
        "output": [],
        "usage": None,
        "error": None,
        "incomplete_details": None,
        "parallel_tool_calls": False,
    }


def _final_status(plan: ReplyPlan) -> tuple[str, str, dict[str, Any] | None]:
    """``(event, status, incomplete_details)`` that closes the response."""
    if plan.stop_reason == "max_tokens":
        return "response.incomplete", "incomplete", {"reason": "max_output_tokens"}
    return "response.completed", "completed", None


class _Stream:
    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.seq = 0

    def emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        self.frames.append(sse({"type": kind, "sequence_number": self.seq, **payload}, kind))
        self.seq += 1


def _items(plan: ReplyPlan, ids: ReplyIds) -> list[tuple[Any, dict[str, Any]]]:
    """Each content block with its finished output item."""
    out: list[tuple[Any, dict[str, Any]]] = []
    for n, block in enumerate(plan.blocks):
        if isinstance(block, ThinkingBlock):
            out.append(
                (
                    block,
                    {
                        "id": ids.make(f"rs{n}"),
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": block.text}],
                    },
                )
            )
        elif isinstance(block, TextBlock):
            out.append(
                (
                    block,
                    {
                        "id": ids.make(f"msg{n}"),
                        "type": "message",
                        "status": "completed",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": block.text, "annotations": []}],
                    },
                )
            )
        elif isinstance(block, ToolBlock):
            call = block.call
            if call.kind == "custom":
                item = {
                    "id": ids.make(f"ctc{n}"),
                    "type": "custom_tool_call",
                    "status": "completed",
                    "call_id": call.call_id,
                    "name": call.name,
                    "input": call.input,
                }
            else:
                item = {
                    "id": ids.make(f"fc{n}"),
                    "type": "function_call",
                    "status": "completed",
                    "call_id": call.call_id,
                    "name": call.name,
                    "arguments": call.payload,
                }
            out.append((block, item))
        else:
            out.append((block, {}))
    return out


def render_stream(plan: ReplyPlan, conv: Conversation, ids: ReplyIds) -> list[Frame]:
    """The SSE events of a streaming reply (MODEL-RESP-001, MODEL-RESP-002)."""
    s = _Stream()
    s.emit("response.created", {"response": _response(conv, ids, "in_progress")})
    s.emit("response.in_progress", {"response": _response(conv, ids, "in_progress")})
    done: list[dict[str, Any]] = []
    for block, item in _items(plan, ids):
        if isinstance(block, Pause):
            s.frames.append(block)
            continue
        if isinstance(block, HangBlock):
            s.frames.append(block)
            return s.frames
        if isinstance(block, ErrorBlock):
            failed = _response(conv, ids, "failed")
            failed["output"] = done
            failed["error"] = {
                "code": openai_error_body(block.spec)["error"]["code"],
                "message": block.spec.message,
            }
            s.emit("response.failed", {"response": failed})
            return s.frames
        index = len(done)
        _item_events(s, block, item, index)
        done.append(item)
    # MODEL-RESP-001, real-clis.md: "codex needs response.completed carrying id and usage".
    event, status, incomplete = _final_status(plan)
    final = _response(conv, ids, status)
    final["output"] = done
    final["usage"] = _usage(plan.usage)
    final["incomplete_details"] = incomplete
    s.emit(event, {"response": final})
    return s.frames


def _item_events(s: _Stream, block: Any, item: dict[str, Any], index: int) -> None:
    item_id = item["id"]
    at = {"item_id": item_id, "output_index": index}
    if isinstance(block, ThinkingBlock):
        s.emit(
            "response.output_item.added", {"output_index": index, "item": {**item, "summary": []}}
        )
        blank = {"type": "summary_text", "text": ""}
        s.emit("response.reasoning_summary_part.added", {**at, "summary_index": 0, "part": blank})
        for piece in block.pieces:
            if isinstance(piece, Pause):
                s.frames.append(piece)
            elif piece:
                s.emit(
                    "response.reasoning_summary_text.delta",
                    {**at, "summary_index": 0, "delta": piece},
                )
        s.emit(
            "response.reasoning_summary_text.done", {**at, "summary_index": 0, "text": block.text}
        )
        s.emit(
            "response.reasoning_summary_part.done",
            {**at, "summary_index": 0, "part": {"type": "summary_text", "text": block.text}},
        )
    elif isinstance(block, TextBlock):
        s.emit(
            "response.output_item.added",
            {"output_index": index, "item": {**item, "status": "in_progress", "content": []}},
        )
        empty = {"type": "output_text", "text": "", "annotations": []}
        s.emit("response.content_part.added", {**at, "content_index": 0, "part": empty})
        for piece in block.pieces:
            if isinstance(piece, Pause):
                s.frames.append(piece)
            elif piece:
                s.emit(
                    "response.output_text.delta",
                    {**at, "content_index": 0, "delta": piece, "logprobs": []},
                )
        s.emit(
            "response.output_text.done",
            {**at, "content_index": 0, "text": block.text, "logprobs": []},
        )
        s.emit("response.content_part.done", {**at, "content_index": 0, "part": item["content"][0]})
    else:
        # MODEL-RESP-002, real-clis.md: "a custom tool must come back as a custom_tool_call
        # item with input" (codex's apply_patch); function tools stream their arguments.
        custom = item["type"] == "custom_tool_call"
        key = "input" if custom else "arguments"
        s.emit(
            "response.output_item.added",
            {"output_index": index, "item": {**item, "status": "in_progress", key: ""}},
        )
        prefix = (
            "response.custom_tool_call_input" if custom else ("response.function_call_arguments")
        )
        for piece_text in pieces(item[key]) if custom else json_pieces(item[key]):
            s.emit(f"{prefix}.delta", {**at, "delta": piece_text})
        s.emit(f"{prefix}.done", {**at, key: item[key]})
    s.emit("response.output_item.done", {"output_index": index, "item": item})


def render_json(plan: ReplyPlan, conv: Conversation, ids: ReplyIds) -> dict[str, Any]:
    """The non-streaming ``response`` object."""
    _, status, incomplete = _final_status(plan)
    response = _response(conv, ids, status)
    response["output"] = [item for block, item in _items(plan, ids) if item]
    response["usage"] = _usage(plan.usage)
    response["incomplete_details"] = incomplete
    return response


def error_reply(spec: ApiErrorSpec) -> tuple[int, dict[str, Any]]:
    """HTTP status and body of a failed request (MODEL-ERR-001)."""
    return spec.status, openai_error_body(spec)
