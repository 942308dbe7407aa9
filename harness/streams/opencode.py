"""OpenCode dialect of json-event-stream (``opencode run --format json``).

Seed 000 §5.6 and seed 002 §7.3 (normative), ref §2.2 "opencode" (tables),
wire §A.5 (line shapes). Also used by ``byok-opencode`` (seed 000 §5.2).

Every line is ``{type, timestamp, sessionID, part?}``; OpenCode emits a tool
as one finished part, and may repeat a call id across lines (a started and a
completed line), so tool_use and tool_result are each emitted once per
``${sessionID||'session'}:${callID}`` key.

Rules: OPENCODE-SESSION-001, OPENCODE-TEXT-001, OPENCODE-DEDUPE-001,
OPENCODE-ISERROR-001, OPENCODE-USAGE-001, OPENCODE-ERROR-001.
"""

from __future__ import annotations

import math
import re
from typing import Any

from harness.events import Error, Status, ToolResult, Usage, text_delta, tool_result, tool_use
from harness.streams._jsonev import (
    Emit,
    extract_error_message,
    is_finite_number,
    is_number,
    js_truthy,
    nonempty_str,
    nullish,
    pick_usage,
    safe_parse_json,
    stringify_content,
)
from harness.streams.base import js_trim

__all__ = ["OpenCodeHandler", "is_powershell_error_record", "tool_result_of"]

_TERMINAL_STATUSES = ("completed", "error", "failed")
_TOKEN_KEYS = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("reasoning", "thought_tokens"),
)
_CACHE_KEYS = (("read", "cached_read_tokens"), ("write", "cached_write_tokens"))

# ref §2.2 opencode: a PowerShell non-terminating error can exit 0; both canonical
# ErrorRecord fields must be present so ordinary output mentioning "failed" is not one.
_CATEGORY_INFO = re.compile(r"(?:^|\r?\n)\s*\+\s*CategoryInfo\s*:")
_FULLY_QUALIFIED_ERROR_ID = re.compile(r"(?:^|\r?\n)\s*\+\s*FullyQualifiedErrorId\s*:")


def is_powershell_error_record(tool_name: str, output: object) -> bool:
    """True for bash/shell output that carries a PowerShell ErrorRecord (OPENCODE-ISERROR-001)."""
    if tool_name.lower() not in ("bash", "shell") or not isinstance(output, str):
        return False
    # Both patterns need these words; a substring test rules most output out cheaply.
    if "CategoryInfo" not in output or "FullyQualifiedErrorId" not in output:
        return False
    return bool(_CATEGORY_INFO.search(output) and _FULLY_QUALIFIED_ERROR_ID.search(output))


def tool_result_of(tool_name: str, state: dict[str, Any]) -> ToolResult | None:
    """The result of a finished tool part, or None while it is still running.

    OPENCODE-ISERROR-001 (ref §2.2): an error when the status is error/failed,
    or there is an explicit non-empty ``error`` (string or non-empty object),
    or any of ``exit`` / ``exitCode`` / ``metadata.exit`` is a finite number
    other than 0, or a bash/shell output holds a PowerShell ErrorRecord.
    ``error: false`` and ``error: 0`` are not errors. Content is the explicit
    error if any, else the output. The id is filled in by the caller.
    """
    fields = _result_fields(tool_name, state)
    if fields is None:
        return None
    return tool_result(None, fields[0], fields[1])


def _nonzero_exit(code: object) -> bool:
    """``typeof code === 'number' && Number.isFinite(code) && code !== 0``."""
    return code != 0 and is_finite_number(code)


def _result_fields(tool_name: str, state: dict[str, Any]) -> tuple[str, bool] | None:
    """(content, is_error) of a finished tool part, else None (see :func:`tool_result_of`).

    Ordered for the common part (``status: completed``, no ``error``, no exit code,
    string output): each check is the cheapest one that decides its clause.
    """
    status = state.get("status")
    if status == "completed":
        failed = False
    elif isinstance(status, str):
        status = status.lower()
        if status not in _TERMINAL_STATUSES:
            return None
        failed = status != "completed"
    else:
        return None
    error = state.get("error")
    explicit_error = (
        error
        if error is not None
        and ((isinstance(error, str) and js_trim(error)) or (isinstance(error, dict) and error))
        else None
    )
    output = state.get("output")
    if failed or explicit_error is not None:
        is_error = True
    else:
        # Exit codes are usually absent: test for None before the number check.
        code = state.get("exit")
        exit_code = state.get("exitCode")
        metadata = state.get("metadata")
        meta_exit = metadata.get("exit") if isinstance(metadata, dict) else None
        is_error = (
            (code is not None and _nonzero_exit(code))
            or (exit_code is not None and _nonzero_exit(exit_code))
            or (meta_exit is not None and _nonzero_exit(meta_exit))
            or is_powershell_error_record(tool_name, output)
        )
    if explicit_error is not None:
        return stringify_content(explicit_error), is_error
    return (output if type(output) is str else stringify_content(output)), is_error


