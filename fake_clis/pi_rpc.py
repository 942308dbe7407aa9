"""Fake pi and Prime Agent: the ``pi-rpc`` emulators.

Design: docs/design/fakes.md#fake_clis.pi_rpc
"""

from __future__ import annotations

import os
import time

from fake_clis import ids, jsonio
from fake_clis.argv import Grammar
from fake_clis.base import CliSpec, FakeRun, escape_lone_surrogates, read_text
from fake_clis.clock import iso_utc_ms
from fake_clis.goflag import AnyFlag

# A fake starts hundreds of times per conform: no dataclasses, pathlib, typing, datetime
# or re here; threading and queue only once an RPC session starts its stdin reader.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import queue
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from fake_clis.scenario import Step

__all__ = ["PI_VERSION", "PRIME_VERSION", "SPECS", "PiArgs", "parse_pi_args"]

PI_VERSION = "0.73.1"
PRIME_VERSION = "0.4.2"
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
#: pi ``_isRetryableError`` (agent-session.js), shortened to the alternatives a scenario hits.
_RETRYABLE = (
    r"overloaded|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|"
    r"server.?error|internal.?error|network.?error|timed? out|timeout"
)
_EOF = object()


# --------------------------------------------------------------------------- flavours


class _Model:
    """One model of a provider, as ``--list-models`` and ``get_state`` show it."""

    __slots__ = ("context", "images", "max_out", "model_id", "name", "provider", "reasoning")

    def __init__(  # noqa: PLR0917 - positional, so the model tables read as tables
        self,
        provider: str,
        model_id: str,
        name: str,
        context: int,
        max_out: int,
        reasoning: bool,
        images: bool,
    ) -> None:
        self.provider = provider
        self.model_id = model_id
        self.name = name
        self.context = context
        self.max_out = max_out
        self.reasoning = reasoning
        self.images = images

    @property
    def api(self) -> str:
        return {
            "anthropic": "anthropic-messages",
            "openai": "openai-responses",
            "google": "google-generative-ai",
        }.get(self.provider, "openai-completions")


_PI_MODELS = (
    _Model("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5", 200_000, 64_000, True, True),
    _Model("anthropic", "claude-opus-4-5", "Claude Opus 4.5", 200_000, 64_000, True, True),
    _Model("google", "gemini-2.5-flash", "Gemini 2.5 Flash", 1_048_576, 65_536, True, True),
    _Model("google", "gemini-2.5-pro", "Gemini 2.5 Pro", 1_048_576, 65_536, True, True),
    _Model("openai", "gpt-5", "GPT-5", 400_000, 128_000, True, True),
    _Model("openai", "o4-mini", "o4-mini", 200_000, 100_000, True, True),
)
_PRIME_MODELS = (
    _Model("prime", "intellect-3", "INTELLECT-3", 131_072, 32_768, True, False),
    _Model("openai", "gpt-5", "GPT-5", 400_000, 128_000, True, True),
    _Model("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5", 200_000, 64_000, True, True),
)


def _tokens(count: int) -> str:
    """pi ``formatTokenCount``: 200000 -> 200K, 1048576 -> 1.0M."""
    if count >= 1_000_000:
        millions = count / 1_000_000
        return f"{int(millions)}M" if millions % 1 == 0 else f"{millions:.1f}M"
    if count >= 1_000:
        thousands = count / 1_000
        return f"{int(thousands)}K" if thousands % 1 == 0 else f"{thousands:.1f}K"
    return str(count)


def _model_table(models: Sequence[_Model]) -> str:
    """``pi --list-models``: aligned columns joined by two spaces (list-models.js)."""
    header = ("provider", "model", "context", "max-out", "thinking", "images")
    rows = [
        (
            m.provider,
            m.model_id,
            _tokens(m.context),
            _tokens(m.max_out),
            "yes" if m.reasoning else "no",
            "yes" if m.images else "no",
        )
        for m in sorted(models, key=lambda m: (m.provider, m.model_id))
    ]
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in (header, *rows)
    ]
    return "\n".join(lines) + "\n"


class _Flavour:
    """What differs between pi and its prime-agent fork."""

    __slots__ = ("agent_id", "help_text", "models", "prime", "prog", "version_output")

    def __init__(
        self,
        *,
        agent_id: str,
        prog: str,
        version_output: str,
        models: tuple[_Model, ...],
        prime: bool,
        help_text: str,
    ) -> None:
        self.agent_id = agent_id
        self.prog = prog
        self.version_output = version_output
        self.models = models
        #: prime-agent: ``--resume`` takes an id and ``--cwd`` exists.
        self.prime = prime
        self.help_text = help_text


# --------------------------------------------------------------------------- argv


class PiArgs:
    """What pi's ``parseArgs`` found (args.js), for pi and its prime-agent fork."""

    __slots__ = (
        "append_system_prompt",
        "continue_",
        "cwd",
        "diagnostics",
        "extensions",
        "file_args",
        "messages",
        "mode",
        "model",
        "no_session",
        "print_",
        "provider",
        "resume",
        "session",
        "session_dir",
        "skills",
        "thinking",
        "unknown_flags",
    )

    def __init__(self) -> None:
        self.mode: str | None = None
        self.provider: str | None = None
        self.model: str | None = None
        self.thinking: str | None = None
        self.append_system_prompt: list[str] = []
        self.skills: list[str] = []
        self.extensions: list[str] = []
        self.no_session: bool = False
        self.session: str | None = None
        self.session_dir: str | None = None
        self.continue_: bool = False
        self.resume: str | None = None
        self.cwd: str | None = None
        self.print_: bool = False
        self.messages: list[str] = []
        self.file_args: list[str] = []
        self.unknown_flags: list[str] = []
        #: (``error`` | ``warning``, message)
        self.diagnostics: list[tuple[str, str]] = []


