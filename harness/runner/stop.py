"""The stop ladder's rungs: how the runner brings one process tree down, as a table.

seed 001 §10 steps 3-5: close stdin and terminate the tree, force-kill what is left after
the grace, and wait for the tree to be gone. Each step is a :class:`Rung`; every legal
climb is one entry of :data:`LADDER` (MACHINE-MOVE-001), so the runner's bookkeeping can
only move the way the diagram in ``docs/design/sessions.md`` shows. One ladder per process:
a continuation process starts on a fresh one.
"""

from __future__ import annotations

import enum

from harness.protocols.machine import Machine

__all__ = ["LADDER", "Climb", "Rung", "StopLadder"]


class Rung(enum.Enum):
    #: Nothing asked the tree to stop.
    IDLE = "idle"
    #: stdin closed and the tree asked to terminate (SIGTERM / job close); grace running.
    TERMINATING = "terminating"
    #: The grace passed: the tree was force-killed; waiting for it to go.
    KILLING = "killing"
    #: The tree is gone (or abandoned after the kill wait).
    GONE = "gone"


class Climb(enum.Enum):
    TERMINATE = "terminate"
    KILL = "kill"
    #: The tree is gone: it exited, was reaped after a stop, or survived SIGKILL.
    GONE = "gone"


#: Every legal move of the stop ladder (MACHINE-MOVE-001). GONE -> GONE: a leader that
#: survived SIGKILL may still report its exit later.
LADDER: Machine[Rung, Climb] = Machine(
    name="runner-stop-ladder",
    initial=Rung.IDLE,
    moves={
        (Rung.IDLE, Climb.TERMINATE): Rung.TERMINATING,
        (Rung.IDLE, Climb.GONE): Rung.GONE,
        (Rung.TERMINATING, Climb.KILL): Rung.KILLING,
        (Rung.TERMINATING, Climb.GONE): Rung.GONE,
        (Rung.KILLING, Climb.GONE): Rung.GONE,
        (Rung.GONE, Climb.GONE): Rung.GONE,
    },
)


class StopLadder:
    """Where one process tree is on the way down."""

    def __init__(self) -> None:
        self._rung = LADDER.initial

    @property
    def rung(self) -> Rung:
        return self._rung

    @property
    def stopping(self) -> bool:
        """A stop is in progress: terminate or kill sent, the tree not gone yet."""
        return self._rung in (Rung.TERMINATING, Rung.KILLING)

    def climb(self, move: Climb) -> Rung:
        """Take ``move``; :class:`~harness.protocols.base.LocalProtocolError` if illegal."""
        self._rung = LADDER.next(self._rung, move)
        return self._rung
