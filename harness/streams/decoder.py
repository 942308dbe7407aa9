"""The one sans-IO line decoder every JSONL parser and session shares.

Rules: ROBUST-SURROGATE-001.
Design: docs/design/streams.md#harness.streams.decoder
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, islice, repeat
from typing import Any, NamedTuple, cast

from harness.events import json_safe
from harness.streams import fast_json

__all__ = [
    "DEFAULT_HEAD_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "JSON_READER",
    "MAX_JSON_DEPTH",
    "SHALLOW_TEXT",
    "DecodedItem",
    "FedItem",
    "Line",
    "LineDecoder",
    "OversizeLine",
    "dumps_json",
    "item_size",
    "loads_json",
    "may_hold_surrogate_escape",
    "may_nest_too_deep",
    "read_line_stdlib",
    "scan_json",
    "scrub_surrogates",
    "stdlib_only",
    "surrogate_escape_search",
    "vet_json",
]

#: Default cap on one line (1 MiB), as the dsh profile's ``maxFrameBytes``.
DEFAULT_MAX_LINE_BYTES = 1024 * 1024
#: How much of an oversize line is kept for the report (64 KiB, upstream's raw budget).
DEFAULT_HEAD_BYTES = 64 * 1024


class Line(NamedTuple):
    """One complete line, decoded as UTF-8, without its ``\\n`` and one trailing ``\\r``.

    A named tuple rather than a frozen dataclass: one is built per stdout line,
    and tuple construction is several times cheaper on that hot path.
    """

    text: str
    #: Byte length of the line as received (without the ``\\n``).
    size: int
    #: True when the line ended at end of input rather than at ``\\n``.
    unterminated: bool = False


@dataclass(frozen=True, slots=True)
class OversizeLine:
    """A line larger than the limit: its beginning and its full byte count."""

    head: str
    size: int
    unterminated: bool = False


DecodedItem = Line | OversizeLine
#: What :meth:`LineDecoder.iter_feed` yields: a decoded item, or a plain line's text.
FedItem = str | Line | OversizeLine
#: ``tuple.__new__``: a :class:`Line` built from its fields, skipping its ``__new__``.
_new_tuple = tuple.__new__


class LineDecoder:
    """Bytes in, lines out. ``feed`` any split; ``finish`` at end of input."""

    __slots__ = ("_buf", "_discarded", "_finished", "_head", "_head_bytes", "_max")

    def __init__(
        self,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        head_bytes: int = DEFAULT_HEAD_BYTES,
    ) -> None:
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be >= 1, got {max_line_bytes!r}")
        self._max = max_line_bytes
        self._head_bytes = min(head_bytes, max_line_bytes)
        self._buf = bytearray()
        #: While inside an oversize line: its kept head, and bytes seen after it.
        self._head: bytes | None = None
        self._discarded = 0
        self._finished = False

    @property
    def buffered_bytes(self) -> int:
        """Bytes held for an incomplete line (bounded by ``max_line_bytes``)."""
        return len(self._buf) + (len(self._head) if self._head is not None else 0)

    def feed(self, data: bytes) -> list[DecodedItem]:
        # Not plain: every item is a Line or an OversizeLine.
        return cast("list[DecodedItem]", list(self.iter_feed(data, plain=False)))

    def iter_feed(self, data: bytes, *, plain: bool = True) -> Iterable[FedItem]:
        """:meth:`feed`, each whole line decoded only when it is read, plain ones as text.

        A parser that handles each line as it comes keeps no list of them all (on a
        large chunk that list costs more than the loop). A plain line (ASCII, ended by
        ``\\n`` alone, within the limit) may come as its ``str`` (unless ``plain`` is
        false): its size is its length, and it saves a :class:`Line` per line in the
        usual case. The buffer is updated at once; read the result to its end before the
        next call.
        """
        if self._finished:
            raise RuntimeError("LineDecoder.feed() called after finish()")
        # A piece of a line (1-byte feeds): buffered with no split and no list. ``10 in``
        # (the int form) is a plain memchr; ``b"\n" in`` first tries the byte as an int.
        if 10 not in data:
            if self._head is None and len(self._buf) + len(data) <= self._max:
                self._buf += data
            else:
                self._append_partial(data)
            return ()
        if data.isascii():
            # Most JSONL is ASCII (JSON writers escape the rest): the chunk is decoded
            # once and split as text, with no decode call per line.
            texts = data.decode("ascii").split("\n")
            first_item = self._first_item(texts[0].encode("ascii"))
            self._append_partial(texts.pop().encode("ascii"))
            if 13 not in data:
                # No line ends in "\r": when none is oversize either, every later line
                # is its text (plain) or a Line built in C (``map``/``zip``), with no
                # Python step per line.
                whole = texts[1:]
                # A chunk no longer than the limit holds no oversize line at all.
                if len(data) <= self._max or max(map(len, whole), default=0) <= self._max:
                    if plain:
                        return chain((first_item,), whole)
                    lines = zip(whole, map(len, whole), repeat(False))
                    return chain((first_item,), map(_new_tuple, repeat(Line), lines))
            return self._whole_texts(first_item, texts)
        parts = data.split(b"\n")
        first_item = self._first_item(parts[0])
        self._append_partial(parts.pop())
        return self._whole_lines(first_item, parts)

    def _first_item(self, first: bytes) -> DecodedItem:
        """The chunk's first line: ``first`` completes whatever earlier chunks left."""
        if self._head is not None:
            size = len(self._head) + self._discarded + len(first)
            item: DecodedItem = OversizeLine(self._decode(self._head), size)
            self._head = None
            self._discarded = 0
            return item
        if self._buf:
            self._buf += first
            item = self._complete(bytes(self._buf))
            self._buf.clear()
            return item
        return self._complete(first)

    def _whole_lines(self, first_item: DecodedItem, parts: list[bytes]) -> Iterator[DecodedItem]:
        """``first_item``, then ``parts[1:]`` as lines: the hot loop, free of attribute
        look-ups (a named tuple is built with ``tuple.__new__``, skipping its ``__new__``)."""
        yield first_item
        limit = self._max
        new_line = tuple.__new__
        for part in islice(parts, 1, None):
            size = len(part)
            if size > limit:
                yield OversizeLine(self._decode(part[: self._head_bytes]), size)
                continue
            raw = part[:-1] if part[-1:] == b"\r" else part
            yield new_line(Line, (raw.decode("utf-8", "replace"), size, False))

    def _whole_texts(self, first_item: DecodedItem, texts: list[str]) -> Iterator[DecodedItem]:
        """:meth:`_whole_lines` for an ASCII chunk already decoded (a character is a byte)."""
        yield first_item
        limit = self._max
        new_line = tuple.__new__
        for text in islice(texts, 1, None):
            size = len(text)
            if size > limit:
                yield OversizeLine(text[: self._head_bytes], size)
                continue
            yield new_line(Line, (text[:-1] if text[-1:] == "\r" else text, size, False))

    def finish(self) -> list[DecodedItem]:
        """Flush a final unterminated line (marked ``unterminated=True``)."""
        if self._finished:
            return []
        self._finished = True
        if self._head is not None:
            size = len(self._head) + self._discarded
            head = self._head
            self._head = None
            return [OversizeLine(self._decode(head), size, unterminated=True)]
        if self._buf:
            raw = bytes(self._buf)
            self._buf.clear()
            item = self._complete(raw)
            if isinstance(item, Line):
                return [Line(item.text, item.size, unterminated=True)]
            return [OversizeLine(item.head, item.size, unterminated=True)]
        return []

    # -- internals ----------------------------------------------------------

    def _append_partial(self, part: bytes) -> None:
        if not part:
            return
        if self._head is not None:
            self._discarded += len(part)
            return
        self._buf += part
        if len(self._buf) > self._max:
            self._head = bytes(self._buf[: self._head_bytes])
            self._discarded = len(self._buf) - len(self._head)
            self._buf.clear()

    def _complete(self, raw: bytes) -> DecodedItem:
        size = len(raw)
        if size > self._max:
            return OversizeLine(self._decode(raw[: self._head_bytes]), size)
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        return Line(raw.decode("utf-8", "replace"), size)

    @staticmethod
    def _decode(raw: bytes) -> str:
        return raw.decode("utf-8", "replace")


