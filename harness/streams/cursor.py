"""Cursor Agent dialect of json-event-stream (``--output-format stream-json``).

Seed 002 §7.3 and seed 000 §5.5 (normative), ref §2.2 "cursor-agent" (tables).
Cursor sends real-time incremental deltas (``--stream-partial-output``) *and*
a terminal replay of the whole turn. Deltas are emitted verbatim; the replay is
reconciled against the text emitted for THIS turn only.

Design: docs/design/streams.md#harness.streams.cursor
"""

from __future__ import annotations

from typing import Any

from harness.events import Status, TextDelta, Usage
from harness.streams._jsonev import Emit, is_number, js_truthy, nonempty_str, pick_usage

__all__ = ["CursorHandler"]

_USAGE_KEYS = (
    ("inputTokens", "input_tokens"),
    ("outputTokens", "output_tokens"),
    ("cacheReadTokens", "cached_read_tokens"),
    ("cacheWriteTokens", "cached_write_tokens"),
)


def _assistant_text(message: object) -> str:
    """Concatenated ``text`` of the ``type: text`` blocks of ``message.content``."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return ""
    return "".join(
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


class CursorHandler:
    """The cursor-agent state machine (one per run)."""

    __slots__ = ("_emit", "_session_id", "_turn_parts")

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        #: Text emitted since the last terminal replay: the current turn's baseline.
        #: (Upstream keeps ``cursorTextSoFar`` + ``cursorTurnStart``; only the slice
        #: after the turn start is ever read, so we keep just that, in pieces.)
        self._turn_parts: list[str] = []
        self._session_id: str | None = None

    def handle(self, obj: dict[str, Any]) -> bool:
        session_id = nonempty_str(obj.get("session_id"))
        if obj.get("type") == "system" and obj.get("subtype") == "init":
            # CURSOR-INIT-001 (ref §1.3, §2.2): init -> status initializing (+ model, session).
            if session_id is not None:
                self._session_id = session_id
            model = obj.get("model")
            self._emit(
                Status(
                    label="initializing",
                    model=model if isinstance(model, str) else None,
                    session_id=session_id,
                )
            )
            return True

        if session_id is not None and session_id != self._session_id:
            # CURSOR-SESSION-001 (mid version, ref §2.2): late session id capture.
            self._session_id = session_id
            self._emit(Status(label="running", session_id=session_id))

        if obj.get("type") == "assistant" and js_truthy(obj.get("message")):
            text = _assistant_text(obj.get("message"))
            if isinstance(obj.get("model_call_id"), str):
                self._reconcile_replay(text)
                return True
            if not text:
                return False
            if is_number(obj.get("timestamp_ms")):
                self._delta(text)
            else:
                self._reconcile_replay(text)
            return True

        usage = obj.get("usage")
        if obj.get("type") == "result" and isinstance(usage, dict):
            # CURSOR-USAGE-001 (ref §2.2): camelCase token counts under our key names.
            duration = obj.get("duration_ms")
            self._emit(
                Usage(
                    usage=pick_usage(usage, _USAGE_KEYS),
                    duration_ms=duration if is_number(duration) else None,
                )
            )
            return True
        return False

    def finish(self) -> None:
        """Nothing is held: deltas are emitted as they arrive."""

    def _delta(self, text: str) -> None:
        """CURSOR-DELTA-001 (seed 002 §7.3): an incremental delta is emitted verbatim.

        Never deduplicated by content: "ha" + "ha" is "haha", real text; judging
        repeats by content would silently swallow characters.
        """
        self._turn_parts.append(text)
        self._emit(TextDelta(delta=text))

    def _reconcile_replay(self, text: str) -> None:
        """CURSOR-REPLAY-001 (seed 002 §7.3 ``reconcileCursorTurnReplay``).

        If the replay extends what this turn already emitted, emit only the
        missing suffix; if it diverges (a chunk was lost mid-turn), emit
        nothing — better less than duplicated. The baseline is THIS turn, not
        the whole run, or a second turn would re-append its whole replay
        ("secondsecond turn"). The turn boundary always advances.
        """
        emitted_turn = "".join(self._turn_parts)
        if text and text != emitted_turn and text.startswith(emitted_turn):
            self._emit(TextDelta(delta=text[len(emitted_turn) :]))
        self._turn_parts = []
