"""The prompt turn: writing the prompt, mapping its ``session/update`` notifications, ending it.

ref §2.6 steps 4-5: ``session/prompt`` (or ``_session/continue`` in a continuing
process) is written once the handshake is done; its result, or Kiro's ``turn_end``
update, ends the turn with the usage and closes the open tool rows.

Design: docs/design/protocols.md#harness.protocols.acp
"""

from __future__ import annotations

from typing import Any

from harness.events import Status, Usage
from harness.protocols.acp.amr_extension import CONTINUE_METHOD
from harness.protocols.acp.context import RunContext
from harness.protocols.acp.state import Move, Phase
from harness.protocols.acp.updates import format_usage
from harness.protocols.base import Actions, RunStatus
from harness.protocols.jsonrpc import JsonItem, Notification

__all__ = ["Turn"]

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


class Turn:
    """The prompt turn of one run."""

    def __init__(self, run: RunContext) -> None:
        self._run = run

    def send_prompt(self, actions: Actions) -> None:
        # ref §2.6 step 4 (rule ACP-PROMPT-001).
        run = self._run
        assert run.request is not None and run.session_id is not None
        method = "session/prompt"
        params: dict[str, Any] = {
            "sessionId": run.session_id,
            "prompt": [{"type": "text", "text": run.request.prompt}],
        }
        if run.continuing is not None:
            # seed 000: "sends _session/continue with only that cursor" -- the prompt is
            # never sent again (rule ACP-AMR-CONTINUE-001).
            method = CONTINUE_METHOD
            params = {
                "sessionId": run.session_id,
                "continuation": run.continuing.cursor.to_wire(),
            }
        run.mapper.prompt_sent_ms = run.now
        run.core.move(Move.PROMPT)
        run.send_request(actions, method, params)
        actions.events.append(
            Status(
                label="waiting_for_first_output",
                # The handle a later turn loads (ref §2.6 step 3: durableSessionId).
                session_id=run.durable_session_id,
                elapsed_ms=run.now - run.start_ms,
            )
        )

    def on_result(self, result: Any, item: JsonItem, actions: Actions) -> None:
        # ref §2.6 step 5: the prompt result ends the turn (rule ACP-TURN-001).
        result = result if isinstance(result, dict) else {}
        stop = result.get("stopReason")
        self.complete(actions, stop if isinstance(stop, str) else None, result.get("usage"))

    def complete(
        self,
        actions: Actions,
        stop_reason: str | None,
        usage: Any,
        *,
        usage_event: bool = True,
    ) -> None:
        """End of the turn: flush tools, usage, close stdin, terminate after the grace."""
        run = self._run
        cancelled = run.core.phase is Phase.CANCELLING
        actions.events.extend(run.mapper.flush(is_error=cancelled))
        if usage_event:
            actions.events.append(
                Usage(
                    usage=format_usage(usage),
                    duration_ms=run.now - run.mapper.prompt_sent_ms,
                    stop_reason=stop_reason,
                )
            )
        status = (
            RunStatus.CANCELLED if cancelled and stop_reason == "cancelled" else RunStatus.COMPLETED
        )
        run.core.finish(actions, Move.TURN_END, status)

    def on_notification(self, note: Notification, actions: Actions) -> None:
        run = self._run
        params = note.params
        if note.method != "session/update" or not isinstance(params, dict):
            run.core.count("ignored_notifications")
            return
        update = params.get("update")
        if not isinstance(update, dict):
            run.core.count("ignored_notifications")
            return
        if run.session_id is not None and params.get("sessionId") != run.session_id:
            run.core.count("foreign_updates")
            return
        raw_kind = update.get("sessionUpdate")
        kind = raw_kind if isinstance(raw_kind, str) else ""
        prompt_sent = run.core.took(Move.PROMPT)
        if kind == "turn_end" and run.config.turn_end_completes_prompt and prompt_sent:
            # ref §2.6 step 5: completePromptOnTurnEnd (rule ACP-TURN-002).
            stop = update.get("stopReason")
            self.complete(actions, stop if isinstance(stop, str) else None, None)
            return
        if not prompt_sent and kind in _CONTENT_UPDATES:
            # wire §A.1.2: session/load replays history before it answers
            # (rule ACP-UPDATE-REPLAY-001).
            run.core.count("replayed_updates")
            return
        actions.events.extend(run.mapper.map(update, run.now))
