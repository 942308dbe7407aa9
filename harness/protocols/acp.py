"""The acp-json-rpc session: one prompt turn with an Agent Client Protocol agent.

A sans-IO state machine (seed 000 §3 ``acp-json-rpc`` row, §5.4, §5.9; seed 002
§7.4; ref §2.6; wire §A.1). Newline-delimited JSON-RPC 2.0 over the agent's
stdin/stdout; we are the client.

Rules: RUN-CONTINUE-001.
Design: docs/design/protocols.md#harness.protocols.acp
"""

from __future__ import annotations

import enum
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from harness import __version__
from harness.errors import HarnessError
from harness.events import Status, Usage
from harness.protocols import jsonrpc
from harness.protocols.acp_schema import describe, excerpt, validate_incoming, validate_outgoing
from harness.protocols.acp_updates import UpdateMapper, format_usage
from harness.protocols.amr_continuation import (
    CONTINUE_METHOD,
    ContinuationEvidence,
    advertised_version,
    is_continuation_incomplete,
    parse_continuation_evidence,
    supports_native_continue,
)
from harness.protocols.base import (
    Actions,
    LocalProtocolError,
    RunStatus,
    SessionError,
    SessionRequest,
    SessionState,
    SetDeadline,
)
from harness.protocols.core import SessionCore
from harness.protocols.def_options import AcpOptions
from harness.protocols.jsonrpc import (
    ErrorResponse,
    Invalid,
    JsonItem,
    JsonLineReader,
    NonJsonLine,
    Notification,
    OversizeItem,
    ReadItem,
    Request,
    RequestId,
    Response,
)
from harness.protocols.machine import Machine
from harness.protocols.options import AcpEnvFormat

__all__ = [
    "CONTINUATION_EXHAUSTED",
    "CONTINUATION_HISTORY",
    "CONTINUATION_INCOMPLETE",
    "CONTINUATION_UNSUPPORTED",
    "DEFAULT_CANCEL_GRACE_MS",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_SHUTDOWN_GRACE_MS",
    "DEFAULT_STAGE_TIMEOUT_MS",
    "MACHINE",
    "MODEL_CONFIG_IDS",
    "PROTOCOL_VERSION",
    "AcpDefFields",
    "AcpRequestError",
    "AcpSession",
    "choose_permission_option",
    "infer_retryable",
    "version_at_least",
]

#: ref §2.6: ``initialize.protocolVersion`` is 1.
PROTOCOL_VERSION = 1
#: ref §2.6: "DEFAULT_STAGE_TIMEOUT_MS = 10 min"; ``None`` or ``<= 0`` disables.
DEFAULT_STAGE_TIMEOUT_MS = 600_000
#: ref §2.6 step 5: "SIGTERM after 500 ms if still alive".
DEFAULT_SHUTDOWN_GRACE_MS = 500
#: How long to wait for ``stopReason: cancelled`` after ``session/cancel``.
DEFAULT_CANCEL_GRACE_MS = 2000
#: 16 MiB; see the module docstring ("Large lines").
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
#: ref §2.6 step 3: config option ids that select the model (case-insensitive).
MODEL_CONFIG_IDS = frozenset({"model", "models", "modelid", "modelids"})

_STAGE_DEADLINE = "acp-stage"
_CANCEL_DEADLINE = "acp-cancel-grace"
_FAILED = "AGENT_EXECUTION_FAILED"
#: seed 000 "AMR compaction continuation": the interrupted prompt, however it ends.
CONTINUATION_INCOMPLETE = "AMR_CONTINUATION_INCOMPLETE"
#: ... and the continuing process's own failures.
CONTINUATION_UNSUPPORTED = "AMR_CONTINUATION_UNSUPPORTED"
CONTINUATION_HISTORY = "AMR_CONTINUATION_HISTORY_MISMATCH"
CONTINUATION_EXHAUSTED = "AMR_CONTINUATION_EXHAUSTED"
_MODEL_METHODS = frozenset({"session/set_config_option", "session/set_model"})
#: The requests whose answer ends the turn.
_TURN_METHODS = frozenset({"session/prompt", CONTINUE_METHOD})
#: ref §2.6: a set_model/set_config error is recoverable when it is -32603 (the older
#: code's only case); -32601 is recoverable too, since an agent that does not know
#: session/set_model can still run the turn on its default model.
_RECOVERABLE_MODEL_CODES = frozenset({jsonrpc.INTERNAL_ERROR, jsonrpc.METHOD_NOT_FOUND})
#: Updates that are conversation content; before the prompt they are history replay.
_CONTENT_UPDATES = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
    }
)
#: ref §2.6 retryable inference (the reference elides part of the list; these are the
#: members it names).
_RETRYABLE_WORDS = (
    "upstream_error",
    "stream idle timeout",
    "overloaded",
    "gateway timeout",
    "service unavailable",
)
_MESSAGE_LIMIT = 500


class _Phase(enum.Enum):
    NEW = "new"
    #: initialize, session/new or session/load, and the model selection.
    HANDSHAKE = "handshake"
    #: session/prompt (or _session/continue) written; its result ends the turn.
    RUNNING = "running"
    #: session/cancel sent; waiting for the prompt's answer within the grace.
    CANCELLING = "cancelling"
    FINISHED = "finished"


class _Move(enum.Enum):
    START = "start"
    PROMPT = "prompt"
    #: Cancelled before the prompt was written: nothing to wait for.
    CANCEL_BEFORE_PROMPT = "cancel-before-prompt"
    CANCEL = "cancel"
    #: The prompt's answer (a result, a turn_end update or an error after our cancel).
    TURN_END = "turn-end"
    #: stdout closed after our cancel: the cancellation is done.
    STOPPED = "stopped"
    GRACE_OVER = "grace-over"
    FAIL = "fail"