def _js_template(value: object) -> str:
    """``${value}`` for a truthy JSON value (only ever used to build a dedupe key)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    if is_number(value):
        return str(value)
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list):
        return ",".join("" if v is None else _js_template(v) for v in value)
    return str(value)


class OpenCodeHandler:
    """The opencode state machine (one per run)."""

    __slots__ = ("_emit", "_session_id", "_tool_results", "_tool_uses")

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._tool_uses: set[str] = set()
        self._tool_results: set[str] = set()
        #: The last session id reported on a status event.
        self._session_id: str | None = None

    def handle(self, obj: dict[str, Any]) -> bool:
        # Most frequent kinds first (the kinds are distinct, so order is not semantic).
        kind = obj.get("type")
        if kind == "text":
            # OPENCODE-TEXT-001 (ref §2.2): a finished text part.
            part = obj.get("part")
            text = part.get("text") if isinstance(part, dict) else None
            if type(text) is not str or not text:
                return False
            self._emit(text_delta(text))
            return True

        if kind == "tool_use":
            part = obj.get("part")
            if not isinstance(part, dict):
                return False
            tool = part.get("tool")
            call_id = part.get("callID")
            if not isinstance(tool, str) or not isinstance(call_id, str):
                return False
            self._tool(obj, tool, call_id, part.get("state"))
            return True

        if kind == "step_start":
            # OPENCODE-SESSION-001 (seed 000 §5.6): sessionID is the capture-style
            # resume handle (`run -s <id>` next turn), carried on status.
            session_id = nonempty_str(obj.get("sessionID"))
            self._session_id = session_id or self._session_id
            self._emit(Status(label="running", session_id=session_id))
            return True

        if kind == "step_finish":
            part = obj.get("part")
            if isinstance(part, dict):
                self._step_finish(part)
            return True

        if kind == "error":
            session_id = nonempty_str(obj.get("sessionID"))
            if session_id is not None and session_id != self._session_id:
                # OPENCODE-SESSION-001: a run that fails before its first step names its
                # session only on the error frame (opencode 1.18.33); capture it there too.
                self._session_id = session_id
                self._emit(Status(label="session", session_id=session_id))
            # OPENCODE-ERROR-001 (ref §2.2): OpenCode reports provider failures as an
            # error frame and still exits 0; unwrap the nested message.
            message = extract_error_message(
                nullish(obj.get("error"), obj.get("message")), "OpenCode error"
            )
            self._emit(Error(message=message, raw=stringify_content(obj)))
            return True
        return False

    def finish(self) -> None:
        """Nothing is held: each tool part is complete when it arrives."""

    def _tool(self, obj: dict[str, Any], tool: str, call_id: str, state: object) -> None:
        """OPENCODE-DEDUPE-001 (seed 002 §7.3 ``openCodeToolUses``): once per session:call key."""
        session = obj.get("sessionID")
        if type(session) is str:
            # The common case: a string id ("" is falsy in JS, hence 'session').
            key = f"{session or 'session'}:{call_id}"
        else:
            key = f"{_js_template(session) if js_truthy(session) else 'session'}:{call_id}"
        state_part = state if isinstance(state, dict) else None
        if key not in self._tool_uses:
            self._tool_uses.add(key)
            # ``safeParseJson(input) ?? input``: only a string that parses to
            # non-null JSON is replaced; any other input is kept as it came.
            raw_input = state_part.get("input") if state_part is not None else None
            if isinstance(raw_input, str):
                parsed = safe_parse_json(raw_input)
                tool_input = raw_input if parsed is None else parsed
            else:
                tool_input = raw_input
            self._emit(tool_use(call_id, tool, tool_input))
        if state_part is None or key in self._tool_results:
            return
        fields = _result_fields(tool, state_part)
        if fields is not None:
            self._tool_results.add(key)
            self._emit(tool_result(call_id, fields[0], fields[1]))

    def _step_finish(self, part: dict[str, Any]) -> None:
        """OPENCODE-USAGE-001 (ref §2.2): usage only when at least one token field is a number."""
        tokens = part.get("tokens")
        if not isinstance(tokens, dict):
            return
        usage = pick_usage(tokens, _TOKEN_KEYS)
        cache = tokens.get("cache")
        if isinstance(cache, dict):
            usage.update(pick_usage(cache, _CACHE_KEYS))
        if not usage:
            return
        cost = part.get("cost")
        self._emit(Usage(usage=usage, cost_usd=cost if is_number(cost) else None))
