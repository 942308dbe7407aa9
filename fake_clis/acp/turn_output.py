"""What one prompt turn writes and asks: its updates, its files and its permission requests.

The primitives the turn's steps are written with (``TurnRenderer`` and its tool steps
build on them): an update for this session, a stop when the client cancelled, a file
written under the session's cwd, and ``session/request_permission`` answered by the
client (wire §A.1.2).

Design: docs/design/fakes.md#fake_clis.acp.render
"""

from __future__ import annotations

from fake_clis import ids
from fake_clis.acp.process import AgentProcess
from fake_clis.acp.wire import Session, Stop, Turn

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["TurnOutput", "text_content"]


class TurnOutput:
    """One prompt's session, turn record and the process it writes through."""

    def __init__(self, server: AgentProcess, session: Session, prompt_id: Any, turn: Turn) -> None:
        self.server = server
        self.run = server.run
        self.session = session
        self.prompt_id = prompt_id
        self.turn = turn
        #: A tool ran since the last text: the next text is another model message.
        self.text_ended = False
        #: kimi prefixes its tool call ids with the id of the step (one per prompt here).
        self.step_id = ids.uuid4()

    def check(self) -> None:
        if self.server.channel.cancelled(self.prompt_id):
            raise Stop

    def update(self, update: dict[str, Any]) -> None:
        self.server.out.update(self.session.session_id, update)

    def notification(self, update: dict[str, Any]) -> dict[str, Any]:
        params = {"sessionId": self.session.session_id, "update": update}
        return {"jsonrpc": "2.0", "method": "session/update", "params": params}

    def write(self, path: str, content: str) -> None:
        """Write through ``run.write_file``, relative to the session's cwd."""
        saved = self.run.cwd
        self.run.cwd = str(self.session.cwd)
        try:
            self.run.write_file(path, content)
        finally:
            self.run.cwd = saved

    def permission(self, kind: str, tool_call: dict[str, Any]) -> tuple[bool, str]:
        """wire §A.1.2 ``session/request_permission``: ask, and wait for the client.

        ``kind`` is the tool kind an ``allow_always`` answer covers for the session; the
        options are the agent's (their ``kind`` decides, their ids are per agent).
        """
        if self.server.auto_approve or kind in self.session.always_allowed:
            return True, ""
        request_id = self.server.out.next_id()
        options = self.server.agent.permission_options
        params = {
            "sessionId": self.session.session_id,
            "toolCall": tool_call,
            "options": [{"optionId": o, "name": n, "kind": k} for o, n, k in options],
        }
        self.server.out.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "session/request_permission",
                "params": params,
            }
        )
        answer = self.server.channel.wait_response(request_id)
        outcomes = self.run.record.setdefault("permission_outcomes", [])
        if answer is None:
            outcomes.append("eof")
            raise Stop
        result = answer.get("result")
        outcome = result.get("outcome") if isinstance(result, dict) else None
        chosen = outcome.get("optionId") if isinstance(outcome, dict) else None
        chosen_kind = {o: k for o, _, k in options}.get(chosen) if isinstance(chosen, str) else None
        if (
            isinstance(outcome, dict)
            and outcome.get("outcome") == "selected"
            and chosen_kind in ("allow_once", "allow_always")
        ):
            outcomes.append(str(chosen))
            if chosen_kind == "allow_always":
                self.session.always_allowed.add(kind)
            return True, ""
        if isinstance(outcome, dict) and outcome.get("outcome") == "cancelled":
            outcomes.append("cancelled")
            return False, "The user cancelled the permission request."
        outcomes.append(str(chosen) if chosen is not None else "invalid")
        return False, "The user rejected permission to use this tool."


def text_content(text: str) -> dict[str, Any]:
    """A text block as tool call ``content``."""
    return {"type": "content", "content": {"type": "text", "text": text}}
