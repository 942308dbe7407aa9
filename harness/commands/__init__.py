"""Implementations of the ``harness`` subcommands (argument parsing is in cli.py)."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import TextIO

from harness.defs.types import AgentDef
from harness.errors import HarnessError, LocalProfileError

__all__ = ["ChosenDef", "choose_def", "load_defs", "run_command"]


def load_defs(args: argparse.Namespace) -> tuple[AgentDef, ...]:
    """Built-in defs plus the local profiles (``--profiles`` or ``$HARNESS_AGENT_PROFILES``).

    Only the commands that use the defs call this, so a broken profiles file fails those and
    no other (CLIERR-PROFILES-001): the first problem (file, entry, field) is raised, with the
    count of the others, and ``main`` prints it as one line with exit 2.
    """
    from harness.defs.registry import load_agent_defs

    defs, problems = load_agent_defs(profile_path=getattr(args, "profiles", None), env=os.environ)
    if problems:
        first = problems[0]
        if len(problems) > 1:
            more = f"{first.problem}; and {len(problems) - 1} more problem(s) in this file"
            first = LocalProfileError(first.path, first.index, first.field, more)
        raise first
    return defs


@dataclass(frozen=True)
class ChosenDef:
    """The def a command acts on, and the set it belongs to."""

    defn: AgentDef
    #: Built-ins and local profiles, or (for a ``--def`` file's def) that def alone: the
    #: set a fake install settles binary names over.
    family: tuple[AgentDef, ...]
    #: The def file it came from (``--def``), or ``None``.
    source: str | None = None


def choose_def(args: argparse.Namespace, agent: str | None) -> ChosenDef:
    """``agent`` among the built-ins, local profiles and the defs of the ``--def`` files
    (``args.defs``, loaded as ``harness conform --def`` loads them: DEFCHECK-LOAD-001);
    with no ``agent``, the one def the files export."""
    from conformance.checks.loader import load_def_file
    from harness.defs.registry import get_agent_def

    defs = load_defs(args)
    reserved = {d.id for d in defs}
    from_files: dict[str, tuple[AgentDef, str]] = {}
    for path in getattr(args, "defs", None) or ():
        for defn in load_def_file(path, reserved_ids=reserved):
            from_files[defn.id] = (defn, path)
            reserved.add(defn.id)
    if agent is None:
        if not from_files:
            raise HarnessError("give AGENT (an agent id) or --def FILE")
        if len(from_files) > 1:
            raise HarnessError(f"give AGENT: the --def files define {', '.join(from_files)}")
        agent = next(iter(from_files))
    if agent in from_files:
        defn, path = from_files[agent]
        return ChosenDef(defn, (defn,), path)
    every = [*defs, *(d for d, _ in from_files.values())]
    return ChosenDef(get_agent_def(agent, every), defs)


def run_command(args: argparse.Namespace, out: TextIO) -> int:
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
