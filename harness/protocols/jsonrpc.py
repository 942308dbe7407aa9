"""Small JSON-RPC 2.0 helpers shared by the two-way sessions (ACP, codex app-server).

Design: docs/design/protocols.md#harness.protocols.jsonrpc
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.streams.base import js_trim
from harness.streams.decoder import (
    DEFAULT_HEAD_BYTES,
    Line,
    LineDecoder,
    OversizeLine,
    dumps_json,
    loads_json,
)

__all__ = [
    "CODEX_APP_SERVER",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "JSONRPC_2",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "Dialect",
    "ErrorResponse",
    "Invalid",
    "JsonItem",
    "JsonLineReader",
    "Message",
    "NonJsonLine",
    "Notification",
    "OversizeItem",
    "ReadItem",
    "Request",
    "RequestId",
    "Response",
    "classify",
    "encode",
    "envelope_problems",
    "error_response",
    "is_request_id",
    "loads_strict",
    "notification",
    "request",
    "response",
]

#: JSON-RPC 2.0 and ACP error codes (wire §A.1.3 ``ErrorCode``).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

#: A JSON-RPC request id as this module accepts it.
RequestId = int | str


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one protocol spells the JSON-RPC envelope."""

    name: str
    #: Write ``"jsonrpc": "2.0"`` on every frame, and report its absence on input.
    version_member: bool


#: JSON-RPC 2.0 as ACP uses it.
JSONRPC_2 = Dialect("json-rpc-2.0", version_member=True)
#: codex app-server: JSON-RPC 2.0 "with the jsonrpc header omitted on the wire" (wire §A.0).
CODEX_APP_SERVER = Dialect("codex-app-server", version_member=False)


# -- building ------------------------------------------------------------------------


def _envelope(dialect: Dialect) -> dict[str, Any]:
    return {"jsonrpc": "2.0"} if dialect.version_member else {}


def request(
    request_id: RequestId, method: str, params: Any, dialect: Dialect = JSONRPC_2
) -> dict[str, Any]:
    if not is_request_id(request_id):
        raise ValueError(f"request id must be a str or an int, got {request_id!r}")
    return {**_envelope(dialect), "id": request_id, "method": method, "params": params}


def notification(method: str, params: Any, dialect: Dialect = JSONRPC_2) -> dict[str, Any]:
    """A notification has no ``id`` (ACP ``session/cancel`` is one, wire §A.1.2)."""
    return {**_envelope(dialect), "method": method, "params": params}


def response(
    request_id: RequestId | None, result: Any, dialect: Dialect = JSONRPC_2
) -> dict[str, Any]:
    return {**_envelope(dialect), "id": request_id, "result": result}


