"""Fake Gemini CLI (``json-event-stream``, gemini dialect).

Design: docs/design/fakes.md#fake_clis.json_events.gemini
"""

from __future__ import annotations

import os

from fake_clis import ids
from fake_clis.argv import VARIADIC, Grammar
from fake_clis.base import CliSpec, FakeRun
from fake_clis.json_events.common import (
    Emulator,
    Fail,
    Session,
    dumps,
    filtered_help,
    is_old_build,
    iso_now,
    most_recent_session,
    now_ms,
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

__all__ = ["GEMINI_SPEC", "GEMINI_VERSION"]


GEMINI_VERSION = "0.61.0"


def _gemini_grammar(old: bool) -> Grammar:
    flags: dict[str, int] = {
        "--model": 1,
        "--prompt": 1,
        "--prompt-interactive": 1,
        "--sandbox": 0,
        "--yolo": 0,
        "--approval-mode": 1,
        "--debug": 0,
        "--allowed-tools": VARIADIC,
        "--allowed-mcp-server-names": VARIADIC,
        "--extensions": VARIADIC,
        "--list-extensions": 0,
        "--include-directories": VARIADIC,
        "--screen-reader": 0,
        "--output-format": 1,
        "--resume": 1,
        "--list-sessions": 0,
        "--delete-session": 1,
        "--experimental-acp": 0,
        "--version": 0,
        "--help": 0,
    }
    if not old:
        flags["--skip-trust"] = 0
    return Grammar(
        flags=flags,
        aliases={
            "-m": "--model",
            "-p": "--prompt",
            "-i": "--prompt-interactive",
            "-s": "--sandbox",
            "-y": "--yolo",
            "-d": "--debug",
            "-e": "--extensions",
            "-l": "--list-extensions",
            "-o": "--output-format",
            "-r": "--resume",
            "-v": "--version",
            "-h": "--help",
        },
        positionals=(0, -1),
        repeatable=frozenset({"--allowed-tools", "--extensions", "--include-directories"}),
    )


_GEMINI_HELP = """Usage: gemini [options] [command]

Gemini CLI - Launch an interactive CLI, use -p/--prompt for non-interactive mode

Positionals:
  query  Positional prompt. Defaults to one-shot; use -i/--prompt-interactive for interactive.

Options:
  -m, --model                     Model                                               [string]
  -p, --prompt                    Prompt. Appended to input on stdin (if any).        [string]
  -i, --prompt-interactive        Execute the provided prompt and continue in interactive mode
  -s, --sandbox                   Run in sandbox?                                    [boolean]
  -y, --yolo                      Automatically accept all actions (aka YOLO mode)   [boolean]
      --approval-mode             Set the approval mode
                              [string] [choices: "default", "auto_edit", "yolo", "plan"]
  -d, --debug                     Run in debug mode                                  [boolean]
      --allowed-tools             Tools that are allowed to run without confirmation   [array]
      --allowed-mcp-server-names  Allowed MCP server names                             [array]
  -e, --extensions                A list of extensions to use                          [array]
  -l, --list-extensions           List all available extensions and exit             [boolean]
      --include-directories       Additional directories to include in the workspace   [array]
      --screen-reader             Enable screen reader mode for accessibility        [boolean]
  -o, --output-format             The format of the CLI output
                                   [string] [choices: "text", "json", "stream-json"]
  -r, --resume                    Resume a previous session ("latest", an index or an id)
      --list-sessions             List available sessions for the current project and exit
      --delete-session            Delete a session by index number                    [string]
      --skip-trust                Trust the current workspace for this session       [boolean]
      --experimental-acp          Starts the agent in ACP mode                       [boolean]
  -v, --version                   Show version number                                [boolean]
  -h, --help                      Show help                                          [boolean]"""

_GEMINI_OUTPUT_FORMATS = ("text", "json", "stream-json")
_GEMINI_APPROVAL_MODES = ("default", "auto_edit", "yolo", "plan")


class _Gemini(Emulator):
    """One headless Gemini CLI turn (wire §A.5 Gemini; the real gemini in recordings/real)."""

    def __init__(self, run: FakeRun, session: Session, *, model: str, fmt: str) -> None:
        super().__init__(run)
        self.session = session
        self.model = model
        self.fmt = fmt

    def emit(self, frame: dict[str, Any]) -> None:
        if self.fmt == "stream-json":
            super().emit(frame)

    def _frame(self, kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "timestamp": iso_now(), **fields}

    def start(self) -> None:
        self.emit(self._frame("init", session_id=self.session.id, model=self.model))
        prompt = self.session.turns[-1]["prompt"]
        self.emit(self._frame("message", role="user", content=prompt))

    def text(self, step: Step) -> None:
        # The real gemini (recordings/real/gemini): one assistant message with delta:true per
        # SSE chunk.
        for chunk in step.chunks:
            if chunk:
                self.emit(self._frame("message", role="assistant", content=chunk, delta=True))
        self.replies.append("".join(step.chunks))

    def thinking(self, step: Step) -> None:
        """stream-json has no event for thoughts (wire §A.5): nothing is printed."""
        self.run.record["thinking_hidden"] = self.run.record.get("thinking_hidden", 0) + 1

    def tool(self, step: Step) -> None:
        kind = step.get("tool")
        failed = bool(step.get("is_error"))
        output = str(step.get("output", ""))
        if kind == "write":
            rel, target, existed, content = write_target(self.run, step)
            name = "write_file"
            params: dict[str, Any] = {"file_path": str(target), "content": content}
            if not failed:
                self.run.write_file(rel, content)
                verb = "overwrote" if existed else "created and wrote to new file"
                output = output or f"Successfully {verb}: {target}."
        elif kind == "shell":
            name = "run_shell_command"
            # The parameters are what the model sent: the scenario step gives only the
            # command (live differential, gemini 0.61.0: {"command"} when the model sends
            # no description; it is optional).
            params = {"command": str(step.get("command", ""))}
        else:
            name = step_tool_name(step, "lookup")
            params = step_tool_input(step)
        tool_id = f"{name}-{now_ms()}-{ids.token_hex(6)}"
        self.emit(self._frame("tool_use", tool_name=name, tool_id=tool_id, parameters=params))
        if failed:
            self.emit(
                self._frame(
                    "tool_result",
                    tool_id=tool_id,
                    status="error",
                    error={"type": "execution_failed", "message": output or "tool failed"},
                )
            )
        else:
            self.emit(self._frame("tool_result", tool_id=tool_id, status="success", output=output))

    def _stats(self) -> dict[str, Any]:
        u = self.usage
        return {
            "total_tokens": u.input + u.output + u.thought,
            "input_tokens": u.input,
            "output_tokens": u.output,
            "cached": u.cached_read,
            "input": max(0, u.input - u.cached_read),
            "duration_ms": self.elapsed_ms(),
            "tool_calls": self.tool_calls,
        }

    def api_error(self, step: Step) -> int:
        # The real gemini (recordings/real/gemini): result{status:"error", error{type, message}}
        # on API errors.
        status = int(step.get("status", 500))
        message = f"[API Error: {step.get('message', '')} (Status: {status})]"
        self.emit(
            self._frame(
                "result",
                status="error",
                error={"type": "FatalAPIError", "message": message},
                stats=self._stats(),
            )
        )
        if self.fmt != "stream-json":
            self.run.err(message + "\n")
        self.session.end("".join(self.replies))
        return self.api_error_exit

    def foreign(self) -> None:
        # The only frame with an id is init: one for a session that is not this run's.
        self.emit(self._frame("init", session_id=ids.uuid4(), model=self.model))

    def sample_frame(self, text: str) -> tuple[dict[str, Any], tuple[str, ...]]:
        return self._frame("message", role="assistant", content=text, delta=True), ("content",)

    def finish(self) -> None:
        full = "".join(self.replies)
        self.session.end(full)
        if self.fmt == "stream-json":
            self.emit(self._frame("result", status="success", stats=self._stats()))
        elif self.fmt == "json":
            self.run.out(
                dumps({"session_id": self.session.id, "response": full, "stats": self._stats()})
            )
        else:
            self.run.out(full)


def _gemini_main(run: FakeRun) -> int:
    parsed = run.parsed
    if parsed.has("--version"):
        run.out(GEMINI_VERSION)
        return 0
    if parsed.has("--help"):
        run.out(filtered_help(_GEMINI_HELP, GEMINI_SPEC.optional_flags, is_old_build(run)))
        return 0
    if parsed.has("--list-sessions"):
        return _gemini_list_sessions(run)
    deleted = parsed.value("--delete-session")
    if deleted is not None:
        session = _gemini_session(run, deleted)
        if session is None:
            run.err(f'Error: Invalid session identifier "{deleted}".\n')
            return 1
        os.unlink(os.path.join(run.session_dir, f"{session['id']}.json"))
        run.out(f"Deleted session {deleted}.")
        return 0
    if parsed.has("--list-extensions"):
        run.out("No extensions installed.")
        return 0
    try:
        return _gemini_run(run, parsed)
    except Fail as fail:
        run.err(fail.message + "\n")
        return fail.code


def _gemini_session(run: FakeRun, ref: str) -> dict[str, Any] | None:
    """``--resume latest``, ``--resume <index>`` (1-based, as listed) or ``--resume <id>``."""
    if ref == "latest":
        return most_recent_session(run)
    if ref.isdigit():
        saved = run.saved_sessions()
        index = int(ref)
        return run.load_session(saved[index - 1]) if 1 <= index <= len(saved) else None
    return run.load_session(ref)


def _gemini_list_sessions(run: FakeRun) -> int:
    """``--list-sessions``: the saved sessions, oldest first, with the index --resume takes."""
    saved = run.saved_sessions()
    if not saved:
        run.out("No previous sessions found for this project.")
        return 0
    run.out(f"Available sessions for this project ({len(saved)}):")
    for index, session_id in enumerate(saved, start=1):
        run.out(f"  {index}. [{session_id}]")
    return 0


def _gemini_run(run: FakeRun, parsed: Parsed) -> int:
    fmt = parsed.value("--output-format", "text") or "text"
    if fmt not in _GEMINI_OUTPUT_FORMATS:
        choices = ", ".join(f'"{c}"' for c in _GEMINI_OUTPUT_FORMATS)
        raise Fail(
            f'Invalid values:\n  Argument: output-format, Given: "{fmt}", Choices: {choices}', 1
        )
    if parsed.has("--yolo") and parsed.has("--approval-mode"):
        raise Fail("Arguments yolo and approval-mode are mutually exclusive", 1)
    mode = parsed.value("--approval-mode")
    if mode is not None and mode not in _GEMINI_APPROVAL_MODES:
        choices = ", ".join(f'"{c}"' for c in _GEMINI_APPROVAL_MODES)
        raise Fail(
            f'Invalid values:\n  Argument: approval-mode, Given: "{mode}", Choices: {choices}', 1
        )
    run.record["yolo"] = parsed.has("--yolo") or mode == "yolo"
    run.record["model"] = parsed.value("--model")
    prior: dict[str, Any] | None = None
    resume = parsed.value("--resume")
    if resume is not None:
        prior = _gemini_session(run, resume)
        if prior is None:
            raise Fail(
                f'Error resuming session: Invalid session identifier "{resume}". '
                "Use --list-sessions to see available sessions.",
                1,
            )
    # Gemini reads stdin when it is not a TTY; -p / a positional query is appended to it.
    stdin_text = run.read_stdin_text()
    extra = parsed.value("--prompt")
    if extra is None and parsed.positionals:
        extra = " ".join(parsed.positionals)
    if extra is not None:
        prompt = f"{stdin_text}\n\n{extra}" if stdin_text else extra
        run.record["prompt"] = prompt
        run.record["prompt_via"] = "stdin+argv" if stdin_text else "argv"
    else:
        prompt = stdin_text
    if not prompt.strip():
        raise Fail(
            "No input provided via stdin. Input can be provided by piping data into gemini "
            "or using the --prompt option.",
            1,
        )
    session = Session(run, str(prior["id"]) if prior else ids.uuid4(), prior)
    session.begin(prompt)
    model = parsed.value("--model") or "auto"
    return _Gemini(run, session, model=model, fmt=fmt).drive()


GEMINI_SPEC = CliSpec(
    agent_id="gemini",
    prog="gemini",
    version_output=GEMINI_VERSION,
    grammar=_gemini_grammar,
    style="yargs",
    run=_gemini_main,
    version_args=(("--version",), ("-v",)),
    help_args=(("--help",), ("-h",)),
    help_text=_GEMINI_HELP,
    # seed 002 §4.3 (via the def): several builds hide or reject --skip-trust.
    optional_flags=("--skip-trust",),
)
