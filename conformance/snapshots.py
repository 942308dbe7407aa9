"""Event snapshots: a syrupy extension that pins a normalized event stream as JSON Lines.

Rules: PLUGIN-SNAP-002.
Design: docs/design/conformance.md#conformance.snapshots
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar, cast

from syrupy.exceptions import TaintedSnapshotError
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from syrupy.types import (
    PropertyFilter,
    PropertyMatcher,
    SerializableData,
    SerializedData,
)

__all__ = [
    "EVENTS_FORMAT",
    "EVENTS_VERSION",
    "HEADER_LINE",
    "MS_PLACEHOLDER",
    "TIMESTAMP_PLACEHOLDER",
    "TIME_FIELDS",
    "EventStreamExtension",
    "SnapshotFormatError",
    "events_of",
    "normalize_events",
    "parse_event_lines",
    "serialize_events",
]

EVENTS_FORMAT = "adapter-harness-events"
#: Bump when the normalization or the line format changes: old snapshots become tainted.
EVENTS_VERSION = 1
HEADER_LINE = json.dumps({"format": EVENTS_FORMAT, "version": EVENTS_VERSION})
MS_PLACEHOLDER = "<ms>"
TIMESTAMP_PLACEHOLDER = "<timestamp>"

#: event type -> top-level fields whose value depends on the clock (normalization 1).
TIME_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "status": ("ttft_ms", "elapsed_ms"),
        "usage": ("duration_ms",),
        "tool_use": ("started_at_ms",),
    }
)

_UUID = re.compile(
    r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
    r"(?![0-9A-Fa-f])"
)
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?(?![\d])"
)
#: Characters ``str.splitlines`` (and many editors) break lines at that JSON leaves raw;
#: escaped, so every tool sees one event per line.
_LINE_BREAKS = {ord(c): f"\\u{ord(c):04x}" for c in "\x1c\x1d\x1e\x85\u2028\u2029"}
#: A directory ends where the next character cannot continue a file name.
_PATH_END = r"(?![A-Za-z0-9._~-])"


class SnapshotFormatError(ValueError):
    """An events snapshot that cannot be read back; names the line."""


def events_of(data: Any) -> list[dict[str, Any]]:
    """The events of ``data`` as JSON objects.

    ``data`` is a run or replay result (anything with an ``events`` attribute), or an
    iterable of events (:class:`harness.events.Event` objects or their JSON mappings).
    """
    items = getattr(data, "events", data)
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise TypeError(
            "an events snapshot takes a RunResult, a ReplayResult or a sequence of events, "
            f"not {type(data).__name__}"
        )
    out: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        to_json = getattr(item, "to_json", None)
        obj = to_json() if callable(to_json) else item
        if not isinstance(obj, Mapping) or not isinstance(obj.get("type"), str):
            raise TypeError(
                f"events[{index}]: expected an event (with a string 'type'), "
                f"got {type(item).__name__}"
            )
        out.append(dict(obj))
    return out


def _variants(directory: str) -> set[str]:
    spelled = {directory, os.path.realpath(directory)}
    spelled |= {s.replace("\\", "/") for s in spelled}
    return {s.rstrip("/\\") for s in spelled if s.rstrip("/\\")}


class _Normalizer:
    """One pass over one stream: UUID numbering is shared by every event of it."""

    def __init__(self, paths: Mapping[str, str]) -> None:
        spelled: dict[str, str] = {}
        for name, directory in paths.items():
            for variant in _variants(directory):
                # Longest first below; for an equal spelling the first name given wins.
                spelled.setdefault(variant, "{" + name + "}")
        ordered = sorted(spelled, key=len, reverse=True)
        self._paths = spelled
        self._path_re = (
            re.compile("(?:" + "|".join(re.escape(s) for s in ordered) + ")" + _PATH_END)
            if ordered
            else None
        )
        self._uuids: dict[str, str] = {}

    def _uuid(self, match: re.Match[str]) -> str:
        key = match.group(0).lower()
        if key not in self._uuids:
            self._uuids[key] = f"<uuid-{len(self._uuids) + 1}>"
        return self._uuids[key]

    def text(self, value: str) -> str:
        if self._path_re is not None:
            value = self._path_re.sub(lambda m: self._paths[m.group(0)], value)
        value = _UUID.sub(self._uuid, value)
        return _TIMESTAMP.sub(TIMESTAMP_PLACEHOLDER, value)

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(item) for item in value]
        return value

    def event(self, event: Mapping[str, Any]) -> dict[str, Any]:
        timed = TIME_FIELDS.get(str(event.get("type")), ())
        out: dict[str, Any] = {}
        for key, item in event.items():
            if key in timed and item is not None:
                out[key] = MS_PLACEHOLDER
            else:
                out[key] = self.value(item)
        return out


def normalize_events(data: Any, *, paths: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The events of ``data`` (see :func:`events_of`) with volatile values replaced.

    ``paths`` maps a placeholder name to a directory, e.g. ``{"cwd": "/tmp/x/cwd"}``
    (written ``{cwd}``). See the module docstring for exactly what is replaced.
    """
    normalizer = _Normalizer(paths or {})
    return [normalizer.event(e) for e in events_of(data)]


