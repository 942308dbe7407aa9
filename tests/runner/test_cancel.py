"""RUN-CANCEL-ORDER-001, RUN-REAP-001, RUN-OWNED-001: cancellation as the seeds order it.

seed 001 §10: "1. send the protocol cancel command for the active request; 2. wait a short
bounded grace period for result: cancelled; 3. close stdin; 4. terminate the owned
process tree gracefully; 5. force-kill remaining owned processes after a second bound.
No operation may kill another conversation's runtime."
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from harness.events import Event, TextDelta
from harness.protocols.dsh import DEFAULT_TERMINATE_GRACE_MS
from harness.runner import RunOutcome, RunResult, run_agent_async
from tests.runner.conftest import WHOLE_MESSAGES, FakeWorld, text_of, turn_started

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and groups")


def cancel_on_text(request: object, *, delay: float = 0.0) -> tuple[RunResult, float]:
    """Run ``request``; set cancel ``delay`` s after its turn started (its first text, or its
    session for a fake that writes whole messages); return (result, t_cancel)."""
    from harness.runner import RunRequest

    assert isinstance(request, RunRequest)
    stamp: list[float] = []

    async def main() -> RunResult:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()

        def fire() -> None:
            stamp.append(time.monotonic())
            cancel.set()

        def on_event(event: Event) -> None:
            if turn_started(event, request.defn.id) and not stamp:
                if delay:
                    loop.call_later(delay, fire)
                else:
                    fire()

        return await run_agent_async(request, on_event=on_event, cancel=cancel)

    result = asyncio.run(main())
    assert stamp, "the run never produced text to cancel on"
    return result, stamp[0]


@pytest.mark.rule("RUN-CANCEL-ORDER-001", "RUN-SESSION-001")
@pytest.mark.parametrize("agent", ["deepseek-harness", "devin", "pi", "codex"])
def test_protocol_cancel_ends_a_two_way_run_cooperatively(world: FakeWorld, agent: str) -> None:
    # A long model turn the fake can interrupt between steps (a "hang" step cannot be).
    scenario = world.scenario_file(
        "long",
        [
            {"kind": "text", "text": "Thinking about it..."},
            *[{"kind": "sleep", "ms": 250} for _ in range(60)],
            {"kind": "text", "text": "never reached"},
        ],
    )
    grace = 8000
    request = world.request(agent, scenario, shutdown_grace_ms=grace, cancel_grace_ms=grace)
    result, _ = cancel_on_text(request)
    assert result.status is RunOutcome.CANCELLED
    assert result.error is None
    if agent not in WHOLE_MESSAGES:
        # (a CLI that writes whole messages may be cancelled before its first one ends)
        assert "Thinking about it..." in text_of(result.events)
    assert "never reached" not in text_of(result.events)
    # The CLI acknowledged the protocol cancel (an unanswered cancel waits out the whole
    # grace) and the tree went down on SIGTERM or by itself, never needing SIGKILL.
    assert result.cancel_latency_ms is not None and result.cancel_latency_ms < grace
    assert result.signal != int(getattr(signal, "SIGKILL", 9))
    # seed 001 §7: a cancelled run keeps its session handle.
    assert result.session_id
    assert result.counters["frames_written"] >= 2  # the prompt, then the cancel


DEAF_DSH = """
import json, os, signal, sys, time

log = open(os.environ["DEAF_LOG"], "a", buffering=1)

def note(what):
    log.write(f"{time.monotonic():.6f} {what}\\n")

signal.signal(signal.SIGTERM, lambda *_: note("SIGTERM"))

def out(obj):
    sys.stdout.write(json.dumps(obj) + "\\n")
    sys.stdout.flush()

out({"v": 1, "type": "ready", "runtime": "open-design", "protocol_version": 1,
     "plugin_version": "0.0.1", "capabilities": {"session_resume": True,
     "session_cancel": True, "structured_events": True}})
rid = json.loads(sys.stdin.readline())["request_id"]
out({"v": 1, "type": "session", "request_id": rid, "session_id": "s-1", "resumed": False})
out({"v": 1, "type": "text", "request_id": rid, "content": "working"})
for line in sys.stdin:
    note("FRAME " + json.loads(line)["type"])
