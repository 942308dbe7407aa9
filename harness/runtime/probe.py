"""The IO shell: the only module that spawns processes (design principle 1).

Rules: DETECT-TIMEOUT-001.
Design: docs/design/runner.md#harness.runtime.probe
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psutil

from harness.runtime.watchdog import guard, release

__all__ = ["ProbeResult", "run_probe"]


#: After the probe's leader exits, how long to wait for its pipes to reach EOF.
_DRAIN_GRACE_S = 1.0
_READ_CHUNK = 64 * 1024


@dataclass(frozen=True)
class ProbeResult:
    """What one probe command did.

    Exactly one of these describes how it ended: ``os_error`` (it never started),
    ``timed_out`` / ``output_overflow`` (the harness killed it), ``signal`` (killed
    by a signal, POSIX), or ``exit_code``.
    """

    argv: tuple[str, ...]
    stdout: str
    stderr: str
    #: Exit status when the process exited normally (and was not killed by the harness).
    exit_code: int | None
    #: Signal number when a signal ended it (POSIX; includes the harness's own kill).
    signal: int | None
    #: The deadline passed and the harness killed the process tree.
    timed_out: bool
    #: Symbolic errno when spawning failed: ``ENOENT``, ``EACCES``, ``ENOTDIR``, ...
    os_error: str | None
    #: stdout or stderr exceeded ``max_output_bytes``; the tree was killed.
    output_overflow: bool
    duration_s: float

    @property
    def ok(self) -> bool:
        """Started, exited 0 by itself, in time, within the output cap."""
        return (
            self.os_error is None
            and not self.timed_out
            and not self.output_overflow
            and self.exit_code == 0
        )

    def describe(self) -> str:
        """One phrase saying how the probe ended, for diagnostics."""
        if self.os_error is not None:
            return f"could not start ({self.os_error})"
        if self.timed_out:
            return f"timed out after {self.duration_s:.1f}s"
        if self.output_overflow:
            return "output exceeded the probe's limit"
        if self.signal is not None:
            return f"killed by signal {self.signal}"
        return f"exited {self.exit_code}"


class _Capture:
    """One pipe's bytes, kept up to ``limit``; the rest is counted, not stored."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, data: bytes) -> bool:
        """Keep ``data``; return True when the total now exceeds the limit."""
        room = self.limit - self.size
        if room > 0:
            self.parts.append(data[:room])
        self.size += len(data)
        return self.size > self.limit

    def text(self) -> str:
        return b"".join(self.parts).decode("utf-8", "replace")


class _ProbeProtocol(asyncio.SubprocessProtocol):
    """Collects both pipes and signals exit, overflow and pipe closure separately.

    ``asyncio.subprocess.Process.wait()`` resolves only once every pipe is closed,
    so a backgrounded grandchild holding stdout would hide the leader's exit;
    ``process_exited`` fires at the exit itself.
    """

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        self.captures = {1: _Capture(limit), 2: _Capture(limit)}
        self.exited: asyncio.Future[None] = loop.create_future()
        self.overflow: asyncio.Future[None] = loop.create_future()
        self.pipes_closed: asyncio.Future[None] = loop.create_future()
        self._open = {1, 2}

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        chunk = data.encode() if isinstance(data, str) else data
        capture = self.captures.get(fd)
        if capture is not None and capture.add(chunk) and not self.overflow.done():
            self.overflow.set_result(None)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._open.discard(fd)
        if not self._open and not self.pipes_closed.done():
            self.pipes_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


def _errno_name(exc: OSError) -> str:
    if exc.errno is not None and exc.errno in errno.errorcode:
        return errno.errorcode[exc.errno]
    return type(exc).__name__


def _spawn_kwargs() -> dict[str, Any]:
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def _kill_tree(pid: int) -> None:
    """Kill ``pid``, its process group (POSIX) and every descendant psutil can see."""
    try:
        descendants = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        descendants = []
    if sys.platform != "win32":
        _kill_group(pid)
    else:
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).kill()
    for proc in descendants:
        with contextlib.suppress(psutil.Error):
            proc.kill()


def _kill_group(pgid: int) -> None:
    """POSIX: SIGKILL the process group the probe leads (a no-op once it is empty)."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def run_probe(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    timeout_s: float,
    max_output_bytes: int,
    cwd: str | None = None,
    stdin: bytes | None = None,
) -> ProbeResult:
    """Run one probe command to completion, bounded in time and output.

    stdin is ``/dev/null``, or ``stdin`` written then closed (an ACP model discovery
    sends its handshake that way, FIDELITY-ACP-MODELS-001); stdout and stderr are
    captured up to ``max_output_bytes`` each. Never raises for anything the command
    does: a spawn failure becomes ``os_error`` (``errno`` name), a deadline
    ``timed_out``. Cancelling the awaiting task kills and reaps the probe before the
    cancellation propagates.
    """
    args = tuple(argv)
    start = time.monotonic()
    loop = asyncio.get_running_loop()
    protocol = _ProbeProtocol(max_output_bytes, loop)
    try:
        transport, _ = await loop.subprocess_exec(
            lambda: protocol,
            *args,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            **_spawn_kwargs(),
        )
    except OSError as exc:
        return ProbeResult(
            argv=args,
            stdout="",
            stderr="",
            exit_code=None,
            signal=None,
            timed_out=False,
            os_error=_errno_name(exc),
            output_overflow=False,
            duration_s=time.monotonic() - start,
        )

    pid = transport.get_pid()
    if stdin is not None:
        pipe = transport.get_pipe_transport(0)
        if isinstance(pipe, asyncio.WriteTransport):
            with contextlib.suppress(OSError, RuntimeError):
                pipe.write(stdin)
                pipe.close()  # EOF: the handshake is all the probe sends
    timed_out = False
    overflowed = False
    guard(pid, 0)  # SIG-WATCHDOG-001: a probe is killed outright, by us or the watchdog
    try:
        done, _ = await asyncio.wait(
            {protocol.exited, protocol.overflow},
            timeout=timeout_s,
            return_when=asyncio.FIRST_COMPLETED,
        )
        if protocol.exited not in done:
            overflowed = protocol.overflow in done
            timed_out = not overflowed
            _kill_tree(pid)
            await protocol.exited
        else:
            # The leader exited by itself: stragglers left in its group are not wanted,
            # and killing them releases any pipe they still hold.
            _kill_group(pid)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(protocol.pipes_closed), _DRAIN_GRACE_S)
    finally:
        if transport.get_returncode() is None:
            _kill_tree(pid)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(protocol.exited), _DRAIN_GRACE_S)
        transport.close()
        release(pid)

    rc = transport.get_returncode()
    killed = timed_out or overflowed
    return ProbeResult(
        argv=args,
        stdout=protocol.captures[1].text(),
        stderr=protocol.captures[2].text(),
        exit_code=None if killed or rc is None or rc < 0 else rc,
        signal=-rc if rc is not None and rc < 0 else None,
        timed_out=timed_out,
        os_error=None,
        output_overflow=overflowed,
        duration_s=time.monotonic() - start,
    )
