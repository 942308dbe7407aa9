"""Frames of the dsh-profile-jsonl protocol, generation 1: validation and builders.

The DeepSeek Harness ``open-design`` profile speaks one JSON object per line
(seed 001 §6). This module turns a parsed JSON value into a typed runtime
frame, or raises :class:`FrameError`, and builds the two host commands
(``execute``, ``cancel``). ``harness/schemas/dsh-profile-v1.schema.json`` is
the same contract as a JSON Schema; the tests check that both accept exactly
the same frames.

Validation details name the FIELD that is wrong, never its value (ref §2.8
"Validation messages name fields, never values"; seed 001 §6 "Prompts,
credentials, and raw tool output must not be logged"). Unknown extra
properties are allowed, as upstream allows them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from harness.errors import HarnessError
from harness.protocols.base import SessionRequest
from harness.schemas import load_schema
from harness.streams.decoder import dumps_json, loads_json

__all__ = [
    "COMPATIBILITY_GENERATION",
    "HOST_COMMAND_TYPES",
    "PROTOCOL_VERSION",
    "RESULT_STATUSES",
    "RUNTIME",
    "RUNTIME_FRAME_TYPES",
    "SCHEMA_NAME",
    "ContentFrame",
    "DshRequestError",
    "FrameError",
    "IdentityFrame",
    "ProtocolErrorFrame",
    "ResultFrame",
    "RuntimeFrame",
    "SessionFrame",
    "ToolCallFrame",
    "ToolResultFrame",
    "UsageFrame",
    "WireError",
    "build_cancel",
    "build_execute",
    "encode_frame",
    "load_json",
    "parse_host_command",
    "parse_model",
    "parse_probe_stdout",
    "parse_runtime_frame",
    "schema_for",
    "tool_input",
]

#: ``v`` and ``protocol_version`` of generation 1 (seed 001 §1, §5).
PROTOCOL_VERSION = 1
#: The profile's runtime identity (seed 001 §5, ref §2.8).
RUNTIME = "open-design"
SCHEMA_NAME = "dsh-profile-v1.schema.json"
#: ref §2.8: optional opaque token in probe/ready.
COMPATIBILITY_GENERATION = re.compile(r"[A-Za-z0-9._:-]{1,128}")
RUNTIME_FRAME_TYPES = (
    "probe",
    "ready",
    "session",
    "thinking",
    "text",
    "tool_call",
    "tool_result",
    "usage",
    "result",
    "protocol_error",
)
HOST_COMMAND_TYPES = ("execute", "cancel")
RESULT_STATUSES = ("completed", "cancelled", "failed")
_CAPABILITIES = ("session_resume", "session_cancel", "structured_events")
#: POSIX ``/x``, Windows ``C:\\x`` / ``C:/x``, UNC ``\\\\server\\share`` (seed 001 §6 "absolute").
_ABSOLUTE_CWD = re.compile(r"(?:/|[A-Za-z]:[\\/]|\\\\)")

ResultStatus = Literal["completed", "cancelled", "failed"]
Number = int | float


class FrameError(ValueError):
    """A JSON value that is not a generation-1 frame; ``detail`` names the field."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class DshRequestError(HarnessError, ValueError):
    """A :class:`SessionRequest` that cannot become an ``execute`` command."""

    code = "DSH_PROFILE_INVALID_REQUEST"

    def __init__(self, field: str, problem: str, *, rule: str) -> None:
        super().__init__(f"DeepSeek Harness request field {field!r}: {problem}", rule=rule)
        self.field = field


# -- typed frames -------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class IdentityFrame:
    """``probe`` or ``ready`` (seed 001 §5)."""

    type: Literal["probe", "ready"]
    plugin_version: str
    compatibility_generation: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionFrame:
    request_id: str
    session_id: str
    resumed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ContentFrame:
    """``thinking`` or ``text``; ``content`` may be empty."""

    type: Literal["thinking", "text"]
    request_id: str
    content: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallFrame:
    request_id: str
    call_id: str
    name: str
    #: The JSON text of the arguments (seed 001 §6 "JSON arguments").
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultFrame:
    request_id: str
    call_id: str
    name: str
    output: str
    is_error: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageFrame:
    request_id: str
    provider: str
    model: str
    input_tokens: Number
    output_tokens: Number
    cache_read_tokens: Number | None = None
    cache_write_tokens: Number | None = None


