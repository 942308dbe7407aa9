"""Gemini API: read a request, render a reply plan (pure; no IO).

Served at ``POST …/models/<model>:streamGenerateContent?alt=sse``,
``:generateContent`` and ``:countTokens`` (real-clis.md, gemini 0.61.0: base URL
``GOOGLE_GEMINI_BASE_URL``, paths under ``/v1beta``). Streaming (MODEL-GEM-001): one
``data:`` chunk per scenario chunk, ``{candidates: [{content: {role: model, parts:
[{text} | {text, thought: true} | {functionCall: {name, args}}]}}]}``; the last chunk
carries ``finishReason`` and ``usageMetadata``. ``generateContent`` answers one JSON
object with every part.

Structured output: ``generationConfig.responseJsonSchema`` (JSON Schema) or
``responseSchema`` (OpenAPI subset, upper-case types). gemini's "auto" router first
calls ``generateContent`` with ``{complexity_reasoning, complexity_score}``; it gets
schema-valid JSON with an integer score >= 1 (MODEL-GEM-002) and no scenario step.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness.modelserver.errors import ApiErrorSpec, google_error_body
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
from harness.modelserver.sse import Frame, ReplyIds, sse
from harness.modelserver.structured import normalize_schema
from harness.modelserver.tools import ToolOffer

__all__ = [
    "API",
    "FINISH_REASONS",
    "count_tokens",
    "error_reply",
    "read_request",
    "render_json",
    "render_stream",
]

API = "google-genai"

#: Neutral stop reasons -> ``finishReason`` (a function call still finishes with STOP).
FINISH_REASONS = {
    "end_turn": "STOP",
    "tool_use": "STOP",
    "stop_sequence": "STOP",
    "max_tokens": "MAX_TOKENS",
    "refusal": "SAFETY",
}


def _parts_text(parts: Any) -> str:
    if not isinstance(parts, list):
        return ""
    return "\n".join(
        str(p["text"])
        for p in parts
        if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
    )


def read_request(body: Mapping[str, Any], *, model: str, stream: bool) -> Conversation:
    """The provider-neutral view of a generateContent request (model and mode from the path)."""
    messages = _messages(body.get("contents") or ())
    tools = _tool_offers(body.get("tools") or ())
    system = body.get("systemInstruction") or body.get("system_instruction")
    system_text = (
        _parts_text(system.get("parts"))
        if isinstance(system, dict)
        else (system if isinstance(system, str) else "")
    )
    config = body.get("generationConfig")
    schema, source = _structured(config if isinstance(config, dict) else {})
    return Conversation(
        api=API,
        model=model,
        stream=stream,
        messages=messages,
        tools=tools,
        system_text=system_text,
        structured_schema=schema,
        structured_source=source,
        forced_tool=_forced_tool(body.get("toolConfig")),
    )


def _messages(contents: Any) -> tuple[Message, ...]:
    """``contents``: each entry's role, text, and whether it calls or answers a function."""
    messages: list[Message] = []
    for content in contents:
        if not isinstance(content, dict):
            continue
        parts = content.get("parts")
        plist = parts if isinstance(parts, list) else []
        keys = {k for p in plist if isinstance(p, dict) for k in p}
        messages.append(
            Message(
                role=str(content.get("role", "user")),
                text=_parts_text(parts),
                tool_result="functionResponse" in keys,
                tool_call="functionCall" in keys,
            )
        )
    return tuple(messages)


def _tool_offers(groups: Any) -> tuple[ToolOffer, ...]:
    """Every named function declaration of every ``tools`` group, its schema normalized."""
    tools: list[ToolOffer] = []
    for group in groups:
        decls = group.get("functionDeclarations") if isinstance(group, dict) else None
        for decl in decls or ():
            if not isinstance(decl, dict) or not isinstance(decl.get("name"), str):
                continue
            params = decl.get("parametersJsonSchema")
            if not isinstance(params, dict):
                # ``parameters`` is the OpenAPI subset (upper-case types): normalized
                openapi = decl.get("parameters")
                params = normalize_schema(openapi) if isinstance(openapi, dict) else {}
            tools.append(ToolOffer(str(decl["name"]), str(decl.get("description", "")), params))
    return tuple(tools)


def _structured(config: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, str]:
    """The response schema a ``generationConfig`` asks for, and the key that asked."""
    for key in ("responseJsonSchema", "responseSchema", "response_json_schema"):
        found = config.get(key)
        if isinstance(found, dict):
            return normalize_schema(found), key
    if config.get("responseMimeType") == "application/json":
        return {"type": "object"}, "responseMimeType"
    return None, ""


