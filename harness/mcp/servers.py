"""The input model: external MCP servers a user configured (seed 002 §8.1; ref §7).

Design: docs/design/mcp.md#harness.mcp.servers
"""

from __future__ import annotations

import difflib
import enum
import ipaddress
import json
import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from harness.errors import BadInputError, HarnessError
from harness.host.mcp_shapes import ACCEPTED_SHAPES
from harness.inputs import check_json_depth
from harness.secrets.detect import redact_url

__all__ = [
    "ACCEPTED_SHAPES",
    "KNOWN_FIELDS",
    "SERVER_ID_PATTERN",
    "McpAuthMode",
    "McpConfigError",
    "McpServerConfig",
    "McpTransport",
    "load_mcp_config",
    "parse_mcp_config",
    "parse_server_entries",
    "read_json_file",
    "redact_url",
]

#: Upstream ``SERVER_ID_PATTERN`` (``mcp-config.ts``): alphanumerics, ``-`` and ``_``, <= 64.
SERVER_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")

#: Keys an entry may carry (upstream ``McpServerConfig``). ``templateId`` is upstream UI
#: bookkeeping (which Settings preset filled the form); it is accepted and not kept.
KNOWN_FIELDS = frozenset(
    {
        "id",
        "label",
        "templateId",
        "transport",
        "enabled",
        "authMode",
        "command",
        "args",
        "env",
        "url",
        "headers",
    }
)
#: Keys of an entry of the ``{"mcpServers": {id: entry}}`` object: the id is its key and
#: ``type`` stands for ``transport``.
KNOWN_MAP_FIELDS = (KNOWN_FIELDS - {"id", "transport"}) | {"type"}
_TOP_LEVEL = ("mcpServers", "servers")
_STDIO_ONLY = ("command", "args", "env")
_REMOTE_ONLY = ("url", "headers", "authMode")
#: RFC 9110 ``token``: what a header field name may contain.
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


class McpTransport(str, enum.Enum):
    """How the agent reaches the server (upstream ``McpTransport``)."""

    STDIO = "stdio"
    HTTP = "http"
    SSE = "sse"


class McpAuthMode(str, enum.Enum):
    """Whether the daemon's stored OAuth token is sent (upstream ``McpAuthMode``)."""

    NONE = "none"
    OAUTH = "oauth"


class McpConfigError(HarnessError, ValueError):
    """One bad MCP config file or entry: file, entry index and field (MCP-CONFIG-001).

    The message never quotes a value from the file (MCP-SECRET-001).
    """

    code = "MCP_CONFIG_INVALID"

    def __init__(
        self, source: str, index: int | None, field: str | None, problem: str, *, prefix: str = ""
    ) -> None:
        where = source
        if index is not None:
            where += f": {prefix}[{index}]"
        if field:
            where += f".{field}" if index is not None else f": {field}"
        super().__init__(f"{where}: {problem}", rule="MCP-CONFIG-001")
        self.source = source
        self.index = index
        self.field = field


def _is_loopback_host(host: str) -> bool:
    name = host.strip("[]").lower().rstrip(".")
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


