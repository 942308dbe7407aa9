"""``claude-stream-json``: Claude Code's ``--output-format stream-json --verbose`` stdout.

Design: docs/design/streams.md#harness.streams.claude
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.events import (
    Error,
    Status,
    TextDelta,
    ThinkingDelta,
    ThinkingStart,
    ToolInputDelta,
    ToolResult,
    ToolUse,
    TurnEnd,
    Usage,
    fill_text_delta,
    text_delta,
)
from harness.guards.artifact_echo import ArtifactEchoGuard
from harness.guards.role_marker import RoleMarkerGuard
from harness.streams import UnknownStreamFormatError, fast_json
from harness.streams.base import _TRIM, JsonlStreamParser, js_trim
from harness.streams.decoder import (
    DEFAULT_MAX_LINE_BYTES,
    SHALLOW_TEXT,
    FedItem,
    Line,
    item_size,
    loads_json,
    may_nest_too_deep,
)

__all__ = ["FORMAT", "PROMPT_TOO_LONG_RE", "ClaudeStreamParser", "create"]

FORMAT = "claude-stream-json"

#: ref §2.1.4 (CLAUDE-RESULT-ERROR-001): a result error that means "prompt too large".
#: JS ``/^(?:API Error:\s*)?Prompt is too long\.?$/i``: ``\s`` spelled as JS's set,
#: ``re.ASCII`` because a JS regex without ``u`` folds case in ASCII only.
PROMPT_TOO_LONG_RE = re.compile(
    r"(?:API Error:[\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]*)?"
    r"Prompt is too long\.?\Z",
    re.IGNORECASE | re.ASCII,
)


class _Missing:
    """A JSON key that is absent (JS ``undefined``), as opposed to ``null``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


@dataclass(slots=True)
class _ToolBlock:
    """One open ``tool_use`` content block (ref §2.1.2 ``BlockState``).

    Only tool blocks keep state: no rule reads a text or thinking block's, which is
    kept as None (its key keeps its place, as in upstream's ``Map``).
    """

    name: Any
    id: Any
    #: ``content_block_start``'s ``input`` value, or ``_MISSING`` when it had none.
    input_value: Any = _MISSING
    #: ``input_json_delta`` fragments (joined on demand: no quadratic concatenation).
    parts: list[str] = field(default_factory=list)

    def input_text(self) -> str:
        return "".join(self.parts)


# -- JavaScript value semantics upstream relies on --------------------------------


def _is_number(value: object) -> bool:
    """``typeof value === 'number'`` for a finite JSON number (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # JSON.parse reads an integer beyond the double range as Infinity
        return False


def _js_truthy(value: object) -> bool:
    """``Boolean(value)``: ``{}`` and ``[]`` are truthy, ``NaN`` is not."""
    if isinstance(value, (dict, list)):
        return True
    if isinstance(value, float) and math.isnan(value):
        return False
    return bool(value)


def _retry_detail(obj: dict[str, Any]) -> str:
    """``attempt 2/10 after HTTP 500`` from what the frame gives (each part optional)."""
    attempt, limit, status = obj.get("attempt"), obj.get("max_retries"), obj.get("error_status")
    parts: list[str] = []
    if isinstance(attempt, int):
        parts.append(
            f"attempt {attempt}/{limit}" if isinstance(limit, int) else f"attempt {attempt}"
        )
    if isinstance(status, int):
        parts.append(f"after HTTP {status}")
    elif isinstance(obj.get("error"), str):
        parts.append(f"after {obj['error']}")
    return " ".join(parts) or "retrying the model call"


def _nonempty_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _js_key(value: object) -> str:
    """``${value}`` for a block index (a JSON number prints without ``.0``)."""
    if type(value) is int:
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return _js_string(value)


def _js_string(value: object) -> str:
    """``String(value)`` for a JSON value (``undefined`` for a missing key)."""
    if isinstance(value, str):
        return value
    if value is _MISSING:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return ",".join("" if item is None else _js_string(item) for item in value)
    return "[object Object]"


def _json_stringify(value: object) -> str:
    """``JSON.stringify`` for a JSON value: compact, non-ASCII kept.

    Python prints ``1.0`` where JS prints ``1`` and keeps integer-like keys in
    insertion order where JS sorts them first; neither occurs in Claude's
    tool-result blocks.
    """
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        return reprlib.repr(value)


def _parse_json(text: str) -> Any:
    """``JSON.parse``; raises ``ValueError`` on anything it would reject."""
    try:
        return loads_json(text)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def _stringify_tool_result(content: object) -> str:
    """ref §2.1.1 ``stringifyToolResult`` (CLAUDE-TOOLRESULT-001).

    A string as is; a list joins ``String(text)`` of ``text`` blocks and
    ``JSON.stringify`` of anything else with ``\\n``; anything else is
    ``JSON.stringify``-ed. A missing ``content`` (upstream: ``undefined``) is ``''``.
    """
    if isinstance(content, str):
        return content
    if content is _MISSING:
        return ""
    if isinstance(content, list):
        return "\n".join(
            _js_string(item.get("text", _MISSING))
            if isinstance(item, dict) and item.get("type") == "text"
            else _json_stringify(item)
            for item in content
        )
    return _json_stringify(content)


def _assistant_text(content: list[Any]) -> str:
    """The wrapper's text blocks joined by ``\\n`` and trimmed (ref §2.1.3 ``assistantText``)."""
    parts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return js_trim("\n".join(parts))


