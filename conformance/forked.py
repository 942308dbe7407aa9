"""Run one function in a forked copy of this process; what it sends comes back pickled.

``harness conform`` uses copies for work that must not, or need not, share this
process: the argv checks change process-wide state (``sys.platform``, env and audit
traps: conformance/checks/defs.py), and one event loop cannot start and follow the fake
runs fast enough to keep two cores busy. A copy changes only its own state and runs on
the other core. Where a copy cannot be made safely (no ``fork``, not Linux, or threads
already running: a fork copies no thread but every lock), :meth:`Forked.start` says so
and the caller does the work here itself.

Design: docs/design/conformance.md#conformance.forked
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO, Generic, TypeVar

__all__ = ["Forked", "ForkedError", "Send"]

_T = TypeVar("_T")
#: What the function in the copy calls to send an item back before its result.
Send = Callable[[Any], None]

#: Exit status of a copy whose function raised (its result is then not sent).
_FAILED = 70
#: Each message: its length (8 bytes, big-endian), then the pickled ``(kind, value)``.
_HEADER = struct.Struct(">Q")


def _os_threads() -> int:
    """The threads the kernel counts in this process (``/proc/self/stat``), 0 if unknown.

    ``threading.active_count`` forgets a thread before its OS thread has exited; a fork
    then copies a process that is not single-threaded (what Python 3.12 warns about).
    """
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return int(fields[17])  # field 20, num_threads; the split starts at field 3
    except (OSError, ValueError, IndexError):
        return 0


class ForkedError(RuntimeError):
    """The copy ended without a result: it raised, was killed or sent nothing readable."""


class Forked(Generic[_T]):
    """The function running in a copy of this process; :meth:`result` waits for it."""

    def __init__(self, pid: int, read_fd: int) -> None:
        self._pid = pid
        self._read_fd = read_fd

    @classmethod
    def start(cls, func: Callable[[Send], _T]) -> Forked[_T] | None:
        """``func(send)`` running in a forked copy, or ``None`` when this process cannot
        fork safely (then nothing has started)."""
        if not sys.platform.startswith("linux") or threading.active_count() != 1:
            return None
        if _os_threads() != 1:
            return None  # a thread Python no longer counts has not exited yet
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the copy: never returns, never runs the parent's exit handlers
            os.close(read_fd)
            _serve(func, write_fd)
        os.close(write_fd)
        return cls(pid, read_fd)

    def result(self, on_item: Send | None = None) -> _T:
        """What the function returned, each item it sent first given to ``on_item`` as it
        comes; :class:`ForkedError` when the copy gave no result. Reaps the copy."""
        try:
            with os.fdopen(self._read_fd, "rb") as pipe:
                found = _read_messages(pipe, on_item)
        finally:
            _, status = os.waitpid(self._pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0 or found is None:
            raise ForkedError(f"the forked copy (pid {self._pid}) ended with {code}, no result")
        value: _T = found[0]
        return value


def _read_messages(pipe: BinaryIO, on_item: Send | None) -> tuple[Any] | None:
    """Every message until the result (``(value,)``); ``None`` when the stream ends first
    or cannot be read."""
    while True:
        head = pipe.read(_HEADER.size)
        if len(head) < _HEADER.size:
            return None
        body = pipe.read(_HEADER.unpack(head)[0])
        try:
            kind, value = pickle.loads(body)
        except Exception:
            return None
        if kind == "result":
            return (value,)
        if on_item is not None:
            on_item(value)


def _serve(func: Callable[[Send], object], write_fd: int) -> None:
    """In the copy: run ``func``, send what it sends and its result, and leave at once
    (``_exit``: the parent's buffered output and exit handlers are the parent's alone)."""
    code = _FAILED
    try:
        with os.fdopen(write_fd, "wb") as pipe:

            def send(kind: str, value: Any) -> None:
                body = pickle.dumps((kind, value))
                pipe.write(_HEADER.pack(len(body)) + body)
                pipe.flush()

            result = func(lambda item: send("item", item))
            send("result", result)
        code = 0
    finally:
        os._exit(code)
