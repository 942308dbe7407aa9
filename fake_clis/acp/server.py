"""The ACP agent process's JSON-RPC loop: read a message, route it to its method's handler.

The handlers live by concern (``handshake``, ``sessions``, ``prompt``, ``continuation``)
over one shared :class:`~fake_clis.acp.process.AgentProcess`; this module only reads
stdin (through the channel), answers what no handler can, and picks the exit code.

Design: docs/design/fakes.md#fake_clis.acp.server
"""

from __future__ import annotations

from fake_clis.acp.agent import Agent
from fake_clis.acp.continuation import Continuation
from fake_clis.acp.handshake import Handshake
from fake_clis.acp.process import AgentProcess, Handler
from fake_clis.acp.prompt import Prompt
from fake_clis.acp.sessions import Sessions
from fake_clis.acp.wire import (
    CONTINUE_METHOD,
    EOF,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
)
from fake_clis.base import FakeRun

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["AcpServer"]

#: A method's handler: ``(request id, params)``; it answers the request itself.
if TYPE_CHECKING:
    MethodHandler = Callable[[Any, dict[str, Any]], None]


class AcpServer(Handler):
    """One agent process: the JSON-RPC loop over its method handlers."""

    def __init__(self, run: FakeRun, agent: Agent) -> None:
        super().__init__(AgentProcess(run, agent))
        handshake = Handshake(self.process)
        sessions = Sessions(self.process)
        prompt = Prompt(self.process)
        continuation = Continuation(self.process, prompt)
        self._handlers: dict[str, MethodHandler] = {
            "initialize": handshake.on_initialize,
            "authenticate": handshake.on_authenticate,
            "session/new": sessions.on_session_new,
            "session/load": sessions.on_session_load,
            "session/set_model": sessions.on_set_model,
            "session/set_config_option": sessions.on_set_config_option,
            "session/prompt": prompt.on_prompt,
            CONTINUE_METHOD: continuation.on_continue,
        }

    def serve(self) -> int:
        self.process.channel.start()
        while True:
            message = self.process.channel.inbox.get()
            if message is EOF:
                break
            self.dispatch(message)
        self.run.linger_if_asked()
        if not self.agent.exits_at_eof:
            self.run.hang()
        if self.process.api_error_seen and self.agent.api_error_exit is not None:
            return self.agent.api_error_exit
        return self.run.scenario.exit_code

    def dispatch(self, message: Any) -> None:
        if isinstance(message, tuple) and message[0] == "invalid":
            self.out.error(None, PARSE_ERROR, "Parse error")
            return
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            self.out.error(None, INVALID_REQUEST, "Invalid Request")
            return
        if message.get("jsonrpc") != "2.0" and "id" in message:
            self.out.error(
                message.get("id"), INVALID_REQUEST, "Invalid Request: jsonrpc must be 2.0"
            )
            return
        method: str = message["method"]
        params = message.get("params")
        if "id" not in message:
            # Notifications: session/cancel is routed by the channel; others are ignored.
            self.run.record.setdefault("ignored_notifications", []).append(method)
            return
        request_id = message["id"]
        handler = self._handlers.get(method)
        if handler is None:
            self.out.error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
            return
        if not isinstance(params, dict):
            self.out.error(request_id, INVALID_PARAMS, f"Invalid params: {method} needs an object")
            return
        if self.agent.native_continue:
            self.store.ledger(method, params)
        handler(request_id, params)
