"""The codex-app-server session: one turn of ``codex app-server`` over stdio JSON-RPC.

A sans-IO state machine (seed 000 §5.3, §10; wire §A.3.2; real-clis "codex
(0.171.0)"). JSON-RPC 2.0 *without* the ``"jsonrpc"`` member on the wire
(wire §A.0, :data:`~harness.protocols.jsonrpc.CODEX_APP_SERVER`); we are the client.

Phases and every legal move between them are one table, :data:`MACHINE` (drawn in
``docs/design/sessions.md``); :class:`~harness.protocols.core.SessionCore` takes each move.
A cancel waits in ``INTERRUPT_PENDING`` until the turn id is known, then writes
``turn/interrupt`` once and waits in ``INTERRUPTING``.

Rules: APPSERVER-THINK-001.
Design: docs/design/protocols.md#harness.protocols.codex_app_server
"""

from __future__ import annotations

import enum
import ntpath
import posixpath
import re
from collections.abc import Callable, Sequence
from typing import Any

from harness import __version__
from harness.errors import HarnessError
from harness.events import Event, Raw, Status, TextDelta, ToolInFlight
from harness.protocols import jsonrpc
from harness.protocols.base import (
    Actions,
    RunStatus,
    SessionRequest,
    SessionState,
    SetDeadline,
)
from harness.protocols.core import CoreViews, SessionCore
from harness.protocols.jsonrpc import (
    CODEX_APP_SERVER,
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
from harness.protocols.options import choice_flag, clamp_codex_reasoning
from harness.streams.codex_items import (
    CodexEventMapper,
    ItemPhase,
    normalize_item,
    normalize_item_type,
    reconnect_progress,
)
from harness.streams.json_events import extract_error_message

__all__ = [
    "APPROVAL_POLICIES",
    "CLIENT_NAME",
    "DEFAULT_INTERRUPT_GRACE_MS",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_SHUTDOWN_GRACE_MS",
    "MACHINE",
    "PATCH_STREAMING_FEATURE",
    "PATCH_STREAMING_MIN_VERSION",
    "PEER_MESSAGE_LIMIT",
    "SANDBOX_MODES",
    "CodexAppServerRequestError",
    "CodexAppServerSession",
    "approval_result",
    "parse_server_version",
    "supports_patch_streaming",
]

#: ``clientInfo.name``; codex echoes it as the first token of ``initialize.userAgent``.
CLIENT_NAME = "adapter-harness"
#: codex exits about 250 ms after stdin EOF (upstream session.ts, codex-cli 0.149.1);
#: the tree is terminated if it is still alive four times later.
DEFAULT_SHUTDOWN_GRACE_MS = 1000
#: How long ``turn/interrupt`` may take to produce ``turn/completed``.
DEFAULT_INTERRUPT_GRACE_MS = 3000
#: 16 MiB, as the ACP session: a longer line cannot be acted on and a lost response hangs.
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
#: seed 000 §5.3: "a stable version >= **0.123.0**" first forwards patch previews.
PATCH_STREAMING_MIN_VERSION = (0, 123, 0)
#: seed 000 §5.3: the per-thread feature override that enables ``patchUpdated``.
PATCH_STREAMING_FEATURE = "features.apply_patch_streaming_events"
#: Schema ``SandboxMode``; seed 000 §10: codex defaults to ``workspace-write``.
SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
#: Schema ``AskForApproval`` (string form); seed 000 §10 headless posture: ``never``.
APPROVAL_POLICIES = ("untrusted", "on-request", "never")
#: A peer's own error message is passed on bounded to this many characters.
PEER_MESSAGE_LIMIT = 300

_INTERRUPT_DEADLINE = "codex-app-server-interrupt-grace"
_RPC_ERROR = "CODEX_APP_SERVER_RPC_ERROR"
_PROTOCOL_ERROR = "CODEX_APP_SERVER_PROTOCOL_ERROR"
_NAME = "codex app-server"

#: The first ``name/version`` token of ``initialize.userAgent``
#: (``adapter-harness/0.171.0 (Debian 12.0.0; x86_64) unknown (adapter-harness; 0.1.0)``).
_UA_VERSION = re.compile(r"^[^/\s]+/([^/\s]+)(?:\s|$)")
#: A stable release: three dot-separated numbers and nothing else (no ``-pre``, no ``+build``).
_STABLE_SEMVER = re.compile(r"^([0-9]+)\.([0-9]+)\.([0-9]+)$")

#: codexErrorInfo values that describe a transient server or transport condition.
_RETRYABLE_ERROR_INFO = frozenset(
    {
        "serverOverloaded",
        "internalServerError",
        "httpConnectionFailed",
        "responseStreamConnectionFailed",
        "responseStreamDisconnected",
        "responseTooManyFailedAttempts",
    }
)

#: File change kinds that get a preview row (as the mapper's Write/Edit naming).
_PREVIEW_TOOLS = {"add": "Write", "update": "Edit"}

#: Items that echo our own input back (the prompt); nothing to show.
_USER_ITEMS = frozenset({"userMessage"})


class _Phase(enum.Enum):
    NEW = "new"
    #: initialize, thread/start or thread/resume in flight.
    HANDSHAKE = "handshake"
    #: turn/start written; the turn runs until turn/completed.
    RUNNING = "running"
    #: Cancelled before the turn id was known: turn/interrupt waits for it.
    INTERRUPT_PENDING = "interrupt-pending"
    #: turn/interrupt written; turn/completed (or the grace) ends the turn.
    INTERRUPTING = "interrupting"
    FINISHED = "finished"


class _Move(enum.Enum):
    START = "start"
    TURN_START = "turn-start"
    CANCEL_BEFORE_TURN = "cancel-before-turn"
    CANCEL = "cancel"
    INTERRUPT = "interrupt"
    TURN_COMPLETED = "turn-completed"
    #: stdout closed after our interrupt: the cancel is complete.
    STOPPED = "stopped"
    GRACE_OVER = "grace-over"
    FAIL = "fail"


_CANCELLING = (_Phase.INTERRUPT_PENDING, _Phase.INTERRUPTING)
_TURN = (_Phase.RUNNING, *_CANCELLING)

#: Every legal move of a codex app-server run (MACHINE-MOVE-001).
MACHINE: Machine[_Phase, _Move] = Machine(
    name="codex-app-server",
    initial=_Phase.NEW,
    moves={
        (_Phase.NEW, _Move.START): _Phase.HANDSHAKE,
        (_Phase.HANDSHAKE, _Move.TURN_START): _Phase.RUNNING,
        (_Phase.HANDSHAKE, _Move.CANCEL_BEFORE_TURN): _Phase.FINISHED,
        (_Phase.RUNNING, _Move.CANCEL): _Phase.INTERRUPT_PENDING,
        (_Phase.INTERRUPT_PENDING, _Move.INTERRUPT): _Phase.INTERRUPTING,
        **{(phase, _Move.TURN_COMPLETED): _Phase.FINISHED for phase in _TURN},
        **{(phase, _Move.STOPPED): _Phase.FINISHED for phase in _CANCELLING},
        **{(phase, _Move.GRACE_OVER): _Phase.FINISHED for phase in _CANCELLING},
        **{(phase, _Move.FAIL): _Phase.FINISHED for phase in (_Phase.HANDSHAKE, *_TURN)},
    },
    terminal=frozenset({_Phase.FINISHED}),
)

_STATE = {
    _Phase.NEW: SessionState.NEW,
    _Phase.HANDSHAKE: SessionState.HANDSHAKE,
    _Phase.RUNNING: SessionState.RUNNING,
    _Phase.INTERRUPT_PENDING: SessionState.CANCELLING,
    _Phase.INTERRUPTING: SessionState.CANCELLING,
    _Phase.FINISHED: SessionState.FINISHED,
}
_COUNTERS = (
    "frames_sent",
    "frames_received",
    "non_json_lines",
    "invalid_messages",
    "unexpected_responses",
    "ignored_notifications",
    "foreign_notifications",
    "ignored_items",
    "approvals_answered",
    "unsupported_requests",
    "interrupt_errors",
    "patch_previews",
    "ignored_patch_previews",
    "unsettled_previews",
    "divergent_messages",
    "late_deltas",
    "withheld_mcp_servers",
    "lines_after_finish",
)


class CodexAppServerRequestError(HarnessError):
    """A :class:`SessionRequest` the session cannot turn into valid frames."""

    code = "CODEX_APP_SERVER_REQUEST_INVALID"


# -- pure helpers ---------------------------------------------------------------------------


def parse_server_version(user_agent: object) -> str | None:
    """The server version in ``initialize.userAgent``, or ``None``.

    OD reads "the server version from the first token of ``initialize.userAgent``";
    other versions in the string (the client's, in the trailing parentheses) are not
    the server's (upstream docs/testing/codex-patch-streaming.md, seed 000 §5.3).
    """
    if not isinstance(user_agent, str):
        return None
    match = _UA_VERSION.match(user_agent)
    return match.group(1) if match else None


def supports_patch_streaming(version: str | None) -> bool:
    """True iff ``version`` is a stable ``X.Y.Z`` >= 0.123.0 (APPSERVER-PATCH-001).

    seed 000 §5.3: "only when the running server's initialize response identifies a
    stable version >= 0.123.0 ... Older, unknown, and prerelease versions keep the
    existing completed-file behavior". ``0.124.0-alpha.1`` and ``0.123.0+build`` are
    not stable releases; ``None`` is unknown.
    """
    if version is None:
        return False
    match = _STABLE_SEMVER.match(version)
    if match is None:
        return False
    parts = (int(match.group(1)), int(match.group(2)), int(match.group(3)))
    return parts >= PATCH_STREAMING_MIN_VERSION


def approval_result(method: str, params: Any) -> dict[str, Any] | None:
    """The result that accepts an approval request, or ``None`` for any other request.

    seed 000 §10 (APPSERVER-REQ-001): the headless posture accepts. The decision is the
    most permissive one that stays within the session (schema
    ``CommandExecutionApprovalDecision``, ``FileChangeApprovalDecision``,
    ``ReviewDecision``, ``PermissionsRequestApprovalResponse``): amendments that
    persist an execpolicy or network rule beyond the run are never chosen.
    """
    if method in ("item/commandExecution/requestApproval", "item/fileChange/requestApproval"):
        return {"decision": "acceptForSession"}
    if method in ("execCommandApproval", "applyPatchApproval"):
        return {"decision": "approved_for_session"}
    if method == "item/permissions/requestApproval":
        requested = params.get("permissions") if isinstance(params, dict) else None
        granted: dict[str, Any] = {}
        if isinstance(requested, dict):
            for key in ("fileSystem", "network"):
                if isinstance(requested.get(key), dict):
                    granted[key] = requested[key]
        return {"permissions": granted, "scope": "session"}
    return None


def _bounded(text: str, limit: int = PEER_MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _kind_name(kind: Any) -> str | None:
    """A patch kind, whether app-server's ``{"type": "add"}`` or exec's ``"add"``."""
    if isinstance(kind, dict):
        kind = kind.get("type")
    return kind if isinstance(kind, str) else None


# -- the session ------------------------------------------------------------------------------


class CodexAppServerSession(CoreViews):
    """One run of ``codex app-server`` (implements ``TwoWaySession``)."""

    def __init__(
        self,
        *,
        shutdown_grace_ms: int = DEFAULT_SHUTDOWN_GRACE_MS,
        interrupt_grace_ms: int = DEFAULT_INTERRUPT_GRACE_MS,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be >= 1, got {max_line_bytes!r}")
        if shutdown_grace_ms < 0 or interrupt_grace_ms < 0:
            raise ValueError(
                f"grace periods must be >= 0, got shutdown_grace_ms={shutdown_grace_ms!r}, "
                f"interrupt_grace_ms={interrupt_grace_ms!r}"
            )
        self._shutdown_grace = shutdown_grace_ms
        self._interrupt_grace = interrupt_grace_ms
        self._max_line = max_line_bytes
        # The session never shows frame text in errors, so the reader keeps a small head.
        self._reader = JsonLineReader(max_line_bytes, head_bytes=4096)
        self._core: SessionCore[_Phase, _Move] = SessionCore(
            MACHINE,
            _STATE,
            _COUNTERS,
            terminate_after_ms=shutdown_grace_ms,
            on_end=self._drain_before_end,
        )
        self._request: SessionRequest | None = None
        self._next_id = 1
        self._outstanding: dict[RequestId, str] = {}
        self._user_agent: str | None = None
        self._server_version: str | None = None
        self._patch_streaming = False
        self._path = posixpath
        self._thread_id: str | None = None
        self._session_reported = False
        self._turn_id: str | None = None
        self._cancel_deadline: float | None = None
        self._usage: dict[str, Any] | None = None
        self._warnings = 0
        # Events the mapper emits land here and are moved into each call's Actions.
        self._emitted: list[Event] = []
        self._mapper = CodexEventMapper(self._emitted.append)
        # agentMessage item id -> text streamed so far; ids whose item completed.
        self._message_text: dict[str, str] = {}
        self._messages_done: set[str] = set()
        # reasoning key -> parts (summary parts, or raw content parts under "<id>:content").
        self._reasoning: dict[str, list[str]] = {}
        # fileChange item id -> {absolute path: preview row id}; items already settled.
        self._previews: dict[str, dict[str, str]] = {}
        self._settled_items: set[str] = set()

    # -- properties ---------------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The thread id (capture-style resume handle); kept after the run ends."""
        return self._thread_id

    @property
    def user_agent(self) -> str | None:
        """``initialize.userAgent`` as the server reported it."""
        return self._user_agent

    @property
    def server_version(self) -> str | None:
        """The version parsed from ``userAgent`` (:func:`parse_server_version`)."""
        return self._server_version

    @property
    def patch_streaming(self) -> bool:
        """True once the patch-preview feature override was sent for this thread."""
        return self._patch_streaming

    @property
    def turn_id(self) -> str | None:
        return self._turn_id

    # -- host calls -----------------------------------------------------------------------------

    def start(self, request: SessionRequest, now_ms: float) -> Actions:
        """Write ``initialize`` (wire §A.3.2: initialize, then the ``initialized`` notification).

        Raises :class:`CodexAppServerRequestError` for a request that cannot be sent
        (a relative cwd, an unknown sandbox or approval policy, inline images).
        """
        self._core.require_new()
        self._validate(request)
        self._request = request
        self._path = ntpath if _is_windows_path(request.cwd) else posixpath
        # seed 002 §8.1: codex has no external MCP injection; servers are counted, not sent.
        self._core.set_count("withheld_mcp_servers", len(request.mcp_servers))
        self._core.move(_Move.START)
        actions = Actions()
        client_info = {"name": CLIENT_NAME, "title": "adapter-harness", "version": __version__}
        self._send_request(actions, "initialize", {"clientInfo": client_info})
        return actions

    def receive(self, data: bytes, now_ms: float) -> Actions:
        self._core.check_receive()
        actions = Actions()
        for item in self._reader.feed(data):
            self._on_item(item, actions)
        return actions

    def end_of_output(self, now_ms: float) -> Actions:
        actions = Actions()
        if not self._core.close_input():
            return actions
        for item in self._reader.finish():
            self._on_item(item, actions)
        if self._core.phase in _CANCELLING:
            # The process went away after our interrupt: the cancel is complete.
            self._core.finish(actions, _Move.STOPPED, RunStatus.CANCELLED)
        elif not self._core.ended:
            # APPSERVER-EOF-001: only turn/completed ends a turn; EOF before it is a failure.
            self._core.fail(
                actions,
                _Move.FAIL,
                code="CODEX_APP_SERVER_EOF",
                message=f"{_NAME} closed stdout before turn/completed",
                rule="APPSERVER-EOF-001",
            )
        return actions

    def cancel(self, now_ms: float) -> Actions:
        """APPSERVER-CANCEL-001: ``turn/interrupt {threadId, turnId}``, then wait for the grace."""
        self._core.require_started("cancel")
        actions = Actions()
        if self._core.phase is _Phase.HANDSHAKE:
            # No turn was started, so there is nothing to interrupt (APPSERVER-CANCEL-002).
            self._core.finish(actions, _Move.CANCEL_BEFORE_TURN, RunStatus.CANCELLED)
            return actions
        if not self._core.allows(_Move.CANCEL):
            return actions  # already cancelling or finished: a no-op
        self._core.move(_Move.CANCEL)
        self._cancel_deadline = now_ms + self._interrupt_grace
        self._send_interrupt(actions)
        actions.controls.append(SetDeadline(self._cancel_deadline, _INTERRUPT_DEADLINE))
        return actions

    def tick(self, now_ms: float) -> Actions:
        """APPSERVER-CANCEL-001: grace over -> close stdin, terminate now, finish cancelled."""
        self._core.require_started("tick")
        actions = Actions()
        if (
            self._core.phase in _CANCELLING
            and self._cancel_deadline is not None
            and now_ms >= self._cancel_deadline
        ):
            self._core.finish(actions, _Move.GRACE_OVER, RunStatus.CANCELLED, terminate_after_ms=0)
        return actions

    # -- request building -------------------------------------------------------------------------

    @staticmethod
    def _validate(request: SessionRequest) -> None:
        if not request.cwd or not (posixpath.isabs(request.cwd) or ntpath.isabs(request.cwd)):
            raise CodexAppServerRequestError(
                f"cwd must be an absolute path, got {request.cwd!r}", rule="APPSERVER-START-001"
            )
        sandbox = request.extra.get("sandbox", "workspace-write")
        if sandbox not in SANDBOX_MODES:
            raise CodexAppServerRequestError(
                f"extra['sandbox'] must be one of {list(SANDBOX_MODES)}, got {sandbox!r}",
                rule="APPSERVER-START-001",
            )
        policy = request.extra.get("approval_policy", "never")
        if policy not in APPROVAL_POLICIES:
            raise CodexAppServerRequestError(
                f"extra['approval_policy'] must be one of {list(APPROVAL_POLICIES)}, "
                f"got {policy!r}",
                rule="APPSERVER-START-001",
            )
        images = request.extra.get("image_paths", ())
        if not isinstance(images, Sequence) or isinstance(images, str):
            raise CodexAppServerRequestError(
                f"extra['image_paths'] must be a list of paths, got {images!r:.80}",
                rule="APPSERVER-START-001",
            )
        if not all(isinstance(p, str) and p for p in images):
            raise CodexAppServerRequestError(
                "extra['image_paths'] must hold non-empty path strings",
                rule="APPSERVER-START-001",
            )
        if request.images:
            raise CodexAppServerRequestError(
                "inline images are not supported by codex app-server; pass file paths in "
                "extra['image_paths'] (sent as localImage inputs)",
                rule="APPSERVER-START-001",
            )

    def _thread_params(self) -> dict[str, Any]:
        """Shared by thread/start and thread/resume (real-clis codex driver; seed 000 §10)."""
        assert self._request is not None
        request = self._request
        sandbox = request.extra.get("sandbox", "workspace-write")
        params: dict[str, Any] = {
            "cwd": request.cwd,
            # seed 000 §10: headless posture; the exec transport implies "never" too.
            "approvalPolicy": request.extra.get("approval_policy", "never"),
            "sandbox": sandbox,
        }
        model = choice_flag(request.model)
        if model is not None:
            params["model"] = model
        config: dict[str, Any] = {}
        if sandbox == "workspace-write":
            # seed 000 §10: "Codex defaults to workspace-write with network access".
            config["sandbox_workspace_write.network_access"] = True
        if self._patch_streaming:
            # seed 000 §5.3 (APPSERVER-PATCH-001): per thread, only for stable >= 0.123.0.
            config[PATCH_STREAMING_FEATURE] = True
            # Our own override makes codex warn "Under-development features enabled";
            # the key its warning names silences that one notice (unknown keys are ignored).
            config["suppress_unstable_features_warning"] = True
        if config:
            params["config"] = config
        return params

    def _turn_params(self) -> dict[str, Any]:
        """real-clis: ``turn/start {threadId, input:[{type:"text", text}]}``."""
        assert self._request is not None and self._thread_id is not None
        request = self._request
        inputs: list[dict[str, Any]] = [{"type": "text", "text": request.prompt}]
        inputs.extend(
            {"type": "localImage", "path": path} for path in request.extra.get("image_paths", ())
        )
        params: dict[str, Any] = {"threadId": self._thread_id, "input": inputs}
        effort = choice_flag(request.reasoning)
        if effort is not None:
            # seed 002 §4.5: clamp to what the model family accepts, as on exec-json.
            params["effort"] = clamp_codex_reasoning(request.model, effort)
        tier = request.extra.get("service_tier")
        if isinstance(tier, str) and choice_flag(tier) is not None:
            params["serviceTier"] = tier
        return params

    # -- writing ----------------------------------------------------------------------------------

    def _send(self, actions: Actions, frame: dict[str, Any]) -> None:
        # wire §A.0: codex app-server omits "jsonrpc" on the wire (APPSERVER-WIRE-001).
        actions.frames.append(jsonrpc.encode(frame))
        self._core.count("frames_sent")

    def _send_request(self, actions: Actions, method: str, params: dict[str, Any]) -> None:
        request_id = self._next_id
        self._next_id += 1
        self._outstanding[request_id] = method
        self._send(actions, jsonrpc.request(request_id, method, params, CODEX_APP_SERVER))

    def _send_interrupt(self, actions: Actions) -> None:
        """wire §A.3.2: ``turn/interrupt {threadId, turnId}`` once both ids are known."""
        if self._core.phase is not _Phase.INTERRUPT_PENDING:
            return
        if self._thread_id is None or self._turn_id is None:
            return  # sent as soon as turn/start's result or turn/started names the turn
        self._core.move(_Move.INTERRUPT)
        self._send_request(
            actions, "turn/interrupt", {"threadId": self._thread_id, "turnId": self._turn_id}
        )

    # -- reading ----------------------------------------------------------------------------------

    def _on_item(self, item: ReadItem, actions: Actions) -> None:
        if self._core.ended:
            self._core.count("lines_after_finish")
            return
        if isinstance(item, NonJsonLine):
            # design principle 3: nothing is dropped; a wrapper's noise is reported raw.
            self._core.count("non_json_lines")
            self._emitted.append(Raw(line=item.text))
        elif isinstance(item, OversizeItem):
            self._core.fail(
                actions,
                _Move.FAIL,
                code="CODEX_APP_SERVER_FRAME_TOO_LARGE",
                message=(
                    f"{_NAME} wrote a {item.size}-byte line; the limit is {self._max_line} bytes"
                ),
                rule="APPSERVER-FRAME-001",
            )
        else:
            try:
                self._on_json(item, actions)
            except RecursionError:
                # A value nested deeper than the mapper can stringify is not a message we use.
                self._core.count("invalid_messages")
                self._emitted.append(Raw(line=item.text))
        self._drain(actions)

    def _drain(self, actions: Actions) -> None:
        if self._emitted:
            actions.events.extend(self._emitted)
            self._emitted.clear()

    def _on_json(self, item: JsonItem, actions: Actions) -> None:
        self._core.count("frames_received")
        message = jsonrpc.classify(item.value)
        if isinstance(message, Invalid):
            # Not a JSON-RPC message (or a request whose id cannot be answered: codex's
            # schema has no null id for an error reply). Reported, never fatal.
            self._core.count("invalid_messages")
            self._emitted.append(Raw(line=item.text))
        elif isinstance(message, Request):
            self._on_server_request(message, actions)
        elif isinstance(message, Notification):
            self._on_notification(message, item.text, actions)
        elif isinstance(message, Response):
            self._on_response(message, actions)
        else:
            self._on_error_response(message, actions)

    # -- server -> client requests ---------------------------------------------------------------

    def _on_server_request(self, request: Request, actions: Actions) -> None:
        """APPSERVER-REQ-001/002: answer every request; never leave the server waiting."""
        result = approval_result(request.method, request.params)
        if result is not None:
            self._core.count("approvals_answered")
            self._send(actions, jsonrpc.response(request.id, result, CODEX_APP_SERVER))
            return
        self._core.count("unsupported_requests")
        self._send(
            actions,
            jsonrpc.error_response(
                request.id,
                jsonrpc.METHOD_NOT_FOUND,
                f"unsupported request: {request.method}",
                dialect=CODEX_APP_SERVER,
            ),
        )

    # -- responses --------------------------------------------------------------------------------

    def _on_response(self, response: Response, actions: Actions) -> None:
        method = self._outstanding.pop(response.id, None)
        if method is None:
            self._core.count("unexpected_responses")
            return
        handler = _ON_RESULT.get(method)
        if handler is not None:
            handler(self, response.result, actions)

    def _on_error_response(self, error: ErrorResponse, actions: Actions) -> None:
        method = self._outstanding.pop(error.id, None) if error.id is not None else None
        code = f" ({error.code})" if error.code is not None else ""
        detail = _bounded(error.message or "no message")
        if method is None:
            if error.id is None:
                # The server could not tell which frame it rejected: whatever we were
                # waiting for will never be answered, so the turn cannot go on.
                self._core.fail(
                    actions,
                    _Move.FAIL,
                    code=_RPC_ERROR,
                    message=f"{_NAME} rejected a frame{code}: {detail}",
                    rule="APPSERVER-RPC-ERROR-001",
                )
            else:
                self._core.count("unexpected_responses")
            return
        if method == "turn/interrupt":
            # The turn may already be over; turn/completed or the grace decides.
            self._core.count("interrupt_errors")
            return
        # APPSERVER-RPC-ERROR-001: a refused request of ours ends the run, typed by method.
        self._core.fail(
            actions,
            _Move.FAIL,
            code="CODEX_APP_SERVER_RESUME_FAILED" if method == "thread/resume" else _RPC_ERROR,
            message=f"{_NAME} {method} failed{code}: {detail}",
            rule="APPSERVER-RPC-ERROR-001",
        )

    def _on_initialize(self, result: Any, actions: Actions) -> None:
        """wire §A.3.2 lifecycle: answer with ``initialized``, then open the thread."""
        if self._core.phase is not _Phase.HANDSHAKE:
            return
        user_agent = _dict(result).get("userAgent")
        self._user_agent = user_agent if isinstance(user_agent, str) else None
        self._server_version = parse_server_version(self._user_agent)
        self._patch_streaming = supports_patch_streaming(self._server_version)
        self._send(actions, {"method": "initialized"})
        assert self._request is not None
        params = self._thread_params()
        resume = self._request.resume_session_id
        if resume:
            # seed 000 §5.3 (APPSERVER-RESUME-001): follow-up turns use thread/resume.
            # excludeTurns: the history is not needed, and codex 0.171.0 deprecates
            # "full-history hydration" (a deprecationNotice) when it is omitted.
            params = {**params, "threadId": resume, "excludeTurns": True}
            self._send_request(actions, "thread/resume", params)
        else:
            # seed 000 §5.3 (APPSERVER-START-001): new sessions use thread/start.
            self._send_request(actions, "thread/start", params)

    def _on_thread(self, result: Any, actions: Actions) -> None:
        if self._core.phase is not _Phase.HANDSHAKE:
            return
        assert self._request is not None
        thread_id = _str(_dict(_dict(result).get("thread")).get("id"))
        if thread_id is None:
            self._core.fail(
                actions,
                _Move.FAIL,
                code=_PROTOCOL_ERROR,
                message=f"{_NAME} returned no thread id",
                rule="APPSERVER-SESSION-001",
            )
            return
        resume = self._request.resume_session_id
        if resume and thread_id != resume:
            # A different thread is a new conversation, never a silent replacement.
            self._core.fail(
                actions,
                _Move.FAIL,
                code="CODEX_APP_SERVER_RESUME_MISMATCH",
                message=f"{_NAME} resumed a different thread than the one requested",
                rule="APPSERVER-RESUME-001",
            )
            return
        self._report_session(thread_id)
        # seed 000 §5.3: the prompt travels in turn/start.
        self._core.move(_Move.TURN_START)
        self._send_request(actions, "turn/start", self._turn_params())

    def _report_session(self, thread_id: str) -> None:
        """APPSERVER-SESSION-001: the thread id is the session id, reported once.

        thread/resume answers with the thread but sends no ``thread/started``, so the
        id is taken from the result (capture-style resume, CODEX-SESSION-001)."""
        if self._thread_id is None:
            self._thread_id = thread_id
        if not self._session_reported:
            self._session_reported = True
            self._mapper.thread_started(thread_id)

    def _on_turn_started_result(self, result: Any, actions: Actions) -> None:
        self._learn_turn(_dict(_dict(result).get("turn")).get("id"), actions)

    def _on_interrupt_result(self, result: Any, actions: Actions) -> None:
        """turn/interrupt acknowledged; ``turn/completed`` (interrupted) is what ends it."""

    def _learn_turn(self, turn_id: Any, actions: Actions) -> None:
        if self._turn_id is None and isinstance(turn_id, str) and turn_id:
            self._turn_id = turn_id
            self._send_interrupt(actions)

    # -- notifications ----------------------------------------------------------------------------

    def _on_notification(self, message: Notification, line: str, actions: Actions) -> None:
        handler = _ON_NOTIFICATION.get(message.method)
        if handler is None:
            self._core.count("ignored_notifications")
            return
        params = _dict(message.params)
        if self._foreign(params):
            self._core.count("foreign_notifications")
            return
        handler(self, params, line, actions)

    def _foreign(self, params: dict[str, Any]) -> bool:
        """A notification for another thread or another turn than ours."""
        thread_id = params.get("threadId")
        if (
            self._thread_id is not None
            and isinstance(thread_id, str)
            and thread_id != self._thread_id
        ):
            return True
        turn_id = params.get("turnId")
        return self._turn_id is not None and isinstance(turn_id, str) and turn_id != self._turn_id

    def _on_thread_started(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        thread_id = _str(_dict(params.get("thread")).get("id"))
        if thread_id is None or (self._thread_id is not None and thread_id != self._thread_id):
            self._core.count("foreign_notifications")
            return
        self._report_session(thread_id)

    def _on_turn_started(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        turn = _dict(params.get("turn"))
        if self._turn_id is not None and turn.get("id") not in (None, self._turn_id):
            self._core.count("foreign_notifications")
            return
        self._learn_turn(turn.get("id"), actions)
        # CODEX-TURN-001 via the shared mapper: status thinking, paragraph state reset.
        self._mapper.turn_started()

    def _on_item_started(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        self._on_thread_item("started", params, line, actions)

    def _on_item_completed(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        self._on_thread_item("completed", params, line, actions)

    def _on_thread_item(
        self, phase: ItemPhase, params: dict[str, Any], line: str, actions: Actions
    ) -> None:
        item = params.get("item")
        if not isinstance(item, dict):
            self._core.count("invalid_messages")
            self._emitted.append(Raw(line=line))
            return
        kind = item.get("type")
        # ROBUST-WRONGTYPE-001: a non-string type never reaches a set lookup (it maps to raw).
        if isinstance(kind, str) and kind in _USER_ITEMS:
            self._core.count("ignored_items")  # our own prompt, echoed back
            return
        if kind == "agentMessage":
            if phase == "completed":
                self._agent_message_completed(item)
            return
        if kind == "reasoning":
            if phase == "completed":
                self._reasoning_completed(item)
            return
        if kind == "fileChange" and self._patch_streaming:
            self._file_change_by_file(phase, item, line, actions)
            return
        # APPSERVER-MAP-001: the exec-json mapping, after the camelCase -> snake_case step.
        if not self._mapper.item(phase, normalize_item(item)):
            self._emitted.append(Raw(line=line))

    # -- text -------------------------------------------------------------------------------------

    def _on_message_delta(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        item_id = params.get("itemId")
        delta = params.get("delta")
        if not isinstance(item_id, str) or not isinstance(delta, str) or not delta:
            return
        if item_id in self._messages_done:
            self._core.count("late_deltas")
            return
        self._message_piece(item_id, delta)

    def _message_piece(self, item_id: str, piece: str) -> None:
        """Emit one piece of an agent message through the mapper (see APPSERVER-TEXT-001)."""
        continuation = item_id in self._message_text
        self._message_text[item_id] = self._message_text.get(item_id, "") + piece
        mark = len(self._emitted)
        self._mapper.item("completed", {"type": "agent_message", "id": item_id, "text": piece})
        if continuation and len(self._emitted) == mark + 1:
            emitted = self._emitted[mark]
            if isinstance(emitted, TextDelta) and emitted.delta == "\n" + piece:
                # CODEX-PARA-001 separates messages; two pieces of one message join as is.
                self._emitted[mark] = TextDelta(delta=piece)

    def _agent_message_completed(self, item: dict[str, Any]) -> None:
        item_id = item.get("id")
        text = item.get("text")
        if not isinstance(item_id, str) or not isinstance(text, str):
            return
        if item_id in self._messages_done:
            return
        self._messages_done.add(item_id)
        streamed = self._message_text.get(item_id, "")
        if not text.startswith(streamed):
            self._core.count("divergent_messages")
            return
        if len(text) > len(streamed):
            # APPSERVER-TEXT-001: only what the deltas did not already show.
            self._message_piece(item_id, text[len(streamed) :])

    # -- reasoning --------------------------------------------------------------------------------

    def _on_summary_delta(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        self._reasoning_delta(params, "summaryIndex", "")

    def _on_reasoning_text_delta(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        self._reasoning_delta(params, "contentIndex", ":content")

    def _reasoning_delta(self, params: dict[str, Any], index_key: str, suffix: str) -> None:
        item_id = params.get("itemId")
        delta = params.get("delta")
        index = params.get(index_key, 0)
        if not isinstance(item_id, str) or not isinstance(delta, str) or not delta:
            return
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < 1024:
            return
        parts = self._reasoning.setdefault(item_id + suffix, [])
        while len(parts) <= index:
            parts.append("")
        parts[index] += delta
        self._flush_reasoning(item_id + suffix)

    def _on_summary_part_added(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        item_id = params.get("itemId")
        index = params.get("summaryIndex")
        if not isinstance(item_id, str) or not isinstance(index, int) or isinstance(index, bool):
            return
        if not 0 <= index < 1024:
            return
        parts = self._reasoning.setdefault(item_id, [])
        while len(parts) <= index:
            parts.append("")

    def _reasoning_completed(self, item: dict[str, Any]) -> None:
        item_id = item.get("id")
        if not isinstance(item_id, str):
            return
        for key, field in ((item_id, "summary"), (item_id + ":content", "content")):
            value = item.get(field)
            final = [p for p in value if isinstance(p, str)] if isinstance(value, list) else []
            known = self._reasoning.get(key, [])
            # The completed item is authoritative unless it is shorter than the stream.
            if len("\n\n".join(final)) >= len("\n\n".join(known)):
                self._reasoning[key] = final
            self._flush_reasoning(key)

    def _flush_reasoning(self, key: str) -> None:
        text = "\n\n".join(self._reasoning.get(key, []))
        if text:
            # CODEX-REASONING-001 via the shared mapper: only the unseen suffix is emitted.
            self._mapper.item("updated", {"type": "reasoning", "id": key, "text": text})

    # -- file changes -----------------------------------------------------------------------------

    def _on_patch_updated(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        item_id = params.get("itemId")
        if not self._patch_streaming:
            # Without our override the completed item is keyed by index; a path-keyed
            # preview could not be settled by it, so it is not rendered.
            self._core.count("ignored_patch_previews")
            return
        if not isinstance(item_id, str) or not item_id:
            return
        self._core.count("patch_previews")
        self._preview(item_id, params.get("changes"), actions)

    def _preview(self, item_id: str, changes: Any, actions: Actions) -> None:
        """seed 000 §5.3 (APPSERVER-PATCH-002): one row per file as soon as its path is known."""
        if item_id in self._settled_items or not isinstance(changes, list):
            return
        rows = self._previews.setdefault(item_id, {})
        for change in changes:
            if not isinstance(change, dict):
                continue
            path = _str(change.get("path"))
            kind = _kind_name(change.get("kind"))
            name = _PREVIEW_TOOLS.get(kind) if kind is not None else None
            if path is None or name is None:
                continue
            absolute = self._absolute(path)
            if absolute in rows:
                continue
            rows[absolute] = _row_id(item_id, absolute)
            self._emitted.append(
                ToolInFlight(id=rows[absolute], name=name, input={"file_path": absolute})
            )

    def _file_change_by_file(
        self, phase: ItemPhase, item: dict[str, Any], line: str, actions: Actions
    ) -> None:
        item_id = _str(item.get("id"))
        changes = item.get("changes")
        if item_id is None or not isinstance(changes, list):
            if not self._mapper.item(phase, normalize_item(item)):
                self._emitted.append(Raw(line=line))
            return
        if phase != "completed":
            # The started snapshot is one more preview (rows stay early until completion).
            self._preview(item_id, changes, actions)
            return
        if item_id in self._settled_items:
            return
        self._settled_items.add(item_id)
        rows = self._previews.pop(item_id, {})
        claimed = True
        settled: set[str] = set()
        for change in changes:
            path = _str(change.get("path")) if isinstance(change, dict) else None
            if path is None:
                claimed = False
                continue
            absolute = self._absolute(path)
            settled.add(absolute)
            one = {**item, "id": _file_item_id(item_id, absolute), "changes": [change]}
            # seed 000 §5.3 (APPSERVER-PATCH-003): the final event settles the SAME row,
            # through the shared mapper (ToolUse with od_diff_stat, then ToolResult).
            claimed = self._mapper.item("completed", normalize_item(one)) and claimed
        self._core.count("unsettled_previews", len(set(rows) - settled))
        if not claimed:
            # As exec-json: a change we cannot name honestly leaves the line raw.
            self._emitted.append(Raw(line=line))

    def _absolute(self, path: str) -> str:
        """A change path as codex reports it in the completed item (absolute, normalized)."""
        assert self._request is not None
        joined = self._path.join(self._request.cwd, path)
        return self._path.normpath(joined)

    # -- usage, plan, warnings, errors ------------------------------------------------------------

    def _on_token_usage(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        if self._turn_id is None:
            # thread/resume replays the previous turn's usage before our turn is known
            # (codex 0.171.0); usage of our turn only follows the turn/start result.
            self._core.count("foreign_notifications")
            return
        total = _dict(params.get("tokenUsage")).get("total")
        if isinstance(total, dict):
            # APPSERVER-USAGE-001: the thread-cumulative total; the last one wins.
            self._usage = total

    def _on_plan_updated(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        plan = params.get("plan")
        if not isinstance(plan, list):
            return
        items = [
            {
                "text": step.get("step"),
                "status": normalize_item_type(step["status"])
                if isinstance(step.get("status"), str)
                else None,
            }
            for step in plan
            if isinstance(step, dict)
        ]
        turn = self._turn_id or "turn"
        # CODEX-TODO-001 via the mapper: a plan is a full TodoWrite snapshot, one id per turn.
        self._mapper.item("updated", {"type": "todo_list", "id": f"{turn}#plan", "items": items})

    def _on_warning(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        message = _str(params.get("message")) or _str(params.get("summary"))
        if message is None:
            return
        self._warnings += 1
        # CODEX-WARNING-001 via the mapper: exec-json delivers notices as error items.
        self._mapper.item(
            "completed", {"type": "error", "id": f"warning-{self._warnings}", "message": message}
        )

    def _on_error(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        error = _dict(params.get("error"))
        message = _str(error.get("message")) or "Codex error"
        if params.get("willRetry") is True:
            details = _str(error.get("additionalDetails"))
            notice = f"{message} ({details})" if details else message
            if reconnect_progress(notice) is not None:
                self._mapper.error({"message": notice})  # CODEX-RECONNECT-001
            else:
                self._emitted.append(Status(label="agent_reconnecting"))
            return
        # APPSERVER-ERROR-001 / CODEX-ERROR-ONCE-001: the first error only.
        self._mapper.error({"message": message})

    def _on_turn_completed(self, params: dict[str, Any], line: str, actions: Actions) -> None:
        if not self._core.allows(_Move.TURN_COMPLETED):
            self._core.count("foreign_notifications")
            return
        turn = _dict(params.get("turn"))
        turn_id = turn.get("id")
        if self._turn_id is not None and turn_id != self._turn_id:
            self._core.count("foreign_notifications")
            return
        status = turn.get("status")
        self._core.count("unsettled_previews", sum(len(rows) for rows in self._previews.values()))
        self._previews.clear()
        if self._usage is not None:
            usage = {
                "input_tokens": self._usage.get("inputTokens"),
                "output_tokens": self._usage.get("outputTokens"),
                "reasoning_output_tokens": self._usage.get("reasoningOutputTokens"),
                "cached_input_tokens": self._usage.get("cachedInputTokens"),
            }
            # CODEX-USAGE-001 via the mapper: the same Usage shape as exec-json.
            self._mapper.turn_completed(usage)
        if status == "completed":
            # APPSERVER-TURN-001: done; the server stays alive, so close and terminate.
            self._core.finish(actions, _Move.TURN_COMPLETED, RunStatus.COMPLETED)
        elif status == "interrupted":
            # APPSERVER-TURN-002: turn/interrupt (ours or another client's) -> cancelled.
            self._core.finish(actions, _Move.TURN_COMPLETED, RunStatus.CANCELLED)
        elif status == "failed":
            self._turn_failed(turn, actions)
        else:
            self._core.fail(
                actions,
                _Move.FAIL,
                code=_PROTOCOL_ERROR,
                message=f"{_NAME} sent turn/completed with status {status!r:.40}",
                rule="APPSERVER-TURN-003",
            )

    def _turn_failed(self, turn: dict[str, Any], actions: Actions) -> None:
        """APPSERVER-TURN-003: a failed turn fails the run with the turn's error."""
        error = turn.get("error")
        self._mapper.turn_failed({"error": error})
        message = extract_error_message(error, "Codex turn failed")
        info = _dict(error).get("codexErrorInfo")
        kind = info if isinstance(info, str) else next(iter(_dict(info)), None)
        self._drain(actions)
        self._core.fail(
            actions,
            _Move.FAIL,
            code="CODEX_TURN_FAILED",
            message=f"codex turn failed: {_bounded(message)}",
            rule="APPSERVER-TURN-003",
            retryable=kind in _RETRYABLE_ERROR_INFO,
        )

    # -- endings ----------------------------------------------------------------------------------

    def _drain_before_end(self, actions: Actions, status: RunStatus) -> None:
        """Events the mapper still holds go out before the run's end."""
        self._drain(actions)


def _is_windows_path(path: str) -> bool:
    return not posixpath.isabs(path) and ntpath.isabs(path)


def _file_item_id(item_id: str, path: str) -> str:
    return f"{item_id}#{path}"


def _row_id(item_id: str, path: str) -> str:
    """The id the mapper gives the only change of item ``<item id>#<path>`` (``#0``).

    CODEX-FILECHANGE-001: file-change tool ids are ``<item id>#<index>``.
    """
    return f"{_file_item_id(item_id, path)}#0"


_ResultHandler = Callable[[CodexAppServerSession, Any, Actions], None]
_NotificationHandler = Callable[[CodexAppServerSession, dict[str, Any], str, Actions], None]

#: Our request method -> what its result does (the handshake table).
_ON_RESULT: dict[str, _ResultHandler] = {
    "initialize": CodexAppServerSession._on_initialize,
    "thread/start": CodexAppServerSession._on_thread,
    "thread/resume": CodexAppServerSession._on_thread,
    "turn/start": CodexAppServerSession._on_turn_started_result,
    "turn/interrupt": CodexAppServerSession._on_interrupt_result,
}

#: Server notification method -> handler (wire §A.3.2 "Notifications"); others are counted.
_ON_NOTIFICATION: dict[str, _NotificationHandler] = {
    "thread/started": CodexAppServerSession._on_thread_started,
    "turn/started": CodexAppServerSession._on_turn_started,
    "item/started": CodexAppServerSession._on_item_started,
    "item/completed": CodexAppServerSession._on_item_completed,
    "item/agentMessage/delta": CodexAppServerSession._on_message_delta,
    "item/reasoning/summaryTextDelta": CodexAppServerSession._on_summary_delta,
    "item/reasoning/summaryPartAdded": CodexAppServerSession._on_summary_part_added,
    "item/reasoning/textDelta": CodexAppServerSession._on_reasoning_text_delta,
    "item/fileChange/patchUpdated": CodexAppServerSession._on_patch_updated,
    "thread/tokenUsage/updated": CodexAppServerSession._on_token_usage,
    "turn/plan/updated": CodexAppServerSession._on_plan_updated,
    "turn/completed": CodexAppServerSession._on_turn_completed,
    "error": CodexAppServerSession._on_error,
    "warning": CodexAppServerSession._on_warning,
    "configWarning": CodexAppServerSession._on_warning,
    "deprecationNotice": CodexAppServerSession._on_warning,
}
