"""The session core: the one place a two-way session's phase, status, error and counters live.

Every session in this package owns a :class:`SessionCore` built from its transition
table (:class:`~harness.protocols.machine.Machine`). The core moves the phase only along
the table (MACHINE-MOVE-001), refuses host calls made out of order, and ends the run
exactly once: :meth:`SessionCore.finish` and :meth:`SessionCore.fail` are the only ways
into a terminal phase, set the status (and error), and emit ``CloseStdin``,
``Terminate`` and ``Finished`` in that order (MACHINE-END-001).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from harness.protocols.base import (
    Actions,
    CloseStdin,
    Finished,
    LocalProtocolError,
    RunStatus,
    SessionError,
    SessionState,
    Terminate,
)
from harness.protocols.machine import Machine

__all__ = ["CoreViews", "EndHook", "SessionCore"]

P = TypeVar("P", bound=enum.Enum)
T = TypeVar("T", bound=enum.Enum)

#: Called before a run ends, with the status it ends with (flush open rows, drain events).
EndHook = Callable[[Actions, RunStatus], None]


class SessionCore(Generic[P, T]):
    """Phase, status, error and counters of one session run.

    ``states`` maps every phase onto the public :class:`SessionState`; the terminal phases
    are exactly those mapped to ``FINISHED``. ``unstarted`` phases (besides the initial
    one) are phases in which only ``start``/``cancel`` make sense. ``terminate_after_ms``
    is the default ``Terminate`` delay of an ending.
    """

    def __init__(
        self,
        machine: Machine[P, T],
        states: Mapping[P, SessionState],
        counters: Iterable[str],
        *,
        terminate_after_ms: int,
        unstarted: frozenset[P] = frozenset(),
        on_end: EndHook | None = None,
    ) -> None:
        missing = [p.name for p in machine.phases if p not in states]
        if missing:
            raise ValueError(f"machine {machine.name}: no SessionState for {missing}")
        finished = frozenset(p for p in machine.phases if states[p] is SessionState.FINISHED)
        if finished != machine.terminal:
            raise ValueError(
                f"machine {machine.name}: terminal phases must be exactly the FINISHED ones"
            )
        self.machine = machine
        self._states = states
        self._phase = machine.initial
        self._unstarted = unstarted | {machine.initial}
        self._grace = terminate_after_ms
        self._on_end = on_end
        self._input_closed = False
        self._taken: set[T] = set()
        self._status: RunStatus | None = None
        self._error: SessionError | None = None
        self._counters: dict[str, int] = dict.fromkeys(counters, 0)

    # -- what the session exposes ---------------------------------------------------------

    @property
    def phase(self) -> P:
        return self._phase

    @property
    def state(self) -> SessionState:
        return self._states[self._phase]

    @property
    def status(self) -> RunStatus | None:
        return self._status

    @property
    def error(self) -> SessionError | None:
        return self._error

    @property
    def ended(self) -> bool:
        """In a terminal phase (the status is set exactly then; checked on every line)."""
        return self._status is not None

    @property
    def counters(self) -> Mapping[str, int]:
        return dict(self._counters)

    def count(self, name: str, by: int = 1) -> int:
        """Add ``by`` to counter ``name`` (declared at construction) and return it."""
        if name not in self._counters:
            raise KeyError(f"{self.machine.name}: undeclared counter {name!r}")
        self._counters[name] += by
        return self._counters[name]

    def set_count(self, name: str, value: int) -> None:
        if name not in self._counters:
            raise KeyError(f"{self.machine.name}: undeclared counter {name!r}")
        self._counters[name] = value

    # -- moves -----------------------------------------------------------------------------

    def allows(self, trigger: T) -> bool:
        return self.machine.allows(self._phase, trigger)

    def took(self, trigger: T) -> bool:
        """Whether this run ever took a ``trigger`` move (a fact read off the table's path,
        e.g. "execute was written" = the ready move was taken)."""
        return trigger in self._taken

    def move(self, trigger: T) -> P:
        """Take the table's move for ``trigger``; a terminal phase only via finish/fail."""
        target = self.machine.next(self._phase, trigger)
        if target in self.machine.terminal:
            raise LocalProtocolError(
                f"{self.machine.name}: {trigger.name} ends the run; use finish() or fail()"
            )
        self._phase = target
        self._taken.add(trigger)
        return target

    # -- host-call guards ------------------------------------------------------------------

    def require_started(self, call: str) -> None:
        if self._phase in self._unstarted:
            raise LocalProtocolError(f"{call}() called before start()")

    def require_new(self) -> None:
        if self._phase is not self.machine.initial:
            raise LocalProtocolError(f"start() called in state {self.state.value}")

    def check_receive(self) -> None:
        """``receive`` is legal once started and until ``end_of_output``."""
        self.require_started("receive")
        if self._input_closed:
            raise LocalProtocolError("receive() called after end_of_output()")

    def close_input(self) -> bool:
        """Mark stdout closed; ``False`` when it already was (a repeated call is a no-op)."""
        self.require_started("end_of_output")
        if self._input_closed:
            return False
        self._input_closed = True
        return True

    # -- endings -----------------------------------------------------------------------------

    def finish(
        self,
        actions: Actions,
        trigger: T,
        status: RunStatus,
        *,
        close_stdin: bool = True,
        terminate: bool = True,
        terminate_after_ms: int | None = None,
    ) -> None:
        """End the run with ``status`` (not FAILED: see :meth:`fail`); ``terminate=False``
        asks for no ``Terminate``."""
        if status is RunStatus.FAILED:
            raise LocalProtocolError(f"{self.machine.name}: a failed run ends through fail()")
        after = self._grace if terminate_after_ms is None else terminate_after_ms
        self._end(
            actions,
            trigger,
            status,
            None,
            close_stdin=close_stdin,
            after=after if terminate else None,
        )

    def fail(
        self,
        actions: Actions,
        trigger: T,
        *,
        code: str,
        message: str,
        rule: str,
        retryable: bool = False,
        line: str | None = None,
    ) -> None:
        """End the run as FAILED with a :class:`SessionError`; stdin is closed and the tree
        terminated after the default delay."""
        error = SessionError(code=code, message=message, rule=rule, retryable=retryable, line=line)
        self._end(actions, trigger, RunStatus.FAILED, error, close_stdin=True, after=self._grace)

    def _end(
        self,
        actions: Actions,
        trigger: T,
        status: RunStatus,
        error: SessionError | None,
        *,
        close_stdin: bool,
        after: int | None,
    ) -> None:
        target = self.machine.next(self._phase, trigger)
        if target not in self.machine.terminal:
            raise LocalProtocolError(f"{self.machine.name}: {trigger.name} does not end the run")
        if self._on_end is not None:
            self._on_end(actions, status)
        self._phase = target
        self._taken.add(trigger)
        self._status = status
        self._error = error
        if close_stdin:
            actions.controls.append(CloseStdin())
        if after is not None:
            actions.controls.append(Terminate(after_ms=after))
        actions.controls.append(Finished(status, error))


class CoreViews:
    """What every session shows of its core: state, counters, status and error."""

    _core: SessionCore[Any, Any]

    @property
    def state(self) -> SessionState:
        return self._core.state

    @property
    def counters(self) -> Mapping[str, int]:
        return self._core.counters

    @property
    def status(self) -> RunStatus | None:
        return self._core.status

    @property
    def error(self) -> SessionError | None:
        return self._core.error
