"""The parser interface and the JSONL base every one-way stream parser builds on.

A stream parser is a sans-IO state machine: :meth:`StreamParser.feed` takes
stdout bytes in any split and returns the events completed so far;
:meth:`StreamParser.finish` is called once at end of output. Neither raises on
any input (hypothesis proves it per parser).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import Any, Protocol

from harness.events import Event, Raw
from harness.streams import fast_json
from harness.streams.decoder import (
    DEFAULT_HEAD_BYTES,
    DEFAULT_MAX_LINE_BYTES,
    SHALLOW_TEXT,
    FedItem,
    LineDecoder,
    OversizeLine,
    item_size,
    may_hold_surrogate_escape,
    may_nest_too_deep,
    read_line_stdlib,
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
        items = self._decoder.iter_feed(data)
        if items:
            lines = iter(items)
            # The first line may have begun in an earlier chunk; every later one lies
            # wholly in ``data``, whose one scan stands for theirs: for nineteen digits
            # in a row when orjson reads the lines, else for surrogate escapes.
            self._read(islice(lines, 1), suspect=True)
            if fast_json.LOADS is not None:
                self._read(lines, suspect=fast_json.may_hold_long_digits(data))
            else:
                self._read(lines, suspect=may_hold_surrogate_escape(data))
        if not self._out:
            return []  # no line completed: the common case of small feeds
        return self._take()

    def finish(self) -> list[Event]:
        self._read(self._decoder.finish(), suspect=True)
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

    def _read(self, items: Iterable[FedItem], *, suspect: bool) -> None:
        """Each line to :meth:`handle`; the hot loop of every JSONL parser.

        One pass per line with the names it uses bound once: a method call and a few
        attribute look-ups per line are a large part of a parser's time on a long stream.
        orjson reads a line unless :func:`stdlib_only` sends it to the stdlib reader or
        orjson refuses it; either way the value or the refusal is the stdlib reader's.
        ``suspect=False``: no line holds nineteen digits in a row (with orjson) or a
        surrogate escape (without), so no per-line search for them.
        """
        handle = self.handle
        fast = fast_json.LOADS
        refused = fast_json.FastJsonError
        needs_stdlib = fast_json.needs_stdlib
        for item in items:
            if type(item) is str:
                line = item.strip(_TRIM)  # js_trim, inlined
            elif isinstance(item, OversizeLine):
                self.emit(Raw(line=item.head, truncated_bytes=item.size))
                continue
            else:
                line = item[0].strip(_TRIM)
            if not line:
                continue
            try:
                if fast is None:
                    value = read_line_stdlib(line, suspect)
                elif (suspect and needs_stdlib(line)) or (
                    len(line) > SHALLOW_TEXT and may_nest_too_deep(line)
                ):
                    value = read_line_stdlib(line, True)  # rather than orjson: stdlib_only
                else:
                    try:
                        value = fast(line)
                    except refused:
                        value = read_line_stdlib(line, True)
            except (ValueError, RecursionError, StopIteration):
                # Not JSON as JavaScript's JSON.parse reads it (NaN/Infinity are
                # rejected; StopIteration: no value at all), or nested too deeply for
                # Python's parser: raw.
                self.emit_raw(line, item_size(item))
                continue
            if type(value) is dict:
                if handle(value, line):
                    continue
            elif self.handle_non_object(value, line):
                continue
            self.emit_raw(line, item_size(item))
