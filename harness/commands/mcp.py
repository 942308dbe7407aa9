"""``harness mcp plan AGENT --mcp-config FILE``: how a run would hand MCP servers to AGENT;
``harness mcp restore DIR``: put back what a killed run left injected in DIR.

Prints the :class:`~harness.mcp.inject.InjectionPlan` (seed 002 §8.1): the strategy, the env
variable / ``.mcp.json`` / ACP ``mcpServers`` it would use, and every server it would not
deliver, with the reason. Values (env, headers, tokens, file content) are never printed
(MCP-SECRET-001). Nothing is written: this is the pure plan.

``restore`` applies DIR's restore journal (:mod:`harness.mcp.journal`, SIG-JOURNAL-002): every
file a run that is gone (a harness killed with ``kill -9``) left injected comes back as the
user had it, with its mode, or is removed if it did not exist. Entries of a harness that is
still running are left to it and reported. Exit 0 when nothing is left to restore, 1 when a
live run still holds files; a journal that cannot be read is an error naming it (exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TextIO

from harness.commands.common import load_defs
from harness.defs.registry import get_agent_def
from harness.errors import HarnessError
from harness.mcp.inject import plan_injection
from harness.mcp.journal import JOURNAL_NAME, recover
from harness.mcp.servers import load_mcp_config

__all__ = ["cmd_mcp"]


def cmd_mcp(args: argparse.Namespace, out: TextIO) -> int:
    command = getattr(args, "mcp_command", None)
    if command == "restore":
        return _restore(args, out)
    if command != "plan":
        raise HarnessError(
            "usage: harness mcp plan AGENT --mcp-config FILE | harness mcp restore DIR"
        )
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


def _restore(args: argparse.Namespace, out: TextIO) -> int:
    directory = os.path.abspath(args.dir)
    if not os.path.isdir(directory):
        raise HarnessError(f"harness mcp restore: {directory} is not a directory")
    report = recover(directory)  # a JournalError is a HarnessError: one line, exit 2
    if args.json:
        out.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
    else:
        for path in report.restored:
            out.write(f"restored: {path}\n")
        for path in report.removed:
            out.write(f"removed:  {path} (it did not exist before the run)\n")
        pids = sorted({e.owner.pid for e in report.live})
        if pids:
            held = ", ".join(str(p) for p in pids)
            out.write(f"running:  harness pid {held} still holds {JOURNAL_NAME}; left to it\n")
        if not (report.restored or report.removed or pids):
            out.write(f"nothing to restore in {directory}\n")
    out.flush()
    return 1 if report.live else 0
