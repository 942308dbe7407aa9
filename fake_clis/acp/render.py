"""A prompt's scenario steps as ``session/update`` notifications.

Design: docs/design/fakes.md#fake_clis.acp.render
"""

from __future__ import annotations

from fake_clis import ids
from fake_clis.acp.tools import ToolSteps
from fake_clis.acp.wire import (
    CONTEXT_SIZE,
    ApiError,
    Compaction,
    Stop,
    chunk_update,
    dumps,
)
from fake_clis.base import path_str

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from fake_clis.scenario import Step

__all__ = ["TurnRenderer"]


class TurnRenderer(ToolSteps):
    """Renders the scenario's steps as ``session/update`` notifications for one prompt."""

    def render(self, start: int = 0) -> None:
        """Render the steps from ``start`` (a continuation starts after its compaction)."""
        steps = self.run.scenario.steps
        for index in range(start, len(steps)):
            self.check()
            step = steps[index]
            if step.kind == "compaction" and self.server.agent.native_continue:
                self.compaction(index, step)
            self.step(step)

    def compaction(self, index: int, step: Step) -> None:
        """seed 000 "AMR compaction continuation": stop the turn here. ``pending_tool``
        first announces a write that never ends (``in_progress``, no terminal update)."""
        if step.get("pending_tool"):
            call_id = f"call_{ids.uuid4_hex()[:24]}"
            target = path_str(self.session.cwd, "pending.txt")
            self.update(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": call_id,
                    "title": "Write pending.txt",
                    "kind": "edit",
                    "status": "pending",
                    "rawInput": {"path": target, "content": ""},
                    "locations": [{"path": target}],
                }
            )
            self.update(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call_id,
                    "status": "in_progress",
                }
            )
            record = {"toolCallId": call_id, "title": "Write pending.txt", "kind": "edit"}
            self.turn.tools.append({**record, "status": "in_progress"})
        raise Compaction(index, step)

    def step(self, step: Step) -> None:
        """Render one step with its kind's handler (:data:`_STEPS`)."""
        _STEPS.get(step.kind, TurnRenderer.common_step)(self, step)

    def common_step(self, step: Step) -> None:
        """A step every fake renders alike (stderr, exit, ...); any other is an error."""
        if not self.run.run_common_step(step):
            raise ValueError(f"ACP fake cannot render step kind {step.kind!r}")

    def text_step(self, step: Step) -> None:
        separator = self.server.agent.text_separator
        if self.text_ended and separator:
            # hermes: the text of a later model message starts with the separator
            # (recordings/real/hermes/happy.jsonl: "\n\nDone: hello.html is ready.").
            chunks = [separator + step.chunks[0], *step.chunks[1:]]
        else:
            chunks = list(step.chunks)
        self.text_ended = False
        for chunk in chunks:
            self.check()
            self.update(chunk_update("agent_message_chunk", chunk))
            self.turn.text.append(chunk)

    def thinking_step(self, step: Step) -> None:
        for chunk in step.chunks:
            self.check()
            self.update(chunk_update("agent_thought_chunk", chunk))
            self.turn.thinking.append(chunk)

    def tool_step(self, step: Step) -> None:
        # hermes starts the text after a tool with its separator even when no text came
        # before (recordings/real/hermes/shell.jsonl: "\n\nThe command printed hi.").
        self.text_ended = True
        self.tool(step)

    def sleep_step(self, step: Step) -> None:
        """Wait; a ``session/cancel`` meanwhile stops the turn."""
        if self.server.channel.wait_cancel(self.prompt_id, float(step.get("ms", 0)) / 1000):
            raise Stop

    def api_error_step(self, step: Step) -> None:
        """The agent's own text for a failed model call, then the turn stops; an agent
        without one fails the prompt (:class:`ApiError`)."""
        reply = self.server.agent.api_error_reply
        if reply is None:
            raise ApiError(step)
        self.server.api_error_seen = True
        text = reply.format(
            status=int(step.get("status", 500)), message=str(step.get("message", ""))
        )
        if text:
            self.update(chunk_update("agent_message_chunk", text))
            self.turn.text.append(text)
        raise Stop

    def malformed_step(self, step: Step) -> None:
        """Half a notification line, then the next line."""
        line = dumps(self.notification(chunk_update("agent_message_chunk", step.text or "lost")))
        self.run.out(line[: len(line) // 2])

    def foreign_step(self, step: Step) -> None:
        """A text chunk for a session the client never opened."""
        foreign = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": f"foreign-{ids.uuid4()}",
                "update": chunk_update("agent_message_chunk", "text of another session"),
            },
        }
        self.run.out(dumps(foreign))

    def oversize_step(self, step: Step) -> None:
        self.run.out(self.oversize_line(int(step.get("bytes", 1))))

    def crash_step(self, step: Step) -> None:
        """``mid_line``: die halfway through a notification; any other crash is common."""
        if not step.get("mid_line"):
            self.common_step(step)
            return
        line = dumps(self.notification(chunk_update("agent_message_chunk", "cut off")))
        self.run.out_raw(line[: len(line) // 2].encode("utf-8"))
        self.run.exit(int(step.get("exit_code", 1)))

    def oversize_line(self, nbytes: int) -> str:
        """One valid ``available_commands_update`` line of exactly ``nbytes`` bytes."""
        command = {"name": "padding", "description": ""}
        frame = self.notification(
            {"sessionUpdate": "available_commands_update", "availableCommands": [command]}
        )
        missing = nbytes - len(dumps(frame).encode("utf-8"))
        if missing > 0:
            command["description"] = "x" * missing
        return dumps(frame)

    def usage(self, step: Step) -> None:
        usage = self.turn.usage
        for source, target in (
            ("input_tokens", "inputTokens"),
            ("output_tokens", "outputTokens"),
            ("cached_read_tokens", "cachedReadTokens"),
            ("cached_write_tokens", "cachedWriteTokens"),
            ("thought_tokens", "thoughtTokens"),
        ):
            value = step.get(source)
            if isinstance(value, int):
                usage[target] = usage.get(target, 0) + value
        usage.setdefault("inputTokens", 0)
        usage.setdefault("outputTokens", 0)
        usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
        update: dict[str, Any] = {
            "sessionUpdate": "usage_update",
            "used": usage["totalTokens"],
            "size": CONTEXT_SIZE,
        }
        cost = step.get("cost_usd")
        if isinstance(cost, (int, float)):
            self.turn.cost += float(cost)
            update["cost"] = {"amount": self.turn.cost, "currency": "USD"}
        self.update(update)

    def api_error_data(self, step: Step) -> dict[str, Any]:
        status = step.get("status")
        data: dict[str, Any] = {"code": step.get("code", "api_error")}
        if isinstance(status, int):
            data["statusCode"] = status
            data["retryable"] = status >= 500 or status == 429
        return data


#: The handler of each step kind the ACP fake renders itself; others are common steps.
_STEPS: dict[str, Callable[[TurnRenderer, Step], None]] = {
    "text": TurnRenderer.text_step,
    "thinking": TurnRenderer.thinking_step,
    "tool": TurnRenderer.tool_step,
    "usage": TurnRenderer.usage,
    "sleep": TurnRenderer.sleep_step,
    "api_error": TurnRenderer.api_error_step,
    "malformed": TurnRenderer.malformed_step,
    "foreign": TurnRenderer.foreign_step,
    "oversize": TurnRenderer.oversize_step,
    "crash": TurnRenderer.crash_step,
}
