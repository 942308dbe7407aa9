"""Run tool bundles: per-run MCP servers, checked against the agent and merged (seed 002 §8.4).

Rules: MCP-BUNDLE-002, MCP-BUNDLE-005, MCP-BUNDLE-006.
Design: docs/design/mcp.md#harness.mcp.bundles
"""

from __future__ import annotations

import enum
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.defs.types import AgentDef, McpInjection
from harness.errors import HarnessError
from harness.mcp.servers import (
    McpConfigError,
    McpServerConfig,
    McpTransport,
    parse_server_entries,
    read_json_file,
)

__all__ = [
    "BUNDLE_PREFIX",
    "BundleRefusedError",
    "DeliveryTarget",
    "RunServerSelection",
    "load_run_tool_bundle",
    "parse_run_tool_bundle",
    "resolve_servers_for_run",
    "validate_run_tool_bundle",
]

#: How ``toolBundle`` entries are named in messages (upstream wording).
BUNDLE_PREFIX = "toolBundle.mcpServers"


class DeliveryTarget(str, enum.Enum):
    """Where the run's project lives (upstream ``RunToolBundleDeliveryTarget``)."""

    #: A daemon-managed project dir under the projects root.
    MANAGED_PROJECT = "managed-project"
    #: A user's own folder (git-linked project): nothing may be written into it.
    EXTERNAL_PROJECT = "external-project"
    NONE = "none"


class BundleRefusedError(HarnessError):
    """The agent cannot take this run's tool bundle; ``rule`` names the table row."""

    code = "MCP_BUNDLE_REFUSED"

    def __init__(
        self, message: str, *, rule: str, index: int | None = None, agent_id: str | None = None
    ) -> None:
        super().__init__(message, rule=rule)
        self.index = index
        self.agent_id = agent_id


def _label(defn: AgentDef) -> str:
    # upstream agentLabel: "<name> (<id>)".
    return f"{defn.name} ({defn.id})" if defn.name and defn.name != defn.id else defn.id


def validate_run_tool_bundle(
    defn: AgentDef,
    bundle: Sequence[McpServerConfig],
    delivery_target: DeliveryTarget | str | None,
) -> None:
    """Raise :class:`BundleRefusedError` when ``defn`` cannot take ``bundle`` (module table)."""
    if not any(server.enabled for server in bundle):
        return
    strategy = McpInjection(defn.external_mcp_injection)
    label = _label(defn)
    if strategy is McpInjection.CLAUDE_MCP_JSON:
        target = None if delivery_target is None else DeliveryTarget(delivery_target)
        if target is not DeliveryTarget.MANAGED_PROJECT:
            shown = "none given" if target is None else target.value
            raise BundleRefusedError(
                f"{label} receives run-scoped MCP tool bundles through the project .mcp.json, "
                f"so toolBundle requires a managed project (delivery target: {shown})",
                rule="MCP-BUNDLE-001",
                agent_id=defn.id,
            )
        return
    if strategy in (McpInjection.OPENCODE_ENV_CONTENT, McpInjection.MIMO_ENV_CONTENT):
        return
    if strategy is McpInjection.ACP_MERGE:
        for index, server in enumerate(bundle):
            if server.enabled and server.transport is not McpTransport.STDIO:
                raise BundleRefusedError(
                    f"{BUNDLE_PREFIX}[{index}] uses {server.transport.value} transport, but "
                    f"{label} only supports stdio run-scoped MCP servers",
                    rule="MCP-BUNDLE-003",
                    index=index,
                    agent_id=defn.id,
                )
        return
    raise BundleRefusedError(
        f"{label} does not support run-scoped MCP tool bundles (external_mcp_injection: none)",
        rule="MCP-BUNDLE-004",
        agent_id=defn.id,
    )


@dataclass(frozen=True)
class RunServerSelection:
    """The servers a run uses, and which of them need a stored OAuth token."""

    enabled_servers: tuple[McpServerConfig, ...]
    persisted_token_server_ids: frozenset[str]


def resolve_servers_for_run(
    persisted: Sequence[McpServerConfig],
    bundle: Sequence[McpServerConfig],
    sandbox: bool,
) -> RunServerSelection:
    """Merge the run's bundle over the persisted servers by id (see the module docstring).

    Order: persisted servers in their order (an overridden one keeps its place, as a JS
    ``Map`` does), then the bundle's new ids; disabled servers are dropped at the end, so a
    disabled run entry switches a persisted server off for this run.
    """
    persisted_for_run = () if sandbox else tuple(persisted)
    by_id: dict[str, McpServerConfig] = {}
    for server in persisted_for_run:
        by_id[server.id] = server
    for server in bundle:
        by_id[server.id] = server
    run_ids = {server.id for server in bundle}
    token_ids = frozenset(
        server.id for server in persisted_for_run if server.enabled and server.id not in run_ids
    )
    return RunServerSelection(
        enabled_servers=tuple(s for s in by_id.values() if s.enabled),
        persisted_token_server_ids=token_ids,
    )


def load_run_tool_bundle(path: str | os.PathLike[str]) -> tuple[McpServerConfig, ...]:
    """A ``--tool-bundle`` file -> its servers; a bad file is one :class:`McpConfigError`."""
    source = os.fspath(path)
    return parse_run_tool_bundle(read_json_file(source), source=source)


def parse_run_tool_bundle(raw: Any, *, source: str = "request") -> tuple[McpServerConfig, ...]:
    """A request's ``toolBundle`` (``{"mcpServers": [...]}`` or null) -> its servers.

    Upstream ``parseRunToolBundleForRequest``: null -> empty; entries are parsed like the
    config file and a repeated id is an error naming the entry (MCP-CONFIG-001).
    """
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise McpConfigError(source, None, "toolBundle", "must be an object")
    extra = [k for k in raw if k != "mcpServers"]
    if extra:
        raise McpConfigError(source, None, "toolBundle", "only 'mcpServers' is allowed")
    entries = raw.get("mcpServers")
    if entries is None:
        return ()
    return parse_server_entries(entries, source=source, prefix=BUNDLE_PREFIX)
