"""The suite's leak check, and the small process helpers tests share.

:class:`LeakCheck` watches one test. It notes the pids alive before the test and gives the
test a fresh ``HARNESS_TEST_LEAK_TOKEN`` in ``os.environ``, which every process it starts
inherits. Afterwards a process is a leak when it is new since the start, still alive (a
zombie is only unreaped) and either a descendant of the test process or a carrier of the
token: the token finds a grandchild orphaned when its parent died (re-parented away from
us, invisible to ``children()``). A leak gets a grace period to finish exiting, then it
is killed and named with its command line.

The check costs two reads of the pid list per test plus a look at each new pid; a scan of
every process's parent or environment (~2 ms here) would run ~5,500 times a suite.
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, MutableMapping, Sequence

import psutil
import pytest

__all__ = [
    "GRACE_SECONDS",
    "KEEPS_PROCESSES",
    "LEAK_TOKEN_VAR",
    "LeakCheck",
    "StdoutPump",
    "alive",
    "describe",
    "kill_and_describe",
    "kill_orphans",
    "kill_tree",
    "leaked_processes",
    "no_leaked_processes",
    "pid_alive",
]

#: The environment variable carrying the running test's token to every process it starts.
LEAK_TOKEN_VAR = "HARNESS_TEST_LEAK_TOKEN"

#: The marker of a test that keeps a process past its end on purpose; it must say why.
KEEPS_PROCESSES = "keeps_processes"

#: How long a finishing process may take to go away before it counts as leaked.
GRACE_SECONDS = 1.0


def alive(proc: psutil.Process) -> bool:
    """Running and not a zombie (an exited child not yet reaped is no leak)."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def pid_alive(pid: int) -> bool:
    try:
        return alive(psutil.Process(pid))
    except psutil.Error:
        return False


def _carries(proc: psutil.Process, token: str) -> bool:
    try:
        return proc.environ().get(LEAK_TOKEN_VAR) == token
    except psutil.Error:
        return False


def _descends_from(proc: psutil.Process, ancestor: int) -> bool:
    try:
        return any(parent.pid == ancestor for parent in proc.parents())
    except psutil.Error:
        return False


def describe(proc: psutil.Process) -> str:
    """``pid N: <command line>`` (cut at 200 characters), or the name when argv is gone."""
    try:
        argv = " ".join(proc.cmdline()) or proc.name()
    except psutil.Error:
        argv = "<exited>"
    return f"pid {proc.pid}: {argv[:200]}"


def kill_and_describe(procs: Sequence[psutil.Process], grace: float = GRACE_SECONDS) -> list[str]:
    """Kill ``procs`` (described first, while their command lines are readable); reap."""
    described: list[str] = []
    for proc in procs:
        line = describe(proc)
        try:
            proc.kill()
        except psutil.Error:
            continue
        described.append(line)
    psutil.wait_procs(list(procs), timeout=grace)
    return described


def leaked_processes(token: str, exclude: Iterable[int] = ()) -> list[psutil.Process]:
    """Every live descendant of this process and every process carrying ``token``.

    A whole-table scan, for tests that must stop an orphaned tree mid-test (after a
    ``kill -9`` nothing else will); the per-test check is :class:`LeakCheck`.
    """
    me = os.getpid()
    skip = {me, *exclude}
    found: dict[int, psutil.Process] = {}
    for child in psutil.Process(me).children(recursive=True):
        if child.pid not in skip and alive(child):
            found[child.pid] = child
    for proc in psutil.process_iter():
        if proc.pid not in skip and proc.pid not in found and _carries(proc, token) and alive(proc):
            found[proc.pid] = proc
    return list(found.values())


def kill_orphans(token: str) -> list[int]:
    """Kill what :func:`leaked_processes` finds for ``token``; returns the pids."""
    orphans = leaked_processes(token)
    for proc in orphans:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(orphans, timeout=5)
    return [p.pid for p in orphans]


