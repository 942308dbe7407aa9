"""stdin on a reader thread: requests to a queue, responses and cancels routed at once.

The agent must notice ``session/cancel`` and answer its own permission requests while
a prompt is streaming, so stdin is read concurrently (wire §A.1.3 cancellation).
"""

from __future__ import annotations

import time

from fake_clis import jsonio
from fake_clis.acp.wire import CONTINUE_METHOD, EOF

# A fake starts hundreds of times per conform: no typing here, and threading and queue only
# once a server opens its channel.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import queue
    from typing import Any

    from fake_clis.base import FakeRun

__all__ = ["Channel"]


class Channel:
    """stdin on a reader thread: requests to a queue, responses and cancels routed at once.

    The agent must notice ``session/cancel`` and answer its own permission requests while
    a prompt is streaming, so stdin is read concurrently (wire §A.1.3 cancellation).
    """

    def __init__(self, run: FakeRun) -> None:
        import queue  # a probe (--version, --help) never opens the channel
        import threading

        self.run = run
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.eof = threading.Event()
        self._lock = threading.Condition()
        self._responses: dict[Any, dict[str, Any]] = {}
        #: sessionId -> id of the latest session/prompt request seen for it.
        self._latest_prompt: dict[str, Any] = {}
        self._cancelled: set[Any] = set()
        self._thread = threading.Thread(target=self._read, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _read(self) -> None:
        frames = self.run.record.setdefault("stdin_frames", [])
        while True:
            line = self.run.stdin.readline()
            if not line:
                break
            text = line.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                value = jsonio.loads(text)
            except ValueError:
                self.inbox.put(("invalid", text))
                continue
            frames.append(value)
            self._route(value)
        self.eof.set()
        with self._lock:
            self._lock.notify_all()
        self.inbox.put(EOF)

    def _route(self, value: Any) -> None:
        if not isinstance(value, dict):
            self.inbox.put(value)
            return
        method = value.get("method")
        if method is None and "id" in value and ("result" in value or "error" in value):
            with self._lock:
                self._responses[value["id"]] = value
                self._lock.notify_all()
            return
        params = value.get("params")
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        turn_methods = ("session/prompt", CONTINUE_METHOD)
        if method in turn_methods and "id" in value and isinstance(session_id, str):
            with self._lock:
                self._latest_prompt[session_id] = value["id"]
        elif method == "session/cancel" and "id" not in value and isinstance(session_id, str):
            with self._lock:
                if session_id in self._latest_prompt:
                    self._cancelled.add(self._latest_prompt[session_id])
                self._lock.notify_all()
            self.run.record.setdefault("cancels", []).append(session_id)
            return
        self.inbox.put(value)

    def cancelled(self, prompt_id: Any) -> bool:
        with self._lock:
            return prompt_id in self._cancelled

    def wait_cancel(self, prompt_id: Any, seconds: float) -> bool:
        """Sleep up to ``seconds``; True as soon as the prompt is cancelled."""
        deadline = time.monotonic() + seconds
        with self._lock:
            while prompt_id not in self._cancelled:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
            return True

    def wait_response(self, request_id: Any) -> dict[str, Any] | None:
        """Block until the client answers ``request_id``; None at stdin EOF."""
        with self._lock:
            while request_id not in self._responses:
                if self.eof.is_set():
                    return None
                self._lock.wait(0.5)
            return self._responses.pop(request_id)
