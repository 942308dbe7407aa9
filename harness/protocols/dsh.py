"""The dsh-profile-jsonl session: one run of ``dsh --profile open-design --stdio``.

A sans-IO state machine (seed 001 §6, §7, §9, §10; ref §2.8). The runtime
writes one JSON frame per stdout line; the host writes ``execute`` once the
runtime said ``ready``, and ``cancel`` when the user cancels.

Phases and every legal move between them are one table, :data:`MACHINE` (drawn in
``docs/design/sessions.md``); :class:`~harness.protocols.core.SessionCore` takes each move.
A run ends in one of three terminal phases: ``RESULT`` (a terminal result frame),
``ENDED`` (cancelled without one) or ``FAILED``.

Design: docs/design/protocols.md#harness.protocols.dsh
"""

from __future__ import annotations

import enum

from harness.events import (
    Error,
    Event,
    Status,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolResult,
    ToolUse,
    Usage,
)
from harness.protocols.base import (
    Actions,
    RunStatus,
    SessionRequest,
    SessionState,
    SetDeadline,
)
from harness.protocols.core import CoreViews, SessionCore
from harness.protocols.dsh_frames import (
    ContentFrame,
    FrameError,
    IdentityFrame,
    ProtocolErrorFrame,
    ResultFrame,
    RuntimeFrame,
    SessionFrame,
    ToolCallFrame,
    ToolResultFrame,
    UsageFrame,
    build_cancel,
    build_execute,
    encode_frame,
    load_json,
    parse_runtime_frame,
    tool_input,
)
from harness.protocols.machine import Machine
from harness.streams.base import js_trim
from harness.streams.decoder import DEFAULT_MAX_LINE_BYTES, Line, LineDecoder, OversizeLine

__all__ = [
    "DEFAULT_CANCEL_GRACE_MS",
    "DEFAULT_TERMINATE_GRACE_MS",
    "MACHINE",
    "PEER_MESSAGE_LIMIT",
    "DshProfileSession",
]

#: Seed 001 §10 step 2: "a short bounded grace period for result: cancelled".
DEFAULT_CANCEL_GRACE_MS = 2000
#: Seed 001 §10 steps 3-4: after closing stdin, how long before the tree is terminated.
DEFAULT_TERMINATE_GRACE_MS = 1000
#: A runtime's own error message is passed on bounded to this many characters.
PEER_MESSAGE_LIMIT = 200

_NAME = "DeepSeek Harness profile"
_PROTOCOL_ERROR = "DSH_PROFILE_PROTOCOL_ERROR"
_CANCEL_DEADLINE = "dsh-cancel-grace"


class _Phase(enum.Enum):
    NEW = "new"
    AWAIT_READY = "await-ready"
    RUNNING = "running"
    CANCELLING = "cancelling"
    #: Terminal: a result frame ended the run (later output breaks DSH-RESULT-ONCE-001).
    RESULT = "result"
    #: Terminal: cancelled without a result (before ``ready``, or the grace ran out).
    ENDED = "ended"
    #: Terminal: the first error; every later input is discarded.
    FAILED = "failed"


class _Move(enum.Enum):
    START = "start"
    #: ``ready`` validated; ``execute`` is written (DSH-READY-001).
    READY = "ready"
    CANCEL = "cancel"
    CANCEL_BEFORE_READY = "cancel-before-ready"
    RESULT = "result"
    GRACE_OVER = "grace-over"
    FAIL = "fail"


_LIVE = (_Phase.AWAIT_READY, _Phase.RUNNING, _Phase.CANCELLING)

