"""Validation of every ACP frame against the vendored official schema (wire §A.1.1).

Design: docs/design/protocols.md#harness.protocols.acp.schema
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import jsonschema  # type: ignore[import-untyped,unused-ignore]

from harness.protocols.jsonrpc import (
    JSONRPC_2,
    ErrorResponse,
    Invalid,
    Notification,
    Request,
    RequestId,
    Response,
    classify,
    envelope_problems,
)
from harness.protocols.options import AcpEnvFormat
from harness.protocols.schema_dispatch import DispatchingValidator
from harness.schemas import load_schema

__all__ = [
    "LOCAL_SHAPES",
    "MethodDef",
    "Side",
    "def_for",
    "describe",
    "excerpt",
    "known_methods",
    "validate_incoming",
    "validate_outgoing",
]


STABLE = "acp/v1/schema.json"
UNSTABLE = "acp/v1/schema.unstable.json"

#: Who sends a frame: the client (us) or the agent.
Side = Literal["client", "agent"]
Kind = Literal["request", "notification", "response"]

#: Shapes for methods the vendored release does not define (VENDORED.md).
LOCAL_SHAPES: dict[tuple[str, str], dict[str, Any]] = {
    ("session/set_model", "request"): {
        "type": "object",
        "properties": {"sessionId": {"type": "string"}, "modelId": {"type": "string"}},
        "required": ["sessionId", "modelId"],
    },
    ("session/set_model", "response"): {"type": ["object", "null"]},
    # seed 000 "AMR compaction continuation (ACP extension v1)": ``_session/continue``
    # carries the session and the cursor and nothing else (no prompt: the model loop goes
    # on without a user message); it is answered like ``session/prompt``.
    ("_session/continue", "request"): {
        "type": "object",
        "properties": {
            "sessionId": {"type": "string", "minLength": 1},
            "continuation": {
                "type": "object",
                "properties": {
                    "version": {"const": 1},
                    "userMessageId": {"type": "string", "minLength": 1, "maxLength": 256},
                    "assistantMessageId": {"type": "string", "minLength": 1, "maxLength": 256},
                    "toolResultsCommitted": {"const": True},
                },
                "required": [
                    "version",
                    "userMessageId",
                    "assistantMessageId",
                    "toolResultsCommitted",
                ],
                "additionalProperties": False,
            },
        },
        "required": ["sessionId", "continuation"],
        "additionalProperties": False,
    },
    ("_session/continue", "response"): {
        "type": "object",
        "properties": {"stopReason": {"type": "string"}},
        "required": ["stopReason"],
    },
}

#: At most this many problems are reported per frame, each at most this long.
_MAX_PROBLEMS = 5
_MAX_PROBLEM_CHARS = 240

_SUFFIX_KIND: dict[str, Kind] = {
    "Request": "request",
    "Notification": "notification",
    "Response": "response",
}


@dataclass(frozen=True)
class MethodDef:
    """Where the shape of one ``(method, kind)`` comes from."""

    method: str
    kind: str
    #: ``acp/v1/schema.json``, ``acp/v1/schema.unstable.json`` or ``local``.
    source: str
    #: The ``$def`` name (``None`` for a local shape).
    name: str | None
    #: ``x-side``: ``agent`` = the agent handles the request, ``client`` = we do.
    side: str


@cache
def _index(source: str) -> dict[tuple[str, str], MethodDef]:
    defs = load_schema(source)["$defs"]
    out: dict[tuple[str, str], MethodDef] = {}
    for name, body in defs.items():
        method = body.get("x-method") if isinstance(body, dict) else None
        if not isinstance(method, str):
            continue
        kind = next((k for suffix, k in _SUFFIX_KIND.items() if name.endswith(suffix)), None)
        if kind is None:
            continue
        out[(method, kind)] = MethodDef(method, kind, source, name, str(body.get("x-side")))
    return out


def def_for(method: str, kind: str) -> MethodDef | None:
    """The ``$def`` for ``(method, kind)``: stable, else unstable, else a local shape."""
    for source in (STABLE, UNSTABLE):
        found = _index(source).get((method, kind))
        if found is not None:
            return found
    if (method, kind) in LOCAL_SHAPES:
        side = "agent"  # session/set_model is handled by the agent, like set_config_option
        return MethodDef(method, kind, "local", None, side)
    return None


def known_methods() -> frozenset[str]:
    """Every method name any source defines."""
    names = {m for source in (STABLE, UNSTABLE) for (m, _k) in _index(source)}
    names.update(m for (m, _k) in LOCAL_SHAPES)
    return frozenset(names)


@cache
def _validator(source: str, name: str) -> jsonschema.Draft202012Validator:
    full = load_schema(source)
    wrapper = {"$schema": full["$schema"], "$ref": f"#/$defs/{name}", "$defs": full["$defs"]}
    return DispatchingValidator(wrapper)  # same verdicts, tagged oneOf checked once


@cache
def _local_validator(method: str, kind: str) -> jsonschema.Draft202012Validator:
    return DispatchingValidator(LOCAL_SHAPES[(method, kind)])


def _bounded(text: str) -> str:
    return text if len(text) <= _MAX_PROBLEM_CHARS else text[: _MAX_PROBLEM_CHARS - 1] + "…"


def _path(prefix: str, parts: Iterator[Any] | Any) -> str:
    out = prefix
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _errors(validator: jsonschema.Draft202012Validator, value: Any, where: str) -> list[str]:
    problems: list[str] = []
    for error in validator.iter_errors(value):
        problems.append(_bounded(f"{_path(where, error.absolute_path)}: {error.message}"))
        if len(problems) >= _MAX_PROBLEMS:
            break
    return problems


def _check(found: MethodDef, value: Any, where: str) -> list[str]:
    if found.name is None:
        validator = _local_validator(found.method, found.kind)
    else:
        validator = _validator(found.source, found.name)
    return _errors(validator, value, where)


def _error_object(value: Any) -> list[str]:
    return _errors(_validator(STABLE, "Error"), value, "error")


def _params(message: Request | Notification) -> Any:
    # JSON-RPC lets a peer omit params; ACP methods then see an empty object.
    return {} if message.params is None else message.params


def _frame_problems(
    frame: Any, pending_methods: Mapping[RequestId, str], sender: Side
) -> list[str]:
    """Shared body of both directions; ``sender`` wrote ``frame``."""
    problems = envelope_problems(frame, JSONRPC_2)
    message = classify(frame)
    if isinstance(message, Invalid):
        return problems[:_MAX_PROBLEMS]
    # x-side names who *handles* a request or notification: the other party.
    handler = "agent" if sender == "client" else "client"
    if isinstance(message, (Request, Notification)):
        kind = "request" if isinstance(message, Request) else "notification"
        found = def_for(message.method, kind)
        other = "notification" if kind == "request" else "request"
        if found is None and def_for(message.method, other) is not None:
            problems.append(_bounded(f"{message.method!r} is a {other}, not a {kind}"))
        elif found is None:
            if not message.method.startswith("_"):  # `_`-prefixed = extension methods
                problems.append(_bounded(f"{kind} method {message.method!r} is not in the schema"))
        elif found.side not in (handler, "protocol", "both"):
            problems.append(
                _bounded(
                    f"{kind} {message.method!r} is handled by the {found.side}; "
                    f"the {sender} must not send it"
                )
            )
        else:
            problems.extend(_check(found, _params(message), "params"))
    elif isinstance(message, Response):
        method = pending_methods.get(message.id)
        if method is None:
            problems.append(_bounded(f"response to id {message.id!r} answers no pending request"))
        else:
            found = def_for(method, "response")
            if found is not None:
                problems.extend(_check(found, message.result, "result"))
            elif not method.startswith("_"):
                problems.append(_bounded(f"no result shape for method {method!r}"))
    else:
        assert isinstance(message, ErrorResponse)
        if isinstance(frame, dict):
            problems.extend(_error_object(frame.get("error")))
    return problems[:_MAX_PROBLEMS]


def _env_as_array(params: Any) -> tuple[Any, list[str]]:
    """MAP env format: check each stdio env is a string map; return the array twin."""
    if not isinstance(params, dict) or not isinstance(params.get("mcpServers"), list):
        return params, []
    problems: list[str] = []
    servers: list[Any] = []
    for index, server in enumerate(params["mcpServers"]):
        env = server.get("env") if isinstance(server, dict) else None
        stdio = isinstance(server, dict) and server.get("type", "stdio") == "stdio"
        if stdio and isinstance(env, dict):
            bad = [k for k, v in env.items() if not isinstance(v, str)]
            if bad:
                problems.append(f"params.mcpServers[{index}].env: values must be strings")
            twin = [{"name": k, "value": v} for k, v in env.items()]
            servers.append({**server, "env": twin})
        else:
            servers.append(server)
    return {**params, "mcpServers": servers}, problems


def validate_outgoing(
    frame: Any,
    pending_methods: Mapping[RequestId, str] | None = None,
    *,
    env_format: AcpEnvFormat = AcpEnvFormat.ARRAY,
) -> list[str]:
    """Problems with a frame the client (we) writes; ``[]`` when it is valid.

    ``pending_methods`` maps the ids of the agent's requests we answer to their
    methods (a response is checked against the result ``$def`` of that method).

    ``env_format=MAP`` (ref §2.6: reasonix >= 1.0 takes ``env`` as a map) checks a
    stdio server's ``env`` as a string map, and the rest of the frame against the
    schema as if the map were the ``[{name, value}]`` array the schema defines.
    """
    pending = pending_methods or {}
    problems: list[str] = []
    if (
        env_format is AcpEnvFormat.MAP
        and isinstance(frame, dict)
        and frame.get("method") in ("session/new", "session/load")
    ):
        params, problems = _env_as_array(frame.get("params"))
        frame = {**frame, "params": params}
    return (problems + _frame_problems(frame, pending, "client"))[:_MAX_PROBLEMS]


def validate_incoming(
    frame: Any, pending_methods: Mapping[RequestId, str] | None = None
) -> list[str]:
    """Problems with a frame the agent wrote; ``[]`` when it is valid.

    ``pending_methods`` maps the ids of *our* outstanding requests to their
    methods, so a response is checked against the right result ``$def``.
    """
    return _frame_problems(frame, pending_methods or {}, "agent")


def describe(problems: list[str]) -> str:
    """One bounded line for a ``Status(label='schema_violation', detail=...)``."""
    if not problems:
        return ""
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    return _bounded(problems[0]) + more


def excerpt(value: Any, limit: int = 200) -> str:
    """A short JSON excerpt of ``value`` for error messages."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
