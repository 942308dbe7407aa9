"""Which stop-ladder steps a run took, read from its state (RECORD-LADDER-001).

The run loop hands :class:`LadderWatch` a :class:`LadderState` (what the run looks like
now) at a few fixed points: after each message, after the timers, and before each chunk
it taps. The watch compares it with the last one and names the steps taken since, in
the ladder's order (seed 001 §10; :class:`harness.ladder.StepKind`). It is read-only:
the ladder code that stops processes records nothing itself, so it may change shape
freely. Nothing is noted before the cancel request.
"""

from __future__ import annotations

import signal as _signal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.ladder import StepKind, stop_signals

__all__ = ["LadderState", "LadderWatch", "NotedStep"]


@dataclass(frozen=True)
class LadderState:
    """What the watch reads of a run."""

    cancel_requested: bool
    #: When the cancel was asked (the run's clock), once it was.
    cancel_at: float | None
    #: The session's pending deadlines: ``(at_ms, label)``.
    deadlines: tuple[tuple[float, str], ...]
    stdin_closed: bool
    #: When the graceful stop, and the forced stop, were sent (the run's clock), once sent.
    terminated_at: float | None
    killed_at: float | None
    exited: bool
    #: ``Popen.returncode`` once exited (negative: the signal).
    returncode: int | None
    #: When no owned process was left, once none was.
    reaped_at: float | None
    abandoned: bool


@dataclass(frozen=True)
class NotedStep:
    kind: StepKind
    detail: Mapping[str, Any]
    #: When it was taken (the run's clock), when that is known better than "now".
    at_ms: float | None = None


def _signal_name(number: int) -> str:
    try:
        return _signal.Signals(number).name
    except ValueError:
        return f"SIG{number}"


class LadderWatch:
    """Names the ladder steps between two looks at a run (one per process)."""

    def __init__(self, *, platform: str, shutdown_grace_ms: float) -> None:
        self._graceful, self._forced = stop_signals(platform)
        self._grace_ms = float(shutdown_grace_ms)
        self._last: LadderState | None = None
        self._cancel_at: float | None = None
        self._seen_deadlines: set[tuple[float, str]] = set()

    def observe(self, state: LadderState, now_ms: float) -> list[NotedStep]:
        """The steps taken since the last look (``now_ms`` is the run's clock), in order,
        each with its time (:attr:`NotedStep.at_ms`)."""
        last, self._last = self._last, state
        if last is None or not state.cancel_requested:
            self._seen_deadlines = set(state.deadlines)
            return []
        steps = [
            *self._cancel(last, state, now_ms),
            *self._graces(state, now_ms),
            *self._stops(last, state),
        ]
        return _timed(steps, now_ms)

    def _cancel(self, last: LadderState, state: LadderState, now_ms: float) -> list[NotedStep]:
        """The cancel request, when this look is the first to see it."""
        if last.cancel_requested:
            return []
        self._cancel_at = state.cancel_at if state.cancel_at is not None else now_ms
        asked = {"stdin_open": not last.stdin_closed, "exited": last.exited}
        return [NotedStep(StepKind.CANCEL, asked, self._cancel_at)]

    def _graces(self, state: LadderState, now_ms: float) -> list[NotedStep]:
        """A bounded wait for each session deadline not seen before, measured from the
        cancel."""
        steps: list[NotedStep] = []
        origin = self._cancel_at if self._cancel_at is not None else now_ms
        for at_ms, label in state.deadlines:
            if (at_ms, label) in self._seen_deadlines:
                continue
            self._seen_deadlines.add((at_ms, label))
            grace = {"ms": round(max(0.0, at_ms - origin), 3), "label": label}
            steps.append(NotedStep(StepKind.GRACE, grace))
        return steps

    def _stops(self, last: LadderState, state: LadderState) -> list[NotedStep]:
        """stdin closed, the graceful and the forced stop, the exit, the reaping: each
        when it changed since the last look (a new time is a new step: a process that
        continued a run starts from the last process's values, which the first look
        takes in)."""
        steps: list[NotedStep] = []
        if state.stdin_closed and not last.stdin_closed:
            steps.append(NotedStep(StepKind.STDIN_CLOSE, {}))
        if _new_time(state.terminated_at, last.terminated_at):
            detail = {"signal": self._graceful, "grace_ms": self._grace_ms}
            steps.append(NotedStep(StepKind.TERMINATE, detail, state.terminated_at))
        if _new_time(state.killed_at, last.killed_at):
            steps.append(NotedStep(StepKind.KILL, {"signal": self._forced}, state.killed_at))
        if state.exited and not last.exited:
            steps.append(NotedStep(StepKind.EXITED, _exit_detail(state.returncode)))
        if _new_time(state.reaped_at, last.reaped_at):
            reaped = {"abandoned": state.abandoned}
            steps.append(NotedStep(StepKind.REAPED, reaped, state.reaped_at))
        return steps


def _new_time(now: float | None, before: float | None) -> bool:
    return now is not None and now != before


def _exit_detail(rc: int | None) -> dict[str, Any]:
    """``Popen.returncode`` as an ``exited`` step's ``code`` or ``signal``."""
    code = rc if rc is not None and rc >= 0 else None
    name = _signal_name(-rc) if rc is not None and rc < 0 else None
    return {"code": code, "signal": name}


def _timed(steps: list[NotedStep], now_ms: float) -> list[NotedStep]:
    """Every step with its time: a step the state gives no time for was taken no later
    than the next one that has a time (stdin is closed just before the graceful stop)."""
    out: list[NotedStep] = []
    upper = now_ms
    for step in reversed(steps):
        at = min(upper, step.at_ms if step.at_ms is not None else now_ms)
        out.append(NotedStep(step.kind, step.detail, at))
        upper = at
    out.reverse()
    return out
