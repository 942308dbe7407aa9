"""The model server's typed errors, and each provider's own API error body.

A scenario's ``api_error`` step makes the server fail the request the way the
real API does (rule MODEL-ERR-001, design §Live mode; real-clis.md "How the mock
decides": "HTTP 400 in the provider's own error format"), so each CLI takes its
own error path:

* Anthropic Messages: ``{"type": "error", "error": {"type", "message"}}``
* OpenAI (Responses, Chat Completions): ``{"error": {"message", "type", "code", "param"}}``
* Gemini: ``{"error": {"code": <http status>, "message", "status": "<RPC status>"}}``

The HTTP status is the step's ``status`` (default 500).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.errors import HarnessError

__all__ = [
    "ANTHROPIC_ERROR_TYPES",
    "GOOGLE_RPC_STATUS",
    "OPENAI_ERROR_TYPES",
    "ApiErrorSpec",
    "ModelServerError",
    "NonLoopbackHostError",
    "ServerStateError",
    "UnsatisfiableSchemaError",
    "anthropic_error_body",
    "google_error_body",
    "openai_error_body",
]


class ModelServerError(HarnessError):
    """Base of the scripted model server's errors."""

    code = "MODELSERVER_ERROR"


class NonLoopbackHostError(ModelServerError, ValueError):
    """The server was asked to bind an address other than loopback."""

    code = "MODELSERVER_HOST_NOT_LOOPBACK"

    def __init__(self, host: str) -> None:
        super().__init__(
            f"ModelServer host {host!r} is not a loopback address; only 127.0.0.0/8, ::1 "
            "and 'localhost' are allowed (live mode must not leave this machine)",
            rule="MODEL-BIND-001",
        )
        self.host = host


class ServerStateError(ModelServerError, RuntimeError):
    """start() on a running server, or a URL asked of a stopped one."""

    code = "MODELSERVER_STATE"


class UnsatisfiableSchemaError(ModelServerError):
    """No JSON value satisfies the structured-output schema (or it nests without end)."""

    code = "MODELSERVER_SCHEMA_UNSATISFIABLE"

    def __init__(self, message: str) -> None:
        super().__init__(message, rule="MODEL-STRUCT-001")


@dataclass(frozen=True)
class ApiErrorSpec:
    """What a scenario's ``api_error`` step asks for."""

    message: str
    #: The step's ``code``; used where a provider has a matching error type or code.
    code: str | None = None
    status: int = 500


#: Anthropic's documented error ``type`` per HTTP status.
ANTHROPIC_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

#: OpenAI's error ``type`` per HTTP status.
OPENAI_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    422: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    502: "server_error",
    503: "server_error",
}

#: google.rpc.Code name per HTTP status, as the Gemini API reports it.
GOOGLE_RPC_STATUS: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def anthropic_error_body(spec: ApiErrorSpec) -> dict[str, Any]:
    """Anthropic Messages error body; the step's code is the type when it is one of theirs."""
    known = set(ANTHROPIC_ERROR_TYPES.values())
    kind = spec.code if spec.code in known else _by_status(ANTHROPIC_ERROR_TYPES, spec.status)
    return {"type": "error", "error": {"type": kind or "api_error", "message": spec.message}}


def openai_error_body(spec: ApiErrorSpec) -> dict[str, Any]:
    """OpenAI error body (Responses and Chat Completions share it)."""
    kind = _by_status(OPENAI_ERROR_TYPES, spec.status) or "server_error"
    return {
        "error": {
            "message": spec.message,
            "type": kind,
            "code": spec.code or kind,
            "param": None,
        }
    }


def google_error_body(spec: ApiErrorSpec) -> dict[str, Any]:
    """Gemini API error body: the HTTP status as ``code`` plus the RPC status name."""
    status = _by_status(GOOGLE_RPC_STATUS, spec.status) or "UNKNOWN"
    return {"error": {"code": spec.status, "message": spec.message, "status": status}}


def _by_status(table: dict[int, str], status: int) -> str | None:
    if status in table:
        return table[status]
    if 500 <= status < 600:
        return table.get(500)
    if 400 <= status < 500:
        return table.get(400)
    return None