@dataclass(frozen=True, slots=True)
class WireError:
    code: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultFrame:
    request_id: str
    status: ResultStatus
    session_id: str
    resume_rejected: bool
    output: str | None = None
    stop_reason: str | None = None
    error: WireError | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProtocolErrorFrame:
    code: str
    message: str
    request_id: str | None = None


RuntimeFrame = (
    IdentityFrame
    | SessionFrame
    | ContentFrame
    | ToolCallFrame
    | ToolResultFrame
    | UsageFrame
    | ResultFrame
    | ProtocolErrorFrame
)


# -- field checks (messages name the field, never the value) -----------------


def _object(value: object, label: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FrameError(f"{label} must be a JSON object")
    return value


def _string(obj: Mapping[str, Any], field: str, *, label: str | None = None) -> str:
    found = obj.get(field)
    if not isinstance(found, str) or not found:
        raise FrameError(f"{label or field} must be a non-empty string")
    return found


def _optional_string(obj: Mapping[str, Any], field: str) -> str | None:
    return None if field not in obj else _string(obj, field)


def _any_string(obj: Mapping[str, Any], field: str) -> str:
    found = obj.get(field)
    if not isinstance(found, str):
        raise FrameError(f"{field} must be a string")
    return found


def _boolean(obj: Mapping[str, Any], field: str) -> bool:
    found = obj.get(field)
    if not isinstance(found, bool):
        raise FrameError(f"{field} must be a boolean")
    return found


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _count(obj: Mapping[str, Any], field: str, *, optional: bool = False) -> Number | None:
    if optional and field not in obj:
        return None
    found = obj.get(field)
    if not _is_number(found) or (isinstance(found, float) and not math.isfinite(found)):
        raise FrameError(f"{field} must be a finite non-negative number")
    assert isinstance(found, (int, float))
    if found < 0:
        raise FrameError(f"{field} must be a finite non-negative number")
    return found


def _equals_one(obj: Mapping[str, Any], field: str) -> None:
    found = obj.get(field)
    if not _is_number(found) or found != PROTOCOL_VERSION:
        raise FrameError(f"{field} must equal {PROTOCOL_VERSION}")


def _identity(frame: Mapping[str, Any], kind: Literal["probe", "ready"]) -> IdentityFrame:
    # ref §2.8 probe/ready; seed 001 §5 "OD requires the runtime identity, protocol
    # version, and phase-required capabilities".
    if frame.get("runtime") != RUNTIME:
        raise FrameError(f"runtime must equal {RUNTIME}")
    _equals_one(frame, "protocol_version")
    plugin_version = _string(frame, "plugin_version")
    generation = frame.get("compatibility_generation")
    if "compatibility_generation" in frame and (
        not isinstance(generation, str) or not COMPATIBILITY_GENERATION.fullmatch(generation)
    ):
        raise FrameError("compatibility_generation must be a bounded opaque token")
    capabilities = _object(frame.get("capabilities"), "capabilities")
    for name in _CAPABILITIES:
        if capabilities.get(name) is not True:
            raise FrameError(f"capabilities.{name} must be true")
    return IdentityFrame(
        type=kind,
        plugin_version=plugin_version,
        compatibility_generation=generation if isinstance(generation, str) else None,
    )


def _wire_error(value: object) -> WireError:
    error = _object(value, "error")
    return WireError(
        _string(error, "code", label="error.code"),
        _string(error, "message", label="error.message"),
    )


def _result(frame: Mapping[str, Any], request_id: str) -> ResultFrame:
    status = frame.get("status")
    if status not in RESULT_STATUSES:
        raise FrameError("status must be completed, cancelled, or failed")
    session_id = _string(frame, "session_id")
    output = _optional_string(frame, "output")
    stop_reason = _optional_string(frame, "stop_reason")
    resume_rejected = _boolean(frame, "resume_rejected")
    error = _wire_error(frame["error"]) if "error" in frame else None
    if status == "failed" and error is None:
        # ref §2.8: "`failed` **must** carry `error`".
        raise FrameError("error is required when status is failed")
    return ResultFrame(
        request_id=request_id,
        status=status,
        session_id=session_id,
        resume_rejected=resume_rejected,
        output=output,
        stop_reason=stop_reason,
        error=error,
    )


def parse_runtime_frame(value: object) -> RuntimeFrame:
    """Validate one runtime frame (ref §2.8 table); raise :class:`FrameError`.

    Run-scoped frames must carry ``request_id`` (seed 001 §6 "every run-scoped
    frame must carry the active request_id"); only ``protocol_error`` may omit it.
    """
    frame = _object(value, "frame")
    _equals_one(frame, "v")
    kind = _string(frame, "type")
    if kind not in RUNTIME_FRAME_TYPES:
        raise FrameError("type is not supported by protocol generation 1")
    if kind in ("probe", "ready"):
        return _identity(frame, "ready" if kind == "ready" else "probe")
    if kind == "protocol_error":
        request = _optional_string(frame, "request_id")
        return ProtocolErrorFrame(
            request_id=request, code=_string(frame, "code"), message=_string(frame, "message")
        )
    request_id = _string(frame, "request_id")
    if kind == "session":
        return SessionFrame(
            request_id=request_id,
            session_id=_string(frame, "session_id"),
            resumed=_boolean(frame, "resumed"),
        )
    if kind in ("thinking", "text"):
        return ContentFrame(
            type="thinking" if kind == "thinking" else "text",
            request_id=request_id,
            content=_any_string(frame, "content"),
        )
    if kind == "tool_call":
        return ToolCallFrame(
            request_id=request_id,
            call_id=_string(frame, "call_id"),
            name=_string(frame, "name"),
            arguments=_any_string(frame, "arguments"),
        )
    if kind == "tool_result":
        return ToolResultFrame(
            request_id=request_id,
            call_id=_string(frame, "call_id"),
            name=_string(frame, "name"),
            output=_any_string(frame, "output"),
            is_error=_boolean(frame, "is_error"),
        )
    if kind == "usage":
        provider = _string(frame, "provider")
        model = _string(frame, "model")
        input_tokens = _count(frame, "input_tokens")
        output_tokens = _count(frame, "output_tokens")
        assert input_tokens is not None and output_tokens is not None
        return UsageFrame(
            request_id=request_id,
            provider=provider,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=_count(frame, "cache_read_tokens", optional=True),
            cache_write_tokens=_count(frame, "cache_write_tokens", optional=True),
        )
    return _result(frame, request_id)


def parse_host_command(value: object) -> dict[str, Any]:
    """Validate one host command (``execute`` or ``cancel``); raise :class:`FrameError`."""
    command = _object(value, "command")
    _equals_one(command, "v")
    kind = _string(command, "type")
    if kind not in HOST_COMMAND_TYPES:
        raise FrameError("type is not a supported host command")
    _string(command, "request_id")
    if kind == "cancel":
        return command
    cwd = _string(command, "cwd")
    if not _ABSOLUTE_CWD.match(cwd):
        raise FrameError("cwd must be an absolute path")
    _any_string(command, "prompt")
    _optional_string(command, "resume_session_id")
    _optional_string(command, "reasoning_effort")
    servers = command.get("mcp_servers")
    if not isinstance(servers, list) or not all(isinstance(s, dict) for s in servers):
        raise FrameError("mcp_servers must be an array of objects")
    if "model" in command:
        model = _object(command["model"], "model")
        _string(model, "provider", label="model.provider")
        _string(model, "id", label="model.id")
    return command


# -- JSON ----------------------------------------------------------------------


def load_json(text: str) -> Any:
    """``json.loads`` as strict as JavaScript's ``JSON.parse`` (no NaN/Infinity).

    Raises ``ValueError`` for anything that is not one JSON value and
    ``RecursionError`` for a value nested deeper than Python's stack allows.
    """
    return loads_json(text)


def tool_input(arguments: str) -> Any:
    """``tool_call.arguments`` -> ``tool_use.input`` (ref §2.8).

    A JSON object is used as is; anything else is kept opaque as
    ``{"raw": arguments}`` (never echoed into an error).
    """
    try:
        value = load_json(arguments)
    except (ValueError, RecursionError):
        return {"raw": arguments}
    return value if isinstance(value, dict) else {"raw": arguments}


def encode_frame(frame: Mapping[str, Any]) -> bytes:
    """One frame as one line: compact JSON, UTF-8, ``\\n``-terminated.

    ``json.dumps`` escapes control characters, so the line never contains a
    raw newline (seed 001 §6: one line is exactly one frame). A non-finite number or a
    lone surrogate from a request field never makes it raise or write invalid JSON
    (:func:`harness.streams.decoder.dumps_json`).
    """
    return (dumps_json(frame) + "\n").encode()


# -- host commands ------------------------------------------------------------


def parse_model(model: str | None) -> dict[str, str] | None:
    """``"provider/model"`` -> ``{"provider", "id"}``; ``None``/empty/``default`` -> ``None``.

    ref §2.8: "`model` parsed from `provider/model`; `default`/empty → omitted;
    malformed → throws". Raises :class:`DshRequestError` (rule DSH-EXEC-MODEL-001).
    """
    normalized = (model or "").strip()
    if not normalized or normalized == "default":
        return None
    separator = normalized.find("/")
    if separator <= 0 or separator == len(normalized) - 1:
        raise DshRequestError(
            "model",
            f"must use provider/model format, got {normalized[:80]!r}",
            rule="DSH-EXEC-MODEL-001",
        )
    return {"provider": normalized[:separator], "id": normalized[separator + 1 :]}


def build_execute(request: SessionRequest) -> dict[str, Any]:
    """The ``execute`` command for ``request`` (seed 001 §6 "Execute").

    ``resume_session_id`` is present only when resuming; ``model`` and
    ``reasoning_effort`` only when chosen. Raises :class:`DshRequestError`
    naming the field (never the prompt) when the result is not a valid command.
    """
    command: dict[str, Any] = {
        "v": PROTOCOL_VERSION,
        "type": "execute",
        "request_id": request.request_id,
        "cwd": request.cwd,
        "prompt": request.prompt,
    }
    if request.resume_session_id:
        command["resume_session_id"] = request.resume_session_id
    model = parse_model(request.model)
    if model is not None:
        command["model"] = model
    if request.reasoning:
        command["reasoning_effort"] = request.reasoning
    command["mcp_servers"] = [dict(server) for server in request.mcp_servers]
    try:
        parse_host_command(command)
    except FrameError as exc:
        field = exc.detail.split(" ", 1)[0]
        raise DshRequestError(field, exc.detail, rule="DSH-EXEC-001") from None
    return command


def build_cancel(request_id: str) -> dict[str, Any]:
    """The ``cancel`` command for the active request (seed 001 §6, §10 step 1)."""
    return {"v": PROTOCOL_VERSION, "type": "cancel", "request_id": request_id}


# -- probe ----------------------------------------------------------------------


def parse_probe_stdout(stdout: str) -> IdentityFrame:
    """Validate ``dsh --profile open-design --probe`` output (seed 001 §5).

    The output must be exactly one non-empty line holding a compatible
    ``probe`` frame. Raises ``ValueError`` naming the problem (never the text),
    as :class:`harness.defs.types.CompatibilityProbe` expects.
    """
    lines = [line for line in stdout.split("\n") if line.strip()]
    if len(lines) != 1:
        raise ValueError(f"probe output must be exactly one JSON line, got {len(lines)} lines")
    try:
        value = load_json(lines[0])
    except (ValueError, RecursionError):
        raise ValueError("probe output is not valid JSON") from None
    try:
        frame = parse_runtime_frame(value)
    except FrameError as exc:
        raise ValueError(f"probe frame is invalid: {exc.detail}") from None
    if not isinstance(frame, IdentityFrame) or frame.type != "probe":
        raise ValueError("probe output: field type must be probe")
    return frame


# -- schema --------------------------------------------------------------------


def schema_for(kind: Literal["any", "runtime", "host"] = "any") -> dict[str, Any]:
    """The JSON Schema for one direction (``runtime``/``host``) or both (``any``)."""
    schema = load_schema(SCHEMA_NAME)
    if kind == "any":
        return schema
    root = "runtimeFrame" if kind == "runtime" else "hostCommand"
    return {
        "$schema": schema["$schema"],
        "$defs": schema["$defs"],
        "$ref": f"#/$defs/{root}",
    }
