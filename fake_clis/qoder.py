"""Fake Qoder CLI (``qodercli``): the ``qoder-stream-json`` emulator.

Never run the real ``qodercli`` here (it dials hard-coded public addresses);
this fake is the only way its def is exercised.

Design: docs/design/fakes.md#fake_clis.qoder
"""

from __future__ import annotations

import os
import time

from fake_clis import ids, jsonio
from fake_clis.argv import VARIADIC, Grammar
from fake_clis.base import CliSpec, FakeRun
from fake_clis.claude_stream import chunk_json, emit, padded_line, truncated_line, user_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fake_clis.scenario import Step

__all__ = ["QODER_VERSION", "SPECS"]

QODER_VERSION = "1.1.52"
_DEFAULT_MODEL = "auto"
_FORMATS = ("text", "json", "stream-json")
_INPUT_FORMATS = ("text", "stream-json")
_MODES = ("default", "acceptEdits", "bypassPermissions", "plan")

_OPTIONS: tuple[tuple[str, str, str, bool], ...] = (
    ("-p, --print", "", "Print the response and exit (non-interactive)", False),
    (
        "--output-format",
        "<format>",
        'Output format (choices: "text", "json", "stream-json")',
        False,
    ),
    ("--input-format", "<format>", 'Input format (choices: "text", "stream-json")', False),
    ("--include-partial-messages", "", "Emit partial message events (stream-json)", True),
    ("--yolo", "", "Skip all permission prompts", False),
    (
        "--permission-mode",
        "<mode>",
        "Permission mode: default, acceptEdits, bypassPermissions, plan",
        False,
    ),
    ("-w, --workspace", "<dir>", "Workspace (project) directory", False),
    ("--model", "<model>", "Model tier: lite, efficient, auto, performance, ultimate", False),
    ("--add-dir", "<directory>", "Additional directory tools may access (repeatable)", False),
    ("--attachment", "<path>", "Attach an image file (repeatable)", False),
    ("-c, --continue", "", "Continue the most recent session", False),
    ("-r, --resume", "<sessionId>", "Resume a session by id", False),
    ("--mcp-config", "<json>", "MCP server configuration (JSON string or file)", False),
    ("--strict-mcp-config", "", "Only use MCP servers from --mcp-config", False),
    ("--allowed-tools", "<tools...>", "Tools allowed without asking", False),
    ("--disallowed-tools", "<tools...>", "Tools that are never allowed", False),
    ("--max-turns", "<turns>", "Maximum agentic turns", False),
    ("-v, --version", "", "Output the version number", False),
    ("-h, --help", "", "Display help for command", False),
)
_OPTIONAL_FLAGS = tuple(spec.split(", ")[-1] for spec, _, _, optional in _OPTIONS if optional)


def _grammar(old: bool) -> Grammar:
    flags: dict[str, int] = {}
    aliases: dict[str, str] = {}
    for spec, meta, _, optional in _OPTIONS:
        if optional and old:
            continue
        names = spec.split(", ")
        flags[names[-1]] = 0 if not meta else (VARIADIC if meta.endswith("...>") else 1)
        for alias in names[:-1]:
            aliases[alias] = names[-1]
    return Grammar(
        flags=flags,
        aliases=aliases,
        positionals=(0, 1),
        repeatable=frozenset({"--add-dir", "--attachment"}),
    )


def _help() -> str:
    lines = ["Usage: qodercli [options] [prompt]", "", "Qoder CLI", "", "Options:"]
    lines += [f"  {(s + ' ' + m).rstrip():<30} {d}" for s, m, d, _ in _OPTIONS]
    return "\n".join(lines)


