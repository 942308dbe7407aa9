"""Signals and task cancellation never lose a run's cancel or leak its process tree.

SIG-RACE-001: a cancellation of the awaiting task that lands in the same loop turn as a
chunk of output is not swallowed (Python 3.10/3.11 ``asyncio.wait_for`` returns the
finished inner result and drops the cancellation when both are ready at once).
"""

from __future__ import annotations

import asyncio
from typing import Any

import psutil
import pytest

from harness.events import Event, TextDelta
from harness.runner import engine
from harness.runner.pipes import PipeQueue
from tests.runner.conftest import FakeWorld


@pytest.mark.rule("SIG-RACE-001", "RUN-REAP-001")
def test_a_task_cancel_landing_with_output_is_not_swallowed(
    world: FakeWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cancel arrives right after a chunk was queued, before the run loop resumed."""
    holder: dict[str, Any] = {}

    class CancellingQueue(PipeQueue):
        def pipe_data_received(self, fd: int, data: bytes | str) -> None:
            super().pipe_data_received(fd, data)
            task = holder.get("task")
            if fd == 1 and task is not None and not holder.get("fired"):
                holder["fired"] = True
                task.cancel()  # a signal handler would do this between two callbacks

    monkeypatch.setattr(engine, "PipeQueue", CancellingQueue)
    pids: list[int] = []

    async def main() -> str:
        seen = asyncio.Event()

        def on_event(event: Event) -> None:
            if isinstance(event, TextDelta):
                seen.set()

        request = world.request("claude", "hang")
        task = asyncio.ensure_future(engine.run_agent_async(request, on_event=on_event))
        holder["task"] = task
        done, _ = await asyncio.wait({task}, timeout=20)
        pids.extend(p.pid for p in psutil.Process().children(recursive=True))
        if not done:
            task.cancel()  # clean up the run the first cancel failed to stop
            with pytest.raises(asyncio.CancelledError):
                await task
            return "the cancellation was lost: the run kept going"
        return "cancelled" if task.cancelled() else f"ended without a cancel: {task.result()}"

    outcome = asyncio.run(main())
    assert holder.get("fired"), "no stdout reached the run"
    assert outcome == "cancelled"
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"