_PI_VALUE_FLAGS = {
    "--provider": "provider",
    "--model": "model",
    "--api-key": None,
    "--system-prompt": None,
    "--session": "session",
    "--fork": None,
    "--session-dir": "session_dir",
    "--models": None,
    "--export": None,
    "--tools": None,
    "-t": None,
}
_PI_LIST_FLAGS = {
    "--append-system-prompt": "append_system_prompt",
    "--skill": "skills",
    "--extension": "extensions",
    "-e": "extensions",
    "--prompt-template": None,
    "--theme": None,
}
_PI_SWITCHES = {
    "--no-session": "no_session",
    "--continue": "continue_",
    "-c": "continue_",
    "--print": "print_",
    "-p": "print_",
}
_PI_IGNORED_SWITCHES = frozenset(
    {
        "--no-tools",
        "-nt",
        "--no-builtin-tools",
        "-nbt",
        "--no-extensions",
        "-ne",
        "--no-skills",
        "-ns",
        "--no-prompt-templates",
        "-np",
        "--no-themes",
        "--no-context-files",
        "-nc",
        "--verbose",
        "--offline",
        "--resume",
        "-r",
        "--help",
        "-h",
        "--version",
        "-v",
    }
)


def parse_pi_args(args: Sequence[str], *, prime: bool = False) -> PiArgs:
    """A port of pi 0.73.1 ``parseArgs`` (value flags need a following argument, else they
    fall through to the unknown-flag branch, exactly as in args.js)."""
    out = PiArgs()
    i = 0
    while i < len(args):
        if i + 1 < len(args) and _pi_value_flag(out, args[i], args[i + 1], prime):
            i += 2
        else:
            i = _pi_other_arg(out, args, i) + 1
    return out


def _pi_value_flag(out: PiArgs, arg: str, value: str, prime: bool) -> bool:
    """Apply ``arg`` if it is a flag that takes ``value`` (the next argument); False if
    it is not one, so the caller reads it as something else."""
    if arg == "--mode":
        if value in ("text", "json", "rpc"):
            out.mode = value
    elif prime and arg in ("--resume", "-r"):
        out.resume = value
    elif prime and arg == "--cwd":
        out.cwd = value
    elif arg in _PI_VALUE_FLAGS:
        target = _PI_VALUE_FLAGS[arg]
        if target is not None:
            setattr(out, target, value)
    elif arg in _PI_LIST_FLAGS:
        name = _PI_LIST_FLAGS[arg]
        if name is not None:
            getattr(out, name).append(value)
    elif arg == "--thinking":
        if value in THINKING_LEVELS:
            out.thinking = value
        else:
            levels = ", ".join(THINKING_LEVELS)
            out.diagnostics.append(
                ("warning", f'Invalid thinking level "{value}". Valid values: {levels}')
            )
    else:
        return False
    return True


def _pi_other_arg(out: PiArgs, args: Sequence[str], i: int) -> int:
    """Apply ``args[i]`` (a switch, a file, an unknown flag or a message); the index of
    the last argument it consumed."""
    arg = args[i]
    has_next = i + 1 < len(args)
    if arg in _PI_SWITCHES:
        setattr(out, _PI_SWITCHES[arg], True)
        if arg in ("--print", "-p") and has_next and _pi_print_message(args[i + 1]):
            out.messages.append(args[i + 1])
            return i + 1
    elif arg in _PI_IGNORED_SWITCHES:
        pass
    elif arg == "--list-models":
        if has_next and not args[i + 1].startswith(("-", "@")):
            return i + 1
    elif arg.startswith("@"):
        out.file_args.append(arg[1:])
    elif arg.startswith("--"):
        # An extension may own it; with none loaded it is rejected after start-up.
        name, eq, _ = arg[2:].partition("=")
        out.unknown_flags.append(name)
        if not eq and has_next and not args[i + 1].startswith(("-", "@")):
            return i + 1
    elif arg.startswith("-"):
        out.diagnostics.append(("error", f"Unknown option: {arg}"))
    else:
        out.messages.append(arg)
    return i


def _pi_print_message(nxt: str) -> bool:
    """``-p`` takes the next argument as the message unless it is a file or a flag."""
    return not nxt.startswith("@") and (not nxt.startswith("-") or nxt.startswith("---"))


def _open_grammar(old: bool) -> Grammar:
    """Accepts every token: pi's own parser (:func:`parse_pi_args`) decides."""
    return Grammar(flags=AnyFlag(), positionals=(0, -1))


# --------------------------------------------------------------------------- helpers


def _now_ms() -> int:
    return int(time.time() * 1000)


def _iso() -> str:
    return iso_utc_ms()


