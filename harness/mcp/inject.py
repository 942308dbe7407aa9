"""Plan how a run's external MCP servers reach the agent: pure, no IO (seed 002 §8.1; ref §7).

:func:`plan_injection` dispatches on ``AgentDef.external_mcp_injection`` alone (seed 002 §9 ①:
"按 def.externalMcpInjection 分派", never on an agent id; MCP-DISPATCH-001) and returns an
:class:`InjectionPlan`: the env vars to set, the ``.mcp.json`` to write or remove, the ACP
``mcpServers`` list, and a human reason. :mod:`harness.mcp.apply` performs the file IO.

Rules: MCP-ACP-001, MCP-ENV-001, MCP-MANAGED-002.
Design: docs/design/mcp.md#harness.mcp.inject
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.defs.types import AcpEnvFormat, AgentDef, McpInjection
from harness.errors import HarnessError
from harness.mcp.builders import (
    build_acp_mcp_servers,
    build_claude_mcp_json,
    build_opencode_config_content,
    stdio_mcp_suppressed,
    token_for,
)
from harness.mcp.servers import McpServerConfig, McpTransport

__all__ = [
    "ENV_CONTENT_VARS",
    "MCP_JSON_NAME",
    "FileWrite",
    "InjectionPlan",
    "McpInjectionError",
    "SkippedServer",
    "injection_secrets",
    "is_managed_project_cwd",
    "path_strictly_inside",
    "plan_injection",
]

#: Claude Code's project-scope MCP file (wire §A.6).
MCP_JSON_NAME = ".mcp.json"

#: seed 002 §8.1: the env var each env-content strategy fills.
ENV_CONTENT_VARS: Mapping[McpInjection, str] = {
    McpInjection.OPENCODE_ENV_CONTENT: "OPENCODE_CONFIG_CONTENT",
    McpInjection.MIMO_ENV_CONTENT: "MIMOCODE_CONFIG_CONTENT",
}


class McpInjectionError(HarnessError):
    """The servers handed to :func:`plan_injection` cannot be planned (e.g. a repeated id)."""

    code = "MCP_PLAN_INVALID"


@dataclass(frozen=True)
class SkippedServer:
    """An enabled server the plan does not deliver, and why (reportable, not silent)."""

    id: str
    reason: str


@dataclass(frozen=True)
class FileWrite:
    """Write ``content`` to ``path`` (``repr`` hides the content: it holds env and tokens)."""

    path: str
    content: str = field(repr=False)


def _absolute_norm(path: str) -> str | None:
    if not path or "\x00" in path or not os.path.isabs(path):
        return None
    normalized = os.path.normpath(path)
    if os.sep == "/":
        # POSIX keeps a leading "//" in normpath; on every POSIX system we run on it is "/".
        normalized = "/" + normalized.lstrip("/")
    return os.path.normcase(normalized)


def path_strictly_inside(path: str, root: str) -> bool:
    """``path`` is below ``root`` and not equal to it, compared lexically (both absolute)."""
    here, base = _absolute_norm(path), _absolute_norm(root)
    if here is None or base is None or here == base:
        return False
    try:
        return os.path.commonpath([base, here]) == base
    except ValueError:  # different drives on Windows
        return False


def is_managed_project_cwd(cwd: str | None, projects_root: str | None) -> bool:
    """``cwd`` is strictly below ``projects_root`` (upstream ``isManagedProjectCwd``).

    seed 002 §8.1: "要求 cwd 严格在 PROJECTS_DIR 之下（等于 PROJECTS_DIR 本身也返回 false）".
    Lexical and pure (``..`` is resolved textually; both must be absolute). Symlinks are
    checked again on the real filesystem by :func:`harness.mcp.apply.apply_injection`
    (MCP-MANAGED-001, MCP-MANAGED-003).
    """
    if cwd is None or projects_root is None:
        return False
    return path_strictly_inside(cwd, projects_root)


@dataclass(frozen=True)
class InjectionPlan:
    """What to do so the agent sees the run's MCP servers (or why it will not)."""

    agent_id: str
    agent_name: str
    strategy: McpInjection
    #: One line a person can read; names the agent; never a secret value.
    reason: str
    #: Variables to set in the child's environment (values are secret: not in ``repr``).
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: Variables deliberately left as inherited (seed 002 §8.1: null = "别动这个环境变量").
    env_untouched: tuple[str, ...] = ()
    writes: tuple[FileWrite, ...] = ()
    removals: tuple[str, ...] = ()
    #: ACP ``McpServer`` entries for ``SessionRequest.mcp_servers`` (env is secret).
    acp_mcp_servers: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)
    #: The managed projects root the file operations were planned against.
    managed_root: str | None = None
    delivered: tuple[str, ...] = ()
    skipped: tuple[SkippedServer, ...] = ()
    #: Every secret value the plan may hand to the child (server env and header values, OAuth
    #: tokens), for the runner's redactor (``Redactor(secrets=...)``). Never shown.
    secrets: tuple[str, ...] = field(default=(), repr=False)

    @property
    def is_none(self) -> bool:
        """True for the explicit "this agent takes no external MCP" plan (MCP-NONE-001)."""
        return self.strategy is McpInjection.NONE

    def describe(self) -> str:
        """Human text: the reason, then one line per action; no secret values."""
        lines = [self.reason]
        lines.extend(f"  set env {name} (value hidden)" for name in self.env)
        lines.extend(f"  leave env {name} as inherited" for name in self.env_untouched)
        lines.extend(f"  write {w.path}" for w in self.writes)
        lines.extend(f"  remove {path} if present" for path in self.removals)
        lines.extend(f"  ACP mcpServers: {server.get('name')}" for server in self.acp_mcp_servers)
        lines.extend(f"  delivered: {server_id}" for server_id in self.delivered)
        lines.extend(f"  not delivered: {s.id}: {s.reason}" for s in self.skipped)
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """A redacted, JSON-serializable summary (names and paths, no values)."""
        return {
            "agent_id": self.agent_id,
            "agent_name": self.agent_name,
            "strategy": self.strategy.value,
            "reason": self.reason,
            "env_set": sorted(self.env),
            "env_untouched": list(self.env_untouched),
            "writes": [w.path for w in self.writes],
            "removals": list(self.removals),
            "acp_mcp_servers": [
                {
                    "name": s.get("name"),
                    "env_names": sorted(
                        s["env"]
                        if isinstance(s.get("env"), Mapping)
                        else [e.get("name") for e in s.get("env") or []]
                    ),
                }
                for s in self.acp_mcp_servers
            ],
            "managed_root": self.managed_root,
            "delivered": list(self.delivered),
            "skipped": [{"id": s.id, "reason": s.reason} for s in self.skipped],
        }


