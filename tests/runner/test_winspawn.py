"""A Windows ``.cmd`` shim starts with the line its guards judged (WIN-SPAWN-SHIM-001); what
the process tree reports reaches the run (RUN-WINJOB-001)."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

import pytest

from harness.guards.windows_cmdline import cmd_shim_command_line
from harness.runner import engine, proctree, run_agent
from harness.runner.pipes import PipeQueue
from harness.runner.winspawn import shim_launch, spawn_command_line
from tests.runner.conftest import FakeWorld

SHIM = r"C:\Users\me\AppData\Roaming\npm\claude.cmd"
HOSTILE = ["-p", "100% of %PATH% & calc", 'say "hi" ^ ok']


@pytest.mark.rule("WIN-SPAWN-SHIM-001")
def test_a_shim_on_windows_runs_cmd_with_the_judged_line() -> None:
    launch = shim_launch(SHIM, HOSTILE, platform="win32", env={"SYSTEMROOT": r"D:\Win"})
    assert launch == (r"D:\Win\System32\cmd.exe", cmd_shim_command_line([SHIM, *HOSTILE]))
    assert launch[1].startswith('cmd.exe /d /s /c "')
    # the C runtime's quoting, which cmd.exe would read differently, is not what runs
    assert launch[1] != subprocess.list2cmdline([SHIM, *HOSTILE])


@pytest.mark.rule("WIN-SPAWN-SHIM-001")
@pytest.mark.parametrize(
    ("path", "platform"),
    [(SHIM, "linux"), (SHIM, "darwin"), (r"C:\tools\claude.exe", "win32"), ("/usr/bin/x", "win32")],
)
def test_every_other_launch_keeps_its_argument_list(path: str, platform: str) -> None:
    assert shim_launch(path, HOSTILE, platform=platform, env={}) is None


@pytest.mark.rule("WIN-SPAWN-SHIM-001")
def test_the_system_root_is_read_case_insensitively_with_a_default() -> None:
    assert shim_launch(SHIM, [], platform="win32", env={"SystemRoot": r"E:\W\\"})[0] == (
        r"E:\W\System32\cmd.exe"
    )
    assert shim_launch(SHIM, [], platform="win32", env={})[0] == r"C:\Windows\System32\cmd.exe"


@pytest.mark.rule("WIN-SPAWN-SHIM-001")
@pytest.mark.posix
def test_the_line_reaches_the_process_verbatim_through_the_event_loop() -> None:
    """The transport factory is asyncio's own on this Python: POSIX ``Popen`` makes a string
    line the program's ``argv[0]``, which ``sh`` prints back as ``$0``."""
    line = 'cmd.exe /d /s /c ""C:\\x\\a.cmd" "100%% & calc""'

    async def main() -> bytes:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        protocol = PipeQueue(queue, loop.create_future())
        transport, _ = await spawn_command_line(
            loop,
            lambda: protocol,
            ("/bin/sh", line),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            stdin = transport.get_pipe_transport(0)
            assert isinstance(stdin, asyncio.WriteTransport)
            stdin.write(b'printf "%s" "$0"\n')
            stdin.close()
            out, stdout_open, running = b"", True, True
            while stdout_open or running:
                kind, data = await asyncio.wait_for(queue.get(), 30)
                if kind == "data" and data[0] == 1:
                    out += data[1]
                stdout_open = stdout_open and (kind, data) != ("eof", 1)
                running = running and kind != "exit"
            return out
        finally:
            transport.close()

    assert asyncio.run(main()) == line.encode()


class _JobRefused:
    """A Job Object the system will not let the run use (as under some job-less hosts)."""

    def assign(self, pid: int) -> None:
        raise OSError(5, "Access is denied")

    def pids(self) -> list[int]:
        return []

    def terminate(self) -> None:
        raise AssertionError("a job that was never made is never terminated")

    def close(self) -> None:
        pass


@pytest.mark.rule("RUN-WINJOB-001")
def test_what_the_process_tree_reports_is_on_the_runs_stderr(
    world: FakeWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner listens to its tree: a Job Object that could not be made is a line of the
    run's stderr tail (Windows branches of the tree taken here with a stand-in job)."""
    monkeypatch.setattr(proctree, "_PLATFORM", "win32")
    monkeypatch.setattr(proctree, "_make_job", _JobRefused)
    # ... but spawned the POSIX way, which is what this machine can do
    monkeypatch.setattr(engine, "spawn_kwargs", lambda: {"start_new_session": True})
    result = run_agent(world.request("claude", "text"))
    assert result.succeeded, result.error
    notes = [line for line in result.stderr_tail.splitlines() if line.startswith("harness: ")]
    assert len(notes) == 1 and "Job Object" in notes[0] and "Access is denied" in notes[0]
