"""``harness fakes install DIR`` and ``harness fakes list``.

``install`` exits 0 when every name was written, 1 when a name was left to a file it
did not write or to a symbolic link (each such path is named on stderr with the reason,
and under ``"kept"`` with ``--json``), 2 for bad usage (rule USERFILE-FAKES-001).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from fake_clis.scenario import list_scenarios
from harness.commands.common import load_defs
from harness.errors import HarnessError, UnknownAgentError
from harness.runtime.fakes_install import install_fakes, list_fakes

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
    defs = load_defs(args)
    if args.agent:
        known = {d.id for d in defs}
        missing = [a for a in args.agent if a not in known]
        if missing:
            raise UnknownAgentError(missing[0], sorted(known))
    launchers = WINDOWS_LAUNCHER_CHOICES[args.windows_launcher]
    report = install_fakes(args.dir, defs, agents=args.agent or None, launchers=launchers)
    # USERFILE-FAKES-001: a name left to the user's file is not a fake: the install is
    # incomplete, so it is named with its reason and the exit code says so.
    status = 1 if report.kept else 0
    if args.json:
        data = {"written": report.written, "skipped": report.skipped, "kept": report.kept}
        out.write(json.dumps(data, ensure_ascii=False) + "\n")
        return status
    for path, agent_id in sorted(report.written.items()):
        out.write(f"{agent_id:<18} {path}\n")
    for reason in report.skipped:
        print(f"harness: skipped: {reason}", file=sys.stderr)
    for path, why in sorted(report.kept.items()):
        print(f"harness: kept {path}: {why}; not overwritten", file=sys.stderr)
    summary = f"{len(report.written)} shims written to {args.dir}"
    if report.kept:
        summary += f"; {len(report.kept)} existing files kept as they were (named above)"
    out.write(summary + "\n")
    return status


def _list(args: argparse.Namespace, out: TextIO) -> int:
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
