"""POSIX: a watchdog process that stops the CLI groups of a harness that died (SIG-WATCHDOG-001).

The runner and the probes start each CLI as a process-group leader and stop the group
themselves; a harness killed with SIGKILL runs no code, so its CLIs would live on. Each
group is guarded here while it runs; the watchdog (``watchdog_main.py``) kills the guarded
groups when the pipe from this process reaches EOF. It lives while something is guarded:
started at the first guard, told to exit when the last group is released, so no process
outlives the harness's need for it.

Design: docs/design/runner.md#harness.runtime.watchdog
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

__all__ = ["PROGRAM", "Watchdog", "guard", "release"]

_log = logging.getLogger(__name__)

#: The watchdog's program, run by path so that nothing of ``harness`` is imported.
PROGRAM = Path(__file__).with_name("watchdog_main.py")
#: How long a watchdog with nothing to guard may take to exit once told to.
_EXIT_WAIT_S = 2.0


class Watchdog:
    """This process's link to its watchdog: the guarded groups and the pipe's write end.

    Thread-safe. Nothing here raises: where the watchdog cannot start or stops answering,
    runs go on without it and the reason is logged once.
    """

    def __init__(self, *, program: Path = PROGRAM, executable: str = sys.executable) -> None:
        self._program = program
        self._executable = executable
        self._lock = threading.Lock()
        self._groups: dict[int, int] = {}
        self._proc: subprocess.Popen[bytes] | None = None
        self._fd: int | None = None
        self._owner = os.getpid()
        #: Why the watchdog is off for good in this process (``None`` while it can run).
        self.disabled: str | None = None

    @property
    def pid(self) -> int | None:
        """The running watchdog's pid, if one runs for this process."""
        proc = self._proc
        return proc.pid if proc is not None and self._owner == os.getpid() else None

    def guard(self, pgid: int, grace_ms: int) -> None:
        """Have the group ``pgid`` stopped if this process dies before :meth:`release`.

        ``grace_ms`` is the time between SIGTERM and SIGKILL (0: SIGKILL at once).
        """
        if sys.platform == "win32":
            return  # the run's Job Object kills its tree when the harness's handle closes
        with self._lock:
            self._forget_if_forked()
            self._groups[pgid] = max(0, int(grace_ms))
            if self.disabled is not None:
                return
            if self._fd is None:
                self._start()
            else:
                self._send(f"+{pgid} {self._groups[pgid]}\n")

    def release(self, pgid: int) -> None:
        """The group ended (or was stopped): forget it; the last one retires the watchdog."""
        with self._lock:
            self._forget_if_forked()
            if self._groups.pop(pgid, None) is None or self._fd is None:
                return
            self._send(f"-{pgid}\n")
            if self._groups or self._fd is None:
                return
            proc, fd = self._proc, self._fd
            self._proc = self._fd = None
        self._retire(proc, fd)

    # -- the process ------------------------------------------------------------------

    def _start(self) -> None:
        """Start the watchdog and tell it every guarded group (the lock is held)."""
        if not self._program.is_file():
            self._disable(f"its program {self._program} is missing")
            return
        if not self._executable:
            self._disable("the Python interpreter's path is unknown")
            return
        try:
            read_end, write_end = os.pipe()  # neither is inherited by anything spawned later
        except OSError as exc:  # out of file descriptors
            self._disable(f"it has no pipe ({type(exc).__name__}: {exc})")
            return
        try:
            self._proc = subprocess.Popen(
                [self._executable, "-I", "-S", str(self._program), str(read_end)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(read_end,),
                cwd="/",
                env={},  # it needs nothing, and the run's secrets stay out of it
                start_new_session=True,  # a terminal's or a job's group signal spares it
            )
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            os.close(write_end)
            self._disable(f"it could not start ({type(exc).__name__}: {exc})")
            return
        finally:
            os.close(read_end)
        os.set_blocking(write_end, False)  # a stuck watchdog never blocks a run
        self._fd = write_end
        self._send("".join(f"+{pgid} {grace}\n" for pgid, grace in self._groups.items()))

    def _send(self, text: str) -> None:
        """Write ``text`` whole to the watchdog; on failure give it up (the lock is held)."""
        assert self._fd is not None
        data = text.encode("ascii")
        try:
            written = os.write(self._fd, data)
        except OSError as exc:
            reason = f"it stopped reading ({type(exc).__name__}: {exc})"
        else:
            if written == len(data):
                return
            reason = "its pipe is full"
        proc, fd = self._proc, self._fd
        self._proc = self._fd = None
        self._disable(reason, pid=proc.pid if proc is not None else None)
        self._retire(proc, fd)

    def _retire(self, proc: subprocess.Popen[bytes] | None, fd: int | None) -> None:
        """Close the pipe (the watchdog sees EOF with nothing to guard) and reap it."""
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        if proc is None:
            return
        try:
            proc.wait(timeout=_EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def _disable(self, reason: str, *, pid: int | None = None) -> None:
        if self.disabled is None:
            which = "the process watchdog" if pid is None else f"the process watchdog (pid {pid})"
            _log.warning(
                "harness: %s is off: %s; runs go on, but a harness killed now leaves "
                "its CLIs running",
                which,
                reason,
            )
        self.disabled = reason

    def after_fork_in_child(self) -> None:
        """A forked child drops the parent's pipe at once: it would keep the watchdog of a
        dead parent waiting for this child's exit (the lock may have been held mid-fork)."""
        self._lock = threading.Lock()
        self._forget_if_forked()

    def _forget_if_forked(self) -> None:
        """In a child forked from the owner, the parent's watchdog is not ours to use."""
        if self._owner == os.getpid():
            return
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._owner, self._proc, self._fd = os.getpid(), None, None
        self._groups.clear()


#: The watchdog of this process, shared by every run and probe in it.
WATCHDOG = Watchdog()
if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=WATCHDOG.after_fork_in_child)


def guard(pgid: int, grace_ms: int) -> None:
    """:meth:`Watchdog.guard` on this process's watchdog."""
    WATCHDOG.guard(pgid, grace_ms)


def release(pgid: int) -> None:
    """:meth:`Watchdog.release` on this process's watchdog."""
    WATCHDOG.release(pgid)
