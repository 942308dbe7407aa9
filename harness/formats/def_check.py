"""Each def names a format the engine has: the def check that reads the format table.

The def registry (:mod:`harness.defs.registry`) checks what a def says about itself; whether
its ``stream_format`` and ``event_parser`` name a parser or session the engine has is a
question for the format table, one layer up, so it is asked here (DEF-FORMAT-001). The
built-in defs are checked once, when :mod:`harness.formats` is imported, so a built-in
naming an unknown format fails every importer of the formats.

Rules: DEF-FORMAT-001.
Design: docs/design/formats.md#harness.formats.def_check
"""

from __future__ import annotations

import importlib

from harness.defs.registry import BUILTIN_DEFS
from harness.defs.types import AgentDef
from harness.errors import AgentDefError
from harness.formats.registry import find_format, format_names, validate_stream_format
from harness.formats.spec import UnknownStreamFormatError, target_module

__all__ = [
    "check_def_format",
    "dialect_check_skipped",
    "event_parser_problem",
    "stream_format_problem",
]

#: stream format -> why its dialects could not be checked (its parser module did not import).
_DIALECT_CHECK_SKIPPED: dict[str, str] = {}


def dialect_check_skipped() -> dict[str, str]:
    """Formats whose dialect check was skipped because the parser module failed to import.

    Keyed by stream format; the value is the import error. Empty once every parser exists.
    """
    return dict(_DIALECT_CHECK_SKIPPED)


def stream_format_problem(stream_format: object) -> str | None:
    """Why ``stream_format`` names no registered format (DEF-FORMAT-001), or ``None``.

    The one wording of the check, for :func:`check_def_format` (which raises it) and the
    def-file loader (which collects it): the ``"format/parser"`` shorthand older
    ``harness agents`` printed is told apart, since it is two fields.
    """
    if isinstance(stream_format, str) and find_format(stream_format) is not None:
        return None
    known = sorted(format_names())
    problem = f"unknown stream format {stream_format!r}"
    text = stream_format if isinstance(stream_format, str) else ""
    head, _, parser = text.partition("/")
    if parser and head in known:
        return (
            f"{problem}: a parser is its own field; write stream_format={head!r}, "
            f"event_parser={parser!r}"
        )
    return f"{problem}; known: {', '.join(known)}"


def event_parser_problem(stream_format: str, event_parser: str | None) -> str | None:
    """Why ``event_parser`` is no dialect of the registered ``stream_format`` (DEF-FORMAT-001),
    or ``None``. Whatever importing the format's parser module raises propagates."""
    try:
        validate_stream_format(stream_format, event_parser)
    except UnknownStreamFormatError as exc:
        return str(exc)
    return None


def check_def_format(defn: AgentDef) -> None:
    """Raise :class:`AgentDefError` (DEF-FORMAT-001) unless ``defn.stream_format`` is a
    registered format and ``defn.event_parser`` one of its dialects."""
    fmt = defn.stream_format
    problem = stream_format_problem(fmt)
    if problem is not None:
        raise AgentDefError(defn.id, "stream_format", problem, rule="DEF-FORMAT-001")
    spec = find_format(fmt)
    if spec is not None and spec.parser is not None:
        module_name = target_module(spec.parser)
        try:
            importlib.import_module(module_name)
        except Exception as exc:
            # The format name is known but its parser module does not import (not written yet,
            # or broken): its dialects cannot be checked. Record why, so the gap is reportable
            # (design principle 3) instead of failing every importer of the formats.
            _DIALECT_CHECK_SKIPPED[fmt] = f"{type(exc).__name__}: {exc}"
            return
        _DIALECT_CHECK_SKIPPED.pop(fmt, None)
    problem = event_parser_problem(fmt, defn.event_parser)
    if problem is not None:
        raise AgentDefError(defn.id, "event_parser", problem, rule="DEF-FORMAT-001")


# A bad built-in fails at import, as the def registry's own checks do (seed 000 §1).
for _builtin in BUILTIN_DEFS:
    check_def_format(_builtin)