note("EOF")
while True:
    time.sleep(0.05)
"""


@pytest.mark.rule("RUN-CANCEL-ORDER-001", "RUN-REAP-001")
@posix_only
def test_cancel_order_with_a_runtime_that_ignores_everything(
    world: FakeWorld, tmp_path: Path
) -> None:
    """cancel frame → grace → stdin closed → SIGTERM → SIGKILL after the second bound."""
    script = tmp_path / "deaf-dsh"
    script.write_text(f"#!{sys.executable}\n" + textwrap.dedent(DEAF_DSH), encoding="utf-8")
    script.chmod(0o755)
    log = tmp_path / "deaf.log"
    cancel_grace, shutdown_grace = 600, 700
    request = world.request(
        "deepseek-harness",
        bin_override=str(script),
        cancel_grace_ms=cancel_grace,
        shutdown_grace_ms=shutdown_grace,
        env_extra={"DEAF_LOG": str(log)},
    )
    result, t_cancel = cancel_on_text(request)
    marks = [line.split(" ", 1) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [m[1] for m in marks] == ["FRAME cancel", "EOF", "SIGTERM"]
    at = {m[1]: float(m[0]) for m in marks}
    # 1. the protocol cancel goes out at once (well before the grace ends),
    assert at["FRAME cancel"] - t_cancel < cancel_grace / 1000
    # 2.-3. stdin closes only when the grace is over,
    assert at["EOF"] - t_cancel >= cancel_grace / 1000 * 0.95
    # 4. the tree is terminated when the session says (dsh: its terminate grace after EOF),
    gap = DEFAULT_TERMINATE_GRACE_MS / 1000
    assert gap * 0.95 <= at["SIGTERM"] - at["EOF"] < gap + shutdown_grace / 1000
    # 5. and, as SIGTERM is ignored, killed after the second bound.
    assert result.signal == int(signal.SIGKILL)
    assert result.status is RunOutcome.CANCELLED
    total = cancel_grace + DEFAULT_TERMINATE_GRACE_MS + shutdown_grace
    assert result.cancel_latency_ms is not None
    assert total * 0.95 <= result.cancel_latency_ms < total + 10_000


@pytest.mark.rule("RUN-CANCEL-ORDER-001", "RUN-REAP-001")
@pytest.mark.parametrize("agent", ["claude", "qwen"])
def test_one_way_cancel_terminates_at_once(world: FakeWorld, agent: str) -> None:
    grace = 10_000
    result, _ = cancel_on_text(world.request(agent, "hang", shutdown_grace_ms=grace))
    assert result.status is RunOutcome.CANCELLED
    assert result.error is None
    # No protocol cancel, no grace to wait out: SIGTERM at once ends the tree.
    assert result.cancel_latency_ms is not None and result.cancel_latency_ms < grace
    if sys.platform != "win32":
        # died of the SIGTERM, or trapped it and exited 128+15 (claude, as the real one does)
        ended = (result.signal, result.exit_code)
        assert ended in ((int(signal.SIGTERM), None), (None, 128 + int(signal.SIGTERM))), (
            ended,
            result.stderr_tail,
        )


@pytest.mark.rule("RUN-CANCEL-ORDER-001")
def test_a_cancel_set_before_the_run_starts_cancels_it(world: FakeWorld) -> None:
    async def main() -> RunResult:
        cancel = asyncio.Event()
        cancel.set()
        return await run_agent_async(world.request("pi", "hang"), cancel=cancel)

    result = asyncio.run(main())
    assert result.status is RunOutcome.CANCELLED and result.cancel_requested


@pytest.mark.rule("RUN-REAP-001")
def test_cancelling_the_awaiting_task_kills_and_reaps_the_tree(world: FakeWorld) -> None:
    pids: list[int] = []

    async def main() -> None:
        seen = asyncio.Event()

        def on_event(event: Event) -> None:
            if isinstance(event, TextDelta):
                seen.set()

        task = asyncio.ensure_future(
            run_agent_async(world.request("claude", "spawn_tree"), on_event=on_event)
        )
        await asyncio.wait_for(seen.wait(), 30)
        pids.extend(p.pid for p in psutil.Process().children(recursive=True))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert pids
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"


@pytest.mark.rule("RUN-OWNED-001")
@posix_only
def test_cancel_touches_no_process_the_run_did_not_start(world: FakeWorld) -> None:
    # Two bystanders: one in the test's own process group, one in its own session.
    same_group = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    other_session = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    groups: list[tuple[int, int, int]] = []
    try:
        request = world.request("claude", "spawn_tree", shutdown_grace_ms=300)

        async def main() -> RunResult:
            cancel = asyncio.Event()
            mine = {same_group.pid, other_session.pid}

            def on_event(event: Event) -> None:
                if isinstance(event, TextDelta) and not cancel.is_set():
                    for child in psutil.Process().children():
                        if child.pid not in mine:
                            groups.append((child.pid, os.getpgid(child.pid), os.getsid(child.pid)))
                    cancel.set()

            return await run_agent_async(request, on_event=on_event, cancel=cancel)

        result = asyncio.run(main())
        assert result.status is RunOutcome.CANCELLED
        # The CLI led its own session and process group (wire §B.7 start_new_session).
        assert groups and all(pid == pgid == sid for pid, pgid, sid in groups)
        assert same_group.poll() is None and other_session.poll() is None
    finally:
        for proc in (same_group, other_session):
            proc.kill()
            proc.wait(timeout=10)


@pytest.mark.rule("RUN-REAP-001")
@posix_only
def test_a_tree_that_survives_sigkill_is_reported_not_waited_for_forever(
    world: FakeWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If SIGKILL cannot end the tree (a process stuck in the kernel), the run still returns."""
    from harness.runner.proctree import OwnedTree

    monkeypatch.setattr(OwnedTree, "kill", lambda self: None)  # SIGKILL "does not work"
    script = tmp_path / "deaf"
    script.write_text(
        "#!/bin/sh\ntrap '' TERM\necho working\nwhile :; do sleep 1; done\n", encoding="utf-8"
    )
    script.chmod(0o755)
    request = world.request("qwen", bin_override=str(script), shutdown_grace_ms=200)
    try:
        result, _ = cancel_on_text(request)
        assert result.error is not None and result.error.code == "RUN_TREE_SURVIVED"
        assert result.status is RunOutcome.CANCELLED
        assert str(result.pid) in result.error.message
        assert result.cancel_latency_ms is not None and result.cancel_latency_ms < 60_000
    finally:
        for proc in psutil.process_iter():
            try:
                if (
                    proc.environ().get("HARNESS_TEST_LEAK_TOKEN")
                    == os.environ.get("HARNESS_TEST_LEAK_TOKEN")
                    and proc.pid != os.getpid()
                ):
                    proc.kill()
            except psutil.Error:
                continue


@pytest.mark.rule("RUN-OWNED-001")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux only)")
def test_the_proc_scan_knows_each_parent_even_with_parentheses_in_the_name(
    tmp_path: Path,
) -> None:
    """The tree snapshot's pid -> ppid table, read from /proc: a process name (comm) may
    hold spaces and parentheses, which must not shift the ppid field."""
    from harness.runner.proctree import _scan_proc, scan_ppids

    odd = tmp_path / "x) 1 (y"
    odd.symlink_to(sys.executable)
    child = subprocess.Popen([str(odd), "-c", "import time; time.sleep(30)"])
    try:
        table = scan_ppids()
        assert table[child.pid] == os.getpid()
        assert table[os.getpid()] == os.getppid()
        assert psutil.Process(child.pid).name().startswith("x) 1 (y")
        # What psutil says, for processes no other test can re-parent meanwhile.
        ours = _scan_proc()
        theirs = {p.pid: p.info["ppid"] for p in psutil.process_iter(["ppid"])}
        for pid in (child.pid, os.getpid(), os.getppid()):
            assert ours[pid] == theirs[pid], pid
    finally:
        child.kill()
        child.wait()
