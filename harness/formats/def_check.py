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

__all__ = ["check_def_format", "dialect_check_skipped"]

#: stream format -> why its dialects could not be checked (its parser module did not import).
_DIALECT_CHECK_SKIPPED: dict[str, str] = {}


def dialect_check_skipped() -> dict[str, str]:
    """Formats whose dialect check was skipped because the parser module failed to import.

    Keyed by stream format; the value is the import error. Empty once every parser exists.
    """
    return dict(_DIALECT_CHECK_SKIPPED)


def check_def_format(defn: AgentDef) -> None:
    """Raise :class:`AgentDefError` (DEF-FORMAT-001) unless ``defn.stream_format`` is a
    registered format and ``defn.event_parser`` one of its dialects."""
    fmt = defn.stream_format
    spec = find_format(fmt)
    if spec is None:
        known = sorted(format_names())
        raise AgentDefError(
            defn.id,
            "stream_format",
            f"unknown stream format {fmt!r}; known: {known}",
            rule="DEF-FORMAT-001",
        )
    if spec.parser is not None:
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
    try:
        validate_stream_format(fmt, defn.event_parser)
    except UnknownStreamFormatError as exc:
        raise AgentDefError(defn.id, "event_parser", str(exc), rule="DEF-FORMAT-001") from exc


# A bad built-in fails at import, as the def registry's own checks do (seed 000 §1).
for _builtin in BUILTIN_DEFS:
    check_def_format(_builtin)
