"""``harness fakes install DIR`` and ``harness fakes list``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from harness.commands import load_defs
from harness.errors import HarnessError, UnknownAgentError

__all__ = ["WINDOWS_LAUNCHER_CHOICES", "cmd_fakes"]


def cmd_fakes(args: argparse.Namespace, out: TextIO) -> int:
    action = getattr(args, "fakes_command", None)
    if action == "install":
        return _install(args, out)
    if action == "list":
        return _list(args, out)
    raise HarnessError("harness fakes: give a subcommand: install DIR | list")


#: ``--windows-launcher`` -> the files written per name on Windows (RUN-FAKES-EXE-001).
WINDOWS_LAUNCHER_CHOICES: dict[str, tuple[str, ...]] = {
    "both": ("cmd", "exe"),
    "cmd": ("cmd",),
    "exe": ("exe",),
}


def _install(args: argparse.Namespace, out: TextIO) -> int:
    from harness.fakes_install import install_fakes

    defs = load_defs(args)
    if args.agent:
        known = {d.id for d in defs}
        missing = [a for a in args.agent if a not in known]
        if missing:
            raise UnknownAgentError(missing[0], sorted(known))
    launchers = WINDOWS_LAUNCHER_CHOICES[args.windows_launcher]
    report = install_fakes(args.dir, defs, agents=args.agent or None, launchers=launchers)
    if args.json:
        out.write(
            json.dumps({"written": report.written, "skipped": report.skipped}, ensure_ascii=False)
            + "\n"
        )
        return 0
    for path, agent_id in sorted(report.written.items()):
        out.write(f"{agent_id:<18} {path}\n")
    for reason in report.skipped:
        print(f"harness: skipped: {reason}", file=sys.stderr)
    out.write(f"{len(report.written)} shims written to {args.dir}\n")
    return 0


def _list(args: argparse.Namespace, out: TextIO) -> int:
    from fake_clis.scenario import list_scenarios
    from harness.fakes_install import list_fakes

    entries = list_fakes()
    scenarios = list_scenarios()
    if args.json:
        data = {
            "fakes": [{"agent": e.agent_id, "module": e.module, "prog": e.prog} for e in entries],
            "scenarios": scenarios,
        }
        out.write(json.dumps(data, ensure_ascii=False) + "\n")
        return 0
    for entry in entries:
        out.write(f"{entry.agent_id:<18} {entry.module:<28} {entry.prog}\n")
    out.write("scenarios: " + ", ".join(scenarios) + "\n")
    return 0
