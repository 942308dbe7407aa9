"""Signals and task cancellation never lose a run's cancel, a user's file or a process tree.

SIG-CANCEL-001: SIGINT/SIGTERM/SIGHUP to ``harness run`` cancel it by the ``--cancel-after``
ladder; the injected ``.mcp.json`` comes back with the user's bytes and mode, nothing is
left running, the fakes' temp dir is gone. SIG-JOURNAL-002: after ``kill -9`` the restore
journal gives the file back (``harness mcp restore DIR`` or the next run there).

SIG-RACE-001: a cancellation of the awaiting task that lands in the same loop turn as a
chunk of output is not swallowed (Python 3.10/3.11 ``asyncio.wait_for`` returns the
finished inner result and drops the cancellation when both are ready at once).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from harness.events import Event, TextDelta
from harness.runner import engine
from harness.runner.pipes import PipeQueue
from tests.runner.conftest import FakeWorld
from tests.support.processes import kill_orphans, leaked_processes


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


# --------------------------------------------------------------------------- harness run


ROOT = Path(__file__).resolve().parents[2]
USER_CONFIG = b'{"mcpServers": {"mine": {"command": "keep"}}}\n'
SECRET = "sk-signal-test-0123456789abcdef"
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and modes")


@dataclass
class Launched:
    proc: subprocess.Popen[str]
    lines: list[str]
    errors: list[str]
    readers: list[threading.Thread]
    seen: threading.Event
    project: Path
    tmpdir: Path

    def stop(self) -> tuple[str, str]:
        """Wait for the harness to end; its whole stdout and stderr."""
        try:
            self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        for reader in self.readers:
            reader.join(10)
        return "".join(self.lines), "".join(self.errors)


def _mcp_project(world: FakeWorld) -> tuple[Path, Path, Path]:
    """A managed project holding the user's own ``.mcp.json`` (mode 0640), and a config."""
    root = world.root / "projects"
    root.mkdir(exist_ok=True)
    project = world.project(str(Path("projects") / "p"))
    target = project / ".mcp.json"
    target.write_bytes(USER_CONFIG)
    target.chmod(0o640)
    config = world.root / "servers.json"
    servers = [{"id": "fs", "command": "mcp-fs", "env": {"FS_KEY": SECRET}}]
    config.write_text(json.dumps({"servers": servers}), encoding="utf-8")
    return root, project, config


def _launch(world: FakeWorld, scenario: str, *extra: str, needle: str) -> Launched:
    """``harness run claude --fake`` in its own process; returns once ``needle`` is printed."""
    root, project, config = _mcp_project(world)
    tmpdir = world.root / "tmp"
    tmpdir.mkdir(exist_ok=True)
    env = world.env()
    env.update(PYTHONPATH=str(ROOT), TMPDIR=str(tmpdir))
    argv = [sys.executable, "-m", "harness.cli", "run", "claude", "--fake"]
    argv += ["--scenario", scenario, "--cwd", str(project), "--projects-root", str(root)]
    argv += ["--mcp-config", str(config), *extra]
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    errors: list[str] = []
    seen = threading.Event()

    def pump(stream: Any, into: list[str]) -> None:
        for line in stream:
            into.append(line)
            if needle in line:
                seen.set()

    readers = [
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True),
        threading.Thread(target=pump, args=(proc.stderr, errors), daemon=True),
    ]
    for reader in readers:
        reader.start()
    launched = Launched(proc, lines, errors, readers, seen, project, tmpdir)
    if not seen.wait(60):
        proc.kill()
        pytest.fail(f"{needle!r} never printed: {launched.stop()}")
    assert (project / ".mcp.json").read_bytes() != USER_CONFIG  # the injection is in place
    return launched


def _assert_users_file_is_back(project: Path) -> None:
    target = project / ".mcp.json"
    assert target.read_bytes() == USER_CONFIG
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    left = sorted(p.name for p in project.iterdir() if p.name.startswith("."))
    assert left == [".mcp.json"]  # no journal, no temp file


@pytest.mark.rule("SIG-CANCEL-001", "RUN-REAP-001", "MCP-RUN-001")
@posix_only
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_cancels_the_run_restores_the_file_and_leaks_nothing(
    world: FakeWorld, no_leaked_processes: str, signum: int
) -> None:
    # spawn_tree: a child and a grandchild that ignore SIGTERM, so the ladder must kill.
    run = _launch(world, "spawn_tree", needle="Spawned helpers")
    deadline = time.monotonic() + 30
    while True:  # the leader, its child and the grandchild the child starts
        tree = [p for p in leaked_processes(no_leaked_processes, set()) if p.pid != run.proc.pid]
        if len(tree) >= 3 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(tree) >= 3, f"the fake's tree is not up: {tree}"
    run.proc.send_signal(signum)
    out, err = run.stop()
    assert run.proc.returncode == 128 + signum, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert f"{signal.Signals(signum).name} received" in err
    assert "Spawned helpers" in out  # the events up to the signal are kept
    assert "status:   cancelled" in out
    assert SECRET not in out + err
    _assert_users_file_is_back(run.project)
    assert not list(run.tmpdir.glob("harness-fakes-*"))
    survivors = [p for p in tree if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not survivors, f"the CLI tree outlived the harness: {survivors}"


@pytest.mark.rule("SIG-JOURNAL-002")
@posix_only
@pytest.mark.parametrize("recovered_by", ["harness mcp restore", "the next harness run"])
def test_after_kill_9_the_users_file_comes_back(
    world: FakeWorld, no_leaked_processes: str, recovered_by: str
) -> None:
    run = _launch(world, "hang", needle="Thinking about it")
    run.proc.kill()
    run.stop()
    # After kill -9 the watchdog stops the CLI tree once its grace is over
    # (test_watchdog.py proves it); stop it now rather than wait for that.
    kill_orphans(no_leaked_processes)
    assert (run.project / ".mcp.json").read_bytes() != USER_CONFIG  # left injected
    env = world.env()
    env["PYTHONPATH"] = str(ROOT)
    if recovered_by == "harness mcp restore":
        argv = ["mcp", "restore", str(run.project)]
    else:
        argv = ["run", "claude", "--fake", "--cwd", str(run.project)]
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", *argv],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert str(run.project / ".mcp.json") in done.stdout + done.stderr  # it says what it did
    _assert_users_file_is_back(run.project)


@pytest.mark.rule("SIG-CANCEL-001")
@posix_only
def test_cancel_on_signals_sets_the_event_and_restores_the_handlers() -> None:
    before = signal.getsignal(signal.SIGTERM)

    async def main(signals: engine.CancelOnSignals) -> bool:
        cancel = asyncio.Event()
        signals.bind(cancel)
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(cancel.wait(), 10)
        return cancel.is_set()

    with engine.CancelOnSignals() as signals:
        assert asyncio.run(main(signals))
        os.kill(os.getpid(), signal.SIGHUP)  # a later one changes nothing
    assert signals.received == signal.SIGTERM and signals.count == 2
    assert signals.exit_code == 143 and signals.name == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.rule("SIG-CANCEL-001")
@posix_only
def test_a_signal_before_the_run_cancels_it_as_soon_as_it_is_bound() -> None:
    async def main(signals: engine.CancelOnSignals) -> bool:
        cancel = asyncio.Event()
        signals.bind(cancel)
        return cancel.is_set()

    with engine.CancelOnSignals() as signals:
        os.kill(os.getpid(), signal.SIGINT)  # no KeyboardInterrupt while it is open
        assert asyncio.run(main(signals))
    assert signals.exit_code == 130
