"""The normalized event vocabulary every parser and session emits.

One frozen dataclass per event ``type``; :meth:`to_json` gives the single wire
shape (a plain JSON object with a ``type`` key; optional fields that are
``None`` are omitted). ``harness/schemas/events.schema.json`` validates it.

Rules: ROBUST-JSONOUT-001.
Design: docs/design/streams.md#harness.events
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "EVENT_TYPES",
    "Artifact",
    "Error",
    "Event",
    "FabricatedRoleMarker",
    "JsonValue",
    "Raw",
    "Status",
    "TextDelta",
    "ThinkingDelta",
    "ThinkingEnd",
    "ThinkingStart",
    "ToolInFlight",
    "ToolInputDelta",
    "ToolResult",
    "ToolUse",
    "TurnEnd",
    "Usage",
    "event_from_json",
    "event_json_line",
    "events_to_json",
    "fill_text_delta",
    "json_safe",
    "text_delta",
    "tool_result",
    "tool_use",
]

#: Any JSON value (the parsed form of ``json.loads``).
JsonValue = Any


#: A surrogate code point: in a str it can only be a lone one, which UTF-8 cannot hold.
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTAINERS = (dict, list, tuple)


def _leaf_safe(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        return _SURROGATE.search(value) is None
    return True


def _safe_leaf(value: JsonValue) -> JsonValue:
    if type(value) is float and not math.isfinite(value):
        return None
    if type(value) is str:
        return _SURROGATE.sub("\ufffd", value)
    return value


def _needs_cleaning(value: JsonValue) -> bool:
    if not isinstance(value, _CONTAINERS):
        return not _leaf_safe(value)
    stack: list[JsonValue] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                if not _leaf_safe(key):
                    return True
                if isinstance(item, _CONTAINERS):
                    stack.append(item)
                elif not _leaf_safe(item):
                    return True
        else:
            for item in node:
                if isinstance(item, _CONTAINERS):
                    stack.append(item)
                elif not _leaf_safe(item):
                    return True
    return False


def _cleaned(value: JsonValue) -> JsonValue:
    """A copy of ``value`` with non-finite floats as ``None`` and surrogates as U+FFFD."""
    if not isinstance(value, _CONTAINERS):
        return _safe_leaf(value)
    root: dict[JsonValue, JsonValue] | list[JsonValue] = {} if isinstance(value, dict) else []
    stack: list[tuple[JsonValue, dict[JsonValue, JsonValue] | list[JsonValue]]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in pairs:
            kept: JsonValue
            if isinstance(item, _CONTAINERS):
                kept = {} if isinstance(item, dict) else []
                stack.append((item, kept))
            else:
                kept = _safe_leaf(item)
            if isinstance(target, dict):
                target[_safe_leaf(key)] = kept
            else:
                target.append(kept)
    return root


def json_safe(value: JsonValue) -> JsonValue:
    """``value`` as data every JSON writer accepts and every UTF-8 output can hold.

    Non-finite floats become ``None`` (``JSON.stringify`` writes ``null``), lone
    surrogates U+FFFD, tuples lists. A clean value is returned as is (the
    common case costs one walk and no copy). Never recurses.
    """
    return _cleaned(value) if _needs_cleaning(value) else value


#: One encoder for every event line: ``json.dumps`` with any non-default option builds a
#: new ``JSONEncoder`` per call, a cost ``--json`` output paid once per event.
_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def event_json_line(event: Event) -> str:
    """The event as one line of compact-key JSON (no trailing newline), always valid.

    ``allow_nan=False`` holds by construction: :meth:`_EventBase.to_json` is
    :func:`json_safe`. Non-ASCII text is written as is. The common case skips the walk of
    :func:`json_safe`: the plain fields are encoded at once, and only a line that could not
    be (a non-finite float) or holds a lone surrogate is made again from ``to_json``, which
    gives the same line a clean value would have.
    """
    if type(event).to_json is _EventBase.to_json:
        try:
            line: str = _ENCODE(event._fields_json())
        except ValueError:  # a non-finite float
            pass
        else:
            if _SURROGATE.search(line) is None:
                return line
    return _ENCODE(event.to_json())


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """An event class's field names, read once per class (not per event)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The setter of ``cls``'s slot ``name``, for the builders that skip a frozen ``__init__``.

    Raises ``KeyError`` at import if the class has no such slot, so a renamed field
    cannot leave a builder behind.
    """
    setter: Callable[[Any, Any], None] = cls.__dict__[name].__set__
    return setter


class _EventBase:
    type: ClassVar[str]

    def to_json(self) -> dict[str, JsonValue]:
        """The event as a plain JSON object: ``type`` first, ``None`` fields omitted."""
        safe: dict[str, JsonValue] = json_safe(self._fields_json())
        return safe

    def _fields_json(self) -> dict[str, JsonValue]:
        """``type`` and the fields that are not ``None``, as they are (not yet made safe)."""
        out: dict[str, JsonValue] = {"type": self.type}
        for name in _field_names(type(self)):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Status(_EventBase):
    """Lifecycle label; carries the capture-style session id when a CLI reports one."""

    type: ClassVar[str] = "status"
    label: str
    model: str | None = None
    session_id: str | None = None
    detail: str | None = None
    ttft_ms: float | None = None
    elapsed_ms: float | None = None
    cli_version: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta(_EventBase):
    type: ClassVar[str] = "text_delta"
    delta: str


#: The ``delta`` slot's own setter, which a frozen dataclass's ``__init__`` reaches
#: through ``object.__setattr__``. :func:`text_delta` fills a new event with it; a hot
#: loop may do the same in place (``object.__new__(TextDelta)``, then this), saving the
#: call. Only ever on an event nobody else has seen yet.
fill_text_delta: Callable[[TextDelta, str], None] = _slot_setter(TextDelta, "delta")


def text_delta(delta: str) -> TextDelta:
    """``TextDelta(delta=delta)`` at about half the cost: a parser's most frequent event.

    The frozen ``__init__`` is a keyword call that writes its one field through
    ``object.__setattr__``; this writes the slot directly. The event is the same
    (equal, hashable, frozen).
    """
    event = object.__new__(TextDelta)
    fill_text_delta(event, delta)
    return event


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingStart(_EventBase):
    type: ClassVar[str] = "thinking_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingDelta(_EventBase):
    type: ClassVar[str] = "thinking_delta"
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingEnd(_EventBase):
    type: ClassVar[str] = "thinking_end"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUse(_EventBase):
    type: ClassVar[str] = "tool_use"
    id: str | None
    name: str | None
    input: JsonValue
    started_at_ms: float | None = None

    def to_json(self) -> dict[str, JsonValue]:
        # ``id``, ``name`` and ``input`` are always present (``None`` allowed).
        out: dict[str, JsonValue] = {
            "type": self.type,
            "id": self.id,
            "name": self.name,
            "input": self.input,
        }
        if self.started_at_ms is not None:
            out["started_at_ms"] = self.started_at_ms
        safe: dict[str, JsonValue] = json_safe(out)
        return safe


_set_tool_use_id = _slot_setter(ToolUse, "id")
_set_tool_use_name = _slot_setter(ToolUse, "name")
_set_tool_use_input = _slot_setter(ToolUse, "input")
_set_tool_use_started_at_ms = _slot_setter(ToolUse, "started_at_ms")


def tool_use(id: str | None, name: str | None, input: JsonValue) -> ToolUse:
    """``ToolUse(id=id, name=name, input=input)`` without the frozen ``__init__``.

    A json-event-stream parser builds one per tool call; like :func:`text_delta` this
    fills the slots directly (``started_at_ms`` left at its default, ``None``). The
    event is the same (equal, hashable when its input is, frozen).
    """
    event = object.__new__(ToolUse)
    _set_tool_use_id(event, id)
    _set_tool_use_name(event, name)
    _set_tool_use_input(event, input)
    _set_tool_use_started_at_ms(event, None)
    return event


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInputDelta(_EventBase):
    """A live fragment of a tool's JSON input (not persisted upstream)."""

    type: ClassVar[str] = "tool_input_delta"
    id: str
    name: str
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInFlight(_EventBase):
    type: ClassVar[str] = "tool_in_flight"
    id: str
    name: str
    input: JsonValue

    def to_json(self) -> dict[str, JsonValue]:
        out = {"type": self.type, "id": self.id, "name": self.name, "input": self.input}
        safe: dict[str, JsonValue] = json_safe(out)
        return safe


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult(_EventBase):
    type: ClassVar[str] = "tool_result"
    tool_use_id: str | None
    content: str
    is_error: bool = False

    def to_json(self) -> dict[str, JsonValue]:
        out = {
            "type": self.type,
            "tool_use_id": self.tool_use_id,
            "content": self.content,
            "is_error": self.is_error,
        }
        safe: dict[str, JsonValue] = json_safe(out)
        return safe


