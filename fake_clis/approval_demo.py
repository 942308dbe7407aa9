"""``python -m fake_clis.approval_demo AGENT [args...]``: a fake CLI behind its approval gate.

On a terminal (stdin is a TTY) and without the CLI's do-not-ask posture in ``args``, it asks
the gate's question and waits (:func:`fake_clis.approval.ask_on_terminal`); a yes runs the
fake, anything else exits 1 having run nothing. With the posture, or without a terminal, it
is exactly ``python -m fake_clis AGENT [args...]``. Gates marked ``native`` go straight to
the emulator, which asks by itself. Rule HEADLESS-TTY-001 (seed 000 §10).
"""

from __future__ import annotations

import os
import sys

from fake_clis.approval import ask_on_terminal, gate_for
from fake_clis.base import main_for
from fake_clis.catalog import spec_for

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        sys.stderr.write("usage: python -m fake_clis.approval_demo AGENT [args...]\n")
        return 2
    agent, rest = args[0], args[1:]
    try:
        gate = gate_for(agent)
        spec = spec_for(agent)
    except KeyError as exc:
        sys.stderr.write(f"{exc.args[0]}\n")
        return 2
    on_terminal = os.isatty(sys.stdin.fileno())
    must_ask = on_terminal and not gate.native and not gate.bypassed(rest)
    if must_ask and not ask_on_terminal(
        gate, stdin_fd=sys.stdin.fileno(), stderr_fd=sys.stderr.fileno()
    ):
        sys.stderr.write(gate.denial + "\n")
        return 1
    return main_for(spec, rest)


if __name__ == "__main__":
    sys.exit(main())
