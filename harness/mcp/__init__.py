"""External MCP injection and run tool bundles (seed 002 §8.1, §8.4; ref §7).

* :mod:`harness.mcp.servers` - the input model (:class:`McpServerConfig`) and its file parser;
* :mod:`harness.mcp.builders` - one pure builder per injection strategy;
* :mod:`harness.mcp.inject` - :func:`plan_injection`, the pure per-run plan;
* :mod:`harness.mcp.apply` - the only IO: writing/removing ``.mcp.json`` safely;
* :mod:`harness.mcp.bundles` - per-run bundles: validation per strategy and merge by id.

How a runner uses it (one run)::

    selection = resolve_servers_for_run(persisted, bundle, sandbox)
    validate_run_tool_bundle(defn, bundle, delivery_target)           # before anything else
    plan = plan_injection(defn, selection.enabled_servers, tokens, cwd=cwd,
                          managed_projects_root=root, agent_version=version)
    applied = apply_injection(plan)                                    # before spawn
    # env_overlay |= applied.env ; SessionRequest.mcp_servers = plan.acp_mcp_servers
    ...
    restore_injection(applied)                                         # after the run
"""

from __future__ import annotations

from harness.mcp.apply import AppliedInjection, McpApplyError, apply_injection, restore_injection
from harness.mcp.builders import (
    McpBuildError,
    build_acp_mcp_servers,
    build_claude_mcp_json,
    build_opencode_config,
    build_opencode_config_content,
    merge_auth_header,
    opencode_config_problems,
)
from harness.mcp.bundles import (
    BundleRefusedError,
    DeliveryTarget,
    RunServerSelection,
    parse_run_tool_bundle,
    resolve_servers_for_run,
    validate_run_tool_bundle,
)
from harness.mcp.inject import (
    ENV_CONTENT_VARS,
    MCP_JSON_NAME,
    FileWrite,
    InjectionPlan,
    McpInjectionError,
    SkippedServer,
    injection_secrets,
    is_managed_project_cwd,
    plan_injection,
)
from harness.mcp.servers import (
    McpAuthMode,
    McpConfigError,
    McpServerConfig,
    McpTransport,
    load_mcp_config,
    parse_mcp_config,
)

__all__ = [
    "ENV_CONTENT_VARS",
    "MCP_JSON_NAME",
    "AppliedInjection",
    "BundleRefusedError",
    "DeliveryTarget",
    "FileWrite",
    "InjectionPlan",
    "McpApplyError",
    "McpAuthMode",
    "McpBuildError",
    "McpConfigError",
    "McpInjectionError",
    "McpServerConfig",
    "McpTransport",
    "RunServerSelection",
    "SkippedServer",
    "apply_injection",
    "build_acp_mcp_servers",
    "build_claude_mcp_json",
    "build_opencode_config",
    "build_opencode_config_content",
    "injection_secrets",
    "is_managed_project_cwd",
    "load_mcp_config",
    "merge_auth_header",
    "opencode_config_problems",
    "parse_mcp_config",
    "parse_run_tool_bundle",
    "plan_injection",
    "resolve_servers_for_run",
    "restore_injection",
    "validate_run_tool_bundle",
]
