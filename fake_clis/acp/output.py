"""What an ACP agent process writes: responses, errors, updates and its own requests.

Every frame is one line on stdout (wire §A.0); the agent's own requests (permission)
are numbered from 0.

Design: docs/design/fakes.md#fake_clis.acp.server
"""

from __future__ import annotations

from fake_clis.acp.wire import dumps

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fake_clis.base import FakeRun

__all__ = ["Output"]


class Output:
    """The JSON-RPC frames one agent process writes."""

    def __init__(self, run: FakeRun) -> None:
        self._run = run
        self._next_request_id = 0

    def send(self, frame: dict[str, Any]) -> None:
        self._run.out(dumps(frame))

    def result(self, request_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        body: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            body["data"] = data
        self.send({"jsonrpc": "2.0", "id": request_id, "error": body})

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        params = {"sessionId": session_id, "update": update}
        self.send({"jsonrpc": "2.0", "method": "session/update", "params": params})

    def next_id(self) -> int:
        """The id of the agent's next own request."""
        request_id = self._next_request_id
        self._next_request_id += 1
        return request_id
