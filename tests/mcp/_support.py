"""Shared inputs for the MCP tests: servers written by hand from ref §7's input shape, and
secrets that must never surface in a message (MCP-SECRET-001)."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness.defs.registry import BUILTIN_DEFS
from harness.defs.types import AcpEnvFormat, AgentDef, McpInjection
from harness.mcp.servers import McpServerConfig, parse_mcp_config

#: Distinctive values that must never appear in an error, a repr or a plan description.
ENV_SECRET = "ghp_envSECRETvalue0001"
HEADER_SECRET = "Bearer pat-HEADERsecret0002"
TOKEN_SECRET = "oauthTOKENsecret0003"
URL_SECRET = "urlPASSWORDsecret0004"
SECRETS = (ENV_SECRET, HEADER_SECRET, TOKEN_SECRET, URL_SECRET)

#: ref §7 input entries, one per transport.
STDIO_ENTRY: dict[str, Any] = {
    "id": "github",
    "transport": "stdio",
    "command": "npx",
    "args": ["-y", "@modelcontextprotocol/server-github"],
    "env": {"GITHUB_TOKEN": ENV_SECRET},
}
HTTP_ENTRY: dict[str, Any] = {
    "id": "higgsfield",
    "transport": "http",
    "url": "https://mcp.higgsfield.example/mcp",
    "authMode": "oauth",
}
SSE_ENTRY: dict[str, Any] = {
    "id": "pinned",
    "transport": "sse",
    "url": f"https://user:{URL_SECRET}@sse.example/events?key={URL_SECRET}",
    "headers": {"Authorization": HEADER_SECRET, "X-Team": "design"},
}


def servers(*entries: dict[str, Any]) -> tuple[McpServerConfig, ...]:
    return parse_mcp_config({"servers": list(entries)}, source="test.json")


def all_servers() -> tuple[McpServerConfig, ...]:
    return servers(STDIO_ENTRY, HTTP_ENTRY, SSE_ENTRY)


TOKENS = {"higgsfield": TOKEN_SECRET, "pinned": TOKEN_SECRET, "github": TOKEN_SECRET}


def builtin_with(strategy: McpInjection) -> AgentDef:
    """The first built-in def that declares ``strategy``."""
    return next(d for d in BUILTIN_DEFS if d.external_mcp_injection is strategy)


def custom_def(
    strategy: McpInjection,
    *,
    env_format: AcpEnvFormat = AcpEnvFormat.ARRAY,
    removed_in: str | None = None,
) -> AgentDef:
    """A def no engine module could know by id: only its fields can drive the plan."""
    base = builtin_with(strategy) if strategy is not McpInjection.NONE else BUILTIN_DEFS[0]
    return dataclasses.replace(
        base,
        id="zz-custom-agent",
        name="Zeta Custom",
        external_mcp_injection=strategy,
        acp=dataclasses.replace(
            base.acp, mcp_env_format=env_format, stdio_mcp_removed_in_version=removed_in
        ),
    )


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"secret {secret!r} leaked into: {text!r}"