#: Every legal move of a dsh profile run (MACHINE-MOVE-001).
MACHINE: Machine[_Phase, _Move] = Machine(
    name="dsh-profile-jsonl",
    initial=_Phase.NEW,
    moves={
        (_Phase.NEW, _Move.START): _Phase.AWAIT_READY,
        (_Phase.AWAIT_READY, _Move.READY): _Phase.RUNNING,
        (_Phase.AWAIT_READY, _Move.CANCEL_BEFORE_READY): _Phase.ENDED,
        (_Phase.RUNNING, _Move.CANCEL): _Phase.CANCELLING,
        (_Phase.RUNNING, _Move.RESULT): _Phase.RESULT,
        (_Phase.CANCELLING, _Move.RESULT): _Phase.RESULT,
        (_Phase.CANCELLING, _Move.GRACE_OVER): _Phase.ENDED,
        **{(phase, _Move.FAIL): _Phase.FAILED for phase in _LIVE},
    },
    terminal=frozenset({_Phase.RESULT, _Phase.ENDED, _Phase.FAILED}),
)

_STATE = {
    _Phase.NEW: SessionState.NEW,
    _Phase.AWAIT_READY: SessionState.HANDSHAKE,
    _Phase.RUNNING: SessionState.RUNNING,
    _Phase.CANCELLING: SessionState.CANCELLING,
    _Phase.RESULT: SessionState.FINISHED,
    _Phase.ENDED: SessionState.FINISHED,
    _Phase.FAILED: SessionState.FINISHED,
}


