"""The session interface shared by every two-way transport (h11's shape).

A session is a sans-IO state machine for one run of one CLI process. The IO
shell (``harness/runtime/probe.py``, ``harness/recording/replay.py``) calls :meth:`Session.start`
once, feeds every stdout chunk to :meth:`Session.receive`, calls
:meth:`Session.end_of_output` at stdout EOF, :meth:`Session.cancel` when the
user cancels, and :meth:`Session.tick` when a deadline the session asked for
passes. Each call returns :class:`Actions`: events to publish, frames to
write to the CLI's stdin, and control steps for the shell to carry out.

Time is passed in (``now_ms``, any monotonic origin); a session never reads a
clock, sleeps, spawns, or touches files. Arbitrary bytes never raise out of
``receive``: a peer that breaks the protocol moves the session to
``FAILED`` and yields ``Finished(status=FAILED, error=SessionError(...))``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from harness.events import Event

__all__ = [
    "Actions",
    "CloseStdin",
    "ContinuableSession",
    "Control",
    "Finished",
    "LocalProtocolError",
    "RunStatus",
    "SessionError",
    "SessionRequest",
    "SessionState",
    "SetDeadline",
    "Terminate",
    "TwoWaySession",
]


class RunStatus(str, enum.Enum):
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"


class SessionState(str, enum.Enum):
    #: Created; ``start`` not called yet.
    NEW = "new"
    #: Handshake in flight (ready frame, initialize, session/new ...).
    HANDSHAKE = "handshake"
    #: The prompt was sent; the turn is running.
    RUNNING = "running"
    #: A cancel was sent; waiting for the peer to acknowledge within the grace.
    CANCELLING = "cancelling"
    #: Terminal: the run ended (completed, cancelled or failed).
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class SessionError:
    """Why a run failed: a machine code, a message, and the rule it enforces."""

    code: str
    message: str
    rule: str | None = None
    retryable: bool = False
    #: The offending line (bounded), when the failure is about a frame.
    line: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.rule:
            out["rule"] = self.rule
        out["retryable"] = self.retryable
        if self.line is not None:
            out["line"] = self.line
        return out


@dataclass(frozen=True, slots=True)
class CloseStdin:
    """Close the CLI's stdin (after writing any frames in the same Actions)."""


@dataclass(frozen=True, slots=True)
class Terminate:
    """Terminate the owned process tree after ``after_ms`` unless it exited by then."""

    after_ms: int


@dataclass(frozen=True, slots=True)
class SetDeadline:
    """Call ``tick`` once ``now_ms`` reaches ``at_ms`` (e.g. a cancel grace period)."""

    at_ms: float
    label: str


@dataclass(frozen=True, slots=True)
class Finished:
    """The run is over with ``status``; ``error`` is set when it failed."""

    status: RunStatus
    error: SessionError | None = None


Control = CloseStdin | Terminate | SetDeadline | Finished


@dataclass
class Actions:
    """What one session call produced, in order."""

    events: list[Event] = field(default_factory=list)
    #: Complete frames (each ends with ``\\n``) to write to stdin, in order.
    frames: list[bytes] = field(default_factory=list)
    controls: list[Control] = field(default_factory=list)

    def extend(self, other: Actions) -> Actions:
        self.events.extend(other.events)
        self.frames.extend(other.frames)
        self.controls.extend(other.controls)
        return self

    @property
    def finished(self) -> Finished | None:
        for control in self.controls:
            if isinstance(control, Finished):
                return control
        return None


@dataclass(frozen=True)
class SessionRequest:
    """Everything a session needs to run one turn."""

    prompt: str
    cwd: str
    #: Host-chosen id for this run (dsh ``request_id``; ignored where unused).
    request_id: str = "run-1"
    model: str | None = None
    reasoning: str | None = None
    resume_session_id: str | None = None
    #: MCP servers in the transport's own shape (already built by the MCP layer).
    mcp_servers: Sequence[Mapping[str, Any]] = ()
    #: pi ``images``: ``{"type": "image", "data": <base64>, "mimeType": ...}`` items.
    images: Sequence[Mapping[str, Any]] = ()
    #: Transport-specific extras (e.g. app-server approval policy), by key.
    extra: Mapping[str, Any] = field(default_factory=dict)


class LocalProtocolError(Exception):
    """The host misused a session (e.g. ``receive`` before ``start``): a caller bug."""


class TwoWaySession(Protocol):
    """The interface every session in :mod:`harness.protocols` implements."""

    @property
    def state(self) -> SessionState: ...

    @property
    def session_id(self) -> str | None: ...

    @property
    def counters(self) -> Mapping[str, int]: ...

    def start(self, request: SessionRequest, now_ms: float) -> Actions: ...

    def receive(self, data: bytes, now_ms: float) -> Actions: ...

    def end_of_output(self, now_ms: float) -> Actions: ...

    def cancel(self, now_ms: float) -> Actions: ...

    def tick(self, now_ms: float) -> Actions: ...


@runtime_checkable
class ContinuableSession(Protocol):
    """A session that can hand its interrupted turn on to a new process.

    The ACP session after the AMR compaction interruption (seed 000 "AMR compaction
    continuation"): ``continuation_session()`` is the session that continues the turn in a
    new process, or ``None`` when the turn may not be continued. The runner asks through
    this protocol, so it never needs to know which protocol it drives.
    """

    def continuation_session(self) -> TwoWaySession | None: ...
