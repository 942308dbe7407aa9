"""A hypothesis ``RuleBasedStateMachine`` that plays host and peer against one session.

:func:`session_machine_test` builds the test class for one session: the host calls
``start``, ``receive``, ``end_of_output``, ``cancel`` and ``tick`` in any order, legal or
not; the peer sends lines drawn from the protocol's own frames, garbage bytes and splits of
both. After every step the invariants of MACHINE-MOVE-001 and MACHINE-END-001 hold:

* the only exception is :class:`LocalProtocolError`, and exactly when the host misused the
  session (a call before ``start``, ``start`` twice, ``receive`` after end of output);
* the phase is one of the table's and was reached from the previous one along the table;
* ``status`` is set exactly when the phase is terminal, and never changes once set;
* exactly one ``Finished`` is emitted, after ``CloseStdin``/``Terminate``, and nothing but
  the documented ``late_event`` events after it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from harness.events import Event
from harness.protocols.base import (
    Actions,
    CloseStdin,
    Finished,
    LocalProtocolError,
    RunStatus,
    SessionRequest,
    Terminate,
)
from harness.protocols.core import SessionCore
from harness.protocols.machine import Machine

__all__ = ["SessionSpec", "session_machine_test"]


@dataclass(frozen=True)
class SessionSpec:
    """What the stateful test needs to know about one session."""

    #: A fresh session.
    make: Callable[[], Any]
    #: Requests ``start`` may be given (valid ones: start only fails when called twice).
    requests: st.SearchStrategy[SessionRequest]
    #: Whole lines the peer may write (each ends with ``\\n``).
    lines: Sequence[bytes]
    #: A well-behaved peer's lines in order (the frames that move the run on), so random
    #: runs reach the deep phases, not only the first.
    script: Sequence[bytes]
    #: ``cancel()`` before ``start()`` finishes the run instead of raising.
    cancel_before_start_ends: bool = False
    #: Events allowed after ``Finished`` (documented, e.g. dsh's one frame-after-result).
    late_event: Callable[[Event], bool] = lambda event: False


def _core(session: Any) -> SessionCore[Any, Any]:
    core = session._core
    assert isinstance(core, SessionCore)
    return core


def _reachable(machine: Machine[Any, Any], source: Any, target: Any) -> bool:
    seen = {source}
    frontier = [source]
    while frontier:
        phase = frontier.pop()
        if phase is target:
            return True
        for (origin, _), nxt in machine.moves.items():
            if origin is phase and nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return False


def session_machine_test(spec: SessionSpec) -> type[RuleBasedStateMachine]:
    """The ``RuleBasedStateMachine`` class for ``spec`` (expose its ``TestCase``)."""
    garbage = st.binary(max_size=40)
    chunks = st.one_of(
        st.sampled_from(list(spec.lines)),
        st.lists(st.sampled_from(list(spec.lines)), min_size=1, max_size=4).map(b"".join),
        garbage,
    )

    class SessionMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.session = spec.make()
            self.core = _core(self.session)
            self.now = 0.0
            self.started = False
            self.unstarted_end = False
            self.input_closed = False
            self.finished: list[Finished] = []
            self.status: RunStatus | None = None
            self.phase = self.core.phase
            self.script_at = 0

        # -- bookkeeping -------------------------------------------------------------------

        def _absorb(self, actions: Actions) -> None:
            if self.finished:
                assert not actions.frames, f"frames after Finished: {actions.frames!r}"
                assert not actions.controls, f"controls after Finished: {actions.controls!r}"
                late = [e for e in actions.events if not spec.late_event(e)]
                assert not late, f"events after Finished: {late!r}"
            ends = [c for c in actions.controls if isinstance(c, Finished)]
            assert len(ends) <= 1, f"two Finished in one call: {actions.controls!r}"
            if ends:
                assert actions.controls[-1] is ends[0], "Finished must be the last control"
                ending = [c for c in actions.controls if isinstance(c, (CloseStdin, Terminate))]
                assert ending == sorted(ending, key=lambda c: isinstance(c, Terminate)), (
                    f"CloseStdin must come before Terminate: {actions.controls!r}"
                )
                self.finished.extend(ends)

        def _call(self, misuse: bool, call: Callable[[], Actions]) -> None:
            before = self.core.phase
            try:
                actions = call()
            except LocalProtocolError:
                assert misuse, "LocalProtocolError for a legal host call"
                assert self.core.phase is before, "a refused call moved the phase"
                return
            assert not misuse, "a misused host call was accepted"
            self._absorb(actions)

        # -- host --------------------------------------------------------------------------

        @initialize(
            early=st.lists(
                st.sampled_from(["receive", "end_of_output", "cancel", "tick"]), max_size=2
            ),
            request=spec.requests,
            prefix=st.integers(min_value=0, max_value=len(spec.script)),
        )
        def begin(self, early: list[str], request: SessionRequest, prefix: int) -> None:
            """Calls made before ``start`` (misuse, except a cancel where it ends the run),
            ``start``, then the first ``prefix`` lines of the script: random steps begin
            deep in the run as often as at its start."""
            for call in early:
                if call == "receive":
                    self._call(True, lambda: self.session.receive(b"{}\n", self.now))
                elif call == "cancel":
                    self._cancel()
                elif call == "end_of_output":
                    self._call(True, lambda: self.session.end_of_output(self.now))
                else:
                    self._call(True, lambda: self.session.tick(self.now))
            self.start(request)
            for _ in range(prefix if self.started else 0):
                self.receive("script", b"")

        @rule(request=spec.requests)
        def start(self, request: SessionRequest) -> None:
            misuse = self.started or self.unstarted_end
            self._call(misuse, lambda: self.session.start(request, self.now))
            self.started = self.started or not misuse

        @rule(
            how=st.sampled_from(["script", "script", "script byte by byte", "random"]),
            data=chunks,
        )
        def receive(self, how: str, data: bytes) -> None:
            """The peer writes its script's next line (likelier), or any line or garbage."""
            misuse = not self.started or self.input_closed
            if how == "random" or misuse or self.script_at >= len(spec.script):
                self._call(misuse, lambda: self.session.receive(data, self.now))
                return
            line = spec.script[self.script_at]
            self.script_at += 1
            pieces = [line[i : i + 1] for i in range(len(line))] if "byte" in how else [line]
            for piece in pieces:
                self._absorb(self.session.receive(piece, self.now))

        @rule(
            call=st.sampled_from(["cancel", "tick", "cancel", "tick", "end_of_output"]),
            advance=st.sampled_from([0.0, 1.0, 500.0, 5_000.0, 120_000.0]),
        )
        def host(self, call: str, advance: float) -> None:
            """cancel, a tick or end of output (the rarest: it ends most runs at once)."""
            if call == "cancel":
                self._cancel()
            elif call == "end_of_output":
                self._call(not self.started, lambda: self.session.end_of_output(self.now))
                self.input_closed = self.input_closed or self.started
            else:
                self.now += advance
                self._call(not self.started, lambda: self.session.tick(self.now))

        def _cancel(self) -> None:
            if spec.cancel_before_start_ends:
                # cancel() is legal in every phase, even before start() (it ends the run).
                self._call(False, lambda: self.session.cancel(self.now))
                self.unstarted_end = self.unstarted_end or not self.started
                return
            self._call(not self.started, lambda: self.session.cancel(self.now))

        # -- invariants -------------------------------------------------------------------

        @invariant()
        def phase_follows_the_table(self) -> None:
            machine = self.core.machine
            phase = self.core.phase
            assert phase in machine.phases
            assert _reachable(machine, self.phase, phase), (
                f"{machine.name}: {self.phase.name} -> {phase.name} is not a path of the table"
            )
            self.phase = phase

        @invariant()
        def one_terminal_status(self) -> None:
            assert (self.core.status is not None) == self.core.ended
            assert len(self.finished) == (1 if self.core.ended else 0)
            if self.status is not None:
                assert self.core.status is self.status, "the status changed after the end"
            self.status = self.core.status
            if self.finished:
                assert self.finished[0].status is self.core.status
                assert self.finished[0].error == self.core.error
                assert (self.core.error is not None) == (self.core.status is RunStatus.FAILED)

    SessionMachine.TestCase.settings = settings(
        max_examples=150, stateful_step_count=30, deadline=None
    )
    return SessionMachine
