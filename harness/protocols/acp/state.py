"""The acp-json-rpc session's phases, its table of legal moves, and its counters.

One table, :data:`MACHINE`, holds every legal move of an ACP run (MACHINE-MOVE-001);
the session's :class:`~harness.protocols.core.SessionCore` takes each move, and the
state diagram in ``docs/design/sessions.md`` is drawn from the same table.

Design: docs/design/protocols.md#harness.protocols.acp
"""

from __future__ import annotations

import enum

from harness.protocols.base import SessionState
from harness.protocols.machine import Machine

__all__ = ["CANCEL_DEADLINE", "COUNTERS", "MACHINE", "STAGE_DEADLINE", "STATES", "Move", "Phase"]

#: The names of the two deadlines the session asks the host for.
STAGE_DEADLINE = "acp-stage"
CANCEL_DEADLINE = "acp-cancel-grace"


class Phase(enum.Enum):
    NEW = "new"
    #: initialize, session/new or session/load, and the model selection.
    HANDSHAKE = "handshake"
    #: session/prompt (or _session/continue) written; its result ends the turn.
    RUNNING = "running"
    #: session/cancel sent; waiting for the prompt's answer within the grace.
    CANCELLING = "cancelling"
    FINISHED = "finished"


class Move(enum.Enum):
    START = "start"
    PROMPT = "prompt"
    #: Cancelled before the prompt was written: nothing to wait for.
    CANCEL_BEFORE_PROMPT = "cancel-before-prompt"
    CANCEL = "cancel"
    #: The prompt's answer (a result, a turn_end update or an error after our cancel).
    TURN_END = "turn-end"
    #: stdout closed after our cancel: the cancellation is done.
    STOPPED = "stopped"
    GRACE_OVER = "grace-over"
    FAIL = "fail"


#: Every legal move of an ACP run (MACHINE-MOVE-001).
MACHINE: Machine[Phase, Move] = Machine(
    name="acp-json-rpc",
    initial=Phase.NEW,
    moves={
        (Phase.NEW, Move.START): Phase.HANDSHAKE,
        (Phase.HANDSHAKE, Move.PROMPT): Phase.RUNNING,
        (Phase.HANDSHAKE, Move.CANCEL_BEFORE_PROMPT): Phase.FINISHED,
        (Phase.RUNNING, Move.CANCEL): Phase.CANCELLING,
        (Phase.RUNNING, Move.TURN_END): Phase.FINISHED,
        (Phase.CANCELLING, Move.TURN_END): Phase.FINISHED,
        (Phase.CANCELLING, Move.STOPPED): Phase.FINISHED,
        (Phase.CANCELLING, Move.GRACE_OVER): Phase.FINISHED,
        (Phase.HANDSHAKE, Move.FAIL): Phase.FINISHED,
        (Phase.RUNNING, Move.FAIL): Phase.FINISHED,
        (Phase.CANCELLING, Move.FAIL): Phase.FINISHED,
    },
    terminal=frozenset({Phase.FINISHED}),
)

#: Each phase as the public :class:`SessionState`.
STATES = {
    Phase.NEW: SessionState.NEW,
    Phase.HANDSHAKE: SessionState.HANDSHAKE,
    Phase.RUNNING: SessionState.RUNNING,
    Phase.CANCELLING: SessionState.CANCELLING,
    Phase.FINISHED: SessionState.FINISHED,
}

#: Every counter an ACP run keeps (``AcpSession.counters``).
COUNTERS = (
    "frames_sent",
    "frames_received",
    "non_json_lines",
    "multiline_messages",
    "invalid_messages",
    "schema_violations",
    "permission_requests",
    "unsupported_requests",
    "ignored_notifications",
    "foreign_updates",
    "replayed_updates",
    "unexpected_responses",
    "ignored_errors",
    "lines_after_finish",
    "withheld_mcp_servers",
    "continuations_offered",
)
