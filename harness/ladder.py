"""The stop ladder of a run as data: its steps, their order, and their recording line.

seed 001 §10 orders a cancellation: the protocol cancel, a bounded grace, stdin closed,
the owned tree terminated, force-killed after a second bound, and the tree reaped. The
runner (:mod:`harness.runner.ladder`) notes each step it takes from the cancel request
on; a recording keeps them as ``step`` lines between its chunks (:mod:`harness.recording.record`,
rule RECORD-LADDER-001); a replay judges them (:mod:`harness.recording.replay_cancel`).

A step line: ``{"t": <ms since spawn>, "step": <kind>, ...}`` with the keys its kind
lists in :data:`STEP_FIELDS` (every one required, nothing else allowed).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["STEP_FIELDS", "Step", "StepKind", "stop_signals"]


class StepKind(str, enum.Enum):
    """One rung of the ladder, in the order seed 001 §10 gives them."""

    #: The user asked to cancel (``stdin_open``: stdin was still open then;
    #: ``exited``: the leader had exited already).
    CANCEL = "cancel"
    #: The session asked for a bounded wait for the CLI's acknowledgement (``ms``, ``label``).
    GRACE = "grace"
    #: The runner closed the CLI's stdin.
    STDIN_CLOSE = "stdin_close"
    #: The graceful stop was sent to the owned tree (``signal``), and the wait before the
    #: forced one (``grace_ms``).
    TERMINATE = "terminate"
    #: The forced stop was sent (``signal``).
    KILL = "kill"
    #: The leader exited (``code`` or ``signal``).
    EXITED = "exited"
    #: No owned process is alive any more (``abandoned``: one survived the forced stop).
    REAPED = "reaped"


#: The keys each kind's line carries besides ``t`` and ``step``, with their JSON types.
STEP_FIELDS: Mapping[StepKind, Mapping[str, tuple[type, ...]]] = {
    StepKind.CANCEL: {"stdin_open": (bool,), "exited": (bool,)},
    StepKind.GRACE: {"ms": (int, float), "label": (str,)},
    StepKind.STDIN_CLOSE: {},
    StepKind.TERMINATE: {"signal": (str,), "grace_ms": (int, float)},
    StepKind.KILL: {"signal": (str,)},
    StepKind.EXITED: {"code": (int, type(None)), "signal": (str, type(None))},
    StepKind.REAPED: {"abandoned": (bool,)},
}


@dataclass(frozen=True)
class Step:
    """One ladder step: when (ms after the spawn, like a chunk's ``t``), what, and its
    details. ``chunk_index``/``stdout_chunks``/``stdin_bytes``/``line`` say where a reader
    found it (how many chunks, stdout chunks and stdin bytes came before it, as recorded;
    its 1-based line); a writer ignores them.
    """

    t_ms: float
    kind: StepKind
    detail: Mapping[str, Any] = field(default_factory=dict)
    chunk_index: int = 0
    stdout_chunks: int = 0
    stdin_bytes: int = 0
    line: int = 0

    def problem(self) -> str | None:
        """What is wrong with :attr:`detail` for this kind, or ``None``."""
        wanted = STEP_FIELDS[self.kind]
        extra = sorted(set(self.detail) - set(wanted))
        if extra:
            return f"unknown key(s) in a {self.kind.value!r} step: {extra}"
        for key, types in wanted.items():
            if key not in self.detail:
                return f"a {self.kind.value!r} step lacks {key!r}"
            value = self.detail[key]
            numeric = float in types
            if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
                return f"{key!r} of a {self.kind.value!r} step has the wrong type: {value!r}"
            if numeric and isinstance(value, (int, float)) and value < 0:
                return f"{key!r} of a {self.kind.value!r} step must be >= 0, got {value!r}"
        return None

    def to_json(self, t: int | float) -> dict[str, Any]:
        """The recording line (``t`` already rounded by the writer)."""
        return {"t": t, "step": self.kind.value, **self.detail}


def stop_signals(platform: str) -> tuple[str, str]:
    """The graceful and the forced stop the runner uses on ``platform`` (wire §B.7):
    POSIX SIGTERM then SIGKILL to the group; Windows CTRL_BREAK then the Job Object."""
    if platform == "win32":
        return "CTRL_BREAK", "TerminateJobObject"
    return "SIGTERM", "SIGKILL"