#: Every legal move of an ACP run (MACHINE-MOVE-001).
MACHINE: Machine[_Phase, _Move] = Machine(
    name="acp-json-rpc",
    initial=_Phase.NEW,
    moves={
        (_Phase.NEW, _Move.START): _Phase.HANDSHAKE,
        (_Phase.HANDSHAKE, _Move.PROMPT): _Phase.RUNNING,
        (_Phase.HANDSHAKE, _Move.CANCEL_BEFORE_PROMPT): _Phase.FINISHED,
        (_Phase.RUNNING, _Move.CANCEL): _Phase.CANCELLING,
        (_Phase.RUNNING, _Move.TURN_END): _Phase.FINISHED,
        (_Phase.CANCELLING, _Move.TURN_END): _Phase.FINISHED,
        (_Phase.CANCELLING, _Move.STOPPED): _Phase.FINISHED,
        (_Phase.CANCELLING, _Move.GRACE_OVER): _Phase.FINISHED,
        (_Phase.HANDSHAKE, _Move.FAIL): _Phase.FINISHED,
        (_Phase.RUNNING, _Move.FAIL): _Phase.FINISHED,
        (_Phase.CANCELLING, _Move.FAIL): _Phase.FINISHED,
    },
    terminal=frozenset({_Phase.FINISHED}),
)

_STATE = {
    _Phase.NEW: SessionState.NEW,
    _Phase.HANDSHAKE: SessionState.HANDSHAKE,
    _Phase.RUNNING: SessionState.RUNNING,
    _Phase.CANCELLING: SessionState.CANCELLING,
    _Phase.FINISHED: SessionState.FINISHED,
}
_COUNTERS = (
    "frames_sent",
    "frames_received",
    "non_json_lines",
    "multiline_messages",
    "invalid_messages",
    "schema_violations",
    "permission_requests",
    "unsupported_requests",
    "ignored_notifications",
    "foreign_updates",
    "replayed_updates",
    "unexpected_responses",
    "ignored_errors",
    "lines_after_finish",
    "withheld_mcp_servers",
    "continuations_offered",
)


class AcpRequestError(HarnessError):
    """A :class:`SessionRequest` the ACP session cannot turn into valid frames."""

    code = "ACP_REQUEST_INVALID"


# -- pure helpers ------------------------------------------------------------------------


def version_at_least(version: str, floor: str) -> bool:
    """``version >= floor``, comparing the leading dotted numbers numerically.

    ``"0.37.0" >= "0.37.0"``, ``"0.100.1" >= "0.37.0"``; a prerelease suffix is
    ignored (``"0.37.0-rc1"`` counts as 0.37.0). An unparseable side is ``False``
    (ref §2.6 step 2: withhold only when the agent's version is known to be new).
    """
    mine, theirs = _version_tuple(version), _version_tuple(floor)
    if mine is None or theirs is None:
        return False
    width = max(len(mine), len(theirs))
    return mine + (0,) * (width - len(mine)) >= theirs + (0,) * (width - len(theirs))