# -- JSON values ------------------------------------------------------------------------


def item_size(item: FedItem) -> int:
    """The byte length of a fed line as received (a plain line's text is ASCII)."""
    if isinstance(item, str):
        return len(item)
    return item.size


def _reject_constant(name: str) -> Any:
    # JSON.parse rejects NaN / Infinity / -Infinity; json.loads accepts them.
    raise ValueError(f"{name} is not JSON")


#: One decoder, built once (``json.loads`` with keyword arguments builds one per call).
JSON_READER = json.JSONDecoder(parse_constant=_reject_constant)
#: ``JSON_READER``'s scanner: ``(text, index) -> (value, end)``; ``StopIteration`` when no
#: value starts at ``index``. A hot loop calls it on trimmed text (``raw_decode`` is this
#: plus a Python frame).
scan_json: Callable[[str, int], tuple[Any, int]] = JSON_READER.scan_once  # type: ignore[attr-defined]
#: A ``\\u`` escape of a UTF-16 surrogate: only such a line can decode to a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
#: A surrogate code point in a decoded str (a valid pair decodes to one astral char).
_SURROGATE = re.compile("[\ud800-\udfff]")
#: The deepest nesting :func:`loads_json` reads (rule ROBUST-DEPTH-001). Python's own
#: reader stops near its recursion limit, which depends on how deep the caller's stack
#: already is; a fixed bound well under it makes the outcome the same everywhere and
#: leaves every later consumer (``json.dumps`` of an event, a recursive walk) room.
MAX_JSON_DEPTH = 256
#: Text this short cannot hold a value nested deeper than the bound (each level is an
#: opener and a closer): the usual line skips the depth check altogether.
SHALLOW_TEXT = 2 * MAX_JSON_DEPTH
#: ``search`` of a surrogate escape: a hot loop calls :func:`vet_json` only when this
#: finds one or the text is longer than :data:`SHALLOW_TEXT`.
surrogate_escape_search = _SURROGATE_ESCAPE.search
#: JSON's whitespace (``text[:1]`` of an empty text is ``""``, which is in it too).
_JSON_SPACE = " \t\n\r"


