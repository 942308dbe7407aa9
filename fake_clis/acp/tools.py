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
    from collections.abc import Mapping
    from typing import Any

    from fake_clis.scenario import Step

__all__ = ["ToolSteps"]


class ToolSteps(TurnOutput):
    """The ``tool`` scenario step, per agent style."""

    def tool(self, step: Step) -> None:
        tool = str(step.get("tool", "other"))
        call_id = str(step.get("id") or f"call_{ids.uuid4_hex()[:24]}")
        cwd = path_str(self.session.cwd)
        output = step.get("output")
        is_error = bool(step.get("is_error", False))
        if tool == "write":
            path = str(step.get("path", "file.txt"))
            target = path_str(cwd, path)
            content = str(step.get("content", ""))
            agent = self.server.agent
            given = path if agent.write_path_as_given else target
            call: dict[str, Any] = {
                "toolCallId": call_id,
                "title": f"Write {path}",
                "kind": "edit",
                "status": "pending",
                "rawInput": {agent.write_path_key: given, "content": content},
                "locations": [{"path": target}],
            }
        elif tool == "shell":
            command = str(step.get("command", ""))
            raw_input: dict[str, Any] = {"command": command}
            if self.server.agent.shell_input_cwd:
                raw_input["cwd"] = cwd
            call = {
                "toolCallId": call_id,
                "title": command,
                "kind": "execute",
                "status": "pending",
                "rawInput": raw_input,
            }
            if self.server.agent.shell_locations_cwd:
                call["locations"] = [{"path": cwd}]
        else:
            name = str(step.get("name", "other"))
            kind = name if name in TOOL_KINDS else "other"
            call = {
                "toolCallId": call_id,
                "title": name,
                "kind": kind,
                "status": "pending",
                "rawInput": dict(step.get("input") or {}),
            }
        style = self.server.agent.tool_style
        if style == "kimi":
            self.kimi_tool(step, call)
            return
        if style == "hermes" and tool == "write":
            self.hermes_write(step)
            return
        if style == "hermes" and tool == "shell":
            self.hermes_shell(step)
            return
        self.update({"sessionUpdate": "tool_call", **call})
        record: dict[str, Any] = {k: call[k] for k in ("toolCallId", "title", "kind")}
        self.turn.tools.append(record)
        if tool == "write" and not is_error:
            asked = {k: call[k] for k in ("toolCallId", "title", "kind", "status", "rawInput")}
            asked["locations"] = call.get("locations", [])
            allowed, why = self.permission(str(call["kind"]), asked)
            if not allowed:
                record["status"] = "failed"
                self.update(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": call_id,
                        "status": "failed",
                        "rawOutput": why,
                        "content": [text_content(why)],
                    }
                )
                self.check()
                return
        self.update(
            {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}
        )
        final: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
        if tool == "write" and not is_error:
            rel = str(step.get("path", "file.txt"))
            written = path_str(cwd, rel)
            old = read_text(written) if os.path.isfile(written) else None
            self.write(rel, str(step.get("content", "")))
            text = str(output) if output is not None else f"Wrote {rel}"
            final.update(
                status="completed",
                rawOutput=text,
                content=[
                    {
                        "type": "diff",
                        "path": written,
                        "oldText": old,
                        "newText": str(step.get("content", "")),
                    }
                ],
            )
        else:
            text = str(output) if output is not None else ("error" if is_error else "")
            final.update(
                status="failed" if is_error else "completed",
                rawOutput=text,
                content=[text_content(text)],
            )
        record["status"] = final["status"]
        self.update(final)

    def kimi_tool(self, step: Step, call: Mapping[str, Any]) -> None:
        """kimi-cli 1.51.0 (recordings/real/kimi/happy.jsonl, shell.jsonl): ``tool_call``
        ``in_progress`` titled ``WriteFile`` / ``Shell`` with empty text content and no
        ``kind`` / ``rawInput``; an update titled ``<Title>: <path or command>`` carrying the
        arguments as JSON text; a permission request for writes and shell commands (options
        approve / approve_for_session / reject); the ``completed`` update with the diff or
        the output. The call id is ``<step id>/<model's id>``."""
        tool = str(step.get("tool", "other"))
        cwd = path_str(self.session.cwd)
        call_id = f"{self.step_id}/{call['toolCallId']}"
        is_error = bool(step.get("is_error", False))
        rel = str(step.get("path", "file.txt"))
        content = str(step.get("content", ""))
        command = str(step.get("command", ""))
        arguments: dict[str, Any]
        if tool == "write":
            title, detail = "WriteFile", rel
            arguments = {"path": path_str(cwd, rel), "content": content}
        elif tool == "shell":
            title, detail, arguments = "Shell", command, {"command": command}
        else:
            title, detail = str(call["title"]), ""
            arguments = dict(step.get("input") or {})
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
        written = path_str(cwd, rel)
        old = read_text(written) if os.path.isfile(written) else ""
        diff = {"type": "diff", "path": written, "oldText": old, "newText": content}
        if tool in ("write", "shell") and not is_error:
            if tool == "write":
                shown = [diff]
            else:
                ask = f"Requesting approval to perform: Run command `{command}`"
                shown = [text_content(ask)]
            asked = {"toolCallId": call_id, "title": full, "content": shown}
            allowed, why = self.permission(str(call["kind"]), asked)
            if not allowed:
                record["status"] = "failed"
                failed = {"toolCallId": call_id, "status": "failed"}
                self.update(
                    {"sessionUpdate": "tool_call_update", **failed, "content": [text_content(why)]}
                )
                self.check()
                return
        final: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
        output = step.get("output")
        if tool == "write" and not is_error:
            self.write(rel, content)
            final.update(status="completed", content=[diff])
        else:
            text = str(output) if output is not None else ("error" if is_error else "")
            final.update(status="failed" if is_error else "completed")
            final["content"] = [text_content(text)]
        record["status"] = final["status"]
        self.update(final)

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
        output = step.get("output")
        text = str(output) if output is not None else ("error" if failed else "")
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
            output = step.get("output")
            self.hermes_close(record, "failed", str(output) if output is not None else "error")
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
