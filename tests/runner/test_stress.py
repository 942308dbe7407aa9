"""RUN-REAP-001 under load: 200 runs, four at a time, cancelled at random points leave nothing.

Cancel times are uniform in [0, 300 ms] from a seeded generator, so a failure replays.
The CLI is a quick fake (a POSIX shell script, milliseconds to start where the Python
fakes take hundreds) that leaves work behind on purpose: a background child, a subshell
with its own child, and a grandchild that ignores SIGTERM, so every cancel must reach the
forced kill of the whole tree. Deselect with ``-m "not stress"``.
"""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path

import psutil
import pytest

from harness.runner import RunOutcome, RunResult, run_agent_async
from tests.runner.conftest import FakeWorld

RUNS = 200
SEED = 20260830
#: Runs in flight at once: each mostly waits (its cancel delay, the grace, the kill), so
#: the load is the same and the wall time a quarter; overlapping trees are reaped apart.
CONCURRENT = 4

QUICK_FAKE = """#!/bin/sh
cat >/dev/null
sleep 30 &
( sleep 30 & (trap '' TERM; exec sleep 30) & wait ) &
echo "working"
sleep 30
"""


@pytest.mark.stress
@pytest.mark.rule("RUN-REAP-001", "RUN-CANCEL-ORDER-001")
@pytest.mark.skipif(sys.platform == "win32", reason="the quick fake is a POSIX shell script")
def test_random_cancels_leave_zero_processes(world: FakeWorld, tmp_path: Path) -> None:
    script = tmp_path / "quick-fake"
    script.write_text(QUICK_FAKE, encoding="utf-8")
    script.chmod(0o755)
    rng = random.Random(SEED)
    delays = [rng.uniform(0.0, 0.3) for _ in range(RUNS)]
    project = world.project()

    async def one(delay: float) -> RunResult:
        request = world.request("qwen", bin_override=str(script), cwd=project, shutdown_grace_ms=50)
        cancel = asyncio.Event()
        asyncio.get_running_loop().call_later(delay, cancel.set)
        return await run_agent_async(request, cancel=cancel)

    async def main() -> list[RunResult]:
        gate = asyncio.Semaphore(CONCURRENT)

        async def gated(delay: float) -> RunResult:
            async with gate:
                return await one(delay)

        return list(await asyncio.gather(*(gated(d) for d in delays)))

    results = asyncio.run(main())

    assert len(results) == RUNS
    assert all(r.status is RunOutcome.CANCELLED for r in results)
    assert all(r.cancel_latency_ms is not None and r.pid is not None for r in results)
    # Nothing of any run is alive now; the autouse leak check fails the test otherwise,
    # including orphans re-parented away from this process (found by their env token).
    assert not [p for p in psutil.Process().children(recursive=True) if p.status() != "zombie"]
