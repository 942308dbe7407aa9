"""External MCP injection and run tool bundles (seed 002 §8.1, §8.4; ref §7).

Design: docs/design/mcp.md#harness.mcp
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
