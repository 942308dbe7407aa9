"""Gemini CLI dialect of json-event-stream (``gemini -p … --output-format stream-json``).

Seed 002 §7.3 (normative: the gemini branch and its artifact-text state in the
shared ``ParserState``), ref §2.2 "gemini" (tables), ref §2.1.6 (the echo
problem), wire §A.5 (line shapes). The upstream adapter was retired later
(seed 000 §3), but the dialect stays selectable by ``event_parser``.

Artifact-echo suppression is the SIMPLE form (ref §2.2): after a file-writing
tool, the next ``<artifact>…</artifact>`` block in assistant text is dropped
whatever its content; prose without a pending ``<art…`` candidate disarms.
This is local to this module (the claude guard is a separate, richer one).

Rules: GEMINI-INIT-001, GEMINI-SESSION-001, GEMINI-TEXT-001, GEMINI-TOOL-001, GEMINI-TODO-001,
GEMINI-SEVERITY-001, GEMINI-RESULT-001, GEMINI-ARTIFACT-001.
"""

from __future__ import annotations

import re
from typing import Any

from harness.events import Error, Status, TextDelta, ToolResult, ToolUse, Usage
from harness.streams._jsonev import (
    Emit,
    extract_error_message,
    is_number,
    nullish,
    pick_usage,
    safe_parse_json,
    stringify_content,
    todo_write_input_from_parsed_value,
)

__all__ = ["ArtifactEchoFilter", "GeminiHandler", "is_file_write_tool_use"]

_OPEN_TAG = "<artifact"
_CLOSE_TAG = "</artifact>"
_WRITE_TOOLS = frozenset({"write_file", "write", "replace", "edit"})
# JS `$` (no m flag) is end of string only; Python's `$` also matches before a final
# newline, hence `\Z`.
_WEB_SOURCE_PATH = re.compile(r"\.(?:html|htm|css|js|jsx|ts|tsx|md)\Z", re.IGNORECASE)

_USAGE_KEYS = (
    ("input_tokens", "input_tokens"),
    ("output_tokens", "output_tokens"),
    ("cached", "cached_read_tokens"),
)


def is_file_write_tool_use(tool_name: str, tool_input: object) -> bool:
    """A write tool that arms echo suppression (GEMINI-ARTIFACT-001, ref §2.2).

    ``write_file|write|replace|edit`` with a web-source path (``file_path`` or
    ``path``), or with a string ``content`` / ``new_string``.
    """
    if not isinstance(tool_input, dict) or tool_name not in _WRITE_TOOLS:
        return False
    path = tool_input.get("file_path")
    if not isinstance(path, str):
        path = tool_input.get("path")
    if isinstance(path, str) and _WEB_SOURCE_PATH.search(path):
        return True
    return isinstance(tool_input.get("content"), str) or isinstance(
        tool_input.get("new_string"), str
    )


def _open_tag_prefix_length(text: str) -> int:
    """Length of the longest proper prefix of ``<artifact`` that ``text`` ends with."""
    for length in range(min(len(_OPEN_TAG) - 1, len(text)), 0, -1):
        if _OPEN_TAG.startswith(text[-length:]):
            return length
    return 0


class ArtifactEchoFilter:
    """Drops the first ``<artifact>`` block after a write tool (simple form, ref §2.2).

    Works on whole assistant messages; state carries across messages, so an
    open tag split across two messages (``<art`` + ``ifact …>``) is still
    recognized while armed.
    """

    __slots__ = ("_armed", "_candidate", "_inside")

    def __init__(self) -> None:
        #: A write tool ran; the next artifact block is an echo.
        self._armed = False
        #: Inside the echoed block: drop until the close tag.
        self._inside = False
        #: Held tail that may be the start of ``<artifact``.
        self._candidate = ""

    def arm(self) -> None:
        self._armed = True

    def strip(self, text: str) -> str:
        """The part of ``text`` to show now (possibly empty)."""
        out: list[str] = []
        current = text
        while True:
            if not self._armed and not self._inside and not self._candidate:
                out.append(current)
                break
            current = self._candidate + current
            self._candidate = ""
            if self._inside:
                close = current.find(_CLOSE_TAG)
                if close == -1:
                    break
                self._inside = False
                self._armed = False
                current = current[close + len(_CLOSE_TAG) :]
                continue
            open_at = current.find(_OPEN_TAG)
            if open_at == -1:
                held = _open_tag_prefix_length(current)
                if self._armed and held:
                    self._candidate = current[-held:]
                    out.append(current[:-held])
                else:
                    # Plain prose with no pending candidate disarms.
                    self._armed = False
                    out.append(current)
                break
            self._inside = True
            self._armed = False
            out.append(current[:open_at])
            current = current[open_at:]
        return "".join(out)

    def flush(self) -> str:
        """Release a held candidate (before a non-text frame, and at end of output)."""
        held = self._candidate
        if held:
            self._candidate = ""
            self._armed = False
        return held


