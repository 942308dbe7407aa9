"""The host's MCP servers as ACP ``mcpServers``: converted once, withheld per agent version.

ref §2.6 "MCP env format" (rule ACP-MCP-001) and step 2 (rule ACP-MCP-002). Pure
functions: the session counts and reports what they decide.

Design: docs/design/protocols.md#harness.protocols.acp
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from harness.protocols import jsonrpc
from harness.protocols.acp.config import AcpRequestError
from harness.protocols.acp.schema import validate_outgoing
from harness.protocols.options import AcpEnvFormat

__all__ = ["convert_mcp_servers", "servers_for_version", "version_at_least"]


def convert_mcp_servers(
    servers: Sequence[Mapping[str, Any]], env_format: AcpEnvFormat
) -> list[dict[str, Any]]:
    """ref §2.6 "MCP env format" (rule ACP-MCP-001): stdio servers become
    ``{type, name, command, args, env}`` with ``env`` as ``[{name, value}]``
    (ARRAY) or ``{KEY: value}`` (MAP); other transports pass through unchanged.

    Raises :class:`AcpRequestError` for a server no valid ``session/new`` could carry.
    """
    out: list[dict[str, Any]] = []
    for index, server in enumerate(servers):
        if not isinstance(server, Mapping):
            raise AcpRequestError(f"mcp_servers[{index}] must be a mapping, got {server!r:.60}")
        kind = server.get("type") or "stdio"
        if kind != "stdio":
            out.append(dict(server))
            continue
        entry: dict[str, Any] = {
            "type": "stdio",
            "name": server.get("name"),
            "command": server.get("command"),
            "args": list(server.get("args") or []),
            "env": _convert_env(server.get("env"), index, env_format),
        }
        if "_meta" in server:
            entry["_meta"] = server["_meta"]
        out.append(entry)
    probe = jsonrpc.request(0, "session/new", {"cwd": "/", "mcpServers": out})
    problems = validate_outgoing(probe, env_format=env_format)
    if problems:
        raise AcpRequestError(f"mcp_servers cannot be sent over ACP: {'; '.join(problems)}")
    return out


def _convert_env(env: Any, index: int, env_format: AcpEnvFormat) -> Any:
    converted = _env_as_map(env, index) if env_format is AcpEnvFormat.MAP else _env_as_array(env)
    if converted is None:
        raise AcpRequestError(f"mcp_servers[{index}].env must be a list or a mapping")
    return converted


def _env_as_map(env: Any, index: int) -> dict[str, Any] | None:
    """``{KEY: value}``; ``None`` when ``env`` is neither a list nor a mapping."""
    if env is None:
        return {}
    if isinstance(env, Mapping):
        return dict(env)
    if not isinstance(env, list):
        return None
    # ref §2.6: Object.fromEntries(arr.map(e => [e.name ?? '', e.value ?? '']))
    out: dict[str, Any] = {}
    for entry in env:
        pair = entry if isinstance(entry, Mapping) else {}
        name, value = pair.get("name"), pair.get("value")
        if name is not None and not isinstance(name, str):
            raise AcpRequestError(f"mcp_servers[{index}].env names must be strings")
        out["" if name is None else name] = "" if value is None else value
    return out


def _env_as_array(env: Any) -> list[Any] | None:
    """``[{name, value}]``; ``None`` when ``env`` is neither a list nor a mapping."""
    if env is None:
        return []
    if isinstance(env, list):
        return [dict(e) if isinstance(e, Mapping) else e for e in env]
    if isinstance(env, Mapping):
        return [{"name": k, "value": v} for k, v in env.items()]
    return None


def servers_for_version(
    servers: Sequence[dict[str, Any]], version: Any, floor: str | None
) -> list[dict[str, Any]]:
    """ref §2.6 step 2: the servers an agent at ``version`` gets; stdio ones are withheld
    from agents at or past the def's ``floor`` (rule ACP-MCP-002)."""
    if floor is None or not isinstance(version, str) or not version_at_least(version, floor):
        return list(servers)
    return [s for s in servers if s.get("type") != "stdio"]


def version_at_least(version: str, floor: str) -> bool:
    """``version >= floor``, comparing the leading dotted numbers numerically.

    ``"0.37.0" >= "0.37.0"``, ``"0.100.1" >= "0.37.0"``; a prerelease suffix is
    ignored (``"0.37.0-rc1"`` counts as 0.37.0). An unparseable side is ``False``
    (ref §2.6 step 2: withhold only when the agent's version is known to be new).
    """
    mine, theirs = _version_tuple(version), _version_tuple(floor)
    if mine is None or theirs is None:
        return False
    width = max(len(mine), len(theirs))
    return mine + (0,) * (width - len(mine)) >= theirs + (0,) * (width - len(theirs))


def _version_tuple(text: str) -> tuple[int, ...] | None:
    match = re.match(r"^\s*v?(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else None
