"""One pure builder per injection strategy (seed 002 §8.1; ref §7; wire §A.6).

Design: docs/design/mcp.md#harness.mcp.builders
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]

from harness.defs.types import AcpEnvFormat
from harness.errors import HarnessError
from harness.mcp.servers import McpAuthMode, McpServerConfig, McpTransport
from harness.protocols.acp.mcp import version_at_least
from harness.schemas import load_schema

__all__ = [
    "OPENCODE_SCHEMA",
    "McpBuildError",
    "build_acp_mcp_servers",
    "build_claude_mcp_json",
    "build_opencode_config",
    "build_opencode_config_content",
    "merge_auth_header",
    "opencode_config_problems",
    "stdio_mcp_suppressed",
    "token_for",
]

#: The JSON Schema every generated OpenCode config is validated against (MCP-OPENCODE-001).
OPENCODE_SCHEMA = "opencode-mcp.schema.json"


class McpBuildError(HarnessError):
    """A builder could not produce a valid document; names the server, never a secret."""

    code = "MCP_BUILD_FAILED"


def _enabled(servers: Iterable[McpServerConfig]) -> list[McpServerConfig]:
    return [s for s in servers if s.enabled]


def merge_auth_header(
    headers: Mapping[str, str] | None, token: str | None
) -> dict[str, str] | None:
    """Headers with the daemon's OAuth bearer merged in (seed 002 §8.1; ref §7; MCP-AUTH-001).

    A user-supplied ``Authorization`` header (any case) that is not blank wins and keeps its
    spelling; a blank one is ignored and dropped ("not pinned", upstream ``mergeAuthHeader``);
    otherwise a non-empty ``token`` adds ``Authorization: Bearer <token>``. Returns ``None``
    instead of an empty mapping (ref §7: null instead of empty).
    """
    merged: dict[str, str] = {}
    user_pinned = False
    for name, value in (headers or {}).items():
        if name.lower() == "authorization":
            if value.strip():
                user_pinned = True
                merged[name] = value
            continue
        merged[name] = value
    if token and not user_pinned:
        if any(c in token for c in "\r\n\x00"):
            raise ValueError("OAuth token contains a line break or NUL")
        merged["Authorization"] = f"Bearer {token}"
    return merged or None


def token_for(server: McpServerConfig, tokens: Mapping[str, str] | None) -> str | None:
    """The stored token for ``server`` iff its effective auth mode is oauth (MCP-AUTH-002;
    ref §7: "only OAuth-mode servers get the daemon token")."""
    if server.effective_auth_mode is not McpAuthMode.OAUTH:
        return None
    return (tokens or {}).get(server.id) or None


def _remote_headers(
    server: McpServerConfig, tokens: Mapping[str, str] | None
) -> dict[str, str] | None:
    try:
        return merge_auth_header(server.headers, token_for(server, tokens))
    except ValueError:
        raise McpBuildError(
            f"MCP server {server.id!r}: the stored OAuth token contains a line break or NUL",
            rule="MCP-AUTH-001",
        ) from None


def build_claude_mcp_json(
    servers: Sequence[McpServerConfig], tokens: Mapping[str, str] | None = None
) -> dict[str, Any] | None:
    """The project ``.mcp.json`` Claude Code loads at start (seed 002 §8.1; ref §7; wire §A.6).

    ``{"mcpServers": {id: {command, args?, env?} | {type, url, headers?}}}`` with empty
    ``args``/``env``/``headers`` omitted; ``None`` when no server is enabled: the caller writes
    nothing and removes a stale file (MCP-CLAUDE-001).
    """
    enabled = _enabled(servers)
    if not enabled:
        return None
    out: dict[str, dict[str, Any]] = {}
    for server in enabled:
        if server.transport is McpTransport.STDIO:
            entry: dict[str, Any] = {"command": server.command}
            if server.args:
                entry["args"] = list(server.args)
            if server.env:
                entry["env"] = dict(server.env)
        else:
            entry = {"type": server.transport.value, "url": server.url}
            headers = _remote_headers(server, tokens)
            if headers:
                entry["headers"] = headers
        out[server.id] = entry
    return {"mcpServers": out}


def stdio_mcp_suppressed(agent_version: str | None, removed_in: str | None) -> bool:
    """True when stdio MCP must be withheld: the agent's version is known and >= the def's
    ``acp.stdio_mcp_removed_in_version`` (ref §2.6 step 2; MCP-ACP-002). Numeric comparison of
    the dotted version (``0.100.0 >= 0.37.0``), the same function the ACP session uses."""
    if agent_version is None or removed_in is None:
        return False
    return version_at_least(agent_version, removed_in)


def build_acp_mcp_servers(
    servers: Sequence[McpServerConfig],
    env_format: AcpEnvFormat = AcpEnvFormat.ARRAY,
    agent_version: str | None = None,
    removed_in: str | None = None,
) -> list[dict[str, Any]]:
    """ACP ``session/new|load`` ``mcpServers`` entries (seed 002 §8.1; ref §7, §2.6).

    Enabled stdio servers only (seed 002 §8.4: acp-merge takes stdio; upstream
    ``buildAcpMcpServers`` drops sse/http) as ``{type: "stdio", name: id, command, args, env}``.
    ``env`` is ``[{name, value}]`` for :attr:`AcpEnvFormat.ARRAY` (the ACP v1 schema's
    ``EnvVariable`` array) or ``{KEY: value}`` for :attr:`AcpEnvFormat.MAP` (MCP-ACP-001).
    ``[]`` when the agent's version suppresses stdio MCP (MCP-ACP-002).
    """
    env_format = AcpEnvFormat(env_format)
    if stdio_mcp_suppressed(agent_version, removed_in):
        return []
    out: list[dict[str, Any]] = []
    for server in _enabled(servers):
        if server.transport is not McpTransport.STDIO:
            continue
        env: Any
        if env_format is AcpEnvFormat.MAP:
            env = dict(server.env)
        else:
            env = [{"name": name, "value": value} for name, value in server.env.items()]
        out.append(
            {
                "type": "stdio",
                "name": server.id,
                "command": server.command,
                "args": list(server.args),
                "env": env,
            }
        )
    return out


def _normalized_dir(directory: str) -> str:
    if not os.path.isabs(directory):
        raise ValueError("project_dir must be an absolute path")
    normalized = os.path.normpath(directory)
    root = os.path.splitdrive(normalized)[0] + os.sep
    return normalized if normalized == root else normalized.rstrip("\\/")


def _glob(directory: str, suffix: str) -> str:
    return f"{directory}{suffix}" if directory.endswith(os.sep) else f"{directory}{os.sep}{suffix}"


def build_opencode_config(
    servers: Sequence[McpServerConfig],
    tokens: Mapping[str, str] | None = None,
    project_dir: str | None = None,
) -> dict[str, Any] | None:
    """The OpenCode v1 config object (ref §7 ``buildOpenCodeMcpConfigContent``; wire §A.6).

    stdio -> ``{type: "local", command: [command, *args], environment?, enabled: true}``: ONE
    array and no ``args`` key (OpenCode's zod ``.strict()`` rejects ``args``); http/sse ->
    ``{type: "remote", url, headers?, enabled: true}``. ``project_dir`` (absolute) adds
    ``permission.external_directory`` allow rules for the dir, ``dir/*`` and ``dir/**`` (the
    lexical spelling; this builder does no IO). ``None`` when there is nothing to emit.
    Validated against :data:`OPENCODE_SCHEMA` before it is returned (MCP-OPENCODE-001).
    """
    mcp: dict[str, dict[str, Any]] = {}
    for server in _enabled(servers):
        if server.transport is McpTransport.STDIO:
            entry: dict[str, Any] = {
                "type": "local",
                "command": [server.command, *server.args],
            }
            if server.env:
                entry["environment"] = dict(server.env)
        else:
            entry = {"type": "remote", "url": server.url}
            headers = _remote_headers(server, tokens)
            if headers:
                entry["headers"] = headers
        entry["enabled"] = True
        mcp[server.id] = entry
    config: dict[str, Any] = {}
    if mcp:
        config["mcp"] = mcp
    if project_dir is not None:
        directory = _normalized_dir(project_dir)
        config["permission"] = {
            "external_directory": {
                directory: "allow",
                _glob(directory, "*"): "allow",
                _glob(directory, "**"): "allow",
            }
        }
    if not config:
        # seed 002 §8.1: OPENCODE_CONFIG_CONTENT is merged over the user's config; "{}" would
        # wipe their saved mcp block. None means "leave the variable alone" (MCP-ENV-001).
        return None
    problems = opencode_config_problems(config)
    if problems:
        raise McpBuildError(
            "generated OpenCode config fails opencode-mcp.schema.json: " + "; ".join(problems),
            rule="MCP-OPENCODE-001",
        )
    return config


def build_opencode_config_content(
    servers: Sequence[McpServerConfig],
    tokens: Mapping[str, str] | None = None,
    project_dir: str | None = None,
) -> str | None:
    """:func:`build_opencode_config` as the compact JSON string the env var carries, or
    ``None`` (the variable is not set at all; never ``"{}"``; MCP-ENV-001)."""
    config = build_opencode_config(servers, tokens, project_dir)
    if config is None:
        return None
    return json.dumps(config, ensure_ascii=False, separators=(",", ":"))


@cache
def _opencode_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema(OPENCODE_SCHEMA))


def opencode_config_problems(config: Any) -> list[str]:
    """Schema violations of an OpenCode config, ``[]`` when valid (MCP-OPENCODE-001).

    Each problem names the JSON path and the failed keyword only: jsonschema's own message
    quotes the offending value, which may be an env value or a token (MCP-SECRET-001).
    """
    problems: list[str] = []
    for error in sorted(
        _opencode_validator().iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path]
    ):
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        problems.append(f"${path}: fails {error.validator!r}")
    return problems