def _version_tuple(text: str) -> tuple[int, ...] | None:
    match = re.match(r"^\s*v?(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def choose_permission_option(options: Any) -> str | None:
    """The ``optionId`` to select, or ``None`` when no option is acceptable.

    ref §2.6, newer ``rpc.ts`` order (rule ACP-PERM-001): ``optionId ==
    'approve_for_session'`` -> first ``kind: allow_always`` -> first ``kind:
    allow_once``. Only string option ids can be answered (schema ``PermissionOptionId``).
    """
    if not isinstance(options, list):
        return None
    usable = [o for o in options if isinstance(o, dict) and isinstance(o.get("optionId"), str)]
    for option in usable:
        if option["optionId"] == "approve_for_session":
            return str(option["optionId"])
    for kind in ("allow_always", "allow_once"):
        for option in usable:
            if option.get("kind") == kind:
                return str(option["optionId"])
    return None


def infer_retryable(error: ErrorResponse) -> bool:
    """ref §2.6: ``error.data.retryable|isRetryable``, else inferred from the text."""
    data = error.data
    if isinstance(data, dict):
        for key in ("retryable", "isRetryable"):
            if isinstance(data.get(key), bool):
                return bool(data[key])
    parts = [error.message or "", *_strings(data)]
    text = " ".join(parts).lower()
    if "request_too_large" in text:
        return False
    if any(word in text for word in _RETRYABLE_WORDS):
        return True
    return '"is_retryable":true' in text.replace(" ", "")


def _strings(value: Any, depth: int = 0, limit: int = 64) -> list[str]:
    """String leaves of ``value`` (bounded), for text-based inference."""
    if isinstance(value, str):
        return [value[:4000]]
    out: list[str] = []
    if depth < 4 and isinstance(value, (dict, list)):
        items = value.values() if isinstance(value, dict) else value
        for item in items:
            out.extend(_strings(item, depth + 1, limit))
            if len(out) >= limit:
                break
    return out[:limit]


def _is_absolute(path: str) -> bool:
    return posixpath.isabs(path) or bool(re.match(r"^(?:[A-Za-z]:[\\/]|\\\\)", path))


def _rpc_text(error: ErrorResponse) -> str:
    """ref §2.6: ``json-rpc id <n>: <error.message|code|'json-rpc error'>``."""
    text = error.message or (str(error.code) if error.code is not None else "json-rpc error")
    return f"json-rpc id {error.id}: {text}"


def _bounded(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- the session ---------------------------------------------------------------------------



class AcpDefFields(Protocol):
    """The ``AgentDef`` fields :meth:`AcpSession.from_def` reads (an ``AgentDef`` has them).

    Named here rather than importing the def type: sessions sit below the defs layer.
    """

    @property
    def id(self) -> str: ...
    @property
    def stream_format(self) -> str: ...
    @property
    def acp(self) -> AcpOptions: ...


class AcpSession:
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
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be >= 1, got {max_line_bytes!r}")
        if shutdown_grace_ms < 0 or cancel_grace_ms < 0:
            raise ValueError(
                f"grace periods must be >= 0, got shutdown_grace_ms={shutdown_grace_ms!r}, "
                f"cancel_grace_ms={cancel_grace_ms!r}"
            )
        #: What :meth:`continuation_session` needs to build this session's twin.
        self._options: dict[str, Any] = {
            "env_format": env_format,
            "stdio_mcp_removed_in_version": stdio_mcp_removed_in_version,
            "turn_end_completes_prompt": turn_end_completes_prompt,
            "stage_timeout_ms": stage_timeout_ms,
            "shutdown_grace_ms": shutdown_grace_ms,
            "cancel_grace_ms": cancel_grace_ms,
            "client_name": client_name,
            "client_version": client_version,
            "max_line_bytes": max_line_bytes,
            "model_unavailable_error_code": model_unavailable_error_code,
            "native_continue_runtime": native_continue_runtime,
        }
        self._model_unavailable_code = model_unavailable_error_code
        self._native_runtime = native_continue_runtime
        #: The evidence this session continues (it runs in the continuing process).
        self._continuing = continuing
        #: The evidence this session's interrupted prompt offers to a new process.
        self._continuation: ContinuationEvidence | None = None
        self._env_format = AcpEnvFormat(env_format)
        self._stdio_removed_in = stdio_mcp_removed_in_version
        self._turn_end_completes = turn_end_completes_prompt
        # ref §2.6: "<= 0 disables" the stage watchdog.
        enabled = stage_timeout_ms is not None and stage_timeout_ms > 0
        self._stage_timeout = stage_timeout_ms if enabled else None
        self._shutdown_grace = shutdown_grace_ms
        self._cancel_grace = cancel_grace_ms
        self._client_info = {"name": client_name, "version": client_version}
        self._max_line = max_line_bytes
        self._reader = JsonLineReader(max_line_bytes)
        self._mapper = UpdateMapper()
        self._core: SessionCore[_Phase, _Move] = SessionCore(
            MACHINE,
            _STATE,
            _COUNTERS,
            terminate_after_ms=shutdown_grace_ms,
            on_end=self._before_end,
        )
        self._request: SessionRequest | None = None
        self._mcp_servers: list[dict[str, Any]] = []
        self._now = 0.0
        self._start_ms = 0.0
        self._next_id = 1
        #: Our requests the agent has not answered yet: id -> method.
        self._outstanding: dict[RequestId, str] = {}
        self._stage: str | None = None
        self._stage_deadline: float | None = None
        self._emitted_deadline: float | None = None
        self._agent_info: dict[str, Any] | None = None
        self._agent_capabilities: dict[str, Any] = {}
        self._session_id: str | None = None
        self._durable_session_id: str | None = None
        self._model_config_id: str | None = None
        self._cancel_deadline: float | None = None

    @classmethod
    def from_def(cls, defn: AcpDefFields, **overrides: Any) -> AcpSession:
        """A session configured from an ``acp-json-rpc`` def's fields (rule ACP-DEF-001)."""
        if defn.stream_format != "acp-json-rpc":
            raise ValueError(
                f"agent def {defn.id!r} has stream_format {defn.stream_format!r}, "
                "not 'acp-json-rpc'"
            )
        acp = defn.acp
        options: dict[str, Any] = {
            "env_format": acp.mcp_env_format,
            "stdio_mcp_removed_in_version": acp.stdio_mcp_removed_in_version,
            "turn_end_completes_prompt": acp.turn_end_completes_prompt,
        }
        if acp.stage_timeout_ms is not None:
            options["stage_timeout_ms"] = acp.stage_timeout_ms
        if acp.model_unavailable_error_code is not None:
            options["model_unavailable_error_code"] = acp.model_unavailable_error_code
        if acp.native_continue_runtime is not None:
            options["native_continue_runtime"] = acp.native_continue_runtime
        options.update(overrides)
        return cls(**options)

    # -- properties -------------------------------------------------------------------

    @property
    def state(self) -> SessionState:
        return self._core.state

    @property
    def session_id(self) -> str | None:
        """The ACP ``sessionId`` (the ``session/load`` handle for a later turn)."""
        return self._session_id

    @property
    def durable_session_id(self) -> str | None:
        """ref §2.6 step 3: ``result.openCodeSessionId`` when given, else ``sessionId``."""
        return self._durable_session_id

    @property
    def counters(self) -> Mapping[str, int]:
        return self._core.counters

    @property
    def status(self) -> RunStatus | None:
        return self._core.status

    @property
    def error(self) -> SessionError | None:
        return self._core.error

    @property
    def agent_info(self) -> Mapping[str, Any] | None:
        """``initialize.result.agentInfo`` as the agent sent it."""
        return self._agent_info

    @property
    def agent_capabilities(self) -> Mapping[str, Any]:
        return self._agent_capabilities

    @property
    def continuing(self) -> ContinuationEvidence | None:
        """The evidence this session continues (``None``: it runs a prompt)."""
        return self._continuing

    @property
    def continuation(self) -> ContinuationEvidence | None:
        """Evidence that the interrupted prompt may be continued natively in a new process.

        Set only when every condition of seed 000 "AMR compaction continuation" held when
        the prompt failed: the extension was negotiated, the evidence is complete and names
        the durable session this process opened, every tool call seen reached a terminal
        status, no cancel was asked for, and this session is not itself the continuation.
        The run still *failed* as far as this session goes.
        """
        return self._continuation

    def continuation_session(self) -> AcpSession | None:
        """A fresh session, configured like this one, that continues :attr:`continuation`.

        The host starts it with the same request in a new process, once this process's
        tree is quiescent (seed 000: "waits for the previous process tree to become
        quiescent, loads the same durable session in a new process").
        """
        if self._continuation is None:
            return None
        return AcpSession(**self._options, continuing=self._continuation)

    # -- host calls -------------------------------------------------------------------

    def start(self, request: SessionRequest, now_ms: float) -> Actions:
        """Write ``initialize`` (ref §2.6 step 1; rule ACP-INIT-001).

        Raises :class:`AcpRequestError` before any state changes when the request
        cannot become valid ACP frames (relative cwd, malformed MCP server).
        """
        self._core.require_new()
        if not isinstance(request.cwd, str) or not _is_absolute(request.cwd):
            # Schema NewSessionRequest.cwd: "Must be an absolute path." A sans-IO
            # session cannot resolve a relative one (upstream: path.resolve).
            raise AcpRequestError(f"cwd must be an absolute path, got {request.cwd!r}")
        servers = self._convert_mcp_servers(request.mcp_servers)
        self._request = request
        self._mcp_servers = servers
        self._now = self._start_ms = now_ms
        self._core.move(_Move.START)
        actions = Actions()
        if self._continuing is not None:
            # The stream says where the second process of the run begins.
            cursor = self._continuing.cursor
            actions.events.append(
                Status(
                    label="continuation",
                    session_id=self._continuing.durable_session_id,
                    detail=(
                        f"{CONTINUE_METHOD} after the compaction interruption (user message "
                        f"{cursor.user_message_id}, assistant message "
                        f"{cursor.assistant_message_id})"
                    ),
                )
            )
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": {
                "fs": {"readTextFile": False, "writeTextFile": False},
                "terminal": False,
            },
            "clientInfo": dict(self._client_info),
        }
        self._send_request(actions, "initialize", params)
        return actions

    def receive(self, data: bytes, now_ms: float) -> Actions:
        self._core.check_receive()
        self._now = now_ms
        actions = Actions()
        for item in self._reader.feed(data):
            self._on_item(item, actions)
        return actions

    def end_of_output(self, now_ms: float) -> Actions:
        actions = Actions()
        if not self._core.close_input():
            return actions
        self._now = now_ms
        for item in self._reader.finish():
            self._on_item(item, actions)
        if self._core.phase is _Phase.CANCELLING:
            # The agent exited after our cancel: the cancellation is done.
            self._core.finish(actions, _Move.STOPPED, RunStatus.CANCELLED)
        elif not self._core.ended:
            # ref §2.6: "Child close before completion -> ACP session exited before
            # completion" (rule ACP-EXIT-001).
            self._core.fail(
                actions,
                _Move.FAIL,
                code="ACP_EXITED_EARLY",
                message="ACP session exited before completion",
                rule="ACP-EXIT-001",
            )
        return actions

    def cancel(self, now_ms: float) -> Actions:
        """ref §2.6 "Abort" / §10.1; wire §A.1.3 cancellation contract (ACP-CANCEL-001)."""
        self._core.require_started("cancel")
        actions = Actions()
        if self._core.ended or self._core.phase is _Phase.CANCELLING:
            return actions  # idempotent (rule ACP-CANCEL-003)
        self._now = now_ms
        # ref §2.6: "flush open tools as errors".
        actions.events.extend(self._mapper.flush(is_error=True))
        if self._session_id is not None:
            # wire §A.1.2: session/cancel is a notification (upstream: a request).
            self._send(
                actions,
                jsonrpc.notification("session/cancel", {"sessionId": self._session_id}),
            )
        if self._core.phase is _Phase.RUNNING:
            # wire §A.1.3: the agent MUST answer the prompt with stopReason "cancelled".
            self._core.move(_Move.CANCEL)
            self._cancel_deadline = now_ms + self._cancel_grace
            actions.controls.append(SetDeadline(self._cancel_deadline, _CANCEL_DEADLINE))
        else:
            # No prompt was written: nothing to wait for.
            self._core.finish(actions, _Move.CANCEL_BEFORE_PROMPT, RunStatus.CANCELLED)
        return actions

    def tick(self, now_ms: float) -> Actions:
        self._core.require_started("tick")
        self._now = now_ms
        actions = Actions()
        if self._core.phase is _Phase.CANCELLING:
            if self._cancel_deadline is not None and now_ms >= self._cancel_deadline:
                # Grace over without the cancelled stop reason (rule ACP-CANCEL-002).
                actions.events.extend(self._mapper.flush(is_error=True))
                self._core.finish(
                    actions, _Move.GRACE_OVER, RunStatus.CANCELLED, terminate_after_ms=0
                )
        elif (
            self._core.phase in (_Phase.HANDSHAKE, _Phase.RUNNING)
            and self._stage_deadline is not None
            and now_ms >= self._stage_deadline
        ):
            # ref §2.6 stage watchdog: "ACP <label> timed out after <ms>ms"
            # (rule ACP-TIMEOUT-001).
            stage = self._stage or "session"
            self._core.fail(
                actions,
                _Move.FAIL,
                code="ACP_STAGE_TIMEOUT",
                message=f"ACP {stage} timed out after {self._stage_timeout}ms",
                rule="ACP-TIMEOUT-001",
            )
        return actions

    # -- host input ---------------------------------------------------------------------

    def _convert_mcp_servers(self, servers: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """ref §2.6 "MCP env format" (rule ACP-MCP-001): stdio servers become
        ``{type, name, command, args, env}`` with ``env`` as ``[{name, value}]``
        (ARRAY) or ``{KEY: value}`` (MAP); other transports pass through unchanged."""
        out: list[dict[str, Any]] = []
        for index, server in enumerate(servers):
            if not isinstance(server, Mapping):
                raise AcpRequestError(f"mcp_servers[{index}] must be a mapping, got {server!r:.60}")
            kind = server.get("type") or "stdio"
            if kind != "stdio":
                out.append(dict(server))
                continue
            entry: dict[str, Any] = {
                "type": "stdio",
                "name": server.get("name"),
                "command": server.get("command"),
                "args": list(server.get("args") or []),
                "env": self._convert_env(server.get("env"), index),
            }
            if "_meta" in server:
                entry["_meta"] = server["_meta"]
            out.append(entry)
        probe = jsonrpc.request(0, "session/new", {"cwd": "/", "mcpServers": out})
        problems = validate_outgoing(probe, env_format=self._env_format)
        if problems:
            raise AcpRequestError(f"mcp_servers cannot be sent over ACP: {'; '.join(problems)}")
        return out

    def _convert_env(self, env: Any, index: int) -> Any:
        if self._env_format is AcpEnvFormat.MAP:
            if env is None:
                return {}
            if isinstance(env, Mapping):
                return dict(env)
            if isinstance(env, list):
                # ref §2.6: Object.fromEntries(arr.map(e => [e.name ?? '', e.value ?? '']))
                out: dict[str, Any] = {}
                for entry in env:
                    pair = entry if isinstance(entry, Mapping) else {}
                    name, value = pair.get("name"), pair.get("value")
                    if name is not None and not isinstance(name, str):
                        raise AcpRequestError(f"mcp_servers[{index}].env names must be strings")
                    out["" if name is None else name] = "" if value is None else value
                return out
        else:
            if env is None:
                return []
            if isinstance(env, list):
                return [dict(e) if isinstance(e, Mapping) else e for e in env]
            if isinstance(env, Mapping):
                return [{"name": k, "value": v} for k, v in env.items()]
        raise AcpRequestError(f"mcp_servers[{index}].env must be a list or a mapping")

    def _servers_for_agent(self, actions: Actions) -> list[dict[str, Any]]:
        """ref §2.6 step 2: withhold stdio servers from agents >= the def's version
        (rule ACP-MCP-002)."""
        floor = self._stdio_removed_in
        version = (self._agent_info or {}).get("version")
        if floor is None or not isinstance(version, str) or not version_at_least(version, floor):
            return list(self._mcp_servers)
        kept = [s for s in self._mcp_servers if s.get("type") != "stdio"]
        withheld = len(self._mcp_servers) - len(kept)
        if withheld:
            self._core.count("withheld_mcp_servers", withheld)
            actions.events.append(
                Status(
                    label="mcp_withheld",
                    detail=f"{withheld} stdio MCP server(s) withheld: agent {version} >= {floor}",
                )
            )
        return kept

    # -- writing ----------------------------------------------------------------------------

    def _send(
        self,
        actions: Actions,
        frame: dict[str, Any],
        answering: Mapping[RequestId, str] | None = None,
    ) -> None:
        # rule ACP-SCHEMA-001: a frame we build that the schema rejects is our bug.
        problems = validate_outgoing(frame, answering, env_format=self._env_format)
        if problems:
            raise LocalProtocolError(
                f"ACP session built an invalid {frame.get('method', 'response')} frame: "
                + "; ".join(problems)
            )
        actions.frames.append(jsonrpc.encode(frame))
        self._core.count("frames_sent")
        self._touch(actions)

    def _send_request(self, actions: Actions, method: str, params: dict[str, Any]) -> None:
        # ref §2.6: "ids are sequential integers starting at 1" (rule ACP-RPC-002).
        request_id = self._next_id
        self._next_id += 1
        self._outstanding[request_id] = method
        self._stage = method
        self._send(actions, jsonrpc.request(request_id, method, params))

    def _reply(self, actions: Actions, request: Request, result: Any) -> None:
        self._send(actions, jsonrpc.response(request.id, result), {request.id: request.method})

    def _touch(self, actions: Actions) -> None:
        """ref §2.6: the stage watchdog is reset on every write and every line read.

        A ``SetDeadline`` is emitted only when the deadline moves, so the controls
        do not depend on how stdout was chunked."""
        if self._stage_timeout is None or self._core.phase not in (
            _Phase.HANDSHAKE,
            _Phase.RUNNING,
        ):
            return
        self._stage_deadline = self._now + self._stage_timeout
        if self._stage_deadline != self._emitted_deadline:
            self._emitted_deadline = self._stage_deadline
            actions.controls.append(SetDeadline(self._stage_deadline, _STAGE_DEADLINE))

    # -- reading ----------------------------------------------------------------------------

    def _on_item(self, item: ReadItem, actions: Actions) -> None:
        if self._core.ended:
            self._core.count("lines_after_finish")
            return
        if isinstance(item, NonJsonLine):
            # ref §2.6 / §2.9: non-JSON stdout lines are ignored (rule ACP-FRAME-001).
            self._core.count("non_json_lines")
        elif isinstance(item, OversizeItem):
            self._core.fail(
                actions,
                _Move.FAIL,
                code="ACP_FRAME_TOO_LARGE",
                message=(
                    f"ACP agent wrote a {item.size}-byte line; the limit is {self._max_line} bytes"
                ),
                rule="ACP-FRAME-003",
            )
        else:
            self._on_json(item, actions)
        self._touch(actions)  # a no-op once the line finished the run

    def _on_json(self, item: JsonItem, actions: Actions) -> None:
        self._core.count("frames_received")
        if item.lines > 1:
            self._core.count("multiline_messages")
        # rule ACP-SCHEMA-002: validate, report, go on.
        problems = validate_incoming(item.value, self._outstanding)
        if problems:
            self._core.count("schema_violations")
            actions.events.append(Status(label="schema_violation", detail=describe(problems)))
        message = jsonrpc.classify(item.value)
        if isinstance(message, Invalid):
            self._core.count("invalid_messages")
            if message.answerable:
                # JSON-RPC 2.0: an unusable request gets "Invalid Request" with id null.
                self._send(
                    actions,
                    jsonrpc.error_response(None, jsonrpc.INVALID_REQUEST, "Invalid Request"),
                )
        elif isinstance(message, Request):
            self._on_agent_request(message, actions)
        elif isinstance(message, Notification):
            self._on_notification(message, actions)
        elif isinstance(message, Response):
            self._on_response(message, item, actions)
        else:
            self._on_error(message, actions)

    # -- agent -> client requests -------------------------------------------------------------

    def _on_agent_request(self, request: Request, actions: Actions) -> None:
        if request.method == "session/request_permission":
            self._on_permission(request, actions)
            return
        # wire §A.1.2: fs/* and terminal/* only when advertised; we advertise neither.
        # Every other request gets -32601 so none is left unanswered (ACP-RPC-003).
        self._core.count("unsupported_requests")
        self._send(
            actions,
            jsonrpc.error_response(
                request.id,
                jsonrpc.METHOD_NOT_FOUND,
                _bounded(f"Method not found: {request.method}", 200),
            ),
            {request.id: request.method},
        )

    def _on_permission(self, request: Request, actions: Actions) -> None:
        self._core.count("permission_requests")
        params = request.params if isinstance(request.params, dict) else {}
        if self._core.phase is _Phase.CANCELLING:
            # wire §A.1.3: after session/cancel the client MUST answer permission
            # requests with outcome "cancelled" (rule ACP-PERM-003).
            self._reply(actions, request, {"outcome": {"outcome": "cancelled"}})
            actions.events.append(Status(label="permission_request", detail="cancelled"))
            return
        chosen = choose_permission_option(params.get("options"))
        if chosen is None:
            # ref §2.6: "No acceptable option ... fatal unhandled ACP permission request"
            # (rule ACP-PERM-002); the request is still answered first.
            self._reply(actions, request, {"outcome": {"outcome": "cancelled"}})
            self._core.fail(
                actions,
                _Move.FAIL,
                code="ACP_PERMISSION_UNHANDLED",
                message=f"unhandled ACP permission request: {excerpt(params, 300)}",
                rule="ACP-PERM-002",
            )
            return
        self._reply(actions, request, {"outcome": {"outcome": "selected", "optionId": chosen}})
        actions.events.append(Status(label="permission_request", detail=chosen))

    # -- notifications -------------------------------------------------------------------------

    def _on_notification(self, note: Notification, actions: Actions) -> None:
        params = note.params
        if note.method != "session/update" or not isinstance(params, dict):
            self._core.count("ignored_notifications")
            return
        update = params.get("update")
        if not isinstance(update, dict):
            self._core.count("ignored_notifications")
            return
        if self._session_id is not None and params.get("sessionId") != self._session_id:
            self._core.count("foreign_updates")
            return
        raw_kind = update.get("sessionUpdate")
        kind = raw_kind if isinstance(raw_kind, str) else ""
        prompt_sent = self._core.took(_Move.PROMPT)
        if kind == "turn_end" and self._turn_end_completes and prompt_sent:
            # ref §2.6 step 5: completePromptOnTurnEnd (rule ACP-TURN-002).
            stop = update.get("stopReason")
            self._complete(actions, stop if isinstance(stop, str) else None, None)
            return
        if not prompt_sent and kind in _CONTENT_UPDATES:
            # wire §A.1.2: session/load replays history before it answers
            # (rule ACP-UPDATE-REPLAY-001).
            self._core.count("replayed_updates")
            return
        actions.events.extend(self._mapper.map(update, self._now))

    # -- responses -------------------------------------------------------------------------

    def _on_response(self, response: Response, item: JsonItem, actions: Actions) -> None:
        method = self._outstanding.pop(response.id, None)
        if method is None:
            self._core.count("unexpected_responses")
            return
        _ON_RESULT[method](self, response.result, item, actions)

    def _on_error(self, error: ErrorResponse, actions: Actions) -> None:
        method = self._outstanding.pop(error.id, None) if error.id is not None else None
        if method is None:
            # ref §2.6: "-32603 on an id != expectedId is ignored (cleanup noise)".
            if error.code == jsonrpc.INTERNAL_ERROR or self._core.phase is _Phase.CANCELLING:
                self._core.count("ignored_errors")
                return
        elif method in _MODEL_METHODS and self._model_unavailable_code is not None:
            # ref §2.6: AMR (``modelUnavailableErrorCode``) does not fall back to the
            # default model: the user must choose another (rule ACP-MODEL-003).
            self._core.fail(
                actions,
                _Move.FAIL,
                code=self._model_unavailable_code,
                message=_bounded(f"{_rpc_text(error)} (choose another model)"),
                rule="ACP-MODEL-003",
            )
            return
        elif method in _MODEL_METHODS and error.code in _RECOVERABLE_MODEL_CODES:
            # ref §2.6: a recoverable model error -> status{model:'default'}, go on
            # to the prompt (rule ACP-MODEL-002).
            actions.events.append(Status(label="model", model="default"))
            self._send_prompt(actions)
            return
        elif method in _TURN_METHODS and self._core.phase is _Phase.CANCELLING:
            # The agent answered our cancelled prompt with an error (e.g. -32800):
            # the user asked for the stop, so the run is cancelled, not failed. An
            # interrupted compaction is no exception (seed 000: "Cancellation ... stop").
            self._complete(actions, "cancelled", None, usage_event=False)
            return
        elif method in _TURN_METHODS and is_continuation_incomplete(
            error.message or "", error.data
        ):
            self._on_interrupted(error, method, actions)
            return
        elif method == "session/load" and self._continuing is not None:
            # seed 000: "missing ... history ... stop with failure"; never a new session
            # and never the prompt again, whatever ``retryable`` the agent claims.
            self._core.fail(
                actions,
                _Move.FAIL,
                code=CONTINUATION_HISTORY,
                message=_bounded(
                    f"cannot continue the interrupted turn: {_rpc_text(error)} "
                    f"(loading {self._continuing.durable_session_id!r})"
                ),
                rule="ACP-AMR-CONTINUE-003",
            )
            return
        # ref §2.6: "json-rpc id <n>: <error.message|code|'json-rpc error'>" (ACP-ERROR-001).
        self._core.fail(
            actions,
            _Move.FAIL,
            code=_FAILED,
            message=_bounded(_rpc_text(error)),
            rule="ACP-ERROR-001",
            retryable=infer_retryable(error),
        )

    def _on_interrupted(self, error: ErrorResponse, method: str, actions: Actions) -> None:
        """The prompt (or the continuation) ended in the compaction interruption.

        seed 000 "AMR compaction continuation (ACP extension v1)". Whatever happens next,
        this process's run failed with a non-retryable error: the interruption never
        authorizes reseeding or replaying the prompt. Only when every condition holds is
        :attr:`continuation` set, for the host to continue in a new process.
        """
        text = _rpc_text(error)
        if method == CONTINUE_METHOD:
            # seed 000: "At most one native continuation is allowed per physical Run".
            self._core.fail(
                actions,
                _Move.FAIL,
                code=CONTINUATION_EXHAUSTED,
                message=_bounded(
                    f"{text}; the run's one native continuation was interrupted again"
                ),
                rule="ACP-AMR-CONTINUE-004",
            )
            return
        runtime = self._native_runtime
        evidence = parse_continuation_evidence(error.data, runtime) if runtime else None
        refusal = self._continuation_refusal(evidence)
        if refusal is None:
            assert evidence is not None
            self._continuation = evidence
            self._core.count("continuations_offered")
            self._core.fail(
                actions,
                _Move.FAIL,
                code=CONTINUATION_INCOMPLETE,
                message=_bounded(
                    f"{text}; session {evidence.durable_session_id!r} can be continued natively"
                ),
                rule="ACP-AMR-CONTINUE-001",
            )
            return
        rule, why = refusal
        self._core.fail(
            actions,
            _Move.FAIL,
            code=CONTINUATION_INCOMPLETE,
            message=_bounded(f"{text}; not continued: {why}"),
            rule=rule,
        )

    def _continuation_refusal(
        self, evidence: ContinuationEvidence | None
    ) -> tuple[str, str] | None:
        """Why an interrupted prompt may not be continued: ``(rule, reason)``, or ``None``.

        Checked before the failure flushes open tools: seed 000 "The daemon independently
        checks its tool frames before closing unfinished rows".
        """
        if self._native_runtime is None:
            return (
                "ACP-AMR-CONTINUE-002",
                "the def takes no native continuation (acp.native_continue_runtime is unset)",
            )
        unnegotiated = self._unnegotiated()
        if unnegotiated is not None:
            return ("ACP-AMR-CONTINUE-002", f"initialize {unnegotiated}")
        if evidence is None:
            return (
                "ACP-AMR-CONTINUE-006",
                "no complete continuation evidence (legacy wording or partial data is "
                "classified, never continued)",
            )
        if evidence.durable_session_id != self._durable_session_id:
            return (
                "ACP-AMR-CONTINUE-003",
                f"the evidence names session {evidence.durable_session_id!r}, this run "
                f"opened {self._durable_session_id!r}",
            )
        unknown = self._mapper.unannounced_tool_ids
        if unknown:
            return (
                "ACP-AMR-CONTINUE-005",
                f"unknown tool call(s) {', '.join(sorted(unknown))[:200]} "
                "(no tool_call announced them)",
            )
        pending = self._mapper.open_tool_ids
        if pending:
            return (
                "ACP-AMR-CONTINUE-005",
                f"tool call(s) {', '.join(sorted(pending))[:200]} have no terminal status",
            )
        return None

    def _after_initialize(self, result: Any, item: JsonItem, actions: Actions) -> None:
        assert self._request is not None
        if not isinstance(result, dict):
            self._invalid_result(actions, "initialize", "result is not an object", item)
            return
        info = result.get("agentInfo")
        self._agent_info = dict(info) if isinstance(info, dict) else None
        caps = result.get("agentCapabilities")
        self._agent_capabilities = dict(caps) if isinstance(caps, dict) else {}
        servers = self._servers_for_agent(actions)
        if self._continuing is not None:
            self._load_for_continuation(actions, servers)
            return
        resume = self._request.resume_session_id
        if resume:
            if self._agent_capabilities.get("loadSession") is not True:
                # wire §A.1.2 capability gating: session/load only with
                # agentCapabilities.loadSession. Never start a fresh session instead
                # (rule ACP-SESSION-003).
                self._core.fail(
                    actions,
                    _Move.FAIL,
                    code="ACP_LOAD_UNSUPPORTED",
                    message=f"cannot resume ACP session {resume!r}: the agent does not advertise "
                    "agentCapabilities.loadSession",
                    rule="ACP-SESSION-003",
                )
                return
            # ref §2.6 step 2 (buildAcpSessionLoadParams): the same mcpServers as
            # session/new, because strict agents reject a bare load (ACP-SESSION-002).
            params = {"sessionId": resume, "cwd": self._request.cwd, "mcpServers": servers}
            self._send_request(actions, "session/load", params)
            return
        # ref §2.6 step 2 (rule ACP-SESSION-001).
        self._send_request(
            actions, "session/new", {"cwd": self._request.cwd, "mcpServers": servers}
        )

    def _load_for_continuation(self, actions: Actions, servers: list[dict[str, Any]]) -> None:
        """seed 000 "AMR compaction continuation": the new process loads the same durable
        session, only when it negotiated the extension (rule ACP-AMR-CONTINUE-002)."""
        assert self._request is not None and self._continuing is not None
        unnegotiated = self._unnegotiated()
        if unnegotiated is not None:
            self._core.fail(
                actions,
                _Move.FAIL,
                code=CONTINUATION_UNSUPPORTED,
                message=(
                    f"cannot continue the interrupted turn natively: the new process {unnegotiated}"
                ),
                rule="ACP-AMR-CONTINUE-002",
            )
            return
        durable = self._continuing.durable_session_id
        params = {"sessionId": durable, "cwd": self._request.cwd, "mcpServers": servers}
        self._send_request(actions, "session/load", params)

    def _unnegotiated(self) -> str | None:
        """Why ``initialize`` did not negotiate the extension, or ``None`` when it did."""
        caps = self._agent_capabilities
        if supports_native_continue(caps):
            return None
        version = excerpt(advertised_version(caps), 40)
        return (
            f"did not negotiate {CONTINUE_METHOD} version 1 (advertised: {version}, "
            f"loadSession: {caps.get('loadSession')!r})"
        )

    def _after_session(self, result: Any, item: JsonItem, actions: Actions) -> None:
        assert self._request is not None
        resumed = (
            self._continuing.durable_session_id
            if self._continuing is not None
            else self._request.resume_session_id
        )
        method = "session/load" if resumed else "session/new"
        if resumed:
            result = result if isinstance(result, dict) else {}
            # LoadSessionResponse carries no sessionId in the schema; an agent whose ACP
            # session id differs from the durable handle it loads (Vela: a per-process ACP
            # id over an OpenCode session) names the id its updates will carry.
            named = result.get("sessionId")
            session_id: Any = named if isinstance(named, str) and named else resumed
            if self._continuing is not None and not self._same_history(result, actions):
                return
        else:
            if not isinstance(result, dict):
                self._invalid_result(actions, method, "result is not an object", item)
                return
            session_id = result.get("sessionId")
            if not isinstance(session_id, str) or not session_id:
                # ref §2.6 step 3: "No sessionId -> fail invalid session/new response".
                self._invalid_result(actions, method, "no sessionId", item)
                return
        self._session_id = session_id
        durable = result.get("openCodeSessionId")
        # A load keeps the handle it loaded unless the agent names the durable one itself.
        handle = resumed or session_id
        self._durable_session_id = durable if isinstance(durable, str) and durable else handle
        option = self._model_option(result.get("configOptions"))
        self._model_config_id = option["id"] if option is not None else None
        current = self._current_model(result, option)
        if current is not None:
            actions.events.append(Status(label="model", model=current))
        model = (self._request.model or "").strip()
        if not model or model == "default":
            self._send_prompt(actions)
        elif self._model_config_id is not None:
            # ref §2.6 step 3 (rule ACP-MODEL-001).
            params = {"sessionId": session_id, "configId": self._model_config_id, "value": model}
            self._send_request(actions, "session/set_config_option", params)
        else:
            self._send_request(
                actions, "session/set_model", {"sessionId": session_id, "modelId": model}
            )

    @staticmethod
    def _model_option(options: Any) -> dict[str, Any] | None:
        if not isinstance(options, list):
            return None
        for option in options:
            if (
                isinstance(option, dict)
                and isinstance(option.get("id"), str)
                and option["id"].lower() in MODEL_CONFIG_IDS
            ):
                return option
        return None

    @staticmethod
    def _current_model(result: dict[str, Any], option: dict[str, Any] | None) -> str | None:
        # ref §2.6 step 3: "current model from models.currentModelId / configOptions".
        models = result.get("models")
        if isinstance(models, dict) and isinstance(models.get("currentModelId"), str):
            return str(models["currentModelId"])
        if option is not None and isinstance(option.get("currentValue"), str):
            return str(option["currentValue"])
        return None

    def _same_history(self, result: dict[str, Any], actions: Actions) -> bool:
        """seed 000: "missing or changed history ... stop with failure" (ACP-AMR-CONTINUE-003).

        The load must answer for the durable session the evidence named; an agent that
        reports another ``openCodeSessionId`` has changed history under us.
        """
        assert self._continuing is not None
        reported = result.get("openCodeSessionId")
        expected = self._continuing.durable_session_id
        if reported is None or reported == expected:
            return True
        self._core.fail(
            actions,
            _Move.FAIL,
            code=CONTINUATION_HISTORY,
            message=f"cannot continue the interrupted turn: session/load of {expected!r} answered "
            f"for session {excerpt(reported, 80)}",
            rule="ACP-AMR-CONTINUE-003",
        )
        return False

    def _after_model(self, result: Any, item: JsonItem, actions: Actions) -> None:
        assert self._request is not None and self._request.model is not None
        actions.events.append(Status(label="model", model=self._request.model.strip()))
        self._send_prompt(actions)

    def _after_prompt(self, result: Any, item: JsonItem, actions: Actions) -> None:
        # ref §2.6 step 5: the prompt result ends the turn (rule ACP-TURN-001).
        result = result if isinstance(result, dict) else {}
        stop = result.get("stopReason")
        self._complete(actions, stop if isinstance(stop, str) else None, result.get("usage"))

    def _invalid_result(self, actions: Actions, method: str, why: str, item: JsonItem) -> None:
        # ref §2.6 step 3: "fail invalid session/new response: <raw line>" (ACP-RESULT-001).
        self._core.fail(
            actions,
            _Move.FAIL,
            code="ACP_INVALID_RESPONSE",
            message=f"invalid {method} response: {why}",
            rule="ACP-RESULT-001",
            line=_bounded(item.text, 2000),
        )

    # -- the turn -------------------------------------------------------------------------

    def _send_prompt(self, actions: Actions) -> None:
        # ref §2.6 step 4 (rule ACP-PROMPT-001).
        assert self._request is not None and self._session_id is not None
        method = "session/prompt"
        params: dict[str, Any] = {
            "sessionId": self._session_id,
            "prompt": [{"type": "text", "text": self._request.prompt}],
        }
        if self._continuing is not None:
            # seed 000: "sends _session/continue with only that cursor" -- the prompt is
            # never sent again (rule ACP-AMR-CONTINUE-001).
            method = CONTINUE_METHOD
            params = {
                "sessionId": self._session_id,
                "continuation": self._continuing.cursor.to_wire(),
            }
        self._mapper.prompt_sent_ms = self._now
        self._core.move(_Move.PROMPT)
        self._send_request(actions, method, params)
        actions.events.append(
            Status(
                label="waiting_for_first_output",
                # The handle a later turn loads (ref §2.6 step 3: durableSessionId).
                session_id=self._durable_session_id,
                elapsed_ms=self._now - self._start_ms,
            )
        )

    def _complete(
        self,
        actions: Actions,
        stop_reason: str | None,
        usage: Any,
        *,
        usage_event: bool = True,
    ) -> None:
        """End of the turn: flush tools, usage, close stdin, terminate after the grace."""
        cancelled = self._core.phase is _Phase.CANCELLING
        actions.events.extend(self._mapper.flush(is_error=cancelled))
        if usage_event:
            actions.events.append(
                Usage(
                    usage=format_usage(usage),
                    duration_ms=self._now - self._mapper.prompt_sent_ms,
                    stop_reason=stop_reason,
                )
            )
        status = (
            RunStatus.CANCELLED if cancelled and stop_reason == "cancelled" else RunStatus.COMPLETED
        )
        self._core.finish(actions, _Move.TURN_END, status)

    def _before_end(self, actions: Actions, status: RunStatus) -> None:
        """A failure closes open tool rows as errors; no answer is awaited any more."""
        if status is RunStatus.FAILED:
            actions.events.extend(self._mapper.flush(is_error=True))
        self._outstanding.clear()


#: Which result moves the handshake on: method of our request -> handler.
_ON_RESULT: dict[str, Callable[[AcpSession, Any, JsonItem, Actions], None]] = {
    "initialize": AcpSession._after_initialize,
    "session/new": AcpSession._after_session,
    "session/load": AcpSession._after_session,
    "session/set_config_option": AcpSession._after_model,
    "session/set_model": AcpSession._after_model,
    "session/prompt": AcpSession._after_prompt,
    CONTINUE_METHOD: AcpSession._after_prompt,
}