_set_tool_result_tool_use_id = _slot_setter(ToolResult, "tool_use_id")
_set_tool_result_content = _slot_setter(ToolResult, "content")
_set_tool_result_is_error = _slot_setter(ToolResult, "is_error")


def tool_result(tool_use_id: str | None, content: str, is_error: bool) -> ToolResult:
    """``ToolResult(tool_use_id=..., content=..., is_error=...)`` without the frozen ``__init__``.

    A json-event-stream parser builds one per finished tool; like :func:`text_delta`
    this fills the slots directly. The event is the same (equal, hashable, frozen).
    """
    event = object.__new__(ToolResult)
    _set_tool_result_tool_use_id(event, tool_use_id)
    _set_tool_result_content(event, content)
    _set_tool_result_is_error(event, is_error)
    return event


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage(_EventBase):
    """Token accounting, cost and duration when the CLI reports them.

    ``usage`` holds token counts; normalized keys are ``input_tokens``,
    ``output_tokens``, ``cached_read_tokens``, ``cached_write_tokens``,
    ``thought_tokens``, ``total_tokens``; a CLI's own extra keys pass through.
    """

    type: ClassVar[str] = "usage"
    usage: dict[str, JsonValue] | None = None
    cost_usd: float | None = None
    duration_ms: float | None = None
    stop_reason: str | None = None
    is_error: bool | None = None
    model_usage: JsonValue = None
    provider: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEnd(_EventBase):
    type: ClassVar[str] = "turn_end"
    stop_reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Error(_EventBase):
    """An in-stream error. ``terminal`` marks errors that end the run."""

    type: ClassVar[str] = "error"
    message: str
    code: str | None = None
    terminal: bool | None = None
    raw: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Raw(_EventBase):
    """A stdout line no parser claimed (design principle 3: nothing is dropped).

    ``truncated_bytes`` is set when the line was larger than the decoder's
    limit; ``line`` then holds only its beginning.
    """

    type: ClassVar[str] = "raw"
    line: str
    truncated_bytes: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Artifact(_EventBase):
    """A file extracted from a plain stream's ``<artifact>`` block (seed 000 §5.13)."""

    type: ClassVar[str] = "artifact"
    name: str
    identifier: str | None = None
    artifact_type: str | None = None
    path: str | None = None
    source: str = "plain-stream"