def _filtered(
    data: Any,
    path: tuple[tuple[Any, type], ...],
    exclude: PropertyFilter | None,
    include: PropertyFilter | None,
    matcher: PropertyMatcher | None,
) -> Any:
    """syrupy's filters and matchers, as its JSON extension applies them, order kept."""
    if matcher is not None:
        data = matcher(data=data, path=path)
    if isinstance(data, Mapping):
        out: dict[str, Any] = {}
        for key, value in data.items():
            if exclude is not None and exclude(prop=key, path=path):
                continue
            if include is not None and not include(prop=key, path=path):
                continue
            child = (*path, (key, type(value)))
            out[key] = _filtered(value, child, exclude, include, matcher)
        return out
    if isinstance(data, (list, tuple)):
        return [
            _filtered(value, (*path, (i, type(value))), exclude, include, matcher)
            for i, value in enumerate(data)
        ]
    return data


def serialize_events(
    data: Any,
    *,
    paths: Mapping[str, str] | None = None,
    exclude: PropertyFilter | None = None,
    include: PropertyFilter | None = None,
    matcher: PropertyMatcher | None = None,
) -> str:
    """The snapshot text: the header line, then one normalized event per line.

    ``exclude``, ``include`` and ``matcher`` are syrupy's (``props(...)``,
    ``path_type(...)``): applied after normalization to the list of events, each event
    and every value below, as syrupy's JSON extension applies them. A value that is not
    JSON after a matcher ran is written as its ``repr``.
    """
    events = normalize_events(data, paths=paths)
    if exclude is not None or include is not None or matcher is not None:
        events = _filtered(events, (), exclude, include, matcher)
    lines = [HEADER_LINE]
    lines += [
        json.dumps(e, ensure_ascii=False, default=repr).translate(_LINE_BREAKS) for e in events
    ]
    return "\n".join(lines) + "\n"


def parse_event_lines(text: str) -> list[dict[str, Any]]:
    """Read an events snapshot back: the normalized events, in order.

    Raises :class:`SnapshotFormatError` naming the line for a missing or foreign header
    or a line that is not one JSON object with a ``type``.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0] != HEADER_LINE:
        first = lines[0] if lines else ""
        raise SnapshotFormatError(f"line 1: expected the header {HEADER_LINE}, got {first!r}")
    events: list[dict[str, Any]] = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise SnapshotFormatError(f"line {number}: not JSON: {exc}") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            raise SnapshotFormatError(f"line {number}: not an event object with a 'type'")
        events.append(obj)
    return events


class EventStreamExtension(SingleFileSnapshotExtension):
    """syrupy extension: one ``<test name>.jsonl`` per snapshot, events normalized.

    Use it as ``snapshot.use_extension(EventStreamExtension)``, or through the
    ``snapshot_events`` fixture of :mod:`conformance.pytest_plugin`, which also binds the
    test's sandbox directories (:meth:`with_paths`). Files live where syrupy puts every
    single-file snapshot: ``__snapshots__/<test file>/<test name>.jsonl``.
    """

    file_extension = "jsonl"
    _write_mode = WriteMode.TEXT
    #: placeholder name -> directory; set on subclasses made by :meth:`with_paths`.
    placeholder_paths: ClassVar[Mapping[str, str]] = MappingProxyType({})

    @classmethod
    def with_paths(cls, **paths: str | os.PathLike[str] | None) -> type[EventStreamExtension]:
        """A subclass that also writes these directories as ``{name}`` (normalization 2).

        The subclass keeps this class's module and qualified name, so syrupy (and an
        xdist controller, which re-imports extensions by name) treats its files as this
        extension's files.
        """
        bound = {name: os.fspath(p) for name, p in paths.items() if p is not None and str(p)}
        merged = {**cls.placeholder_paths, **bound}
        attrs = {
            "placeholder_paths": MappingProxyType(merged),
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__,
        }
        return cast("type[EventStreamExtension]", type(cls.__name__, (cls,), attrs))

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
        **kwargs: Any,
    ) -> SerializedData:
        """The snapshot text of ``data`` (:func:`serialize_events`)."""
        return serialize_events(
            data,
            paths=self.placeholder_paths,
            exclude=exclude,
            include=include,
            matcher=matcher,
        )

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> SerializableData | None:
        data = super().read_snapshot_data_from_location(
            snapshot_location=snapshot_location,
            snapshot_name=snapshot_name,
            session_id=session_id,
        )
        if isinstance(data, str) and data.split("\n", 1)[0] != HEADER_LINE:
            # PLUGIN-SNAP-003: another format version (or not ours): regenerate, never crash.
            raise TaintedSnapshotError(snapshot_data=data)
        return data
