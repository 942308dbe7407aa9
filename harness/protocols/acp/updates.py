"""ACP ``session/update`` -> normalized events (ref §2.6, newer ``updates.ts`` table).

:class:`UpdateMapper` is the pure part of the ACP session: it sees one
``params.update`` object at a time and returns events. It keeps three pieces of
state for one prompt turn: whether thinking started, the visible text emitted so
far (for the cumulative-snapshot dedupe), and the tool calls by ``toolCallId``.

Design: docs/design/protocols.md#harness.protocols.acp.updates
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from harness.events import (
    Event,
    Status,
    TextDelta,
    ThinkingDelta,
    ThinkingStart,
)
from harness.protocols.acp.tool_calls import ToolCallState, normalize_tool_status

__all__ = [
    "IGNORED_UPDATES",
    "UpdateMapper",
    "extract_update_text",
    "format_usage",
]

#: ref §2.6: "usage_update, session_info_update, available_commands_update | ignored".
IGNORED_UPDATES = frozenset({"usage_update", "session_info_update", "available_commands_update"})

#: ref §2.6 ``extractAcpUpdateText``: keys searched, in order, at most 4 levels deep.
_TEXT_KEYS = (
    "content",
    "text",
    "delta",
    "message",
    "output",
    "answer",
    "value",
    "body",
    "parts",
    "choices",
)
_TEXT_DEPTH = 4


def extract_update_text(value: Any, _depth: int = 0) -> str:
    """The first non-empty text under the known keys (arrays concatenate).

    ref §2.6: "first non-empty text found under keys content, text, delta, message,
    output, answer, value, body, parts, choices (recursive ≤4 levels; arrays
    concatenate)" (rule ACP-UPDATE-EXTRACT-001).
    """
    if isinstance(value, str):
        return value
    if _depth >= _TEXT_DEPTH:
        return ""
    if isinstance(value, list):
        return "".join(extract_update_text(item, _depth + 1) for item in value)
    if isinstance(value, dict):
        for key in _TEXT_KEYS:
            if key in value:
                text = extract_update_text(value[key], _depth + 1)
                if text:
                    return text
    return ""


# -- usage -------------------------------------------------------------------------------

#: ref §2.6 ``formatUsage``: normalized key <- accepted spellings, first found wins.
_USAGE_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("input_tokens", ("inputTokens", "input_tokens")),
    ("output_tokens", ("outputTokens", "output_tokens")),
    ("cached_read_tokens", ("cachedReadTokens", "cached_read_tokens")),
    # kept separate from cached_read_tokens (ref §2.6)
    ("cache_read_input_tokens", ("cache_read_input_tokens",)),
    ("cache_creation_input_tokens", ("cacheCreationTokens", "cache_creation_input_tokens")),
    ("cached_write_tokens", ("cachedWriteTokens", "cached_write_tokens")),
    ("thought_tokens", ("thoughtTokens", "thought_tokens")),
    ("total_tokens", ("totalTokens", "total_tokens")),
)


def _number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # JSON.parse reads an integer beyond the double range as Infinity
        return False


def format_usage(usage: Any) -> dict[str, Any] | None:
    """``session/prompt`` ``result.usage`` -> normalized token counts, or ``None``.

    ref §2.6 ``formatUsage`` (rule ACP-USAGE-001): camelCase and snake_case
    spellings map to one snake_case key; non-numbers are dropped; ``None`` when
    nothing is left.
    """
    if not isinstance(usage, dict):
        return None
    out: dict[str, Any] = {}
    for key, spellings in _USAGE_KEYS:
        for spelling in spellings:
            value = usage.get(spelling)
            if _number(value):
                out[key] = value
                break
    return out or None


# -- the mapper ---------------------------------------------------------------------------


class UpdateMapper:
    """One prompt turn's ``session/update`` mapping (sans-IO, never raises on input).

    ``prompt_sent_ms`` is the session clock when ``session/prompt`` was written;
    ``status(streaming).ttft_ms`` is measured from it.
    """

    def __init__(self, *, prompt_sent_ms: float = 0.0) -> None:
        #: Set by the session when it writes ``session/prompt``.
        self.prompt_sent_ms = prompt_sent_ms
        self._thinking = False
        self._streaming = False
        self._text_parts: list[str] = []
        self._text_len = 0
        self._tools: dict[str, ToolCallState] = {}

    @property
    def open_tool_ids(self) -> list[str]:
        return [t.tool_call_id for t in self._tools.values() if not t.done]

    @property
    def unannounced_tool_ids(self) -> list[str]:
        """Tools whose first frame was a ``tool_call_update``: no ``tool_call`` named them."""
        return [t.tool_call_id for t in self._tools.values() if not t.announced]

    @property
    def text(self) -> str:
        """All visible text emitted this turn (joined once, then kept joined)."""
        if len(self._text_parts) > 1:
            self._text_parts = ["".join(self._text_parts)]
        return self._text_parts[0] if self._text_parts else ""

    def map(self, update: Mapping[str, Any], now_ms: float) -> list[Event]:
        raw_kind = update.get("sessionUpdate")
        kind = raw_kind if isinstance(raw_kind, str) else ""
        if kind == "agent_message_chunk":
            return self._message(extract_update_text(update), now_ms)
        if kind == "agent_thought_chunk":
            return self._thought(extract_update_text(update))
        if kind == "user_message_chunk" or kind in IGNORED_UPDATES:
            return []
        label = kind or "session_update"
        events: list[Event] = [Status(label=label, detail=_detail(update))]
        if kind in ("tool_call", "tool_call_update"):
            events.extend(self._tool(update, now_ms))
        return events

    def flush(self, *, is_error: bool) -> list[Event]:
        """Transcribe every open tool (ref §2.6: at prompt end ``isError`` false, on
        failure or abort true; rule ACP-UPDATE-TOOL-005)."""
        events: list[Event] = []
        for state in self._tools.values():
            if not state.done:
                events.extend(state.events(is_error=is_error))
        return events

    # -- kinds --------------------------------------------------------------------

    def _thought(self, text: str) -> list[Event]:
        # ref §2.6: "thinking_start (once per session) then thinking_delta".
        if not text:
            return []
        events: list[Event] = []
        if not self._thinking:
            self._thinking = True
            events.append(ThinkingStart())
        events.append(ThinkingDelta(delta=text))
        return events

    def _message(self, text: str, now_ms: float) -> list[Event]:
        # ref §2.6 cumulative-snapshot dedupe: "if text starts with everything emitted so
        # far, only the suffix is new" (rule ACP-UPDATE-TEXT-001). The length test keeps
        # the common delta case O(1); a snapshot costs one comparison of its length.
        if self._text_len and len(text) >= self._text_len:
            emitted = self.text
            if text.startswith(emitted):
                text = text[self._text_len :]
        if not text:
            return []
        events: list[Event] = []
        if not self._streaming:
            self._streaming = True
            events.append(Status(label="streaming", ttft_ms=now_ms - self.prompt_sent_ms))
        self._text_parts.append(text)
        self._text_len += len(text)
        events.append(TextDelta(delta=text))
        return events

    def _tool(self, update: Mapping[str, Any], now_ms: float) -> list[Event]:
        tool_id = update.get("toolCallId")
        if not isinstance(tool_id, str) or not tool_id:
            return []  # cannot be correlated; the schema check already reported it
        state = self._tools.get(tool_id)
        if state is None:
            state = self._tools[tool_id] = ToolCallState(tool_id, started_at_ms=now_ms)
        if update.get("sessionUpdate") == "tool_call":
            state.announced = True
        if state.done:
            return []  # already transcribed once (e.g. flushed at cancel)
        state.apply(update)
        terminal = normalize_tool_status(state.status)
        if terminal is None:
            return []
        return state.events(is_error=terminal == "error")


def _detail(update: Mapping[str, Any]) -> str | None:
    mode = update.get("currentModeId")
    if update.get("sessionUpdate") == "current_mode_update" and isinstance(mode, str):
        return mode
    return None