def error_response(
    request_id: RequestId | None,
    code: int,
    message: str,
    data: Any = None,
    dialect: Dialect = JSONRPC_2,
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {**_envelope(dialect), "id": request_id, "error": error}


#: Characters a line-splitting peer may wrongly treat as line ends (wire §A.0: Node
#: readline and Python ``str.splitlines``). JSON allows them raw inside strings; we
#: write them escaped so no peer ever sees a frame break in two.
_LINE_LIKE = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def encode(frame: Mapping[str, Any]) -> bytes:
    """One frame as one line: compact JSON, UTF-8, ``\\n``-terminated.

    wire §A.0: "Messages are delimited by newlines and MUST NOT contain embedded
    newlines". ``json.dumps`` escapes control characters; U+2028, U+2029 and
    U+0085 are escaped here too (rule ACP-FRAME-004). A non-finite number is refused
    (``ValueError``: it is not JSON); a lone surrogate is written as its escape
    (:func:`harness.streams.decoder.dumps_json`).
    """
    text = dumps_json(frame, strict=True)
    if any(ch in text for ch in _LINE_LIKE):
        for raw, escaped in _LINE_LIKE.items():
            text = text.replace(raw, escaped)
    return (text + "\n").encode("utf-8")


# -- classifying ---------------------------------------------------------------------


def is_request_id(value: Any) -> bool:
    """A string or an integer; ``bool`` is rejected (``True == 1`` in Python)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


@dataclass(frozen=True, slots=True)
class Request:
    id: RequestId
    method: str
    params: Any


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: Any


@dataclass(frozen=True, slots=True)
class Response:
    id: RequestId
    result: Any


@dataclass(frozen=True, slots=True)
class ErrorResponse:
    """An error response; ``id`` is ``None`` when the peer could not tell which request."""

    id: RequestId | None
    code: int | None
    message: str | None
    data: Any


@dataclass(frozen=True, slots=True)
class Invalid:
    """A value that is not a usable JSON-RPC message; ``reason`` says why.

    ``answerable`` is True when the value looked like a request (it has a
    ``method`` and an ``id`` member): JSON-RPC then wants an ``Invalid Request``
    error reply with id ``null``.
    """

    reason: str
    answerable: bool = False


Message = Request | Notification | Response | ErrorResponse | Invalid


def classify(value: Any) -> Message:
    """What kind of JSON-RPC message ``value`` is (lenient on the ``jsonrpc`` member).

    The ``jsonrpc`` member does not change the kind: a dialect's version rule is
    checked by :func:`envelope_problems`, so a peer that omits it is still
    understood and the omission is reported, not fatal.
    """
    if not isinstance(value, dict):
        return Invalid(f"a JSON-RPC message is an object, got {type(value).__name__}")
    if "method" in value:
        method = value["method"]
        if not isinstance(method, str):
            return Invalid(
                f"method must be a string, got {type(method).__name__}", answerable="id" in value
            )
        params = value.get("params")
        if "id" not in value:
            return Notification(method, params)
        request_id = value["id"]
        if not is_request_id(request_id):
            return Invalid(
                f"request id must be a string or an integer, got {request_id!r:.40}",
                answerable=True,
            )
        return Request(request_id, method, params)
    if "id" not in value:
        return Invalid("neither a request, a notification nor a response (no method, no id)")
    request_id = value["id"]
    if request_id is not None and not is_request_id(request_id):
        return Invalid(f"response id must be a string, an integer or null, got {request_id!r:.40}")
    if "error" in value:
        error = value["error"]
        if not isinstance(error, dict):
            return ErrorResponse(request_id, None, None, error)
        code = error.get("code")
        message = error.get("message")
        return ErrorResponse(
            request_id,
            code if isinstance(code, int) and not isinstance(code, bool) else None,
            message if isinstance(message, str) else None,
            error.get("data"),
        )
    if "result" in value:
        if request_id is None:
            return Invalid("a result response needs the id of the request it answers")
        return Response(request_id, value["result"])
    return Invalid("response has neither result nor error")


def envelope_problems(value: Any, dialect: Dialect = JSONRPC_2) -> list[str]:
    """JSON-RPC 2.0 envelope rules the message breaks, as short sentences."""
    if not isinstance(value, dict):
        return [f"a JSON-RPC message is an object, got {type(value).__name__}"]
    problems: list[str] = []
    version = value.get("jsonrpc")
    if dialect.version_member and version != "2.0":
        problems.append(f'jsonrpc must be "2.0", got {version!r:.40}')
    if "result" in value and "error" in value:
        problems.append("a response carries both result and error")
    if "params" in value and not isinstance(value["params"], (dict, list)):
        problems.append("params must be an object or an array")
    if "error" in value and "method" not in value:
        error = value["error"]
        if not isinstance(error, dict):
            problems.append("error must be an object")
        else:
            code = error.get("code")
            if not isinstance(code, int) or isinstance(code, bool):
                problems.append("error.code must be an integer")
            if not isinstance(error.get("message"), str):
                problems.append("error.message must be a string")
    message = classify(value)
    if isinstance(message, Invalid):
        problems.append(message.reason)
    return problems


# -- reading -------------------------------------------------------------------------


def loads_strict(text: str) -> Any:
    """``json.loads`` as strict as JavaScript's ``JSON.parse`` (no NaN/Infinity).

    Lone surrogate escapes become U+FFFD (:func:`harness.streams.decoder.loads_json`).
    Raises ``ValueError`` (``json.JSONDecodeError``) or ``RecursionError``.
    """
    return loads_json(text)


@dataclass(frozen=True, slots=True)
class JsonItem:
    """One JSON value; ``text`` is the (trimmed) text it was parsed from."""

    value: Any
    text: str
    #: How many stdout lines it spanned (> 1 for a reassembled pretty-printed message).
    lines: int = 1


@dataclass(frozen=True, slots=True)
class NonJsonLine:
    """A non-blank stdout line that is not JSON (and not part of a reassembled value)."""

    text: str


@dataclass(frozen=True, slots=True)
class OversizeItem:
    """A line longer than ``max_line_bytes``: its head and true byte count."""

    head: str
    size: int


ReadItem = JsonItem | NonJsonLine | OversizeItem

#: ref §2.9: the multi-line aggregate is bounded to 256 lines and 128 000 characters.
MAX_AGGREGATE_LINES = 256
MAX_AGGREGATE_CHARS = 128_000


def _incomplete(exc: json.JSONDecodeError, text: str) -> bool:
    """The parser ran out of input (more lines could complete it), as opposed to
    meeting a character that can never be valid."""
    return exc.pos >= len(text.rstrip())


def _looks_like_message(value: Any) -> bool:
    return isinstance(value, dict) and bool({"jsonrpc", "method", "id"} & value.keys())


class JsonLineReader:
    """stdout bytes -> :data:`ReadItem` s, in any chunking.

    Framing is :class:`~harness.streams.decoder.LineDecoder` (LF only, one CR
    stripped, bounded lines). Each non-blank line is trimmed like JS ``trim`` and
    parsed strictly.

    **Pretty-printed JSON (ref §2.9).** ACP forbids embedded newlines (wire §A.0),
    yet upstream tolerates agents that pretty-print, and so do we: a line that fails
    to parse *because input ended* and starts with ``{`` or ``[`` opens a bounded
    aggregate (≤ :data:`MAX_AGGREGATE_LINES` lines, ≤ :data:`MAX_AGGREGATE_CHARS`
    characters). Each further line is appended and the whole is re-parsed. When the
    aggregate parses, it is one :class:`JsonItem`. When it can no longer become
    valid, grows past a bound, or meets a line that is itself a complete one-line
    JSON-RPC message, its first line is reported as non-JSON and the other lines
    are read again one by one, so a complete frame is never swallowed (a stray
    ``{`` on stdout cannot hide the next request; rule ACP-FRAME-002).
    """

    def __init__(self, max_line_bytes: int, *, head_bytes: int = DEFAULT_HEAD_BYTES) -> None:
        self._decoder = LineDecoder(max_line_bytes, head_bytes=head_bytes)
        self._aggregate: list[str] | None = None
        self._aggregate_chars = 0

    @property
    def pending_lines(self) -> int:
        """Lines held in an open multi-line aggregate."""
        return len(self._aggregate) if self._aggregate is not None else 0

    def feed(self, data: bytes) -> list[ReadItem]:
        out: list[ReadItem] = []
        for item in self._decoder.feed(data):
            self._item(item, out)
        return out

    def finish(self) -> list[ReadItem]:
        out: list[ReadItem] = []
        for item in self._decoder.finish():
            self._item(item, out)
        while self._aggregate is not None:  # a replay may open a new aggregate
            self._replay(out)
        return out

    # -- internals ----------------------------------------------------------------

    def _item(self, item: Line | OversizeLine, out: list[ReadItem]) -> None:
        if isinstance(item, OversizeLine):
            if self._aggregate is not None:
                self._replay(out)
            out.append(OversizeItem(item.head, item.size))
            return
        text = js_trim(item.text)
        if text:
            self._line(text, out)

    def _line(self, text: str, out: list[ReadItem]) -> None:
        if self._aggregate is not None:
            self._extend(text, out)
            return
        try:
            out.append(JsonItem(loads_strict(text), text))
        except json.JSONDecodeError as exc:
            if text[0] in "{[" and _incomplete(exc, text) and len(text) <= MAX_AGGREGATE_CHARS:
                self._aggregate = [text]
                self._aggregate_chars = len(text)
            else:
                out.append(NonJsonLine(text))
        except (ValueError, RecursionError):
            out.append(NonJsonLine(text))

    def _extend(self, text: str, out: list[ReadItem]) -> None:
        assert self._aggregate is not None
        standalone = self._standalone_message(text)
        if standalone is not None:
            # A complete one-line message is never absorbed into an aggregate.
            self._replay(out)
            out.append(standalone)
            return
        self._aggregate.append(text)
        self._aggregate_chars += len(text) + 1
        if (
            len(self._aggregate) > MAX_AGGREGATE_LINES
            or self._aggregate_chars > MAX_AGGREGATE_CHARS
        ):
            self._replay(out)
            return
        joined = "\n".join(self._aggregate)
        try:
            value = loads_strict(joined)
        except json.JSONDecodeError as exc:
            if not _incomplete(exc, joined):
                self._replay(out)
            return
        except (ValueError, RecursionError):
            self._replay(out)
            return
        lines = len(self._aggregate)
        self._aggregate = None
        self._aggregate_chars = 0
        out.append(JsonItem(value, joined, lines))

    @staticmethod
    def _standalone_message(text: str) -> JsonItem | None:
        if text[0] != "{":
            return None
        try:
            value = loads_strict(text)
        except (ValueError, RecursionError):
            return None
        return JsonItem(value, text) if _looks_like_message(value) else None

    def _replay(self, out: list[ReadItem]) -> None:
        """Give up on the aggregate: its first line is not JSON; re-read the rest."""
        assert self._aggregate is not None
        first, *rest = self._aggregate
        self._aggregate = None
        self._aggregate_chars = 0
        out.append(NonJsonLine(first))
        for text in rest:
            self._line(text, out)