class GeminiHandler:
    """The gemini state machine (one per run)."""

    __slots__ = ("_echo", "_emit")

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._echo = ArtifactEchoFilter()

    def handle(self, obj: dict[str, Any]) -> bool:
        kind = obj.get("type")
        content = obj.get("content")
        is_assistant_text = (
            kind == "message"
            and obj.get("role") == "assistant"
            and isinstance(content, str)
            and content != ""
        )
        if is_assistant_text:
            # GEMINI-TEXT-001 (ref §2.2): assistant text, after echo stripping.
            delta = self._echo.strip(content)  # type: ignore[arg-type]
            if delta:
                self._emit(TextDelta(delta=delta))
            return True
        # Any other frame first releases held artifact-candidate text (ref §2.2).
        self._flush_held()

        if kind == "init":
            # GEMINI-INIT-001 (ref §1.3): init -> status initializing with the model.
            # GEMINI-SESSION-001 (design §Normalized events): the session id the CLI prints
            # there rides on it (upstream dropped it; gemini 0.61 prints one).
            model = obj.get("model")
            session = obj.get("session_id")
            self._emit(
                Status(
                    label="initializing",
                    model=model if isinstance(model, str) else None,
                    session_id=session if isinstance(session, str) and session else None,
                )
            )
            return True
        if kind == "message" and obj.get("role") == "user":
            # GEMINI-TEXT-001: the echoed user prompt is consumed.
            return True
        if kind == "tool_use":
            return self._tool_use(obj)
        if kind == "tool_result":
            return self._tool_result(obj)
        if kind == "error":
            self._error(obj)
            return True
        if kind == "result":
            self._result(obj)
            return True
        return False

    def finish(self) -> None:
        self._flush_held()

    def _flush_held(self) -> None:
        held = self._echo.flush()
        if held:
            self._emit(TextDelta(delta=held))

    def _tool_use(self, obj: dict[str, Any]) -> bool:
        """GEMINI-TOOL-001 / GEMINI-TODO-001 (ref §2.2)."""
        tool_id = obj.get("tool_id")
        tool_name = obj.get("tool_name")
        if not isinstance(tool_id, str) or not isinstance(tool_name, str):
            return False
        parameters = obj.get("parameters")
        tool_input = nullish(safe_parse_json(parameters), parameters)
        if tool_name == "write_todos":
            todo_input = todo_write_input_from_parsed_value(tool_input)
            if todo_input is not None:
                # The plan becomes a TodoWrite snapshot under a derived id.
                self._emit(ToolUse(id=f"{tool_id}:todo-native", name="TodoWrite", input=todo_input))
                return True
        if is_file_write_tool_use(tool_name, tool_input):
            self._echo.arm()
        self._emit(ToolUse(id=tool_id, name=tool_name, input=tool_input))
        return True

    def _tool_result(self, obj: dict[str, Any]) -> bool:
        """GEMINI-TOOL-001: content is the output, else the error message; error by status/error."""
        tool_id = obj.get("tool_id")
        if not isinstance(tool_id, str):
            return False
        error = obj.get("error")
        error = error if isinstance(error, dict) else None
        error_message = extract_error_message(error, "") if error is not None else ""
        output = obj.get("output")
        content = output if isinstance(output, str) else error_message or stringify_content(output)
        self._emit(
            ToolResult(
                tool_use_id=tool_id,
                content=content,
                is_error=obj.get("status") == "error" or error is not None,
            )
        )
        return True

    def _error(self, obj: dict[str, Any]) -> None:
        """GEMINI-SEVERITY-001 (ref §1.3, §2.2): severity warning is a status, else an error."""
        severity = obj.get("severity")
        warning = isinstance(severity, str) and severity.lower() == "warning"
        message = extract_error_message(
            nullish(obj.get("message"), obj.get("error")),
            "Gemini CLI warning" if warning else "Gemini CLI error",
        )
        if warning:
            self._emit(Status(label="warning", detail=message))
        else:
            self._emit(Error(message=message, raw=stringify_content(obj)))

    def _result(self, obj: dict[str, Any]) -> None:
        """GEMINI-RESULT-001 (ref §2.2): an error result is an error, else usage from stats."""
        if obj.get("status") == "error" or isinstance(obj.get("error"), dict):
            self._emit(
                Error(
                    message=extract_error_message(obj.get("error"), "Gemini CLI error"),
                    raw=stringify_content(obj),
                )
            )
            return
        stats = obj.get("stats")
        if not isinstance(stats, dict):
            return
        duration = stats.get("duration_ms")
        self._emit(
            Usage(
                usage=pick_usage(stats, _USAGE_KEYS),
                duration_ms=duration if is_number(duration) else None,
            )
        )
