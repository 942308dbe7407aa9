"""The pi-rpc session: one run of ``pi --mode rpc`` (seed 000 §5.10; ref §2.7; wire §A.2).

Design: docs/design/protocols.md#harness.protocols.pi_rpc
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from harness.events import (
    Error,
    Raw,
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
    LocalProtocolError,
    RunStatus,
    SessionRequest,
    SessionState,
    SetDeadline,
)
from harness.protocols.core import CoreViews, SessionCore
from harness.protocols.machine import Machine
from harness.streams.base import js_trim
from harness.streams.decoder import Line, LineDecoder, OversizeLine, dumps_json, loads_json

__all__ = [
    "CANCEL_DEADLINE",
    "DEFAULT_GRACEFUL_SHUTDOWN_MS",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_RETRY_WINDOW_MS",
    "ERROR_RAW_LIMIT",
    "FIRE_AND_FORGET_METHODS",
    "MACHINE",
    "RETRY_DEADLINE",
    "PiRpcSession",
    "changed_session_file",
]

#: ref §2.7: ``Number(PI_GRACEFUL_SHUTDOWN_MS) || 5000``.
DEFAULT_GRACEFUL_SHUTDOWN_MS = 5000
#: How long an ``agent_end`` after an error turn waits for pi's auto-retry or compaction.
DEFAULT_RETRY_WINDOW_MS = 1000
#: See "Line cap" in the module docstring.
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
#: ``Error.raw`` keeps at most this many characters of the line (ref §1.1 64 KiB raw budget).
ERROR_RAW_LIMIT = 64 * 1024
#: ref §2.7 / seed 000 §5.10 "Extension UI": methods that expect no response.
FIRE_AND_FORGET_METHODS = frozenset(
    {"setStatus", "setWidget", "notify", "setTitle", "set_editor_text"}
)
CANCEL_DEADLINE = "pi-cancel-grace"
RETRY_DEADLINE = "pi-retry-window"

#: Events pi's RPC docs list that map to no normalized event (consumed and counted).
_CONSUMED_EVENTS = frozenset(
    {
        "message_start",
        "message_end",  # ref §2.7: usage comes only from turn_end (no double count)
        "tool_execution_update",  # partialResult is accumulated, not a delta (wire §A.2)
        "queue_update",
    }
)
#: ``assistantMessageEvent.type`` values that map to nothing (wire §A.2).
_CONSUMED_ASSISTANT_EVENTS = frozenset(
    {"start", "text_start", "text_end", "toolcall_start", "toolcall_delta", "toolcall_end", "done"}
)
#: pi 0.58 named these ``auto_compaction_*`` (wire §A.2); 0.73 says ``compaction_*``.
_COMPACTION_START = frozenset({"compaction_start", "auto_compaction_start"})
_COMPACTION_END = frozenset({"compaction_end", "auto_compaction_end"})
#: JSON.stringify puts ``type`` first, so an oversize agent_end is recognisable by its head.
_AGENT_END_HEAD = re.compile(r'^\s*\{\s*"type"\s*:\s*"agent_end"')

_NOT_JSON = object()


class _Phase(enum.Enum):
    NEW = "new"
    #: ``cancel()`` before ``start()``: the run ended before anything was written.
    NEVER_STARTED = "never-started"
    AWAIT_PARENT = "await-parent"
    RUNNING = "running"
    SETTLING = "settling"
    CONTINUING = "continuing"
    CANCELLING = "cancelling"
    FINISHED = "finished"


class _Move(enum.Enum):
    START = "start"
    START_RESUME = "start-resume"
    PARENT_LINKED = "parent-linked"
    #: ``agent_end`` after a turn that stopped with ``"error"`` (PI-END-003).
    SETTLE = "settle"
    #: ``auto_retry_start`` / ``compaction_start`` inside the retry window.
    RETRY = "retry"
    #: ``agent_start`` of the new attempt.
    NEW_ATTEMPT = "new-attempt"
    CANCEL = "cancel"
    CANCEL_UNSTARTED = "cancel-unstarted"
    #: ``agent_end`` reached (or the retry window closed): completed unless an error counts.
    END = "end"
    #: The abort was acknowledged (abort response, ``agent_end`` or stdout closed).
    CANCELLED = "cancelled"
    GRACE_OVER = "grace-over"
    FAIL = "fail"


_LIVE = (_Phase.AWAIT_PARENT, _Phase.RUNNING, _Phase.SETTLING, _Phase.CONTINUING)
_TURN = (_Phase.RUNNING, _Phase.SETTLING, _Phase.CONTINUING)

#: Every legal move of a pi-rpc run (MACHINE-MOVE-001).
MACHINE: Machine[_Phase, _Move] = Machine(
    name="pi-rpc",
    initial=_Phase.NEW,
    moves={
        (_Phase.NEW, _Move.START): _Phase.RUNNING,
        (_Phase.NEW, _Move.START_RESUME): _Phase.AWAIT_PARENT,
        (_Phase.NEW, _Move.CANCEL_UNSTARTED): _Phase.NEVER_STARTED,
        (_Phase.AWAIT_PARENT, _Move.PARENT_LINKED): _Phase.RUNNING,
        (_Phase.RUNNING, _Move.SETTLE): _Phase.SETTLING,
        (_Phase.SETTLING, _Move.RETRY): _Phase.CONTINUING,
        (_Phase.CONTINUING, _Move.NEW_ATTEMPT): _Phase.RUNNING,
        **{(phase, _Move.CANCEL): _Phase.CANCELLING for phase in _LIVE},
        **{(phase, _Move.END): _Phase.FINISHED for phase in _TURN},
        **{(phase, _Move.FAIL): _Phase.FINISHED for phase in _LIVE},
        (_Phase.CANCELLING, _Move.CANCELLED): _Phase.FINISHED,
        (_Phase.CANCELLING, _Move.GRACE_OVER): _Phase.FINISHED,
    },
    terminal=frozenset({_Phase.NEVER_STARTED, _Phase.FINISHED}),
)

_STATE = {
    _Phase.NEW: SessionState.NEW,
    _Phase.NEVER_STARTED: SessionState.FINISHED,
    _Phase.AWAIT_PARENT: SessionState.HANDSHAKE,
    _Phase.RUNNING: SessionState.RUNNING,
    _Phase.SETTLING: SessionState.RUNNING,
    _Phase.CONTINUING: SessionState.RUNNING,
    _Phase.CANCELLING: SessionState.CANCELLING,
    _Phase.FINISHED: SessionState.FINISHED,
}
_COUNTERS = (
    "lines",
    "raw_lines",
    "unknown_events",
    "oversize_lines",
    "consumed_events",
    "responses_ignored",
    "extension_ui_requests",
    "extension_ui_replies",
    "extension_ui_fire_and_forget",
    "extension_ui_without_id",
    "parent_session_cancelled",
    "agent_end_before_prompt",
    "events_after_cancel",
    "lines_after_finish",
)


def changed_session_file(
    before: Mapping[str, tuple[int, float]], after: Mapping[str, tuple[int, float]]
) -> str | None:
    """The one ``*.jsonl`` session file that is new or changed, else ``None`` (PI-RESUME-003).

    Seed 000 §5.10 "Resume": "the transport captures the single changed
    ``.pi/sessions/*.jsonl`` path ...; ambiguous concurrent changes are not associated with
    the conversation". ``before``/``after`` map a path to ``(size, mtime)`` as the IO shell
    saw them before the prompt and after the run. A file is changed when it is new or its
    ``(size, mtime)`` differs (upstream requires a *later* mtime; the seed says "changed").
    Deleted files and other extensions do not count.
    """
    changed = [
        path
        for path, stat in after.items()
        if path.endswith(".jsonl") and (path not in before or tuple(before[path]) != tuple(stat))
    ]
    return changed[0] if len(changed) == 1 else None


def _encode(obj: Mapping[str, Any]) -> bytes:
    """One compact JSON line (wire §A.2 framing: LF-terminated, no embedded newline)."""
    # A lone surrogate is escaped (JSON.parse accepts \\udXXX); a non-finite number is null.
    return (dumps_json(obj) + "\n").encode("utf-8")


def _with_id(rid: int, body: bytes) -> bytes:
    """``{"id": rid, ...body}`` for a non-empty object ``body``: ids are allocated when a
    command is sent (so they stay dense), bodies are encoded earlier (``start`` validates the
    prompt once)."""
    return b'{"id":%d,' % rid + body[1:]


def _same_id(value: Any, expected: int | None) -> bool:
    return expected is not None and type(value) is int and value == expected


def _text(value: Any) -> str | None:
    """A non-empty string, else ``None`` (JS ``typeof x === 'string' && x.length > 0``)."""
    return value if isinstance(value, str) and value else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        if not math.isfinite(value):
            return None
    except OverflowError:  # JSON.parse reads an integer beyond the double range as Infinity
        return None
    return value


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _peer_error(value: Any) -> str:
    """``String(raw.error ?? 'unknown')`` (ref §2.7), JSON for non-strings."""
    if value is None:
        return "unknown"
    return value if isinstance(value, str) else _compact(value)


def _tool_text(result: Any) -> str:
    """ref §2.7: text parts joined with ``\\n``, other parts as JSON; a string as is."""
    content = result.get("content") if isinstance(result, dict) else None
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text":
            text = part.get("text")
            parts.append("" if text is None else text if isinstance(text, str) else _compact(text))
        else:
            parts.append(_compact(part))
    return "\n".join(parts)


def _bounded(line: str) -> str:
    return line if len(line) <= ERROR_RAW_LIMIT else line[:ERROR_RAW_LIMIT]


class PiRpcSession(CoreViews):
    """One run of pi's RPC mode (implements ``TwoWaySession``)."""

    def __init__(
        self,
        *,
        graceful_shutdown_ms: int = DEFAULT_GRACEFUL_SHUTDOWN_MS,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        retry_window_ms: int = DEFAULT_RETRY_WINDOW_MS,
    ) -> None:
        if graceful_shutdown_ms < 0 or retry_window_ms < 0:
            raise ValueError(
                f"graceful_shutdown_ms and retry_window_ms must be >= 0, got "
                f"{graceful_shutdown_ms!r} and {retry_window_ms!r}"
            )
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be >= 1, got {max_line_bytes!r}")
        self._grace = graceful_shutdown_ms
        self._retry_window = retry_window_ms
        self._decoder = LineDecoder(max_line_bytes)
        self._core: SessionCore[_Phase, _Move] = SessionCore(
            MACHINE,
            _STATE,
            _COUNTERS,
            terminate_after_ms=graceful_shutdown_ms,
            unstarted=frozenset({_Phase.NEVER_STARTED}),
        )
        self._next_id = 1
        self._parent_id: int | None = None
        self._prompt_id: int | None = None
        self._abort_id: int | None = None
        self._prompt_body = b""
        self._start_ms = 0.0
        self._deadline: float | None = None
        self._streaming = False
        self._last_stop_reason: str | None = None
        #: Error messages with the attempt they belong to (``None``: the whole run).
        self._errors: list[tuple[str, int | None]] = []
        self._attempt = 0
        self._session_file: str | None = None

    # -- properties -------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The captured session file (see :meth:`capture_session_file`), else ``None``."""
        return self._session_file

    def capture_session_file(
        self, before: Mapping[str, tuple[int, float]], after: Mapping[str, tuple[int, float]]
    ) -> str | None:
        """Record the run's session file from the shell's two snapshots; the first capture wins.

        The IO shell snapshots the session directory before ``start`` and after the run (ref
        §2.7 captures at ``agent_end``, on abort and on failure); see
        :func:`changed_session_file`. The result becomes :attr:`session_id`, the value a later
        turn passes as ``SessionRequest.resume_session_id``.
        """
        if self._session_file is None:
            self._session_file = changed_session_file(before, after)
        return self._session_file

    # -- host calls ---------------------------------------------------------------

    def start(self, request: SessionRequest, now_ms: float) -> Actions:
        """Status ``initializing`` now; then ``prompt``, or ``new_session`` first on resume."""
        self._core.require_new()
        body: dict[str, Any] = {"type": "prompt", "message": request.prompt}
        images: list[dict[str, Any]] = []
        for index, image in enumerate(request.images):
            if not isinstance(image, Mapping):
                raise LocalProtocolError(f"request.images[{index}] must be a mapping: {image!r}")
            images.append(dict(image))
        if images:  # seed 000 §5.10 "Images"; ref §2.7: ``images`` only when non-empty
            body["images"] = images
        try:
            self._prompt_body = _encode(body)
        except (TypeError, ValueError) as exc:
            raise LocalProtocolError(f"prompt command is not JSON-serializable: {exc}") from exc
        self._start_ms = now_ms
        actions = Actions()
        # ref §2.7 "On attach: immediately status{label:'initializing', model: model || null}".
        actions.events.append(Status(label="initializing", model=request.model or None))
        if request.resume_session_id:
            # seed 000 §5.10 "Resume" / ref §2.7: new_session{parentSession} first; the prompt
            # waits for its success response (PI-RESUME-001).
            self._parent_id = self._take_id()
            actions.frames.append(
                _with_id(
                    self._parent_id,
                    _encode({"type": "new_session", "parentSession": request.resume_session_id}),
                )
            )
            self._core.move(_Move.START_RESUME)
        else:
            self._send_prompt(actions, _Move.START)
        return actions

    def receive(self, data: bytes, now_ms: float) -> Actions:
        self._core.check_receive()
        actions = Actions()
        if data:
            for item in self._decoder.feed(data):
                self._on_item(item, now_ms, actions)
        return actions

    def end_of_output(self, now_ms: float) -> Actions:
        actions = Actions()
        if not self._core.close_input():
            return actions
        for item in self._decoder.finish():
            self._on_item(item, now_ms, actions)
        phase = self._core.phase
        if phase is _Phase.SETTLING:
            self._finish_run(actions)
        elif phase is _Phase.CANCELLING:
            self._core.finish(actions, _Move.CANCELLED, RunStatus.CANCELLED)
        elif not self._core.ended:
            # Brief + seed 000 §5.10: pi streams events "until agent_end"; stdout closing
            # first is a failed run, whatever was streamed (PI-END-004).
            self._core.fail(
                actions,
                _Move.FAIL,
                message="pi exited before agent_end",
                code="PI_EXITED_BEFORE_AGENT_END",
                rule="PI-END-004",
            )
        return actions

    def cancel(self, now_ms: float) -> Actions:
        """ref §2.7, §10.1: send ``abort`` once, wait ``graceful_shutdown_ms`` (PI-CANCEL-*)."""
        actions = Actions()
        if self._core.phase is _Phase.NEW:
            # Nothing was spawned into a conversation yet: just the verdict (PI-CANCEL-003).
            self._core.finish(
                actions,
                _Move.CANCEL_UNSTARTED,
                RunStatus.CANCELLED,
                close_stdin=False,
                terminate=False,
            )
            return actions
        if not self._core.allows(_Move.CANCEL):
            return actions  # cancelling or finished: idempotent (PI-CANCEL-003)
        self._abort_id = self._take_id()
        self._core.move(_Move.CANCEL)
        self._deadline = now_ms + self._grace
        actions.frames.append(_with_id(self._abort_id, _encode({"type": "abort"})))
        actions.controls.append(SetDeadline(self._deadline, CANCEL_DEADLINE))
        return actions

    def tick(self, now_ms: float) -> Actions:
        self._core.require_started("tick")
        actions = Actions()
        if self._deadline is None or now_ms < self._deadline:
            return actions
        if self._core.phase is _Phase.CANCELLING:
            # PI-CANCEL-002: no acknowledgement within the grace -> terminate now.
            self._core.finish(actions, _Move.GRACE_OVER, RunStatus.CANCELLED, terminate_after_ms=0)
        elif self._core.phase is _Phase.SETTLING:
            self._finish_run(actions)  # PI-END-003: no retry came
        return actions

    # -- lines --------------------------------------------------------------------------

    def _take_id(self) -> int:
        rid = self._next_id
        self._next_id += 1
        return rid

    def _send_prompt(self, actions: Actions, move: _Move) -> None:
        self._prompt_id = self._take_id()
        actions.frames.append(_with_id(self._prompt_id, self._prompt_body))
        self._core.move(move)

    def _on_item(self, item: Line | OversizeLine, now_ms: float, actions: Actions) -> None:
        text = js_trim(item.text) if isinstance(item, Line) else item.head
        if isinstance(item, Line) and not text:
            return  # blank lines are not records
        self._core.count("lines")
        if self._core.ended:
            self._core.count("lines_after_finish")  # ref §2.7 "if finished -> ignore"
            return
        if isinstance(item, OversizeLine):
            self._core.count("oversize_lines")
            if _AGENT_END_HEAD.match(item.head):
                self._on_agent_end(now_ms, actions)
            elif self._core.phase is _Phase.CANCELLING:
                self._core.count("events_after_cancel")
            else:
                actions.events.append(Raw(line=item.head, truncated_bytes=item.size))
                self._core.count("raw_lines")
            return
        try:
            value: Any = loads_json(text)
        except (ValueError, RecursionError):
            value = _NOT_JSON
        kind = value.get("type") if isinstance(value, dict) else None
        # ref §2.7 inbound order: extension UI, then responses, then events.
        if kind == "extension_ui_request":
            self._on_extension_ui(value, actions)
        elif kind == "response":
            self._on_response(value, actions)
        elif self._core.phase is _Phase.CANCELLING:
            if kind == "agent_end":
                self._on_agent_end(now_ms, actions)
            else:
                self._core.count("events_after_cancel")
        elif not isinstance(kind, str) or not self._on_event(kind, value, text, now_ms, actions):
            # Design principle 3: a line nobody claims is published as raw (PI-FRAME-003).
            if isinstance(kind, str):
                self._core.count("unknown_events")
            self._core.count("raw_lines")
            actions.events.append(Raw(line=text))

    def _on_extension_ui(self, obj: dict[str, Any], actions: Actions) -> None:
        self._core.count("extension_ui_requests")
        rid = obj.get("id")
        if rid is None or (isinstance(rid, float) and not math.isfinite(rid)):
            # PI-UI-004: nothing to answer (an id like 1e999 could not be echoed as JSON).
            self._core.count("extension_ui_without_id")
            return
        method = obj.get("method")
        if isinstance(method, str) and method in FIRE_AND_FORGET_METHODS:
            self._core.count("extension_ui_fire_and_forget")  # PI-UI-003: no reply
            return
        reply: dict[str, Any]
        if self._core.phase is _Phase.CANCELLING:
            reply = {"cancelled": True}  # dismiss, never approve, once the user cancelled
        elif method == "confirm":
            reply = {"confirmed": True}  # PI-UI-001
        else:
            # PI-UI-002: select/input/editor (and unknown dialogs) -> first option or cancel.
            params = obj.get("params")
            options = params.get("options") if isinstance(params, dict) else None
            if options is None:
                options = obj.get("options")
            if isinstance(options, list) and options:
                first = options[0]
                if isinstance(first, str):
                    reply = {"value": first}
                elif isinstance(first, dict):
                    label = first.get("label")
                    value = first.get("value")
                    chosen = label if label is not None else value
                    reply = {"value": chosen if chosen is not None else ""}
                else:
                    reply = {"value": ""}
            else:
                reply = {"cancelled": True}
        self._core.count("extension_ui_replies")
        actions.frames.append(_encode({"type": "extension_ui_response", "id": rid, **reply}))

    def _on_response(self, obj: dict[str, Any], actions: Actions) -> None:
        rid = obj.get("id")
        rejected = obj.get("success") is False
        if self._core.phase is _Phase.AWAIT_PARENT and _same_id(rid, self._parent_id):
            if rejected:
                # ref §2.7: fatal, code PI_PARENT_SESSION_FAILED; the prompt is never sent
                # (PI-RESUME-002).
                self._core.fail(
                    actions,
                    _Move.FAIL,
                    message=f"parent session rejected: {_peer_error(obj.get('error'))}",
                    code="PI_PARENT_SESSION_FAILED",
                    rule="PI-RESUME-002",
                )
                return
            data = obj.get("data")
            if isinstance(data, dict) and data.get("cancelled") is True:
                self._core.count("parent_session_cancelled")
                actions.events.append(
                    Status(
                        label="warning",
                        detail="pi extension cancelled new_session; parent session not linked",
                    )
                )
            self._send_prompt(actions, _Move.PARENT_LINKED)
            return
        if (
            _same_id(rid, self._prompt_id)
            and rejected
            and self._core.phase in (_Phase.RUNNING, _Phase.SETTLING, _Phase.CONTINUING)
        ):
            # ref §2.7: a prompt response with success:false is fatal (PI-PROMPT-002).
            self._core.fail(
                actions,
                _Move.FAIL,
                message=f"prompt rejected: {_peer_error(obj.get('error'))}",
                code="PI_PROMPT_REJECTED",
                rule="PI-PROMPT-002",
            )
            return
        if self._core.phase is _Phase.CANCELLING and _same_id(rid, self._abort_id):
            self._core.finish(actions, _Move.CANCELLED, RunStatus.CANCELLED)  # PI-CANCEL-001
            return
        # seed 000 §5.10 "Gotcha": success:true only means accepted (PI-PROMPT-003).
        self._core.count("responses_ignored")

    # -- events (ref §2.7 mapPiRpcEvent) ---------------------------------------------------

    def _on_event(
        self, kind: str, obj: dict[str, Any], line: str, now_ms: float, actions: Actions
    ) -> bool:
        """Map one pi event; ``False`` when the type is not pi's (-> raw)."""
        events = actions.events
        if kind == "agent_start":
            if self._core.phase is _Phase.CONTINUING:
                # A new attempt: the failed one's model errors no longer decide (PI-END-003).
                self._core.move(_Move.NEW_ATTEMPT)
                self._attempt += 1
                self._last_stop_reason = None
            events.append(Status(label="working"))
        elif kind == "agent_end":
            self._on_agent_end(now_ms, actions)
        elif kind == "turn_start":
            events.append(Status(label="thinking"))
        elif kind == "turn_end":
            self._on_turn_end(obj, line, now_ms, actions)
        elif kind == "message_update":
            return self._on_message_update(obj, line, now_ms, actions)
        elif kind == "tool_execution_start":
            events.append(
                ToolUse(
                    id=_str_or_none(obj.get("toolCallId")),
                    name=_str_or_none(obj.get("toolName")),
                    input=obj.get("args"),
                )
            )
        elif kind == "tool_execution_end":
            events.append(
                ToolResult(
                    tool_use_id=_str_or_none(obj.get("toolCallId")),
                    content=_tool_text(obj.get("result")),
                    is_error=obj.get("isError") is True,
                )
            )
        elif kind == "extension_error":
            message = _text(obj.get("error")) or "Extension error"
            self._error_event(message, line, actions, attempt=None)
        elif kind in _COMPACTION_START:
            events.append(Status(label="compacting"))
            self._continue_after_agent_end()
        elif kind in _COMPACTION_END:
            self._core.count("consumed_events")
            settling = self._core.phase in (_Phase.SETTLING, _Phase.CONTINUING)
            if settling and obj.get("willRetry") is not True:
                self._finish_run(actions)  # overflow recovery gave up: no new attempt comes
        elif kind == "auto_retry_start":
            events.append(Status(label="retrying"))
            self._continue_after_agent_end()
        elif kind == "auto_retry_end":
            if obj.get("success") is False:
                message = _text(obj.get("finalError")) or "Auto-retry exhausted"
                self._error_event(message, line, actions, attempt=None)
                if self._core.phase in (_Phase.SETTLING, _Phase.CONTINUING):
                    self._finish_run(actions)
            else:
                self._core.count("consumed_events")
        elif kind in _CONSUMED_EVENTS:
            self._core.count("consumed_events")
        else:
            return False
        return True

    def _on_message_update(
        self, obj: dict[str, Any], line: str, now_ms: float, actions: Actions
    ) -> bool:
        event = obj.get("assistantMessageEvent")
        if not isinstance(event, dict):
            return False
        kind = event.get("type")
        delta = event.get("delta")
        if kind == "text_delta" and isinstance(delta, str):
            if not self._streaming:
                # ref §2.7: the first text delta -> status streaming with ttftMs (PI-EVENT-002).
                self._streaming = True
                actions.events.append(Status(label="streaming", ttft_ms=now_ms - self._start_ms))
            actions.events.append(TextDelta(delta=delta))
        elif kind == "thinking_delta" and isinstance(delta, str):
            actions.events.append(ThinkingDelta(delta=delta))
        elif kind == "thinking_start":
            actions.events.append(ThinkingStart())
        elif kind == "thinking_end":
            actions.events.append(ThinkingEnd())
        elif kind == "error":
            message = _text(event.get("reason")) or _text(delta) or "Agent error"
            self._error_event(message, line, actions, attempt=self._attempt)
        elif isinstance(kind, str) and kind in _CONSUMED_ASSISTANT_EVENTS:
            # ROBUST-WRONGTYPE-001: a type that is not a string is unclaimed (raw), not a crash.
            self._core.count("consumed_events")
        else:
            return False
        return True

    def _on_turn_end(self, obj: dict[str, Any], line: str, now_ms: float, actions: Actions) -> None:
        message = obj.get("message")
        if not isinstance(message, dict):
            self._core.count("consumed_events")
            return
        stop = message.get("stopReason")
        self._last_stop_reason = stop if isinstance(stop, str) else None
        usage = message.get("usage")
        if isinstance(usage, dict):
            # ref §2.7: usage{input_tokens, output_tokens, cached_*, total_tokens} when any.
            tokens: dict[str, Any] = {}
            for source, target in (
                ("input", "input_tokens"),
                ("output", "output_tokens"),
                ("cacheRead", "cached_read_tokens"),
                ("cacheWrite", "cached_write_tokens"),
                ("totalTokens", "total_tokens"),
            ):
                number = _number(usage.get(source))
                if number is not None:
                    tokens[target] = number
            if tokens:
                cost = usage.get("cost")
                cost_usd = None
                if isinstance(cost, dict):
                    cost_usd = _number(cost.get("total"))
                    if cost_usd is None:
                        cost_usd = _number(cost.get("totalCost"))
                actions.events.append(
                    Usage(
                        usage=tokens,
                        cost_usd=None if cost_usd is None else float(cost_usd),
                        duration_ms=now_ms - self._start_ms,
                    )
                )
        if stop == "error":
            text = _text(message.get("errorMessage")) or "Pi agent error"
            self._error_event(text, line, actions, attempt=self._attempt)

    def _error_event(
        self, message: str, line: str, actions: Actions, *, attempt: int | None
    ) -> None:
        actions.events.append(Error(message=message, raw=_bounded(line)))
        self._errors.append((message, attempt))

    def _continue_after_agent_end(self) -> None:
        if self._core.phase is _Phase.SETTLING:
            self._core.move(_Move.RETRY)
            self._deadline = None

    def _on_agent_end(self, now_ms: float, actions: Actions) -> None:
        phase = self._core.phase
        if phase is _Phase.AWAIT_PARENT:
            self._core.count("agent_end_before_prompt")  # not the end of our prompt
            return
        if phase is _Phase.CANCELLING:
            self._core.finish(actions, _Move.CANCELLED, RunStatus.CANCELLED)  # PI-CANCEL-001
            return
        if phase is _Phase.RUNNING and self._last_stop_reason == "error" and self._retry_window > 0:
            # PI-END-003: pi decides about a retry right after this agent_end.
            self._core.move(_Move.SETTLE)
            self._deadline = now_ms + self._retry_window
            actions.controls.append(SetDeadline(self._deadline, RETRY_DEADLINE))
            return
        self._finish_run(actions)

    # -- endings ------------------------------------------------------------------------

    def _finish_run(self, actions: Actions) -> None:
        """agent_end reached: completed, or failed when an error still counts (PI-END-001/002)."""
        deciding = [m for m, attempt in self._errors if attempt is None or attempt == self._attempt]
        if deciding:
            self._core.fail(
                actions,
                _Move.FAIL,
                message=f"pi run failed: {deciding[-1]}",
                code="PI_AGENT_ERROR",
                rule="PI-END-002",
            )
        else:
            self._core.finish(actions, _Move.END, RunStatus.COMPLETED)
