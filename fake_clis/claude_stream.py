"""Fake Claude Code, CodeBuddy Code and Amp: the ``claude-stream-json`` emulators.

Design: docs/design/fakes.md#fake_clis.claude_stream
"""

from __future__ import annotations

import os
import time

from fake_clis import ids, jsonio
from fake_clis.argv import VARIADIC, Grammar
from fake_clis.base import CliSpec, FakeRun, read_text
from fake_clis.claude_wire import (
    INIT_MODES,
    INIT_SETTINGS,
    MODEL_USAGE_LIMITS,
    RESULT_STATE,
    SYNTHETIC_USAGE,
    TERMINAL_SLASH_COMMANDS,
    result_usage,
)
from fake_clis.clock import iso_utc_ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from fake_clis.scenario import Step

__all__ = [
    "AMP_VERSION",
    "CLAUDE_VERSION",
    "CODEBUDDY_VERSION",
    "SPECS",
    "chunk_json",
    "emit",
    "padded_line",
    "truncated_line",
    "user_text",
]

CLAUDE_VERSION = "2.1.332"
#: recordings/real/codebuddy/*.jsonl: codebuddy-headless 2.163.0 (PyPI codebuddy-agent-sdk 0.3.274).
CODEBUDDY_VERSION = "2.163.0"
AMP_VERSION = "0.0.1764201600-gc1a2b3c"

_UUID_RE = r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$"
_OUTPUT_FORMATS = ("text", "json", "stream-json")
_INPUT_FORMATS = ("text", "stream-json")
_PERMISSION_MODES = ("acceptEdits", "bypassPermissions", "default", "dontAsk", "plan")
_EFFORTS = ("low", "medium", "high", "xhigh", "max")
#: Tools Claude Code runs without asking (read-only).
_READ_ONLY_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "WebSearch", "WebFetch", "TodoWrite"})


# --------------------------------------------------------------------------- shared helpers


def emit(run: FakeRun, frame: dict[str, Any]) -> None:
    """One stdout frame as compact JSON, the way Node's ``JSON.stringify`` writes it."""
    run.out(jsonio.dumps(frame, ensure_ascii=False, separators=(",", ":")))


def padded_line(frame: dict[str, Any], key: str, nbytes: int) -> str:
    """``frame`` as one JSON line of exactly ``nbytes`` bytes, padded in ``frame[key]``.

    The padding is ASCII, so characters equal bytes. A frame that is already longer than
    ``nbytes`` is returned unpadded (the scenario asked for fewer bytes than one frame).
    """
    base = dict(frame)
    base[key] = ""
    line = jsonio.dumps(base, ensure_ascii=False, separators=(",", ":"))
    missing = nbytes - len(line.encode("utf-8"))
    if missing <= 0:
        return line
    base[key] = "x" * missing
    return jsonio.dumps(base, ensure_ascii=False, separators=(",", ":"))


def _compact(value: Any) -> str:
    return jsonio.dumps(value, ensure_ascii=False, separators=(",", ":"))


