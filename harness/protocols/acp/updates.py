"""ACP ``session/update`` -> normalized events (ref §2.6, newer ``updates.ts`` table).

:class:`UpdateMapper` is the pure part of the ACP session: it sees one
``params.update`` object at a time and returns events. It keeps three pieces of
state for one prompt turn: whether thinking started, the visible text emitted so
far (for the cumulative-snapshot dedupe), and the tool calls by ``toolCallId``.

Design: docs/design/protocols.md#harness.protocols.acp.updates
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.events import (
    Event,
    Status,
    TextDelta,
    ThinkingDelta,
    ThinkingStart,
    ToolResult,
    ToolUse,
)

__all__ = [
    "IGNORED_UPDATES",
    "RESULT_LIMIT",
    "TRUNCATION_MARK",
    "ToolCallState",
    "UpdateMapper",
    "extract_update_text",
    "format_usage",
    "is_think_only",
    "normalize_tool_status",
    "tool_name",
]

#: ref §2.6: "usage_update, session_info_update, available_commands_update | ignored".
IGNORED_UPDATES = frozenset({"usage_update", "session_info_update", "available_commands_update"})
#: ref §2.6: tool results are "truncated at 8000 chars with `\n…[truncated]`".
RESULT_LIMIT = 8000
TRUNCATION_MARK = "\n…[truncated]"

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


# -- tools ---------------------------------------------------------------------------

_OK_STATUSES = frozenset({"completed", "complete", "succeeded", "success"})
_ERROR_STATUSES = frozenset({"failed", "failure", "error", "cancelled", "canceled"})
_STATUS_STRIP = re.compile(r"[\s_-]")


def normalize_tool_status(status: Any) -> str | None:
    """``"ok"``, ``"error"`` for a terminal status, else ``None`` (still running).

    ref §2.6: terminal = ``completed/complete/succeeded/success`` or
    ``failed/failure/error/cancelled/canceled``, "normalized lowercase with
    ``[\\s_-]`` removed".
    """
    if not isinstance(status, str):
        return None
    key = _STATUS_STRIP.sub("", status.lower())
    if key in _OK_STATUSES:
        return "ok"
    if key in _ERROR_STATUSES:
        return "error"
    return None


#: ref §2.6 ``acpToolName``: a recognized ``kind`` wins.
_KIND_NAMES: dict[str, str] = {
    **dict.fromkeys(("edit", "patch", "replace", "update"), "Edit"),
    **dict.fromkeys(("write", "create", "save"), "Write"),
    "read": "Read",
    **dict.fromkeys(("execute", "bash", "shell", "terminal"), "Bash"),
    **dict.fromkeys(("search", "grep", "glob"), "Grep"),
    **dict.fromkeys(("think", "thought", "reason", "reasoning"), "Think"),
    **dict.fromkeys(("fetch", "web"), "Fetch"),
}
_THINK_WORDS = frozenset({"think", "thinking", "thought", "thoughts", "reason", "reasoning"})
#: Names that would pass for a shell tool; without an ``execute`` kind they are ``Other``.
_BASH_LIKE = frozenset(
    {"bash", "shell", "sh", "terminal", "execute", "exec", "command", "run_command"}
)
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")
_TITLE_VERBS: dict[str, str] = {
    **dict.fromkeys(("write", "create", "save"), "Write"),
    **dict.fromkeys(("edit", "patch", "replace", "update"), "Edit"),
    **dict.fromkeys(("read", "view"), "Read"),
    **dict.fromkeys(("search", "grep", "glob", "find"), "Grep"),
    "fetch": "Fetch",
}


def _squash(text: str) -> str:
    return _STATUS_STRIP.sub("", text.lower())


def _title_case(kind: str) -> str:
    parts = [p for p in re.split(r"[\s_-]+", kind) if p]
    return "".join(p[:1].upper() + p[1:].lower() for p in parts) or "Other"


def _write_like(name: str) -> str | None:
    """ref §2.6: "write-like labels upgrade to Write/Edit"."""
    words = {w.lower() for w in _WORDS.findall(name)}
    if "write" in words:
        return "Write"
    if words & {"edit", "replace", "patch"}:
        return "Edit"
    return None


def tool_name(kind: Any, name: Any, title: Any) -> str:
    """The transcript name of an ACP tool call (rule ACP-UPDATE-TOOL-002).

    ref §2.6: a recognized ``kind`` wins (edit->Edit, write->Write, read->Read,
    execute->Bash, search->Grep, think->Think, fetch->Fetch); other kinds are
    title-cased (``other`` says nothing and falls through); else an identifier-like
    ``name`` (a Bash-like name without an execute kind becomes ``Other``, a
    write-like one is upgraded to Write/Edit); else the title's leading verb; else
    ``Other``.
    """
    if isinstance(kind, str) and kind.strip():
        key = kind.strip().lower()
        if key in _KIND_NAMES:
            return _KIND_NAMES[key]
        if key != "other":
            return _title_case(key)
    if isinstance(name, str) and _IDENT.match(name.strip()):
        ident = name.strip()
        if ident.lower() in _BASH_LIKE:
            return "Other"
        return _write_like(ident) or ident
    if isinstance(title, str):
        words = _WORDS.findall(title)
        if words and words[0].lower() in _TITLE_VERBS:
            return _TITLE_VERBS[words[0].lower()]
    return "Other"


def is_think_only(kind: Any, name: Any, title: Any) -> bool:
    """ref §2.6: "kind think/thought/reason/reasoning, or such name/title" (never
    transcribed, rule ACP-UPDATE-TOOL-004)."""
    for value in (kind, name, title):
        if isinstance(value, str) and _squash(value) in _THINK_WORDS:
            return True
    return False


_RAW_PATH_KEYS = ("path", "file_path", "filename", "filePath")
_PATH_TOKEN = re.compile(r"^(?:[\w.~-]*[/\\][\w./\\~-]*|[\w.-]+\.[A-Za-z0-9]{1,10})$")
_TOKEN_STRIP = "`'\"()[]{}<>,;:"


def _title_path(title: str) -> str | None:
    for word in title.split():
        token = word.strip(_TOKEN_STRIP).rstrip(".")
        if token and "://" not in token and _PATH_TOKEN.match(token):
            return token
    return None


@dataclass
class ToolCallState:
    """What the updates of one ``toolCallId`` said so far (fields are patches)."""

    tool_call_id: str
    started_at_ms: float
    kind: str | None = None
    name: str | None = None
    title: str | None = None
    raw_input: Any = None
    content: list[Any] = field(default_factory=list)
    raw_output: Any = None
    has_raw_output: bool = False
    status: str | None = None
    path: str | None = None
    path_rank: int = 0
    #: Transcribed (or deliberately not, when think-only): later updates are ignored.
    done: bool = False
    #: A ``tool_call`` announced it (an id first seen in a ``tool_call_update`` is unknown).
    announced: bool = False

    def apply(self, update: Mapping[str, Any]) -> None:
        """Merge one ``tool_call``/``tool_call_update`` (ACP: present fields replace)."""
        for attr in ("kind", "name", "title", "status"):
            value = update.get(attr)
            if isinstance(value, str):
                setattr(self, attr, value)
        if "rawInput" in update and update["rawInput"] is not None:
            raw = update["rawInput"]
            if isinstance(raw, dict) and isinstance(self.raw_input, dict):
                self.raw_input = {**self.raw_input, **raw}  # ref §2.6 "rawInput merged"
            else:
                self.raw_input = raw
        if isinstance(update.get("content"), list):
            self.content = list(update["content"])
        if "rawOutput" in update and update["rawOutput"] is not None:
            self.raw_output = update["rawOutput"]
            self.has_raw_output = True
        self._paths(update)

    def _offer_path(self, path: Any, rank: int) -> None:
        if isinstance(path, str) and path.strip() and rank > self.path_rank:
            self.path = path.strip()
            self.path_rank = rank

    def _paths(self, update: Mapping[str, Any]) -> None:
        # ref §2.6 "best path": locations[].path / content[].path rank 3 >
        # rawInput.{path,file_path,filename,filePath} rank 2 > path-like title token
        # rank 1; never from toolCallId.
        for key in ("locations", "content"):
            items = update.get(key)
            if isinstance(items, list):
                for item in items:
                    if isinstance(item, dict):
                        self._offer_path(item.get("path"), 3)
        if isinstance(self.raw_input, dict):
            for key in _RAW_PATH_KEYS:
                self._offer_path(self.raw_input.get(key), 2)
        if isinstance(self.title, str):
            self._offer_path(_title_path(self.title), 1)

    @property
    def name_for_transcript(self) -> str:
        return tool_name(self.kind, self.name, self.title)

    @property
    def think_only(self) -> bool:
        return is_think_only(self.kind, self.name, self.title)

    def input(self) -> Any:
        """ref §2.6: "Input = rawInput + file_path" (a non-object rawInput is wrapped)."""
        raw = self.raw_input
        out: dict[str, Any]
        if raw is None:
            out = {}
        elif isinstance(raw, dict):
            out = dict(raw)
        else:
            out = {"raw_input": raw}
        if self.path is not None and "file_path" not in out:
            out["file_path"] = self.path
        return out

    def result_text(self) -> str:
        """ref §2.6: "Result = rawOutput (string or JSON) else content text/diff"."""
        if self.has_raw_output:
            raw = self.raw_output
            text = raw if isinstance(raw, str) else _dumps(raw)
        else:
            text = "\n".join(p for p in (_content_text(c) for c in self.content) if p)
        if len(text) > RESULT_LIMIT:
            text = text[:RESULT_LIMIT] + TRUNCATION_MARK
        return text

    def events(self, *, is_error: bool) -> list[Event]:
        self.done = True
        if self.think_only:
            return []
        return [
            ToolUse(
                id=self.tool_call_id,
                name=self.name_for_transcript,
                input=self.input(),
                started_at_ms=self.started_at_ms,
            ),
            ToolResult(
                tool_use_id=self.tool_call_id, content=self.result_text(), is_error=is_error
            ),
        ]


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _content_text(item: Any) -> str:
    if not isinstance(item, dict):
        return ""
    kind = item.get("type")
    if kind == "diff":
        old = item.get("oldText")
        new = item.get("newText")
        old_text = old if isinstance(old, str) else ""
        new_text = new if isinstance(new, str) else ""
        return f"--- old\n{old_text}\n+++ new\n{new_text}"
    if kind == "content":
        block = item.get("content")
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            return str(block["text"])
    return ""


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
