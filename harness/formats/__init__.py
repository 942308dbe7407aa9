"""Stream formats: one :class:`FormatSpec` per wire format, and the lookups built on it.

:mod:`~harness.formats.spec` is the record, :mod:`~harness.formats.registry` the one
table and its views, :mod:`~harness.formats.bindings` the per-format session-request
fields, :mod:`~harness.formats.def_check` the check that each def names a format here (run
on the built-ins at import). Where a new format goes: ``docs/design/formats.md``.
"""

from __future__ import annotations

from harness.formats.def_check import check_def_format, dialect_check_skipped
from harness.formats.registry import (
    FORMATS,
    create_parser,
    create_session,
    find_format,
    format_names,
    format_spec,
    is_two_way,
    jsonl_formats,
    keeps_turn_bookkeeping,
    known_dialects,
    one_way_formats,
    session_request_fields,
    session_spec,
    two_way_formats,
    validate_stream_format,
)
from harness.formats.spec import (
    FormatSpec,
    RequestInputs,
    SessionSpec,
    SessionUnavailableError,
    UnknownStreamFormatError,
    load_target,
    target_module,
)

__all__ = [
    "FORMATS",
    "FormatSpec",
    "RequestInputs",
    "SessionSpec",
    "SessionUnavailableError",
    "UnknownStreamFormatError",
    "check_def_format",
    "create_parser",
    "create_session",
    "dialect_check_skipped",
    "find_format",
    "format_names",
    "format_spec",
    "is_two_way",
    "jsonl_formats",
    "keeps_turn_bookkeeping",
    "known_dialects",
    "load_target",
    "one_way_formats",
    "session_request_fields",
    "session_spec",
    "target_module",
    "two_way_formats",
    "validate_stream_format",
]
