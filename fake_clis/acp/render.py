"""A prompt's scenario steps as ``session/update`` notifications.

Design: docs/design/fakes.md#fake_clis.acp.render
"""

from __future__ import annotations

import os

from fake_clis import ids, jsonio
from fake_clis.acp.process import AgentProcess
from fake_clis.acp.wire import (
    CONTEXT_SIZE,
    TOOL_KINDS,
    ApiError,
    Compaction,
    Session,
    Stop,
    Turn,
    chunk_update,
    dumps,
)
from fake_clis.base import path_str, read_text

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fake_clis.scenario import Step

__all__ = ["TurnRenderer"]


class TurnRenderer:
    """Renders the scenario's steps as ``session/update`` notifications for one prompt."""

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
        kind = step.kind
        if kind == "text":
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
        elif kind == "thinking":
            for chunk in step.chunks:
                self.check()
                self.update(chunk_update("agent_thought_chunk", chunk))
                self.turn.thinking.append(chunk)
        elif kind == "tool":
            # hermes starts the text after a tool with its separator even when no text came
            # before (recordings/real/hermes/shell.jsonl: "\n\nThe command printed hi.").
            self.text_ended = True
            self.tool(step)
        elif kind == "usage":
            self.usage(step)
        elif kind == "sleep":
            if self.server.channel.wait_cancel(self.prompt_id, float(step.get("ms", 0)) / 1000):
                raise Stop
        elif kind == "api_error":
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
        elif kind == "malformed":
            line = dumps(
                self.notification(chunk_update("agent_message_chunk", step.text or "lost"))
            )
            self.run.out(line[: len(line) // 2])
        elif kind == "foreign":
            foreign = {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": f"foreign-{ids.uuid4()}",
                    "update": chunk_update("agent_message_chunk", "text of another session"),
                },
            }
            self.run.out(dumps(foreign))
        elif kind == "oversize":
            self.run.out(self.oversize_line(int(step.get("bytes", 1))))
        elif kind == "crash" and step.get("mid_line"):
            line = dumps(self.notification(chunk_update("agent_message_chunk", "cut off")))
            self.run.out_raw(line[: len(line) // 2].encode("utf-8"))
            self.run.exit(int(step.get("exit_code", 1)))
        elif not self.run.run_common_step(step):
            raise ValueError(f"ACP fake cannot render step kind {kind!r}")

    def notification(self, update: dict[str, Any]) -> dict[str, Any]:
        params = {"sessionId": self.session.session_id, "update": update}
        return {"jsonrpc": "2.0", "method": "session/update", "params": params}

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

    # -- tools ---------------------------------------------------------------------

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
                        "content": [_text_content(why)],
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
                content=[_text_content(text)],
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
        self.update({"sessionUpdate": "tool_call", **begin, "content": [_text_content("")]})
        args_text = jsonio.dumps(arguments, ensure_ascii=False)
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "title": full,
                "status": "in_progress",
                "content": [_text_content(args_text)],
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
                shown = [_text_content(ask)]
            asked = {"toolCallId": call_id, "title": full, "content": shown}
            allowed, why = self.permission(str(call["kind"]), asked)
            if not allowed:
                record["status"] = "failed"
                failed = {"toolCallId": call_id, "status": "failed"}
                self.update(
                    {"sessionUpdate": "tool_call_update", **failed, "content": [_text_content(why)]}
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
            final["content"] = [_text_content(text)]
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
        self.update({"sessionUpdate": "tool_call", **call, "content": [_text_content(note)]})
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
                "content": [_text_content(text)],
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


def _text_content(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}
