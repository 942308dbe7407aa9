"""RECORD-LADDER-001: a recorded cancelled run holds its stop ladder, for every transport.

Real fake CLIs under the real runner with a :class:`~harness.recording.record.RunRecorder`: the
one-way streams and the four two-way sessions (ACP, codex app-server, pi RPC, dsh). The
steps come in the order seed 001 §10 gives, each in its place among the chunks: the
protocol cancel frame is written after the cancel step, the CLI's acknowledgement read
after it, and the tree is reaped last.
"""

from __future__ import annotations

import asyncio
import io
import sys
import time

import pytest

from harness.events import Event
from harness.ladder import StepKind
from harness.recording.record import Direction, Recording, RunRecorder, parse_recording
from harness.runner import RunOutcome, RunRequest, RunResult, run_agent_async
from tests.runner.conftest import FakeWorld, turn_started

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signal names")

LONG_TURN = [
    {"kind": "text", "text": "Working on it..."},
    *[{"kind": "sleep", "ms": 250} for _ in range(40)],
    {"kind": "text", "text": "never reached"},
]


def record_cancelled(request: RunRequest, *, delay: float = 0.1) -> tuple[RunResult, Recording]:
    """Run ``request`` recorded, cancel ``delay`` s after its turn started; both results."""
    out = io.StringIO()
    recorder = RunRecorder(out, cwd=request.cwd, platform="linux")

    async def main() -> RunResult:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        armed: list[float] = []

        def on_event(event: Event) -> None:
            if turn_started(event, request.defn.id) and not armed:
                armed.append(time.monotonic())
                loop.call_later(delay, cancel.set)

        return await run_agent_async(request, on_event=on_event, cancel=cancel, tap=recorder)

    result = asyncio.run(main())
    return result, parse_recording(out.getvalue().encode("utf-8"))


def _kinds(recording: Recording) -> list[StepKind]:
    return [s.kind for s in recording.steps]


def _stdin_after_cancel(recording: Recording) -> list[bytes]:
    cancel = recording.steps[0]
    return [
        c.data for c in recording.chunks[cancel.chunk_index :] if c.direction is Direction.STDIN
    ]


@pytest.mark.rule("RECORD-LADDER-001")
@pytest.mark.parametrize(
    ("agent", "transport", "cancel_frame"),
    [
        pytest.param("amr", None, b"session/cancel", id="acp"),
        pytest.param("codex", None, b"turn/interrupt", id="codex-app-server"),
        pytest.param("pi", None, b'"abort"', id="pi-rpc"),
        pytest.param("deepseek-harness", None, b'"cancel"', id="dsh"),
    ],
)
def test_a_two_way_cancel_records_frames_grace_and_reap_in_order(
    world: FakeWorld, agent: str, transport: str | None, cancel_frame: bytes
) -> None:
    scenario = world.scenario_file("long", LONG_TURN)
    request = world.request(agent, scenario, transport=transport, cancel_grace_ms=8000)
    result, recording = record_cancelled(request)
    assert result.status is RunOutcome.CANCELLED
    kinds = _kinds(recording)
    assert kinds[0] is StepKind.CANCEL and kinds.count(StepKind.CANCEL) == 1
    assert kinds[-1] is StepKind.REAPED and kinds.count(StepKind.REAPED) == 1
    assert StepKind.GRACE in kinds
    assert kinds.index(StepKind.GRACE) < kinds.index(StepKind.STDIN_CLOSE)
    assert recording.steps[0].detail == {"stdin_open": True, "exited": False}
    # The protocol cancel was written after the cancel step, and the CLI's answer (its
    # acknowledgement) was read after it: frames both ways sit after the request.
    after = _stdin_after_cancel(recording)
    assert after and cancel_frame in after[0]
    cancel = recording.steps[0]
    assert any(c.direction is Direction.STDOUT for c in recording.chunks[cancel.chunk_index :])
    # The grace the session asked for is recorded as the run's (8000 ms here).
    graces = {
        s.detail["label"]: s.detail["ms"] for s in recording.steps if s.kind is StepKind.GRACE
    }
    assert 8000 in {round(ms) for ms in graces.values()}
    times = [s.t_ms for s in recording.steps]
    assert times == sorted(times)
    assert recording.steps[-1].t_ms <= recording.exit.duration_ms


@pytest.mark.rule("RECORD-LADDER-001")
@posix_only
def test_a_one_way_cancel_closes_stdin_then_terminates(world: FakeWorld) -> None:
    scenario = world.scenario_file("long", LONG_TURN)
    result, recording = record_cancelled(world.request("claude", scenario))
    assert result.status is RunOutcome.CANCELLED
    kinds = _kinds(recording)
    assert kinds[:3] == [StepKind.CANCEL, StepKind.STDIN_CLOSE, StepKind.TERMINATE]
    assert kinds[-1] is StepKind.REAPED
    terminate = recording.steps[2]
    assert terminate.detail == {"signal": "SIGTERM", "grace_ms": 1000.0}
    assert StepKind.GRACE not in kinds  # a one-way stream has no protocol cancel


@pytest.mark.rule("RECORD-LADDER-001")
@posix_only
def test_a_tree_that_ignores_sigterm_records_the_forced_stop_after_the_grace(
    world: FakeWorld,
) -> None:
    request = world.request("claude", "spawn_tree", shutdown_grace_ms=300)
    result, recording = record_cancelled(request, delay=0.3)
    assert result.status is RunOutcome.CANCELLED
    kinds = _kinds(recording)
    assert (
        kinds.index(StepKind.TERMINATE) < kinds.index(StepKind.KILL) < kinds.index(StepKind.REAPED)
    )
    by_kind = {s.kind: s for s in recording.steps}
    assert by_kind[StepKind.KILL].detail == {"signal": "SIGKILL"}
    # The grace the forced stop waited for is recorded with the graceful stop; the times
    # themselves are not compared (a step noted while a chunk is handled takes that
    # chunk's time, so gaps between recorded steps are no clock to assert on).
    assert by_kind[StepKind.TERMINATE].detail["grace_ms"] == 300
    assert by_kind[StepKind.TERMINATE].t_ms <= by_kind[StepKind.KILL].t_ms
    assert by_kind[StepKind.REAPED].detail == {"abandoned": False}


@pytest.mark.rule("RECORD-LADDER-001")
def test_an_uncancelled_run_records_no_steps(world: FakeWorld) -> None:
    out = io.StringIO()
    request = world.request("claude", "happy")
    recorder = RunRecorder(out, cwd=request.cwd, platform="linux")
    result = asyncio.run(run_agent_async(request, tap=recorder))
    assert result.status is RunOutcome.SUCCEEDED
    assert parse_recording(out.getvalue().encode("utf-8")).steps == ()
