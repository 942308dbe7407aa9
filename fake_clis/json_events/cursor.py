"""Fake Cursor Agent (``json-event-stream``, cursor dialect).

Design: docs/design/fakes.md#fake_clis.json_events.cursor
"""

from __future__ import annotations

import os

from fake_clis import ids
from fake_clis.argv import Grammar
from fake_clis.base import CliSpec, FakeRun
from fake_clis.json_events.common import (
    Emulator,
    Fail,
    Session,
    auth_status,
    dumps,
    filtered_help,
    is_old_build,
    now_ms,
    random_alnum,
    read_prompt,
    step_tool_input,
    step_tool_name,
    write_target,
)

# A fake starts hundreds of times per conform: no dataclasses, pathlib, typing or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fake_clis.argv import Parsed
    from fake_clis.scenario import Step

__all__ = ["CURSOR_SPEC", "CURSOR_VERSION"]


CURSOR_VERSION = "2025.11.25-d5b3271"


_CURSOR_MODELS: tuple[tuple[str, str], ...] = (
    ("auto", "Auto"),
    ("composer-1", "Composer 1"),
    ("gpt-5", "GPT-5"),
    ("sonnet-4.5", "Claude 4.5 Sonnet"),
    ("sonnet-4.5-thinking", "Claude 4.5 Sonnet (Thinking)"),
)


def _cursor_grammar(old: bool) -> Grammar:
    """``cursor-agent`` (commander). ``--trust`` only in current builds (seed 000 §6)."""
    flags: dict[str, int] = {
        "--version": 0,
        "--api-key": 1,
        "--header": 1,
        "--print": 0,
        "--output-format": 1,
        "--stream-partial-output": 0,
        "--cloud": 0,
        "--resume": 1,
        "--model": 1,
        "--force": 0,
        "--approve-mcps": 0,
        "--browser": 0,
        "--workspace": 1,
        "--help": 0,
    }
    if not old:
        flags["--trust"] = 0
    aliases = {
        "-v": "--version",
        "-H": "--header",
        "-p": "--print",
        "-c": "--cloud",
        "-f": "--force",
        "-h": "--help",
    }
    leaf = Grammar(flags={"--help": 0}, aliases={"-h": "--help"})
    return Grammar(
        flags=flags,
        aliases=aliases,
        positionals=(0, -1),
        repeatable=frozenset({"--header"}),
        subcommands={
            "status": leaf,
            "whoami": leaf,
            "models": leaf,
            "login": leaf,
            "logout": leaf,
            "ls": leaf,
            "create-chat": leaf,
        },
    )


_CURSOR_HELP = """Usage: cursor-agent [options] [command] [prompt...]

Start the Cursor Agent

Arguments:
  prompt                       Initial prompt for the agent

Options:
  -v, --version                Output the version number
  --api-key <key>              API key for authentication (can also use CURSOR_API_KEY env var)
  -H, --header <header>        Add custom header to agent requests (format: 'Name: Value')
  -p, --print                  Print responses to console (for scripts or non-interactive use).
                               Has access to all tools, including write and bash. (default: false)
  --output-format <format>     Output format (only works with --print): text | json |
                               stream-json (default: "text")
  --stream-partial-output      Stream partial output as individual text deltas (only works with
                               --print and stream-json format) (default: false)
  -c, --cloud                  Start in cloud mode (default: false)
  --resume [chatId]            Resume a chat session. (default: false)
  --model <model>              Model to use (e.g., gpt-5, sonnet-4, sonnet-4-thinking)
  -f, --force                  Force allow commands unless explicitly denied (default: false)
  --approve-mcps               Automatically approve all MCP servers (default: false)
  --browser                    Enable browser automation support (default: false)
  --workspace <path>           Workspace directory to use (defaults to current working directory)
  --trust                      Trust the current workspace without prompting (only works with
                               --print/headless mode)
  -h, --help                   Display help for command

Commands:
  login                        Authenticate with Cursor
  logout                       Sign out and clear stored authentication
  status|whoami                View authentication status
  models                       List available models
  create-chat                  Create a new empty chat and return its ID
  ls                           Resume a chat session
  help [command]               Display help for command"""

_CURSOR_OUTPUT_FORMATS = ("text", "json", "stream-json")


def _cursor_models_text() -> str:
    lines = ["Available models", ""]
    lines += [f"{model_id} - {label}" for model_id, label in _CURSOR_MODELS]
    return "\n".join(lines) + "\n"


