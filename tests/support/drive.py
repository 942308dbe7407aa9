"""One driver for a two-way session against a live process, as the runner pumps it.

The runner (:mod:`harness.runner.engine`) builds its own session from the def and keeps
the frames to itself. Tests that inspect what went over the wire, the session's counters
afterwards, or send what the runner would not (a second prompt in one process) use
:func:`drive_session` instead: the session's frames go to the process's stdin, its stdout
goes to ``receive``, deadlines are met with ``tick`` (every due one at once, as the
runner does), and ``CloseStdin`` closes stdin. :class:`StreamJsonTurns` wraps a one-way
stream parser as a session that writes stream-json prompts, one per terminal turn.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from harness.defs.types import AgentDef
from harness.events import Event, Status, Usage
from harness.formats import create_parser
from harness.host.prompt import should_close_stdin, stream_json_user_message
from harness.protocols.base import (
    Actions,
    CloseStdin,
    Finished,
    SessionRequest,
    SessionState,
    SetDeadline,
    TwoWaySession,
)
from tests.support.processes import StdoutPump, kill_tree

__all__ = [
    "Driven",
    "OnActions",
    "OnEvents",
    "StreamJsonTurns",
    "cancel_once",
    "drive_session",
]

#: Called after each stdout chunk: more actions to apply (e.g. ``session.cancel(now)``).
OnEvents = Callable[[TwoWaySession, list[Event], float], "Actions | None"]
#: Called before each batch of actions is applied, with the live process.
OnActions = Callable[[Actions, "subprocess.Popen[bytes]"], None]


@dataclass
class Driven:
    """One session run against a live process."""

    events: list[Event]
    finished: Finished | None
    #: The exit code; None when the process outlived ``exit_timeout`` and was killed.
    code: int | None
    stdout: bytes
    #: Empty when the process was killed.
    stderr: bytes
    #: Frames written (or meant to be written, after a broken pipe) to stdin, in order.
    sent: list[bytes] = field(default_factory=list)


class _Run:
    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        session: TwoWaySession,
        on_actions: OnActions | None,
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.proc = proc
        self.stdin = proc.stdin
        self.session = session
        self.on_actions = on_actions
        self.pump = StdoutPump(proc)
        self.origin = time.monotonic()
        self.events: list[Event] = []
        self.sent: list[bytes] = []
        self.deadlines: list[float] = []
        self.finished: Finished | None = None

    def now(self) -> float:
        return (time.monotonic() - self.origin) * 1000

    def apply(self, actions: Actions | None) -> None:
        if actions is None:
            return
        if self.on_actions is not None:
            self.on_actions(actions, self.proc)
        self.events.extend(actions.events)
        for frame in actions.frames:
            self.sent.append(frame)
            if not self.stdin.closed:
                try:
                    self.stdin.write(frame)
                    self.stdin.flush()
                except BrokenPipeError:
                    with contextlib.suppress(BrokenPipeError):
                        self.stdin.close()
        for control in actions.controls:
            if isinstance(control, CloseStdin) and not self.stdin.closed:
                with contextlib.suppress(BrokenPipeError):
                    self.stdin.close()
            elif isinstance(control, SetDeadline):
                self.deadlines.append(control.at_ms)
            elif isinstance(control, Finished) and self.finished is None:
                self.finished = control

    def tick_due(self) -> None:
        now = self.now()
        due = [d for d in self.deadlines if d <= now]
        if due:
            self.deadlines = [d for d in self.deadlines if d > now]
            self.apply(self.session.tick(now))

    def loop(self, on_events: OnEvents | None, timeout: float) -> None:
        give_up = time.monotonic() + timeout
        while self.finished is None:
            self.tick_due()
            if self.finished is not None:
                return
            left = give_up - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"no end within {timeout}s; stdout: {bytes(self.pump.received)!r}"
                )
            if self.deadlines:
                left = min(left, max(0.0, (min(self.deadlines) - self.now()) / 1000))
            try:
                chunk = self.pump.next(max(left, 0.001))
            except TimeoutError:
                continue
            if chunk is None:
                self.apply(self.session.end_of_output(self.now()))
                return
            self.apply(self.session.receive(chunk, self.now()))
            if on_events is not None:
                self.apply(on_events(self.session, self.events, self.now()))


def cancel_once(when: Callable[[list[Event]], bool] | None) -> OnEvents | None:
    """An ``on_events`` hook that cancels the session once, when ``when(events)`` holds."""
    if when is None:
        return None
    done: list[bool] = []

    def hook(session: TwoWaySession, events: list[Event], now: float) -> Actions | None:
        if done or not when(events):
            return None
        done.append(True)
        return session.cancel(now)

    return hook


def drive_session(
    proc: subprocess.Popen[bytes],
    session: TwoWaySession,
    request: SessionRequest,
    *,
    on_events: OnEvents | None = None,
    on_actions: OnActions | None = None,
    timeout: float = 30.0,
    exit_timeout: float = 10.0,
) -> Driven:
    """Run ``session`` against the started ``proc`` (all three pipes) until it ends.

    The run ends at ``Finished`` or at stdout EOF (after ``end_of_output``); no end within
    ``timeout`` seconds is an ``AssertionError`` naming stdout. The process then gets
    ``exit_timeout`` seconds to exit on its own before its tree is killed (``code`` None).
    """
    run = _Run(proc, session, on_actions)
    code: int | None = None
    stderr = b""
    try:
        run.apply(session.start(request, run.now()))
        run.loop(on_events, timeout)
        try:
            code = proc.wait(timeout=exit_timeout)
        except subprocess.TimeoutExpired:
            code = None
        if code is not None:
            run.pump.drain()
            assert proc.stderr is not None
            stderr = proc.stderr.read()
    finally:
        kill_tree(proc)
    return Driven(run.events, run.finished, code, bytes(run.pump.received), stderr, run.sent)


class StreamJsonTurns:
    """A one-way stream parser as a session: stream-json prompts, one per terminal turn.

    The first prompt goes out at ``start``; each turn's closing ``Usage`` (where the engine
    would close stdin, :func:`harness.host.prompt.should_close_stdin`) sends the next prompt, and
    after the last one stdin is closed. ``Finished`` never comes: the run ends at stdout EOF.
    """

    def __init__(self, defn: AgentDef, prompts: Sequence[str]) -> None:
        if not prompts:
            raise ValueError("StreamJsonTurns needs at least one prompt")
        self.defn = defn
        self.parser = create_parser(defn.stream_format, defn.event_parser)
        self.pending = list(prompts)
        self.closed = False
        #: How many turns ended (each answered by a prompt or by closing stdin).
        self.turns_ended = 0
        self._state = SessionState.NEW
        self._session_id: str | None = None

    @property
    def state(self) -> SessionState:
        return self._state

    @property
    def session_id(self) -> str | None:
        """The id the stream's first ``Status`` named."""
        return self._session_id

    @property
    def counters(self) -> Mapping[str, int]:
        return {"turns_ended": self.turns_ended}

    def start(self, request: SessionRequest, now_ms: float) -> Actions:
        self._state = SessionState.RUNNING
        return Actions(frames=[stream_json_user_message(self.pending.pop(0))])

    def receive(self, data: bytes, now_ms: float) -> Actions:
        actions = Actions(events=list(self.parser.feed(data)))
        for event in actions.events:
            if isinstance(event, Status) and event.session_id and self._session_id is None:
                self._session_id = event.session_id
            # One turn, one closing ``Usage`` (a ``TurnEnd`` before it is terminal too).
            if self.closed or not isinstance(event, Usage):
                continue
            if not should_close_stdin(self.defn, event):
                continue
            self.turns_ended += 1
            if self.pending:
                actions.frames.append(stream_json_user_message(self.pending.pop(0)))
            else:
                actions.controls.append(CloseStdin())
                self.closed = True
        return actions

    def end_of_output(self, now_ms: float) -> Actions:
        self._state = SessionState.FINISHED
        return Actions(events=list(self.parser.finish()))

    def cancel(self, now_ms: float) -> Actions:
        return Actions()

    def tick(self, now_ms: float) -> Actions:
        return Actions()
