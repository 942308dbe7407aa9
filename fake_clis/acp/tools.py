"""Tool steps as ACP tool calls, in the shape each agent sends them.

The common shape (``tool_call`` ``pending`` with ``rawInput`` and ``locations``, then
``in_progress``, then ``completed`` or ``failed``), and kimi's and hermes' own shapes as
recorded live; writes ask for permission first.

Design: docs/design/fakes.md#fake_clis.acp.render
"""

from __future__ import annotations

import os

from fake_clis import ids, jsonio
from fake_clis.acp.turn_output import TurnOutput, text_content
from fake_clis.acp.wire import TOOL_KINDS
from fake_clis.base import path_str, read_text

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from fake_clis.scenario import Step

__all__ = ["ToolSteps"]


class ToolSteps(TurnOutput):
    """The ``tool`` scenario step, per agent style."""

    def tool(self, step: Step) -> None:
        """Render one tool step: the agent's own shape when it has one, else the common."""
        tool = str(step.get("tool", "other"))
        call = self.tool_call(tool, step)
        style = self.server.agent.tool_style
        if style == "kimi":
            self.kimi_tool(step, call)
        elif style == "hermes" and tool in _HERMES_TOOLS:
            _HERMES_TOOLS[tool](self, step)
        else:
            self.common_tool(tool, step, call)

    def tool_call(self, tool: str, step: Step) -> dict[str, Any]:
        """The common ``tool_call`` (``pending``) announcing ``step``, by tool."""
        call_id = str(step.get("id") or f"call_{ids.uuid4_hex()[:24]}")
        shape = _CALL_SHAPES.get(tool, ToolSteps.other_call)
        return {"toolCallId": call_id, **shape(self, step)}

    def write_call(self, step: Step) -> dict[str, Any]:
        """A write: kind ``edit``, the path in ``rawInput`` (as given or full, per agent)."""
        path = str(step.get("path", "file.txt"))
        target = path_str(path_str(self.session.cwd), path)
        agent = self.server.agent
        given = path if agent.write_path_as_given else target
        return {
            "title": f"Write {path}",
            "kind": "edit",
            "status": "pending",
            "rawInput": {agent.write_path_key: given, "content": str(step.get("content", ""))},
            "locations": [{"path": target}],
        }

    def shell_call(self, step: Step) -> dict[str, Any]:
        """A command: kind ``execute``, the cwd in ``rawInput`` / ``locations`` per agent."""
        command = str(step.get("command", ""))
        cwd = path_str(self.session.cwd)
        agent = self.server.agent
        raw_input: dict[str, Any] = {"command": command}
        if agent.shell_input_cwd:
            raw_input["cwd"] = cwd
        call: dict[str, Any] = {
            "title": command,
            "kind": "execute",
            "status": "pending",
            "rawInput": raw_input,
        }
        if agent.shell_locations_cwd:
            call["locations"] = [{"path": cwd}]
        return call

    def other_call(self, step: Step) -> dict[str, Any]:
        """A named tool: its name as title, as kind when it is an ACP tool kind."""
        name = str(step.get("name", "other"))
        return {
            "title": name,
            "kind": name if name in TOOL_KINDS else "other",
            "status": "pending",
            "rawInput": dict(step.get("input") or {}),
        }

    def common_tool(self, tool: str, step: Step, call: dict[str, Any]) -> None:
        """``tool_call`` ``pending``, a permission request for a write, ``in_progress``,
        then ``completed`` or ``failed``."""
        self.update({"sessionUpdate": "tool_call", **call})
        record: dict[str, Any] = {k: call[k] for k in ("toolCallId", "title", "kind")}
        self.turn.tools.append(record)
        writes = tool == "write" and not step.get("is_error", False)
        if writes and not self.write_allowed(call, record):
            return
        call_id = call["toolCallId"]
        self.update(
            {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}
        )
        final: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
        final.update(self.write_result(step) if writes else _text_result(step))
        record["status"] = final["status"]
        self.update(final)

    def write_allowed(self, call: dict[str, Any], record: dict[str, Any]) -> bool:
        """Ask before a write; a denial closes the call ``failed`` with the reason."""
        asked = {k: call[k] for k in ("toolCallId", "title", "kind", "status", "rawInput")}
        asked["locations"] = call.get("locations", [])
        allowed, why = self.permission(str(call["kind"]), asked)
        if allowed:
            return True
        record["status"] = "failed"
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call["toolCallId"],
                "status": "failed",
                "rawOutput": why,
                "content": [text_content(why)],
            }
        )
        self.check()
        return False

    def write_result(self, step: Step) -> dict[str, Any]:
        """Write the file; the ``completed`` fields with its diff."""
        rel = str(step.get("path", "file.txt"))
        written = path_str(path_str(self.session.cwd), rel)
        old = read_text(written) if os.path.isfile(written) else None
        content = str(step.get("content", ""))
        self.write(rel, content)
        output = step.get("output")
        diff = {"type": "diff", "path": written, "oldText": old, "newText": content}
        text = str(output) if output is not None else f"Wrote {rel}"
        return {"status": "completed", "rawOutput": text, "content": [diff]}

    def kimi_tool(self, step: Step, call: Mapping[str, Any]) -> None:
        """kimi-cli 1.51.0 (recordings/real/kimi/happy.jsonl, shell.jsonl): ``tool_call``
        ``in_progress`` titled ``WriteFile`` / ``Shell`` with empty text content and no
        ``kind`` / ``rawInput``; an update titled ``<Title>: <path or command>`` carrying the
        arguments as JSON text; a permission request for writes and shell commands (options
        approve / approve_for_session / reject); the ``completed`` update with the diff or
        the output. The call id is ``<step id>/<model's id>``."""
        tool = str(step.get("tool", "other"))
        call_id = f"{self.step_id}/{call['toolCallId']}"
        title, detail, arguments = self.kimi_arguments(tool, step, call)
        full = f"{title}: {detail}" if detail else title
        begin = {"toolCallId": call_id, "title": title, "status": "in_progress"}
        self.update({"sessionUpdate": "tool_call", **begin, "content": [text_content("")]})
        args_text = jsonio.dumps(arguments, ensure_ascii=False)
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "title": full,
                "status": "in_progress",
                "content": [text_content(args_text)],
            }
        )
        record: dict[str, Any] = {"toolCallId": call_id, "title": full}
        self.turn.tools.append(record)
        diff = self.kimi_diff(step)
        is_error = bool(step.get("is_error", False))
        asks = tool in _KIMI_ASKS and not is_error
        if asks and not self.kimi_allowed(tool, step, call, record, diff):
            return
        final: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
        if tool == "write" and not is_error:
            self.write(str(step.get("path", "file.txt")), str(step.get("content", "")))
            final.update(status="completed", content=[diff])
        else:
            final.update(status="failed" if is_error else "completed")
            final["content"] = [text_content(_output_text(step))]
        record["status"] = final["status"]
        self.update(final)

    def kimi_arguments(
        self, tool: str, step: Step, call: Mapping[str, Any]
    ) -> tuple[str, str, dict[str, Any]]:
        """kimi's tool title, the detail after it, and the arguments it shows."""
        if tool == "write":
            rel = str(step.get("path", "file.txt"))
            content = str(step.get("content", ""))
            return (
                "WriteFile",
                rel,
                {"path": path_str(path_str(self.session.cwd), rel), "content": content},
            )
        if tool == "shell":
            command = str(step.get("command", ""))
            return "Shell", command, {"command": command}
        return str(call["title"]), "", dict(step.get("input") or {})

    def kimi_diff(self, step: Step) -> dict[str, Any]:
        """The diff a kimi write shows (asking and done): the file before, the content after."""
        written = path_str(path_str(self.session.cwd), str(step.get("path", "file.txt")))
        old = read_text(written) if os.path.isfile(written) else ""
        return {
            "type": "diff",
            "path": written,
            "oldText": old,
            "newText": str(step.get("content", "")),
        }

    def kimi_allowed(
        self,
        tool: str,
        step: Step,
        call: Mapping[str, Any],
        record: dict[str, Any],
        diff: dict[str, Any],
    ) -> bool:
        """Ask before a kimi write (showing the diff) or command; a denial closes the call
        ``failed`` with the reason."""
        if tool == "write":
            shown = [diff]
        else:
            ask = f"Requesting approval to perform: Run command `{step.get('command', '')}`"
            shown = [text_content(ask)]
        call_id = record["toolCallId"]
        asked = {"toolCallId": call_id, "title": record["title"], "content": shown}
        allowed, why = self.permission(str(call["kind"]), asked)
        if allowed:
            return True
        record["status"] = "failed"
        failed = {"toolCallId": call_id, "status": "failed"}
        self.update({"sessionUpdate": "tool_call_update", **failed, "content": [text_content(why)]})
        self.check()
        return False

    def hermes_shell(self, step: Step) -> None:
        """hermes-agent 0.19.0 (recordings/real/hermes/shell.jsonl): a ``terminal`` call is one
        ``tool_call`` (id ``tc-<12 hex>``, title ``terminal: <command>``, kind ``execute``, no
        locations, ``$ <command>`` as its content, no ``rawInput``, no status), then one
        ``completed`` update whose content is a markdown list of the output and the exit
        code. With ``--yolo`` nothing is asked. A failing command is reported ``failed`` with
        its exit code (not recorded live: the fake's choice, so the failure stays visible)."""
        command = str(step.get("command", ""))
        record = self.hermes_call(f"terminal: {command}", "execute", [], f"$ {command}")
        self.check()
        failed = bool(step.get("is_error", False))
        text = _output_text(step)
        exit_code = int(step.get("exit_code", 1 if failed else 0))
        result = f"terminal result\n- **output:** {text.rstrip()}\n- **exit_code:** {exit_code}"
        self.hermes_close(record, "failed" if failed else "completed", result, kind="execute")

    def hermes_call(
        self, title: str, kind: str, locations: list[dict[str, str]], note: str
    ) -> dict[str, Any]:
        """Announce one hermes tool call (id ``tc-<12 hex>``, ``note`` as its content, no
        ``rawInput``, no status) and return its record in the turn."""
        call: dict[str, Any] = {
            "toolCallId": f"tc-{ids.uuid4_hex()[:12]}",
            "title": title,
            "kind": kind,
            "locations": locations,
        }
        self.update({"sessionUpdate": "tool_call", **call, "content": [text_content(note)]})
        record: dict[str, Any] = {k: call[k] for k in ("toolCallId", "title", "kind")}
        self.turn.tools.append(record)
        return record

    def hermes_close(self, record: dict[str, Any], status: str, text: str, **extra: str) -> None:
        """End a hermes tool call with one ``tool_call_update`` carrying ``text``."""
        record["status"] = status
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": record["toolCallId"],
                **extra,
                "status": status,
                "content": [text_content(text)],
            }
        )

    def hermes_write(self, step: Step) -> None:
        """hermes-agent 0.19.0 (recordings/real/hermes/happy.jsonl): the write is one
        ``tool_call`` (id ``tc-<12 hex>``, title ``write: <path>``, kind ``edit``, the path as
        given in ``locations``, a note as its content, no ``rawInput``); the permission request
        is about a call of its own (``edit-approval-<n>``, ``rawInput {tool: write_file,
        arguments}``, options allow_once / deny). No ``tool_call_update`` follows an approved
        write. A rejected one is closed with a ``failed`` update (not recorded live: the
        fake's choice, so the denial is visible)."""
        rel = str(step.get("path", "file.txt"))
        content = str(step.get("content", ""))
        note = f"Preparing write to {rel}. Approval prompt shows the diff."
        record = self.hermes_call(f"write: {rel}", "edit", [{"path": rel}], note)
        if step.get("is_error"):
            self.hermes_close(record, "failed", _output_text(step))
            return
        self.session.approvals += 1
        asked = {
            "toolCallId": f"edit-approval-{self.session.approvals}",
            "title": f"Approve edit: {rel}",
            "kind": "edit",
            "status": "pending",
            "rawInput": {"tool": "write_file", "arguments": {"path": rel, "content": content}},
            "content": [{"type": "diff", "path": rel, "newText": content}],
        }
        allowed, why = self.permission("edit", asked)
        if not allowed:
            self.hermes_close(record, "failed", why)
            self.check()
            return
        self.write(rel, content)
        record["status"] = "completed"


def _output_text(step: Step) -> str:
    """The tool's output as the step gives it, else ``error`` for a failure, else nothing."""
    output = step.get("output")
    if output is not None:
        return str(output)
    return "error" if step.get("is_error", False) else ""


def _text_result(step: Step) -> dict[str, Any]:
    """The closing fields of a call that writes nothing: its output, ``failed`` or not."""
    text = _output_text(step)
    status = "failed" if step.get("is_error", False) else "completed"
    return {"status": status, "rawOutput": text, "content": [text_content(text)]}


#: The common ``tool_call`` fields (after its id) by scenario tool; any other is a named one.
_CALL_SHAPES: dict[str, Callable[[ToolSteps, Step], dict[str, Any]]] = {
    "write": ToolSteps.write_call,
    "shell": ToolSteps.shell_call,
}
#: hermes' own shapes (recorded live); its other tools take the common one.
_HERMES_TOOLS: dict[str, Callable[[ToolSteps, Step], None]] = {
    "write": ToolSteps.hermes_write,
    "shell": ToolSteps.hermes_shell,
}
#: The tools kimi asks permission for.
_KIMI_ASKS = ("write", "shell")