@dataclass(frozen=True, slots=True, kw_only=True)
class FabricatedRoleMarker(_EventBase):
    """The model wrote a turn boundary such as ``## user`` (seed 002 §7.5)."""

    type: ClassVar[str] = "fabricated_role_marker"
    marker: str
    message_id: str | None = None


Event = (
    Status
    | TextDelta
    | ThinkingStart
    | ThinkingDelta
    | ThinkingEnd
    | ToolUse
    | ToolInputDelta
    | ToolInFlight
    | ToolResult
    | Usage
    | TurnEnd
    | Error
    | Raw
    | Artifact
    | FabricatedRoleMarker
)

_CLASSES: tuple[type[_EventBase], ...] = (
    Status,
    TextDelta,
    ThinkingStart,
    ThinkingDelta,
    ThinkingEnd,
    ToolUse,
    ToolInputDelta,
    ToolInFlight,
    ToolResult,
    Usage,
    TurnEnd,
    Error,
    Raw,
    Artifact,
    FabricatedRoleMarker,
)

#: ``type`` string -> event class.
EVENT_TYPES: dict[str, type[_EventBase]] = {cls.type: cls for cls in _CLASSES}


def event_from_json(obj: dict[str, JsonValue]) -> Event:
    """Rebuild an event from :meth:`to_json` output. Raises ``ValueError`` on bad input."""
    kind = obj.get("type")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown event type {kind!r}; known: {sorted(EVENT_TYPES)}")
    kwargs = {k: v for k, v in obj.items() if k != "type"}
    try:
        return cls(**kwargs)  # type: ignore[return-value]
    except TypeError as exc:
        raise ValueError(f"bad fields for event type {kind!r}: {exc}") from exc


def events_to_json(events: list[Event]) -> list[dict[str, JsonValue]]:
    return [e.to_json() for e in events]
