"""The parser interface and the JSONL base every one-way stream parser builds on.

A stream parser is a sans-IO state machine: :meth:`StreamParser.feed` takes
stdout bytes in any split and returns the events completed so far;
:meth:`StreamParser.finish` is called once at end of output. Neither raises on
any input (hypothesis proves it per parser).
"""

from __future__ import annotations

from typing import Any, Protocol

from harness.events import Event, Raw
from harness.streams.decoder import (
    DEFAULT_HEAD_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    JSON_READER,
    SHALLOW_TEXT,
    DecodedItem,
    Line,
    LineDecoder,
    surrogate_escape_search,
    vet_json,
)

__all__ = ["JsonlStreamParser", "StreamParser", "UnknownStreamFormatError", "js_trim"]


class UnknownStreamFormatError(ValueError):
    """A def names a stream format or dialect the engine has no parser for."""


#: Characters JavaScript's ``String.prototype.trim`` removes that matter on the wire.
_TRIM = (
    " \t\n\r\x0b\x0c\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """Trim like JS ``String.prototype.trim`` (upstream parsers trim each line)."""
    return text.strip(_TRIM)


class StreamParser(Protocol):
    def feed(self, data: bytes) -> list[Event]: ...

    def finish(self) -> list[Event]: ...


class JsonlStreamParser:
    """Line framing + ``json.loads`` + a per-format object handler.

    Subclasses implement :meth:`handle` (return ``True`` when the object was
    claimed) and may override :meth:`on_finish`. Lines that are not JSON
    objects, and objects no handler claims, become :class:`Raw` events
    (design principle 3). Oversize lines become ``Raw`` with
    ``truncated_bytes`` (rule STREAM-FRAME-OVERSIZE).
    """

    def __init__(self, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._decoder = LineDecoder(max_line_bytes)
        self._out: list[Event] = []

    # -- public -------------------------------------------------------------

    def feed(self, data: bytes) -> list[Event]:
        items = self._decoder.feed(data)
        if not items and not self._out:
            return []  # no line completed: the common case of small feeds
        for item in items:
            self._item(item)
        return self._take()

    def finish(self) -> list[Event]:
        for item in self._decoder.finish():
            self._item(item)
        self.on_finish()
        return self._take()

    # -- for subclasses -----------------------------------------------------

    def emit(self, event: Event) -> None:
        self._out.append(event)

    def emit_raw(self, line: str, size: int) -> None:
        """A raw event, bounded to 64 KiB of text like upstream's raw budget (ref §2.0)."""
        if size > DEFAULT_HEAD_BYTES:
            head = line.encode("utf-8")[:DEFAULT_HEAD_BYTES].decode("utf-8", "ignore")
            self.emit(Raw(line=head, truncated_bytes=size))
        else:
            self.emit(Raw(line=line))

    def handle(self, obj: dict[str, Any], line: str) -> bool:
        """Map one JSON object to events via :meth:`emit`; return False if unclaimed."""
        return False

    def handle_non_object(self, value: Any, line: str) -> bool:
        """Valid JSON that is not an object; unclaimed by default (-> raw)."""
        return False

    def on_finish(self) -> None:
        """End-of-output work (flush held text, close open tools)."""

    # -- internals ----------------------------------------------------------

    def _take(self) -> list[Event]:
        out = self._out
        self._out = []
        return out

    def _item(self, item: DecodedItem) -> None:
        if not isinstance(item, Line):
            self.emit(Raw(line=item.head, truncated_bytes=item.size))
            return
        line = js_trim(item.text)
        if not line:
            return
        try:
            # loads_json inlined for the hot path: ``line`` is already trimmed, so
            # raw_decode + an end check is decode() without its whitespace re-scan;
            # vet_json makes lone surrogates U+FFFD and refuses too-deep nesting.
            value, end = JSON_READER.raw_decode(line)
            if end != len(line):
                raise ValueError("extra data after the JSON value")
            if len(line) > SHALLOW_TEXT or ("\\u" in line and surrogate_escape_search(line)):
                value = vet_json(value, line)
        except (ValueError, RecursionError):
            # Not JSON as JavaScript's JSON.parse reads it (NaN/Infinity are
            # rejected), or nested too deeply for Python's parser: raw.
            self.emit_raw(line, item.size)
            return
        if isinstance(value, dict):
            claimed = self.handle(value, line)
        else:
            claimed = self.handle_non_object(value, line)
        if not claimed:
            self.emit_raw(line, item.size)
