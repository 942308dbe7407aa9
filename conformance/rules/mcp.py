"""Rules of external MCP injection and run tool bundles (seed 002 §8.1, §8.4; ref §7, §2.6;
wire §A.6).

Enforced by ``harness/mcp/servers.py`` (input model), ``builders.py`` (one builder per
strategy), ``inject.py`` (the pure plan), ``apply.py`` (the ``.mcp.json`` IO) and
``bundles.py`` (per-run bundles); proved by ``tests/mcp/``. Every rule is def-level
(``formats=()``): it is checked on a def's ``external_mcp_injection`` and related fields, not on
a stream.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(id=rule_id, tier=Tier.MANDATORY, statement=statement, citation=citation, formats=())


RULES: tuple[Rule, ...] = (
    # --- input and dispatch -----------------------------------------------------------
    _rule(
        "MCP-CONFIG-001",
        "A bad MCP config file or entry raises McpConfigError naming the file, the entry index "
        "and the field; no entry is dropped silently and a repeated id is an error.",
        "ref §7",
    ),
    _rule(
        "MCP-CONFIG-002",
        "An MCP config file may be the {mcpServers:{id:{...}}} object MCP clients write, "
        "{mcpServers:[...]}, {servers:[...]} or a bare array; each gives the same servers.",
        "ref §7",
    ),
    _rule(
        "MCP-DISPATCH-001",
        "The injection plan is chosen by the def's external_mcp_injection field alone, never by "
        "the agent id.",
        "seed 002 §9",
    ),
    _rule(
        "MCP-NONE-001",
        "A def without a strategy gets an explicit NONE plan whose reason names the agent and "
        "lists every enabled server as not delivered.",
        "seed 002 §8.1",
    ),
    # --- claude-mcp-json ------------------------------------------------------------------
    _rule(
        "MCP-CLAUDE-001",
        ".mcp.json is {mcpServers:{id:{command,args?,env?}|{type,url,headers?}}} over enabled "
        "servers with empty parts omitted, and null when no server is enabled.",
        "ref §7",
    ),
    _rule(
        "MCP-MANAGED-001",
        ".mcp.json is planned only when cwd is strictly inside the managed projects root; the "
        "root itself, a sibling, a '..' escape or a relative path is not managed.",
        "seed 002 §8.1",
    ),
    _rule(
        "MCP-MANAGED-002",
        "In a managed project dir with no enabled server the plan removes a stale .mcp.json; "
        "outside one nothing is written or removed.",
        "seed 002 §8.1",
    ),
    _rule(
        "MCP-MANAGED-003",
        "Applying a plan never writes or removes through a symlink or outside the real managed "
        "root: a symlinked .mcp.json or project dir that resolves out is refused.",
        "seed 002 §8.1",
    ),
    # --- acp-merge ------------------------------------------------------------------------
    _rule(
        "MCP-ACP-001",
        "acp-merge sends enabled stdio servers only, as {type:'stdio', name, command, args, env} "
        "with env as [{name,value}] or a map per acp.mcp_env_format, accepted by the ACP session.",
        "ref §7",
    ),
    _rule(
        "MCP-ACP-002",
        "Stdio servers are withheld when the agent version is >= "
        "acp.stdio_mcp_removed_in_version, compared numerically (0.100.0 >= 0.37.0).",
        "ref §2.6",
    ),
    # --- env content ----------------------------------------------------------------------
    _rule(
        "MCP-ENV-001",
        "opencode-env-content / mimo-env-content set OPENCODE_CONFIG_CONTENT / "
        "MIMOCODE_CONFIG_CONTENT to a JSON string, and leave the variable unset (never '{}') "
        "when no server is enabled.",
        "seed 002 §8.1",
    ),
    _rule(
        "MCP-OPENCODE-001",
        "Every generated OpenCode config validates against opencode-mcp.schema.json: a local "
        "server's command is one array holding the executable and its args, with no args key.",
        "wire §A.6",
    ),
    # --- OAuth -----------------------------------------------------------------------------
    _rule(
        "MCP-AUTH-001",
        "A user's non-blank Authorization header (any case) wins over the OAuth token; a blank "
        "one is ignored; otherwise the token becomes 'Authorization: Bearer <token>'.",
        "seed 002 §8.1",
    ),
    _rule(
        "MCP-AUTH-002",
        "Only servers whose effective auth mode is oauth receive the stored token; stdio and "
        "authMode 'none' servers never do.",
        "ref §7",
    ),
    # --- run tool bundles (seed 002 §8.4 table) --------------------------------------------
    _rule(
        "MCP-BUNDLE-001",
        "A claude-mcp-json agent accepts a run tool bundle only for the managed-project "
        "delivery target.",
        "seed 002 §8.4",
    ),
    _rule(
        "MCP-BUNDLE-002",
        "An opencode-env-content or mimo-env-content agent accepts any run tool bundle.",
        "seed 002 §8.4",
    ),
    _rule(
        "MCP-BUNDLE-003",
        "An acp-merge agent accepts stdio bundle servers only; the refusal names the first "
        "enabled non-stdio entry's index and transport.",
        "seed 002 §8.4",
    ),
    _rule(
        "MCP-BUNDLE-004",
        "An agent without a strategy refuses a bundle with enabled servers, naming the agent.",
        "seed 002 §8.4",
    ),
    _rule(
        "MCP-BUNDLE-005",
        "Run servers override persisted servers with the same id; persisted token ids are the "
        "enabled persisted servers the run did not override.",
        "seed 002 §8.4",
    ),
    _rule(
        "MCP-BUNDLE-006",
        "In sandbox mode persisted servers take no part in the run.",
        "seed 002 §8.4",
    ),
    # --- secrets ------------------------------------------------------------------------------
    _rule(
        "MCP-SECRET-001",
        "No env value, header value, URL credential or token appears in an MCP error message, "
        "a server's repr, or a plan's repr, description or JSON summary.",
        "seed 001 §11",
    ),
    # --- the runner applies it (def-level checks run the def's fake: adapter_layer.py) ----
    _rule(
        "MCP-RUN-001",
        "A run of a claude-mcp-json def in a managed project dir hands the CLI a .mcp.json equal "
        "to the built document and removes it (or puts the old file back) when the run ends, "
        "failed or cancelled too; outside a managed dir no .mcp.json is written.",
        "seed 002 §8.1",
    ),
    _rule(
        "MCP-RUN-002",
        "A run of an env-content def hands the CLI OPENCODE_CONFIG_CONTENT / "
        "MIMOCODE_CONFIG_CONTENT equal to the built config, and no such variable from the "
        "runner when no server is enabled.",
        "seed 002 §8.1",
    ),
    _rule(
        "MCP-RUN-003",
        "A run of an acp-merge def sends the planned stdio servers as mcpServers in ACP "
        "session/new (and session/load), with env in the def's shape.",
        "seed 002 §8.1",
    ),
    _rule(
        "MCP-RUN-004",
        "A run of a def without a strategy reports the none plan with every enabled server "
        "listed as not delivered, and hands the CLI no .mcp.json and no MCP env variable.",
        "seed 002 §8.1",
    ),
    _rule(
        "MCP-RUN-005",
        "A run tool bundle reaches the CLI by the def's strategy, merged over the persisted "
        "servers by id, or the run is refused before any spawn with the bundle table's rule.",
        "seed 002 §8.4",
    ),
    _rule(
        "MCP-SECRET-002",
        "No MCP env, header or token value given to a run appears in its stderr tail, argv, "
        "error message, summary or recording.",
        "seed 001 §14",
    ),
)
