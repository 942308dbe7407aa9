"""One ACP run's shared state and the writing side every concern sends through.

The handshake, the turn, the agent's requests and the error handling each own their
decisions; what they share lives here: the session core (phase, counters, endings), the
request, what ``initialize`` and ``session/new`` told us, and the frames we write, each
validated against the schema (rule ACP-SCHEMA-001), numbered (rule ACP-RPC-002) and
resetting the stage watchdog.

Design: docs/design/protocols.md#harness.protocols.acp
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.protocols import jsonrpc
from harness.protocols.acp.amr_extension import ContinuationEvidence
from harness.protocols.acp.config import AcpConfig
from harness.protocols.acp.schema import validate_outgoing
from harness.protocols.acp.state import COUNTERS, MACHINE, STAGE_DEADLINE, STATES, Move, Phase
from harness.protocols.acp.updates import UpdateMapper
from harness.protocols.base import (
    Actions,
    LocalProtocolError,
    RunStatus,
    SessionRequest,
    SetDeadline,
)
from harness.protocols.core import SessionCore
from harness.protocols.jsonrpc import Request, RequestId

__all__ = ["MESSAGE_LIMIT", "RunContext", "bounded"]

MESSAGE_LIMIT = 500


def bounded(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RunContext:
    """The state of one run that more than one concern reads or writes."""

    def __init__(self, config: AcpConfig, continuing: ContinuationEvidence | None) -> None:
        self.config = config
        self.core: SessionCore[Phase, Move] = SessionCore(
            MACHINE,
            STATES,
            COUNTERS,
            terminate_after_ms=config.shutdown_grace_ms,
            on_end=self._before_end,
        )
        self.mapper = UpdateMapper()
        #: The evidence this session continues (it runs in the continuing process).
        self.continuing = continuing
        #: The evidence this session's interrupted prompt offers to a new process.
        self.continuation: ContinuationEvidence | None = None
        self.request: SessionRequest | None = None
        self.mcp_servers: list[dict[str, Any]] = []
        self.now = 0.0
        self.start_ms = 0.0
        self.agent_info: dict[str, Any] | None = None
        self.agent_capabilities: dict[str, Any] = {}
        self.session_id: str | None = None
        self.durable_session_id: str | None = None
        #: Our requests the agent has not answered yet: id -> method.
        self.outstanding: dict[RequestId, str] = {}
        #: The method of our latest request (the watchdog's label).
        self.stage: str | None = None
        self.stage_deadline: float | None = None
        self._emitted_deadline: float | None = None
        self._next_id = 1

    def fail(
        self,
        actions: Actions,
        *,
        code: str,
        message: str,
        rule: str,
        retryable: bool = False,
        line: str | None = None,
    ) -> None:
        """End the run as FAILED (the table's FAIL move)."""
        self.core.fail(
            actions,
            Move.FAIL,
            code=code,
            message=message,
            rule=rule,
            retryable=retryable,
            line=line,
        )

    # -- writing ------------------------------------------------------------------------

    def send(
        self,
        actions: Actions,
        frame: dict[str, Any],
        answering: Mapping[RequestId, str] | None = None,
    ) -> None:
        # rule ACP-SCHEMA-001: a frame we build that the schema rejects is our bug.
        problems = validate_outgoing(frame, answering, env_format=self.config.env_format)
        if problems:
            raise LocalProtocolError(
                f"ACP session built an invalid {frame.get('method', 'response')} frame: "
                + "; ".join(problems)
            )
        actions.frames.append(jsonrpc.encode(frame))
        self.core.count("frames_sent")
        self.touch(actions)

    def send_request(self, actions: Actions, method: str, params: dict[str, Any]) -> None:
        # ref §2.6: "ids are sequential integers starting at 1" (rule ACP-RPC-002).
        request_id = self._next_id
        self._next_id += 1
        self.outstanding[request_id] = method
        self.stage = method
        self.send(actions, jsonrpc.request(request_id, method, params))

    def reply(self, actions: Actions, request: Request, result: Any) -> None:
        self.send(actions, jsonrpc.response(request.id, result), {request.id: request.method})

    def touch(self, actions: Actions) -> None:
        """ref §2.6: the stage watchdog is reset on every write and every line read.

        A ``SetDeadline`` is emitted only when the deadline moves, so the controls
        do not depend on how stdout was chunked."""
        timeout = self.config.stage_timeout
        if timeout is None or self.core.phase not in (Phase.HANDSHAKE, Phase.RUNNING):
            return
        self.stage_deadline = self.now + timeout
        if self.stage_deadline != self._emitted_deadline:
            self._emitted_deadline = self.stage_deadline
            actions.controls.append(SetDeadline(self.stage_deadline, STAGE_DEADLINE))

    def _before_end(self, actions: Actions, status: RunStatus) -> None:
        """A failure closes open tool rows as errors; no answer is awaited any more."""
        if status is RunStatus.FAILED:
            actions.events.extend(self.mapper.flush(is_error=True))
        self.outstanding.clear()