def _error_result_message(obj: dict[str, Any]) -> str:
    """ref §2.1.4 ``errorResultMessage``: ``errors[]`` › ``result`` › subtype › generic."""
    errors = obj.get("errors")
    if isinstance(errors, list):
        parts = [e for e in errors if isinstance(e, str) and e]
        if parts:
            return "\n".join(parts)
    result = obj.get("result")
    if isinstance(result, str) and js_trim(result):
        return result
    subtype = _nonempty_str(obj.get("subtype"))
    if subtype is not None:
        return f"Claude run failed: {subtype}"
    return "Claude run failed"


# -- the parser ------------------------------------------------------------------


class ClaudeStreamParser(JsonlStreamParser):
    """The ``claude-stream-json`` state machine (ref §2.1, generation G2)."""

    def __init__(
        self,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        suppress_html_artifacts_after_file_write: bool = False,
    ) -> None:
        super().__init__(max_line_bytes=max_line_bytes)
        #: Open blocks by (message id, index): a tool block's state, else None.
        self._blocks: dict[tuple[str, str], _ToolBlock | None] = {}
        #: ``currentMessageId``: the message the next ``content_block_*`` belongs to.
        self._message_id: str | None = None
        #: Message ids whose text / thinking streamed as deltas.
        self._text_streamed: set[str] = set()
        self._thinking_streamed: set[str] = set()
        #: Message ids whose text / thinking a wrapper delivered before any delta.
        self._text_from_wrapper: set[str] = set()
        self._thinking_from_wrapper: set[str] = set()
        #: Deltas streamed since the last ``message_start`` / wrapper.
        self._current_streamed_text = False
        self._current_streamed_thinking = False
        #: ref §2.1.3 G2 ``emittedToolUseIds`` (CLAUDE-DEDUPE-TOOL-001).
        self._emitted_tool_ids: set[str] = set()
        #: ref §2.1.3 G2 ``turnEndEmittedForMessageIds`` (CLAUDE-TURNEND-ONCE-001).
        self._turn_end_ids: set[str] = set()
        self._guards: dict[str, RoleMarkerGuard] = {}
        self._echo = ArtifactEchoGuard(
            suppress_html_after_write=suppress_html_artifacts_after_file_write
        )

    # -- JsonlStreamParser hooks ------------------------------------------------

    def handle(self, obj: dict[str, Any], line: str) -> bool:
        kind = obj.get("type")
        if kind == "stream_event":
            event = obj.get("event")
            if type(event) is not dict:
                return False
            # Fast path for a text delta, most lines of a run: no generic dispatch.
            if event.get("type") == "content_block_delta":
                delta = event.get("delta")
                if type(delta) is dict and delta.get("type") == "text_delta":
                    return self._on_text_delta(delta.get("text"))
            return self._on_stream_event(event, obj.get("parent_tool_use_id"))
        if kind == "system":
            return self._on_system(obj)
        if kind == "assistant":
            return self._on_assistant(obj)
        if kind == "user":
            return self._on_user(obj)
        if kind == "result":
            self._on_result(obj)
            return True
        # CLAUDE-RAW-001: unknown types (rate_limit_event, control_request …) -> raw.
        return False

    def _read(self, items: Iterable[FedItem], *, suspect: bool) -> None:
        """The base loop with a text delta handled in place, with no call but the guards'.

        Why an override: text deltas are most lines of a run, and the base path spends
        seven Python calls on each (handle, dispatch, the echo and role guards, the
        event). Anything unusual (a line the base loop would vet or refuse, another
        frame, a message with no id, a wrapper that already gave the text, text the echo
        guard may hold) takes the general path, so events are the same.

        The line is read untrimmed: orjson allows JSON's own whitespace around a value,
        and any other character ``js_trim`` removes makes it refuse (then the base loop
        trims and reads it), so a value read here is the trimmed line's value.

        Only a line the general path reads can change the message, its bookkeeping or
        the echo guard; so the first text delta after one does the per-message work
        (:meth:`_fast_text_guard`) and the deltas after it reuse the answer.
        """
        general = super()._read
        fast = fast_json.LOADS
        if suspect or fast is None:
            general(items, suspect=suspect)
            return
        refused = fast_json.FastJsonError
        handle = self.handle
        on_stream_event = self._on_stream_event
        out = self._out
        echo = self._echo
        new_event = object.__new__
        #: Whether ``guard`` and ``echo_idle`` answer for the current message: not before
        #: its first text delta since a line the general path read.
        primed = False
        #: The current message's role guard, None when its deltas take the general path.
        guard: RoleMarkerGuard | None = None
        #: The echo guard passes every text through (nothing armed, nothing held).
        echo_idle = False
        for item in items:
            if type(item) is str:
                raw = item
            elif type(item) is Line:
                raw = item[0]
            else:
                general((item,), suspect=False)  # oversize: the base rules
                primed = False
                continue
            if len(raw) > SHALLOW_TEXT and may_nest_too_deep(raw):
                general((item,), suspect=False)  # deep enough to vet: base rules
                primed = False
                continue
            try:
                value = fast(raw)
            except refused:
                general((item,), suspect=False)  # blank, not JSON, or odd whitespace
                primed = False
                continue
            if type(value) is not dict:
                general((item,), suspect=False)  # valid JSON, not an object
                primed = False
                continue
            # The text-delta frame, read in place of handle -> _on_text_delta.
            event: Any = value.get("event") if value.get("type") == "stream_event" else None
            delta: Any = event.get("delta") if type(event) is dict else None
            text: Any = delta.get("text") if type(delta) is dict else None
            if (
                type(text) is str
                and delta.get("type") == "text_delta"
                and event.get("type") == "content_block_delta"
            ):
                if not primed:
                    guard = self._fast_text_guard()
                    echo_idle = not echo.armed
                    primed = True
                if guard is not None and (echo_idle or echo.passes_through(text)):
                    if guard.contaminated:
                        continue  # seed 002 §7.5 (CLAUDE-GUARD-001): the rest is dropped
                    safe = guard.feed_text(text)
                    if safe:
                        built = new_event(TextDelta)  # text_delta(safe), in place
                        fill_text_delta(built, safe)
                        out.append(built)
                    if guard.contaminated:
                        # seed 002 §7.5 (CLAUDE-GUARD-001): the marker's warning.
                        warning = guard.warning_event(self._message_id)
                        if warning is not None:
                            out.append(warning)
                    continue
            line = raw.strip(_TRIM)  # js_trim, inlined
            primed = False
            if type(event) is dict:
                # Another stream event: handle's own first step, done here.
                claimed = on_stream_event(event, value.get("parent_tool_use_id"))
            else:
                claimed = handle(value, line)
            if not claimed:
                self.emit_raw(line, item_size(item))

    def _fast_text_guard(self) -> RoleMarkerGuard | None:
        """The current message's role guard, its first text delta's bookkeeping done.

        None when its deltas must take the general path: no message id, or a wrapper
        already gave its text. Else what :meth:`_on_text_delta` does before the text,
        done once: the message streamed text (seed 002 §7.2, CLAUDE-DEDUPE-TEXT-001).
        """
        message_id = self._message_id
        if not message_id or message_id in self._text_from_wrapper:
            return None
        self._text_streamed.add(message_id)
        self._current_streamed_text = True
        return self._guard_for(message_id)

    def _guard_for(self, message_id: str) -> RoleMarkerGuard:
        """The message's role guard, made at its first text (ref §2.1.5)."""
        guard = self._guards.get(message_id)
        if guard is None:
            guard = self._guards[message_id] = RoleMarkerGuard()
        return guard

    def on_finish(self) -> None:
        # ref §2.1.6 (ECHO-HOLD-001): held artifact text is flushed at end of output.
        self._flush_echo()

    # -- top-level frames (ref §2.1.1) ----------------------------------------------

    def _on_system(self, obj: dict[str, Any]) -> bool:
        subtype = obj.get("subtype")
        if subtype == "init":
            # ref §2.1.1 (CLAUDE-INIT-001): the session id is the resume handle.
            model = obj.get("model")
            session_id = obj.get("session_id")
            self.emit(
                Status(
                    label="initializing",
                    model=model if isinstance(model, str) else None,
                    session_id=session_id if isinstance(session_id, str) else None,
                )
            )
            return True
        if subtype == "status":
            status = _nonempty_str(obj.get("status"))
            self.emit(Status(label=status or "working"))
            return True
        if subtype == "thinking_tokens":
            # CLAUDE-PROGRESS-001: claude 2.1.332 announces each thinking block with an
            # estimate (recordings/real/claude/happy.jsonl).
            tokens = obj.get("estimated_tokens")
            if isinstance(tokens, int) and not isinstance(tokens, bool):
                self.emit(Status(label="thinking", detail=f"~{tokens} tokens"))
                return True
            return False
        if subtype == "api_retry":
            # CLAUDE-PROGRESS-001: a failed model call about to be retried (the run goes on;
            # only a result frame can end it).
            self.emit(Status(label="retrying", detail=_retry_detail(obj)))
            return True
        return False

    def _on_user(self, obj: dict[str, Any]) -> bool:
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            # A user turn's own text (prompt replay): documented, nothing to report.
            return True
        if not isinstance(content, list):
            return False
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            # ref §2.1.1 (CLAUDE-TOOLRESULT-001).
            tool_use_id = block.get("tool_use_id")
            self.emit(
                ToolResult(
                    tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
                    content=_stringify_tool_result(block.get("content", _MISSING)),
                    is_error=_js_truthy(block.get("is_error")),
                )
            )
        return True

    def _on_result(self, obj: dict[str, Any]) -> None:
        # ref §2.1.4 (CLAUDE-RESULT-001): one usage event per result frame.
        is_error = obj.get("is_error") is True
        stop_reason = _nonempty_str(obj.get("stop_reason")) or _nonempty_str(
            obj.get("terminal_reason")
        )
        usage = obj.get("usage")
        cost = obj.get("total_cost_usd")
        duration = obj.get("duration_ms")
        self.emit(
            Usage(
                usage=usage if isinstance(usage, dict) else None,
                cost_usd=cost if _is_number(cost) else None,
                duration_ms=duration if _is_number(duration) else None,
                stop_reason=stop_reason,
                is_error=True if is_error else None,
            )
        )
        # ref §2.1.6 (ECHO-RESET-001): a result ends the user turn unless mid-tool.
        if stop_reason != "tool_use":
            self._echo.reset_turn()
        if is_error:
            # ref §2.1.4 (CLAUDE-RESULT-ERROR-001): the run's terminal error.
            message = _error_result_message(obj)
            if PROMPT_TOO_LONG_RE.match(js_trim(message)):
                code = "AGENT_PROMPT_TOO_LARGE"
            else:
                code = _nonempty_str(obj.get("subtype")) or "result_error"
            self.emit(Error(message=message, code=code, terminal=True))

    def _on_assistant(self, obj: dict[str, Any]) -> bool:
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(content, list):
            return False
        parent = obj.get("parent_tool_use_id")
        raw_id = message.get("id")
        explicit_id = raw_id if isinstance(raw_id, str) else None
        text_id, thinking_id = self._wrapper_ids(explicit_id)
        if explicit_id:
            self._message_id = explicit_id
        # seed 002 §7.2 (CLAUDE-DEDUPE-TEXT-001): skip what the deltas already showed.
        text_done = bool(text_id) and text_id in self._text_streamed
        thinking_done = bool(thinking_id) and thinking_id in self._thinking_streamed
        # Read before the loop, emitted after it (CLAUDE-TURNEND-ORDER-001).
        raw_stop = message.get("stop_reason")
        stop_reason = raw_stop if isinstance(raw_stop, str) else None

        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            # Text and thinking the deltas already showed are skipped.
            if kind == "tool_use":
                self._wrapper_tool_use(block)
            elif kind == "text" and not text_done:
                self._wrapper_text(block, text_id)
            elif kind == "thinking" and not thinking_done:
                self._wrapper_thinking(block, thinking_id)
        # seed 002 §7.2 (CLAUDE-TURNEND-ORDER-001): turn_end only after the tool uses.
        if stop_reason:
            message_id = explicit_id if explicit_id is not None else self._message_id
            self._turn_end_once(message_id, stop_reason, parent)
        error = obj.get("error")
        if error is not None:
            self._wrapper_error(error, content, parent)
        self._current_streamed_text = False
        self._current_streamed_thinking = False
        return True

    def _wrapper_ids(self, explicit_id: str | None) -> tuple[str | None, str | None]:
        """The message ids a wrapper's text and thinking belong to.

        ref §2.1.3: without an explicit id the wrapper belongs to the current
        message only if that message streamed the same kind of content.
        """
        if explicit_id is not None:
            return explicit_id, explicit_id
        text_id = self._message_id if self._current_streamed_text else None
        thinking_id = self._message_id if self._current_streamed_thinking else None
        return text_id, thinking_id

    def _wrapper_error(self, error: Any, content: list[Any], parent: Any) -> None:
        # ref §2.1.3 G2 (CLAUDE-ERROR-001, CLAUDE-SUBAGENT-001): main-turn errors only.
        if isinstance(error, str) and js_trim(error) and parent is None:
            self.emit(Error(message=_assistant_text(content) or error, code=error))

    def _wrapper_tool_use(self, block: dict[str, Any]) -> None:
        # ref §2.1.3 G2 (CLAUDE-DEDUPE-TOOL-001): one emitted-id set for both paths.
        tool_id = block.get("id")
        if isinstance(tool_id, str):
            if tool_id in self._emitted_tool_ids:
                return
            self._emitted_tool_ids.add(tool_id)
        self._emit_tool_use(tool_id, block.get("name"), self._wrapper_tool_input(block))

    def _wrapper_text(self, block: dict[str, Any], text_id: str | None) -> None:
        text = block.get("text")
        if not isinstance(text, str) or not text:
            return
        if text_id:
            self._text_from_wrapper.add(text_id)
        self._emit_text(text_id, text)

    def _wrapper_thinking(self, block: dict[str, Any], thinking_id: str | None) -> None:
        thinking = block.get("thinking")
        if not isinstance(thinking, str) or not thinking:
            return
        if thinking_id:
            self._thinking_from_wrapper.add(thinking_id)
        # seed 002 §7.5 (RMG-THINKING-001): thinking is never guarded.
        self.emit(ThinkingDelta(delta=thinking))

    # -- stream_event (ref §2.1.2) ------------------------------------------------

    def _on_stream_event(self, event: dict[str, Any], parent: Any) -> bool:
        kind = event.get("type")
        if kind == "message_start":
            self._on_message_start(event)
            return True
        if kind == "content_block_start":
            block = event.get("content_block")
            if not isinstance(block, dict):
                return False
            block_type = block.get("type")
            if block_type == "tool_use":
                state = _ToolBlock(block.get("name"), block.get("id"), block.get("input", _MISSING))
                self._blocks[self._block_key(event)] = state
                return True
            self._blocks[self._block_key(event)] = None
            if block_type == "thinking":
                self.emit(ThinkingStart())
            return True
        if kind == "content_block_delta":
            delta = event.get("delta")
            if not isinstance(delta, dict):
                return False
            return self._on_delta(event, delta)
        if kind == "content_block_stop":
            self._on_block_stop(event)
            return True
        if kind == "message_delta":
            delta = event.get("delta")
            if not isinstance(delta, dict):
                return False
            stop_reason = _nonempty_str(delta.get("stop_reason"))
            if stop_reason is not None:
                # ref §2.1.2 G2 (CLAUDE-TURNEND-ONCE-001, CLAUDE-SUBAGENT-001).
                self._turn_end_once(self._message_id, stop_reason, parent)
            return True
        # Known frames that carry nothing we report.
        return kind in ("message_stop", "ping")

    def _on_message_start(self, event: dict[str, Any]) -> None:
        # ref §2.1.2 G2 (ECHO-HOLD-001): held artifact text belongs to the previous message.
        self._flush_echo()
        if self._message_id:
            self._guards.pop(self._message_id, None)
        message = event.get("message")
        message_id = message.get("id") if isinstance(message, dict) else None
        self._message_id = message_id if isinstance(message_id, str) else None
        self._current_streamed_text = False
        self._current_streamed_thinking = False
        ttft = event.get("ttft_ms")
        if ttft is not None and _is_number(ttft):
            self.emit(Status(label="streaming", ttft_ms=ttft))

    def _on_delta(self, event: dict[str, Any], delta: dict[str, Any]) -> bool:
        kind = delta.get("type")
        message_id = self._message_id
        if kind == "text_delta":
            return self._on_text_delta(delta.get("text"))
        if kind == "thinking_delta":
            thinking = delta.get("thinking")
            if not isinstance(thinking, str):
                return False
            # ref §2.1.2 G2 (CLAUDE-THINKING-001): only a non-empty delta counts as
            # streamed; empty deltas are still forwarded.
            if thinking:
                if message_id and message_id in self._thinking_from_wrapper:
                    return True
                if message_id:
                    self._thinking_streamed.add(message_id)
                self._current_streamed_thinking = True
            self.emit(ThinkingDelta(delta=thinking))
            return True
        if kind == "input_json_delta":
            partial = delta.get("partial_json")
            if not isinstance(partial, str):
                return False
            # seed 002 §7.2 (CLAUDE-TOOL-INPUT-001): accumulate the tool's JSON input.
            state = self._blocks.get(self._block_key(event))
            if state is not None:
                state.parts.append(partial)
                if isinstance(state.id, str) and isinstance(state.name, str):
                    self.emit(ToolInputDelta(id=state.id, name=state.name, delta=partial))
            return True
        return kind in ("signature_delta", "citations_delta")

    def _on_text_delta(self, text: Any) -> bool:
        if type(text) is not str:
            return False
        message_id = self._message_id
        if message_id:
            # seed 002 §7.2 (CLAUDE-DEDUPE-TEXT-001): a wrapper already gave this text.
            if message_id in self._text_from_wrapper:
                return True
            self._text_streamed.add(message_id)
        self._current_streamed_text = True
        self._emit_text(message_id, text)
        return True

    def _on_block_stop(self, event: dict[str, Any]) -> None:
        state = self._blocks.pop(self._block_key(event), None)
        if state is None or not isinstance(state.id, str):
            return
        if state.id in self._emitted_tool_ids:
            # CLAUDE-DEDUPE-TOOL-001: the wrapper got there first.
            return
        raw = state.input_text()
        if js_trim(raw):
            try:
                parsed = _parse_json(raw)
            except ValueError:
                # seed 002 §7.2 (CLAUDE-TOOL-INPUT-001): emit nothing; the wrapper's
                # complete input is the fallback.
                return
            self._emit_tool_use(state.id, state.name, parsed)
            self._emitted_tool_ids.add(state.id)
        elif state.input_value is not _MISSING:
            self._emit_tool_use(state.id, state.name, state.input_value)
            self._emitted_tool_ids.add(state.id)

    # -- shared emitters ------------------------------------------------------------

    def _block_key(self, event: dict[str, Any]) -> tuple[str, str]:
        owner = self._message_id if self._message_id is not None else "anon"
        index = event.get("index", _MISSING)
        # The usual index first: read on every block start and stop.
        return owner, str(index) if type(index) is int else _js_key(index)

    def _wrapper_tool_input(self, block: dict[str, Any]) -> Any:
        """ref §2.1.3 G2 ``wrapperToolUseInput`` (CLAUDE-TOOL-WRAPPER-INPUT-001).

        The wrapper often carries ``{}``; an open streamed block with the same id
        whose assembled input parses wins.
        """
        tool_id = block.get("id")
        if isinstance(tool_id, str):
            for state in self._blocks.values():
                if state is None or state.id != tool_id:
                    continue
                raw = state.input_text()
                if js_trim(raw):
                    try:
                        return _parse_json(raw)
                    except ValueError:
                        pass
                break
        return block.get("input")

    def _emit_tool_use(self, tool_id: Any, name: Any, tool_input: Any) -> None:
        # ref §2.1.6 (ECHO-ARM-001): a file write arms the artifact-echo guard.
        self._echo.observe_tool_use(name, tool_input)
        self.emit(
            ToolUse(
                id=tool_id if isinstance(tool_id, str) else None,
                name=name if isinstance(name, str) else None,
                input=tool_input,
            )
        )

    def _turn_end_once(self, message_id: str | None, stop_reason: str, parent: Any) -> None:
        """ref §2.1.3 G2 ``emitTurnEndOnce``."""
        # seed 000 §12 (CLAUDE-SUBAGENT-001): a sub-agent's turn never ends the main turn.
        if parent is not None:
            return
        # CLAUDE-TURNEND-ONCE-001: one turn_end per message, whichever frame carried it.
        if message_id is not None:
            if message_id in self._turn_end_ids:
                return
            self._turn_end_ids.add(message_id)
        self.emit(TurnEnd(stop_reason=stop_reason))
        if stop_reason != "tool_use":
            self._echo.reset_turn()

    def _emit_text(self, message_id: str | None, text: str) -> None:
        """ref §2.1.5 ``emitSafeText``: artifact-echo guard, then the role guard."""
        text = self._echo.feed_text(text)
        if text:
            self._emit_guarded(message_id, text)

    def _emit_guarded(self, message_id: str | None, text: str) -> None:
        # Once per text delta: events go straight to the output list (``emit``, inlined).
        out = self._out
        if not message_id:
            # ref §2.1.5: text with no message id cannot be attributed; unguarded.
            out.append(text_delta(text))
            return
        guard = self._guard_for(message_id)
        if guard.contaminated:
            # seed 002 §7.5 (CLAUDE-GUARD-001): the rest of the message is dropped.
            return
        safe = guard.feed_text(text)
        if safe:
            out.append(text_delta(safe))
        if guard.contaminated:
            warning = guard.warning_event(message_id)
            if warning is not None:
                out.append(warning)

    def _flush_echo(self) -> None:
        held = self._echo.flush()
        if held:
            self._emit_guarded(self._message_id, held)


def create(dialect: str | None) -> ClaudeStreamParser:
    """The factory :func:`harness.formats.create_parser` calls; the format has no dialects."""
    if dialect is not None:
        raise UnknownStreamFormatError(
            f"stream format {FORMAT!r} has no event-parser dialects, got {dialect!r}"
        )
    return ClaudeStreamParser()
