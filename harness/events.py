"""The normalized event vocabulary every parser and session emits.

One frozen dataclass per event ``type``; :meth:`to_json` gives the single wire
shape (a plain JSON object with a ``type`` key; optional fields that are
``None`` are omitted). ``harness/schemas/events.schema.json`` validates it.

Field names are ours (snake_case). Upstream (Open Design ``DaemonAgentPayload``,
reference §1.1) uses camelCase; the mapping:

================================  ==========================================
ours                              upstream
================================  ==========================================
status.session_id                 status.sessionId
status.ttft_ms                    status.ttftMs
status.elapsed_ms                 status.elapsedMs
status.cli_version                status.qodercliVersion
tool_use.started_at_ms            tool_use.startedAt
tool_result.tool_use_id           tool_result.toolUseId
tool_result.is_error              tool_result.isError
usage.cost_usd                    usage.costUsd
usage.duration_ms                 usage.durationMs
usage.stop_reason                 usage.stopReason
usage.is_error                    usage.isError
usage.model_usage                 usage.modelUsage
turn_end.stop_reason              turn_end.stopReason
raw.truncated_bytes               raw.truncated.originalBytes
artifact.artifact_type            artifact.artifactType
fabricated_role_marker.message_id fabricated_role_marker.messageId
================================  ==========================================
"""

from __future__ import annotations

import dataclasses
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
    "events_to_json",
]

#: Any JSON value (the parsed form of ``json.loads``).
JsonValue = Any


class _EventBase:
    type: ClassVar[str]

    def to_json(self) -> dict[str, JsonValue]:
        """The event as a plain JSON object: ``type`` first, ``None`` fields omitted."""
        out: dict[str, JsonValue] = {"type": self.type}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None:
                continue
            out[f.name] = value
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
        return out


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
        return {"type": self.type, "id": self.id, "name": self.name, "input": self.input}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult(_EventBase):
    type: ClassVar[str] = "tool_result"
    tool_use_id: str | None
    content: str
    is_error: bool = False

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "type": self.type,
            "tool_use_id": self.tool_use_id,
            "content": self.content,
            "is_error": self.is_error,
        }


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
