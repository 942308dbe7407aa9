"""The request log: one JSON line per request, secrets redacted (MODEL-LOG-001/002).

No request of a live run may leave 127.0.0.1, which a test
proves from this log; the differential check reads which model, tools and roles each
call carried. Every request, answered or not, becomes a :class:`RequestRecord`::

    {"t", "method", "path", "query", "status", "api", "model", "stream", "tool_names",
     "message_roles", "structured", "reply_kind", "segment", "headers"}

Bodies are not logged (they hold the prompt; seed 001 §6: prompts and credentials are
never logged). Headers and query parameters named like credentials (``authorization``,
``x-api-key``, ``cookie``, ``?key=``, ``?sig=``; :func:`harness.secrets.detect.is_secret_name`)
are replaced whole; their values, and anything key-shaped (``sk-…``, ``Bearer …``,
``AIza…``; :mod:`harness.secrets.detect`), are replaced wherever else they occur.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qsl, urlencode

from harness.secrets.detect import is_secret_name
from harness.secrets.redact import SECRET_MARK, Redactor

__all__ = [
    "AUTH_HEADERS",
    "RequestLog",
    "RequestRecord",
    "redact_headers",
    "redact_query",
    "redacted",
]

#: Headers whose whole value is a credential, whatever :func:`is_secret_name` says of others.
AUTH_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "x-auth-token",
    }
)


def _secret_header(name: str) -> bool:
    return name.lower() in AUTH_HEADERS or is_secret_name(name)


@dataclass(frozen=True)
class RequestRecord:
    """One request as the log keeps it."""

    t: float
    method: str
    path: str
    query: str = ""
    status: int = 200
    #: ``anthropic-messages``, ``openai-responses``, ``openai-chat``, ``google-genai``,
    #: or None for probes and listings.
    api: str | None = None
    model: str | None = None
    stream: bool = False
    tool_names: tuple[str, ...] = ()
    message_roles: tuple[str, ...] = ()
    structured: bool = False
    #: ``text``, ``tool_call``, ``error``, ``structured``, ``side:<name>``, ``count_tokens``,
    #: ``models``, ``probe``, ``not_found``, ``bad_request``, ``server_error``.
    reply_kind: str = ""
    segment: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "t": self.t,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "status": self.status,
            "api": self.api,
            "model": self.model,
            "stream": self.stream,
            "tool_names": list(self.tool_names),
            "message_roles": list(self.message_roles),
            "structured": self.structured,
            "reply_kind": self.reply_kind,
            "segment": self.segment,
            "headers": dict(self.headers),
        }


def _credentials(headers: Mapping[str, str], query: str) -> list[str]:
    found: list[str] = []
    for name, value in headers.items():
        if _secret_header(name) and value:
            found.append(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                found.append(token)
    for name, value in parse_qsl(query, keep_blank_values=True):
        if is_secret_name(name) and value:
            found.append(value)
    return found


def redact_headers(headers: Mapping[str, str], redactor: Redactor) -> dict[str, str]:
    """Headers with auth values replaced whole and key-shaped text replaced elsewhere."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        low = name.lower()
        out[low] = SECRET_MARK if _secret_header(low) else redactor.redact(value)
    return out


def redact_query(query: str, redactor: Redactor) -> str:
    """The query string with key-named parameters replaced (``?key=…`` -> the mark)."""
    if not query:
        return ""
    pairs = [
        (name, SECRET_MARK if is_secret_name(name) else redactor.redact(value))
        for name, value in parse_qsl(query, keep_blank_values=True)
    ]
    return urlencode(pairs, safe="[]:")


def redacted(
    *,
    t: float,
    method: str,
    path: str,
    query: str,
    headers: Mapping[str, str],
    **fields: Any,
) -> RequestRecord:
    """A record with every secret of the request redacted (MODEL-LOG-002)."""
    redactor = Redactor(secrets=_credentials(headers, query))
    model = fields.pop("model", None)
    return RequestRecord(
        t=t,
        method=method,
        path=redactor.redact(path),
        query=redact_query(query, redactor),
        headers=redact_headers(headers, redactor),
        model=redactor.redact(model) if isinstance(model, str) else model,
        **fields,
    )


class RequestLog:
    """In-memory records plus, with a path, an append-only JSON Lines file."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._records: list[RequestRecord] = []
        self._lock = threading.Lock()
        self._file: IO[str] | None = None

    def open(self) -> None:
        if self.path is not None and self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")

    def append(self, record: RequestRecord) -> None:
        line = json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            self._records.append(record)
            if self._file is not None:
                self._file.write(line + "\n")
                self._file.flush()

    @property
    def records(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
