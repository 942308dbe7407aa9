"""``qoder-stream-json``: Qoder CLI's ``-p --output-format stream-json`` JSONL.

Design: docs/design/streams.md#harness.streams.qoder
"""

from __future__ import annotations

import math
from typing import Any

from harness.events import (
    Error,
    Event,
    JsonValue,
    Status,
    TextDelta,
    ThinkingDelta,
    ThinkingStart,
    Usage,
)
from harness.streams import UnknownStreamFormatError
from harness.streams.base import JsonlStreamParser

__all__ = ["QoderStreamParser", "create"]


class QoderStreamParser(JsonlStreamParser):
    """One Qoder run: stdout bytes in, normalized events out."""

    def __init__(self) -> None:
        super().__init__()
        #: ref §2.4 (QODER-MAP-001): ``thinking_start`` once per handler (run).
        self._thinking_started = False

    def handle(self, obj: dict[str, Any], line: str) -> bool:
        kind = obj.get("type")
        if kind == "system" and obj.get("subtype") == "init":
            # ref §2.4 (QODER-INIT-001); Status.cli_version is upstream's qodercliVersion.
            self.emit(
                Status(
                    label="initializing",
                    model=_str(obj.get("model")),
                    session_id=_str(obj.get("session_id")),
                    cli_version=_str(obj.get("qodercli_version")),
                )
            )
            return True
        message = obj.get("message")
        if kind == "assistant" and isinstance(message, (dict, list)):
            return self._assistant(obj, message, line)
        if kind == "result":
            self._result(obj, line)
            return True
        # seed 000 §5.8 / ref §2.4 (QODER-RAW-001): unknown records stay raw.
        return False

    def _assistant(
        self, obj: dict[str, Any], message: dict[str, Any] | list[Any], line: str
    ) -> bool:
        events: list[Event] = []
        body: JsonValue = message.get("content") if isinstance(message, dict) else None
        emitted_text = False
        for block in body if isinstance(body, list) else ():
            if not isinstance(block, dict):
                continue
            # ref §2.4 (QODER-MAP-001): any block with a non-empty `text` string is text.
            text = block.get("text")
            if isinstance(text, str) and text:
                emitted_text = True
                events.append(TextDelta(delta=text))
                continue
            thinking = block.get("thinking")
            if block.get("type") == "thinking" and isinstance(thinking, str) and thinking:
                if not self._thinking_started:
                    self._thinking_started = True
                    events.append(ThinkingStart())
                events.append(ThinkingDelta(delta=thinking))
        # ref §2.4 (QODER-MAP-001): a plain-string content is the text.
        if not emitted_text and isinstance(body, str):
            events.append(TextDelta(delta=body))
            emitted_text = True
        # seed 000 §5.8 / ref §2.4 (QODER-ERROR-001): an error without text is typed.
        error = obj.get("error")
        if _js_truthy(error) and not emitted_text:
            events.append(Error(message=_assistant_error_message(error), raw=line))
        for event in events:
            self.emit(event)
        # QODER-RAW-001: a message that maps to nothing is kept as raw by the caller.
        return bool(events)

    def _result(self, obj: dict[str, Any], line: str) -> None:
        # seed 000 §5.8 / ref §2.4 (QODER-RESULT-001).
        usage = obj.get("usage")
        cost = obj.get("total_cost_usd")
        duration = obj.get("duration_ms")
        stop_reason = obj.get("stop_reason")
        is_error = _js_truthy(obj.get("is_error"))
        self.emit(
            Usage(
                usage=usage if isinstance(usage, dict) else None,
                model_usage=obj.get("modelUsage"),
                cost_usd=cost if _is_number(cost) else None,
                duration_ms=duration if _is_number(duration) else None,
                stop_reason=stop_reason if isinstance(stop_reason, str) else None,
                is_error=is_error,
            )
        )
        # ref §2.4 newer generation (QODER-RESULT-ERROR-001): a failed result is an error.
        if is_error:
            self.emit(Error(message=_result_error_message(obj), raw=line))


def _str(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None


def _is_number(value: JsonValue) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _js_truthy(value: JsonValue) -> bool:
    """JavaScript ``Boolean(value)`` for a JSON value: ``{}`` and ``[]`` are true."""
    if value is None or value is False:
        return False
    if isinstance(value, int):
        return value != 0
    if isinstance(value, float):
        return not math.isnan(value) and value != 0
    if isinstance(value, str):
        return value != ""
    return True


def _assistant_error_message(error: JsonValue) -> str:
    # ref §2.4: error.message (a string, even empty) > non-empty error string > fallback.
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        message: str = error["message"]
        return message
    if isinstance(error, str) and error:
        return error
    return "Unknown Qoder error"


def _result_error_message(obj: dict[str, Any]) -> str:
    # ref §2.4: error string > error.message > message > 'Qoder run failed: <stop_reason>'.
    error = obj.get("error")
    if isinstance(error, str) and error:
        return error
    if isinstance(error, dict):
        nested = error.get("message")
        if isinstance(nested, str) and nested:
            return nested
    message = obj.get("message")
    if isinstance(message, str) and message:
        return message
    stop_reason = obj.get("stop_reason")
    if isinstance(stop_reason, str) and stop_reason:
        return f"Qoder run failed: {stop_reason}"
    return "Qoder run failed"


def create(dialect: str | None) -> QoderStreamParser:
    """Factory for :func:`harness.formats.create_parser`.

    ``qoder-stream-json`` has a single dialect, so a def names no ``event_parser``
    (upstream ignores ``eventParser`` for this format); any other value is a
    definition error.
    """
    if dialect is not None:
        raise UnknownStreamFormatError(
            f"stream format 'qoder-stream-json' takes no event parser, got {dialect!r}"
        )
    return QoderStreamParser()
