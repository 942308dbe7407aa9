"""Fake Codex (``exec --json``), Cursor Agent, OpenCode, BYOK OpenCode, MiMo and Gemini:
the ``json-event-stream`` emulators (seed 000 §3: one stream format, five dialects).

What each real CLI does, and where it is written down:

* **codex** (seed 000 §5.3, seed 002 §4.2, wire §A.3.1, real-clis §2 codex 0.171.0).
  Rust/clap argv: an unknown argument is ``error: unexpected argument '-C' found``, exit 2.
  ``codex exec --json --skip-git-repo-check [--sandbox S] [-c k=v]... [-C dir] [--add-dir d]...
  [--model M] [--disable plugins]`` with the prompt on stdin (stderr says ``Reading prompt
  from stdin...``); ``codex exec resume --json ... <thread_id> [-]`` continues a thread and
  *rejects* ``--sandbox``, ``-C`` and ``--add-dir`` (seed 002 §4.2), so the policy comes from
  ``-c sandbox_mode="..."``. Frames: ``thread.started{thread_id}``, ``turn.started``,
  ``item.started`` / ``item.completed`` (``agent_message`` and ``reasoning`` only completed:
  there are **no text deltas in exec mode**; ``command_execution`` started then completed
  with ``aggregated_output`` / ``exit_code`` / ``status``; ``file_change`` only completed,
  wire §A.3.1), ``turn.completed{usage}``; a failed model call is ``error`` + ``turn.failed``
  and exit 1. The default sandbox is read-only and rejects a patch (real-clis §1 codex), so a
  write happens only under ``workspace-write`` / ``danger-full-access``. An unknown model slug
  adds an ``item.completed{type:"error"}`` "Model metadata ... not found" notice (real-clis §1).
  ``codex app-server`` is accepted here and handed to :mod:`fake_clis.codex_app_server`.
* **cursor-agent** (seed 000 §5.5, wire §A.5 Cursor, ref §2.2 cursor-agent). Node/commander
  argv (``error: unknown option '--x'``, exit 1). ``--print --output-format stream-json
  --stream-partial-output --force [--trust] [--workspace d] [--model M] [--resume id]``,
  prompt on stdin. Frames: ``system/init``, the ``user`` echo, ``thinking`` ``delta`` /
  ``completed``, incremental ``assistant`` deltas carrying ``timestamp_ms``, then the whole
  assistant message again: before tool calls it carries the model call's ``model_call_id``
  (and ``timestamp_ms``), the final one neither (ref §2.2 replay; the lifecycle as community
  parsers record it); ``tool_call`` ``started`` / ``completed`` with the ``model_call_id``;
  ``result`` with ``duration_ms`` and ``usage``. On failure the stream ends without
  ``result`` and the error goes to stderr (wire §A.5). Without ``--print`` it is an Ink TUI
  that needs a TTY.
* **opencode / byok-opencode / mimo** (seed 000 §5.2 / §5.6, seed 002 §8.1, wire §A.5 OpenCode,
  real-clis §2 opencode 1.18.33). Node/yargs argv (``Unknown argument: x``, exit 1).
  ``run --format json [--dangerously-skip-permissions|--auto] [--dir d] [-s id] [-m M]``,
  prompt on stdin. Every line is ``{type, timestamp, sessionID, part}``: ``step_start``,
  ``text`` (whole parts, never token deltas), ``tool_use`` (one finished part per tool),
  ``step_finish{part{reason, cost, tokens}}``, ``error{error:{name:"APIError", data}}``; exit
  1 on the error scenario (real-clis §1). ``reasoning`` parts only with ``--thinking``.
  ``OPENCODE_CONFIG_CONTENT`` (MiMo: ``MIMOCODE_CONFIG_CONTENT``, seed 002 §8.1) must be JSON.
* **gemini** (retired def; wire §A.5 Gemini, real-clis §2 gemini 0.61.0). yargs argv.
  ``--output-format stream-json --yolo [--model M]``, prompt on stdin: ``init{session_id,
  model}``, ``message`` user, ``message`` assistant ``delta:true`` per chunk, ``tool_use``,
  ``tool_result``, ``result{status, stats}``; an API error is ``result{status:"error",
  error}``. The brief fixes the error exit code at 1 (gemini 0.61.0 was seen exiting 144).

Faults common to every family: ``malformed`` writes the first half of a real frame as a
line, ``oversize`` one real frame padded to exactly ``bytes`` bytes, ``crash`` with
``mid_line`` half a frame without newline then exits, ``foreign`` a frame that carries
another session's id (codex: a ``collab_tool_call`` item of another thread, which no
parser claims). Wording the reference does not record (cursor's unknown ``--resume`` id,
opencode's unknown ``-s`` id and invalid config text, gemini's bad ``--resume``) is the
fake's own, close to what those CLIs print; tests assert exit codes and ids, not wording.

Not emulated: codex's human (non ``--json``) progress output beyond the final message;
cursor's permission prompts without ``--force``; gemini's trust downgrade of ``--yolo``.
"""

from __future__ import annotations

import abc
import importlib
import json
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from fake_clis import ids
from fake_clis.argv import VARIADIC, Grammar, Parsed
from fake_clis.base import CliSpec, FakeRun, old_build
from fake_clis.scenario import Step

__all__ = [
    "CODEX_VERSION",
    "CURSOR_VERSION",
    "GEMINI_VERSION",
    "MIMO_VERSION",
    "OPENCODE_VERSION",
    "SPECS",
    "padded_line",
    "truncated_line",
]

CODEX_VERSION = "0.171.0"
CURSOR_VERSION = "2025.11.25-d5b3271"
OPENCODE_VERSION = "1.18.33"
MIMO_VERSION = "0.4.2"
GEMINI_VERSION = "0.61.0"

_CODEX_MODELS: tuple[tuple[str, str, str], ...] = (
    # (slug, display name, visibility) -- `codex debug models` (ref §8.3, ARGV-CODEX-006).
    ("gpt-5.5", "gpt-5.5", "list"),
    ("gpt-5.4", "gpt-5.4", "list"),
    ("gpt-5.4-mini", "gpt-5.4-mini", "list"),
    ("gpt-5.3-codex", "gpt-5.3-codex", "list"),
    ("gpt-6-sol", "gpt-6-sol", "list"),
    ("codex-auto-review", "Codex Auto Review", "hidden"),
)
_CODEX_SANDBOXES = ("read-only", "workspace-write", "danger-full-access")
_CURSOR_MODELS: tuple[tuple[str, str], ...] = (
    ("auto", "Auto"),
    ("composer-1", "Composer 1"),
    ("gpt-5", "GPT-5"),
    ("sonnet-4.5", "Claude 4.5 Sonnet"),
    ("sonnet-4.5-thinking", "Claude 4.5 Sonnet (Thinking)"),
)
_OPENCODE_MODELS: tuple[tuple[str, str], ...] = (
    ("opencode/big-pickle", "Big Pickle"),
    ("anthropic/claude-sonnet-4-5", "Claude Sonnet 4.5"),
    ("openai/gpt-5", "GPT-5"),
)
_MIMO_MODELS: tuple[tuple[str, str], ...] = (
    ("xiaomi/mimo-v2.5-pro", "MiMo V2.5 Pro"),
    ("xiaomi/mimo-v2.5", "MiMo V2.5"),
)



# --------------------------------------------------------------------------- shared helpers


def _dumps(frame: Any) -> str:
    """Compact JSON, the way Node's ``JSON.stringify`` and serde_json write a line."""
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