class DshProfileSession(CoreViews):
    """One run of the dsh profile protocol (implements ``TwoWaySession``)."""

    def __init__(
        self,
        *,
        max_frame_bytes: int = DEFAULT_MAX_LINE_BYTES,
        cancel_grace_ms: int = DEFAULT_CANCEL_GRACE_MS,
        terminate_grace_ms: int = DEFAULT_TERMINATE_GRACE_MS,
    ) -> None:
        if max_frame_bytes < 1:
            raise ValueError(f"max_frame_bytes must be >= 1, got {max_frame_bytes!r}")
        if cancel_grace_ms < 0 or terminate_grace_ms < 0:
            raise ValueError(
                f"grace periods must be >= 0, got cancel_grace_ms={cancel_grace_ms!r}, "
                f"terminate_grace_ms={terminate_grace_ms!r}"
            )
        self._max = max_frame_bytes
        self._cancel_grace = cancel_grace_ms
        # The session never shows frame text, so the decoder keeps only a tiny head.
        self._decoder = LineDecoder(max_frame_bytes, head_bytes=64)
        self._core: SessionCore[_Phase, _Move] = SessionCore(
            MACHINE,
            _STATE,
            ("frames", "ignored_foreign_frames", "frames_after_result", "lines_after_finish"),
            terminate_after_ms=terminate_grace_ms,
            on_end=self._close_thinking,
        )
        self._request: SessionRequest | None = None
        self._execute: bytes = b""
        self._line_no = 0
        #: Bytes received since the last ``\n`` (early FRAME_TOO_LARGE detection).
        self._pending = 0
        self._session_id: str | None = None
        self._identity: IdentityFrame | None = None
        self._thinking = False
        self._cancel_deadline: float | None = None

    # -- properties -----------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The validated session id; kept after cancellation (seed 001 §7)."""
        return self._session_id

    @property
    def execute_sent(self) -> bool:
        """True once ``execute`` was written (never before ``ready``)."""
        return self._core.took(_Move.READY)

    @property
    def plugin_version(self) -> str | None:
        """``ready.plugin_version`` (part of the resume compatibility key, seed 001 §7)."""
        return self._identity.plugin_version if self._identity else None

    @property
    def compatibility_generation(self) -> str | None:
        return self._identity.compatibility_generation if self._identity else None

    # -- host calls -------------------------------------------------------------

    def start(self, request: SessionRequest, now_ms: float) -> Actions:
        """Prepare ``execute``; write nothing until ``ready`` (seed 001 §6, DSH-READY-001).

        Raises :class:`~harness.protocols.dsh_frames.DshRequestError` (a bad
        model or cwd) before any state changes.
        """
        self._core.require_new()
        execute = encode_frame(build_execute(request))
        self._request = request
        self._execute = execute
        self._core.move(_Move.START)
        return Actions()

    def receive(self, data: bytes, now_ms: float) -> Actions:
        self._core.check_receive()
        actions = Actions()
        if self._failed() or not data:
            return actions
        newline = data.rfind(b"\n")
        self._pending = len(data) - newline - 1 if newline >= 0 else self._pending + len(data)
        for item in self._decoder.feed(data):
            self._on_item(item, actions)
            if self._failed():
                return actions
        if not self._core.ended and self._pending > self._max:
            # ref §2.8: "an un-terminated buffer > max → DSH_PROFILE_FRAME_TOO_LARGE".
            self._too_large(self._line_no + 1, actions)
        return actions

    def end_of_output(self, now_ms: float) -> Actions:
        actions = Actions()
        if not self._core.close_input() or self._failed():
            return actions
        for item in self._decoder.finish():
            self._on_item(item, actions)
        if not self._core.ended:
            # seed 001 §6: "Process exit, EOF, idle state, or text output alone never
            # means success." (DSH-RESULT-MISSING-001)
            self._core.fail(
                actions,
                _Move.FAIL,
                code="DSH_PROFILE_MISSING_RESULT",
                message=f"{_NAME} exited without a terminal result.",
                rule="DSH-RESULT-MISSING-001",
            )
        return actions

    def cancel(self, now_ms: float) -> Actions:
        """Seed 001 §10 step 1: send ``cancel`` for the active request, then wait."""
        self._core.require_started("cancel")
        actions = Actions()
        if self._core.phase is _Phase.AWAIT_READY:
            # ref §2.8 "Abort before ready → finish cancelled without sending execute";
            # no request is active yet, so there is nothing to send (DSH-CANCEL-BEFORE-READY-001).
            self._core.finish(actions, _Move.CANCEL_BEFORE_READY, RunStatus.CANCELLED)
            return actions
        if not self._core.allows(_Move.CANCEL):
            return actions  # already cancelling or finished: a no-op (DSH-CANCEL-AFTER-FINISH-001)
        assert self._request is not None
        self._cancel_deadline = now_ms + self._cancel_grace
        self._core.move(_Move.CANCEL)
        actions.frames.append(encode_frame(build_cancel(self._request.request_id)))
        actions.controls.append(SetDeadline(self._cancel_deadline, _CANCEL_DEADLINE))
        return actions

    def tick(self, now_ms: float) -> Actions:
        """Seed 001 §10 steps 3-5: grace over -> close stdin, terminate the tree."""
        self._core.require_started("tick")
        actions = Actions()
        if (
            self._core.phase is _Phase.CANCELLING
            and self._cancel_deadline is not None
            and now_ms >= self._cancel_deadline
        ):
            self._core.finish(actions, _Move.GRACE_OVER, RunStatus.CANCELLED)
        return actions

    # -- lines ------------------------------------------------------------------

    def _failed(self) -> bool:
        return self._core.phase is _Phase.FAILED

    def _on_item(self, item: Line | OversizeLine, actions: Actions) -> None:
        self._line_no += 1
        line_no = self._line_no
        if isinstance(item, Line) and not js_trim(item.text):
            return  # blank lines are not frames (ref §2.8)
        if self._core.ended:
            self._after_finish(actions)
            return
        if isinstance(item, OversizeLine):
            self._too_large(line_no, actions)
            return
        try:
            value = load_json(item.text)
        except RecursionError:
            self._invalid(line_no, "frame is nested too deeply", actions)
            return
        except ValueError:
            if item.unterminated:
                # Brief + ref §2.8 failIfIncomplete: EOF inside a frame (DSH-FRAME-TRUNCATED-001).
                self._core.fail(
                    actions,
                    _Move.FAIL,
                    code="DSH_PROFILE_TRUNCATED_FRAME",
                    message=f"{_NAME} ended with a truncated frame (stdout line {line_no}).",
                    rule="DSH-FRAME-TRUNCATED-001",
                )
            else:
                # seed 001 §6: "malformed frames fail the run deterministically".
                self._core.fail(
                    actions,
                    _Move.FAIL,
                    code="DSH_PROFILE_MALFORMED_FRAME",
                    message=f"{_NAME} emitted malformed JSON (stdout line {line_no}).",
                    rule="DSH-FRAME-MALFORMED-001",
                )
            return
        try:
            frame = parse_runtime_frame(value)
        except FrameError as exc:
            rule = "DSH-FRAME-INVALID-001"
            if exc.detail == "type is not supported by protocol generation 1":
                rule = "DSH-FRAME-TYPE-001"
            elif exc.detail.startswith("request_id "):
                rule = "DSH-REQID-002"
            self._invalid(line_no, exc.detail, actions, rule=rule)
            return
        self._core.count("frames")
        self._on_frame(frame, actions)

    def _after_finish(self, actions: Actions) -> None:
        if self._core.phase is not _Phase.RESULT:
            self._core.count("lines_after_finish")
            return
        # seed 001 §6: "Only one terminal result is accepted" (DSH-RESULT-ONCE-001).
        if self._core.count("frames_after_result") == 1:
            actions.events.append(
                Error(
                    code="DSH_PROFILE_FRAME_AFTER_RESULT",
                    message=(
                        f"{_NAME} wrote output after its terminal result [DSH-RESULT-ONCE-001]."
                    ),
                )
            )

    def _too_large(self, line_no: int, actions: Actions) -> None:
        self._core.fail(
            actions,
            _Move.FAIL,
            code="DSH_PROFILE_FRAME_TOO_LARGE",
            message=(
                f"{_NAME} emitted an oversized frame (stdout line {line_no}, "
                f"limit {self._max} bytes)."
            ),
            rule="DSH-FRAME-TOOLARGE-001",
        )

    def _invalid(
        self, line_no: int, detail: str, actions: Actions, *, rule: str = "DSH-FRAME-INVALID-001"
    ) -> None:
        self._core.fail(
            actions,
            _Move.FAIL,
            code="DSH_PROFILE_INVALID_FRAME",
            message=f"{_NAME} emitted an invalid frame: {detail} (stdout line {line_no}).",
            rule=rule,
        )

    # -- frames -----------------------------------------------------------------

    def _on_frame(self, frame: RuntimeFrame, actions: Actions) -> None:
        assert self._request is not None
        if self._core.phase is _Phase.AWAIT_READY:
            if not isinstance(frame, IdentityFrame) or frame.type != "ready":
                # seed 001 §6/§7: a run begins with "validate ready" (DSH-READY-001).
                self._core.fail(
                    actions,
                    _Move.FAIL,
                    code=_PROTOCOL_ERROR,
                    message=f"{_NAME} did not begin with a ready frame.",
                    rule="DSH-READY-001",
                )
                return
            self._identity = frame
            self._core.move(_Move.READY)
            actions.frames.append(self._execute)
            return
        if isinstance(frame, IdentityFrame):
            self._core.fail(
                actions,
                _Move.FAIL,
                code=_PROTOCOL_ERROR,
                message=f"{_NAME} emitted an unexpected identity frame.",
                rule="DSH-READY-003",
            )
            return
        if frame.request_id is not None and frame.request_id != self._request.request_id:
            # seed 001 §6: "Frames for another request are ignored and counted; they
            # cannot affect the current run." (DSH-REQID-001)
            self._core.count("ignored_foreign_frames")
            return
        if isinstance(frame, ProtocolErrorFrame):
            # ref §2.8: "`protocol_error` → fatal with its code" (DSH-PROTOCOL-ERROR-001).
            self._core.fail(
                actions,
                _Move.FAIL,
                code=frame.code,
                message=f"{_NAME} reported a protocol error.",
                rule="DSH-PROTOCOL-ERROR-001",
            )
        elif isinstance(frame, SessionFrame):
            self._on_session(frame, actions)
        elif isinstance(frame, ResultFrame):
            self._on_result(frame, actions)
        elif self._require_session(actions):
            actions.events.extend(self._content_events(frame))

    def _require_session(self, actions: Actions) -> bool:
        if self._session_id is not None:
            return True
        # seed 001 §6: "session must arrive before content/tool frames" (DSH-SESSION-ORDER-001).
        self._core.fail(
            actions,
            _Move.FAIL,
            code=_PROTOCOL_ERROR,
            message=f"{_NAME} emitted run content before establishing a session.",
            rule="DSH-SESSION-ORDER-001",
        )
        return False

    def _on_session(self, frame: SessionFrame, actions: Actions) -> None:
        assert self._request is not None
        resume = self._request.resume_session_id
        if self._session_id is not None:
            self._core.fail(
                actions,
                _Move.FAIL,
                code=_PROTOCOL_ERROR,
                message=f"{_NAME} emitted more than one session frame.",
                rule="DSH-SESSION-ONCE-001",
            )
            return
        if resume and (not frame.resumed or frame.session_id != resume):
            # seed 001 §6: "On resume, the returned session id must exactly equal the
            # requested id and resumed must be true." (DSH-RESUME-001)
            self._core.fail(
                actions,
                _Move.FAIL,
                code="DSH_PROFILE_RESUME_MISMATCH",
                message=f"{_NAME} resumed a different session.",
                rule="DSH-RESUME-001",
            )
            return
        if not resume and frame.resumed:
            self._core.fail(
                actions,
                _Move.FAIL,
                code=_PROTOCOL_ERROR,
                message=f"{_NAME} reported an unexpected resumed session.",
                rule="DSH-RESUME-003",
            )
            return
        self._session_id = frame.session_id
        # seed 001 §9 / ref §2.8: session -> status{label:'working', sessionId}.
        actions.events.append(Status(label="working", session_id=frame.session_id))

    def _content_events(
        self, frame: ContentFrame | ToolCallFrame | ToolResultFrame | UsageFrame
    ) -> list[Event]:
        # seed 001 §9 event normalization; ref §2.8 mapping.
        out: list[Event] = []
        if isinstance(frame, ContentFrame) and frame.type == "thinking":
            if not self._thinking:
                self._thinking = True
                out.append(ThinkingStart())
            if frame.content:
                out.append(ThinkingDelta(delta=frame.content))
            return out
        if self._thinking:
            # DSH-EVENT-THINKING-001: the thinking block ends where a frame of another
            # kind follows it, not at the end of the turn; later thinking opens a new one.
            self._thinking = False
            out.append(ThinkingEnd())
        out.extend(self._answer_events(frame))
        return out

    def _answer_events(
        self, frame: ContentFrame | ToolCallFrame | ToolResultFrame | UsageFrame
    ) -> list[Event]:
        """The events of a text, tool or usage frame (ref §2.8 mapping)."""
        if isinstance(frame, ContentFrame):
            return [TextDelta(delta=frame.content)] if frame.content else []
        if isinstance(frame, ToolCallFrame):
            return [ToolUse(id=frame.call_id, name=frame.name, input=tool_input(frame.arguments))]
        if isinstance(frame, ToolResultFrame):
            return [
                ToolResult(tool_use_id=frame.call_id, content=frame.output, is_error=frame.is_error)
            ]
        cache_read = frame.cache_read_tokens if frame.cache_read_tokens is not None else 0
        cache_write = frame.cache_write_tokens if frame.cache_write_tokens is not None else 0
        return [
            Usage(
                provider=frame.provider,
                model=frame.model,
                usage={
                    "input_tokens": frame.input_tokens,
                    "output_tokens": frame.output_tokens,
                    "cached_read_tokens": cache_read,
                    "cached_write_tokens": cache_write,
                    "total_tokens": frame.input_tokens + frame.output_tokens,
                },
            )
        ]

    def _on_result(self, frame: ResultFrame, actions: Actions) -> None:
        assert self._request is not None
        resume = self._request.resume_session_id
        if frame.resume_rejected:
            if not resume:
                self._core.fail(
                    actions,
                    _Move.FAIL,
                    code=_PROTOCOL_ERROR,
                    message=f"{_NAME} rejected a resume that was not requested.",
                    rule="DSH-RESUME-004",
                )
            elif frame.session_id != resume:
                self._core.fail(
                    actions,
                    _Move.FAIL,
                    code="DSH_PROFILE_RESUME_MISMATCH",
                    message=f"{_NAME} rejected a different session.",
                    rule="DSH-RESUME-001",
                )
            else:
                # seed 001 §6: "A missing or corrupt resume target returns a terminal
                # structured failure. It must not silently create a new session."
                # The runtime's own message is not repeated (it may name private paths).
                self._core.fail(
                    actions,
                    _Move.FAIL,
                    code="DSH_PROFILE_RESUME_REJECTED",
                    message=f"{_NAME} could not resume the saved session.",
                    rule="DSH-RESUME-002",
                )
            return
        if self._session_id is None:
            if frame.status == "failed":
                self._fail_with_peer_error(frame, actions)
                return
            if frame.status == "cancelled":
                # ref §2.8 (newer): a pre-session `cancelled` after our abort is a
                # legitimate cancellation; without our abort it is fatal.
                self._on_cancelled(actions)
                return
            self._require_session(actions)
            return
        if frame.session_id != self._session_id:
            self._core.fail(
                actions,
                _Move.FAIL,
                code="DSH_PROFILE_SESSION_MISMATCH",
                message=f"{_NAME} terminal result changed the session id.",
                rule="DSH-RESULT-SESSION-001",
            )
            return
        if frame.status == "failed":
            self._fail_with_peer_error(frame, actions)
            return
        if frame.status == "cancelled":
            self._on_cancelled(actions)
            return
        # seed 001 §9 "result: completed → clean turn completion" (DSH-EVENT-COMPLETE-001).
        self._core.finish(actions, _Move.RESULT, RunStatus.COMPLETED, terminate=False)

    def _on_cancelled(self, actions: Actions) -> None:
        if self._core.phase is not _Phase.CANCELLING:
            # ref §2.8 / §10.1: a cancelled result without our abort is fatal.
            self._core.fail(
                actions,
                _Move.FAIL,
                code=_PROTOCOL_ERROR,
                message=f"{_NAME} cancelled a run that the host did not cancel.",
                rule="DSH-RESULT-CANCELLED-001",
            )
            return
        # seed 001 §10 step 2-3: result: cancelled within the grace, then close stdin.
        self._core.finish(actions, _Move.RESULT, RunStatus.CANCELLED, terminate=False)

    def _fail_with_peer_error(self, frame: ResultFrame, actions: Actions) -> None:
        # seed 001 §9 "result: failed → structured run failure": the runtime's code,
        # and its message bounded (it is the runtime's diagnosis, not frame content).
        assert frame.error is not None
        message = frame.error.message
        if len(message) > PEER_MESSAGE_LIMIT:
            message = message[:PEER_MESSAGE_LIMIT] + "…"
        self._core.fail(
            actions,
            _Move.FAIL,
            code=frame.error.code,
            message=f"{_NAME} run failed: {message}",
            rule="DSH-RESULT-FAILED-001",
        )

    # -- endings ----------------------------------------------------------------

    def _close_thinking(self, actions: Actions, status: RunStatus) -> None:
        """A run that ends, without failing, inside a thinking block closes it first."""
        if self._thinking and status is not RunStatus.FAILED:
            self._thinking = False
            actions.events.append(ThinkingEnd())
