"""RECORD-LADDER-001: :class:`harness.runner.ladder.LadderWatch`, the runner's one reader
of the stop ladder, on synthetic run states (pure: no process, no clock)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.ladder import StepKind
from harness.runner.ladder import LadderState, LadderWatch

IDLE = LadderState(
    cancel_requested=False,
    cancel_at=None,
    deadlines=((900.0, "stage"),),
    stdin_closed=False,
    terminated_at=None,
    killed_at=None,
    exited=False,
    returncode=None,
    reaped_at=None,
    abandoned=False,
)


def _kinds(watch: LadderWatch, state: LadderState, now: float) -> list[StepKind]:
    return [s.kind for s in watch.observe(state, now)]


@pytest.mark.rule("RECORD-LADDER-001")
def test_nothing_is_noted_before_the_cancel() -> None:
    watch = LadderWatch(platform="linux", shutdown_grace_ms=500)
    assert watch.observe(IDLE, 0.0) == []
    closed = replace(IDLE, stdin_closed=True, deadlines=((950.0, "stage"),))
    assert watch.observe(closed, 10.0) == []


@pytest.mark.rule("RECORD-LADDER-001")
def test_steps_come_in_ladder_order_with_their_own_times() -> None:
    watch = LadderWatch(platform="linux", shutdown_grace_ms=500)
    watch.observe(IDLE, 0.0)
    cancelled = replace(
        IDLE,
        cancel_requested=True,
        cancel_at=100.0,
        deadlines=((900.0, "stage"), (2100.0, "cancel-grace")),
    )
    steps = watch.observe(cancelled, 101.0)
    assert [s.kind for s in steps] == [StepKind.CANCEL, StepKind.GRACE]
    assert steps[0].at_ms == 100.0
    assert steps[0].detail == {"stdin_open": True, "exited": False}
    assert steps[1].detail == {"ms": 2000.0, "label": "cancel-grace"}
    stopping = replace(cancelled, stdin_closed=True, terminated_at=2100.0)
    steps = watch.observe(stopping, 2102.0)
    assert [s.kind for s in steps] == [StepKind.STDIN_CLOSE, StepKind.TERMINATE]
    # stdin has no time of its own: it closed no later than the stop that followed it.
    assert [s.at_ms for s in steps] == [2100.0, 2100.0]
    assert steps[1].detail == {"signal": "SIGTERM", "grace_ms": 500.0}
    gone = replace(stopping, killed_at=2600.0, exited=True, returncode=-9, reaped_at=2610.0)
    steps = watch.observe(gone, 2611.0)
    assert [s.kind for s in steps] == [StepKind.KILL, StepKind.EXITED, StepKind.REAPED]
    assert steps[1].detail == {"code": None, "signal": "SIGKILL"}
    assert [s.at_ms for s in steps] == [2600.0, 2610.0, 2610.0]
    assert watch.observe(gone, 2700.0) == []


@pytest.mark.rule("RECORD-LADDER-001")
def test_windows_names_its_own_stops() -> None:
    watch = LadderWatch(platform="win32", shutdown_grace_ms=3000)
    watch.observe(IDLE, 0.0)
    state = replace(
        IDLE, cancel_requested=True, cancel_at=5.0, stdin_closed=True, terminated_at=5.0
    )
    watch.observe(state, 6.0)
    steps = watch.observe(replace(state, killed_at=3005.0), 3006.0)
    assert steps[0].detail == {"signal": "TerminateJobObject"}
    assert _kinds(watch, replace(state, killed_at=3005.0, reaped_at=3010.0), 3011.0) == [
        StepKind.REAPED
    ]


@pytest.mark.rule("RECORD-LADDER-001")
def test_a_continuing_process_notes_its_own_stop() -> None:
    # The run's state still holds the first process's stop times when the second starts.
    first = replace(IDLE, stdin_closed=True, terminated_at=50.0, exited=True, returncode=0)
    watch = LadderWatch(platform="linux", shutdown_grace_ms=500)
    watch.observe(first, 60.0)
    second = replace(first, exited=False, returncode=None)
    assert watch.observe(second, 61.0) == []
    cancelled = replace(second, cancel_requested=True, cancel_at=70.0, terminated_at=70.0)
    assert _kinds(watch, cancelled, 71.0) == [StepKind.CANCEL, StepKind.TERMINATE]
