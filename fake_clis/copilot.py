"""Fake GitHub Copilot CLI: the ``copilot-stream-json`` emulator.

What the real CLI does, and where it is written down:

* **Invocation** (seed 000 §5.7): ``copilot --allow-all-tools --output-format json [--model M]
  [--add-dir D]...``. Options are parsed by commander (``error: unknown option '--x'``, exit 1).
* **Prompt** (seed 000 §5.7): ``-p <text>`` is the prompt; without ``-p`` the prompt is read
  from stdin to EOF. ``-p -`` is *not* a stdin sentinel: the prompt is the one character
  ``-`` (the fake runs that literal prompt and records it).
* **Frames** (ref §2.3, wire §A.5 Copilot): dotted ``type`` with the payload under ``data``,
  an ``id``/``timestamp``/``parentId`` per event and ``ephemeral: true`` on the streaming
  ones (``session.tools_updated``, ``assistant.*_delta``). ``assistant.turn_start``,
  ``assistant.reasoning_delta``, ``assistant.message_delta``, ``assistant.message``,
  ``tool.execution_start`` / ``tool.execution_complete``, ``assistant.turn_end``; the
  terminal ``result`` has its fields at top level: ``success``, ``exitCode`` and
  ``usage{premiumRequests, totalApiDurationMs, sessionDurationMs, codeChanges}`` with no
  token counts (github/copilot-cli#4107), so a scenario's token counts are not printed.
* **Tools** (seed 000 §5.7, real-clis second batch: "one-shot needs ``--allow-all-tools``"):
  the write tool is ``create {path, file_text}``, the shell tool ``bash {command}``. Without
  ``--allow-all-tools`` (or an ``--allow-tool`` naming the tool kind) a headless run cannot
  ask, so the call completes with ``success: false`` and the denial
  ``Permission denied and could not request permission from user``; nothing is written.
  The real CLI may instead block on the approval prompt; the fake chooses the denial so a
  missing flag fails fast and visibly.
* **Sessions**: ``--resume <id>`` continues a saved session; an unknown id is an error
  (exit 1; the wording is the fake's). ``--continue`` picks the latest session of the cwd.
* **Errors**: a failed model call is ``session.error`` followed by ``result{success: false,
  exitCode: 1}`` and exit 1.
"""

from __future__ import annotations

import datetime
import json
import time
import uuid
from typing import Any

from fake_clis.argv import VARIADIC, Grammar
from fake_clis.base import CliSpec, FakeRun
from fake_clis.claude_stream import padded_line
from fake_clis.scenario import Step

__all__ = ["COPILOT_VERSION", "SPECS"]

COPILOT_VERSION = "1.0.102"
_DEFAULT_MODEL = "claude-sonnet-4.6"
_DENIED = "Permission denied and could not request permission from user"

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
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


