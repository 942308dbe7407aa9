"""``harness mcp plan AGENT --mcp-config FILE``: how a run would hand MCP servers to AGENT.

Prints the :class:`~harness.mcp.inject.InjectionPlan` (seed 002 §8.1): the strategy, the env
variable / ``.mcp.json`` / ACP ``mcpServers`` it would use, and every server it would not
deliver, with the reason. Values (env, headers, tokens, file content) are never printed
(MCP-SECRET-001). Nothing is written: this is the pure plan.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TextIO

from harness.commands import load_defs
from harness.errors import HarnessError

__all__ = ["cmd_mcp"]


def cmd_mcp(args: argparse.Namespace, out: TextIO) -> int:
    from harness.defs.registry import get_agent_def
    from harness.mcp.inject import plan_injection
    from harness.mcp.servers import load_mcp_config

    if getattr(args, "mcp_command", None) != "plan":
        raise HarnessError("usage: harness mcp plan AGENT --mcp-config FILE")
    defn = get_agent_def(args.agent, load_defs(args))
    servers = load_mcp_config(args.mcp_config)
    cwd = os.path.abspath(args.cwd or os.getcwd())
    root = os.path.abspath(args.projects_root) if args.projects_root else None
    plan = plan_injection(
        defn,
        servers,
        None,
        cwd=cwd,
        managed_projects_root=root,
        agent_version=args.agent_version,
    )
    if args.json:
        out.write(json.dumps(plan.to_json(), ensure_ascii=False) + "\n")
    else:
        out.write(f"strategy: {plan.strategy.value}\n{plan.describe()}\n")
    out.flush()
    return 0
