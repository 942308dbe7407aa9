"""The prompt turn an agent process plays: the scenario's steps, then the answer.

``session/prompt`` renders the scenario (``TurnRenderer``) and answers with the stop
reason and usage (ref §2.6 step 5); a scripted API error answers with an error, a
``compaction`` step (amr) with the interruption and its saved pending continuation.

Design: docs/design/fakes.md#fake_clis.acp.server
"""

from __future__ import annotations

import os

from fake_clis import ids
from fake_clis.acp.process import Handler
from fake_clis.acp.render import TurnRenderer
from fake_clis.acp.wire import (
    COMPACTION_CODE,
    COMPACTION_MESSAGE,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    STOP_REASONS,
    ApiError,
    Compaction,
    Session,
    Stop,
    Turn,
)

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Prompt"]


class Prompt(Handler):
    """``session/prompt``, and the turn a continuation resumes."""

    def on_prompt(self, request_id: Any, params: dict[str, Any]) -> None:
        session = self.process.session(request_id, params)
        if session is None:
            return
        blocks = params.get("prompt")
        if not isinstance(blocks, list) or not blocks:
            self.out.error(
                request_id, INVALID_PARAMS, "Invalid params: prompt must be a non-empty array"
            )
            return
        text = "".join(
            str(b.get("text", ""))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        )
        self.run.record.setdefault("prompts", []).append(text)
        self.run.record.setdefault("prompt", text)
        self.run_turn(request_id, session, Turn(prompt=text), start=0, index=None)

    def run_turn(
        self, request_id: Any, session: Session, turn: Turn, *, start: int, index: int | None
    ) -> None:
        """Render the scenario's steps from ``start`` into ``turn`` and answer the request;
        ``index`` is the saved turn this one continues (None: a new turn)."""
        renderer = TurnRenderer(self.process, session, request_id, turn)
        try:
            renderer.render(start)
        except ApiError as exc:
            self.process.api_error_seen = True
            self._save(session, turn, index)
            self.out.error(request_id, INTERNAL_ERROR, str(exc), renderer.api_error_data(exc.step))
            return
        except Compaction as exc:
            self._interrupt(request_id, session, turn, index, exc)
            return
        except Stop:
            pass
        cancelled = self.process.channel.cancelled(request_id)
        if cancelled:
            stop = "cancelled"
        else:
            wanted = self.run.scenario.stop_reason
            stop = wanted if wanted in STOP_REASONS else "end_turn"
            if self.agent.turn_end_update:
                # ref §2.6 step 5: Kiro ends a turn with its own session update.
                self.out.update(
                    session.session_id, {"sessionUpdate": "turn_end", "stopReason": stop}
                )
        self._save(session, turn, index)
        result: dict[str, Any] = {"stopReason": stop}
        if turn.usage:
            result["usage"] = dict(turn.usage)
        self.out.result(request_id, result)

    def _save(self, session: Session, turn: Turn, index: int | None = None) -> int:
        """Save ``turn`` as a new turn (or over the saved turn ``index``); its index."""
        saved = {
            "prompt": turn.prompt,
            "text": "".join(turn.text),
            "thinking": "".join(turn.thinking),
            "tools": turn.tools,
            # The model in use, so session/load restores it.
            "model": session.model,
        }
        if index is None or not 0 <= index < len(session.turns):
            session.turns.append(saved)
            index = len(session.turns) - 1
        else:
            session.turns[index] = saved
        if self.agent.native_continue:
            turns = list(session.turns)
            self.store.write_doc(
                session.durable_id, lambda doc: doc.update(turns=turns), create=True
            )
        else:
            self.run.save_session(session.session_id, session.turns)
        return index

    def _interrupt(
        self, request_id: Any, session: Session, turn: Turn, index: int | None, exc: Compaction
    ) -> None:
        """seed 000 "AMR compaction continuation": the turn so far is saved, with a pending
        continuation when the evidence is structured, then the request fails with it."""
        step = exc.step
        options = {
            "evidence": str(step.get("evidence", "structured")),
            "history": str(step.get("history", "kept")),
            "pending_tool": bool(step.get("pending_tool", False)),
            "repeat": bool(step.get("repeat", False)),
        }
        index = self._save(session, turn, index)
        cursor = {
            "version": 1,
            "userMessageId": f"msg_{ids.uuid4_hex()[:24]}",
            "assistantMessageId": f"msg_{ids.uuid4_hex()[:24]}",
            # Claimed even with a tool left in_progress (pending_tool), as upstream's fake
            # does: the host must check its own tool frames (seed 000: "The daemon
            # independently checks its tool frames").
            "toolResultsCommitted": True,
        }
        pending = {
            "cursor": cursor,
            "pid": os.getpid(),
            "next_step": exc.index + 1,
            "turn": index,
            "options": options,
            "usage": dict(turn.usage),
            "cost": turn.cost,
        }
        self.send_interruption(request_id, session, pending)

    def send_interruption(self, request_id: Any, session: Session, pending: dict[str, Any]) -> None:
        """Save ``pending`` (legacy evidence: none) and answer the request with the error."""
        structured = pending["options"]["evidence"] == "structured"

        def change(doc: dict[str, Any]) -> None:
            if structured:
                doc["continuation"] = pending
            else:
                doc.pop("continuation", None)

        self.store.write_doc(session.durable_id, change, create=True)
        self.run.record["compactions"] = int(self.run.record.get("compactions", 0)) + 1
        data: dict[str, Any] = {"kind": "opencode_prompt_error"}
        if structured:
            data = {
                "kind": "opencode_continuation_incomplete",
                "code": COMPACTION_CODE,
                "runtime": "opencode",
                "phase": "post_tool_resume",
                "retryable": False,
                "openCodeSessionId": session.durable_id,
                "continuation": pending["cursor"],
            }
        self.out.error(request_id, INVALID_REQUEST, COMPACTION_MESSAGE, data)
