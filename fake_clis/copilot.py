"""Fake GitHub Copilot CLI: the ``copilot-stream-json`` emulator.

Design: docs/design/fakes.md#fake_clis.copilot
"""

from __future__ import annotations

import time

from fake_clis import ids, jsonio
from fake_clis.argv import VARIADIC, Grammar
from fake_clis.base import CliSpec, FakeRun
from fake_clis.claude_stream import padded_line
from fake_clis.clock import iso_utc_ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fake_clis.scenario import Step

__all__ = ["COPILOT_VERSION", "SPECS"]

COPILOT_VERSION = "1.0.102"
_DEFAULT_MODEL = "claude-sonnet-4.6"
_DENIED = "Permission denied and could not request permission from user"
#: copilot 1.0.102 retries a failed model call 5 times (recordings/real/copilot/api_error.jsonl).
_RETRIES = 5

#: (flags, metavar, description, optional?) in help order.
_OPTIONS: tuple[tuple[str, str, str, bool], ...] = (
    ("-p, --prompt", "<text>", "Execute a prompt in non-interactive mode", False),
    ("-i, --interactive", "<prompt>", "Start interactive mode and run this prompt", False),
    ("--output-format", "<format>", 'Output format (choices: "text", "json")', False),
    ("--model", "<model>", "Set the AI model to use", False),
    ("--allow-all-tools", "", "Allow all tools to run without confirmation", False),
    ("--allow-tool", "<tools...>", "Allow specific tools (e.g. 'write', 'shell(git:*)')", False),
    ("--deny-tool", "<tools...>", "Deny specific tools; takes precedence over allows", False),
    ("--allow-all-paths", "", "Allow access to any path", False),
    ("--allow-all-urls", "", "Allow access to all URLs", False),
    ("--allow-all, --yolo", "", "Enable all permissions (tools, paths and URLs)", True),
    ("--add-dir", "<directory>", "Add a directory to the allowed list (repeatable)", False),
    ("--continue", "", "Resume the most recent session", False),
    ("--resume", "<sessionId>", "Resume a previous session", False),
    ("--agent", "<agent>", "Use a custom agent", False),
    ("--additional-mcp-config", "<json>", "Additional MCP servers (JSON or @file)", False),
    ("--disable-builtin-mcps", "", "Disable the built-in MCP servers", False),
    ("--no-auto-update", "", "Do not download CLI updates automatically", False),
    ("--disable-client-telemetry", "", "Disable client telemetry", False),
    ("--log-level", "<level>", "Log level (none, error, warning, info, debug, all)", False),
    ("--log-dir", "<directory>", "Directory for log files", False),
    ("--no-color", "", "Disable all colour output", False),
    ("-s, --silent", "", "Output only the agent response (with -p)", False),
    ("--stream", "<mode>", 'Streaming mode (choices: "on", "off")', False),
    ("-v, --version", "", "Show version information", False),
    ("-h, --help", "", "Display help for command", False),
)
#: Help lines are filtered by substring, so each optional flag is named by a spelling no
#: other line contains ("--yolo", not "--allow-all", which "--allow-all-tools" contains).
_OPTIONAL_FLAGS = tuple(spec.split(", ")[-1] for spec, _, _, optional in _OPTIONS if optional)


def _grammar(old: bool) -> Grammar:
    flags: dict[str, int] = {}
    aliases: dict[str, str] = {}
    for spec, meta, _, optional in _OPTIONS:
        if optional and old:
            continue
        names = spec.split(", ")
        canonical = next((n for n in names if n.startswith("--")), names[-1])
        flags[canonical] = 0 if not meta else (VARIADIC if meta.endswith("...>") else 1)
        for alias in names:
            if alias != canonical:
                aliases[alias] = canonical
    return Grammar(
        flags=flags,
        aliases=aliases,
        repeatable=frozenset({"--add-dir", "--additional-mcp-config"}),
    )


def _help() -> str:
    lines = ["Usage: copilot [options] [command]", "", "GitHub Copilot CLI", "", "Options:"]
    lines += [f"  {(s + ' ' + m).rstrip():<34} {d}" for s, m, d, _ in _OPTIONS]
    lines += ["", "Commands:", "  help [topic]                       Display help information"]
    return "\n".join(lines)


