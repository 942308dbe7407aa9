"""``copilot-stream-json``: GitHub Copilot CLI's ``--output-format json`` JSONL.

Seed 000 §5.7: Copilot emits JSONL "with the same expressive shape as Claude
Code's stream-json" and is mapped onto the same UI events. ref §2.3 gives the
wire: the ``type`` is dotted and the payload sits under ``data``, except the
final ``result``, whose fields are top level.

Rules: COPILOT-RAW-001.
Design: docs/design/streams.md#harness.streams.copilot
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from harness.events import (
    Error,
    JsonValue,
    Status,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    Usage,
)
from harness.streams import UnknownStreamFormatError
from harness.streams.base import JsonlStreamParser

__all__ = ["CopilotStreamParser", "create", "js_json_stringify", "stringify_result"]


class CopilotStreamParser(JsonlStreamParser):
    """One Copilot run: stdout bytes in, normalized events out."""

    def handle(self, obj: dict[str, Any], line: str) -> bool:
        kind = obj.get("type")
        if not isinstance(kind, str):
            return False
        if kind == "result":
            return self._result(obj)
        data = obj.get("data")
        payload: dict[str, Any] = data if isinstance(data, dict) else {}
        if kind == "session.tools_updated":
            # ref §2.3 (COPILOT-STATUS-001): status only when data.model is truthy.
            model = payload.get("model")
            if not isinstance(model, str) or not model:
                return False
            self.emit(Status(label="initializing", model=model))
            return True
        if kind == "assistant.turn_start":
            # ref §2.3 (COPILOT-STATUS-001); ref §1.3 lists copilot under `streaming`.
            self.emit(Status(label="streaming"))
            return True
        if kind in ("assistant.reasoning_delta", "assistant.message_delta"):
            # ref §2.3 (COPILOT-MAP-001): data.deltaContent, forwarded even when empty.
            delta = payload.get("deltaContent")
            if not isinstance(delta, str):
                return False
            if kind == "assistant.reasoning_delta":
                self.emit(ThinkingDelta(delta=delta))
            else:
                self.emit(TextDelta(delta=delta))
            return True
        if kind == "session.error":
            # COPILOT-ERROR-001: copilot 1.0.102 reports a model call that failed for good
            # (after its own retries) here, then `result{exitCode: 1}`
            # (recordings/real/copilot/api_error.jsonl). Upstream leaves it to the exit code.
            # Not terminal: the stream goes on to `result`, which ends it.
            message = payload.get("message")
            if not isinstance(message, str) or not message:
                return False
            error_type = payload.get("errorType")
            code = error_type if isinstance(error_type, str) and error_type else None
            self.emit(Error(message=message, code=code, terminal=False))
            return True
        if kind == "tool.execution_start":
            return self._tool_start(payload)
        if kind == "tool.execution_complete":
            return self._tool_complete(payload)
        return False

    def _tool_start(self, data: dict[str, Any]) -> bool:
        # ref §2.3 (COPILOT-TOOL-001): id/name/input default to null when absent.
        tool_id = data.get("toolCallId")
        name = data.get("toolName")
        if not _str_or_none(tool_id) or not _str_or_none(name):
            return False
        self.emit(ToolUse(id=tool_id, name=name, input=data.get("arguments")))
        return True

    def _tool_complete(self, data: dict[str, Any]) -> bool:
        # ref §2.3 (COPILOT-TOOL-001): is_error only for an explicit success: false.
        tool_id = data.get("toolCallId")
        if not _str_or_none(tool_id):
            return False
        self.emit(
            ToolResult(
                tool_use_id=tool_id,
                content=stringify_result(data.get("result")),
                is_error=data.get("success") is False,
            )
        )
        return True

    def _result(self, obj: dict[str, Any]) -> bool:
        # ref §2.3 (COPILOT-RESULT-001): `result` is top level, not under `data`.
        # completed when success is true OR exitCode is 0 (a result without a
        # numeric exitCode but success: true is not an error).
        usage = obj.get("usage")
        session = obj.get("sessionId")
        if isinstance(session, str) and session:
            # COPILOT-SESSION-001 (design §Normalized events): the id copilot prints on its
            # result, the only line that carries it (upstream dropped it).
            self.emit(Status(label="session", session_id=session))
        completed = obj.get("success") is True or _is_js_zero(obj.get("exitCode"))
        duration = usage.get("sessionDurationMs") if isinstance(usage, dict) else None
        self.emit(
            Usage(
                usage=usage if isinstance(usage, dict) else None,
                stop_reason="completed" if completed else "error",
                duration_ms=duration if _is_number(duration) else None,
            )
        )
        return True


def _str_or_none(value: object) -> bool:
    return value is None or isinstance(value, str)


def _is_number(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _is_js_zero(value: object) -> bool:
    return _is_number(value) and value == 0


def stringify_result(result: JsonValue) -> str:
    """A tool result as text (ref §2.3 ``stringifyResult``, COPILOT-TOOL-001).

    ``null`` -> ``''``; a string as is; an object's ``content`` string, else its
    ``detailedContent`` string, else the object as JSON; any other value as JSON.
    """
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        for key in ("content", "detailedContent"):
            text = result.get(key)
            if isinstance(text, str):
                return text
    return js_json_stringify(result)


def js_json_stringify(value: JsonValue) -> str:
    """``JSON.stringify(value)`` for a value produced by ``json.loads``.

    Matches JavaScript byte for byte so ``tool_result`` content equals
    upstream's: compact separators; integer-like keys first in ascending order;
    numbers as JS prints them (``1.0`` -> ``1``, ``1e-7`` -> ``1e-7``,
    integers beyond 2**53 rounded to a double); NaN and infinities -> ``null``;
    lone surrogates escaped as ``\\udxxx``.
    """
    parts: list[str] = []
    _stringify_into(value, parts)
    return "".join(parts)


#: JSON.stringify's short escapes (ECMA-262 QuoteJSONString).
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _js_string(text: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _array_index(key: str) -> int | None:
    # ECMAScript array index: canonical decimal in [0, 2**32 - 2].
    if not key.isascii() or not key.isdigit() or (len(key) > 1 and key[0] == "0"):
        return None
    number = int(key)
    return number if number <= 2**32 - 2 else None


def _js_number(value: float) -> str:
    """ECMAScript ``Number::toString`` for a finite double."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple, exponent = Decimal(repr(abs(value))).as_tuple()[1:]
    if not isinstance(exponent, int):  # NaN / infinity: JSON.stringify gives null
        return "null"
    digits = "".join(map(str, digits_tuple)).lstrip("0")
    trailing = len(digits) - len(digits.rstrip("0"))
    digits = digits.rstrip("0")
    exponent += trailing
    k = len(digits)
    n = k + exponent
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def _stringify_into(value: JsonValue, out: list[str]) -> None:
    # Iterative (an explicit stack), so nesting depth never meets the recursion limit.
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        literal, item = stack.pop()
        if literal:
            out.append(item)
        elif item is None:
            out.append("null")
        elif item is True:
            out.append("true")
        elif item is False:
            out.append("false")
        elif isinstance(item, int):
            out.append(str(item) if abs(item) <= 2**53 else _js_double(item))
        elif isinstance(item, float):
            out.append(_js_number(item) if math.isfinite(item) else "null")
        elif isinstance(item, str):
            out.append(_js_string(item))
        elif isinstance(item, list):
            seq: list[tuple[bool, Any]] = [(True, "[")]
            for index, element in enumerate(item):
                if index:
                    seq.append((True, ","))
                seq.append((False, element))
            seq.append((True, "]"))
            stack.extend(reversed(seq))
        elif isinstance(item, dict):
            indexed = sorted((idx, key) for key in item if (idx := _array_index(key)) is not None)
            keys = [key for _, key in indexed]
            keys += [key for key in item if _array_index(key) is None]
            seq = [(True, "{")]
            for index, key in enumerate(keys):
                if index:
                    seq.append((True, ","))
                seq.append((True, _js_string(key) + ":"))
                seq.append((False, item[key]))
            seq.append((True, "}"))
            stack.extend(reversed(seq))
        else:
            out.append(_js_string(str(item)))


def _js_double(value: int) -> str:
    # JSON.parse reads every number as a double; one beyond its range is Infinity.
    try:
        return _js_number(float(value))
    except OverflowError:
        return "null"


def create(dialect: str | None) -> CopilotStreamParser:
    """Factory for :func:`harness.formats.create_parser`.

    ``copilot-stream-json`` has a single dialect, so a def names no ``event_parser``
    (upstream ignores ``eventParser`` for this format); any other value is a
    definition error.
    """
    if dialect is not None:
        raise UnknownStreamFormatError(
            f"stream format 'copilot-stream-json' takes no event parser, got {dialect!r}"
        )
    return CopilotStreamParser()