@dataclass(frozen=True)
class McpServerConfig:
    """One external MCP server (upstream ``McpServerConfig``; ref §7 "Input").

    ``env`` and ``headers`` are read-only mappings. ``repr`` shows env and header *names* and
    a redacted URL, never their values (MCP-SECRET-001).
    """

    id: str
    transport: McpTransport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: ``None`` = not given: inferred from the URL (see :attr:`effective_auth_mode`).
    auth_mode: McpAuthMode | None = None
    enabled: bool = True
    label: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "transport", McpTransport(self.transport))
        if self.auth_mode is not None:
            object.__setattr__(self, "auth_mode", McpAuthMode(self.auth_mode))
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "headers", MappingProxyType(dict(self.headers)))
        if not SERVER_ID_PATTERN.match(self.id):
            raise ValueError("MCP server id does not match " + SERVER_ID_PATTERN.pattern)
        if self.transport is McpTransport.STDIO:
            if not self.command or not self.command.strip():
                raise ValueError(f"MCP server {self.id!r}: a stdio server needs a command")
            if self.url is not None or self.headers or self.auth_mode is not None:
                raise ValueError(f"MCP server {self.id!r}: url/headers/auth_mode are for http/sse")
        else:
            if not self.url:
                raise ValueError(f"MCP server {self.id!r}: an http/sse server needs a url")
            if self.command is not None or self.args or self.env:
                raise ValueError(f"MCP server {self.id!r}: command/args/env are for stdio")

    @property
    def is_remote(self) -> bool:
        return self.transport is not McpTransport.STDIO

    @property
    def effective_auth_mode(self) -> McpAuthMode:
        """Upstream ``effectiveMcpAuthMode`` (``mcp-config.ts``): stdio never takes a token; a
        remote server uses its ``authMode``, else ``none`` for a loopback URL and ``oauth``
        otherwise (``inferMcpAuthModeForUrl``)."""
        if not self.is_remote:
            return McpAuthMode.NONE
        if self.auth_mode is not None:
            return self.auth_mode
        try:
            host = urlsplit(self.url or "").hostname
        except ValueError:
            return McpAuthMode.OAUTH
        return McpAuthMode.NONE if host and _is_loopback_host(host) else McpAuthMode.OAUTH

    def __repr__(self) -> str:
        parts = [f"id={self.id!r}", f"transport={self.transport.value!r}"]
        if self.command is not None:
            parts.append(f"command={os.path.basename(self.command)!r}")
        if self.args:
            parts.append(f"args=<{len(self.args)} args>")
        if self.env:
            parts.append(f"env_names={sorted(self.env)!r}")
        if self.url is not None:
            parts.append(f"url={redact_url(self.url)!r}")
        if self.headers:
            parts.append(f"header_names={sorted(self.headers)!r}")
        if self.auth_mode is not None:
            parts.append(f"auth_mode={self.auth_mode.value!r}")
        parts.append(f"enabled={self.enabled!r}")
        return f"McpServerConfig({', '.join(parts)})"


# -- parsing ------------------------------------------------------------------------------

_ALLOWED = ", ".join(sorted(KNOWN_FIELDS))


def _unknown_key(keys: list[str], position: int, allowed: Collection[str]) -> str:
    """An unknown key is never quoted (it may be a pasted secret): it is named by position,
    with the closest allowed field as a hint."""
    close = difflib.get_close_matches(keys[position], sorted(allowed), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown key #{position + 1}{hint}"


class _Entry:
    """Field checks of one entry; every failure names the field, never the value."""

    def __init__(self, source: str, index: int, prefix: str, raw: Mapping[str, Any]) -> None:
        self.source, self.index, self.prefix, self.raw = source, index, prefix, raw

    def fail(self, field_name: str | None, problem: str) -> McpConfigError:
        return McpConfigError(self.source, self.index, field_name, problem, prefix=self.prefix)

    def string(self, key: str, *, required: bool = False) -> str | None:
        value = self.raw.get(key)
        if value is None:
            if required:
                raise self.fail(key, "is required")
            return None
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {type(value).__name__}")
        if "\x00" in value:
            raise self.fail(key, "contains a NUL character")
        if not value.strip():
            raise self.fail(key, "must not be blank")
        return value.strip()

    def string_list(self, key: str) -> tuple[str, ...]:
        value = self.raw.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.fail(key, f"must be an array of strings, got {type(value).__name__}")
        for position, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(
                    f"{key}[{position}]", f"must be a string, got {type(item).__name__}"
                )
            if "\x00" in item:
                raise self.fail(f"{key}[{position}]", "contains a NUL character")
        return tuple(value)

    def string_map(self, key: str, *, header_names: bool = False) -> dict[str, str]:
        value = self.raw.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, f"must be an object of strings, got {type(value).__name__}")
        out: dict[str, str] = {}
        for position, (name, item) in enumerate(value.items()):
            # A key may be a secret pasted in the wrong place: name it by position only
            # until it passed the name check.
            where = f"{key}[key #{position + 1}]"
            if not name.strip() or "\x00" in name or "=" in name:
                raise self.fail(where, "must be a non-blank name without '=' or NUL")
            if header_names and not _HEADER_NAME.match(name):
                raise self.fail(where, "is not a valid HTTP header name")
            if not isinstance(item, str):
                raise self.fail(f"{key}.{name}", f"must be a string, got {type(item).__name__}")
            if "\x00" in item:
                raise self.fail(f"{key}.{name}", "contains a NUL character")
            if header_names and ("\r" in item or "\n" in item):
                raise self.fail(f"{key}.{name}", "contains a line break")
            out[name] = item
        return out