def _now() -> str:
    return iso_utc_ms(zone="+00:00")


class _Copilot:
    """One non-interactive Copilot run writing ``--output-format json`` events.

    The frame order is copilot 1.0.102's (recordings/real/copilot/*.jsonl): one
    ``assistant.turn_start`` .. ``assistant.turn_end`` per model call, the call bracketed by
    ``model.call_start`` / ``model.call_finished``; ``assistant.message`` after the call,
    then ``assistant.reasoning``, the tools, ``model.call_final_result``; one
    ``assistant.idle`` before ``result``.
    """

    def __init__(self, run: FakeRun, prompt: str, session_id: str) -> None:
        self.run = run
        self.prompt = prompt
        self.session_id = session_id
        self.json = run.parsed.value("--output-format", "text") == "json"
        self.model = run.parsed.value("--model") or _DEFAULT_MODEL
        self.parent: str | None = None
        self.turn_parent: str | None = None
        self.interaction = ids.uuid4()
        self.user_message = ids.uuid4()
        self.turn = 0
        self.in_turn = False
        self.message_id: str | None = None
        self.message: list[str] = []
        self.reasoning_id: str | None = None
        self.reasoning: list[str] = []
        self.tool_requests: list[dict[str, Any]] = []
        self.answer: list[str] = []
        self.files: list[str] = []
        self.lines_added = 0
        self.api_ms = 0
        p = run.parsed
        self.allow_all = p.has("--allow-all-tools") or p.has("--allow-all")
        self.allowed = {t.strip() for v in p.values("--allow-tool") for t in v.split(",")}
        self.denied = {t.strip() for v in p.values("--deny-tool") for t in v.split(",")}

    def event(self, kind: str, data: dict[str, Any], *, ephemeral: bool = False) -> None:
        event_id = ids.uuid4()
        frame: dict[str, Any] = {"type": kind, "data": data}
        if ephemeral:
            frame["ephemeral"] = True
        frame.update(id=event_id, timestamp=_now(), parentId=self.parent)
        if not ephemeral:
            self.parent = event_id
        if self.json:
            self.run.out(jsonio.dumps(frame, ensure_ascii=False, separators=(",", ":")))

    def start_turn(self) -> None:
        """``assistant.turn_start`` then ``model.call_start``: each turn is one model call."""
        if not self.in_turn:
            self.in_turn = True
            turn = str(self.turn)
            self.event("assistant.turn_start", {"turnId": turn, "interactionId": self.interaction})
            self.event("model.call_start", {"turnId": turn, "model": self.model}, ephemeral=True)

    def final_result(self, result: str) -> None:
        data = {"model": self.model, "isByok": False, "result": result}
        self.event("model.call_final_result", data, ephemeral=True)

    def finish_call(self) -> None:
        """Close the model call: ``model.call_finished``, ``assistant.message``, then
        ``assistant.reasoning`` when the call reasoned (recordings/real/copilot/happy.jsonl)."""
        turn = str(self.turn)
        data: dict[str, Any] = {
            "turnId": turn,
            "dispatchDurationMs": 1,
            "outcome": "success",
            "interactionId": self.interaction,
        }
        self.api_ms += 1
        self.event("model.call_finished", data, ephemeral=True)
        message: dict[str, Any] = {
            "messageId": self.message_id or ids.uuid4(),
            "originatingMessageId": self.user_message,
            "model": self.model,
            "content": "".join(self.message),
            "toolRequests": self.tool_requests,
            "interactionId": self.interaction,
            "turnId": turn,
        }
        if self.reasoning:
            message["reasoningText"] = "".join(self.reasoning)
        self.event("assistant.message", message)
        if self.reasoning:
            data = {"reasoningId": self.reasoning_id, "content": "".join(self.reasoning)}
            self.event("assistant.reasoning", data, ephemeral=True)
        self.message_id, self.message, self.tool_requests = None, [], []
        self.reasoning_id, self.reasoning = None, []

    def end_turn(self) -> None:
        if not self.in_turn:
            return
        self.finish_call()
        self.final_result("success")
        self.close_turn()

    def close_turn(self) -> None:
        self.event("assistant.turn_end", {"turnId": str(self.turn)})
        self.turn += 1
        self.in_turn = False

    def may_run(self, kind: str, name: str, command: str) -> bool:
        """Copilot asks before file writes and shell commands; read-only tools just run."""
        if kind == "shell":
            first = command.split(" ", 1)[0]
            names = {"shell", f"shell({first})", f"shell({first}:*)"}
        else:
            names = {"write"} if kind == "write" else {name}
        if names & self.denied:
            return False
        return kind == "other" or self.allow_all or bool(names & self.allowed)

    def tool(self, step: Step) -> None:
        kind = str(step.get("tool", "other"))
        call_id = str(step.get("id") or f"toolu_{ids.uuid4_hex()[:24]}")
        command = ""
        if kind == "write":
            target = self.run.resolve(str(step.get("path", "file.txt")))
            name = "create"
            arguments: dict[str, Any] = {
                "path": target,
                "file_text": str(step.get("content", "")),
            }
        elif kind == "shell":
            command = str(step.get("command", ""))
            name, arguments = "bash", {"command": command, "description": f"Run {command}"}
        else:
            name, arguments = str(step.get("name", "view")), dict(step.get("input", {}))
        self.start_turn()
        # The call's arguments stream as `assistant.tool_call_delta` (one piece here: the
        # split is the model's), then the call closes and the tool runs.
        delta = {
            "toolCallId": call_id,
            "toolName": name,
            "toolType": "function",
            "inputDelta": jsonio.dumps(arguments, ensure_ascii=False),
        }
        self.event("assistant.tool_call_delta", delta, ephemeral=True)
        self.tool_requests.append(
            {"toolCallId": call_id, "name": name, "arguments": arguments, "type": "function"}
        )
        self.finish_call()
        data: dict[str, Any] = {
            "toolCallId": call_id,
            "toolName": name,
            "arguments": arguments,
            "turnId": str(self.turn),
            "model": self.model,
        }
        self.event("tool.execution_start", data)
        self.final_result("success")
        success = not bool(step.get("is_error", False))
        if not self.may_run(kind, name, command):
            success, content = False, _DENIED
        elif kind == "write":
            chars = len(arguments["file_text"])
            done = f"Created file {arguments['path']} with {chars} characters"
            failed = f"Failed to create file {arguments['path']}"
            content = str(step.get("output") or (done if success else failed))
            if success:
                self.run.write_file(str(step.get("path", "file.txt")), arguments["file_text"])
                self.files.append(arguments["path"])
                self.lines_added += arguments["file_text"].count("\n")
                data = {"infoType": "file_created", "message": arguments["path"]}
                self.event("session.info", data, ephemeral=True)
        else:
            content = str(step.get("output", ""))
            if kind == "shell" and content:
                # recordings/real/copilot/shell.jsonl: the output streams before the result.
                self.event("session.background_tasks_changed", {}, ephemeral=True)
                data = {"toolCallId": call_id, "stream": "stdout", "text": content, "sequence": 0}
                self.event("tool.shell_output", data, ephemeral=True)
                data = {"toolCallId": call_id, "partialOutput": content}
                self.event("tool.execution_partial_result", data, ephemeral=True)
                self.event("session.background_tasks_changed", {}, ephemeral=True)
        result = {"content": content, "detailedContent": content}
        data = {
            "toolCallId": call_id,
            "model": self.model,
            "interactionId": self.interaction,
            "turnId": str(self.turn),
            "success": success,
            "result": result,
        }
        self.event("tool.execution_complete", data)
        self.close_turn()

    def api_error(self, step: Step) -> str:
        """A failed model call: copilot 1.0.102 retries it 5 times (``model.call_failure``,
        ``assistant.turn_retry`` and ``session.info`` per retry), closes the turn and prints
        ``session.error`` (recordings/real/copilot/api_error.jsonl)."""
        status = int(step.get("status", 500))
        message = str(step.get("message", ""))
        code = str(step.get("code", "api_error"))
        self.start_turn()
        turn = str(self.turn)
        for attempt in range(_RETRIES + 1):
            if attempt:
                data: dict[str, Any] = {"turnId": turn, "model": self.model, "reason": code}
                self.event("assistant.turn_retry", data, ephemeral=True)
                data = {
                    "infoType": "model_retry",
                    "message": "Request failed due to a transient API error. Retrying...",
                }
                self.event("session.info", data, ephemeral=True)
                data = {"turnId": turn, "model": self.model}
                self.event("model.call_start", data, ephemeral=True)
            data = {
                "model": self.model,
                "statusCode": status,
                "retryAttempt": attempt,
                "failureKind": "api",
                "errorMessage": jsonio.dumps({"message": message, "code": code}),
                "errorCode": code,
            }
            self.event("model.call_failure", data, ephemeral=True)
            data = {
                "turnId": turn,
                "dispatchDurationMs": 1,
                "outcome": "error",
                "interactionId": self.interaction,
            }
            self.event("model.call_finished", data, ephemeral=True)
        self.final_result(f"http_{status // 100}xx")
        self.close_turn()
        error = (
            f"Failed to get response from the AI model; retried {_RETRIES} times "
            f"(total retry wait time: {_RETRIES:.2f} seconds) Last error: {status} {message}"
        ).strip()
        data = {
            "errorType": "query",
            "message": error,
            "statusCode": status,
            "originatingMessageId": self.user_message,
        }
        self.event("session.error", data)
        return error

    def main(self) -> int:
        run = self.run
        started = time.monotonic()
        # recordings/real/copilot/*.jsonl: no `session.start`; the run opens with these.
        skills: dict[str, Any] = {"skills": [], "invalidSkills": []}
        self.event("session.skills_loaded", skills, ephemeral=True)
        self.event("session.mcp_servers_loaded", {"servers": []}, ephemeral=True)
        self.event("session.tools_updated", {"model": self.model}, ephemeral=True)
        user = {
            "content": self.prompt,
            "messageId": self.user_message,
            "interactionId": self.interaction,
            "turnId": "0",
        }
        self.event("user.message", user)
        error: str | None = None
        data: dict[str, Any]
        for step in run.scenario.steps:
            kind = step.kind
            if kind == "thinking":
                self.start_turn()
                self.reasoning_id = self.reasoning_id or ids.uuid4()
                for chunk in step.chunks:
                    data = {"reasoningId": self.reasoning_id, "deltaContent": chunk}
                    self.event("assistant.reasoning_delta", data, ephemeral=True)
                self.reasoning.append(step.text)
            elif kind == "text":
                self.start_turn()
                if not self.message:
                    self.answer = []
                if self.message_id is None:
                    self.message_id = ids.uuid4()
                    data = {"messageId": self.message_id}
                    self.event("assistant.message_start", data, ephemeral=True)
                for chunk in step.chunks:
                    data = {"messageId": self.message_id, "deltaContent": chunk}
                    self.event("assistant.message_delta", data, ephemeral=True)
                self.message.append(step.text)
                self.answer.append(step.text)
            elif kind == "tool":
                self.tool(step)
            elif kind == "usage":
                continue  # Copilot reports no token counts (github/copilot-cli#4107).
            elif kind == "api_error":
                self.end_turn()
                error = self.api_error(step)
                break
            elif kind == "malformed":
                text = step.text or "a frame cut short"
                line = jsonio.dumps(
                    {"type": "assistant.message_delta", "data": {"deltaContent": text}}
                )
                run.out(line[: len(line) // 2])
            elif kind == "foreign":
                # A frame of another session: the parser cannot claim it (-> raw).
                data = {"sessionId": ids.uuid4(), "version": 1, "producer": "copilot-agent"}
                self.event("session.start", data)
            elif kind == "oversize":
                frame = {"type": "session.info", "data": {"infoType": "notice"}}
                frame["id"] = ids.uuid4()
                run.out(padded_line(frame, "message", int(step.get("bytes", 1))))
            elif kind == "crash" and step.get("mid_line"):
                run.out_raw(b'{"type":"assistant.message_delta","data":{"deltaCont')
                run.exit(int(step.get("exit_code", 1)))
            elif not run.run_common_step(step):
                raise ValueError(f"copilot fake cannot render step kind {kind!r}")
        self.end_turn()
        self.event("assistant.idle", {}, ephemeral=True)
        elapsed = int((time.monotonic() - started) * 1000)
        exit_code = run.scenario.exit_code or (1 if error else 0)
        usage = {
            "premiumRequests": max(1, self.turn),
            "totalApiDurationMs": self.api_ms,
            "sessionDurationMs": elapsed,
            "codeChanges": {
                "linesAdded": self.lines_added,
                "linesRemoved": 0,
                "filesModified": self.files,
            },
        }
        # recordings/real/copilot/*.jsonl: `result` has no `success` field; the outcome is
        # `exitCode` alone.
        result = {
            "type": "result",
            "timestamp": _now(),
            "sessionId": self.session_id,
            "exitCode": exit_code,
            "usage": usage,
        }
        if self.json:
            run.out(jsonio.dumps(result, ensure_ascii=False, separators=(",", ":")))
        else:
            run.out("".join(self.answer))
            if not run.parsed.has("--silent"):
                run.err(f"\nTotal usage est:       {usage['premiumRequests']} Premium request\n")
        if error and not self.json:
            run.err(f"Error: {error}\n")
        return exit_code


def _session(run: FakeRun) -> tuple[str, list[dict[str, Any]]] | str:
    """The session to run in, or an error message (``--resume`` of an unknown id)."""
    p = run.parsed
    resume = p.value("--resume")
    prior: dict[str, Any] | None = None
    if resume is not None:
        prior = run.load_session(resume)
        if prior is None:
            return f"Error: no session found with ID {resume}"
    elif p.has("--continue"):
        for session_id in reversed(run.saved_sessions()):
            data = run.load_session(session_id)
            turns = data.get("turns", []) if data else []
            if data and turns and turns[-1].get("cwd") == run.cwd:
                prior = data
                break
    if prior is not None:
        turns = list(prior.get("turns", []))
        run.record.update(resumed=True, prior_turns=len(turns))
        return str(prior["id"]), turns
    run.record.update(resumed=False, prior_turns=0)
    return run.new_session_id(), []


def _main(run: FakeRun) -> int:
    p = run.parsed
    fmt = p.value("--output-format", "text")
    if fmt not in ("text", "json"):
        run.err(
            f"error: option '--output-format <format>' argument '{fmt}' is invalid. "
            "Allowed choices are text, json.\n"
        )
        return 1
    if p.has("--interactive"):
        run.err("Error: interactive mode requires a terminal (stdin is not a TTY)\n")
        return 1
    prompt = p.value("--prompt")
    if prompt is not None:
        # seed 000 §5.7: `-p -` is the literal one-character prompt "-", not stdin.
        run.record.update(prompt=prompt, prompt_via="argv")
    else:
        prompt = run.read_stdin_text()
        if not prompt.strip():
            run.err("Error: no prompt: pass -p <text> or pipe the prompt on stdin\n")
            return 1
    found = _session(run)
    if isinstance(found, str):
        run.err(found + "\n")
        return 1
    session_id, turns = found
    run.record["session_id"] = session_id
    copilot = _Copilot(run, prompt, session_id)
    code = copilot.main()
    turns.append({"prompt": prompt, "reply": "".join(copilot.answer), "cwd": str(run.cwd)})
    run.save_session(session_id, turns)
    run.linger_if_asked()
    return code


SPECS: dict[str, CliSpec] = {
    "copilot": CliSpec(
        agent_id="copilot",
        prog="copilot",
        version_output=f"{COPILOT_VERSION}\nCommit: 5f2a9c1",
        grammar=_grammar,
        style="commander",
        run=_main,
        version_args=(("--version",), ("-v",)),
        help_args=(("--help",), ("-h",)),
        help_text=_help(),
        optional_flags=_OPTIONAL_FLAGS,
    ),
}