class _Cursor(Emulator):
    """One ``cursor-agent --print`` turn (wire §A.5 Cursor, ref §2.2 cursor-agent)."""

    def __init__(
        self, run: FakeRun, session: Session, *, model: str, fmt: str, partial: bool
    ) -> None:
        super().__init__(run)
        self.session = session
        self.model = model
        self.fmt = fmt
        self.partial = partial
        #: The assistant message being streamed (replayed whole when it ends).
        self.segment = ""
        self.request_id = ids.uuid4()
        #: The current model call; a tool round ends it and the next text starts another.
        self.model_call_id = ids.uuid4()
        self.tools_ran = False

    def emit(self, frame: dict[str, Any]) -> None:
        if self.fmt == "stream-json":
            super().emit(frame)

    def _frame(self, kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, **fields, "session_id": self.session.id}

    def _assistant(self, text: str, session_id: str | None = None) -> dict[str, Any]:
        return {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            "session_id": session_id or self.session.id,
        }

    def start(self) -> None:
        self.emit(
            self._frame(
                "system",
                subtype="init",
                apiKeySource="login",
                cwd=str(self.run.cwd),
                model=self.model,
                permissionMode="default",
            )
        )
        prompt = self.session.turns[-1]["prompt"]
        self.emit(
            self._frame(
                "user",
                message={"role": "user", "content": [{"type": "text", "text": prompt}]},
            )
        )

    def _next_model_call(self) -> None:
        if self.tools_ran:
            self.model_call_id = ids.uuid4()
            self.tools_ran = False

    def text(self, step: Step) -> None:
        self._next_model_call()
        for chunk in step.chunks:
            if not chunk:
                continue
            if self.partial:
                # ref §2.2: an incremental delta carries a numeric timestamp_ms.
                self.emit({**self._assistant(chunk), "timestamp_ms": now_ms()})
            self.segment += chunk

    def _end_message(self, *, final: bool) -> None:
        """The assistant message ends: its whole text once more (the turn replay).

        ref §2.2 / seed 002 §7.3: a message before tool calls carries its model call's
        ``model_call_id`` (and ``timestamp_ms``); the final one carries neither. Either way
        the dialect reconciles it as a replay, never as a delta.
        """
        if not self.segment:
            return
        frame = self._assistant(self.segment)
        if not final:
            frame["model_call_id"] = self.model_call_id
            frame["timestamp_ms"] = now_ms()
        self.emit(frame)
        self.replies.append(self.segment)
        self.segment = ""

    def thinking(self, step: Step) -> None:
        self._end_message(final=False)
        self._next_model_call()
        for chunk in step.chunks:
            if chunk:
                self.emit(
                    self._frame("thinking", subtype="delta", text=chunk, timestamp_ms=now_ms())
                )
        self.emit(self._frame("thinking", subtype="completed", timestamp_ms=now_ms()))

    def tool(self, step: Step) -> None:
        self._end_message(final=False)
        self.tools_ran = True
        call_id = "toolu_vrtx_" + random_alnum(24)
        kind = step.get("tool")
        failed = bool(step.get("is_error"))
        output = str(step.get("output", ""))
        result: dict[str, Any]
        if kind == "write":
            rel, target, _, content = write_target(self.run, step)
            key = "writeToolCall"
            args: dict[str, Any] = {"path": rel, "fileText": content, "toolCallId": call_id}
            if not failed:
                self.run.write_file(rel, content)
                result = {
                    "success": {
                        "path": str(target),
                        "linesCreated": len(content.splitlines()),
                        "fileSize": len(content.encode("utf-8")),
                    }
                }
            else:
                result = {"error": {"errorMessage": output}}
        elif kind == "shell":
            key = "shellToolCall"
            command = str(step.get("command", ""))
            args = {"command": command, "workingDirectory": str(self.run.cwd), "timeout": 120000}
            outcome = {
                "command": command,
                "workingDirectory": str(self.run.cwd),
                "exitCode": 1 if failed else 0,
                "signal": "",
                "stdout": "" if failed else output,
                "stderr": output if failed else "",
                "executionTime": 12,
            }
            result = {"failure": outcome} if failed else {"success": outcome}
        else:
            key = f"{step_tool_name(step, 'lookup')}ToolCall"
            args = step_tool_input(step)
            result = {"error": {"errorMessage": output}} if failed else {"success": output}
        self.emit(
            self._frame(
                "tool_call",
                subtype="started",
                call_id=call_id,
                tool_call={key: {"args": args}},
                model_call_id=self.model_call_id,
                timestamp_ms=now_ms(),
            )
        )
        self.emit(
            self._frame(
                "tool_call",
                subtype="completed",
                call_id=call_id,
                tool_call={key: {"args": args, "result": result}},
                model_call_id=self.model_call_id,
                timestamp_ms=now_ms(),
            )
        )

    def api_error(self, step: Step) -> int:
        # wire §A.5: on failure the stream ends without `result`; the error is on stderr.
        status = int(step.get("status", 500))
        self.run.err(f"Error: {step.get('message', '')} (status {status})\n")
        self.session.end("".join(self.replies) + self.segment)
        return self.api_error_exit

    def foreign(self) -> None:
        # The user echo of another chat: a frame whose session_id is not this run's.
        other = ids.uuid4()
        self.emit(
            {
                "type": "user",
                "message": {"role": "user", "content": [{"type": "text", "text": "elsewhere"}]},
                "session_id": other,
            }
        )

    def sample_frame(self, text: str) -> tuple[dict[str, Any], tuple[str, ...]]:
        # A read tool's completion: the frame that carries the biggest payloads.
        frame = self._frame(
            "tool_call",
            subtype="completed",
            call_id="toolu_vrtx_" + random_alnum(24),
            tool_call={
                "readToolCall": {
                    "args": {"path": "big.txt"},
                    "result": {"success": {"content": text, "isEmpty": not text}},
                }
            },
        )
        return frame, ("tool_call", "readToolCall", "result", "success", "content")

    def finish(self) -> None:
        self._end_message(final=True)
        full = "".join(self.replies)
        u = self.usage
        duration = self.elapsed_ms()
        result = self._frame(
            "result",
            subtype="success",
            duration_ms=duration,
            duration_api_ms=duration,
            is_error=False,
            result=full,
            request_id=self.request_id,
            usage={
                "inputTokens": u.input,
                "outputTokens": u.output,
                "cacheReadTokens": u.cached_read,
                "cacheWriteTokens": u.cached_write,
            },
        )
        self.session.end(full)
        if self.fmt == "stream-json":
            self.emit(result)
        elif self.fmt == "json":
            self.run.out(dumps(result))
        else:
            self.run.out(full)