class _Copilot:
    """One non-interactive Copilot run writing ``--output-format json`` events."""

    def __init__(self, run: FakeRun, prompt: str, session_id: str) -> None:
        self.run = run
        self.prompt = prompt
        self.session_id = session_id
        self.json = run.parsed.value("--output-format", "text") == "json"
        self.model = run.parsed.value("--model") or _DEFAULT_MODEL
        self.parent: str | None = None
        self.turn = 0
        self.in_turn = False
        self.message: list[str] = []
        self.tool_requests: list[dict[str, Any]] = []
        self.answer: list[str] = []
        self.files: list[str] = []
        self.lines_added = 0
        p = run.parsed
        self.allow_all = p.has("--allow-all-tools") or p.has("--allow-all")
        self.allowed = {t.strip() for v in p.values("--allow-tool") for t in v.split(",")}
        self.denied = {t.strip() for v in p.values("--deny-tool") for t in v.split(",")}

    def event(self, kind: str, data: dict[str, Any], *, ephemeral: bool = False) -> None:
        event_id = str(uuid.uuid4())
        frame: dict[str, Any] = {
            "type": kind,
            "data": data,
            "id": event_id,
            "timestamp": _now(),
            "parentId": self.parent,
        }
        if ephemeral:
            frame["ephemeral"] = True
        else:
            self.parent = event_id
        if self.json:
            self.run.out(json.dumps(frame, ensure_ascii=False, separators=(",", ":")))

    def start_turn(self) -> None:
        if not self.in_turn:
            self.in_turn = True
            self.event("assistant.turn_start", {"turnId": str(self.turn)})

    def end_turn(self) -> None:
        if not self.in_turn:
            return
        if self.message or self.tool_requests:
            data: dict[str, Any] = {
                "messageId": str(uuid.uuid4()),
                "content": "".join(self.message),
                "toolRequests": self.tool_requests,
            }
            self.event("assistant.message", data)
        self.event("assistant.turn_end", {"turnId": str(self.turn)})
        self.turn += 1
        self.in_turn = False
        self.message, self.tool_requests = [], []

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
        call_id = str(step.get("id") or f"toolu_{uuid.uuid4().hex[:24]}")
        command = ""
        if kind == "write":
            target = str((self.run.cwd / str(step.get("path", "file.txt"))).resolve())
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
        self.tool_requests.append({"toolCallId": call_id, "name": name, "arguments": arguments})
        self.end_message_only()
        self.event(
            "tool.execution_start",
            {"toolCallId": call_id, "toolName": name, "arguments": arguments},
        )
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
        else:
            content = str(step.get("output", ""))
        result = {"content": content, "detailedContent": content}
        self.event(
            "tool.execution_complete",
            {"toolCallId": call_id, "success": success, "result": result},
        )
        self.end_turn()

    def end_message_only(self) -> None:
        """``assistant.message`` (with its tool requests) is written before the tools run."""
        data: dict[str, Any] = {
            "messageId": str(uuid.uuid4()),
            "content": "".join(self.message),
            "toolRequests": self.tool_requests,
        }
        self.event("assistant.message", data)
        self.message, self.tool_requests = [], []

    def main(self) -> int:
        run = self.run
        started = time.monotonic()
        self.event(
            "session.start",
            {
                "sessionId": self.session_id,
                "version": 1,
                "producer": "copilot-agent",
                "copilotVersion": COPILOT_VERSION,
                "startTime": _now(),
                "context": {"cwd": str(run.cwd)},
            },
        )
        self.event("session.tools_updated", {"model": self.model}, ephemeral=True)
        self.event("user.message", {"content": self.prompt})
        error: str | None = None
        data: dict[str, Any]
        for step in run.scenario.steps:
            kind = step.kind
            if kind == "thinking":
                self.start_turn()
                rid = str(uuid.uuid4())
                for chunk in step.chunks:
                    data = {"reasoningId": rid, "deltaContent": chunk}
                    self.event("assistant.reasoning_delta", data, ephemeral=True)
            elif kind == "text":
                self.start_turn()
                if not self.message:
                    self.answer = []
                mid = str(uuid.uuid4())
                for chunk in step.chunks:
                    data = {"messageId": mid, "deltaContent": chunk}
                    self.event("assistant.message_delta", data, ephemeral=True)
                self.message.append(step.text)
                self.answer.append(step.text)
            elif kind == "tool":
                self.tool(step)
            elif kind == "usage":
                continue  # Copilot reports no token counts (github/copilot-cli#4107).
            elif kind == "api_error":
                self.end_turn()
                status = int(step.get("status", 500))
                error = f"Execution failed: {status} {step.get('message', '')}".strip()
                data = {"errorType": "query", "message": error, "statusCode": status}
                self.event("session.error", data)
                break
            elif kind == "malformed":
                text = step.text or "a frame cut short"
                line = json.dumps(
                    {"type": "assistant.message_delta", "data": {"deltaContent": text}}
                )
                run.out(line[: len(line) // 2])
            elif kind == "foreign":
                # A frame of another session: the parser cannot claim it (-> raw).
                data = {"sessionId": str(uuid.uuid4()), "version": 1, "producer": "copilot-agent"}
                self.event("session.start", data)
            elif kind == "oversize":
                frame = {"type": "session.info", "data": {"infoType": "notice"}}
                frame["id"] = str(uuid.uuid4())
                run.out(padded_line(frame, "message", int(step.get("bytes", 1))))
            elif kind == "crash" and step.get("mid_line"):
                run.out_raw(b'{"type":"assistant.message_delta","data":{"deltaCont')
                run.exit(int(step.get("exit_code", 1)))
            elif not run.run_common_step(step):
                raise ValueError(f"copilot fake cannot render step kind {kind!r}")
        self.end_turn()
        elapsed = int((time.monotonic() - started) * 1000)
        exit_code = run.scenario.exit_code or (1 if error else 0)
        usage = {
            "premiumRequests": max(1, self.turn),
            "totalApiDurationMs": elapsed,
            "sessionDurationMs": elapsed,
            "codeChanges": {
                "linesAdded": self.lines_added,
                "linesRemoved": 0,
                "filesModified": self.files,
            },
        }
        result = {
            "type": "result",
            "timestamp": _now(),
            "sessionId": self.session_id,
            "success": error is None,
            "exitCode": exit_code,
            "usage": usage,
        }
        if self.json:
            run.out(json.dumps(result, ensure_ascii=False, separators=(",", ":")))
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
    elif p.has("--continue") and run.session_dir.is_dir():
        files = sorted(run.session_dir.glob("*.json"), key=lambda f: f.stat().st_mtime)
        for path in reversed(files):
            data = run.load_session(path.stem)
            turns = data.get("turns", []) if data else []
            if data and turns and turns[-1].get("cwd") == str(run.cwd):
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
