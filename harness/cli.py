"""The ``harness`` command.

Subcommands: ``agents``, ``detect``, ``argv``, ``parse``. Errors go to stderr
with a non-zero exit: 2 for bad usage or bad input, 1 for a failed verdict
(e.g. a prompt over budget, a capture whose stream fails).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from harness import __version__
from harness.errors import HarnessError

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Reference engine and conformance suite for coding-agent CLI adapters.",
    )
    parser.add_argument("--version", action="version", version=f"adapter-harness {__version__}")
    parser.add_argument(
        "--profiles",
        metavar="FILE",
        help="local agent profiles JSON (default: $HARNESS_AGENT_PROFILES)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    agents = sub.add_parser("agents", help="list every agent definition")
    agents.add_argument("--json", action="store_true", help="one JSON array")

    detect = sub.add_parser("detect", help="probe the installed CLIs")
    detect.add_argument("--json", action="store_true", help="one JSON object per line")
    detect.add_argument("--agent", action="append", metavar="ID", help="only these ids")

    argv = sub.add_parser("argv", help="the exact argv an agent would be launched with")
    argv.add_argument("agent", metavar="AGENT")
    argv.add_argument("--prompt", help="prompt text (default: empty)")
    argv.add_argument("--prompt-file", metavar="F", help="read the prompt from F")
    argv.add_argument("--platform", help="win32, darwin or linux (default: this machine)")
    argv.add_argument("--bin", metavar="PATH", help="resolved executable (default: resolve)")
    argv.add_argument("--resume", metavar="ID", help="resume this native session")
    argv.add_argument("--model", metavar="M")
    argv.add_argument("--reasoning", metavar="R")
    argv.add_argument("--cwd", metavar="DIR")
    argv.add_argument("--add-dir", action="append", default=[], metavar="DIR")
    argv.add_argument(
        "--cap",
        action="append",
        default=[],
        metavar="KEY[=false]",
        help="a capability the help probe found (repeatable)",
    )
    argv.add_argument("--json", action="store_true")

    parse = sub.add_parser("parse", help="parse a raw stdout capture into events")
    parse.add_argument("file", metavar="FILE")
    parse.add_argument("--agent", metavar="ID")
    parse.add_argument("--format", metavar="FORMAT")
    parse.add_argument("--parser", metavar="DIALECT")
    parse.add_argument("--chunk", type=int, metavar="N", help="feed N bytes at a time")
    parse.add_argument("--json", action="store_true", help="one JSON event per line")
    parse.add_argument(
        "--frames",
        action="store_true",
        help="two-way formats: also print the frames the session sent",
    )
    parse.add_argument(
        "--host-input",
        metavar="FILE",
        help="two-way formats: what the recorded client wrote to stdin (followed and compared)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    from harness.commands import run_command

    try:
        return run_command(args, sys.stdout)
    except HarnessError as exc:
        print(f"harness: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


def print_json_line(obj: Any, out: TextIO) -> None:
    out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    out.flush()


if __name__ == "__main__":
    sys.exit(main())
