"""The ``harness`` command.

Subcommands: ``agents``, ``detect``, ``argv``, ``parse``, ``run``, ``fakes``,
``record``, ``replay``, ``conform``, ``live``, ``mcp``, ``dsh``. Errors go to stderr
with a non-zero exit: 2 for bad usage or bad input, 1 for a failed verdict
(e.g. a prompt over budget, a capture whose stream fails).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from harness import __version__, commands
from harness.commands.live import add_live_parser
from harness.errors import HarnessError
from harness.host.mcp_shapes import ACCEPTED_SHAPES
from harness.inputs import check_argv

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
    argv.add_argument("agent", metavar="AGENT", nargs="?", help=_AGENT_HELP)
    _add_def_arg(argv)
    argv.add_argument("--prompt", help="prompt text (default: empty)")
    argv.add_argument("--prompt-file", metavar="F", help="read the prompt from F")
    argv.add_argument("--platform", help="win32, darwin or linux (default: this machine)")
    argv.add_argument(
        "--budget-generation",
        metavar="G",
        help="whose POSIX prompt budget: current, seed-002 or legacy (default: the def's)",
    )
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
    _add_adapter_layer_args(argv)

    parse = sub.add_parser("parse", help="parse a raw stdout capture into events")
    parse.add_argument("file", metavar="FILE")
    parse.add_argument("--agent", metavar="ID", help="the def whose parser reads FILE")
    _add_def_arg(parse)
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

    run = sub.add_parser("run", help="run one turn of an agent CLI, printing events live")
    run.add_argument("agent", metavar="AGENT", nargs="?", help=_AGENT_HELP)
    _add_def_arg(run)
    run.add_argument("--fake", action="store_true", help="run the fake CLI for AGENT")
    run.add_argument("--scenario", metavar="S", help="fake scenario name or file (with --fake)")
    run.add_argument("--prompt", metavar="TEXT|@FILE", help="the prompt, or @FILE to read it")
    run.add_argument("--cwd", metavar="DIR", help="project directory (default: current)")
    run.add_argument(
        "--cancel-after", type=float, metavar="SECONDS", help="cancel the run after SECONDS"
    )
    run.add_argument("--model", metavar="M")
    run.add_argument("--resume", metavar="ID", help="resume this native session")
    run.add_argument("--transport", metavar="NAME", help="one of the def's transports")
    run.add_argument("--first-output-timeout", type=int, metavar="MS")
    run.add_argument("--inactivity-timeout", type=int, metavar="MS")
    run.add_argument("--json", action="store_true", help="one JSON object per line")
    _add_adapter_layer_args(run)
    run.add_argument(
        "--tool-bundle",
        metavar="FILE",
        help='this run\'s MCP servers: {"mcpServers": ...}, its value as in --mcp-config',
    )
    run.add_argument(
        "--sandbox", action="store_true", help="leave the --mcp-config servers out (bundle only)"
    )
    run.add_argument(
        "--conversation",
        metavar="ID",
        help="continue conversation ID: resume its native session when compatible",
    )
    run.add_argument(
        "--session-store",
        metavar="DIR",
        help="where --conversation keeps sessions (default: the per-user state dir)",
    )
    run.add_argument("--record", metavar="FILE", help="record the run to FILE (format v1)")
    run.add_argument("--force", action="store_true", help="--record may replace an existing FILE")

    fakes = sub.add_parser("fakes", help="install or list the fake CLIs")
    fakes_sub = fakes.add_subparsers(dest="fakes_command", metavar="ACTION")
    fakes_install = fakes_sub.add_parser("install", help="write shims named like the real CLIs")
    fakes_install.add_argument("dir", metavar="DIR")
    fakes_install.add_argument("--agent", action="append", metavar="ID", help="only these ids")
    fakes_install.add_argument(
        "--windows-launcher",
        choices=("both", "cmd", "exe"),
        default="both",
        help="on Windows: write <name>.cmd, <name>.exe or both (default: both)",
    )
    fakes_install.add_argument("--json", action="store_true")
    fakes_list = fakes_sub.add_parser("list", help="agent ids, emulator modules, scenarios")
    fakes_list.add_argument("--json", action="store_true")

    record = sub.add_parser(
        "record",
        help="run CMD ARGS under an agent def and record the run",
        usage="harness record --agent ID --out FILE [options] -- CMD ARGS...",
    )
    record.add_argument("--agent", required=True, metavar="ID", help="the def that drives CMD")
    record.add_argument("--out", required=True, metavar="FILE", help="the recording to write")
    record_prompt = record.add_mutually_exclusive_group()
    record_prompt.add_argument("--prompt", metavar="TEXT", help="the prompt (default: empty)")
    record_prompt.add_argument("--prompt-file", metavar="PATH", help="read the prompt from PATH")
    record.add_argument("--cwd", metavar="DIR", help="project directory (default: current)")
    record.add_argument("--transport", metavar="NAME", help="one of the def's transports")
    record.add_argument(
        "--cli-version", metavar="V", help="the CLI's version (default: the def's version probe)"
    )
    record.add_argument(
        "--expect",
        choices=("completed", "failed", "cancelled"),
        help="how the run should end (default: completed); pinned in the recording",
    )
    record.add_argument("--force", action="store_true", help="replace an existing --out FILE")
    record.add_argument("--json", action="store_true", help="one JSON object per line")
    record.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ARGS")

    replay = sub.add_parser("replay", help="replay recordings through the engine and judge them")
    replay.add_argument("paths", nargs="+", metavar="FILE|DIR", help="recordings, or directories")
    replay.add_argument("--json", action="store_true", help="JSON lines: events and verdicts")
    replay.add_argument(
        "--chunking",
        choices=("recorded", "line", "1", "random"),
        default="recorded",
        help="how stdout is fed: recorded chunks, lines, single bytes, or random cuts",
    )
    replay.add_argument("--seed", type=int, default=0, help="seed of --chunking random")
    replay.add_argument("--timing", action="store_true", help="re-apply the recorded gaps")
    replay.add_argument(
        "--platform",
        choices=("linux", "darwin", "win32"),
        action="append",
        dest="platforms",
        help="re-run the prompt-budget guards for this OS (repeatable; default: all three)",
    )
    replay.add_argument(
        "--bin",
        metavar="PATH",
        dest="bin_path",
        help="the binary launched on that OS (a .cmd shim or an .exe on win32)",
    )

    conform = sub.add_parser(
        "conform", help="judge defs rule by rule against their fakes; reports and a verdict"
    )
    _add_def_arg(conform)
    conform.add_argument("--agent", action="append", metavar="ID", help="only these built-in ids")
    conform.add_argument("--real", action="store_true", help="also judge the installed real CLIs")
    conform.add_argument("--baseline", metavar="FILE", help="expected failures (def:RULE lines)")
    conform.add_argument("--flaky", metavar="FILE", help="checks re-run solo before failing")
    conform.add_argument(
        "--report",
        action="append",
        metavar="KIND",
        help="json, junit, html or terminal (repeatable; default: all four)",
    )
    conform.add_argument("--out", metavar="DIR", help="report directory (default: conform-report)")
    conform.add_argument("--jobs", type=int, metavar="N", help="fake runs at a time")
    conform.add_argument("--rule", action="append", metavar="ID", help="only these rule ids")
    conform.add_argument("--scenario", action="append", metavar="NAME", help="only these scenarios")
    conform.add_argument(
        "--budget-generation",
        metavar="G",
        help="judge every def with this POSIX prompt budget: current, seed-002 or legacy",
    )
    conform.add_argument("--cache-dir", metavar="DIR", help="--real: installed CLIs cache")
    conform.add_argument("--record-dir", metavar="DIR", help="--real: record real runs here")

    add_live_parser(sub)

    mcp = sub.add_parser("mcp", help="external MCP injection: show a run's plan")
    mcp_sub = mcp.add_subparsers(dest="mcp_command", metavar="ACTION")
    mcp_plan = mcp_sub.add_parser("plan", help="how AGENT would receive the MCP servers of FILE")
    mcp_plan.add_argument("agent", metavar="AGENT")
    mcp_plan.add_argument("--mcp-config", required=True, metavar="FILE", help=_MCP_CONFIG_HELP)
    mcp_plan.add_argument("--cwd", metavar="DIR", help="project directory (default: current)")
    mcp_plan.add_argument("--projects-root", metavar="DIR", help="managed projects root")
    mcp_plan.add_argument("--agent-version", metavar="V", help="the agent's detected version")
    mcp_plan.add_argument("--json", action="store_true", help="one JSON object")
    mcp_restore = mcp_sub.add_parser(
        "restore", help="put back the files a killed run left injected in DIR (its journal)"
    )
    mcp_restore.add_argument("dir", metavar="DIR", help="the project directory")
    mcp_restore.add_argument("--json", action="store_true", help="one JSON object")

    # seed 001 §14: no option may name the package, the profile or a destination.
    dsh = sub.add_parser("dsh", help="DeepSeek Harness: install the pinned open-design profile")
    dsh_sub = dsh.add_subparsers(dest="dsh_command", metavar="ACTION")
    dsh_setup = dsh_sub.add_parser("setup", help="verify and install the embedded profile bundle")
    dsh_setup.add_argument("--yes", action="store_true", help="install without asking")
    dsh_setup.add_argument("--json", action="store_true", help="one JSON object")
    return parser


_MCP_CONFIG_HELP = f"external MCP servers JSON: {ACCEPTED_SHAPES}"
_AGENT_HELP = "a built-in, local profile or --def id (default: the --def file's one def)"


def _add_def_arg(cmd: argparse.ArgumentParser) -> None:
    """``--def PATH.py``: an adapter author's def file, loaded and validated as data
    (DEFCHECK-LOAD-001); the same option on every command that takes a def."""
    cmd.add_argument(
        "--def",
        dest="defs",
        action="append",
        metavar="PATH.py",
        help="an author's def file exporting AGENT_DEF or AGENT_DEFS (repeatable)",
    )


def _add_adapter_layer_args(cmd: argparse.ArgumentParser) -> None:
    """MCP servers and skills around a run (seed 002 §8.1, seed 000 §4): argv and run."""
    cmd.add_argument("--mcp-config", metavar="FILE", help=_MCP_CONFIG_HELP)
    cmd.add_argument(
        "--skill", action="append", default=[], metavar="DIR", help="a skill dir (repeatable)"
    )
    cmd.add_argument(
        "--projects-root", metavar="DIR", help="managed projects root (.mcp.json only below it)"
    )
    cmd.add_argument("--agent-version", metavar="V", help="the agent's detected version")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Bad input (any :class:`HarnessError`) is one ``harness: error:`` line
    on stderr and exit 2 (CLIERR-ONE-LINE-001); any other exception is a bug and shows as one."""
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        check_argv(words)
    except HarnessError as exc:
        return _usage_error(exc)
    parser = _build_parser()
    args = parser.parse_args(words)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return commands.run_command(args, sys.stdout)
    except HarnessError as exc:
        return _usage_error(exc)
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        # A Ctrl-C before a command installed its own handling (or in one that has none):
        # nothing was spawned or injected yet, so stop quietly with the shell's code.
        print("harness: interrupted", file=sys.stderr)
        return 128 + int(signal.SIGINT)


def _usage_error(exc: HarnessError) -> int:
    print(f"harness: error: {exc}", file=sys.stderr)
    return EXIT_USAGE


def print_json_line(obj: Any, out: TextIO) -> None:
    out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    out.flush()


if __name__ == "__main__":
    sys.exit(main())
