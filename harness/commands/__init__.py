"""Implementations of the ``harness`` subcommands (argument parsing is in cli.py).

One module per subcommand, plus what several of them share: ``common`` (loading and
choosing defs) and ``render`` (an event as one terminal line).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from harness.errors import HarnessError

__all__ = ["run_command"]


# Each command's module is imported when that command runs: `harness agents` must not pay
# for aiohttp, jsonschema, the runner or the conformance suite (start-up time).
def run_command(args: argparse.Namespace, out: TextIO) -> int:
    """Run the parsed subcommand ``args.command``, writing its output to ``out``."""
    if args.command == "agents":
        from harness.commands.agents import cmd_agents

        return cmd_agents(args, out)
    if args.command == "detect":
        from harness.commands.detect import cmd_detect

        return cmd_detect(args, out)
    if args.command == "argv":
        from harness.commands.argv import cmd_argv

        return cmd_argv(args, out)
    if args.command == "parse":
        from harness.commands.parse import cmd_parse

        return cmd_parse(args, out)
    if args.command == "run":
        from harness.commands.run import cmd_run

        return cmd_run(args, out)
    if args.command == "fakes":
        from harness.commands.fakes import cmd_fakes

        return cmd_fakes(args, out)
    if args.command == "record":
        from harness.commands.record import cmd_record

        return cmd_record(args, out)
    if args.command == "replay":
        from harness.commands.replay import cmd_replay

        return cmd_replay(args, out)
    if args.command == "conform":
        from harness.commands.conform import cmd_conform

        return cmd_conform(args, out)
    if args.command == "live":
        from harness.commands.live import cmd_live

        return cmd_live(args, out)
    if args.command == "mcp":
        from harness.commands.mcp import cmd_mcp

        return cmd_mcp(args, out)
    if args.command == "dsh":
        from harness.commands.dsh import cmd_dsh

        return cmd_dsh(args, out)
    raise HarnessError(f"unknown command {args.command!r}")
