"""Kimi CLI dialect of json-event-stream (prompt mode, ``--print --output-format stream-json``).

Seed 002 §7.3 (the kimi branch of the dispatcher), ref §2.2 "kimi" (tables).
Kimi prints OpenAI-style chat messages, one per line: assistant messages with
``tool_calls`` or ``content``, ``tool`` role results, and a ``meta`` resume
hint. (Kimi's default transport is ACP, seed 000 §3; this dialect is its print
mode.)

Upstream checks ``tool_calls`` before ``content``: an assistant message that
carries both yields only its tool calls. We keep that order (ref §2.2).

Rules: KIMI-TOOLCALL-001, KIMI-TOOLRESULT-001, KIMI-TEXT-001, KIMI-META-001.
"""

from __future__ import annotations

from typing import Any

from harness.events import TextDelta, ToolResult, ToolUse
from harness.streams._jsonev import Emit, nullish, safe_parse_json, stringify_content
from harness.streams.base import js_trim

__all__ = ["KimiHandler"]


def _trimmed(value: object) -> str | None:
    """``typeof v === 'string' && v.trim() ? v.trim() : null``."""
    if not isinstance(value, str):
        return None
    trimmed = js_trim(value)
    return trimmed or None


class KimiHandler:
    """The kimi mapping; stateless apart from the emit callback."""

    __slots__ = ("_emit",)

    def __init__(self, emit: Emit) -> None:
        self._emit = emit

    def handle(self, obj: dict[str, Any]) -> bool:
        role = obj.get("role")
        tool_calls = obj.get("tool_calls")
        if role == "assistant" and isinstance(tool_calls, list):
            self._tool_calls(tool_calls)
            return True

        tool_call_id = _trimmed(obj.get("tool_call_id"))
        if role == "tool" and tool_call_id is not None:
            # KIMI-TOOLRESULT-001 (ref §2.2): a tool-role message is the call's result.
            self._emit(
                ToolResult(
                    tool_use_id=tool_call_id,
                    content=stringify_content(obj.get("content")),
                    is_error=False,
                )
            )
            return True

        content = obj.get("content")
        if role == "assistant" and isinstance(content, str) and content:
            # KIMI-TEXT-001 (ref §2.2): assistant string content is visible text.
            self._emit(TextDelta(delta=content))
            return True

        # KIMI-META-001 (ref §2.2): the resume hint is bookkeeping, consumed silently.
        return role == "meta" and obj.get("type") == "session.resume_hint"

    def finish(self) -> None:
        """Nothing is held."""

    def _tool_calls(self, tool_calls: list[Any]) -> None:
        """KIMI-TOOLCALL-001 (ref §2.2): one tool_use per call with a trimmed id and name."""
        for call in tool_calls:
            if not isinstance(call, dict):
                continue
            function = call.get("function")
            function = function if isinstance(function, dict) else {}
            call_id = _trimmed(call.get("id"))
            name = _trimmed(function.get("name"))
            if call_id is None or name is None:
                continue
            arguments = function.get("arguments")
            self._emit(
                ToolUse(id=call_id, name=name, input=nullish(safe_parse_json(arguments), arguments))
            )