def _forced_tool(tool_config: Any) -> str | None:
    """The one function ``toolConfig`` forces (mode ``ANY`` with a single allowed name)."""
    calling = tool_config.get("functionCallingConfig") if isinstance(tool_config, dict) else None
    if not isinstance(calling, dict) or calling.get("mode") != "ANY":
        return None
    allowed = calling.get("allowedFunctionNames")
    if isinstance(allowed, list) and len(allowed) == 1 and isinstance(allowed[0], str):
        return allowed[0]
    return None


def _usage(usage: Usage) -> dict[str, int]:
    return {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens + usage.thought_tokens,
        "thoughtsTokenCount": usage.thought_tokens,
        "cachedContentTokenCount": usage.cached_read_tokens,
    }


def _call_part(block: ToolBlock) -> dict[str, Any]:
    call = block.call
    args = dict(call.arguments) if call.kind == "function" else {"input": call.input}
    return {"functionCall": {"id": call.call_id, "name": call.name, "args": args}}


def _finish(plan: ReplyPlan) -> str:
    return FINISH_REASONS.get(plan.stop_reason, "STOP")


def render_stream(plan: ReplyPlan, conv: Conversation, ids: ReplyIds) -> list[Frame]:
    """The SSE chunks of ``streamGenerateContent?alt=sse`` (MODEL-GEM-001)."""
    head = {"modelVersion": conv.model or "mock-model", "responseId": ids.make("resp")}
    items: list[dict[str, Any] | Pause] = []
    ending: Frame | None = None
    for block in plan.blocks:
        if isinstance(block, Pause):
            items.append(block)
        elif isinstance(block, HangBlock):
            ending = block
            break
        elif isinstance(block, ErrorBlock):
            ending = sse(google_error_body(block.spec))
            break
        elif isinstance(block, (ThinkingBlock, TextBlock)):
            thought = isinstance(block, ThinkingBlock)
            for piece in block.pieces:
                if isinstance(piece, Pause):
                    items.append(piece)
                elif piece:
                    items.append({"text": piece, "thought": True} if thought else {"text": piece})
        elif isinstance(block, ToolBlock):
            items.append(_call_part(block))
    last_part = max((i for i, it in enumerate(items) if not isinstance(it, Pause)), default=-1)
    frames: list[Frame] = []
    for i, item in enumerate(items):
        if isinstance(item, Pause):
            frames.append(item)
            continue
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [item]}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate], **head}
        if i == last_part and ending is None:  # MODEL-GEM-001: the last chunk closes it
            candidate["finishReason"] = _finish(plan)
            chunk["usageMetadata"] = _usage(plan.usage)
        frames.append(sse(chunk))
    if ending is not None:
        frames.append(ending)
    elif last_part < 0:
        frames.append(
            sse(
                {
                    "candidates": [
                        {
                            "content": {"role": "model", "parts": [{"text": ""}]},
                            "finishReason": _finish(plan),
                            "index": 0,
                        }
                    ],
                    "usageMetadata": _usage(plan.usage),
                    **head,
                }
            )
        )
    return frames


def render_json(plan: ReplyPlan, conv: Conversation, ids: ReplyIds) -> dict[str, Any]:
    """The ``generateContent`` response object."""
    parts: list[dict[str, Any]] = []
    for block in plan.blocks:
        if isinstance(block, ThinkingBlock) and block.text:
            parts.append({"text": block.text, "thought": True})
        elif isinstance(block, TextBlock):
            parts.append({"text": block.text})
        elif isinstance(block, ToolBlock):
            parts.append(_call_part(block))
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts or [{"text": ""}]},
                "finishReason": _finish(plan),
                "index": 0,
            }
        ],
        "usageMetadata": _usage(plan.usage),
        "modelVersion": conv.model or "mock-model",
        "responseId": ids.make("resp"),
    }


def error_reply(spec: ApiErrorSpec) -> tuple[int, dict[str, Any]]:
    """HTTP status and body of a failed request (MODEL-ERR-001)."""
    return spec.status, google_error_body(spec)


def count_tokens(body: Mapping[str, Any]) -> dict[str, int]:
    """``:countTokens``: ``{totalTokens}``, about four characters a token."""
    size = len(json.dumps(body.get("contents", []), ensure_ascii=False))
    return {"totalTokens": max(1, size // 4)}