def padded_line(frame: dict[str, Any], path: Sequence[str], nbytes: int) -> str:
    """``frame`` as one JSON line of exactly ``nbytes`` bytes, padded in the string at ``path``.

    ASCII padding, so characters equal bytes. A frame already longer than ``nbytes`` is
    returned unpadded (the scenario asked for less than one frame).
    """
    base = json.loads(json.dumps(frame))
    holder = base
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = ""
    missing = nbytes - len(_dumps(base).encode("utf-8"))
    if missing > 0:
        holder[path[-1]] = "x" * missing
    return _dumps(base)


def truncated_line(frame: dict[str, Any]) -> str:
    """The first half of ``frame``'s JSON line: a frame that starts well and breaks off."""
    line = _dumps(frame)
    return line[: max(1, len(line) // 2)]


def _now_ms() -> int:
    return int(time.time() * 1000)


def _iso_now() -> str:
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _random_alnum(length: int) -> str:
    return ids.alnum(length)


def _old_build(run: FakeRun) -> bool:
    """``FAKE_CLI_VERSION=old`` or a scenario with ``old_version`` (fake_clis.base)."""
    return old_build(run.env) or run.scenario.old_version


def _filtered_help(text: str, optional: Sequence[str], old: bool) -> str:
    """Help text without the lines naming an optional flag, for an old build."""
    if not old:
        return text
    return "\n".join(line for line in text.splitlines() if not any(f in line for f in optional))


class _Fail(Exception):
    """The CLI reports ``message`` on stderr and exits ``code`` before any stream output."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass
class _Usage:
    """The scenario's ``usage`` steps, summed over the turn."""

    input: int = 0
    output: int = 0
    cached_read: int = 0
    cached_write: int = 0
    thought: int = 0
    cost: float | None = None

    def add(self, step: Step) -> None:
        self.input += int(step.get("input_tokens", 0))
        self.output += int(step.get("output_tokens", 0))
        self.cached_read += int(step.get("cached_read_tokens", 0))
        self.cached_write += int(step.get("cached_write_tokens", 0))
        self.thought += int(step.get("thought_tokens", 0))
        if step.get("cost_usd") is not None:
            self.cost = (self.cost or 0.0) + float(step.get("cost_usd"))


def _tool_name(step: Step, default: str) -> str:
    name = step.get("name")
    return name if isinstance(name, str) and name else default


def _tool_input(step: Step) -> dict[str, Any]:
    value = step.get("input")
    return dict(value) if isinstance(value, Mapping) else {}


class _Emulator(abc.ABC):
    """One turn of one CLI: renders every scenario step in that CLI's frames.

    :meth:`drive` walks the steps; the per-kind hooks write frames. The common steps
    (sleep, stderr, noise, spawn_tree, hang, plain crash) go to ``FakeRun.run_common_step``.
    """

    #: What the CLI exits with after reporting a failed model call itself.
    api_error_exit = 1

    def __init__(self, run: FakeRun) -> None:
        self.run = run
        self.usage = _Usage()
        #: Assistant text of this turn, in order (the session keeps it as the reply).
        self.replies: list[str] = []
        self.started = time.monotonic()
        self.tool_calls = 0

    def emit(self, frame: dict[str, Any]) -> None:
        self.run.out(_dumps(frame))

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    # -- hooks ------------------------------------------------------------------

    @abc.abstractmethod
    def start(self) -> None:
        """Frames before the first step."""

    @abc.abstractmethod
    def text(self, step: Step) -> None: ...

    @abc.abstractmethod
    def thinking(self, step: Step) -> None: ...

    @abc.abstractmethod
    def tool(self, step: Step) -> None: ...

    @abc.abstractmethod
    def api_error(self, step: Step) -> int:
        """Report the failed model call the CLI's own way; return the exit code."""

    @abc.abstractmethod
    def foreign(self) -> None: ...

    @abc.abstractmethod
    def sample_frame(self, text: str) -> tuple[dict[str, Any], tuple[str, ...]]:
        """A real frame of this CLI and the path of a string field in it (for faults)."""

    @abc.abstractmethod
    def finish(self) -> None:
        """The CLI's terminal frames after the last step."""

    # -- driver -------------------------------------------------------------------

    def drive(self) -> int:
        run = self.run
        self.start()
        for step in run.scenario.steps:
            kind = step.kind
            if kind == "text":
                self.text(step)
            elif kind == "thinking":
                self.thinking(step)
            elif kind == "tool":
                self.tool_calls += 1
                self.tool(step)
            elif kind == "usage":
                self.usage.add(step)
            elif kind == "api_error":
                code = self.api_error(step)
                run.linger_if_asked()
                return code
            elif kind == "malformed":
                custom = step.get("text")
                frame, _ = self.sample_frame("a frame cut short")
                run.out(custom if isinstance(custom, str) and custom else truncated_line(frame))
            elif kind == "foreign":
                self.foreign()
            elif kind == "oversize":
                frame, path = self.sample_frame("")
                run.out(padded_line(frame, path, int(step.get("bytes", 1))))
            elif kind == "crash" and step.get("mid_line"):
                frame, _ = self.sample_frame("cut off in the middle of a frame")
                run.out_raw(truncated_line(frame).encode("utf-8"))
                run.exit(int(step.get("exit_code", 1)))
            elif not run.run_common_step(step):
                raise ValueError(f"{run.spec.agent_id} fake cannot render step kind {kind!r}")
        self.finish()
        run.linger_if_asked()
        return run.scenario.exit_code


def _auth_status(run: FakeRun, spec: CliSpec) -> int:
    """The auth probe reached through a longer argv (``codex -c k=v login status``).

    Same answers as ``fake_clis.base`` gives for the exact ``auth_args``.
    """
    missing = run.env.get("FAKE_CLI_AUTH") == "missing" or run.scenario.auth == "missing"
    text, code = spec.auth_missing if missing else spec.auth_ok
    if code == 0:
        run.out(text)
    else:
        run.err(text + "\n")
    return code


def _read_prompt(run: FakeRun, positional: Sequence[str]) -> str:
    """A positional prompt (``-`` = stdin), else stdin read to EOF; recorded either way."""
    args = [p for p in positional if p != "-"]
    if args:
        prompt = " ".join(args)
        run.record["prompt"] = prompt
        run.record["prompt_via"] = "argv"
        return prompt
    return run.read_stdin_text()


def _most_recent_session(run: FakeRun) -> dict[str, Any] | None:
    try:
        files = sorted(run.session_dir.glob("*.json"), key=lambda p: p.stat().st_mtime)
    except OSError:
        return None
    for path in reversed(files):
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        return data
    return None


class _Session:
    """A fake CLI session under ``$HOME/.fake-cli/<agent>/sessions`` (fake_clis.base)."""

    def __init__(self, run: FakeRun, session_id: str, prior: dict[str, Any] | None) -> None:
        self.run = run
        self.id = session_id
        self.turns: list[dict[str, Any]] = list(prior.get("turns", [])) if prior else []
        run.record["resumed"] = prior is not None
        run.record["prior_turns"] = len(self.turns)
        run.record["session_id"] = session_id

    def begin(self, prompt: str) -> None:
        """Save the turn now, so a resume after a crash still finds the session."""
        self.turns.append({"prompt": prompt, "reply": ""})
        self.run.save_session(self.id, self.turns)

    def end(self, reply: str) -> None:
        self.turns[-1]["reply"] = reply
        self.run.save_session(self.id, self.turns)
        self.run.record["turns"] = len(self.turns)


def _write(run: FakeRun, step: Step) -> tuple[str, Path, bool, str]:
    """The scenario's write tool: ``(relative path, absolute path, existed, content)``."""
    rel = str(step.get("path") or "output.txt")
    content = str(step.get("content", ""))
    target = (run.cwd / rel).resolve()
    return rel, target, target.exists(), content


# =========================================================================== codex

_CODEX_COMMON_FLAGS: dict[str, int] = {
    "--config": 1,
    "--enable": 1,
    "--disable": 1,
    "--image": VARIADIC,
    "--model": 1,
    "--oss": 0,
    "--local-provider": 1,
    "--profile": 1,
    "--full-auto": 0,
    "--dangerously-bypass-approvals-and-sandbox": 0,
    "--help": 0,
}
_CODEX_COMMON_ALIASES: dict[str, str] = {
    "-c": "--config",
    "-i": "--image",
    "-m": "--model",
    "-p": "--profile",
    "-h": "--help",
}
_CODEX_REPEATABLE = frozenset({"--config", "--enable", "--disable", "--add-dir", "--image"})


def _codex_grammar(old: bool) -> Grammar:
    """The ``codex`` grammar (clap).

    seed 002 §4.2: ``exec resume`` rejects ``--sandbox``, ``-C`` and ``--add-dir``.
    """
    create_only = {"--sandbox": 1, "--cd": 1, "--add-dir": 1}
    exec_flags = {
        **_CODEX_COMMON_FLAGS,
        **create_only,
        "--skip-git-repo-check": 0,
        "--output-schema": 1,
        "--color": 1,
        "--json": 0,
        "--output-last-message": 1,
    }
    exec_aliases = {
        **_CODEX_COMMON_ALIASES,
        "-s": "--sandbox",
        "-C": "--cd",
        "-o": "--output-last-message",
        "--experimental-json": "--json",
    }
    resume = Grammar(
        flags={
            **_CODEX_COMMON_FLAGS,
            "--last": 0,
            "--all": 0,
            "--skip-git-repo-check": 0,
            "--json": 0,
            "--output-last-message": 1,
        },
        aliases={**_CODEX_COMMON_ALIASES, "-o": "--output-last-message"},
        # [SESSION_ID] [PROMPT]
        positionals=(0, 2),
        repeatable=_CODEX_REPEATABLE,
    )
    exec_grammar = Grammar(
        flags=exec_flags,
        aliases=exec_aliases,
        positionals=(0, 1),
        subcommands={"resume": resume},
        repeatable=_CODEX_REPEATABLE,
    )
    top_flags = {**_CODEX_COMMON_FLAGS, **create_only, "--search": 0, "--version": 0}
    top_aliases = {**_CODEX_COMMON_ALIASES, "-s": "--sandbox", "-C": "--cd", "-V": "--version"}
    small = {"--config": 1, "--help": 0}
    small_aliases = {"-c": "--config", "-h": "--help"}
    return Grammar(
        flags=top_flags,
        aliases=top_aliases,
        positionals=(0, 1),
        repeatable=_CODEX_REPEATABLE,
        subcommands={
            "exec": exec_grammar,
            "e": exec_grammar,
            "login": Grammar(
                flags={**small, "--with-api-key": 0, "--device-auth": 0},
                aliases=small_aliases,
                subcommands={"status": Grammar(flags=small, aliases=small_aliases)},
                repeatable=frozenset({"--config"}),
            ),
            "logout": Grammar(flags=small, aliases=small_aliases),
            "debug": Grammar(
                flags=small,
                aliases=small_aliases,
                subcommands={"models": Grammar(flags=small, aliases=small_aliases)},
            ),
            "app-server": Grammar(
                flags={**small, "--enable": 1, "--disable": 1, "--listen": 1},
                aliases=small_aliases,
                repeatable=frozenset({"--config", "--enable", "--disable"}),
            ),
        },
    )


_CODEX_HELP = """Codex CLI

If no subcommand is specified, options will be forwarded to the interactive CLI.

Usage: codex [OPTIONS] [PROMPT]
       codex [OPTIONS] <COMMAND> [ARGS]

Commands:
  exec        Run Codex non-interactively [aliases: e]
  login       Manage login
  logout      Remove stored authentication credentials
  app-server  [experimental] Run the app server or related tooling
  debug       Internal debugging commands
  help        Print this message or the help of the given subcommand(s)

Arguments:
  [PROMPT]  Optional user prompt to start the session

Options:
  -c, --config <key=value>  Override a configuration value that would otherwise be loaded from
                            `~/.codex/config.toml`
      --enable <FEATURE>    Enable a feature (repeatable)
      --disable <FEATURE>   Disable a feature (repeatable)
  -i, --image <FILE>...     Optional image(s) to attach to the initial prompt
  -m, --model <MODEL>       Model the agent should use
  -s, --sandbox <SANDBOX_MODE>
                            [possible values: read-only, workspace-write, danger-full-access]
  -p, --profile <CONFIG_PROFILE>
      --full-auto           Convenience alias for low-friction sandboxed automatic execution
      --dangerously-bypass-approvals-and-sandbox
  -C, --cd <DIR>            Tell the agent to use the specified directory as its working root
      --add-dir <DIR>       Additional directories that should be writable
  -h, --help                Print help (see more with '--help')
  -V, --version             Print version"""

_CODEX_EXEC_HELP = """Run Codex non-interactively

Usage: codex exec [OPTIONS] [PROMPT] [COMMAND]

Commands:
  resume  Resume a previous session by id or pick the most recent with --last
  help    Print this message or the help of the given subcommand(s)

Arguments:
  [PROMPT]  Initial instructions for the agent. If not provided as an argument (or if `-` is
            used), instructions are read from stdin

Options:
  -c, --config <key=value>      Override a configuration value
      --enable <FEATURE>        Enable a feature (repeatable)
      --disable <FEATURE>       Disable a feature (repeatable)
  -i, --image <FILE>...         Optional image(s) to attach to the initial prompt
  -m, --model <MODEL>           Model the agent should use
      --oss                     Use open-source provider
  -s, --sandbox <SANDBOX_MODE>  [possible values: read-only, workspace-write, danger-full-access]
  -p, --profile <CONFIG_PROFILE>
      --full-auto               Convenience alias for low-friction sandboxed automatic execution
      --dangerously-bypass-approvals-and-sandbox
  -C, --cd <DIR>                Tell the agent to use the specified directory as its working root
      --skip-git-repo-check     Allow running Codex outside a Git repository
      --add-dir <DIR>           Additional directories that should be writable
      --output-schema <FILE>    Path to a JSON Schema file describing the final response
      --color <COLOR>           [default: auto] [possible values: always, never, auto]
      --json                    Print events to stdout as JSONL
  -o, --output-last-message <FILE>
  -h, --help                    Print help"""

_CODEX_RESUME_HELP = """Resume a previous session by id or pick the most recent with --last

Usage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]

Arguments:
  [SESSION_ID]  Conversation/session id (UUID). When provided, resumes this session
  [PROMPT]      Prompt to send after resuming the session. If `-` is used, read from stdin

Options:
  -c, --config <key=value>  Override a configuration value
      --last                Resume the most recent recorded session
      --all                 Show all sessions (disables cwd filtering)
  -i, --image <FILE>...     Optional image(s) to attach to the prompt sent after resuming
  -m, --model <MODEL>       Model the agent should use
      --full-auto           Convenience alias for low-friction sandboxed automatic execution
      --dangerously-bypass-approvals-and-sandbox
      --skip-git-repo-check Allow running Codex outside a Git repository
      --json                Print events to stdout as JSONL
  -o, --output-last-message <FILE>
  -h, --help                Print help"""


def _codex_models_json() -> str:
    models = [
        {
            "slug": slug,
            "display_name": name,
            "description": f"{name} (fake catalog)",
            "visibility": visibility,
            "supported_reasoning_levels": ["low", "medium", "high", "xhigh"],
            "default_reasoning_level": "medium",
        }
        for slug, name, visibility in _CODEX_MODELS
    ]
    return json.dumps({"models": models}, indent=2) + "\n"


def _toml_value(text: str) -> Any:
    """A ``-c key=value`` value: TOML scalars, else the raw string (as codex falls back)."""
    value = text.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    if value in ("true", "false"):
        return value == "true"
    try:
        return int(value)
    except ValueError:
        return value


def _codex_overrides(values: Sequence[str]) -> dict[str, Any]:
    """``-c key=value`` overrides; a value without ``=`` stops codex before it starts."""
    out: dict[str, Any] = {}
    for raw in values:
        key, eq, value = raw.partition("=")
        if not eq or not key.strip():
            raise _Fail(f"Error parsing -c overrides: Invalid override (missing '='): {raw}", 1)
        out[key.strip()] = _toml_value(value)
    return out


def _clap_invalid(flag: str, meta: str, value: str, choices: Sequence[str]) -> _Fail:
    return _Fail(
        f"error: invalid value '{value}' for '{flag} <{meta}>'\n"
        f"  [possible values: {', '.join(choices)}]\n\nFor more information, try '--help'.",
        2,
    )


class _CodexExec(_Emulator):
    """One ``codex exec --json`` turn (wire §A.3.1)."""

    def __init__(
        self,
        run: FakeRun,
        session: _Session,
        *,
        sandbox: str,
        json_mode: bool,
        unknown_model: str | None,
        last_message_file: str | None,
    ) -> None:
        super().__init__(run)
        self.session = session
        self.sandbox = sandbox
        self.json_mode = json_mode
        self.unknown_model = unknown_model
        self.last_message_file = last_message_file
        self.items = 0

    def emit(self, frame: dict[str, Any]) -> None:
        # Without --json, codex prints progress for people on stderr and only the
        # final message on stdout (written by finish()).
        if self.json_mode:
            super().emit(frame)

    def _item_id(self) -> str:
        item_id = f"item_{self.items}"
        self.items += 1
        return item_id

    def _item(self, phase: str, item: dict[str, Any]) -> None:
        self.emit({"type": f"item.{phase}", "item": item})

    def start(self) -> None:
        # seed 002 §7.3 / seed 000 §5.3: thread.started carries the resume handle.
        self.emit({"type": "thread.started", "thread_id": self.session.id})
        self.emit({"type": "turn.started"})
        if self.unknown_model is not None:
            # real-clis §1 codex: an unknown slug is a non-fatal error item.
            self._item(
                "completed",
                {
                    "id": self._item_id(),
                    "type": "error",
                    "message": f"Model metadata for `{self.unknown_model}` not found. Defaulting "
                    "to fallback metadata; this can degrade performance and cause issues.",
                },
            )

    def text(self, step: Step) -> None:
        # wire §A.3.1 / real-clis §2: no text deltas in exec mode, one completed item.
        text = "".join(step.chunks)
        if not text:
            return
        self.replies.append(text)
        self._item("completed", {"id": self._item_id(), "type": "agent_message", "text": text})

    def thinking(self, step: Step) -> None:
        text = "".join(step.chunks)
        if text:
            self._item("completed", {"id": self._item_id(), "type": "reasoning", "text": text})

    def tool(self, step: Step) -> None:
        kind = step.get("tool")
        if kind == "write":
            self._file_change(step)
        elif kind == "shell":
            self._command(step)
        else:
            self._mcp(step)

    def _file_change(self, step: Step) -> None:
        """apply_patch: a ``file_change`` item, emitted only as completed (wire §A.3.1)."""
        rel, target, existed, content = _write(self.run, step)
        if self.sandbox == "read-only":
            # real-clis §1 codex: the default read-only sandbox rejects the patch before it
            # runs, so no file_change item is reported.
            self.run.record.setdefault("rejected_writes", []).append(rel)
            self.run.err("patch rejected: writing is blocked by read-only sandbox\n")
            return
        failed = bool(step.get("is_error"))
        if not failed:
            self.run.write_file(rel, content)
        self._item(
            "completed",
            {
                "id": self._item_id(),
                "type": "file_change",
                "changes": [{"path": str(target), "kind": "update" if existed else "add"}],
                "status": "failed" if failed else "completed",
            },
        )

    def _command(self, step: Step) -> None:
        item_id = self._item_id()
        command = f"/bin/bash -lc {shlex.quote(str(step.get('command', '')))}"
        item: dict[str, Any] = {
            "id": item_id,
            "type": "command_execution",
            "command": command,
            "aggregated_output": "",
            "exit_code": None,
            "status": "in_progress",
        }
        self._item("started", item)
        failed = bool(step.get("is_error"))
        self._item(
            "completed",
            {
                **item,
                "aggregated_output": str(step.get("output", "")),
                "exit_code": 1 if failed else 0,
                "status": "failed" if failed else "completed",
            },
        )

    def _mcp(self, step: Step) -> None:
        name = _tool_name(step, "lookup")
        parts = name.split("__")
        server, tool = (parts[1], parts[2]) if len(parts) == 3 else ("fake_mcp", name)
        item: dict[str, Any] = {
            "id": self._item_id(),
            "type": "mcp_tool_call",
            "server": server,
            "tool": tool,
            "arguments": _tool_input(step),
            "result": None,
            "error": None,
            "status": "in_progress",
        }
        self._item("started", item)
        output = str(step.get("output", ""))
        done = dict(item)
        if step.get("is_error"):
            done.update(error={"message": output}, status="failed")
        else:
            done.update(
                result={"content": [{"type": "text", "text": output}], "structured_content": None},
                status="completed",
            )
        self._item("completed", done)

    def api_error(self, step: Step) -> int:
        status = int(step.get("status", 500))
        try:
            import http  # only an error scenario needs it; a fake starts hundreds of times

            phrase = http.HTTPStatus(status).phrase
        except ValueError:
            phrase = "Unknown"
        message = f"unexpected status {status} {phrase}: {step.get('message', '')}"
        # real-clis §2 codex: `error` + `turn.failed`, exit 1.
        self.emit({"type": "error", "message": message})
        self.emit({"type": "turn.failed", "error": {"message": message}})
        self.session.end("")
        return self.api_error_exit

    def foreign(self) -> None:
        # A sub-agent's item: it names threads that are not this run's (wire §A.3.1
        # collab_tool_call, newer revision). No dialect claims it.
        self._item(
            "started",
            {
                "id": self._item_id(),
                "type": "collab_tool_call",
                "tool": "spawn_agent",
                "sender_thread_id": ids.uuid4(),
                "receiver_thread_ids": [ids.uuid4()],
                "agents_states": {},
                "status": "in_progress",
            },
        )

    def sample_frame(self, text: str) -> tuple[dict[str, Any], tuple[str, ...]]:
        frame = {
            "type": "item.completed",
            "item": {"id": self._item_id(), "type": "agent_message", "text": text},
        }
        return frame, ("item", "text")

    def finish(self) -> None:
        u = self.usage
        self.emit(
            {
                "type": "turn.completed",
                "usage": {
                    "input_tokens": u.input,
                    "cached_input_tokens": u.cached_read,
                    "output_tokens": u.output,
                },
            }
        )
        final = self.replies[-1] if self.replies else ""
        self.session.end("\n".join(self.replies))
        if self.last_message_file:
            target = Path(self.last_message_file)
            if not target.is_absolute():
                target = self.run.cwd / target
            target.write_text(final, encoding="utf-8")
        if not self.json_mode:
            self.run.out(final)


def _codex_sandbox(parsed: Parsed, overrides: Mapping[str, Any], resume: bool) -> str:
    """The effective sandbox: --sandbox (create only), -c sandbox_mode, the aliases, read-only."""
    flag = None if resume else parsed.value("--sandbox")
    if flag is not None and flag not in _CODEX_SANDBOXES:
        raise _clap_invalid("--sandbox", "SANDBOX_MODE", flag, _CODEX_SANDBOXES)
    if flag is not None:
        return flag
    configured = overrides.get("sandbox_mode")
    if isinstance(configured, str) and configured:
        if configured not in _CODEX_SANDBOXES:
            raise _Fail(
                f"Error loading config.toml: unknown variant `{configured}`, expected one of "
                + ", ".join(f"`{s}`" for s in _CODEX_SANDBOXES)
                + " in `sandbox_mode`",
                1,
            )
        return configured
    if parsed.has("--dangerously-bypass-approvals-and-sandbox"):
        return "danger-full-access"
    if parsed.has("--full-auto"):
        return "workspace-write"
    return "read-only"


def _codex_app_server(run: FakeRun) -> int:
    """``codex app-server``: another emulator (fake_clis.codex_app_server) speaks it."""
    name = "fake_clis.codex_app_server"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        module = None
    runner: Callable[[FakeRun], int] | None = getattr(module, "run_app_server", None)
    if runner is None:
        run.err("app-server not emulated\n")
        return 2
    return int(runner(run))


def _codex_help(parsed: Parsed, run: FakeRun) -> int:
    if parsed.command[:2] == ("exec", "resume"):
        text = _CODEX_RESUME_HELP
    elif parsed.command[:1] in (("exec",), ("e",)):
        text = _CODEX_EXEC_HELP
    else:
        text = _CODEX_HELP
    run.out(text)
    return 0


def _codex_main(run: FakeRun) -> int:
    parsed = run.parsed
    command = parsed.command
    if parsed.has("--help"):
        return _codex_help(parsed, run)
    if parsed.has("--version"):
        run.out(f"codex-cli {CODEX_VERSION}")
        return 0
    if command[:1] == ("app-server",):
        return _codex_app_server(run)
    if command == ("debug", "models"):
        run.out_raw(_codex_models_json().encode("utf-8"))
        return 0
    if command == ("login", "status"):
        return _auth_status(run, CODEX_SPEC)
    if command[:1] not in (("exec",), ("e",)):
        # The interactive TUI: it needs a terminal, and a fake has none to offer.
        run.err("Error: stdin is not a terminal\n")
        return 1
    try:
        return _codex_exec(run, parsed)
    except _Fail as fail:
        run.err(fail.message + "\n")
        return fail.code


def _codex_exec(run: FakeRun, parsed: Parsed) -> int:
    resume = parsed.command[-1] == "resume"
    overrides = _codex_overrides(parsed.values("--config"))
    run.record["config_overrides"] = overrides
    sandbox = _codex_sandbox(parsed, overrides, resume)
    run.record["sandbox"] = sandbox
    run.record["add_dirs"] = parsed.values("--add-dir")
    run.record["disabled_features"] = parsed.values("--disable")
    workdir = parsed.value("--cd")
    if workdir is not None:
        path = Path(workdir)
        if not path.is_absolute():
            path = run.cwd / path
        if not path.is_dir():
            raise _Fail(f"Error: No such file or directory (os error 2): {workdir}", 1)
        run.cwd = path.resolve()
        run.record["cd"] = workdir
    model = parsed.value("--model")
    run.record["model"] = model
    known = {slug for slug, _, _ in _CODEX_MODELS}
    unknown_model = model if model is not None and model not in known else None

    positionals = list(parsed.positionals)
    prior: dict[str, Any] | None = None
    thread_id: str | None = None
    if resume:
        if parsed.has("--last"):
            prior = _most_recent_session(run)
            if prior is None:
                raise _Fail("Error: no recorded session found to resume with --last", 1)
            thread_id = str(prior["id"])
        elif positionals:
            thread_id = positionals.pop(0)
            prior = run.load_session(thread_id)
            if prior is None:
                # The thread was never recorded: an error event on the JSON stream, exit 1.
                if parsed.has("--json"):
                    run.out(_dumps({"type": "error", "message": _codex_no_rollout(thread_id)}))
                else:
                    run.err(f"Error: {_codex_no_rollout(thread_id)}\n")
                return 1
    if not positionals or positionals == ["-"]:
        run.err("Reading prompt from stdin...\n")
    prompt = _read_prompt(run, positionals)
    if not prompt.strip():
        raise _Fail("No prompt provided via stdin.", 1)
    session = _Session(run, thread_id or ids.uuid4(), prior)
    session.begin(prompt)
    emulator = _CodexExec(
        run,
        session,
        sandbox=sandbox,
        json_mode=parsed.has("--json"),
        unknown_model=unknown_model,
        last_message_file=parsed.value("--output-last-message"),
    )
    return emulator.drive()


def _codex_no_rollout(thread_id: str) -> str:
    return f"thread/resume failed: no rollout found for thread id {thread_id}"


CODEX_SPEC = CliSpec(
    agent_id="codex",
    prog="codex",
    version_output=f"codex-cli {CODEX_VERSION}",
    grammar=_codex_grammar,
    style="clap",
    run=_codex_main,
    version_args=(("--version",), ("-V",)),
    help_args=(("--help",),),
    help_text=_CODEX_HELP,
    models_args=("debug", "models"),
    models_output=_codex_models_json(),
    auth_args=("login", "status"),
    auth_ok=("Logged in using ChatGPT", 0),
    auth_missing=("Not logged in", 1),
)


# =========================================================================== cursor-agent


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


class _Cursor(_Emulator):
    """One ``cursor-agent --print`` turn (wire §A.5 Cursor, ref §2.2 cursor-agent)."""

    def __init__(
        self, run: FakeRun, session: _Session, *, model: str, fmt: str, partial: bool
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
                self.emit({**self._assistant(chunk), "timestamp_ms": _now_ms()})
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
            frame["timestamp_ms"] = _now_ms()
        self.emit(frame)
        self.replies.append(self.segment)
        self.segment = ""

    def thinking(self, step: Step) -> None:
        self._end_message(final=False)
        self._next_model_call()
        for chunk in step.chunks:
            if chunk:
                self.emit(
                    self._frame("thinking", subtype="delta", text=chunk, timestamp_ms=_now_ms())
                )
        self.emit(self._frame("thinking", subtype="completed", timestamp_ms=_now_ms()))

    def tool(self, step: Step) -> None:
        self._end_message(final=False)
        self.tools_ran = True
        call_id = "toolu_vrtx_" + _random_alnum(24)
        kind = step.get("tool")
        failed = bool(step.get("is_error"))
        output = str(step.get("output", ""))
        result: dict[str, Any]
        if kind == "write":
            rel, target, _, content = _write(self.run, step)
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
            key = f"{_tool_name(step, 'lookup')}ToolCall"
            args = _tool_input(step)
            result = {"error": {"errorMessage": output}} if failed else {"success": output}
        self.emit(
            self._frame(
                "tool_call",
                subtype="started",
                call_id=call_id,
                tool_call={key: {"args": args}},
                model_call_id=self.model_call_id,
                timestamp_ms=_now_ms(),
            )
        )
        self.emit(
            self._frame(
                "tool_call",
                subtype="completed",
                call_id=call_id,
                tool_call={key: {"args": args, "result": result}},
                model_call_id=self.model_call_id,
                timestamp_ms=_now_ms(),
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
            call_id="toolu_vrtx_" + _random_alnum(24),
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
            self.run.out(_dumps(result))
        else:
            self.run.out(full)


def _cursor_main(run: FakeRun) -> int:
    parsed = run.parsed
    if parsed.has("--help"):
        run.out(_filtered_help(_CURSOR_HELP, CURSOR_SPEC.optional_flags, _old_build(run)))
        return 0
    if parsed.has("--version"):
        run.out(CURSOR_VERSION)
        return 0
    command = parsed.command[:1]
    if command in (("status",), ("whoami",)):
        return _auth_status(run, CURSOR_SPEC)
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
    except _Fail as fail:
        run.err(fail.message + "\n")
        return fail.code


def _cursor_print(run: FakeRun, parsed: Parsed) -> int:
    fmt = parsed.value("--output-format", "text") or "text"
    if fmt not in _CURSOR_OUTPUT_FORMATS:
        raise _Fail(
            f"error: option '--output-format <format>' argument '{fmt}' is invalid. "
            f"Allowed choices are {', '.join(_CURSOR_OUTPUT_FORMATS)}.",
            1,
        )
    if not parsed.has("--print"):
        # Without --print cursor-agent is an Ink TUI; with no TTY on stdin Ink gives up.
        raise _Fail(
            "ERROR Raw mode is not supported on the current process.stdin, which Ink uses as "
            "input stream by default.",
            1,
        )
    workspace = parsed.value("--workspace")
    if workspace is not None:
        path = Path(workspace)
        if not path.is_dir():
            raise _Fail(f"Error: Workspace path does not exist: {workspace}", 1)
        run.cwd = path.resolve()
        run.record["workspace"] = workspace
    run.record["force"] = parsed.has("--force")
    run.record["trust"] = parsed.has("--trust")
    resume = parsed.value("--resume")
    prior: dict[str, Any] | None = None
    if resume is not None:
        prior = run.load_session(resume)
        if prior is None:
            raise _Fail(f"Error: Chat not found: {resume}", 1)
    prompt = _read_prompt(run, parsed.positionals)
    if not prompt.strip():
        raise _Fail("Error: No prompt provided. Pass a prompt argument or pipe it on stdin.", 1)
    session = _Session(run, resume or ids.uuid4(), prior)
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


# =========================================================================== opencode family

#: Flags of `opencode run` that only current builds have (seed 000 §5.6, ref §8.3).
_OPENCODE_OPTIONAL = ("--dangerously-skip-permissions", "--auto", "--dir", "--variant", "--pure")


@dataclass(frozen=True)
class _OpenCodeFlavour:
    agent_id: str
    prog: str
    version: str
    #: Env var carrying per-invocation config JSON (seed 002 §8.1).
    config_env: str
    models: tuple[tuple[str, str], ...]
    #: Whether the build has the optional `run` flags at all.
    has_optional_flags: bool = True


def _opencode_grammar(flavour: _OpenCodeFlavour) -> Callable[[bool], Grammar]:
    def grammar(old: bool) -> Grammar:
        common = {"--help": 0, "--version": 0, "--print-logs": 0, "--log-level": 1}
        aliases = {"-h": "--help", "-v": "--version"}
        run_flags: dict[str, int] = {
            **common,
            "--port": 1,
            "--hostname": 1,
            "--command": 1,
            "--continue": 0,
            "--session": 1,
            "--share": 0,
            "--model": 1,
            "--agent": 1,
            "--format": 1,
            "--file": VARIADIC,
            "--title": 1,
            "--attach": 1,
            "--thinking": 0,
        }
        if flavour.has_optional_flags and not old:
            run_flags.update(
                {
                    "--dangerously-skip-permissions": 0,
                    "--auto": 0,
                    "--dir": 1,
                    "--variant": 1,
                    "--pure": 0,
                }
            )
        run_grammar = Grammar(
            flags=run_flags,
            aliases={
                **aliases,
                "-c": "--continue",
                "-s": "--session",
                "-m": "--model",
                "-f": "--file",
            },
            positionals=(0, -1),
            repeatable=frozenset({"--file"}),
        )
        models = Grammar(
            flags={**common, "--verbose": 0, "--refresh": 0},
            aliases=aliases,
            positionals=(0, 1),
        )
        return Grammar(
            flags=common,
            aliases=aliases,
            positionals=(0, 1),
            subcommands={"run": run_grammar, "models": models},
        )

    return grammar


def _opencode_help(flavour: _OpenCodeFlavour) -> str:
    lines = [
        f"{flavour.prog} run [message..]",
        "",
        f"run {flavour.prog} with a message",
        "",
        "Positionals:",
        "  message  message to send                                   [array] [default: []]",
        "",
        "Options:",
        "  -h, --help        show help                                            [boolean]",
        "  -v, --version     show version number                                  [boolean]",
        "      --print-logs  print logs to stderr                                 [boolean]",
        '      --log-level   log level  [string] [choices: "DEBUG", "INFO", "WARN", "ERROR"]',
        "      --port        port for the local server                             [number]",
        '      --hostname    hostname for the local server   [string] [default: "127.0.0.1"]',
        "      --command     the command to run, use message for args              [string]",
        "  -c, --continue    continue the last session                            [boolean]",
        "  -s, --session     session id to continue                                [string]",
        "      --share       share the session                                    [boolean]",
        "  -m, --model       model to use in the format of provider/model          [string]",
        "      --agent       agent to use                                          [string]",
        "      --format      format: default (formatted) or json (raw JSON events)",
        '                          [string] [choices: "default", "json"] [default: "default"]',
        "  -f, --file        file(s) to attach to message                           [array]",
        "      --title       title for the session                                 [string]",
        "      --attach      attach to a running server (e.g., http://localhost:4096) [string]",
        "      --thinking    show thinking blocks                                 [boolean]",
    ]
    if flavour.has_optional_flags:
        lines += [
            "      --dir         directory to run in                                   [string]",
            "      --variant     model variant (provider-specific reasoning effort)    [string]",
            "      --auto        auto-approve permissions                             [boolean]",
            "      --dangerously-skip-permissions  skip every permission prompt       [boolean]",
            "      --pure        run without external plugins                         [boolean]",
        ]
    return "\n".join(lines)


def _opencode_models_text(flavour: _OpenCodeFlavour, verbose: bool) -> str:
    out: list[str] = []
    for model_id, name in flavour.models:
        out.append(model_id)
        if verbose:
            provider, _, short = model_id.partition("/")
            meta = {
                "id": short,
                "providerID": provider,
                "name": name,
                "limit": {"context": 200000, "output": 32000},
                "cost": {"input": 0, "output": 0},
            }
            out.append(json.dumps(meta, indent=2))
    return "\n".join(out) + "\n"


def _opencode_id(prefix: str) -> str:
    """OpenCode's ids: a prefix, 12 hex digits of time, 14 random base62 characters."""
    return f"{prefix}_{_now_ms():012x}{_random_alnum(14)}"


_OPENCODE_REASONS = {"end_turn": "stop", "max_tokens": "length", "tool_use": "tool-calls"}


class _OpenCode(_Emulator):
    """One ``opencode run --format json`` turn (wire §A.5 OpenCode)."""

    def __init__(
        self, run: FakeRun, session: _Session, *, json_mode: bool, show_thinking: bool
    ) -> None:
        super().__init__(run)
        self.session = session
        self.json_mode = json_mode
        self.show_thinking = show_thinking
        self.message_id = ""
        self.in_step = False

    def emit(self, frame: dict[str, Any]) -> None:
        if self.json_mode:
            super().emit(frame)

    def _line(
        self, kind: str, part: dict[str, Any] | None = None, session_id: str | None = None
    ) -> dict[str, Any]:
        # wire §A.5: every line is {type, timestamp (epoch ms), sessionID, ...data}.
        frame: dict[str, Any] = {
            "type": kind,
            "timestamp": _now_ms(),
            "sessionID": session_id or self.session.id,
        }
        if part is not None:
            frame["part"] = part
        return frame

    def _part(self, kind: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": _opencode_id("prt"),
            "sessionID": self.session.id,
            "messageID": self.message_id,
            "type": kind,
            **fields,
        }

    def start(self) -> None:
        """OpenCode prints nothing before the first part: ``step_start`` opens each step."""
        return None

    def _ensure_step(self) -> None:
        if self.in_step:
            return
        self.message_id = _opencode_id("msg")
        self.in_step = True
        self.emit(
            self._line("step_start", self._part("step-start", snapshot=ids.token_hex(20)))
        )

    def _end_step(self, reason: str, usage: _Usage | None) -> None:
        u = usage or _Usage()
        tokens = {
            "input": u.input,
            "output": u.output,
            "reasoning": u.thought,
            "cache": {"read": u.cached_read, "write": u.cached_write},
        }
        part = self._part(
            "step-finish",
            reason=reason,
            snapshot=ids.token_hex(20),
            cost=u.cost if u.cost is not None else 0,
            tokens=tokens,
        )
        self.emit(self._line("step_finish", part))
        self.in_step = False

    def text(self, step: Step) -> None:
        # wire §A.5 / real-clis §1: whole finished parts, never token deltas.
        text = "".join(step.chunks)
        if not text:
            return
        self._ensure_step()
        now = _now_ms()
        self.emit(
            self._line("text", self._part("text", text=text, time={"start": now, "end": now}))
        )
        self.replies.append(text)
        if not self.json_mode:
            self.run.out(text)

    def thinking(self, step: Step) -> None:
        # wire §A.5: reasoning parts are printed only with --thinking.
        text = "".join(step.chunks)
        if not text or not self.show_thinking:
            return
        self._ensure_step()
        now = _now_ms()
        self.emit(
            self._line(
                "reasoning", self._part("reasoning", text=text, time={"start": now, "end": now})
            )
        )

    def tool(self, step: Step) -> None:
        self._ensure_step()
        kind = step.get("tool")
        failed = bool(step.get("is_error"))
        output = str(step.get("output", ""))
        now = _now_ms()
        state: dict[str, Any]
        if kind == "write":
            rel, target, existed, content = _write(self.run, step)
            name = "write"
            tool_input: dict[str, Any] = {"filePath": str(target), "content": content}
            if failed:
                state = {"status": "error", "input": tool_input, "error": output or "write failed"}
            else:
                self.run.write_file(rel, content)
                state = {
                    "status": "completed",
                    "input": tool_input,
                    "output": output or "Wrote file successfully.",
                    "title": rel,
                    "metadata": {"diagnostics": {}, "filepath": str(target), "exists": existed},
                }
        elif kind == "shell":
            # A failing command is still a completed bash part; its exit code says it failed.
            name = "bash"
            command = str(step.get("command", ""))
            # The input is what the model sent; the scenario's shell step gives only the
            # command (live differential, opencode 1.18.33: the real part's input is
            # {"command"} for a model that sends no description; it is optional).
            tool_input = {"command": command}
            state = {
                "status": "completed",
                "input": tool_input,
                "output": output,
                "title": command,
                "metadata": {
                    "output": output,
                    "exit": 1 if failed else 0,
                    "description": "Run the command",
                },
            }
        else:
            name = _tool_name(step, "lookup")
            tool_input = _tool_input(step)
            if failed:
                state = {"status": "error", "input": tool_input, "error": output or "tool failed"}
            else:
                state = {"status": "completed", "input": tool_input, "output": output}
        state["time"] = {"start": now, "end": _now_ms()}
        part = self._part("tool", callID="call_" + _random_alnum(24), tool=name, state=state)
        self.emit(self._line("tool_use", part))
        # The model stops for the tool; the next model call is a new step.
        self._end_step("tool-calls", None)

    def api_error(self, step: Step) -> int:
        status = int(step.get("status", 500))
        frame = self._line("error")
        frame["error"] = {
            "name": "APIError",
            "data": {
                "message": str(step.get("message", "")),
                "statusCode": status,
                "isRetryable": status >= 500,
            },
        }
        self.emit(frame)
        if not self.json_mode:
            self.run.err(f"Error: {step.get('message', '')}\n")
        self.session.end("\n".join(self.replies))
        return self.api_error_exit

    def foreign(self) -> None:
        # The start of a step in another session (a child session's part).
        other = _opencode_id("ses")
        part = {
            "id": _opencode_id("prt"),
            "sessionID": other,
            "messageID": _opencode_id("msg"),
            "type": "step-start",
            "snapshot": ids.token_hex(20),
        }
        self.emit(self._line("step_start", part, session_id=other))

    def sample_frame(self, text: str) -> tuple[dict[str, Any], tuple[str, ...]]:
        now = _now_ms()
        frame = self._line("text", self._part("text", text=text, time={"start": now, "end": now}))
        return frame, ("part", "text")

    def finish(self) -> None:
        self._ensure_step()
        stop = self.run.scenario.stop_reason
        self._end_step(_OPENCODE_REASONS.get(stop, stop), self.usage)
        self.session.end("\n".join(self.replies))


def _opencode_main(flavour: _OpenCodeFlavour) -> Callable[[FakeRun], int]:
    optional = _OPENCODE_OPTIONAL if flavour.has_optional_flags else ()

    def main(run: FakeRun) -> int:
        parsed = run.parsed
        if parsed.has("--version"):
            run.out(flavour.version)
            return 0
        if parsed.has("--help"):
            run.out(_filtered_help(_opencode_help(flavour), optional, _old_build(run)))
            return 0
        if parsed.command == ("models",):
            if parsed.positionals and not any(
                m.startswith(parsed.positionals[0] + "/") for m, _ in flavour.models
            ):
                run.err(f"Error: Provider not found: {parsed.positionals[0]}\n")
                return 1
            text = _opencode_models_text(flavour, parsed.has("--verbose"))
            run.out_raw(text.encode("utf-8"))
            return 0
        if parsed.command != ("run",):
            # The TUI: it needs a terminal.
            run.err(f"Error: {flavour.prog} needs a terminal for its TUI; use `run`\n")
            return 1
        try:
            return _opencode_run(run, parsed, flavour)
        except _Fail as fail:
            run.err(fail.message + "\n")
            return fail.code

    return main


def _opencode_config(run: FakeRun, env_key: str) -> None:
    """Per-invocation config (seed 002 §8.1): must be a JSON object when present."""
    raw = run.env.get(env_key)
    if raw is None:
        return
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _Fail(
            f"Error: Config file at {env_key} is not valid JSON(C):\n  {exc.msg} at line "
            f"{exc.lineno}, column {exc.colno}",
            1,
        ) from None
    if not isinstance(value, dict):
        raise _Fail(
            f"Error: Configuration is invalid at {env_key}\n↳ Expected object, "
            f"received {type(value).__name__}",
            1,
        )
    run.record["config_content"] = value


def _opencode_run(run: FakeRun, parsed: Parsed, flavour: _OpenCodeFlavour) -> int:
    _opencode_config(run, flavour.config_env)
    fmt = parsed.value("--format", "default") or "default"
    if fmt not in ("default", "json"):
        raise _Fail(
            f'Invalid values:\n  Argument: format, Given: "{fmt}", Choices: "default", "json"', 1
        )
    directory = parsed.value("--dir")
    if directory is not None:
        path = Path(directory)
        if not path.is_absolute():
            path = run.cwd / path
        if not path.is_dir():
            raise _Fail(f"Error: Failed to change directory to {directory}", 1)
        run.cwd = path.resolve()
        run.record["dir"] = directory
    for flag in ("--dangerously-skip-permissions", "--auto", "--thinking"):
        run.record[flag.lstrip("-").replace("-", "_")] = parsed.has(flag)
    run.record["model"] = parsed.value("--model")
    prior: dict[str, Any] | None = None
    session_id = parsed.value("--session")
    if session_id is not None:
        prior = run.load_session(session_id)
        if prior is None:
            raise _Fail(f"Error: Session not found: {session_id}", 1)
    elif parsed.has("--continue"):
        prior = _most_recent_session(run)
        session_id = str(prior["id"]) if prior is not None else None
    prompt = _read_prompt(run, parsed.positionals)
    if not prompt.strip():
        raise _Fail("Error: You must provide a message or a command", 1)
    session = _Session(run, session_id or _opencode_id("ses"), prior)
    session.begin(prompt)
    emulator = _OpenCode(
        run, session, json_mode=fmt == "json", show_thinking=parsed.has("--thinking")
    )
    return emulator.drive()


def _opencode_spec(flavour: _OpenCodeFlavour) -> CliSpec:
    return CliSpec(
        agent_id=flavour.agent_id,
        prog=flavour.prog,
        version_output=flavour.version,
        grammar=_opencode_grammar(flavour),
        style="yargs",
        run=_opencode_main(flavour),
        version_args=(("--version",), ("-v",)),
        # The defs probe `opencode run --help` (ref §8.3, OPENCODE_HELP_ARGS).
        help_args=(("run", "--help"),),
        help_text=_opencode_help(flavour),
        optional_flags=_OPENCODE_OPTIONAL if flavour.has_optional_flags else (),
        models_args=("models", "--verbose"),
        models_output=_opencode_models_text(flavour, verbose=True),
    )


_OPENCODE = _OpenCodeFlavour(
    "opencode", "opencode", OPENCODE_VERSION, "OPENCODE_CONFIG_CONTENT", _OPENCODE_MODELS
)
#: seed 000 §5.2: BYOK OpenCode is the installed OpenCode process under another profile.
_BYOK = _OpenCodeFlavour(
    "byok-opencode", "opencode", OPENCODE_VERSION, "OPENCODE_CONFIG_CONTENT", _OPENCODE_MODELS
)
#: seed 002 §8.1: an OpenCode-compatible fork reading MIMOCODE_CONFIG_CONTENT; no record of
#: it accepting OpenCode's newer permission / --dir flags, so its grammar has none of them.
_MIMO = _OpenCodeFlavour(
    "mimo", "mimo", MIMO_VERSION, "MIMOCODE_CONFIG_CONTENT", _MIMO_MODELS, has_optional_flags=False
)


# =========================================================================== gemini


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


class _Gemini(_Emulator):
    """One headless Gemini CLI turn (wire §A.5 Gemini, real-clis §2 gemini)."""

    def __init__(self, run: FakeRun, session: _Session, *, model: str, fmt: str) -> None:
        super().__init__(run)
        self.session = session
        self.model = model
        self.fmt = fmt

    def emit(self, frame: dict[str, Any]) -> None:
        if self.fmt == "stream-json":
            super().emit(frame)

    def _frame(self, kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "timestamp": _iso_now(), **fields}

    def start(self) -> None:
        self.emit(self._frame("init", session_id=self.session.id, model=self.model))
        prompt = self.session.turns[-1]["prompt"]
        self.emit(self._frame("message", role="user", content=prompt))

    def text(self, step: Step) -> None:
        # real-clis §2 gemini: one assistant message with delta:true per SSE chunk.
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
            rel, target, existed, content = _write(self.run, step)
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
            name = _tool_name(step, "lookup")
            params = _tool_input(step)
        tool_id = f"{name}-{_now_ms()}-{ids.token_hex(6)}"
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
        # real-clis §2 gemini: result{status:"error", error{type, message}} on API errors.
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
                _dumps({"session_id": self.session.id, "response": full, "stats": self._stats()})
            )
        else:
            self.run.out(full)


def _gemini_main(run: FakeRun) -> int:
    parsed = run.parsed
    if parsed.has("--version"):
        run.out(GEMINI_VERSION)
        return 0
    if parsed.has("--help"):
        run.out(_filtered_help(_GEMINI_HELP, GEMINI_SPEC.optional_flags, _old_build(run)))
        return 0
    if parsed.has("--list-sessions"):
        return _gemini_list_sessions(run)
    deleted = parsed.value("--delete-session")
    if deleted is not None:
        session = _gemini_session(run, deleted)
        if session is None:
            run.err(f'Error: Invalid session identifier "{deleted}".\n')
            return 1
        (run.session_dir / f"{session['id']}.json").unlink()
        run.out(f"Deleted session {deleted}.")
        return 0
    if parsed.has("--list-extensions"):
        run.out("No extensions installed.")
        return 0
    try:
        return _gemini_run(run, parsed)
    except _Fail as fail:
        run.err(fail.message + "\n")
        return fail.code


def _gemini_session(run: FakeRun, ref: str) -> dict[str, Any] | None:
    """``--resume latest``, ``--resume <index>`` (1-based, as listed) or ``--resume <id>``."""
    if ref == "latest":
        return _most_recent_session(run)
    if ref.isdigit():
        try:
            paths = sorted(run.session_dir.glob("*.json"), key=lambda p: p.stat().st_mtime)
        except OSError:
            return None
        index = int(ref)
        return run.load_session(paths[index - 1].stem) if 1 <= index <= len(paths) else None
    return run.load_session(ref)


def _gemini_list_sessions(run: FakeRun) -> int:
    """``--list-sessions``: the saved sessions, oldest first, with the index --resume takes."""
    try:
        paths = sorted(run.session_dir.glob("*.json"), key=lambda p: p.stat().st_mtime)
    except OSError:
        paths = []
    if not paths:
        run.out("No previous sessions found for this project.")
        return 0
    run.out(f"Available sessions for this project ({len(paths)}):")
    for index, path in enumerate(paths, start=1):
        run.out(f"  {index}. [{path.stem}]")
    return 0


def _gemini_run(run: FakeRun, parsed: Parsed) -> int:
    fmt = parsed.value("--output-format", "text") or "text"
    if fmt not in _GEMINI_OUTPUT_FORMATS:
        choices = ", ".join(f'"{c}"' for c in _GEMINI_OUTPUT_FORMATS)
        raise _Fail(
            f'Invalid values:\n  Argument: output-format, Given: "{fmt}", Choices: {choices}', 1
        )
    if parsed.has("--yolo") and parsed.has("--approval-mode"):
        raise _Fail("Arguments yolo and approval-mode are mutually exclusive", 1)
    mode = parsed.value("--approval-mode")
    if mode is not None and mode not in _GEMINI_APPROVAL_MODES:
        choices = ", ".join(f'"{c}"' for c in _GEMINI_APPROVAL_MODES)
        raise _Fail(
            f'Invalid values:\n  Argument: approval-mode, Given: "{mode}", Choices: {choices}', 1
        )
    run.record["yolo"] = parsed.has("--yolo") or mode == "yolo"
    run.record["model"] = parsed.value("--model")
    prior: dict[str, Any] | None = None
    resume = parsed.value("--resume")
    if resume is not None:
        prior = _gemini_session(run, resume)
        if prior is None:
            raise _Fail(
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
        raise _Fail(
            "No input provided via stdin. Input can be provided by piping data into gemini "
            "or using the --prompt option.",
            1,
        )
    session = _Session(run, str(prior["id"]) if prior else ids.uuid4(), prior)
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


SPECS: dict[str, CliSpec] = {
    "codex": CODEX_SPEC,
    "cursor-agent": CURSOR_SPEC,
    "opencode": _opencode_spec(_OPENCODE),
    "byok-opencode": _opencode_spec(_BYOK),
    "mimo": _opencode_spec(_MIMO),
    "gemini": GEMINI_SPEC,
}