def _parse_entry(source: str, index: int, prefix: str, raw: Any) -> McpServerConfig:
    if not isinstance(raw, dict):
        raise McpConfigError(
            source, index, None, f"must be a JSON object, got {type(raw).__name__}", prefix=prefix
        )
    entry = _Entry(source, index, prefix, raw)
    keys = list(raw)
    for position, key in enumerate(keys):
        if key not in KNOWN_FIELDS:
            problem = _unknown_key(keys, position, KNOWN_FIELDS)
            raise entry.fail(None, f"{problem}; allowed: {_ALLOWED}")
    server_id = entry.string("id", required=True)
    if server_id is None or not SERVER_ID_PATTERN.match(server_id):
        raise entry.fail("id", f"must match {SERVER_ID_PATTERN.pattern}")
    transport_raw = raw.get("transport", McpTransport.STDIO.value)
    try:
        transport = McpTransport(transport_raw)
    except ValueError:
        raise entry.fail("transport", "must be one of stdio, http, sse") from None
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        raise entry.fail("enabled", f"must be true or false, got {type(enabled).__name__}")
    label = entry.string("label")
    if "templateId" in raw:
        entry.string("templateId")
    if transport is McpTransport.STDIO:
        for key in _REMOTE_ONLY:
            if key in raw:
                raise entry.fail(key, "applies to http/sse servers only")
        command = entry.string("command", required=True)
        return McpServerConfig(
            id=server_id,
            transport=transport,
            command=command,
            args=entry.string_list("args"),
            env=entry.string_map("env"),
            enabled=enabled,
            label=label,
        )
    for key in _STDIO_ONLY:
        if key in raw:
            raise entry.fail(key, "applies to stdio servers only")
    url = entry.string("url", required=True) or ""
    # upstream: "Reject anything that isn't an http(s) URL".
    try:
        parts = urlsplit(url)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
        _ = parts.port  # raises on a bad port
    except ValueError:
        valid = False
    if not valid or any(c in url for c in "\r\n\t "):
        raise entry.fail("url", "must be an absolute http:// or https:// URL")
    auth_raw = raw.get("authMode")
    auth_mode: McpAuthMode | None = None
    if auth_raw is not None:
        try:
            auth_mode = McpAuthMode(auth_raw)
        except ValueError:
            raise entry.fail("authMode", "must be 'none' or 'oauth'") from None
    return McpServerConfig(
        id=server_id,
        transport=transport,
        url=url,
        headers=entry.string_map("headers", header_names=True),
        auth_mode=auth_mode,
        enabled=enabled,
        label=label,
    )


def _from_map(source: str, prefix: str, entries: Mapping[str, Any]) -> list[Any]:
    """The entries of an ``{id: {type?, command | url, ...}}`` object as array entries
    (MCP-CONFIG-002); an entry is named by its position, as a key may be a pasted secret."""
    out: list[Any] = []
    for index, (server_id, raw) in enumerate(entries.items()):
        if not isinstance(raw, dict):
            out.append(raw)  # _parse_entry names the type
            continue
        keys = list(raw)
        for position, key in enumerate(keys):
            if key not in KNOWN_MAP_FIELDS:
                problem = _unknown_key(keys, position, KNOWN_MAP_FIELDS)
                allowed = ", ".join(sorted(KNOWN_MAP_FIELDS))
                raise McpConfigError(
                    source, index, None, f"{problem}; allowed: {allowed}", prefix=prefix
                )
        entry = {k: v for k, v in raw.items() if k != "type"}
        kind = raw.get("type", McpTransport.HTTP.value if "url" in raw else "stdio")
        if kind not in {t.value for t in McpTransport}:
            raise McpConfigError(
                source, index, "type", "must be one of stdio, http, sse", prefix=prefix
            )
        out.append({"id": server_id, "transport": kind, **entry})
    return out


