"""RUN-API-001 (sync and async entry points, JSON results), RUN-PUMP-001 (flow control)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from typing import Any

import pytest

import harness.runtime.probe
from harness.events import event_from_json
from harness.runner import RunOutcome, run_agent, run_agent_async
from harness.runner.pipes import QUEUE_HIGH_BYTES, QUEUE_LOW_BYTES, PipeQueue
from tests.runner.conftest import FakeWorld, text_of


@pytest.mark.rule("RUN-API-001")
def test_sync_and_async_runs_agree_and_serialize(world: FakeWorld) -> None:
    sync = run_agent(world.request("copilot", "happy"))
    async_ = asyncio.run(run_agent_async(world.request("copilot", "happy")))
    for result in (sync, async_):
        assert result.succeeded, result.error
        data = json.loads(json.dumps(result.to_json()))
        assert data["status"] == "succeeded" and data["agent"] == "copilot"
        assert [event_from_json(e) for e in data["events"]] == list(result.events)
        assert "events" not in result.to_json(include_events=False)
    assert text_of(sync.events) == text_of(async_.events)
    assert sync.files_written == async_.files_written == ("hello.html",)


@pytest.mark.rule("RUN-API-001", "RUN-CANCEL-ORDER-001")
def test_sync_run_is_cancelled_from_another_thread(world: FakeWorld) -> None:
    cancel = threading.Event()
    timer = threading.Timer(2.5, cancel.set)
    timer.start()
    try:
        result = run_agent(world.request("qoder", "hang", shutdown_grace_ms=10_000), cancel=cancel)
    finally:
        timer.cancel()
    assert result.status is RunOutcome.CANCELLED
    assert result.cancel_latency_ms is not None and result.cancel_latency_ms < 10_000


def test_the_probe_module_does_not_load_the_runner() -> None:
    """harness.runtime.probe sits below detection and the runner: importing it stays light."""
    code = "import sys, harness.runtime.probe; print('harness.runner' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    assert not hasattr(harness.runtime.probe, "run_agent")


class _Pipe(asyncio.ReadTransport):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def pause_reading(self) -> None:
        self.calls.append("pause")

    def resume_reading(self) -> None:
        self.calls.append("resume")


class _Transport:
    def __init__(self) -> None:
        self.pipes = {1: _Pipe(), 2: _Pipe()}

    def get_pipe_transport(self, fd: int) -> Any:
        return self.pipes.get(fd)


@pytest.mark.rule("RUN-PUMP-001")
def test_reading_pauses_when_the_queue_is_full_and_resumes_when_drained() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        pipes = PipeQueue(queue, loop.create_future())
        transport = _Transport()
        pipes.connection_made(transport)  # type: ignore[arg-type]
        chunk = b"x" * (1024 * 1024)
        fed = 0
        while fed <= QUEUE_HIGH_BYTES:
            pipes.pipe_data_received(1 if fed % 2 else 2, chunk)
            fed += len(chunk)
        # Both pipes pause together: neither can run ahead and fill memory.
        assert transport.pipes[1].calls == ["pause"] and transport.pipes[2].calls == ["pause"]
        assert pipes.pauses == 1
        while pipes.queued >= QUEUE_LOW_BYTES:
            _, (_, data) = queue.get_nowait()
            pipes.consumed(len(data))
        assert transport.pipes[1].calls == ["pause", "resume"]
        assert transport.pipes[2].calls == ["pause", "resume"]

    asyncio.run(main())
