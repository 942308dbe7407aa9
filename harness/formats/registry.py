"""The one table of stream formats, and every lookup the engine makes in it.

Keyed by wire format only, never by agent id (design principle 2). A new format is one
:class:`FormatSpec` in ``_SPECS`` (``docs/design/formats.md``); the dispatch below, the
def checks, the runner, capture replay and conformance all read it from here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from harness.formats.spec import (
    FormatSpec,
    RequestInputs,
    SessionSpec,
    SessionUnavailableError,
    UnknownStreamFormatError,
    load_target,
    target_module,
)

if TYPE_CHECKING:
    from harness.defs.types import AgentDef
    from harness.protocols.base import TwoWaySession
    from harness.streams.base import StreamParser

__all__ = [
    "FORMATS",
    "create_parser",
    "create_session",
    "find_format",
    "format_names",
    "format_spec",
    "is_two_way",
    "jsonl_formats",
    "keeps_turn_bookkeeping",
    "known_dialects",
    "one_way_formats",
    "session_request_fields",
    "session_spec",
    "two_way_formats",
    "validate_stream_format",
]


_SPECS: tuple[FormatSpec, ...] = (
    FormatSpec(
        name="claude-stream-json", parser="harness.streams.claude:create", turn_bookkeeping=True
    ),
    FormatSpec(name="json-event-stream", parser="harness.streams.json_events:create"),
    FormatSpec(name="copilot-stream-json", parser="harness.streams.copilot:create"),
    FormatSpec(name="qoder-stream-json", parser="harness.streams.qoder:create"),
    FormatSpec(name="plain", parser="harness.streams.plain:create", text_stream=True),
    FormatSpec(
        name="acp-json-rpc",
        session=SessionSpec(
            target="harness.protocols.acp.session:AcpSession",
            grace_keyword="cancel_grace_ms",
            capture_adapter="harness.capture.adapters:AcpCaptureAdapter",
        ),
    ),
    FormatSpec(
        name="pi-rpc",
        session=SessionSpec(
            target="harness.protocols.pi_rpc:PiRpcSession",
            grace_keyword="graceful_shutdown_ms",
            capture_adapter="harness.capture.adapters:PiCaptureAdapter",
            request_fields="harness.formats.bindings:pi_rpc_fields",
        ),
    ),
    FormatSpec(
        name="dsh-profile-jsonl",
        session=SessionSpec(
            target="harness.protocols.dsh:DshProfileSession",
            grace_keyword="cancel_grace_ms",
            capture_adapter="harness.capture.adapters:DshCaptureAdapter",
        ),
        strict_framing=True,
    ),
    FormatSpec(
        name="codex-app-server",
        session=SessionSpec(
            target="harness.protocols.codex_app_server:CodexAppServerSession",
            grace_keyword="interrupt_grace_ms",
            capture_adapter="harness.capture.adapters:AppServerCaptureAdapter",
            request_fields="harness.formats.bindings:codex_app_server_fields",
        ),
    ),
)


def _index(specs: tuple[FormatSpec, ...]) -> dict[str, FormatSpec]:
    table: dict[str, FormatSpec] = {}
    for spec in specs:
        if spec.name in table:
            raise ValueError(f"stream format {spec.name!r} is registered twice")
        table[spec.name] = spec
    return table


#: stream_format -> its spec, in registry order (one-way formats first).
FORMATS: dict[str, FormatSpec] = _index(_SPECS)


# -- views ---------------------------------------------------------------------------------


def format_names() -> tuple[str, ...]:
    """Every stream format a def may name."""
    return tuple(FORMATS)


def one_way_formats() -> tuple[str, ...]:
    """Formats read by a :class:`~harness.streams.base.StreamParser`."""
    return tuple(name for name, spec in FORMATS.items() if not spec.two_way)


def two_way_formats() -> tuple[str, ...]:
    """Formats driven by a two-way session in :mod:`harness.protocols`."""
    return tuple(name for name, spec in FORMATS.items() if spec.two_way)


def jsonl_formats() -> tuple[str, ...]:
    """Formats whose stdout is JSONL frames (every format but the text streams)."""
    return tuple(name for name, spec in FORMATS.items() if not spec.text_stream)


def find_format(stream_format: str) -> FormatSpec | None:
    """The spec of ``stream_format``, or ``None`` for a name no def may use."""
    return FORMATS.get(stream_format)


def format_spec(stream_format: str) -> FormatSpec:
    """The spec of ``stream_format``; :class:`UnknownStreamFormatError` names the known ones."""
    spec = FORMATS.get(stream_format)
    if spec is None:
        raise UnknownStreamFormatError(
            f"unknown stream format {stream_format!r}; known: {sorted(FORMATS)}"
        )
    return spec


def is_two_way(stream_format: str) -> bool:
    """Whether ``stream_format`` is a known two-way format (``False`` for unknown names)."""
    spec = FORMATS.get(stream_format)
    return spec is not None and spec.two_way


def keeps_turn_bookkeeping(stream_format: str) -> bool:
    """Whether a run of ``stream_format`` sets ``turnCompletedCleanly`` (ref §10.1)."""
    spec = FORMATS.get(stream_format)
    return spec is not None and spec.turn_bookkeeping


def session_spec(stream_format: str) -> SessionSpec:
    """The session part of a two-way format; :class:`UnknownStreamFormatError` otherwise."""
    spec = FORMATS.get(stream_format)
    if spec is None or spec.session is None:
        raise UnknownStreamFormatError(
            f"no session for stream format {stream_format!r}; "
            f"two-way formats: {sorted(two_way_formats())}"
        )
    return spec.session


# -- one-way: parsers ----------------------------------------------------------------------


def _parser_target(stream_format: str) -> str:
    spec = FORMATS.get(stream_format)
    if spec is None or spec.parser is None:
        raise UnknownStreamFormatError(
            f"no stream parser for format {stream_format!r}; "
            f"one-way formats: {sorted(one_way_formats())}"
        )
    return spec.parser


def known_dialects(stream_format: str) -> frozenset[str]:
    """Dialects (``event_parser`` values) a one-way format accepts; empty = none needed."""
    module = importlib.import_module(target_module(_parser_target(stream_format)))
    dialects: frozenset[str] = getattr(module, "DIALECTS", frozenset())
    return dialects


def validate_stream_format(stream_format: str, event_parser: str | None) -> None:
    """Raise :class:`UnknownStreamFormatError` unless the pair names a real parser/session.

    DEF-FORMAT-001: a def's ``stream_format`` / ``event_parser`` route to a parser or
    session the engine has (seed 000 §1).
    """
    spec = format_spec(stream_format)
    if spec.two_way:
        return
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
    factory: Callable[[str | None], StreamParser] = load_target(_parser_target(stream_format))
    return factory(event_parser)


# -- two-way: sessions ---------------------------------------------------------------------


def create_session(
    stream_format: str,
    defn: AgentDef | None = None,
    *,
    grace_ms: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> TwoWaySession:
    """A fresh session: ``Class.from_def(defn, **options)`` when both exist, else ``Class()``.

    ``grace_ms`` goes to the format's grace keyword; :class:`SessionUnavailableError` when
    the session module is not part of this installation.
    """
    spec = session_spec(stream_format)
    module_name = target_module(spec.target)
    try:
        cls = load_target(spec.target)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise SessionUnavailableError(
            f"no session for stream format {stream_format!r}: module {module_name} is not installed"
        ) from exc
    kwargs: dict[str, Any] = dict(options or {})
    if grace_ms is not None:
        kwargs[spec.grace_keyword] = grace_ms
    from_def = getattr(cls, "from_def", None)
    if defn is not None and callable(from_def):
        session: TwoWaySession = from_def(defn, **kwargs)
    else:
        session = cls(**kwargs)
    return session


def session_request_fields(
    stream_format: str, defn: AgentDef, inputs: RequestInputs
) -> dict[str, Any]:
    """The format's own :class:`~harness.protocols.base.SessionRequest` fields for a run."""
    target = session_spec(stream_format).request_fields
    if target is None:
        return {}
    binding: Callable[[AgentDef, RequestInputs], dict[str, Any]] = load_target(target)
    return binding(defn, inputs)
