"""The subprocess protocol: both pipes read concurrently, queued, with bounded buffering.

Rule RUN-PUMP-001 (wire §B.7: stdout and stderr stay separate). The event loop reads
stdout and stderr as data arrives, whichever pipe it is on, so a CLI writing megabytes
to one pipe never blocks while the runner waits on the other. Chunks go to one queue the
run loop drains; when :data:`QUEUE_HIGH_BYTES` are waiting, reading pauses on *both*
pipes until the queue is below :data:`QUEUE_LOW_BYTES`, so memory stays bounded even if
the consumer (a slow ``on_event`` callback) falls behind. The exit is reported when it
happens (``process_exited``), not when the pipes close: a grandchild holding stdout open
must not hide the leader's exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
from typing import Any, cast

__all__ = ["QUEUE_HIGH_BYTES", "QUEUE_LOW_BYTES", "PipeQueue", "errno_name"]

#: Pause reading both pipes when this many bytes wait in the queue; resume below LOW.
QUEUE_HIGH_BYTES = 4 * 1024 * 1024
QUEUE_LOW_BYTES = 1024 * 1024


class PipeQueue(asyncio.SubprocessProtocol):
    """Queues ``("data", (fd, bytes))``, ``("eof", fd)`` and ``("exit", None)`` messages."""

    def __init__(self, queue: asyncio.Queue[tuple[str, Any]], exited: asyncio.Future[None]):
        self.queue = queue
        self.exited = exited
        self.transport: asyncio.SubprocessTransport | None = None
        self.queued = 0
        self.paused = False
        #: How many times reading was paused (reported in the run's counters).
        self.pauses = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.SubprocessTransport, transport)

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        chunk = data.encode() if isinstance(data, str) else data
        self.queued += len(chunk)
        self.queue.put_nowait(("data", (fd, chunk)))
        if self.queued > QUEUE_HIGH_BYTES and not self.paused:
            self.pauses += 1
            self._set_reading(False)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.queue.put_nowait(("eof", fd))

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)
        self.queue.put_nowait(("exit", None))

    def consumed(self, size: int) -> None:
        """The run loop took ``size`` bytes off the queue."""
        self.queued -= size
        if self.paused and self.queued < QUEUE_LOW_BYTES:
            self._set_reading(True)

    def _set_reading(self, on: bool) -> None:
        if self.transport is None:
            return
        self.paused = not on
        for fd in (1, 2):
            pipe = self.transport.get_pipe_transport(fd)
            if isinstance(pipe, asyncio.ReadTransport):
                with contextlib.suppress(RuntimeError, AttributeError):
                    if on:
                        pipe.resume_reading()
                    else:
                        pipe.pause_reading()


def errno_name(exc: OSError) -> str:
    """``ENOENT``, ``EACCES``, … (the exception's class name when there is no errno)."""
    if exc.errno is not None and exc.errno in errno.errorcode:
        return errno.errorcode[exc.errno]
    return type(exc).__name__
