"""One ACP tool call: its updates merged, its name, path, input and result for the transcript.

ref §2.6 newer ``updates.ts``: a ``tool_call`` and its ``tool_call_update`` patches are
merged per ``toolCallId`` and transcribed once, as a ``ToolUse`` and its ``ToolResult``,
when a terminal status arrives (rules ACP-UPDATE-TOOL-001..004).

Design: docs/design/protocols.md#harness.protocols.acp.updates
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.events import Event, ToolResult, ToolUse

__all__ = [
    "RESULT_LIMIT",
    "TRUNCATION_MARK",
    "ToolCallState",
    "is_think_only",
    "normalize_tool_status",
    "tool_name",
]

#: ref §2.6: tool results are "truncated at 8000 chars with `\n…[truncated]`".
RESULT_LIMIT = 8000
TRUNCATION_MARK = "\n…[truncated]"


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