def parse_server_entries(
    entries: Any, *, source: str, prefix: str = "servers"
) -> tuple[McpServerConfig, ...]:
    """Parse server entries, a JSON array or an ``{id: entry}`` object (MCP-CONFIG-002); the
    first bad entry raises (MCP-CONFIG-001).

    ``prefix`` names the entries in messages (``servers[2].url``, ``toolBundle.mcpServers[0]``;
    an object's entry by its position). A repeated id is an error naming the later entry.
    """
    if isinstance(entries, dict):
        entries = _from_map(source, prefix, entries)
    if not isinstance(entries, list):
        raise McpConfigError(
            source, None, prefix, f"must be an array or object, got {type(entries).__name__}"
        )
    seen: set[str] = set()
    out: list[McpServerConfig] = []
    for index, raw in enumerate(entries):
        server = _parse_entry(source, index, prefix, raw)
        if server.id in seen:
            raise McpConfigError(
                source, index, "id", f"duplicates server id {server.id!r}", prefix=prefix
            )
        seen.add(server.id)
        out.append(server)
    return tuple(out)


def parse_mcp_config(data: Any, *, source: str = "<mcp config>") -> tuple[McpServerConfig, ...]:
    """A document of one of the :data:`ACCEPTED_SHAPES` (MCP-CONFIG-002)."""
    if isinstance(data, list):
        return parse_server_entries(data, source=source)
    if isinstance(data, dict):
        keys = list(data)
        for position, key in enumerate(keys):
            if key not in _TOP_LEVEL:
                problem = _unknown_key(keys, position, _TOP_LEVEL)
                raise McpConfigError(
                    source, None, None, f"{problem} at top level; only 'mcpServers' or 'servers'"
                )
        if len(keys) > 1:
            raise McpConfigError(source, None, None, "give 'mcpServers' or 'servers', not both")
        key = keys[0] if keys else "servers"
        return parse_server_entries(data.get(key, []), source=source, prefix=key)
    raise McpConfigError(
        source,
        None,
        None,
        f"must be a JSON object or array ({ACCEPTED_SHAPES}), got {type(data).__name__}",
    )


def load_mcp_config(path: str | os.PathLike[str]) -> tuple[McpServerConfig, ...]:
    """Read and parse an MCP config file; unreadable or malformed -> :class:`McpConfigError`."""
    source = os.fspath(path)
    return parse_mcp_config(read_json_file(source), source=source)


def read_json_file(path: str | os.PathLike[str]) -> Any:
    """The JSON document of an MCP config or tool bundle file (UTF-8, BOM allowed).

    Unreadable, not UTF-8, nested too deep or not JSON -> :class:`McpConfigError` (the message
    never quotes the file, MCP-SECRET-001).
    """
    source = os.fspath(path)
    try:
        with open(source, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise McpConfigError(source, None, None, f"cannot read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise McpConfigError(source, None, None, "is not UTF-8") from None
    try:
        check_json_depth(text, source)
    except BadInputError as exc:
        # json and the validators recurse once per level (CLIERR-JSON-DEPTH-001).
        problem = f"{exc.problem} (line {exc.line} column {exc.column})"
        raise McpConfigError(source, None, None, problem) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        # exc.msg/lineno/colno only: str(exc) is safe too, but the doc excerpt is not wanted.
        raise McpConfigError(
            source, None, None, f"is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