def _dumps(value: Any) -> str:
    """Compact JSON as pi writes it (its session file too): a lone surrogate escaped."""
    return escape_lone_surrogates(jsonio.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _zero_usage() -> dict[str, Any]:
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


class _Aborted(Exception):
    """The client sent ``abort`` (or stdin closed) while the run was streaming."""


# --------------------------------------------------------------------------- stdin


class _Input:
    """stdin on a reader thread: commands queue up; ``abort`` and extension UI answers are
    seen at once, because pi handles commands while the agent streams (rpc-mode.js)."""

    def __init__(self, server: _PiServer) -> None:
        import queue
        import threading

        self.server = server
        self.run = server.run
        self.commands: queue.Queue[Any] = queue.Queue()
        self.abort = threading.Event()
        self.eof = threading.Event()
        self.lock = threading.Condition()
        self._ui_answers: dict[str, dict[str, Any]] = {}
        #: ``abort`` commands that arrived during a run, answered once it stopped.
        self.pending_aborts: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self._read, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _read(self) -> None:
        frames = self.run.record.setdefault("stdin_frames", [])
        while True:
            raw = self.run.stdin.readline()
            if not raw:
                break
            line = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", "replace")
            if not line.strip():
                continue
            try:
                command = jsonio.loads(line)
            except ValueError as exc:
                self.server.emit(
                    {
                        "type": "response",
                        "command": "parse",
                        "success": False,
                        "error": f"Failed to parse command: {exc}",
                    }
                )
                continue
            frames.append(command)
            kind = command.get("type") if isinstance(command, dict) else None
            if kind == "extension_ui_response":
                with self.lock:
                    self._ui_answers[str(command.get("id"))] = command
                    self.lock.notify_all()
                continue
            if kind == "abort":
                with self.lock:
                    self.abort.set()
                    self.lock.notify_all()
                    if self.server.busy.is_set():
                        # Answered when the run has stopped (rpc-mode.js awaits abort()).
                        self.pending_aborts.append(command)
                        continue
            elif kind == "prompt" and self.server.busy.is_set():
                self.server.reject_busy_prompt(command)
                continue
            self.commands.put(command)
        self.eof.set()
        with self.lock:
            self.lock.notify_all()
        self.commands.put(_EOF)

    def wait_ui(self, request_id: str) -> dict[str, Any] | None:
        """The ``extension_ui_response`` for ``request_id``; None on abort or EOF."""
        with self.lock:
            while request_id not in self._ui_answers:
                if self.abort.is_set() or self.eof.is_set():
                    return None
                self.lock.wait(0.5)
            return self._ui_answers.pop(request_id)

    def sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        with self.lock:
            while not (self.abort.is_set() or self.eof.is_set()):
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self.lock.wait(left)


# --------------------------------------------------------------------------- sessions


class _SessionFile:
    """pi's JSONL session file (docs/session-format.md): a header, then one entry a line."""

    def __init__(self, path: str | None, cwd: str, parent: str | None = None) -> None:
        self.path = path
        self.cwd = cwd
        self.parent = parent
        self.session_id = ids.uuid4()
        self.last_id: str | None = None
        self.started = False
        self.messages: list[dict[str, Any]] = []

    @classmethod
    def reopen(cls, path: str, cwd: str) -> _SessionFile:
        session = cls(path, cwd)
        session.started = True
        for line in read_text(path).splitlines():
            try:
                entry = jsonio.loads(line)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            if entry.get("type") == "session" and isinstance(entry.get("id"), str):
                session.session_id = entry["id"]
            elif entry.get("type") == "message" and isinstance(entry.get("message"), dict):
                session.messages.append(entry["message"])
                session.last_id = entry.get("id") if isinstance(entry.get("id"), str) else None
        return session

    @property
    def user_turns(self) -> int:
        return sum(1 for m in self.messages if m.get("role") == "user")

    def append(self, message: Mapping[str, Any]) -> None:
        self.messages.append(dict(message))
        if self.path is None:
            return
        os.makedirs(os.path.dirname(self.path) or os.curdir, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            if not self.started:
                header: dict[str, Any] = {
                    "type": "session",
                    "version": 3,
                    "id": self.session_id,
                    "timestamp": _iso(),
                    "cwd": self.cwd,
                }
                if self.parent is not None:
                    header["parentSession"] = self.parent
                handle.write(_dumps(header) + "\n")
                self.started = True
            entry_id = ids.uuid4_hex()[:8]
            entry = {
                "type": "message",
                "id": entry_id,
                "parentId": self.last_id,
                "timestamp": _iso(),
                "message": dict(message),
            }
            handle.write(_dumps(entry) + "\n")
            self.last_id = entry_id


# --------------------------------------------------------------------------- the server


class _PiServer:
    """One ``--mode rpc`` process: commands in, agent events out."""

    def __init__(
        self,
        run: FakeRun,
        *,
        flavour: _Flavour,
        args: PiArgs,
        model: _Model,
        session: _SessionFile,
        session_dir: str | None,
    ) -> None:
        self.run = run
        self.flavour = flavour
        #: A model call failed and was reported in the stream (see serve()).
        self.reported_api_failure = False
        self.args = args
        self.model = model
        self.thinking = args.thinking or "medium"
        self.session = session
        self.session_dir = session_dir
        import threading  # only a session reads stdin on a thread

        self.busy = threading.Event()
        self._write_lock = threading.Lock()
        self.input = _Input(self)
        self.retry = _retry_settings(run)

    def emit(self, obj: Mapping[str, Any]) -> None:
        with self._write_lock:
            self.run.out(_dumps(obj))

    def emit_raw(self, text: str, *, newline: bool = True) -> None:
        with self._write_lock:
            if newline:
                self.run.out(text)
            else:
                self.run.out_raw(text.encode("utf-8"))

    def respond(
        self, command: Mapping[str, Any], name: str, data: Any = None, error: str | None = None
    ) -> None:
        frame: dict[str, Any] = {}
        if "id" in command:
            frame["id"] = command["id"]
        frame.update(type="response", command=name, success=error is None)
        if error is not None:
            frame["error"] = error
        elif data is not None:
            frame["data"] = data
        self.emit(frame)

    def reject_busy_prompt(self, command: Mapping[str, Any]) -> None:
        """rpc.md: during streaming a prompt without ``streamingBehavior`` is an error."""
        if command.get("streamingBehavior") in ("steer", "followUp"):
            message = "the fake pi does not emulate queued prompts (streamingBehavior)"
        else:
            message = (
                "Agent is already processing. Specify streamingBehavior ('steer' or "
                "'followUp') to queue the message."
            )
        self.respond(command, "prompt", error=message)

    # -- the loop ---------------------------------------------------------------------

    def serve(self) -> int:
        self.input.start()
        while True:
            command = self.input.commands.get()
            if command is _EOF:
                break
            self.dispatch(command)
            if self.input.eof.is_set():
                break
        # rpc-mode.js: stdin "end" -> shutdown(), at any time.
        self.run.linger_if_asked()
        return 0 if self.reported_api_failure else self.run.scenario.exit_code

    def dispatch(self, command: Any) -> None:
        if not isinstance(command, dict):
            self.emit(
                {
                    "type": "response",
                    "command": "parse",
                    "success": False,
                    "error": "Failed to parse command: not a JSON object",
                }
            )
            return
        kind = command.get("type")
        name = kind if isinstance(kind, str) else "undefined"
        handler = _COMMANDS.get(name)
        if handler is not None:
            handler(self, command)
        elif name in _NOT_EMULATED:
            self.respond(
                command, name, error=f"the fake {self.flavour.prog} does not emulate {name}"
            )
        else:
            # rpc-mode.js: the unknown-command response carries no id.
            self.emit(
                {
                    "type": "response",
                    "command": name,
                    "success": False,
                    "error": f"Unknown command: {name}",
                }
            )

    # -- commands ----------------------------------------------------------------------

    def on_prompt(self, command: dict[str, Any]) -> None:
        message = command.get("message")
        if not isinstance(message, str):
            self.respond(command, "prompt", error="prompt requires a string message")
            return
        if command.get("streamingBehavior") in ("steer", "followUp"):
            self.respond(command, "prompt", error="the fake pi does not emulate queued prompts")
            return
        images = command.get("images")
        self.run.record.setdefault("prompts", []).append(message)
        self.run.record.setdefault("prompt", message)
        self.run.record["prompt_via"] = "rpc"
        if isinstance(images, list):
            self.run.record.setdefault("images", []).extend(images)
        self.input.abort.clear()
        self.busy.set()
        try:
            self.respond(command, "prompt")
            _AgentRun(self, message, images if isinstance(images, list) else []).run()
        finally:
            with self.input.lock:
                self.busy.clear()
                aborts, self.input.pending_aborts = self.input.pending_aborts, []
            for abort in aborts:
                self.respond(abort, "abort")
        self.run.record["session_file"] = (
            str(self.session.path) if self.session.path is not None else None
        )

    def on_abort(self, command: dict[str, Any]) -> None:
        self.input.abort.clear()
        self.respond(command, "abort")

    def on_new_session(self, command: dict[str, Any]) -> None:
        parent = command.get("parentSession")
        parent_turns = 0
        if parent is not None:
            path = os.path.expanduser(str(parent))
            if not os.path.isfile(path):
                self.respond(command, "new_session", error=f"Session file not found: {parent}")
                return
            parent_turns = _SessionFile.reopen(path, self.run.cwd).user_turns
            self.run.record.update(
                parent_session=str(parent), resumed=True, prior_turns=parent_turns
            )
        self.session = _fresh_session(
            self.flavour, self.session_dir, self.run.cwd, str(parent) if parent else None
        )
        self.respond(command, "new_session", {"cancelled": False})

    def on_get_state(self, command: dict[str, Any]) -> None:
        data = {
            "model": self.model_object(),
            "thinkingLevel": self.thinking,
            "isStreaming": False,
            "isCompacting": False,
            "steeringMode": "one-at-a-time",
            "followUpMode": "one-at-a-time",
            "sessionFile": str(self.session.path) if self.session.path else None,
            "sessionId": self.session.session_id,
            "autoCompactionEnabled": True,
            "messageCount": len(self.session.messages),
            "pendingMessageCount": 0,
        }
        self.respond(command, "get_state", data)

    def on_get_messages(self, command: dict[str, Any]) -> None:
        self.respond(command, "get_messages", {"messages": list(self.session.messages)})

    def on_set_model(self, command: dict[str, Any]) -> None:
        wanted = (command.get("provider"), command.get("modelId"))
        for model in self.flavour.models:
            if (model.provider, model.model_id) == wanted:
                self.model = model
                self.run.record["model"] = f"{model.provider}/{model.model_id}"
                self.respond(command, "set_model", self.model_object())
                return
        self.respond(command, "set_model", error=f"Model not found: {wanted[0]}/{wanted[1]}")

    def on_set_thinking_level(self, command: dict[str, Any]) -> None:
        level = command.get("level")
        if level not in THINKING_LEVELS:
            self.respond(command, "set_thinking_level", error=f"Invalid thinking level: {level}")
            return
        self.thinking = str(level)
        self.respond(command, "set_thinking_level")

    def on_get_available_models(self, command: dict[str, Any]) -> None:
        models = [self.model_object(m) for m in self.flavour.models]
        self.respond(command, "get_available_models", {"models": models})

    def model_object(self, model: _Model | None = None) -> dict[str, Any]:
        m = model or self.model
        return {
            "id": m.model_id,
            "name": m.name,
            "api": m.api,
            "provider": m.provider,
            "reasoning": m.reasoning,
            "input": ["text", "image"] if m.images else ["text"],
            "contextWindow": m.context,
            "maxTokens": m.max_out,
        }


_COMMANDS: dict[str, Callable[[_PiServer, dict[str, Any]], None]] = {
    "prompt": _PiServer.on_prompt,
    "abort": _PiServer.on_abort,
    "new_session": _PiServer.on_new_session,
    "get_state": _PiServer.on_get_state,
    "get_messages": _PiServer.on_get_messages,
    "set_model": _PiServer.on_set_model,
    "set_thinking_level": _PiServer.on_set_thinking_level,
    "get_available_models": _PiServer.on_get_available_models,
}
#: rpc.md commands the fake does not emulate (answered ``success: false``, named).
_NOT_EMULATED = frozenset(
    {
        "steer",
        "follow_up",
        "cycle_model",
        "cycle_thinking_level",
        "set_steering_mode",
        "set_follow_up_mode",
        "compact",
        "set_auto_compaction",
        "set_auto_retry",
        "abort_retry",
        "bash",
        "abort_bash",
        "get_session_stats",
        "export_html",
        "switch_session",
        "fork",
        "clone",
        "get_fork_messages",
        "get_last_assistant_text",
        "set_session_name",
        "get_commands",
    }
)


def _retry_settings(run: FakeRun) -> dict[str, Any]:
    """settings.md "Retry": global ``~/.pi/agent/settings.json``, then the project's."""
    settings: dict[str, Any] = {"enabled": True, "maxRetries": 3, "baseDelayMs": 2000}
    for path in (
        os.path.join(run.home, ".pi", "agent", "settings.json"),
        os.path.join(run.cwd, ".pi", "settings.json"),
    ):
        try:
            data = jsonio.loads(read_text(path))
        except (OSError, ValueError):
            continue
        retry = data.get("retry") if isinstance(data, dict) else None
        if isinstance(retry, dict):
            settings.update({k: v for k, v in retry.items() if k in settings})
    return settings


def _fresh_session(
    flavour: _Flavour, directory: str | None, cwd: str, parent: str | None = None
) -> _SessionFile:
    """A new session, its file named like pi's (``<timestamp>_<uuid>.jsonl``, session-format.md)
    or prime-agent's (``<id>.jsonl``, resumed by id); ``directory`` None = ``--no-session``."""
    session = _SessionFile(None, cwd, parent)
    if directory is not None:
        if flavour.prime:
            session.path = os.path.join(directory, f"{session.session_id}.jsonl")
        else:
            stamp = _iso().replace(":", "-").replace(".", "-")
            session.path = os.path.join(directory, f"{stamp}_{session.session_id}.jsonl")
    return session


# --------------------------------------------------------------------------- one agent run


class _AgentRun:
    """One ``prompt``: pi-agent-core's loop (agent-loop.js) rendered from the scenario."""

    def __init__(self, server: _PiServer, prompt: str, images: list[Any]) -> None:
        self.server = server
        self.fake = server.run
        self.prompt = prompt
        self.images = images
        self.messages: list[dict[str, Any]] = []
        self.message: dict[str, Any] | None = None
        self.turn_open = False
        self.usage = _zero_usage()
        self.pending_usage: list[Step] = []
        self.pending_ends: list[dict[str, Any]] = []
        self.last_turn_had_tools = False

    # -- emit helpers ----------------------------------------------------------------

    def emit(self, obj: Mapping[str, Any]) -> None:
        self.server.emit(obj)

    def check(self) -> None:
        if self.server.input.abort.is_set() or self.server.input.eof.is_set():
            raise _Aborted

    def persist(self, message: Mapping[str, Any]) -> None:
        self.messages.append(dict(message))
        self.server.session.append(message)

    # -- the loop --------------------------------------------------------------------

    def run(self) -> None:
        self.emit({"type": "agent_start"})
        self.emit({"type": "turn_start"})
        self.turn_open = True
        content: list[dict[str, Any]] = [{"type": "text", "text": self.prompt}]
        content += [i for i in self.images if isinstance(i, dict)]
        user = {"role": "user", "content": content, "timestamp": _now_ms()}
        self.emit({"type": "message_start", "message": user})
        self.emit({"type": "message_end", "message": user})
        self.persist(user)
        try:
            for step in self.fake.scenario.steps:
                self.check()
                self.step(step)
            self.finish()
        except _Aborted:
            if self.server.input.eof.is_set():
                return  # pi shuts down at stdin EOF without finishing the run
            self.end_with("aborted", "Request was aborted")
        except _ApiFailure as failure:
            self.fail(failure.step)

    def step(self, step: Step) -> None:
        kind = step.kind
        if kind == "thinking":
            if self.server.thinking == "off":
                self.fake.record.setdefault("skipped_thinking", 0)
                self.fake.record["skipped_thinking"] += 1
                return
            self.block("thinking", step)
        elif kind == "text":
            self.block("text", step)
        elif kind == "tool":
            self.tool(step)
        elif kind == "usage":
            self.pending_usage.append(step)
            if self.message is not None:
                self.apply_usage()
        elif kind == "sleep":
            self.server.input.sleep(float(step.get("ms", 0)) / 1000)
            self.check()
        elif kind == "api_error":
            raise _ApiFailure(step)
        elif kind == "malformed":
            line = _dumps(
                self.update_frame({"type": "text_delta", "contentIndex": 0, "delta": "x"})
            )
            self.server.emit_raw(line[: len(line) // 2])
        elif kind == "foreign":
            self.emit(
                {
                    "id": f"foreign-{ids.uuid4_hex()[:8]}",
                    "type": "response",
                    "command": "get_state",
                    "success": True,
                    "data": {"sessionId": ids.uuid4(), "isStreaming": False},
                }
            )
        elif kind == "oversize":
            self.server.emit_raw(_padded_widget(int(step.get("bytes", 1))))
        elif kind == "crash" and step.get("mid_line"):
            line = _dumps(
                self.update_frame({"type": "text_delta", "contentIndex": 0, "delta": "x"})
            )
            self.server.emit_raw(line[: len(line) // 2], newline=False)
            self.fake.exit(int(step.get("exit_code", 1)))
        elif not self.fake.run_common_step(step):
            raise ValueError(f"pi fake cannot render step kind {kind!r}")

    # -- the assistant message ---------------------------------------------------------

    def open_message(self) -> dict[str, Any]:
        if self.message is None:
            if not self.turn_open:
                self.emit({"type": "turn_start"})
                self.turn_open = True
            model = self.server.model
            self.message = {
                "role": "assistant",
                "content": [],
                "api": model.api,
                "provider": model.provider,
                "model": model.model_id,
                "usage": _zero_usage(),
                "stopReason": "stop",
                "timestamp": _now_ms(),
            }
            self.emit({"type": "message_start", "message": _copy(self.message)})
            if self.pending_usage:
                self.apply_usage()
        return self.message

    def update_frame(self, event: dict[str, Any]) -> dict[str, Any]:
        partial = _copy(self.message) if self.message is not None else {}
        return {
            "type": "message_update",
            "message": partial,
            "assistantMessageEvent": {**event, "partial": partial},
        }

    def update(self, event: dict[str, Any]) -> None:
        self.emit(self.update_frame(event))

    def block(self, kind: str, step: Step) -> None:
        message = self.open_message()
        index = len(message["content"])
        key = "thinking" if kind == "thinking" else "text"
        message["content"].append({"type": key, key: ""})
        self.update({"type": f"{kind}_start", "contentIndex": index})
        for chunk in step.chunks:
            self.check()
            message["content"][index][key] += chunk
            self.update({"type": f"{kind}_delta", "contentIndex": index, "delta": chunk})
        # pi 0.73.1 over openai-completions closes every content block when the model's
        # stream ends, in index order, just before message_end
        # (recordings/real/pi/happy.jsonl): the end events wait for close_message.
        self.pending_ends.append(
            {
                "type": f"{kind}_end",
                "contentIndex": index,
                "content": message["content"][index][key],
            }
        )

    def apply_usage(self) -> None:
        assert self.message is not None
        usage = self.message["usage"]
        for step in self.pending_usage:
            for source, target in (
                ("input_tokens", "input"),
                ("output_tokens", "output"),
                ("cached_read_tokens", "cacheRead"),
                ("cached_write_tokens", "cacheWrite"),
            ):
                value = step.get(source)
                if isinstance(value, int):
                    usage[target] += value
            cost = step.get("cost_usd")
            if isinstance(cost, (int, float)):
                usage["cost"]["total"] += float(cost)
        usage["totalTokens"] = (
            usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
        )
        self.pending_usage = []

    def close_message(self, stop_reason: str, error: str | None = None) -> dict[str, Any]:
        message = self.open_message()
        ends, self.pending_ends = self.pending_ends, []
        for end in ends:
            self.update(end)
        message["stopReason"] = stop_reason
        if error is not None:
            message["errorMessage"] = error
        self.emit({"type": "message_end", "message": _copy(message)})
        self.persist(message)
        self.message = None
        return message

    def end_turn(self, message: dict[str, Any], tool_results: list[dict[str, Any]]) -> None:
        self.emit({"type": "turn_end", "message": _copy(message), "toolResults": tool_results})
        self.turn_open = False

    # -- tools -------------------------------------------------------------------------

    def tool(self, step: Step) -> None:
        tool = str(step.get("tool", "other"))
        call_id = str(step.get("id") or f"toolu_{ids.uuid4_hex()[:24]}")
        if tool == "write":
            name = "write"
            arguments: dict[str, Any] = {
                "path": str(step.get("path", "file.txt")),
                "content": str(step.get("content", "")),
            }
        elif tool == "shell":
            name, arguments = "bash", {"command": str(step.get("command", ""))}
        else:
            name, arguments = str(step.get("name", "other")), dict(step.get("input") or {})
        message = self.open_message()
        index = len(message["content"])
        call = {"type": "toolCall", "id": call_id, "name": name, "arguments": {}}
        message["content"].append(call)
        self.update({"type": "toolcall_start", "contentIndex": index})
        text = _dumps(arguments)
        size = max(1, -(-len(text) // 3))
        for start in range(0, len(text), size):
            self.check()
            self.update(
                {
                    "type": "toolcall_delta",
                    "contentIndex": index,
                    "delta": text[start : start + size],
                }
            )
        call["arguments"] = arguments
        self.pending_ends.append(
            {"type": "toolcall_end", "contentIndex": index, "toolCall": dict(call)}
        )
        assistant = self.close_message("toolUse")
        self.emit(
            {
                "type": "tool_execution_start",
                "toolCallId": call_id,
                "toolName": name,
                "args": arguments,
            }
        )
        output, is_error = self.execute(tool, name, arguments, step)
        result = {"content": [{"type": "text", "text": output}], "details": {}}
        self.emit(
            {
                "type": "tool_execution_end",
                "toolCallId": call_id,
                "toolName": name,
                "result": result,
                "isError": is_error,
            }
        )
        tool_result = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": result["content"],
            "isError": is_error,
            "timestamp": _now_ms(),
        }
        self.emit({"type": "message_start", "message": tool_result})
        self.emit({"type": "message_end", "message": tool_result})
        self.persist(tool_result)
        self.end_turn(assistant, [tool_result])
        self.last_turn_had_tools = True

    def execute(
        self, tool: str, name: str, arguments: Mapping[str, Any], step: Step
    ) -> tuple[str, bool]:
        output = step.get("output")
        if bool(step.get("is_error", False)):
            return (str(output) if output is not None else f"{name} failed"), True
        if tool == "write":
            path, content = str(arguments["path"]), str(arguments["content"])
            self.fake.write_file(path, content)
            default = f"Successfully wrote {len(content.encode('utf-8'))} bytes to {path}"
            return (str(output) if output is not None else default), False
        if tool == "shell":
            text = str(output) if output is not None else ""
            self.emit(
                {
                    "type": "tool_execution_update",
                    "toolCallId": step.get("id") or "",
                    "toolName": name,
                    "args": dict(arguments),
                    "partialResult": {"content": [{"type": "text", "text": text}], "details": {}},
                }
            )
            return text, False
        if name == "confirm":
            return self.confirm(arguments, output)
        return (str(output) if output is not None else ""), False

    def confirm(self, arguments: Mapping[str, Any], output: Any) -> tuple[str, bool]:
        """rpc.md "Extension UI Protocol": a dialog method blocks until the client answers."""
        request_id = ids.uuid4()
        request: dict[str, Any] = {
            "type": "extension_ui_request",
            "id": request_id,
            "method": "confirm",
            "title": str(arguments.get("title", "Allow this tool call?")),
            "message": str(arguments.get("message", "An extension asks for confirmation.")),
        }
        self.emit(request)
        answer = self.server.input.wait_ui(request_id)
        answers = self.fake.record.setdefault("extension_ui", [])
        if answer is None:
            answers.append({"id": request_id, "answer": None})
            self.check()
            return "Blocked: no answer", True
        answers.append({"id": request_id, "answer": answer})
        if answer.get("confirmed") is True and not answer.get("cancelled"):
            return (str(output) if output is not None else "confirmed"), False
        return "Blocked by user", True

    # -- endings ---------------------------------------------------------------------

    def finish(self) -> None:
        stop = {"max_tokens": "length"}.get(self.fake.scenario.stop_reason, "stop")
        if self.message is None and (self.last_turn_had_tools or self.pending_usage):
            # After tool results pi calls the model again; that reply closes the run.
            self.open_message()
        if self.message is not None:
            message = self.close_message(stop)
            self.end_turn(message, [])
        self.emit({"type": "agent_end", "messages": self.messages})

    def end_with(self, stop: str, error: str) -> None:
        if self.message is not None or self.turn_open:
            message = self.close_message(stop, error)
            self.end_turn(message, [])
        self.emit({"type": "agent_end", "messages": self.messages})

    def fail(self, step: Step) -> None:
        """A failed model call, then pi's auto-retry (agent-session.js
        ``_handleRetryableError``)."""
        status = step.get("status")
        text = str(step.get("message", "API error"))
        error = f"{status} {text}" if isinstance(status, int) else text
        # pi reports a failed model call in the stream and keeps serving; its shutdown at
        # stdin EOF exits 0 (recordings/real/pi/api_error.jsonl, pi 0.73.1).
        self.server.reported_api_failure = True
        self.end_with("error", error)
        settings = self.server.retry
        if not settings.get("enabled"):
            return
        import re  # only a failed model call asks whether it is retryable

        if not re.search(_RETRYABLE, error, re.IGNORECASE):
            return
        attempt = 0
        max_retries = int(settings.get("maxRetries", 3))
        base = int(settings.get("baseDelayMs", 2000))
        while True:
            attempt += 1
            if attempt > max_retries:
                self.emit(
                    {
                        "type": "auto_retry_end",
                        "success": False,
                        "attempt": attempt - 1,
                        "finalError": error,
                    }
                )
                return
            delay = base * 2 ** (attempt - 1)
            self.emit(
                {
                    "type": "auto_retry_start",
                    "attempt": attempt,
                    "maxAttempts": max_retries,
                    "delayMs": delay,
                    "errorMessage": error,
                }
            )
            self.server.input.sleep(delay / 1000)
            if self.server.input.abort.is_set() or self.server.input.eof.is_set():
                self.emit(
                    {
                        "type": "auto_retry_end",
                        "success": False,
                        "attempt": attempt,
                        "finalError": "Retry cancelled",
                    }
                )
                return
            # The retried call meets the same scenario: the model fails again.
            self.messages = []
            self.emit({"type": "agent_start"})
            self.emit({"type": "turn_start"})
            self.turn_open = True
            self.end_with("error", error)


class _ApiFailure(Exception):
    def __init__(self, step: Step) -> None:
        super().__init__(str(step.get("message", "API error")))
        self.step = step


def _copy(message: Mapping[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = jsonio.loads(_dumps(message))
    return copied


def _padded_widget(nbytes: int) -> str:
    """A valid fire-and-forget ``setWidget`` request line of exactly ``nbytes`` bytes."""
    frame: dict[str, Any] = {
        "type": "extension_ui_request",
        "id": ids.uuid4(),
        "method": "setWidget",
        "widgetKey": "fake-padding",
        "widgetLines": [""],
        "widgetPlacement": "aboveEditor",
    }
    missing = nbytes - len(_dumps(frame).encode("utf-8"))
    if missing > 0:
        frame["widgetLines"] = ["x" * missing]
    return _dumps(frame)


# --------------------------------------------------------------------------- entry points


def _custom_models(home: str | None) -> tuple[_Model, ...]:
    """Models of the custom providers in ``~/.pi/agent/models.json`` (pi docs/models.md;
    real-clis.md second batch: pi). A file that is not valid is ignored here."""
    if home is None:
        return ()
    try:
        data = jsonio.loads(read_text(os.path.join(home, ".pi", "agent", "models.json")))
    except (OSError, ValueError):
        return ()
    providers = data.get("providers") if isinstance(data, dict) else None
    out: list[_Model] = []
    for provider, spec in (providers or {}).items():
        for m in (spec.get("models") or []) if isinstance(spec, dict) else []:
            if isinstance(m, dict) and isinstance(m.get("id"), str):
                out.append(
                    _Model(
                        str(provider),
                        m["id"],
                        str(m.get("name", m["id"])),
                        int(m.get("contextWindow", 128_000)),
                        int(m.get("maxTokens", 16_384)),
                        bool(m.get("reasoning", False)),
                        "image" in (m.get("input") or []),
                    )
                )
    return tuple(out)


def _resolve_model(
    flavour: _Flavour, args: PiArgs, home: str | None = None
) -> tuple[_Model | None, list[str], str | None]:
    """main.js ``resolveCliModel``: (model, warnings, error)."""
    models = (*flavour.models, *_custom_models(home))
    if args.model is None:
        if args.provider is not None:
            for model in models:
                if model.provider == args.provider:
                    return model, [], None
        return models[0], [], None
    pattern = args.model
    provider = args.provider
    if ":" in pattern and pattern.rsplit(":", 1)[1] in THINKING_LEVELS:
        pattern = pattern.rsplit(":", 1)[0]
    if provider is None and "/" in pattern:
        provider, pattern = pattern.split("/", 1)
    for model in models:
        if model.model_id == pattern and provider in (None, model.provider):
            return model, [], None
    known = {m.provider for m in models}
    if provider is not None and provider in known:
        custom = _Model(provider, pattern, pattern, 128_000, 16_384, False, False)
        warning = f'Model "{pattern}" not found for provider "{provider}". Using custom model id.'
        return custom, [warning], None
    return None, [], f'Model "{args.model}" not found. Use --list-models to see available models.'


def _session_for(
    run: FakeRun, flavour: _Flavour, args: PiArgs, directory: str | None
) -> _SessionFile | str:
    """The session this process writes to, or an error message."""
    if flavour.prime and args.resume is not None:
        assert directory is not None
        candidate = os.path.expanduser(args.resume)
        path = (
            candidate
            if os.path.isfile(candidate)
            else os.path.join(directory, f"{args.resume}.jsonl")
        )
        if not os.path.isfile(path):
            return f"Error: No session found matching '{args.resume}'"
        return _reopened(run, path)
    if args.session is not None and directory is not None:
        candidate = os.path.expanduser(args.session)
        if not os.path.isfile(candidate):
            from pathlib import Path  # only a partial session id is looked up by pattern

            matches = sorted(Path(directory).glob(f"*{args.session}*.jsonl"))
            if not matches:
                return f"Error: No session found matching '{args.session}'"
            candidate = str(matches[0])
        return _reopened(run, candidate)
    if args.continue_ and directory is not None and os.path.isdir(directory):
        names = [name for name in os.listdir(directory) if name.endswith(".jsonl")]
        existing = sorted((os.path.join(directory, n) for n in names), key=os.path.getmtime)
        if existing:
            return _reopened(run, existing[-1])
    return _fresh_session(flavour, directory, run.cwd)


def _reopened(run: FakeRun, path: str) -> _SessionFile:
    session = _SessionFile.reopen(path, run.cwd)
    run.record.update(resumed=True, prior_turns=session.user_turns, session_file=str(path))
    return session


def _main(flavour: _Flavour) -> Callable[[FakeRun], int]:
    def main(run: FakeRun) -> int:
        if flavour.prime and run.argv[:2] == ["model", "list"]:
            run.out_raw(_model_table(flavour.models).encode("utf-8"))
            return 0
        args = parse_pi_args(run.argv, prime=flavour.prime)
        run.record["pi_args"] = {
            "mode": args.mode,
            "model": args.model,
            "provider": args.provider,
            "thinking": args.thinking,
            "skills": args.skills,
            "append_system_prompt": args.append_system_prompt,
            "cwd": args.cwd,
            "resume": args.resume,
        }
        for kind, message in args.diagnostics:
            run.err(f"{'Error' if kind == 'error' else 'Warning'}: {message}\n")
        if any(kind == "error" for kind, _ in args.diagnostics):
            return 1
        if args.mode != "rpc":
            run.err(f"{flavour.prog}: this fake emulates only --mode rpc\n")
            return 2
        if args.file_args:
            run.err("Error: @file arguments are not supported in RPC mode\n")
            return 1
        if args.cwd is not None:
            target = args.cwd
            if not os.path.isdir(target):
                run.err(f"Error: --cwd {args.cwd} is not a directory\n")
                return 1
            os.chdir(target)
            run.cwd = os.path.realpath(target)
        model, warnings, error = _resolve_model(flavour, args, run.home)
        for warning in warnings:
            run.err(f"Warning: {warning}\n")
        problems = []
        if error is not None:
            problems.append(error)
        if args.unknown_flags:
            names = ", ".join(f"--{n}" for n in args.unknown_flags)
            plural = "s" if len(args.unknown_flags) > 1 else ""
            problems.append(f"Unknown option{plural}: {names}")
        if problems:
            for problem in problems:
                run.err(f"Error: {problem}\n")
            return 1
        assert model is not None
        if flavour.prime:
            directory: str | None = os.path.join(run.home, ".prime", "agent", "sessions")
        elif args.no_session:
            directory = None
        else:
            configured = args.session_dir or run.env.get("PI_CODING_AGENT_SESSION_DIR")
            directory = (
                os.path.expanduser(configured)
                if configured
                else os.path.join(run.cwd, ".pi", "sessions")
            )
            directory = os.path.join(run.cwd, directory)  # an absolute one stays as it is
        session = _session_for(run, flavour, args, directory)
        if isinstance(session, str):
            run.err(session + "\n")
            return 1
        run.record.setdefault("resumed", False)
        run.record["model"] = f"{model.provider}/{model.model_id}"
        server = _PiServer(
            run, flavour=flavour, args=args, model=model, session=session, session_dir=directory
        )
        return server.serve()

    return main


def _pi_help(prog: str, prime: bool) -> str:
    options = [
        ("--provider <name>", "Provider name"),
        ("--model <pattern>", 'Model pattern or ID (supports "provider/id")'),
        ("--mode <mode>", "Output mode: text (default), json, or rpc"),
        ("--thinking <level>", "Set thinking level: " + ", ".join(THINKING_LEVELS)),
        ("--append-system-prompt <text>", "Append text or file contents to the system prompt"),
        ("--skill <path>", "Load a skill file or directory (can be used multiple times)"),
        ("--session <path|id>", "Use specific session file or partial UUID"),
        ("--session-dir <dir>", "Directory for session storage and lookup"),
        ("--no-session", "Don't save session (ephemeral)"),
        ("--continue, -c", "Continue previous session"),
        ("--list-models [search]", "List available models"),
        ("--help, -h", "Show this help"),
        ("--version, -v", "Show version number"),
    ]
    if prime:
        options[8:8] = [
            ("--cwd <dir>", "Working directory for the session"),
            ("--resume <id>", "Resume a saved session by id"),
        ]
    lines = [f"{prog} - AI coding assistant", "", "Usage:", f"  {prog} [options] [messages...]"]
    lines += ["", "Options:"] + [f"  {flag:<30} {text}" for flag, text in options]
    return "\n".join(lines)


_FLAVOURS = (
    _Flavour(
        agent_id="pi",
        prog="pi",
        version_output=PI_VERSION,
        models=_PI_MODELS,
        prime=False,
        help_text=_pi_help("pi", False),
    ),
    _Flavour(
        agent_id="prime-agent",
        prog="prime-agent",
        version_output=f"prime-agent {PRIME_VERSION}",
        models=_PRIME_MODELS,
        prime=True,
        help_text=_pi_help("prime-agent", True),
    ),
)

SPECS: dict[str, CliSpec] = {
    f.agent_id: CliSpec(
        agent_id=f.agent_id,
        prog=f.prog,
        version_output=f.version_output,
        grammar=_open_grammar,
        style="commander",
        run=_main(f),
        version_args=(("--version",), ("-v",)),
        help_args=(("--help",), ("-h",)),
        help_text=f.help_text,
        models_args=("model", "list") if f.prime else ("--list-models",),
        models_output=_model_table(f.models),
    )
    for f in _FLAVOURS
}