def _cursor_main(run: FakeRun) -> int:
    parsed = run.parsed
    if parsed.has("--help"):
        run.out(filtered_help(_CURSOR_HELP, CURSOR_SPEC.optional_flags, is_old_build(run)))
        return 0
    if parsed.has("--version"):
        run.out(CURSOR_VERSION)
        return 0
    command = parsed.command[:1]
    if command in (("status",), ("whoami",)):
        return auth_status(run, CURSOR_SPEC)
    if command == ("models",):
        run.out_raw(_cursor_models_text().encode("utf-8"))
        return 0
    if command == ("create-chat",):
        # A new empty chat whose id a later `--resume <id>` continues.
        chat_id = ids.uuid4()
        run.save_session(chat_id, [])
        run.out(chat_id)
        return 0
    if command:
        # login / logout / ls are interactive (browser flow, chat picker): no TTY here.
        run.err(
            "ERROR Raw mode is not supported on the current process.stdin, which Ink uses as "
            "input stream by default.\n"
        )
        return 1
    try:
        return _cursor_print(run, parsed)
    except Fail as fail:
        run.err(fail.message + "\n")
        return fail.code


def _cursor_print(run: FakeRun, parsed: Parsed) -> int:
    fmt = parsed.value("--output-format", "text") or "text"
    if fmt not in _CURSOR_OUTPUT_FORMATS:
        raise Fail(
            f"error: option '--output-format <format>' argument '{fmt}' is invalid. "
            f"Allowed choices are {', '.join(_CURSOR_OUTPUT_FORMATS)}.",
            1,
        )
    if not parsed.has("--print"):
        # Without --print cursor-agent is an Ink TUI; with no TTY on stdin Ink gives up.
        raise Fail(
            "ERROR Raw mode is not supported on the current process.stdin, which Ink uses as "
            "input stream by default.",
            1,
        )
    workspace = parsed.value("--workspace")
    if workspace is not None:
        if not os.path.isdir(workspace):
            raise Fail(f"Error: Workspace path does not exist: {workspace}", 1)
        run.cwd = os.path.realpath(workspace)
        run.record["workspace"] = workspace
    run.record["force"] = parsed.has("--force")
    run.record["trust"] = parsed.has("--trust")
    resume = parsed.value("--resume")
    prior: dict[str, Any] | None = None
    if resume is not None:
        prior = run.load_session(resume)
        if prior is None:
            raise Fail(f"Error: Chat not found: {resume}", 1)
    prompt = read_prompt(run, parsed.positionals)
    if not prompt.strip():
        raise Fail("Error: No prompt provided. Pass a prompt argument or pipe it on stdin.", 1)
    session = Session(run, resume or ids.uuid4(), prior)
    session.begin(prompt)
    model = parsed.value("--model") or "Auto"
    run.record["model"] = parsed.value("--model")
    partial = parsed.has("--stream-partial-output") and fmt == "stream-json"
    return _Cursor(run, session, model=model, fmt=fmt, partial=partial).drive()


CURSOR_SPEC = CliSpec(
    agent_id="cursor-agent",
    prog="cursor-agent",
    version_output=CURSOR_VERSION,
    grammar=_cursor_grammar,
    style="commander",
    run=_cursor_main,
    version_args=(("--version",), ("-v",)),
    help_args=(("--help",), ("-h",)),
    help_text=_CURSOR_HELP,
    optional_flags=("--trust",),
    models_args=("models",),
    models_output=_cursor_models_text(),
    auth_args=("status",),
    auth_ok=("✓ Logged in as fake.user@example.com", 0),
    auth_missing=("Not logged in. Run `cursor-agent login` to sign in.", 1),
)
