"""State diagrams drawn from the transition tables into ``docs/design/sessions.md``.

``python -m harness.runner.diagrams --check`` exits 1 when a diagram differs from its
table (MACHINE-DIAGRAM-001); ``--write`` redraws them. Each diagram sits between
``<!-- diagram:begin NAME -->`` and ``<!-- diagram:end -->``, NAME being the machine's
name; the prose around them is left alone. It lives in the runner package because the
runner is the layer that sees both the sessions it drives and its own stop ladder.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.protocols import codex_app_server, dsh, pi_rpc
from harness.protocols.acp import state as acp_state
from harness.protocols.machine import Machine, mermaid
from harness.runner import stop

__all__ = ["DOCUMENT", "MACHINES", "check", "main", "render"]

#: The drawn machines, in the document's order.
MACHINES: tuple[Machine[Any, Any], ...] = (
    acp_state.MACHINE,
    codex_app_server.MACHINE,
    pi_rpc.MACHINE,
    dsh.MACHINE,
    stop.LADDER,
)
DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "design" / "sessions.md"

_BLOCK = re.compile(
    r"(?P<begin><!-- diagram:begin (?P<name>[^ >]+) -->\n)"
    r"(?P<body>.*?)(?P<end><!-- diagram:end -->)",
    re.DOTALL,
)


def render(text: str) -> str:
    """``text`` with every diagram block redrawn from its table."""
    by_name = {machine.name: machine for machine in MACHINES}

    def redraw(match: re.Match[str]) -> str:
        machine = by_name.get(match["name"])
        if machine is None:
            return match[0]
        return f"{match['begin']}{mermaid(machine)}\n{match['end']}"

    return _BLOCK.sub(redraw, text)


def check(text: str) -> list[str]:
    """What is wrong with ``text``: unknown, missing or stale diagrams (empty when none)."""
    problems: list[str] = []
    names = [match["name"] for match in _BLOCK.finditer(text)]
    known = {machine.name for machine in MACHINES}
    problems.extend(f"no machine is named {name!r}" for name in names if name not in known)
    problems.extend(
        f"no diagram block for machine {machine.name!r}"
        for machine in MACHINES
        if machine.name not in names
    )
    for match in _BLOCK.finditer(text):
        if match["name"] in known and match[0] != render(match[0]):
            problems.append(f"diagram {match['name']!r} differs from its transition table")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.runner.diagrams", description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 if a diagram is stale")
    mode.add_argument("--write", action="store_true", help="redraw every diagram")
    parser.add_argument("--document", type=Path, default=DOCUMENT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    path: Path = args.document
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"harness: error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    if args.write:
        new = render(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
        text = new
    problems = check(text)
    for problem in problems:
        where = "run `python -m harness.runner.diagrams --write`" if "differs" in problem else ""
        print(f"{path}: {problem}" + (f"; {where}" if where else ""), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
