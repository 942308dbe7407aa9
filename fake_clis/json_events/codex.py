"""Fake Codex ``exec --json`` (``json-event-stream``, codex dialect).

Design: docs/design/fakes.md#fake_clis.json_events.codex
"""

from __future__ import annotations

import os
import sys

from fake_clis import ids, jsonio, shquote
from fake_clis.argv import VARIADIC, Grammar
from fake_clis.base import CliSpec, FakeRun, write_text
from fake_clis.json_events.common import (
    Emulator,
    Fail,
    Session,
    auth_status,
    dumps,
    most_recent_session,
    read_prompt,
    step_tool_input,
    step_tool_name,
    write_target,
)

# A fake starts hundreds of times per conform: no dataclasses, pathlib, typing or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from fake_clis.argv import Parsed
    from fake_clis.scenario import Step

__all__ = ["CODEX_SPEC", "CODEX_VERSION"]


CODEX_VERSION = "0.171.0"


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
    return jsonio.dumps({"models": models}, indent=2) + "\n"


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
            raise Fail(f"Error parsing -c overrides: Invalid override (missing '='): {raw}", 1)
        out[key.strip()] = _toml_value(value)
    return out


def _clap_invalid(flag: str, meta: str, value: str, choices: Sequence[str]) -> Fail:
    return Fail(
        f"error: invalid value '{value}' for '{flag} <{meta}>'\n"
        f"  [possible values: {', '.join(choices)}]\n\nFor more information, try '--help'.",
        2,
    )


class _CodexExec(Emulator):
    """One ``codex exec --json`` turn (wire §A.3.1)."""

    def __init__(
        self,
        run: FakeRun,
        session: Session,
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
            # The real codex (recordings/real/codex): an unknown slug is a non-fatal error item.
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
        # wire §A.3.1 / the real codex (recordings/real/codex): no text deltas in exec mode,
        # one completed item.
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
        rel, target, existed, content = write_target(self.run, step)
        if self.sandbox == "read-only":
            # The real codex (recordings/real/codex): the default read-only sandbox rejects the
            # patch before it runs, so no file_change item is reported.
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
        command = f"/bin/bash -lc {shquote.quote(str(step.get('command', '')))}"
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
        name = step_tool_name(step, "lookup")
        parts = name.split("__")
        server, tool = (parts[1], parts[2]) if len(parts) == 3 else ("fake_mcp", name)
        item: dict[str, Any] = {
            "id": self._item_id(),
            "type": "mcp_tool_call",
            "server": server,
            "tool": tool,
            "arguments": step_tool_input(step),
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
        # the real codex as captured in recordings/real/codex: `error` + `turn.failed`, exit 1.
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
            write_text(os.path.join(self.run.cwd, self.last_message_file), final)
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
            raise Fail(
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
        __import__(name)
        module = sys.modules[name]
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
        return auth_status(run, CODEX_SPEC)
    if command[:1] not in (("exec",), ("e",)):
        # The interactive TUI: it needs a terminal, and a fake has none to offer.
        run.err("Error: stdin is not a terminal\n")
        return 1
    try:
        return _codex_exec(run, parsed)
    except Fail as fail:
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
        path = os.path.join(run.cwd, workdir)
        if not os.path.isdir(path):
            raise Fail(f"Error: No such file or directory (os error 2): {workdir}", 1)
        run.cwd = os.path.realpath(path)
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
            prior = most_recent_session(run)
            if prior is None:
                raise Fail("Error: no recorded session found to resume with --last", 1)
            thread_id = str(prior["id"])
        elif positionals:
            thread_id = positionals.pop(0)
            prior = run.load_session(thread_id)
            if prior is None:
                # The thread was never recorded: an error event on the JSON stream, exit 1.
                if parsed.has("--json"):
                    run.out(dumps({"type": "error", "message": _codex_no_rollout(thread_id)}))
                else:
                    run.err(f"Error: {_codex_no_rollout(thread_id)}\n")
                return 1
    if not positionals or positionals == ["-"]:
        run.err("Reading prompt from stdin...\n")
    prompt = read_prompt(run, positionals)
    if not prompt.strip():
        raise Fail("No prompt provided via stdin.", 1)
    session = Session(run, thread_id or ids.uuid4(), prior)
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
    models_output=_codex_models_json,  # indented JSON needs json: built for the probe only
    auth_args=("login", "status"),
    auth_ok=("Logged in using ChatGPT", 0),
    auth_missing=("Not logged in", 1),
)