def _scrub_str(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def scrub_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings and keys replaced by U+FFFD.

    Iterative (a value nested as deep as the JSON reader allows never recurses
    here); containers are rebuilt in place, so the result is ``value`` itself.
    """
    if isinstance(value, str):
        return _scrub_str(value)
    if not isinstance(value, (dict, list)):
        return value
    stack: list[dict[str, Any] | list[Any]] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str):
                    node[index] = _scrub_str(item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
            continue
        if any(isinstance(key, str) and _SURROGATE.search(key) for key in node):
            items = list(node.items())
            node.clear()
            node.update((_scrub_str(k) if isinstance(k, str) else k, v) for k, v in items)
        for key, item in node.items():
            if isinstance(item, str):
                node[key] = _scrub_str(item)
            elif isinstance(item, (dict, list)):
                stack.append(item)
    return value


def dumps_json(value: Any, *, strict: bool = False) -> str:
    """Compact JSON text any peer's ``JSON.parse`` reads and UTF-8 can encode.

    A number that is not finite is written ``null`` (as ``JSON.stringify`` writes it,
    rule ROBUST-JSONOUT-001), or with ``strict`` refused with ``ValueError``; a lone
    surrogate is written as its ``\\uXXXX`` escape (the text is then ASCII), so the
    peer reads back exactly the string it was given.
    """
    safe = value
    try:
        text = json.dumps(safe, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        if strict:
            raise
        safe = json_safe(value)
        text = json.dumps(safe, ensure_ascii=False, separators=(",", ":"))
    if _SURROGATE.search(text) is not None:
        text = json.dumps(safe, ensure_ascii=True, separators=(",", ":"))
    return text


def loads_json(text: str) -> Any:
    """One JSON value, as ``JSON.parse`` reads it, with lone surrogates made U+FFFD.

    Leading and trailing JSON whitespace is allowed, as ``json.loads`` allows
    it. Raises ``ValueError`` (``json.JSONDecodeError``, or the int-digits
    limit) for text that is not one JSON value or one nested deeper than
    :data:`MAX_JSON_DEPTH`, and ``RecursionError`` for one nested deeper than
    the reader's own stack allows. orjson reads it when installed and
    :func:`stdlib_only` allows; the value or error is the same as without.
    """
    fast = fast_json.LOADS
    if fast is not None and not stdlib_only(text):
        try:
            return fast(text)
        except fast_json.FastJsonError:
            pass  # refused: the stdlib reader's own outcome is the answer
    if text[:1] in _JSON_SPACE or text[-1:] in _JSON_SPACE:
        value = JSON_READER.decode(text)
    else:
        # The common case (trimmed lines): raw_decode + an end check is decode()
        # without its two whitespace scans.
        value, end = JSON_READER.raw_decode(text)
        if end != len(text):
            raise json.JSONDecodeError("Extra data", text, end)
    return vet_json(value, text)


def stdlib_only(text: str) -> bool:
    """True when ``text`` is read by ``json`` alone, never by orjson.

    orjson refuses what the stdlib reader refuses, or reads the same value, except for
    an integer beyond 64 bits (it makes a float: :func:`fast_json.needs_stdlib`) and
    nesting past :data:`MAX_JSON_DEPTH` (where the stdlib reader may raise
    ``RecursionError``; rule ROBUST-DEPTH-001). Anything else orjson accepts needs no
    :func:`vet_json`: it refuses lone surrogate escapes, so its strings hold none.
    """
    return fast_json.needs_stdlib(text) is not None or (
        len(text) > SHALLOW_TEXT and may_nest_too_deep(text)
    )


def may_nest_too_deep(text: str) -> bool:
    """False when ``text`` opens too few containers to nest past :data:`MAX_JSON_DEPTH`."""
    return text.count("[") + text.count("{") > MAX_JSON_DEPTH


def read_line_stdlib(line: str, escapes: bool) -> Any:
    """:func:`loads_json` for a trimmed line by the stdlib reader, for a hot loop.

    A scan from 0 + an end check is ``decode()`` without its whitespace scans.
    ``escapes=False``: the caller knows ``line`` holds no surrogate escape. Raises
    ``ValueError``, ``RecursionError`` or ``StopIteration`` (no value at all).
    """
    value, end = scan_json(line, 0)
    if end != len(line):
        raise ValueError("extra data after the JSON value")
    if len(line) > SHALLOW_TEXT or (escapes and "\\u" in line and surrogate_escape_search(line)):
        value = vet_json(value, line, escapes=escapes)
    return value


def may_hold_surrogate_escape(data: bytes) -> bool:
    """False when no text within ``data`` holds a ``\\u`` escape of a UTF-16 surrogate.

    One regex scan of a whole chunk (several times faster than ``in`` on text full of
    other escapes): a hot loop that gets False skips the per-line search (and
    :func:`vet_json` its own, with ``escapes=False``).
    """
    return _SURROGATE_ESCAPE_BYTES.search(data) is not None


def vet_json(value: Any, text: str, *, escapes: bool = True) -> Any:
    """What :func:`loads_json` does after ``json`` read ``value`` from ``text``: lone
    surrogates made U+FFFD, nesting past :data:`MAX_JSON_DEPTH` refused (``ValueError``).

    For a hot loop that calls the ``json`` reader itself; both checks are one C-speed
    scan of ``text`` unless it could need them. ``escapes=False``: the caller knows
    ``text`` holds no surrogate escape (:func:`may_hold_surrogate_escape`).
    """
    if escapes and _SURROGATE_ESCAPE.search(text) is not None:
        value = scrub_surrogates(value)
    if len(text) > SHALLOW_TEXT and may_nest_too_deep(text) and isinstance(value, (dict, list)):
        _check_depth(value)
    return value


def _check_depth(value: Any) -> None:
    """Raise ``ValueError`` when ``value`` nests deeper than :data:`MAX_JSON_DEPTH`."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
