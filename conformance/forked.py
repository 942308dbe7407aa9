"""Run one function in a forked copy of this process; its result comes back pickled.

``harness conform``'s argv checks change process-wide state (``sys.platform``, env and
audit traps: conformance/checks/defs.py), so in this process nothing may run beside
them. In a forked copy they change only the copy's state, and they use the second core
while this process starts the fake runs. Where a copy cannot be made safely (no
``fork``, not Linux, or threads already running: a fork copies no thread but every
lock), :meth:`Forked.start` says so and the caller runs the function here itself.

Design: docs/design/conformance.md#conformance.forked
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Forked", "ForkedError"]

_T = TypeVar("_T")

#: Exit status of a copy whose function raised (its result is then not sent).
_FAILED = 70


class ForkedError(RuntimeError):
    """The copy ended without a result: it raised, was killed or sent nothing readable."""


class Forked(Generic[_T]):
    """The function running in a copy of this process; :meth:`result` waits for it."""

    def __init__(self, pid: int, read_fd: int) -> None:
        self._pid = pid
        self._read_fd = read_fd

    @classmethod
    def start(cls, func: Callable[[], _T]) -> Forked[_T] | None:
        """``func`` running in a forked copy, or ``None`` when this process cannot fork
        safely (then nothing has started)."""
        if not sys.platform.startswith("linux") or threading.active_count() != 1:
            return None
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the copy: never returns, never runs the parent's exit handlers
            os.close(read_fd)
            _serve(func, write_fd)
        os.close(write_fd)
        return cls(pid, read_fd)

    def result(self) -> _T:
        """What the function returned; :class:`ForkedError` when the copy gave nothing."""
        with os.fdopen(self._read_fd, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0 or not data:
            raise ForkedError(f"the forked copy (pid {self._pid}) ended with {code}, no result")
        try:
            value: _T = pickle.loads(data)
        except Exception as exc:
            raise ForkedError(f"the forked copy's result is unreadable: {exc}") from None
        return value


def _serve(func: Callable[[], object], write_fd: int) -> None:
    """In the copy: run ``func``, send its pickled result, and leave at once (``_exit``:
    the parent's buffered output and exit handlers are the parent's alone)."""
    code = _FAILED
    try:
        data = pickle.dumps(func())
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(data)
        code = 0
    finally:
        os._exit(code)
