"""Which format-only option groups of a def its transports read (DEF-OPTIONS-001).

A def holds the options of one wire format in one field (``acp``, ``pi``); setting one
on a def none of whose transports speaks that format would be silently ignored, so the
registry and the def-file loader both refuse it, through :func:`misplaced_options`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness.defs.types import AgentDef, Transport
from harness.protocols.def_options import AcpOptions, FormatOptions, PiOptions, changed_options

__all__ = ["FORMAT_OPTION_FIELDS", "def_formats", "misplaced_options"]

#: AgentDef field -> the option group it holds (each group names its format).
FORMAT_OPTION_FIELDS: Mapping[str, type[FormatOptions]] = MappingProxyType(
    {"acp": AcpOptions, "pi": PiOptions}
)


def def_formats(defn: AgentDef) -> frozenset[str]:
    """The stream formats of the def's own transport and of each alt transport."""
    alts = defn.alt_transports if isinstance(defn.alt_transports, tuple) else ()
    found = {defn.stream_format, *(t.stream_format for t in alts if isinstance(t, Transport))}
    return frozenset(f for f in found if isinstance(f, str))


def misplaced_options(defn: AgentDef) -> list[tuple[str, str]]:
    """``(field, problem)`` per option set in a group that none of the def's transports reads.

    ``field`` is dotted (``acp.turn_end_completes_prompt``). A group of the wrong type is
    skipped: the caller reports that as a type problem of its own.
    """
    formats = def_formats(defn)
    problems: list[tuple[str, str]] = []
    for name, group_type in FORMAT_OPTION_FIELDS.items():
        group = getattr(defn, name)
        if not isinstance(group, group_type) or group_type.FORMAT in formats:
            continue
        speaks = ", ".join(repr(f) for f in sorted(formats)) or "no known format"
        problems += [
            (
                f"{name}.{option}",
                f"read only by transports of format {group_type.FORMAT!r}, and this def's "
                f"transports speak {speaks}",
            )
            for option in changed_options(group)
        ]
    return problems