def _label(defn: AgentDef) -> str:
    # upstream run-tool-bundle.ts agentLabel: "<name> (<id>)".
    return f"{defn.name} ({defn.id})" if defn.name and defn.name != defn.id else defn.id


def injection_secrets(
    servers: Sequence[McpServerConfig], tokens: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Every secret value ``servers`` may hand to a child: env and header values and OAuth
    tokens, longest first (MCP-SECRET-001, MCP-SECRET-002).

    A caller that records a run (``harness.recording.record.RunRecorder(secrets=...)``) or
    logs about it passes these, so the values never reach a file or a message.
    """
    found: set[str] = set()
    for server in servers:
        found.update(v for v in server.env.values() if v.strip())
        found.update(v for v in server.headers.values() if v.strip())
        token = token_for(server, tokens)
        if token:
            found.add(token)
    return tuple(sorted(found, key=lambda v: (-len(v), v)))


def _checked(servers: Sequence[McpServerConfig]) -> list[McpServerConfig]:
    seen: set[str] = set()
    for index, server in enumerate(servers):
        if not isinstance(server, McpServerConfig):
            raise McpInjectionError(
                f"servers[{index}] is a {type(server).__name__}, not an McpServerConfig"
            )
        if server.id in seen:
            raise McpInjectionError(
                f"servers[{index}] repeats MCP server id {server.id!r}; resolve bundles first"
            )
        seen.add(server.id)
    return [s for s in servers if s.enabled]


def plan_injection(
    defn: AgentDef,
    servers: Sequence[McpServerConfig],
    tokens: Mapping[str, str] | None = None,
    *,
    cwd: str,
    managed_projects_root: str | None,
    agent_version: str | None = None,
) -> InjectionPlan:
    """The injection plan for one run of ``defn`` (pure; see the module table).

    ``tokens`` maps server id -> stored OAuth access token; only servers whose effective auth
    mode is oauth receive theirs (MCP-AUTH-002). ``agent_version`` is the version detection
    found; with ``acp.stdio_mcp_removed_in_version`` it withholds stdio servers (MCP-ACP-002).
    """
    enabled = _checked(servers)
    plan = _plan(
        defn,
        enabled,
        tokens,
        cwd=cwd,
        managed_projects_root=managed_projects_root,
        agent_version=agent_version,
    )
    return dataclasses.replace(plan, secrets=injection_secrets(enabled, tokens))


def _plan(
    defn: AgentDef,
    enabled: list[McpServerConfig],
    tokens: Mapping[str, str] | None,
    *,
    cwd: str,
    managed_projects_root: str | None,
    agent_version: str | None,
) -> InjectionPlan:
    ids = tuple(s.id for s in enabled)
    label = _label(defn)
    strategy = McpInjection(defn.external_mcp_injection)

    if strategy is McpInjection.NONE:
        # seed 002 §8.1 / §10: "不转发，UI 显式提示" - a value, not a silence.
        reason = (
            f"{label} takes no external MCP servers (external_mcp_injection: none); "
            f"{len(enabled)} enabled server(s) not forwarded: configure them in "
            f"{defn.name}'s own MCP config"
        )
        skipped = tuple(SkippedServer(i, f"{label} has no MCP injection strategy") for i in ids)
        return InjectionPlan(defn.id, defn.name, strategy, reason, skipped=skipped)

    if strategy is McpInjection.CLAUDE_MCP_JSON:
        return _plan_mcp_json(
            defn, label, enabled=enabled, tokens=tokens, cwd=cwd, root=managed_projects_root
        )

    if strategy is McpInjection.ACP_MERGE:
        return _plan_acp(defn, label, enabled, agent_version)

    variable = ENV_CONTENT_VARS[strategy]
    content = build_opencode_config_content(enabled, tokens)
    if content is None:
        reason = (
            f"{label}: no enabled MCP server; {variable} is not set (left as inherited, "
            "never an empty object)"
        )
        return InjectionPlan(defn.id, defn.name, strategy, reason, env_untouched=(variable,))
    reason = f"{label}: {len(enabled)} MCP server(s) passed in {variable}"
    return InjectionPlan(
        defn.id, defn.name, strategy, reason, env={variable: content}, delivered=ids
    )


def _plan_mcp_json(
    defn: AgentDef,
    label: str,
    *,
    enabled: list[McpServerConfig],
    tokens: Mapping[str, str] | None,
    cwd: str,
    root: str | None,
) -> InjectionPlan:
    strategy = McpInjection.CLAUDE_MCP_JSON
    if not is_managed_project_cwd(cwd, root):
        where = (
            "no managed projects root is configured"
            if root is None
            else f"{cwd} is not strictly inside the managed projects root {root}"
        )
        reason = (
            f"{label}: {where}; {MCP_JSON_NAME} is never written into a user's own "
            f"directory, so {len(enabled)} enabled server(s) are not forwarded"
        )
        skipped = tuple(SkippedServer(s.id, "cwd is not a managed project dir") for s in enabled)
        return InjectionPlan(defn.id, defn.name, strategy, reason, skipped=skipped)
    path = os.path.join(os.path.normpath(cwd), MCP_JSON_NAME)
    managed_root = os.path.normpath(root) if root is not None else None
    document = build_claude_mcp_json(enabled, tokens)
    if document is None:
        # seed 002 §8.1: "启用的 server 清零时会主动 unlink 掉之前写的文件".
        reason = f"{label}: no enabled MCP server; a stale {MCP_JSON_NAME} is removed"
        return InjectionPlan(
            defn.id, defn.name, strategy, reason, removals=(path,), managed_root=managed_root
        )
    content = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    reason = f"{label}: {len(enabled)} MCP server(s) written to the project {MCP_JSON_NAME}"
    return InjectionPlan(
        defn.id,
        defn.name,
        strategy,
        reason,
        writes=(FileWrite(path, content),),
        managed_root=managed_root,
        delivered=tuple(s.id for s in enabled),
    )


def _plan_acp(
    defn: AgentDef, label: str, enabled: list[McpServerConfig], agent_version: str | None
) -> InjectionPlan:
    strategy = McpInjection.ACP_MERGE
    cutoff = defn.acp.stdio_mcp_removed_in_version
    env_format = AcpEnvFormat(defn.acp.mcp_env_format)
    remote = [s for s in enabled if s.transport is not McpTransport.STDIO]
    stdio = [s for s in enabled if s.transport is McpTransport.STDIO]
    skipped = [
        SkippedServer(s.id, f"{s.transport.value} transport: acp-merge takes stdio servers only")
        for s in remote
    ]
    entries = build_acp_mcp_servers(stdio, env_format, agent_version, cutoff)
    if stdio_mcp_suppressed(agent_version, cutoff):
        skipped.extend(
            SkippedServer(s.id, f"agent version {agent_version} >= {cutoff}: stdio MCP removed")
            for s in stdio
        )
        reason = (
            f"{label}: agent version {agent_version} >= {cutoff}, which removed stdio MCP; "
            f"{len(stdio)} stdio server(s) withheld"
        )
    else:
        reason = (
            f"{label}: {len(entries)} stdio MCP server(s) merged into ACP "
            f"session/new|load mcpServers (env as {env_format.value})"
        )
        if cutoff is not None and agent_version is None:
            reason += f"; withheld by the session if the agent reports version >= {cutoff}"
    return InjectionPlan(
        defn.id,
        defn.name,
        strategy,
        reason,
        acp_mcp_servers=tuple(entries),
        delivered=tuple(str(e["name"]) for e in entries),
        skipped=tuple(skipped),
    )
