"""Stream-format dispatch: a def's ``stream_format`` / ``event_parser`` -> its parser.

No agent-id branches: the table is keyed by wire format only (design
principle 2). One-way formats map to a :class:`StreamParser` factory here;
two-way formats are sessions in :mod:`harness.protocols` and are listed in
:data:`TWO_WAY_FORMATS` so a def naming them validates.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from harness.streams.base import JsonlStreamParser, StreamParser

__all__ = [
    "ONE_WAY_FORMATS",
    "TWO_WAY_FORMATS",
    "JsonlStreamParser",
    "StreamParser",
    "UnknownStreamFormatError",
    "create_parser",
    "known_dialects",
    "validate_stream_format",
]


class UnknownStreamFormatError(ValueError):
    """A def names a stream format or dialect the engine has no parser for."""


#: stream_format -> "module:factory"; the factory takes the dialect (event_parser).
ONE_WAY_FORMATS: dict[str, str] = {
    "claude-stream-json": "harness.streams.claude:create",
    "json-event-stream": "harness.streams.json_events:create",
    "copilot-stream-json": "harness.streams.copilot:create",
    "qoder-stream-json": "harness.streams.qoder:create",
    "plain": "harness.streams.plain:create",
}

#: Formats driven by a two-way session in harness.protocols.
TWO_WAY_FORMATS: frozenset[str] = frozenset(
    {"acp-json-rpc", "pi-rpc", "dsh-profile-jsonl", "codex-app-server"}
)


def _factory(stream_format: str) -> Callable[[str | None], StreamParser]:
    target = ONE_WAY_FORMATS.get(stream_format)
    if target is None:
        known = sorted(ONE_WAY_FORMATS)
        raise UnknownStreamFormatError(
            f"no stream parser for format {stream_format!r}; one-way formats: {known}"
        )
    module_name, _, attr = target.partition(":")
    factory: Callable[[str | None], StreamParser] = getattr(
        importlib.import_module(module_name), attr
    )
    return factory


def known_dialects(stream_format: str) -> frozenset[str]:
    """Dialects (``event_parser`` values) a one-way format accepts; empty = none needed."""
    module_name = ONE_WAY_FORMATS[stream_format].partition(":")[0]
    dialects: frozenset[str] = getattr(
        importlib.import_module(module_name), "DIALECTS", frozenset()
    )
    return dialects


def validate_stream_format(stream_format: str, event_parser: str | None) -> None:
    """Raise :class:`UnknownStreamFormatError` unless the pair names a real parser/session."""
    if stream_format in TWO_WAY_FORMATS:
        return
    if stream_format not in ONE_WAY_FORMATS:
        known = sorted(set(ONE_WAY_FORMATS) | TWO_WAY_FORMATS)
        raise UnknownStreamFormatError(f"unknown stream format {stream_format!r}; known: {known}")
    dialects = known_dialects(stream_format)
    if not dialects and event_parser is not None:
        raise UnknownStreamFormatError(
            f"stream format {stream_format!r} takes no event parser, got {event_parser!r}"
        )
    if dialects and event_parser not in dialects:
        raise UnknownStreamFormatError(
            f"stream format {stream_format!r} needs an event parser in {sorted(dialects)}, "
            f"got {event_parser!r}"
        )


def create_parser(stream_format: str, event_parser: str | None = None) -> StreamParser:
    """A fresh parser for one run of the given format and dialect."""
    validate_stream_format(stream_format, event_parser)
    return _factory(stream_format)(event_parser)
