"""``harness dsh setup [--yes] [--json]``: install the pinned open-design profile into dsh.

The work is :func:`harness.runtime.dsh_setup.setup_dsh`; this module only wires the terminal to it.
Without ``--yes`` the question goes to stderr and the answer is read from stdin, and only
when stdin is a terminal (seed 001 §4: "Only after the user confirms does OD invoke ...");
with neither, the setup refuses. The command has no option that names a package, a profile
or a destination (seed 001 §14; rule DSHSETUP-PINNED-001).

Exit codes: 0 when a compatible profile is in place, 1 when the setup failed or the user
cancelled (nothing changed), 2 when confirmation was needed but there was no terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TextIO

from harness.errors import HarnessError
from harness.runtime.dsh_setup import DshSetupError, SetupFailure, SetupStatus, setup_dsh

__all__ = ["cmd_dsh"]

_EXIT_READY = 0
_EXIT_FAILED = 1
_EXIT_USAGE = 2


def _ask_on_terminal(question: str) -> bool:
    """Ask on stderr, read one stdin line; only ``y``/``yes`` is a yes (EOF is a no)."""
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def cmd_dsh(args: argparse.Namespace, out: TextIO) -> int:
    if getattr(args, "dsh_command", None) != "setup":
        raise HarnessError("harness dsh: give a subcommand: setup")
    interactive = not args.yes and sys.stdin.isatty()
    try:
        report = setup_dsh(
            assume_yes=bool(args.yes),
            ask=_ask_on_terminal if interactive else None,
            env=dict(os.environ),
            platform=sys.platform,
            home=str(Path.home()),
            interpreter_dir=str(Path(sys.executable).parent),
        )
    except DshSetupError as exc:
        if args.json:
            out.write(json.dumps({"status": "failed", "error": exc.to_json()}) + "\n")
            out.flush()
        print(f"harness: error: {exc}", file=sys.stderr)
        if exc.failure is SetupFailure.CONFIRMATION_REQUIRED:
            return _EXIT_USAGE
        return _EXIT_FAILED

    if report.warning:
        print(f"harness: warning: {report.warning}", file=sys.stderr)
    if args.json:
        out.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
    elif report.status is SetupStatus.CANCELLED:
        out.write(f"cancelled: nothing was installed; dsh profile {report.profile} is unchanged\n")
    elif report.installed:
        out.write(
            f"installed {report.package} {report.bundle_version} (sha256 {report.sha256}) "
            f"into dsh profile {report.profile}\n"
            f"profile probe: compatible, plugin {report.plugin_version}; dsh {report.version}\n"
        )
    else:
        out.write(
            f"dsh profile {report.profile} is already compatible (plugin "
            f"{report.plugin_version}; dsh {report.version}); nothing installed\n"
        )
    out.flush()
    return _EXIT_READY if report.status is SetupStatus.READY else _EXIT_FAILED