def kill_tree(proc: subprocess.Popen[bytes]) -> list[int]:
    """Kill ``proc`` and every descendant (snapshot first); reap; return the pids killed."""
    try:
        family = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        family = []
    for member in family:
        with contextlib.suppress(psutil.NoSuchProcess):
            member.kill()
    psutil.wait_procs(family, timeout=5)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    proc.wait(timeout=5)
    return [m.pid for m in family]


class StdoutPump:
    """Reads a process's stdout on a thread so tests can wait with a deadline."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self._fd = proc.stdout.fileno()
        self._queue: queue.Queue[bytes | None] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()
        self.received = bytearray()
        self.eof = False

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                self._queue.put(None)
                return
            self._queue.put(chunk)

    def next(self, timeout: float) -> bytes | None:
        """The next chunk, or None at EOF; raises ``TimeoutError`` after ``timeout``."""
        if self.eof:
            return None
        try:
            chunk = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no stdout within {timeout}s") from None
        if chunk is None:
            self.eof = True
        else:
            self.received += chunk
        return chunk

    def until(self, needle: bytes, timeout: float) -> bytes:
        """Read until ``needle`` has appeared in stdout; returns everything read so far."""
        deadline = time.monotonic() + timeout
        while needle not in self.received:
            left = deadline - time.monotonic()
            if left <= 0 or self.next(left) is None:
                break
        if needle not in self.received:
            raise AssertionError(
                f"{needle!r} never appeared; stdout so far: {bytes(self.received)!r}"
            )
        return bytes(self.received)

    def drain(self, timeout: float = 5.0) -> bytes:
        """Read to EOF (each chunk within ``timeout``); returns all of stdout."""
        while self.next(timeout) is not None:
            pass
        return bytes(self.received)


class LeakCheck:
    """One test's watch for processes it leaves behind (see the module docstring)."""

    def __init__(self, environ: MutableMapping[str, str] | None = None) -> None:
        self.token = uuid.uuid4().hex
        self._environ = os.environ if environ is None else environ
        self._previous = self._environ.get(LEAK_TOKEN_VAR)
        self._before = set(psutil.pids())
        self._environ[LEAK_TOKEN_VAR] = self.token
        self._done = False

    def restore(self) -> None:
        """Put back the environment variable as it was (idempotent)."""
        if self._done:
            return
        self._done = True
        if self._previous is None:
            self._environ.pop(LEAK_TOKEN_VAR, None)
        else:
            self._environ[LEAK_TOKEN_VAR] = self._previous

    def suspects(self) -> list[psutil.Process]:
        """Live processes started since the watch began that are ours (pid order)."""
        me = os.getpid()
        found: list[psutil.Process] = []
        for pid in sorted(set(psutil.pids()) - self._before - {me}):
            try:
                proc = psutil.Process(pid)
            except psutil.Error:
                continue
            if alive(proc) and (_descends_from(proc, me) or _carries(proc, self.token)):
                found.append(proc)
        return found

    def finish(self, grace: float = GRACE_SECONDS) -> list[str]:
        """Restore the environment; kill and describe whatever outlived ``grace``."""
        self.restore()
        suspects = self.suspects()
        if not suspects:
            return []
        _, survivors = psutil.wait_procs(suspects, timeout=grace)
        return kill_and_describe([p for p in survivors if alive(p)], grace)


@pytest.fixture(autouse=True)
def no_leaked_processes(request: pytest.FixtureRequest) -> Iterator[str]:
    """Fail a test that leaves a process running (killed first); yields the test's token.

    A test marked ``keeps_processes(reason)`` is not checked.
    """
    check = LeakCheck()
    try:
        yield check.token
    finally:
        check.restore()
    if request.node.get_closest_marker(KEEPS_PROCESSES) is not None:
        return
    leaked = check.finish()
    if leaked:
        pytest.fail("test left processes running (now killed):\n  " + "\n  ".join(leaked))
