"""The watchdog process: when its harness dies, stop the CLI process groups it guarded.

Run as ``python -I -S watchdog_main.py FD`` by :mod:`harness.runtime.watchdog`, never
imported: built-in modules only (not even ``signal``, whose enums cost more than the rest
of the start), so it starts about as fast as ``python -c pass``. ``FD`` is the
read end of a pipe whose write end only the harness holds. The harness writes one line
per change: ``+PGID GRACE_MS`` (guard a group) or ``-PGID`` (it ended). EOF means the
harness is gone, however it went (SIG-WATCHDOG-001): each group still guarded gets
SIGTERM, up to its grace to empty, then SIGKILL; a grace of 0 is SIGKILL at once.

Design: docs/design/runner.md#harness.runtime.watchdog
"""

from __future__ import annotations

import os
import sys
import time

#: POSIX fixes these numbers (they are the same on Linux and macOS).
SIGKILL = 9
SIGTERM = 15

#: Upper bound on any group's grace, whatever the harness asked for.
MAX_GRACE_S = 30.0
#: How often a stopping group is looked at.
POLL_S = 0.02


def apply(groups: dict[int, float], line: bytes) -> None:
    """One line of the harness: guard or forget a group; anything else is ignored."""
    fields = line.split()
    if not fields or len(fields[0]) < 2:
        return
    op, number = fields[0][:1], fields[0][1:]
    if not number.isdigit():
        return
    pgid = int(number)
    if pgid <= 1 or pgid == os.getpgid(0):
        return  # never a group that is not a CLI's: init's, ours, or "every process"
    if op == b"-":
        groups.pop(pgid, None)
    elif op == b"+":
        grace_ms = int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0
        groups[pgid] = min(grace_ms / 1000.0, MAX_GRACE_S)


def _signal(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the group; False once it has no member left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # the number now names a group that is not ours to signal
    return True


def stop(groups: dict[int, float]) -> None:
    """SIGTERM every group with a grace, SIGKILL the rest and whatever outlives its grace."""
    start = time.monotonic()
    pending: dict[int, float] = {}
    for pgid, grace in groups.items():
        if grace > 0 and _signal(pgid, SIGTERM):
            pending[pgid] = start + grace
        else:
            _signal(pgid, SIGKILL)
    while pending:
        time.sleep(POLL_S)
        now = time.monotonic()
        for pgid, deadline in list(pending.items()):
            if not _signal(pgid, 0):
                del pending[pgid]
            elif now >= deadline:
                _signal(pgid, SIGKILL)
                del pending[pgid]


def watch(fd: int) -> dict[int, float]:
    """Read the harness's lines until EOF; the groups still guarded then."""
    groups: dict[int, float] = {}
    pending = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            chunk = b""
        if not chunk:
            return groups
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            apply(groups, line)


def main(argv: list[str]) -> int:
    """Watch, stop what is left, and say how it went (2: not started as intended)."""
    if len(argv) != 2 or not argv[1].isdigit():
        return 2
    stop(watch(int(argv[1])))
    return 0


if __name__ == "__main__":
    # No interpreter teardown: nothing is buffered, and the harness waits for this exit.
    os._exit(main(sys.argv))