def chunk_json(value: Any, pieces: int = 3) -> list[str]:
    """``value`` as compact JSON cut into at most ``pieces`` fragments (``input_json_delta``).

    An object is cut only between its members, never inside a string: a path in the
    input stays whole on the wire, so a recording can put its placeholder in (design
    §Recordings). Anything else is one fragment.
    """
    if not isinstance(value, dict) or len(value) < 2 or pieces < 2:
        return [_compact(value)]
    members = [_compact(str(k)) + ":" + _compact(v) for k, v in value.items()]
    cuts = [len(members) * i // pieces for i in range(1, pieces)]
    parts: list[str] = []
    start = 0
    for cut in [c for c in dict.fromkeys(cuts) if 0 < c < len(members)] + [len(members)]:
        parts.append(",".join(members[start:cut]))
        start = cut
    parts[0] = "{" + parts[0]
    parts[1:] = ["," + p for p in parts[1:]]
    parts[-1] += "}"
    return parts


def truncated_line(frame: dict[str, Any]) -> str:
    """The first half of ``frame``'s JSON line: a frame that starts well and breaks off."""
    line = jsonio.dumps(frame, ensure_ascii=False, separators=(",", ":"))
    return line[: len(line) // 2]


def _read_text(path: str) -> str:
    try:
        return read_text(path)
    except OSError:
        return ""


def _hex_id(prefix: str) -> str:
    return prefix + ids.uuid4_hex()[:24]


def _commander_choice_error(flag: str, meta: str, value: str, choices: Sequence[str]) -> str:
    allowed = ", ".join(choices)
    return (
        f"error: option '{flag} {meta}' argument '{value}' is invalid. "
        f"Allowed choices are {allowed}."
    )


def _js_number(value: float) -> float:
    """``value`` as Node's ``JSON.stringify`` writes it: ``0``, not ``0.0``."""
    return int(value) if float(value).is_integer() else value


def _is_uuid(text: str) -> bool:
    import re  # only a run given --session-id checks one

    return re.match(_UUID_RE, text) is not None


def _tool_names(values: Sequence[str]) -> set[str]:
    """``--allowedTools "Bash(git *)" Write,Read`` -> {"Bash", "Write", "Read"}."""
    if not values:
        return set()
    import re  # only a run given --allowedTools / --disallowedTools splits them

    names: set[str] = set()
    for value in values:
        for part in re.split(r"[,\s]+(?![^()]*\))", value):
            if part.strip():
                names.add(part.strip().split("(", 1)[0])
    return names


def user_text(message: Any) -> str:
    """The text of a stream-json user message (string content or text blocks)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _api_error_text(step: Step, env: Mapping[str, str] | None = None) -> str:
    status = int(step.get("status", 500))
    kind = str(step.get("code", "api_error"))
    gateway = _gateway((env or {}).get("ANTHROPIC_BASE_URL", ""))
    if gateway and status >= 500:
        # recordings/real/claude/api_error.jsonl (2.1.332 against a base URL): the message,
        # a hint and the gateway's host:port, instead of the JSON body.
        return (
            f"API Error: {status} {step.get('message', '')}. This is a server-side issue, "
            "usually temporary \u2014 try again in a moment. If it persists, check your "
            f"inference gateway ({gateway})."
        )
    body = {"type": "error", "error": {"type": kind, "message": step.get("message", "")}}
    return f"API Error: {status} {jsonio.dumps(body, separators=(',', ':'))}"


def _gateway(base_url: str) -> str:
    """``host:port`` of an ``ANTHROPIC_BASE_URL`` (``""`` when unset or unparseable)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(base_url.strip())
        port = parts.port
    except ValueError:
        return ""
    if not parts.hostname:
        return ""
    return f"{parts.hostname}:{port}" if port else parts.hostname


# --------------------------------------------------------------------------- flavours


class _Flavour:
    """What differs between Claude Code and CodeBuddy Code (same frames, other names)."""

    __slots__ = (
        "codebuddy_wire",
        "default_model",
        "extra_aliases",
        "hidden_flags",
        "model_aliases",
        "plugins",
        "prog",
        "request_status",
        "version",
        "version_key",
    )

    def __init__(
        self,
        *,
        prog: str,
        version: str,
        version_key: str,
        default_model: str,
        model_aliases: dict[str, str] | None = None,
        extra_aliases: dict[str, str] | None = None,
        hidden_flags: dict[str, int] | None = None,
        codebuddy_wire: bool = False,
        request_status: str | None = None,
        plugins: tuple[str, ...] = (),
    ) -> None:
        self.prog = prog
        self.version = version
        self.version_key = version_key
        self.default_model = default_model
        self.model_aliases: dict[str, str] = model_aliases or {}
        self.extra_aliases: dict[str, str] = extra_aliases or {}
        #: Flags the CLI accepts that its help does not list (flag -> arity).
        self.hidden_flags: dict[str, int] = hidden_flags or {}
        #: CodeBuddy's own frames (recordings/real/codebuddy/*.jsonl): no thinking-token
        #: estimates; a tool_use wrapper carries stop_reason "tool_use"; a write is framed
        #: by ``file-history-snapshot`` lines; ``system/init`` again before ``result``; tool
        #: results as text blocks; an API error is an assistant text plus an
        #: ``error_during_execution`` result, and the CLI exits 0.
        self.codebuddy_wire = codebuddy_wire
        #: The ``system/status`` value printed as each model request starts, with
        #: --include-partial-messages only (``None``: no such line).
        self.request_status = request_status
        #: The built-in plugins ``system/init`` lists.
        self.plugins = plugins


_CLAUDE = _Flavour(
    prog="claude",
    version=CLAUDE_VERSION,
    version_key="claude_code_version",
    default_model="claude-opus-5-5",
    # recordings/real/claude/happy-partial.jsonl: "requesting" before each model call's
    # message_start (before the failed call's error too); none without partial messages.
    request_status="requesting",
    # recordings/real/claude/*.jsonl: 2.1.332's built-in plugins.
    plugins=("cc-plugin-agents-md", "cc-plugin-privacy", "cc-plugin-plugin-authoring"),
    model_aliases={
        "opus": "claude-opus-5-5",
        "sonnet": "claude-sonnet-5",
        "haiku": "claude-haiku-4-5",
    },
)
_CODEBUDDY = _Flavour(
    prog="codebuddy",
    version=CODEBUDDY_VERSION,
    version_key="codebuddy_code_version",
    default_model="claude-sonnet-4.5",
    # ref §8.3: codebuddy's `-y` auto-confirms (= --dangerously-skip-permissions).
    extra_aliases={"-y": "--dangerously-skip-permissions"},
    # codebuddy-headless 2.163.0: skips the built-in plugin marketplaces, whose install
    # downloads them at every start (the live recipe passes it to stay offline).
    hidden_flags={"--no-plugin-management": 0},
    codebuddy_wire=True,
)

#: (flag, metavar or "", description, optional?) in help order; one help line each.
_CLAUDE_OPTIONS: tuple[tuple[str, str, str, bool], ...] = (
    ("--verbose", "", "Override verbose mode setting from config", False),
    ("-p, --print", "", "Print response and exit (useful for pipes)", False),
    (
        "--output-format",
        "<format>",
        'Output format (only works with --print): "text" (default), "json" (single result), '
        'or "stream-json" (realtime streaming) (choices: "text", "json", "stream-json")',
        False,
    ),
    (
        "--include-partial-messages",
        "",
        "Include partial message chunks as they arrive (only works with --print and "
        "--output-format=stream-json)",
        True,
    ),
    (
        "--input-format",
        "<format>",
        'Input format (only works with --print): "text" (default), or "stream-json" '
        '(realtime streaming input) (choices: "text", "stream-json")',
        False,
    ),
    ("--replay-user-messages", "", "Re-emit user messages from stdin back on stdout", False),
    ("--mcp-config", "<configs...>", "Load MCP servers from JSON files or strings", False),
    ("--strict-mcp-config", "", "Only use MCP servers from --mcp-config", False),
    ("--system-prompt", "<prompt>", "System prompt to use for the session", False),
    ("--append-system-prompt", "<prompt>", "Append a system prompt to the default", False),
    (
        "--permission-mode",
        "<mode>",
        'Permission mode to use for the session (choices: "acceptEdits", '
        '"bypassPermissions", "default", "dontAsk", "plan")',
        False,
    ),
    ("--dangerously-skip-permissions", "", "Bypass all permission checks", False),
    (
        "--allowedTools, --allowed-tools",
        "<tools...>",
        'Comma or space-separated list of tool names to allow (e.g. "Bash(git:*) Edit")',
        False,
    ),
    (
        "--disallowedTools, --disallowed-tools",
        "<tools...>",
        "Comma or space-separated list of tool names to deny",
        False,
    ),
    ("-c, --continue", "", "Continue the most recent conversation", False),
    ("-r, --resume", "<sessionId>", "Resume a conversation by session id", False),
    ("--fork-session", "", "When resuming, create a new session ID", False),
    ("--session-id", "<uuid>", "Use a specific session ID for the conversation (UUID)", False),
    ("--model", "<model>", "Model for the current session: an alias or a full name", False),
    ("--fallback-model", "<model>", "Fallback model when the default is overloaded", False),
    (
        "--effort",
        "<level>",
        'Effort level for the session (choices: "low", "medium", "high", "xhigh", "max")',
        True,
    ),
    ("--settings", "<file-or-json>", "Load additional settings from a file or JSON", False),
    ("--add-dir", "<directories...>", "Additional directories to allow tool access to", False),
    ("--agents", "<json>", "JSON object defining custom agents", True),
    (
        "--forward-subagent-text",
        "",
        "Forward sub-agent assistant text on stdout (stream-json only)",
        True,
    ),
    ("--max-turns", "<turns>", "Maximum number of agentic turns in print mode", False),
    ("-v, --version", "", "Output the version number", False),
    ("-h, --help", "", "Display help for command", False),
)

_OPTIONAL_CLAUDE_FLAGS = tuple(
    spec.split(", ")[-1] for spec, _, _, optional in _CLAUDE_OPTIONS if optional
)


def _arity(meta: str) -> int:
    if not meta:
        return 0
    return VARIADIC if meta.endswith("...>") else 1


def _claude_grammar(flavour: _Flavour) -> Callable[[bool], Grammar]:
    def grammar(old: bool) -> Grammar:
        flags: dict[str, int] = dict(flavour.hidden_flags)
        aliases: dict[str, str] = dict(flavour.extra_aliases)
        for spec, meta, _, optional in _CLAUDE_OPTIONS:
            if optional and old:
                continue
            names = spec.split(", ")
            canonical = names[-1]
            flags[canonical] = _arity(meta)
            for alias in names[:-1]:
                aliases[alias] = canonical
        status = Grammar(flags={"--json": 0, "--text": 0})
        auth = Grammar(subcommands={"status": status})
        return Grammar(
            flags=flags,
            aliases=aliases,
            positionals=(0, 1),
            subcommands={"auth": auth},
            repeatable=frozenset({"--add-dir", "--mcp-config"}),
        )

    return grammar


def _claude_help(flavour: _Flavour) -> str:
    lines = [
        f"Usage: {flavour.prog} [options] [command] [prompt]",
        "",
        "Starts an interactive session by default, use -p/--print for non-interactive output",
        "",
        "Arguments:",
        "  prompt                                 Your prompt",
        "",
        "Options:",
    ]
    for spec, meta, text, _ in _CLAUDE_OPTIONS:
        head = f"{spec} {meta}".rstrip()
        if flavour.extra_aliases and spec == "--dangerously-skip-permissions":
            head = "-y, --dangerously-skip-permissions"
        lines.append(f"  {head:<38} {text}")
    lines += ["", "Commands:", "  auth                                   Manage authentication"]
    return "\n".join(lines)


# --------------------------------------------------------------------------- claude run


class _Abort(Exception):
    """The CLI refuses the invocation: message for stderr, exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class _TurnState:
    """What one turn has counted so far."""

    __slots__ = (
        "api_error",
        "api_status",
        "api_type",
        "cost",
        "denials",
        "first_token_at",
        "last_text",
        "message_ids",
        "messages",
        "request_at",
        "started",
        "usage",
    )

    def __init__(self, started: float) -> None:
        self.started = started
        self.usage: dict[str, int] = {
            "input_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 0,
        }
        self.cost: float | None = None
        self.messages = 0
        self.last_text: list[str] = []
        self.denials: list[dict[str, Any]] = []
        self.api_error: str | None = None
        self.api_status: int | None = None
        self.api_type: str | None = None
        #: The messages the model began (ids), when the first call went out and when its
        #: first token came back (claude 2.1.332's result reports them).
        self.message_ids: list[str] = []
        self.request_at: float | None = None
        self.first_token_at: float | None = None


class _ClaudeSession:
    """One ``claude -p`` process: options, session, and the frame writer."""

    def __init__(self, run: FakeRun, flavour: _Flavour) -> None:
        self.run = run
        self.flavour = flavour
        p = run.parsed
        self.output_format = p.value("--output-format", "text") or "text"
        self.input_format = p.value("--input-format", "text") or "text"
        self.partial = p.has("--include-partial-messages")
        #: CodeBuddy 2.163.0 with partial messages prints a message's wrapper and
        #: file-history-snapshot lines only after its message_stop; they wait here.
        self.holds = flavour.codebuddy_wire and self.partial
        self.held: list[dict[str, Any]] = []
        mode = p.value("--permission-mode", "default") or "default"
        if p.has("--dangerously-skip-permissions"):
            mode = "bypassPermissions"
        self.permission_mode = mode
        model = p.value("--model") or flavour.default_model
        self.model = flavour.model_aliases.get(model, model)
        self.allowed = _tool_names(p.values("--allowed-tools"))
        self.disallowed = _tool_names(p.values("--disallowed-tools"))
        self.session_id = ""
        self.turns: list[dict[str, Any]] = []
        self.errored = False
        self.message_id = ""
        self.block_index = 0
        self.request_at = time.monotonic()
        #: Results printed so far and what the answered model calls of this process cost
        #: (claude 2.1.332 reports the process's totals: recordings/real/claude/
        #: text-two-turns.jsonl).
        self.results = 0
        self.spent: dict[str, float] = {}

    # -- validation (the real CLI's own checks, in its order) -----------------------

    def validate(self) -> None:
        p = self.run.parsed
        if self.output_format not in _OUTPUT_FORMATS:
            raise _Abort(
                _commander_choice_error(
                    "--output-format", "<format>", self.output_format, _OUTPUT_FORMATS
                )
            )
        if self.input_format not in _INPUT_FORMATS:
            raise _Abort(
                _commander_choice_error(
                    "--input-format", "<format>", self.input_format, _INPUT_FORMATS
                )
            )
        mode = p.value("--permission-mode")
        if mode is not None and mode not in _PERMISSION_MODES:
            raise _Abort(
                _commander_choice_error("--permission-mode", "<mode>", mode, _PERMISSION_MODES)
            )
        effort = p.value("--effort")
        if effort is not None and effort not in _EFFORTS:
            raise _Abort(_commander_choice_error("--effort", "<level>", effort, _EFFORTS))
        if not p.has("--print"):
            # Interactive mode needs a TTY; the fake is always driven through pipes.
            raise _Abort(
                "Error: Raw mode is not supported on the current process.stdin, which Ink uses "
                "as input stream by default.\nRead about how to prevent this error on "
                "https://github.com/vadimdemedes/ink/#israwmodesupported"
            )
        # seed 000 §5.1 / wire §A.4: --verbose is required with stream-json in print mode.
        if self.output_format == "stream-json" and not p.has("--verbose"):
            raise _Abort(
                "Error: When using --print, --output-format=stream-json requires --verbose"
            )
        if self.input_format == "stream-json" and self.output_format != "stream-json":
            raise _Abort("Error: --input-format=stream-json requires output-format=stream-json.")
        if self.partial and self.output_format != "stream-json":
            raise _Abort(
                "Error: --include-partial-messages requires --print and "
                "--output-format=stream-json."
            )
        resuming = p.has("--resume") or p.has("--continue")
        if p.has("--session-id") and resuming and not p.has("--fork-session"):
            raise _Abort(
                "Error: --session-id can only be used with --continue or --resume if "
                "--fork-session is also specified."
            )

    # -- sessions (seed 002 §4.1) -----------------------------------------------------

    def open_session(self) -> None:
        run, p = self.run, self.run.parsed
        minted = p.value("--session-id")
        if minted is not None and not _is_uuid(minted):
            raise _Abort("Error: Invalid session ID. Must be a valid UUID.")
        prior: dict[str, Any] | None = None
        resume = p.value("--resume")
        if resume is not None:
            prior = run.load_session(resume)
            if prior is None:
                raise _Abort(f"No conversation found with session ID: {resume}")
        elif p.has("--continue"):
            prior = self._latest_session()
            if prior is None:
                raise _Abort("No conversation found to continue")
        if prior is not None:
            self.turns = list(prior.get("turns", []))
            run.record["resumed"] = True
            run.record["prior_turns"] = len(self.turns)
            forked = p.has("--fork-session")
            self.session_id = (minted or run.new_session_id()) if forked else str(prior["id"])
        else:
            if minted is not None and run.load_session(minted) is not None:
                raise _Abort(f"Error: Session ID {minted} is already in use.")
            self.session_id = minted or run.new_session_id()
            run.record.update(resumed=False, prior_turns=0)
        run.record["session_id"] = self.session_id

    def _latest_session(self) -> dict[str, Any] | None:
        cwd = self.run.cwd
        for session_id in reversed(self.run.saved_sessions()):
            data = self.run.load_session(session_id)
            turns = data.get("turns", []) if data else []
            if data and turns and turns[-1].get("cwd") == cwd:
                return data
        return None

    def save(self, prompt: str, reply: str) -> None:
        self.turns.append({"prompt": prompt, "reply": reply, "cwd": str(self.run.cwd)})
        self.run.save_session(self.session_id, self.turns)

    # -- frames -------------------------------------------------------------------------

    def out(self, frame: dict[str, Any]) -> None:
        if self.holds and self.message_id and frame.get("type") != "stream_event":
            self.held.append(frame)
        elif self.output_format == "stream-json":
            emit(self.run, frame)

    def release_held(self) -> None:
        """The lines held back while a message streamed, once it has ended."""
        held, self.held = self.held, []
        for frame in held:
            self.out(frame)

    def init_frame(self) -> None:
        mcp = self._mcp_servers()
        tools = ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "WebFetch", "TodoWrite"]
        claude = not self.flavour.codebuddy_wire
        frame: dict[str, Any] = {
            "type": "system",
            "subtype": "init",
            "cwd": str(self.run.cwd),
            "session_id": self.session_id,
            "tools": tools + [f"mcp__{m['name']}" for m in mcp],
            "mcp_servers": mcp,
            "model": self.model,
            "permissionMode": self.permission_mode,
            "slash_commands": ["compact", "context", "cost", "init", "review"],
        }
        if claude:
            frame["terminal_slash_commands"] = list(TERMINAL_SLASH_COMMANDS)
        frame.update(
            {
                "apiKeySource": self._api_key_source(),
                self.flavour.version_key: self.flavour.version,
                "output_style": "default",
                "agents": ["general-purpose"],
                "skills": [],
                "plugins": [
                    {"name": name, "path": "builtin", "source": f"{name}@builtin"}
                    for name in self.flavour.plugins
                ],
            }
        )
        if claude:
            frame.update(INIT_SETTINGS)
        frame["uuid"] = ids.uuid4()
        if claude:
            frame.update(self._claude_init_paths(), **INIT_MODES)
        self.out(frame)

    def _claude_init_paths(self) -> dict[str, Any]:
        """Where claude 2.1.332 keeps this session's memory and messaging socket
        (recordings/real/claude/*.jsonl: the project dir's slug, the process id)."""
        cwd = str(self.run.cwd)
        home = self.run.env.get("HOME", "")
        tmp = self.run.env.get("TMPDIR", "/tmp").rstrip("/") or "/tmp"
        # Every character but an ASCII letter or digit becomes "-" (no ``re``: a fake's
        # turn stays off the heavy modules).
        slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)
        return {
            "sandbox_enabled": False,
            "memory_paths": {"auto": f"{home}/.claude/projects/{slug}/memory/"},
            "original_cwd": cwd,
            "additional_directories": list(self.run.parsed.values("--add-dir")),
            "messaging_socket_path": f"{tmp}/cc-socks/{os.getpid()}.sock",
        }

    def _api_key_source(self) -> str:
        if self.flavour.codebuddy_wire:
            return "www.codebuddy.ai"  # recordings/real/codebuddy: even with a models.json key
        return "ANTHROPIC_API_KEY" if self.run.env.get("ANTHROPIC_API_KEY") else "none"

    def status_frame(self) -> None:
        """CodeBuddy's ``system/status`` (``status: null``) as the turn's first model call
        starts (recordings/real/codebuddy/happy.jsonl: once, even with two calls)."""
        if self.flavour.codebuddy_wire:
            self._status(None)

    def request_started(self, turn: _TurnState) -> None:
        """A model call starts: the flavour's ``system/status`` line, in partial mode."""
        self.request_at = time.monotonic()
        if turn.request_at is None:
            turn.request_at = self.request_at
        if self.flavour.request_status is not None and self.partial:
            self._status(self.flavour.request_status)

    def _status(self, value: str | None) -> None:
        frame = self.envelope("system", {"subtype": "status", "status": value})
        del frame["parent_tool_use_id"]
        self.out(frame)

    def snapshot(self, path: str) -> None:
        """CodeBuddy's ``file-history-snapshot`` of a file a tool is about to write."""
        if not self.flavour.codebuddy_wire:
            return
        stamp = int(time.time() * 1000)
        backup = {"version": 1, "backupTime": stamp, "existedAtTrack": False}
        message_id = ids.uuid4()
        self.out(
            {
                "type": "file-history-snapshot",
                "messageId": message_id,
                "timestamp": stamp,
                "isSnapshotUpdate": True,
                "snapshot": {"messageId": message_id, "trackedFileBackups": {path: backup}},
            }
        )

    def _mcp_servers(self) -> list[dict[str, str]]:
        """Servers from ``--mcp-config`` (JSON or a file) and, unless
        ``--strict-mcp-config``, the project's ``.mcp.json`` (seed 002 §8.1: Claude Code
        auto-loads it; wire §A.4 MCP injection). The fake starts none of them."""
        sources: list[str] = []
        for value in self.run.parsed.values("--mcp-config"):
            if value.lstrip().startswith("{"):
                sources.append(value)
            else:
                sources.append(_read_text(value))
        if not self.run.parsed.has("--strict-mcp-config"):
            sources.append(_read_text(os.path.join(self.run.cwd, ".mcp.json")))
        names: list[str] = []
        for text in sources:
            if not text:  # no such file: not JSON, and its error would cost a json import
                continue
            try:
                data = jsonio.loads(text)
            except ValueError:
                continue
            servers = data.get("mcpServers") if isinstance(data, dict) else None
            if isinstance(servers, dict):
                names += [str(n) for n in servers if str(n) not in names]
        self.run.record["mcp_servers"] = names
        return [{"name": name, "status": "connected"} for name in names]

    def envelope(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        frame: dict[str, Any] = {"type": kind, **body}
        frame["parent_tool_use_id"] = None
        frame["session_id"] = self.session_id
        frame["uuid"] = ids.uuid4()
        if kind in ("assistant", "user") and not self.flavour.codebuddy_wire:
            # recordings/real/claude/*.jsonl: every message line is stamped.
            frame["timestamp"] = iso_utc_ms()
        return frame

    def stream_event(self, event: dict[str, Any], **extra: Any) -> None:
        """One ``stream_event`` line (partial mode) as claude 2.1.332 frames it
        (recordings/real/claude/happy-partial.jsonl): ``extra`` keys (``ttft_ms``,
        ``thinking_display``) before the message's ``api_message_id``."""
        if self.partial:
            frame: dict[str, Any] = {"type": "stream_event", "event": event}
            frame.update(session_id=self.session_id, parent_tool_use_id=None, uuid=ids.uuid4())
            frame.update(extra)
            frame["api_message_id"] = self.message_id
            self.out(frame)

    def message(
        self,
        content: list[dict[str, Any]],
        turn: _TurnState,
        stop_reason: str | None = None,
        *,
        wrapper: bool = True,
    ) -> dict[str, Any]:
        """The model's message: in an ``assistant`` wrapper, or (``wrapper`` false) as
        ``message_start`` opens it."""
        message: dict[str, Any] = {
            "id": self.message_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            # wire §A.4 / ref §2.1.3: 2.1.259+ wrappers always carry stop_reason null
            # (CodeBuddy's tool_use wrapper says "tool_use").
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": self.message_usage(turn),
        }
        if self.flavour.codebuddy_wire:
            message["usage"]["service_tier"] = "standard"
        elif wrapper:
            message["context_management"] = None  # recordings/real/claude/*.jsonl
        return message

    @staticmethod
    def message_usage(turn: _TurnState) -> dict[str, int]:
        """A message's usage as far as the turn has counted (message_start, the wrappers
        and message_delta all carry these four; recordings/real/claude/*-partial.jsonl)."""
        return {
            "input_tokens": turn.usage["input_tokens"],
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": turn.usage["cache_read_input_tokens"],
            "output_tokens": turn.usage["output_tokens"],
        }

    def begin_message(self, turn: _TurnState) -> None:
        if self.message_id:
            return
        self.message_id = _hex_id("msg_01")
        self.block_index = 0
        turn.messages += 1
        turn.message_ids.append(self.message_id)
        if turn.first_token_at is None:
            turn.first_token_at = time.monotonic()
        turn.last_text = []
        message = self.message([], turn, wrapper=False)
        # recordings/real/claude/*-partial.jsonl: the time to the first token and how
        # thinking is displayed ride on the message_start line.
        ttft = int((time.monotonic() - self.request_at) * 1000)
        self.stream_event(
            {"type": "message_start", "message": message},
            ttft_ms=ttft,
            thinking_display="updates",
        )

    def end_message(self, turn: _TurnState, stop_reason: str) -> None:
        if not self.message_id:
            return
        self.stream_event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": self.message_usage(turn),
            }
        )
        self.stream_event({"type": "message_stop"})
        self.message_id = ""
        self.release_held()

    def block(
        self,
        turn: _TurnState,
        start: dict[str, Any],
        deltas: Sequence[dict[str, Any]],
        final: dict[str, Any],
        stop_reason: str | None = None,
        *,
        before_delta: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        """One content block: its start and deltas (partial mode), its own wrapper, then its
        ``content_block_stop``. ``before_delta`` prints what precedes each delta."""
        self.begin_message(turn)
        index = self.block_index
        self.block_index += 1
        began = time.monotonic()
        # recordings/real/claude/happy-partial.jsonl: a thinking block's start and its
        # thinking deltas say how thinking is displayed.
        shown = {"thinking_display": "updates"}
        thinking = start.get("type") == "thinking"
        extra = shown if thinking else {}
        self.stream_event(
            {"type": "content_block_start", "index": index, "content_block": start}, **extra
        )
        for delta in deltas:
            if before_delta is not None:
                before_delta(delta)
            extra = shown if delta.get("type") == "thinking_delta" else {}
            self.stream_event(
                {"type": "content_block_delta", "index": index, "delta": delta}, **extra
            )
        message = self.message([final], turn, stop_reason)
        wrapper = self.envelope("assistant", {"message": message})
        if thinking and not self.flavour.codebuddy_wire:
            # recordings/real/claude/happy.jsonl: a thinking wrapper says how long it took.
            wrapper["thinking_duration_ms"] = int((time.monotonic() - began) * 1000)
            wrapper.update(shown)
        # claude 2.1.332 prints a block's wrapper before the block's content_block_stop
        # (recordings/real/claude/happy-partial.jsonl, text-partial.jsonl, cancel.jsonl).
        self.out(wrapper)
        self.stream_event({"type": "content_block_stop", "index": index})

    def result(self, turn: _TurnState, stop_reason: str) -> dict[str, Any]:
        """The turn's ``result`` line, its keys in the order the flavour prints them."""
        cost = turn.cost
        if cost is None:
            cost = round(turn.usage["input_tokens"] * 3e-6 + turn.usage["output_tokens"] * 15e-6, 6)
        if self.flavour.codebuddy_wire:
            return self._codebuddy_result_frame(turn, stop_reason, cost)
        return self._claude_result_frame(turn, stop_reason, cost)

    def _claude_result_frame(
        self, turn: _TurnState, stop_reason: str, cost: float
    ) -> dict[str, Any]:
        """claude 2.1.332's result (recordings/real/claude/*.jsonl), in its key order (not
        type-first): this turn's usage, this process's cost and model usage so far."""
        now = time.monotonic()
        elapsed = int((now - turn.started) * 1000)
        failed = turn.api_error is not None
        answered = turn.messages > 0  # a failed first call has no model usage
        counted = {
            "inputTokens": turn.usage["input_tokens"],
            "outputTokens": turn.usage["output_tokens"],
            "cacheReadInputTokens": turn.usage["cache_read_input_tokens"],
            "costUSD": cost,
        }
        if answered:
            for key, value in counted.items():
                self.spent[key] = self.spent.get(key, 0) + value
        total_cost = self.spent.get("costUSD", 0)
        frame: dict[str, Any] = {
            "duration_api_ms": elapsed,
            "stop_reason": stop_reason,
            "session_id": self.session_id,
            "total_cost_usd": _js_number(total_cost),
            "usage": result_usage(self.message_usage(turn), failed),
            "modelUsage": self._model_usage(self.spent) if self.spent else {},
            "permission_denials": turn.denials,
            "terminal_reason": "api_error" if failed else "completed",
            **RESULT_STATE,
            "is_error": failed,
            "num_turns": max(1, turn.messages),
            "subtype": "success",
            "api_error_status": turn.api_status,
        }
        if failed:
            frame["api_error_type"] = turn.api_type
        frame["result"] = turn.api_error if failed else "".join(turn.last_text)
        first = turn.first_token_at
        ttft = int((first - turn.started) * 1000) if first is not None else None
        if ttft is not None:
            frame["ttft_ms"] = ttft
        frame.update(type="result", duration_ms=elapsed, uuid=ids.uuid4())
        if self.partial:
            frame["begun_message_ids"] = list(turn.message_ids)
        if ttft is not None:
            asked = turn.request_at if turn.request_at is not None else turn.started
            frame["ttft_stream_ms"] = ttft
            frame["time_to_request_ms"] = int((asked - turn.started) * 1000)
            frame["first_content_frame_ms"] = ttft
        frame["queued_turn_count"] = 0
        frame["result_index"] = self.results
        frame["model_usage_since_last_result"] = self._model_usage(counted) if answered else {}
        self.results += 1
        return frame

    def _model_usage(self, counted: Mapping[str, float]) -> dict[str, Any]:
        """``modelUsage``-shaped counts of the session's one model."""
        entry = {
            "inputTokens": counted["inputTokens"],
            "outputTokens": counted["outputTokens"],
            "cacheReadInputTokens": counted["cacheReadInputTokens"],
            "cacheCreationInputTokens": 0,
            "webSearchRequests": 0,
            "costUSD": _js_number(counted["costUSD"]),
            **MODEL_USAGE_LIMITS,
            "canonicalModel": self.model,
            "provider": "firstParty",
            "costBasis": "list",
        }
        return {self.model: entry}

    def _codebuddy_result_frame(
        self, turn: _TurnState, stop_reason: str, cost: float
    ) -> dict[str, Any]:
        elapsed = int((time.monotonic() - turn.started) * 1000)
        usage = {**turn.usage, "server_tool_use": {"web_search_requests": 0}}
        usage["service_tier"] = "standard"
        frame: dict[str, Any] = {
            "subtype": "success",
            "is_error": turn.api_error is not None,
            "duration_ms": elapsed,
            "duration_api_ms": elapsed,
            "num_turns": max(1, turn.messages),
            "result": turn.api_error if turn.api_error is not None else "".join(turn.last_text),
            "stop_reason": stop_reason,
            "session_id": self.session_id,
            "total_cost_usd": cost,
            "usage": usage,
            "modelUsage": {
                self.model: {
                    "inputTokens": turn.usage["input_tokens"],
                    "outputTokens": turn.usage["output_tokens"],
                    "cacheReadInputTokens": turn.usage["cache_read_input_tokens"],
                    "cacheCreationInputTokens": 0,
                    "costUSD": cost,
                }
            },
            "permission_denials": turn.denials,
            "type": "result",
            "uuid": ids.uuid4(),
        }
        if turn.api_error is not None:
            del frame["result"], frame["stop_reason"], frame["modelUsage"]
            frame["subtype"] = "error_during_execution"
            frame["errors"] = [turn.api_error]
            frame["errors_info"] = [{"status": turn.api_status, "code": 0}]
        return frame

    # -- permissions (seed 000 §10) ------------------------------------------------------

    def may_run(self, name: str, kind: str) -> bool:
        if name in self.disallowed:
            return False
        if self.permission_mode == "bypassPermissions" or name in self.allowed:
            return True
        if kind == "write":
            return self.permission_mode == "acceptEdits" or "Edit" in self.allowed
        if kind == "shell":
            return False
        return name in _READ_ONLY_TOOLS


def _claude_tool(session: _ClaudeSession, turn: _TurnState, step: Step) -> None:
    """An assistant tool_use block, the tool run by the CLI, its user tool_result."""
    run = session.run
    kind = str(step.get("tool", "other"))
    tool_id = str(step.get("id") or _hex_id("toolu_01"))
    result_extra: Any
    if kind == "write":
        path = str(step.get("path", "file.txt"))
        target = run.resolve(path)
        name, tool_input = "Write", {"file_path": target, "content": str(step.get("content", ""))}
        denial = (
            f"Claude requested permissions to write to {target}, but you haven't granted it yet."
        )
    elif kind == "shell":
        command = str(step.get("command", ""))
        # recordings/real/claude/shell.jsonl: the input is what the model sent; the
        # scenario's model sends only the command (no invented ``description``).
        tool_input = {"command": command}
        if step.get("description"):
            tool_input["description"] = str(step.get("description"))
        name = "Bash"
        denial = "Claude requested permissions to use Bash, but you haven't granted it yet."
    else:
        name = str(step.get("name", "Read"))
        tool_input = dict(step.get("input", {}))
        denial = f"Claude requested permissions to use {name}, but you haven't granted it yet."
    codebuddy = session.flavour.codebuddy_wire
    if kind == "write":
        session.snapshot(str(step.get("path", "file.txt")))
    session.block(
        turn,
        {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
        [{"type": "input_json_delta", "partial_json": part} for part in chunk_json(tool_input)],
        {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input},
        "tool_use" if codebuddy else None,
    )
    if kind == "write":
        session.snapshot(str(step.get("path", "file.txt")))
    is_error = bool(step.get("is_error", False))
    allowed = session.may_run(name, kind)
    if not allowed:
        content, is_error = denial, True
        turn.denials.append({"tool_name": name, "tool_use_id": tool_id, "tool_input": tool_input})
        result_extra = f"Error: {denial}"
    elif kind == "write":
        target = tool_input["file_path"]
        content = str(step.get("output") or f"File created successfully at: {target}")
        if not is_error:
            run.write_file(str(step.get("path", "file.txt")), tool_input["content"])
        result_extra = {"type": "create", "filePath": target, "content": tool_input["content"]}
        # recordings/real/claude/happy.jsonl: a new file has no patch and no original.
        result_extra.update(structuredPatch=[], originalFile=None, userModified=False)
    else:
        content = str(step.get("output", ""))
        result_extra = {"stdout": content, "stderr": "", "interrupted": False, "isImage": False}
        if kind == "shell":
            result_extra["noOutputExpected"] = False  # recordings/real/claude/shell.jsonl
    block: dict[str, Any] = {
        "tool_use_id": tool_id,
        "type": "tool_result",
        "content": _codebuddy_result(kind, tool_input, content, is_error) if codebuddy else content,
        "is_error": is_error,
    }
    if kind == "write" and not is_error and not codebuddy:
        del block["is_error"]  # recordings/real/claude/happy.jsonl: a written file says none
    user = session.envelope("user", {"message": {"role": "user", "content": [block]}})
    user["tool_use_result"] = result_extra
    if allowed and session.permission_mode == "bypassPermissions" and not codebuddy:
        # recordings/real/claude/happy.jsonl, shell.jsonl: why the tool could run (only
        # the bypass mode's reason has been seen).
        decision = {"decision": "accept", "source": "config", "reason_type": "mode"}
        user["tool_result_meta"] = [{"id": tool_id, "permission_decision": decision}]
    # claude 2.1.332 with --include-partial-messages ends the model's message
    # (message_delta, message_stop) before it prints the tool's result
    # (recordings/real/claude/happy-partial.jsonl).
    session.end_message(turn, "tool_use")
    session.out(user)
    session.request_started(turn)  # the model is called again with the tool's result


def _codebuddy_result(
    kind: str, tool_input: Mapping[str, Any], content: str, is_error: bool
) -> list[dict[str, str]]:
    """CodeBuddy's tool result text (recordings/real/codebuddy/happy.jsonl, shell.jsonl)."""
    if not is_error and kind == "write":
        content = f"Successfully created and wrote to new file: {tool_input['file_path']}"
    elif not is_error and kind == "shell":
        content = (
            f"Command: {tool_input['command']}\nStdout: {content}\nStderr: (empty)\n"
            "Exit Code: 0\nSignal: (none)"
        )
    return [{"type": "text", "text": content}]


def _claude_turn(session: _ClaudeSession, prompt: str) -> None:
    """One user turn: every scenario step rendered as Claude Code frames."""
    turn = _TurnState(started=time.monotonic())
    session.init_frame()
    session.status_frame()
    session.request_started(turn)
    stop_reason = _claude_steps(session, turn)
    _claude_close(session, turn, stop_reason)
    _claude_result(session, turn, prompt, stop_reason)


def _claude_steps(session: _ClaudeSession, turn: _TurnState) -> str:
    """Render the scenario's steps, each with its kind's handler (:data:`_CLAUDE_STEPS`);
    the turn's stop reason (a failed model call ends the turn there)."""
    for step in session.run.scenario.steps:
        _CLAUDE_STEPS.get(step.kind, _common_step)(session, turn, step)
        if turn.api_error is not None:
            return "stop_sequence"
    return session.run.scenario.stop_reason


def _common_step(session: _ClaudeSession, turn: _TurnState, step: Step) -> None:
    """A step every fake renders alike (stderr, exit, ...); any other is an error."""
    if not session.run.run_common_step(step):
        raise ValueError(f"claude fake cannot render step kind {step.kind!r}")


def _thinking_step(session: _ClaudeSession, turn: _TurnState, step: Step) -> None:
    """A thinking block, each delta announced by a token estimate (not on CodeBuddy's wire)."""
    estimated = 0

    def announce(delta: dict[str, Any]) -> None:
        # claude 2.1.332 prints system/thinking_tokens before each thinking delta, after
        # the block's content_block_start, with or without partial messages: about 4
        # characters a token, rounded up, and a running total that each block starts
        # afresh (recordings/real/claude/thinking-chunks*.jsonl: 4, 7, 10, then 2, 6).
        nonlocal estimated
        if delta.get("type") != "thinking_delta" or session.flavour.codebuddy_wire:
            return
        estimate = -(-len(str(delta.get("thinking", ""))) // 4)
        estimated += estimate
        body = {
            "subtype": "thinking_tokens",
            "estimated_tokens": estimated,
            "estimated_tokens_delta": estimate,
        }
        frame = session.envelope("system", body)
        del frame["parent_tool_use_id"]
        session.out(frame)

    session.block(
        turn,
        {"type": "thinking", "thinking": "", "signature": ""},
        [{"type": "thinking_delta", "thinking": c} for c in step.chunks]
        + [{"type": "signature_delta", "signature": "EqQBCkYIBxgCKkC"}],
        {"type": "thinking", "thinking": step.text, "signature": "EqQBCkYIBxgCKkC"},
        before_delta=announce,
    )


def _text_step(session: _ClaudeSession, turn: _TurnState, step: Step) -> None:
    session.block(
        turn,
        {"type": "text", "text": ""},
        [{"type": "text_delta", "text": c} for c in step.chunks],
        {"type": "text", "text": step.text},
    )
    turn.last_text.append(step.text)


def _usage_step(session: _ClaudeSession, turn: _TurnState, step: Step) -> None:
    """Add the step's tokens and cost to the turn's (reported by the result)."""
    turn.usage["input_tokens"] += int(step.get("input_tokens", 0))
    turn.usage["output_tokens"] += int(step.get("output_tokens", 0))
    turn.usage["cache_read_input_tokens"] += int(step.get("cached_read_tokens", 0))
    if step.get("cost_usd") is not None:
        turn.cost = (turn.cost or 0.0) + float(step.get("cost_usd"))


def _malformed_step(session: _ClaudeSession, turn: _TurnState, step: Step) -> None:
    """An assistant frame cut short, then the next line."""
    content = [{"type": "text", "text": step.text or "a frame cut short"}]
    frame = session.envelope("assistant", {"message": session.message(content, turn)})
    session.run.out(truncated_line(frame))


def _foreign_step(session: _ClaudeSession, turn: _TurnState, step: Step) -> None:
    _claude_foreign(session)


def _oversize_step(session: _ClaudeSession, turn: _TurnState, step: Step) -> None:
    frame = session.envelope("system", {"subtype": "status", "status": "working"})
    session.run.out(padded_line(frame, "detail", int(step.get("bytes", 1))))


def _crash_step(session: _ClaudeSession, turn: _TurnState, step: Step) -> None:
    """``mid_line``: die halfway through an assistant frame; any other crash is common."""
    if not step.get("mid_line"):
        _common_step(session, turn, step)
        return
    content = [{"type": "text", "text": "cut off"}]
    frame = session.envelope("assistant", {"message": session.message(content, turn)})
    session.run.out_raw(truncated_line(frame).encode("utf-8"))
    session.run.exit(int(step.get("exit_code", 1)))


def _claude_close(session: _ClaudeSession, turn: _TurnState, stop_reason: str) -> None:
    """End the open message (a failed model call leaves it open and marks the session)."""
    if turn.api_error is not None:
        session.errored = True
        return
    if not session.message_id:
        # The model is called once more after a tool result and answers.
        session.begin_message(turn)
    session.end_message(turn, stop_reason)


def _claude_result(
    session: _ClaudeSession, turn: _TurnState, prompt: str, stop_reason: str
) -> None:
    """The ``result`` frame, the saved session, and the reply in the asked output format."""
    if session.flavour.codebuddy_wire:
        session.init_frame()  # recordings/real/codebuddy: init again before the result
    result = session.result(turn, stop_reason)
    session.out(result)
    reply = str(result.get("result", turn.api_error or ""))
    session.save(prompt, reply)
    if session.output_format == "json":
        emit(session.run, result)
    elif session.output_format == "text":
        session.run.out(reply)


def _claude_api_error(session: _ClaudeSession, turn: _TurnState, step: Step) -> None:
    """The CLI's own report of a failed model call (anthropics/claude-code#79500 shapes)."""
    # The model call failed mid-stream: an open message never gets its message_delta.
    session.message_id = ""
    session.release_held()
    text = _api_error_text(step, session.run.env)
    status = int(step.get("status", 500))
    # recordings/real/claude/api_error.jsonl: the synthetic message's keys, in its order.
    message = {
        "diagnostics": None,
        "id": ids.uuid4(),
        "container": None,
        "model": "<synthetic>",
        "role": "assistant",
        "stop_details": None,
        "stop_reason": "stop_sequence",
        "stop_sequence": "",
        "type": "message",
        "usage": SYNTHETIC_USAGE,
        "content": [{"type": "text", "text": text}],
        "context_management": None,
    }
    if session.flavour.codebuddy_wire:
        # recordings/real/codebuddy/api_error.jsonl: "<status> <message> (<request>/<session>)"
        # as a plain assistant text; the result carries it in ``errors``.
        request_id = ids.uuid4().replace("-", "")
        text = f"{status} {step.get('message', '')} ({request_id}/{session.session_id})"
        message = session.message([{"type": "text", "text": text}], turn)
        message["model"] = f"custom-local:{session.model}"
        session.out(session.envelope("assistant", {"message": message}))
    else:
        frame = session.envelope("assistant", {"message": message})
        frame["error"] = "server_error" if status >= 500 else "invalid_request"
        frame["is_api_error_message"] = True
        frame["api_error_status"] = status
        frame["api_error_type"] = str(step.get("code", "api_error"))
        session.out(frame)
    turn.api_error = text
    turn.api_status = status
    turn.api_type = str(step.get("code", "api_error"))


def _claude_foreign(session: _ClaudeSession) -> None:
    """A sub-agent frame of another session: it must not end or fail the main turn."""
    frame = session.envelope(
        "assistant",
        {
            "message": {
                "id": _hex_id("msg_01"),
                "type": "message",
                "role": "assistant",
                "model": session.model,
                "content": [],
                "stop_reason": "end_turn",
                "stop_sequence": None,
            }
        },
    )
    frame["parent_tool_use_id"] = _hex_id("toolu_01")
    frame["session_id"] = ids.uuid4()
    frame["error"] = "server_error"
    session.out(frame)


#: The handler of each step kind the claude fake renders itself; others are common steps.
_CLAUDE_STEPS: dict[str, Callable[[_ClaudeSession, _TurnState, Step], None]] = {
    "thinking": _thinking_step,
    "text": _text_step,
    "tool": _claude_tool,
    "usage": _usage_step,
    "api_error": _claude_api_error,
    "malformed": _malformed_step,
    "foreign": _foreign_step,
    "oversize": _oversize_step,
    "crash": _crash_step,
}


def _auth_status(run: FakeRun) -> int:
    """``claude auth status [--json|--text]`` (ref §5.4)."""
    missing = run.env.get("FAKE_CLI_AUTH") == "missing" or run.scenario.auth == "missing"
    if run.parsed.has("--text"):
        run.out("Not logged in" if missing else "Logged in using Claude API key")
    else:
        run.out(_AUTH_MISSING if missing else _AUTH_OK)
    return 1 if missing else 0


_AUTH_OK = jsonio.dumps(
    {"loggedIn": True, "authMethod": "api_key", "apiProvider": "firstParty", "apiKeySource": "env"}
)
_AUTH_MISSING = jsonio.dumps({"loggedIn": False, "authMethod": "none", "apiProvider": "firstParty"})


def _read_turns(session: _ClaudeSession) -> None:
    """stream-json input: one user message per line, one turn each, until stdin closes."""
    run = session.run
    prompts: list[str] = []
    while True:
        raw = run.read_stdin_line()
        if raw is None:
            break
        line = raw.decode("utf-8", "replace")
        if not line.strip():
            continue
        try:
            frame = jsonio.loads(line)
        except ValueError as exc:
            raise _Abort(f"Error parsing streaming input line: {line}: SyntaxError: {exc}") from exc
        run.record.setdefault("stdin_frames", []).append(frame)
        kind = frame.get("type") if isinstance(frame, dict) else None
        if kind == "control_request":
            _control(session, frame)
            continue
        if kind != "user":
            raise _Abort(f"Error: Expected message type 'user' or 'control', got '{kind}'")
        prompt = user_text(frame.get("message"))
        prompts.append(prompt)
        if run.parsed.has("--replay-user-messages"):
            replay = session.envelope("user", {"message": frame.get("message")})
            replay["isReplay"] = True
            session.out(replay)
        run.record["prompt"] = prompts[0]
        run.record["prompts"] = list(prompts)
        run.record["prompt_via"] = "stdin-stream-json"
        _claude_turn(session, prompt)


def _control(session: _ClaudeSession, frame: dict[str, Any]) -> None:
    """Answer the host's control_request (wire §A.4 control channel)."""
    raw = frame.get("request")
    request: dict[str, Any] = raw if isinstance(raw, dict) else {}
    subtype = request.get("subtype")
    rid = frame.get("request_id")
    response: dict[str, Any]
    if subtype in ("initialize", "interrupt", "set_permission_mode", "set_model"):
        if subtype == "set_permission_mode" and isinstance(request.get("mode"), str):
            session.permission_mode = request["mode"]
        if subtype == "set_model" and isinstance(request.get("model"), str):
            session.model = request["model"]
        response = {"subtype": "success", "request_id": rid, "response": {}}
    else:
        response = {
            "subtype": "error",
            "request_id": rid,
            "error": f"Unsupported control request subtype: {subtype}",
        }
    session.out({"type": "control_response", "response": response})


def _claude_main(flavour: _Flavour) -> Callable[[FakeRun], int]:
    def main(run: FakeRun) -> int:
        if run.parsed.command == ("auth", "status"):
            return _auth_status(run)
        session = _ClaudeSession(run, flavour)
        try:
            session.validate()
            session.open_session()
            if session.input_format == "stream-json":
                if run.parsed.positionals:
                    prompt = run.parsed.positionals[0]
                    run.record.update(prompt=prompt, prompts=[prompt], prompt_via="argv")
                    _claude_turn(session, prompt)
                _read_turns(session)
            else:
                prompt = run.parsed.positionals[0] if run.parsed.positionals else ""
                via = "argv"
                if not prompt:
                    prompt, via = run.read_stdin_text(), "stdin"
                if not prompt.strip():
                    raise _Abort(
                        "Error: Input must be provided either through stdin or as a prompt "
                        "argument when using --print"
                    )
                run.record.update(prompt=prompt, prompts=[prompt], prompt_via=via)
                _claude_turn(session, prompt)
        except _Abort as exc:
            run.err(exc.message + "\n")
            return exc.code
        run.record["turns"] = len(session.turns)
        run.linger_if_asked()
        if session.errored and flavour.codebuddy_wire:
            return 0  # recordings/real/codebuddy/api_error.jsonl: the result says it, exit 0
        if run.scenario.exit_code:
            return run.scenario.exit_code
        return 1 if session.errored else 0

    return main


# --------------------------------------------------------------------------- amp

_AMP_MODES = ("smart", "rush", "deep", "free")
_AMP_OPTIONS: tuple[tuple[str, str, str], ...] = (
    ("-x, --execute", "", "Execute mode: run the prompt (argument or stdin) and exit"),
    ("--stream-json", "", "Print Claude Code-compatible stream JSON (execute mode only)"),
    ("--dangerously-allow-all", "", "Allow all commands without asking (execute mode)"),
    ("-m, --mode", "<mode>", 'Agent mode (choices: "smart", "rush", "deep", "free")'),
    ("--mcp-config", "<json>", "MCP server configuration (JSON or file)"),
    ("--settings-file", "<path>", "Settings file path"),
    ("--log-level", "<level>", "Log level"),
    ("--log-file", "<path>", "Log file path"),
    ("--no-notifications", "", "Disable notifications"),
    ("--no-color", "", "Disable colour output"),
    ("--no-ide", "", "Do not connect to an IDE"),
    ("-V, --version", "", "Print the version number"),
    ("-h, --help", "", "Display help"),
)


def _amp_grammar(old: bool) -> Grammar:
    flags: dict[str, int] = {}
    aliases: dict[str, str] = {}
    for spec, meta, _ in _AMP_OPTIONS:
        names = spec.split(", ")
        flags[names[-1]] = _arity(meta)
        for alias in names[:-1]:
            aliases[alias] = names[-1]
    return Grammar(flags=flags, aliases=aliases, positionals=(0, 1))


def _amp_help() -> str:
    lines = ["Usage: amp [options] [message]", "", "Amp CLI", "", "Options:"]
    lines += [f"  {(spec + ' ' + meta).rstrip():<28} {text}" for spec, meta, text in _AMP_OPTIONS]
    return "\n".join(lines)


class _AmpRun:
    """``amp -x --stream-json``: Claude-shaped whole messages, thread ids ``T-<uuid>``."""

    def __init__(self, run: FakeRun, prompt: str) -> None:
        self.run = run
        self.prompt = prompt
        self.thread = "T-" + ids.uuid4()
        self.content: list[dict[str, Any]] = []
        self.turns = 0
        self.usage = {"input_tokens": 0, "output_tokens": 0}
        self.last_text: list[str] = []
        self.allow_all = run.parsed.has("--dangerously-allow-all")

    def frame(self, kind: str, body: dict[str, Any]) -> None:
        frame = {"type": kind, **body, "parent_tool_use_id": None, "session_id": self.thread}
        emit(self.run, frame)

    def flush(self, stop_reason: str) -> None:
        if not self.content:
            return
        self.turns += 1
        message = {
            "type": "message",
            "role": "assistant",
            "content": self.content,
            "stop_reason": stop_reason,
            "usage": dict(self.usage),
        }
        self.frame("assistant", {"message": message})
        self.content = []

    def tool(self, step: Step) -> None:
        kind = str(step.get("tool", "other"))
        tool_id = str(step.get("id") or _hex_id("toolu_"))
        if kind == "write":
            path = str(step.get("path", "file.txt"))
            name = "create_file"
            tool_input: dict[str, Any] = {
                "path": self.run.resolve(path),
                "content": str(step.get("content", "")),
            }
        elif kind == "shell":
            name, tool_input = "Bash", {"cmd": str(step.get("command", ""))}
        else:
            name, tool_input = str(step.get("name", "Read")), dict(step.get("input", {}))
        self.content.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        self.flush("tool_use")
        is_error = bool(step.get("is_error", False))
        if kind == "shell" and not self.allow_all:
            content, is_error = (
                "Command rejected: it is not on the allowlist and execute mode cannot ask; "
                "pass --dangerously-allow-all to allow it.",
                True,
            )
        elif kind == "write":
            content = str(step.get("output") or f"Successfully created file {tool_input['path']}")
            if not is_error:
                self.run.write_file(str(step.get("path", "file.txt")), tool_input["content"])
        else:
            content = str(step.get("output", ""))
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id}
        block.update(content=content, is_error=is_error)
        self.frame("user", {"message": {"role": "user", "content": [block]}})

    def main(self) -> int:
        run = self.run
        started = time.monotonic()
        tools = ["Bash", "create_file", "edit_file", "glob", "Grep", "Read", "todo_write"]
        self.frame(
            "system", {"subtype": "init", "cwd": str(run.cwd), "tools": tools, "mcp_servers": []}
        )
        self.frame(
            "user",
            {"message": {"role": "user", "content": [{"type": "text", "text": self.prompt}]}},
        )
        error: str | None = None
        for step in run.scenario.steps:
            kind = step.kind
            if kind == "thinking":
                self.content.append({"type": "thinking", "thinking": step.text})
            elif kind == "text":
                if not self.content:
                    self.last_text = []
                self.content.append({"type": "text", "text": step.text})
                self.last_text.append(step.text)
            elif kind == "tool":
                self.tool(step)
            elif kind == "usage":
                self.usage["input_tokens"] += int(step.get("input_tokens", 0))
                self.usage["output_tokens"] += int(step.get("output_tokens", 0))
            elif kind == "api_error":
                self.flush("end_turn")
                error = f"{step.get('status', 500)} {step.get('message', '')}".strip()
                break
            elif kind == "malformed":
                message = {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "text", "text": step.text or "a frame cut short"}],
                }
                run.out(truncated_line({"type": "assistant", "message": message}))
            elif kind == "foreign":
                # Another thread's sub-agent message: it must not end this turn.
                message = {
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "stop_reason": "end_turn",
                }
                emit(
                    run,
                    {
                        "type": "assistant",
                        "message": message,
                        "parent_tool_use_id": _hex_id("toolu_"),
                        "session_id": "T-" + ids.uuid4(),
                    },
                )
            elif kind == "oversize":
                frame = {"type": "system", "subtype": "status", "session_id": self.thread}
                run.out(padded_line(frame, "message", int(step.get("bytes", 1))))
            elif kind == "crash" and step.get("mid_line"):
                message = {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "cut off"}],
                }
                run.out_raw(truncated_line({"type": "assistant", "message": message}).encode())
                run.exit(int(step.get("exit_code", 1)))
            elif not run.run_common_step(step):
                raise ValueError(f"amp fake cannot render step kind {kind!r}")
        self.flush(run.scenario.stop_reason)
        elapsed = int((time.monotonic() - started) * 1000)
        result: dict[str, Any] = {
            "subtype": "success" if error is None else "error_during_execution",
            "duration_ms": elapsed,
            "is_error": error is not None,
            "num_turns": max(1, self.turns),
        }
        if error is None:
            result["result"] = "".join(self.last_text)
            result["usage"] = dict(self.usage)
        else:
            result["error"] = error
        self.frame("result", result)
        run.linger_if_asked()
        if run.scenario.exit_code:
            return run.scenario.exit_code
        return 0 if error is None else 1


def _amp_main(run: FakeRun) -> int:
    p = run.parsed
    mode = p.value("--mode")
    if mode is not None and mode not in _AMP_MODES:
        run.err(_commander_choice_error("--mode", "<mode>", mode, _AMP_MODES) + "\n")
        return 1
    if not p.has("--execute"):
        if p.has("--stream-json"):
            run.err("Error: --stream-json requires --execute (-x) mode\n")
            return 1
        run.err("Error: the interactive TUI needs a terminal (stdin is not a TTY)\n")
        return 1
    if p.positionals:
        prompt = p.positionals[0]
        run.record.update(prompt=prompt, prompt_via="argv")
    else:
        prompt = run.read_stdin_text()
    if not prompt.strip():
        run.err("Error: no message: pass one as an argument or on stdin\n")
        return 1
    if not p.has("--stream-json"):
        # Plain execute mode prints only the final answer.
        texts = [s.text for s in run.scenario.steps if s.kind == "text"]
        run.out("".join(texts))
        return run.scenario.exit_code
    return _AmpRun(run, prompt).main()


# --------------------------------------------------------------------------- specs


def _claude_spec(
    agent_id: str, flavour: _Flavour, version_output: str, *, sigterm_exit_code: int | None = None
) -> CliSpec:
    return CliSpec(
        agent_id=agent_id,
        prog=flavour.prog,
        version_output=version_output,
        grammar=_claude_grammar(flavour),
        style="commander",
        run=_claude_main(flavour),
        version_args=(("--version",), ("-v",)),
        help_args=(("-p", "--help"), ("--help",), ("-h",)),
        help_text=_claude_help(flavour),
        optional_flags=_OPTIONAL_CLAUDE_FLAGS,
        auth_args=("auth", "status"),
        auth_ok=(_AUTH_OK, 0),
        auth_missing=(_AUTH_MISSING, 1),
        sigterm_exit_code=sigterm_exit_code,
    )


SPECS: dict[str, CliSpec] = {
    # claude traps SIGTERM and exits 143 (recordings/real/claude/cancel.jsonl)
    "claude": _claude_spec(
        "claude", _CLAUDE, f"{CLAUDE_VERSION} (Claude Code)", sigterm_exit_code=143
    ),
    "codebuddy": _claude_spec("codebuddy", _CODEBUDDY, CODEBUDDY_VERSION),
    "amp": CliSpec(
        agent_id="amp",
        prog="amp",
        version_output=f"{AMP_VERSION} (released 2026-11-27T00:00:00.000Z)",
        grammar=_amp_grammar,
        style="commander",
        run=_amp_main,
        version_args=(("--version",), ("-V",)),
        help_args=(("--help",), ("-h",)),
        help_text=_amp_help(),
    ),
}
