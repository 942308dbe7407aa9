"""A spawn refused with ETXTBSY (a shim written a moment ago, its write handle still held by a
process forked meanwhile) is tried again instead of failing the run (RUN-SPAWN-001)."""

from __future__ import annotations

import asyncio
import errno
from typing import Any

import pytest

from harness.runner import run_agent
from tests.runner.conftest import FakeWorld


def _busy_first(times: int, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    real = asyncio.BaseEventLoop.subprocess_exec
    calls: list[int] = []

    async def flaky(self: asyncio.BaseEventLoop, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) <= times:
            raise OSError(errno.ETXTBSY, "Text file busy")
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(asyncio.BaseEventLoop, "subprocess_exec", flaky)
    return calls


@pytest.mark.rule("RUN-SPAWN-001")
@pytest.mark.posix
def test_a_busy_executable_is_started_on_a_later_try(
    world: FakeWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    # capabilities given: no help probe, so every spawn counted is the run's own
    request = world.request("claude", "text", capabilities={})
    calls = _busy_first(2, monkeypatch)
    result = run_agent(request)
    assert result.succeeded, result.error
    assert len(calls) == 3  # two refusals, then the start


@pytest.mark.rule("RUN-SPAWN-001")
@pytest.mark.posix
def test_an_executable_that_stays_busy_fails_the_run_with_the_reason(
    world: FakeWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = world.request("claude", "text", capabilities={})
    _busy_first(100, monkeypatch)
    result = run_agent(request)
    assert result.error is not None and "ETXTBSY" in result.error.message
