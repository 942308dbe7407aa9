"""The acp-json-rpc session: one prompt turn with an Agent Client Protocol agent.

A sans-IO state machine (seed 000 §3 ``acp-json-rpc`` row, §5.4, §5.9; seed 002
§7.4; ref §2.6; wire §A.1). Newline-delimited JSON-RPC 2.0 over the agent's
stdin/stdout; we are the client. This class takes the host's calls, reads the agent's
lines and routes each message to the concern that owns it.

Rules: RUN-CONTINUE-001.
Design: docs/design/protocols.md#harness.protocols.acp
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from harness import __version__
from harness.events import Status
from harness.protocols import jsonrpc
from harness.protocols.acp.agent_requests import AgentRequests
from harness.protocols.acp.amr_extension import CONTINUE_METHOD, ContinuationEvidence
from harness.protocols.acp.config import (
    DEFAULT_CANCEL_GRACE_MS,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_SHUTDOWN_GRACE_MS,
    DEFAULT_STAGE_TIMEOUT_MS,
    AcpConfig,
    AcpDefFields,
    AcpRequestError,
    options_from_def,
)
from harness.protocols.acp.context import RunContext
from harness.protocols.acp.continuation import Continuation, start_status
from harness.protocols.acp.error_responses import ErrorResponses
from harness.protocols.acp.handshake import Handshake
from harness.protocols.acp.mcp import convert_mcp_servers
from harness.protocols.acp.schema import describe, validate_incoming
from harness.protocols.acp.state import CANCEL_DEADLINE, Move, Phase
from harness.protocols.acp.turn import Turn
from harness.protocols.base import (
    Actions,
    RunStatus,
    SessionRequest,
    SetDeadline,
)
from harness.protocols.core import CoreViews
from harness.protocols.jsonrpc import (
    Invalid,
    JsonItem,
    JsonLineReader,
    NonJsonLine,
    Notification,
    OversizeItem,
    ReadItem,
    Request,
    Response,
)
from harness.protocols.options import AcpEnvFormat

__all__ = ["AcpSession"]

#: A handler of one of our requests' results: ``(result, the line it came on, actions)``.
ResultHandler = Callable[[Any, JsonItem, Actions], None]


def _is_absolute(path: str) -> bool:
    return posixpath.isabs(path) or bool(re.match(r"^(?:[A-Za-z]:[\\/]|\\\\)", path))


class AcpSession(CoreViews):
    """One run of an ACP agent (implements ``TwoWaySession``)."""

    def __init__(
        self,
        *,
        env_format: AcpEnvFormat = AcpEnvFormat.ARRAY,
        stdio_mcp_removed_in_version: str | None = None,
        turn_end_completes_prompt: bool = False,
        stage_timeout_ms: int | None = DEFAULT_STAGE_TIMEOUT_MS,
        shutdown_grace_ms: int = DEFAULT_SHUTDOWN_GRACE_MS,
        cancel_grace_ms: int = DEFAULT_CANCEL_GRACE_MS,
        client_name: str = "adapter-harness",
        client_version: str = __version__,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        model_unavailable_error_code: str | None = None,
        native_continue_runtime: str | None = None,
        continuing: ContinuationEvidence | None = None,
    ) -> None:
        config = AcpConfig(
            env_format=env_format,
            stdio_mcp_removed_in_version=stdio_mcp_removed_in_version,
            turn_end_completes_prompt=turn_end_completes_prompt,
            stage_timeout_ms=stage_timeout_ms,
            shutdown_grace_ms=shutdown_grace_ms,
            cancel_grace_ms=cancel_grace_ms,
            client_name=client_name,
            client_version=client_version,
            max_line_bytes=max_line_bytes,
            model_unavailable_error_code=model_unavailable_error_code,
            native_continue_runtime=native_continue_runtime,
        )
        self._config = config
        self._run = run = RunContext(config, continuing)
        self._core = run.core
        self._reader = JsonLineReader(config.max_line_bytes)
        self._turn = Turn(run)
        self._continuation = Continuation(run)
        self._handshake = Handshake(run, self._turn, self._continuation)
        self._agent_requests = AgentRequests(run)
        self._errors = ErrorResponses(run, self._handshake, self._turn, self._continuation)
        self._cancel_deadline: float | None = None
        #: Which result moves the run on: method of our request -> handler.
        self._on_result: dict[str, ResultHandler] = {
            "initialize": self._handshake.on_initialize,
            "session/new": self._handshake.on_session,
            "session/load": self._handshake.on_session,
            "session/set_config_option": self._handshake.on_model,
            "session/set_model": self._handshake.on_model,
            "session/prompt": self._turn.on_result,
            CONTINUE_METHOD: self._turn.on_result,
        }

    @classmethod
    def from_def(cls, defn: AcpDefFields, **overrides: Any) -> AcpSession:
        """A session configured from an ``acp-json-rpc`` def's fields (rule ACP-DEF-001)."""
        options = options_from_def(defn)
        options.update(overrides)
        return cls(**options)

    # -- properties -------------------------------------------------------------------

    @property
    def config(self) -> AcpConfig:
        """The options this session runs with (a continuing session gets the same)."""
        return self._config

    @property
    def session_id(self) -> str | None:
        """The ACP ``sessionId`` (the ``session/load`` handle for a later turn)."""
        return self._run.session_id

    @property
    def durable_session_id(self) -> str | None:
        """ref §2.6 step 3: ``result.openCodeSessionId`` when given, else ``sessionId``."""
        return self._run.durable_session_id

    @property
    def agent_info(self) -> Mapping[str, Any] | None:
        """``initialize.result.agentInfo`` as the agent sent it."""
        return self._run.agent_info

    @property
    def agent_capabilities(self) -> Mapping[str, Any]:
        return self._run.agent_capabilities

    @property
    def continuing(self) -> ContinuationEvidence | None:
        """The evidence this session continues (``None``: it runs a prompt)."""
        return self._run.continuing

    @property
    def continuation(self) -> ContinuationEvidence | None:
        """Evidence that the interrupted prompt may be continued natively in a new process.

        Set only when every condition of seed 000 "AMR compaction continuation" held when
        the prompt failed: the extension was negotiated, the evidence is complete and names
        the durable session this process opened, every tool call seen reached a terminal
        status, no cancel was asked for, and this session is not itself the continuation.
        The run still *failed* as far as this session goes.
        """
        return self._run.continuation

    def continuation_session(self) -> AcpSession | None:
        """A fresh session, configured like this one, that continues :attr:`continuation`.

        The host starts it with the same request in a new process, once this process's
        tree is quiescent (seed 000: "waits for the previous process tree to become
        quiescent, loads the same durable session in a new process").
        """
        evidence = self._run.continuation
        if evidence is None:
            return None
        return AcpSession(**asdict(self._config), continuing=evidence)

    # -- host calls -------------------------------------------------------------------

    def start(self, request: SessionRequest, now_ms: float) -> Actions:
        """Write ``initialize`` (ref §2.6 step 1; rule ACP-INIT-001).

        Raises :class:`AcpRequestError` before any state changes when the request
        cannot become valid ACP frames (relative cwd, malformed MCP server).
        """
        run = self._run
        self._core.require_new()
        if not isinstance(request.cwd, str) or not _is_absolute(request.cwd):
            # Schema NewSessionRequest.cwd: "Must be an absolute path." A sans-IO
            # session cannot resolve a relative one (upstream: path.resolve).
            raise AcpRequestError(f"cwd must be an absolute path, got {request.cwd!r}")
        servers = convert_mcp_servers(request.mcp_servers, self._config.env_format)
        run.request = request
        run.mcp_servers = servers
        run.now = run.start_ms = now_ms
        self._core.move(Move.START)
        actions = Actions()
        if run.continuing is not None:
            actions.events.append(start_status(run.continuing))
        self._handshake.initialize(actions)
        return actions

    def receive(self, data: bytes, now_ms: float) -> Actions:
        self._core.check_receive()
        self._run.now = now_ms
        actions = Actions()
        for item in self._reader.feed(data):
            self._on_item(item, actions)
        return actions

    def end_of_output(self, now_ms: float) -> Actions:
        run = self._run
        actions = Actions()
        if not self._core.close_input():
            return actions
        run.now = now_ms
        for item in self._reader.finish():
            self._on_item(item, actions)
        if self._core.phase is Phase.CANCELLING:
            # The agent exited after our cancel: the cancellation is done.
            self._core.finish(actions, Move.STOPPED, RunStatus.CANCELLED)
        elif not self._core.ended:
            # ref §2.6: "Child close before completion -> ACP session exited before
            # completion" (rule ACP-EXIT-001).
            run.fail(
                actions,
                code="ACP_EXITED_EARLY",
                message="ACP session exited before completion",
                rule="ACP-EXIT-001",
            )
        return actions

    def cancel(self, now_ms: float) -> Actions:
        """ref §2.6 "Abort" / §10.1; wire §A.1.3 cancellation contract (ACP-CANCEL-001)."""
        run = self._run
        self._core.require_started("cancel")
        actions = Actions()
        if self._core.ended or self._core.phase is Phase.CANCELLING:
            return actions  # idempotent (rule ACP-CANCEL-003)
        run.now = now_ms
        # ref §2.6: "flush open tools as errors".
        actions.events.extend(run.mapper.flush(is_error=True))
        if run.session_id is not None:
            # wire §A.1.2: session/cancel is a notification (upstream: a request).
            run.send(actions, jsonrpc.notification("session/cancel", {"sessionId": run.session_id}))
        if self._core.phase is Phase.RUNNING:
            # wire §A.1.3: the agent MUST answer the prompt with stopReason "cancelled".
            self._core.move(Move.CANCEL)
            self._cancel_deadline = now_ms + self._config.cancel_grace_ms
            actions.controls.append(SetDeadline(self._cancel_deadline, CANCEL_DEADLINE))
        else:
            # No prompt was written: nothing to wait for.
            self._core.finish(actions, Move.CANCEL_BEFORE_PROMPT, RunStatus.CANCELLED)
        return actions

    def tick(self, now_ms: float) -> Actions:
        run = self._run
        self._core.require_started("tick")
        run.now = now_ms
        actions = Actions()
        if self._core.phase is Phase.CANCELLING:
            if self._cancel_deadline is not None and now_ms >= self._cancel_deadline:
                # Grace over without the cancelled stop reason (rule ACP-CANCEL-002).
                actions.events.extend(run.mapper.flush(is_error=True))
                self._core.finish(
                    actions, Move.GRACE_OVER, RunStatus.CANCELLED, terminate_after_ms=0
                )
        elif (
            self._core.phase in (Phase.HANDSHAKE, Phase.RUNNING)
            and run.stage_deadline is not None
            and now_ms >= run.stage_deadline
        ):
            # ref §2.6 stage watchdog: "ACP <label> timed out after <ms>ms"
            # (rule ACP-TIMEOUT-001).
            run.fail(
                actions,
                code="ACP_STAGE_TIMEOUT",
                message=f"ACP {run.stage or 'session'} timed out after "
                f"{self._config.stage_timeout}ms",
                rule="ACP-TIMEOUT-001",
            )
        return actions

    # -- reading ----------------------------------------------------------------------------

    def _on_item(self, item: ReadItem, actions: Actions) -> None:
        run = self._run
        if self._core.ended:
            self._core.count("lines_after_finish")
            return
        if isinstance(item, NonJsonLine):
            # ref §2.6 / §2.9: non-JSON stdout lines are ignored (rule ACP-FRAME-001).
            self._core.count("non_json_lines")
        elif isinstance(item, OversizeItem):
            run.fail(
                actions,
                code="ACP_FRAME_TOO_LARGE",
                message=(
                    f"ACP agent wrote a {item.size}-byte line; the limit is "
                    f"{self._config.max_line_bytes} bytes"
                ),
                rule="ACP-FRAME-003",
            )
        else:
            self._on_json(item, actions)
        run.touch(actions)  # a no-op once the line finished the run

    def _on_json(self, item: JsonItem, actions: Actions) -> None:
        run = self._run
        self._core.count("frames_received")
        if item.lines > 1:
            self._core.count("multiline_messages")
        # rule ACP-SCHEMA-002: validate, report, go on.
        problems = validate_incoming(item.value, run.outstanding)
        if problems:
            self._core.count("schema_violations")
            actions.events.append(Status(label="schema_violation", detail=describe(problems)))
        message = jsonrpc.classify(item.value)
        if isinstance(message, Invalid):
            self._core.count("invalid_messages")
            if message.answerable:
                # JSON-RPC 2.0: an unusable request gets "Invalid Request" with id null.
                run.send(
                    actions,
                    jsonrpc.error_response(None, jsonrpc.INVALID_REQUEST, "Invalid Request"),
                )
        elif isinstance(message, Request):
            self._agent_requests.on_request(message, actions)
        elif isinstance(message, Notification):
            self._turn.on_notification(message, actions)
        elif isinstance(message, Response):
            self._on_response(message, item, actions)
        else:
            self._errors.on_error(message, actions)

    def _on_response(self, response: Response, item: JsonItem, actions: Actions) -> None:
        method = self._run.outstanding.pop(response.id, None)
        if method is None:
            self._core.count("unexpected_responses")
            return
        self._on_result[method](response.result, item, actions)