class _Qoder:
    """One print-mode run; frames only when ``--output-format stream-json``."""

    def __init__(self, run: FakeRun, session_id: str) -> None:
        self.run = run
        p = run.parsed
        self.session_id = session_id
        self.stream = p.value("--output-format", "text") == "stream-json"
        self.partial = p.has("--include-partial-messages")
        self.model = p.value("--model") or _DEFAULT_MODEL
        self.mode = p.value("--permission-mode", "default") or "default"
        self.yolo = p.has("--yolo") or self.mode == "bypassPermissions"
        self.allowed = {t for v in p.values("--allowed-tools") for t in v.split(",")}
        self.message_id = ""
        self.index = 0
        self.messages = 0
        self.usage = {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0}
        self.cost: float | None = None
        self.last_text: list[str] = []

    def out(self, kind: str, body: dict[str, Any]) -> None:
        if not self.stream:
            return
        frame: dict[str, Any] = {"type": kind, **body}
        if kind in ("assistant", "user", "stream_event"):
            frame.setdefault("parent_tool_use_id", None)
        frame.setdefault("session_id", self.session_id)
        frame["uuid"] = ids.uuid4()
        emit(self.run, frame)

    def event(self, event: dict[str, Any]) -> None:
        if self.partial:
            self.out("stream_event", {"event": event})

    def begin(self) -> None:
        if self.message_id:
            return
        self.message_id = f"msg_{ids.uuid4_hex()[:24]}"
        self.index = 0
        self.messages += 1
        self.last_text = []
        self.event({"type": "message_start", "message": self.message([])})

    def end(self, stop_reason: str) -> None:
        if self.message_id:
            delta = {"stop_reason": stop_reason, "stop_sequence": None}
            self.event({"type": "message_delta", "delta": delta, "usage": dict(self.usage)})
            self.event({"type": "message_stop"})
            self.message_id = ""

    def message(self, content: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.message_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": None,
            "usage": dict(self.usage),
        }

    def block(
        self, start: dict[str, Any], deltas: list[dict[str, Any]], final: dict[str, Any]
    ) -> None:
        self.begin()
        index = self.index
        self.index += 1
        self.event({"type": "content_block_start", "index": index, "content_block": start})
        for delta in deltas:
            self.event({"type": "content_block_delta", "index": index, "delta": delta})
        self.event({"type": "content_block_stop", "index": index})
        self.out("assistant", {"message": self.message([final])})

    def tool(self, step: Step) -> None:
        kind = str(step.get("tool", "other"))
        tool_id = str(step.get("id") or f"toolu_{ids.uuid4_hex()[:24]}")
        if kind == "write":
            target = self.run.resolve(str(step.get("path", "file.txt")))
            name = "Write"
            tool_input: dict[str, Any] = {
                "file_path": target,
                "content": str(step.get("content", "")),
            }
        elif kind == "shell":
            name, tool_input = "Bash", {"command": str(step.get("command", ""))}
        else:
            name, tool_input = str(step.get("name", "Read")), dict(step.get("input", {}))
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in chunk_json(tool_input)]
        self.block(
            {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
            deltas,
            {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input},
        )
        is_error = bool(step.get("is_error", False))
        allowed = self.yolo or name in self.allowed or kind == "other"
        if kind == "write" and self.mode == "acceptEdits":
            allowed = True
        if not allowed:
            content = f"Permission to use {name} was denied: print mode cannot ask; pass --yolo."
            is_error = True
        elif kind == "write":
            content = str(step.get("output") or f"File created successfully at: {target}")
            if not is_error:
                self.run.write_file(str(step.get("path", "file.txt")), tool_input["content"])
        else:
            content = str(step.get("output", ""))
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
        self.out(
            "user", {"message": {"role": "user", "content": [{**block, "is_error": is_error}]}}
        )
        self.end("tool_use")

    def result(
        self, started: float, stop_reason: str, error: dict[str, Any] | None
    ) -> dict[str, Any]:
        elapsed = int((time.monotonic() - started) * 1000)
        cost = self.cost
        if cost is None:
            cost = round(self.usage["input_tokens"] * 2e-6 + self.usage["output_tokens"] * 8e-6, 6)
        frame: dict[str, Any] = {
            "type": "result",
            "subtype": "success" if error is None else "error_during_execution",
            "is_error": error is not None,
            "duration_ms": elapsed,
            "duration_api_ms": elapsed,
            "num_turns": max(1, self.messages),
            "result": "".join(self.last_text) if error is None else error.get("result", ""),
            "session_id": self.session_id,
            "total_cost_usd": cost,
            "total_credits": round(cost * 100, 4),
            "usage": dict(self.usage),
            "modelUsage": {
                self.model: {
                    "inputTokens": self.usage["input_tokens"],
                    "outputTokens": self.usage["output_tokens"],
                    "costUSD": cost,
                }
            },
            "stop_reason": stop_reason,
            "permission_denials": [],
        }
        if error is not None:
            frame.update({k: v for k, v in error.items() if k != "result"})
        return frame

    def main(self, prompt: str) -> tuple[int, str]:
        run = self.run
        started = time.monotonic()
        self.out(
            "system",
            {
                "subtype": "init",
                "cwd": str(run.cwd),
                "session_id": self.session_id,
                "model": self.model,
                "tools": ["Bash", "Edit", "Glob", "Grep", "Read", "Write", "WebFetch"],
                "mcp_servers": [],
                "permissionMode": "yolo" if self.yolo else self.mode,
                "qodercli_version": QODER_VERSION,
                "protocol_version": "1",
                "capabilities": ["partial_messages", "attachments"],
            },
        )
        stop_reason = run.scenario.stop_reason
        error: dict[str, Any] | None = None
        if run.scenario.auth == "missing" or run.env.get("FAKE_CLI_AUTH") == "missing":
            # real-clis second batch, qoder: the stream-json result of a run without login.
            error = {
                "result": "Not logged in · Please run /login",
                "error": "Not logged in · Please run /login",
                "error_code": "authentication_failed",
            }
            stop_reason = "error"
        for step in () if error else run.scenario.steps:
            error = self._step(step)
            if error is not None:
                stop_reason = "error"
                break
        if error is None:
            self.begin()
            self.end(stop_reason)
        result = self.result(started, stop_reason, error)
        self.out("result", {k: v for k, v in result.items() if k != "type"})
        fmt = run.parsed.value("--output-format", "text")
        if fmt == "json":
            emit(run, result)
        elif fmt == "text":
            (run.out if error is None else run.err)(str(result["result"]))
        code = run.scenario.exit_code or (1 if error is not None else 0)
        return code, str(result["result"])

    def _step(self, step: Step) -> dict[str, Any] | None:
        """Render one scenario step; an ``api_error`` step returns the run's error."""
        run = self.run
        kind = step.kind
        if kind == "thinking":
            self.block(
                {"type": "thinking", "thinking": ""},
                [{"type": "thinking_delta", "thinking": c} for c in step.chunks],
                {"type": "thinking", "thinking": step.text},
            )
        elif kind == "text":
            self.block(
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": c} for c in step.chunks],
                {"type": "text", "text": step.text},
            )
            self.last_text.append(step.text)
        elif kind == "tool":
            self.tool(step)
        elif kind == "usage":
            self.usage["input_tokens"] += int(step.get("input_tokens", 0))
            self.usage["output_tokens"] += int(step.get("output_tokens", 0))
            self.usage["cache_read_input_tokens"] += int(step.get("cached_read_tokens", 0))
            if step.get("cost_usd") is not None:
                self.cost = (self.cost or 0.0) + float(step.get("cost_usd"))
        elif kind == "api_error":
            self.message_id = ""
            status = int(step.get("status", 500))
            text = f"API Error: {status} {step.get('message', '')}".strip()
            body = {"type": str(step.get("code", "api_error")), "message": text}
            self.out(
                "assistant",
                {"message": {**self.message([]), "id": ids.uuid4()}, "error": body},
            )
            return {
                "result": text,
                "error": text,
                "error_code": str(step.get("code", "api_error")),
            }
        elif kind == "malformed":
            message = self.message([{"type": "text", "text": step.text or "a frame cut short"}])
            run.out(truncated_line({"type": "assistant", "message": message}))
        elif kind == "foreign":
            # Another session's record of a type the parser does not claim (-> raw).
            frame = {
                "subtype": "status",
                "status": "compacting",
                "session_id": ids.uuid4(),
            }
            self.out("system", frame)
        elif kind == "oversize":
            frame = {"type": "keep_alive", "session_id": self.session_id}
            run.out(padded_line(frame, "padding", int(step.get("bytes", 1))))
        elif kind == "crash" and step.get("mid_line"):
            message = self.message([{"type": "text", "text": "cut"}])
            run.out_raw(truncated_line({"type": "assistant", "message": message}).encode())
            run.exit(int(step.get("exit_code", 1)))
        elif not run.run_common_step(step):
            raise ValueError(f"qoder fake cannot render step kind {kind!r}")
        return None


def _check(run: FakeRun) -> str | None:
    """The CLI's own argument checks; an error message or None."""
    p = run.parsed
    fmt = p.value("--output-format", "text") or "text"
    if fmt not in _FORMATS:
        return (
            f"error: option '--output-format <format>' argument '{fmt}' is invalid. "
            f"Allowed choices are {', '.join(_FORMATS)}."
        )
    mode = p.value("--permission-mode")
    if mode is not None and mode not in _MODES:
        return f"error: invalid permission mode '{mode}' (expected one of {', '.join(_MODES)})"
    input_format = p.value("--input-format", "text") or "text"
    if input_format not in _INPUT_FORMATS:
        return (
            f"error: option '--input-format <format>' argument '{input_format}' is invalid. "
            f"Allowed choices are {', '.join(_INPUT_FORMATS)}."
        )
    if input_format == "stream-json" and fmt != "stream-json":
        return "Error: --input-format=stream-json requires --output-format=stream-json"
    if p.has("--include-partial-messages") and fmt != "stream-json":
        return "Error: --include-partial-messages requires --output-format=stream-json"
    if not p.has("--print"):
        return "Error: interactive mode needs a terminal (stdin is not a TTY); use -p"
    workspace = p.value("--workspace")
    if workspace is not None and not os.path.isdir(workspace):
        return f"Error: workspace directory does not exist: {workspace}"
    for attachment in p.values("--attachment"):
        if not os.path.isfile(attachment):
            return f"Error: attachment not found: {attachment}"
    return None


def _stream_json_prompts(run: FakeRun) -> list[str] | str:
    """``--input-format stream-json``: one user message per stdin line (wire §A.5 Qoder,
    Claude-shaped input). Read line by line, so a host may hold stdin open; an invalid
    line is an error message."""
    prompts: list[str] = []
    while (raw := run.read_stdin_line()) is not None:
        if not raw.strip():
            continue
        try:
            frame = jsonio.loads(raw)
        except ValueError:
            return f"Error: invalid stream-json input line: {raw.decode('utf-8', 'replace')}"
        run.record.setdefault("stdin_frames", []).append(frame)
        if not isinstance(frame, dict) or frame.get("type") != "user":
            kind = frame.get("type") if isinstance(frame, dict) else None
            return f"Error: expected a user message on stdin, got {kind!r}"
        prompts.append(user_text(frame.get("message")))
    return prompts


def _main(run: FakeRun) -> int:
    problem = _check(run)
    if problem is not None:
        run.err(problem + "\n")
        return 1
    p = run.parsed
    prompts: list[str]
    if p.positionals:
        prompts = [p.positionals[0]]
        run.record.update(prompt=prompts[0], prompt_via="argv")
    elif p.value("--input-format") == "stream-json":
        found = _stream_json_prompts(run)
        if isinstance(found, str):
            run.err(found + "\n")
            return 1
        prompts = found
        run.record.update(prompt=prompts[0] if prompts else "", prompt_via="stdin-stream-json")
    else:
        prompts = [run.read_stdin_text()]
    if not prompts or not prompts[0].strip():
        run.err("Error: no prompt provided (pass it as an argument or on stdin)\n")
        return 1
    run.record["workspace"] = p.value("--workspace")
    run.record["attachments"] = p.values("--attachment")
    prior: dict[str, Any] | None = None
    resume = p.value("--resume")
    if resume is not None:
        prior = run.load_session(resume)
        if prior is None:
            run.err(f"Error: session {resume} not found\n")
            return 1
    elif p.has("--continue"):
        for session_id in reversed(run.saved_sessions()):
            data = run.load_session(session_id)
            if data and data.get("turns") and data["turns"][-1].get("cwd") == run.cwd:
                prior = data
                break
    turns: list[dict[str, Any]] = list(prior.get("turns", [])) if prior else []
    session_id = str(prior["id"]) if prior else run.new_session_id()
    run.record.update(resumed=prior is not None, session_id=session_id, prior_turns=len(turns))
    code = 0
    for prompt in prompts:
        code, reply = _Qoder(run, session_id).main(prompt)
        turns.append({"prompt": prompt, "reply": reply, "cwd": str(run.cwd)})
        run.save_session(session_id, turns)
    run.record["turns"] = len(turns)
    run.linger_if_asked()
    return code


SPECS: dict[str, CliSpec] = {
    "qoder": CliSpec(
        agent_id="qoder",
        prog="qodercli",
        version_output=QODER_VERSION,
        grammar=_grammar,
        style="commander",
        run=_main,
        version_args=(("--version",), ("-v",)),
        help_args=(("--help",), ("-h",)),
        help_text=_help(),
        optional_flags=_OPTIONAL_FLAGS,
    ),
}
