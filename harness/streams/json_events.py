"""``json-event-stream``: one JSONL parser, five dialects (seed 002 §7.3).

Rules: JSONEV-CHUNK-001, JSONEV-ERRMSG-001, JSONEV-ROBUST-001.
Design: docs/design/streams.md#harness.streams.json_events
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.streams import UnknownStreamFormatError
from harness.streams._jsonev import (
    DialectHandler,
    Emit,
    extract_error_message,
    safe_parse_json,
    stringify_content,
)
from harness.streams.base import JsonlStreamParser
from harness.streams.codex_items import CodexEventMapper
from harness.streams.cursor import CursorHandler
from harness.streams.decoder import DEFAULT_MAX_LINE_BYTES
from harness.streams.gemini import GeminiHandler
from harness.streams.kimi import KimiHandler
from harness.streams.opencode import OpenCodeHandler

__all__ = [
    "DIALECTS",
    "JsonEventStreamParser",
    "create",
    "extract_error_message",
    "safe_parse_json",
    "stringify_content",
]


_HANDLERS: dict[str, Callable[[Emit], DialectHandler]] = {
    "codex": CodexEventMapper,
    "cursor-agent": CursorHandler,
    "opencode": OpenCodeHandler,
    "gemini": GeminiHandler,
    "kimi": KimiHandler,
}

#: The ``event_parser`` values this format accepts (seed 002 §7.3: five dialects).
DIALECTS: frozenset[str] = frozenset({"codex", "cursor-agent", "opencode", "gemini", "kimi"})


class JsonEventStreamParser(JsonlStreamParser):
    """Sans-IO parser for one run of a json-event-stream CLI in one dialect."""

    def __init__(self, dialect: str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        factory = _HANDLERS.get(dialect)
        if factory is None:
            raise _unknown_dialect(dialect)
        super().__init__(max_line_bytes=max_line_bytes)
        self.dialect = dialect
        self._handler = factory(self.emit)
        self._handle = self._handler.handle

    def handle(self, obj: dict[str, Any], line: str) -> bool:
        # JSONEV-RAW-001: False -> the base class emits Raw(line).
        return self._handle(obj)

    def on_finish(self) -> None:
        self._handler.finish()


def _unknown_dialect(dialect: object) -> UnknownStreamFormatError:
    # JSONEV-DIALECT-001 (seed 002 §7.3): the dialect must name one of the five handlers.
    return UnknownStreamFormatError(
        f"json-event-stream has no dialect {dialect!r}; "
        f"event_parser must be one of {sorted(DIALECTS)} [JSONEV-DIALECT-001]"
    )


def create(dialect: str | None) -> JsonEventStreamParser:
    """A fresh parser for ``dialect``; raises ``ValueError`` for an unknown or missing one."""
    if dialect is None or dialect not in DIALECTS:
        raise _unknown_dialect(dialect)
    return JsonEventStreamParser(dialect)
