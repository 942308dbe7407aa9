"""Fake OpenCode, BYOK OpenCode and MiMo (``json-event-stream``, opencode dialect).

Design: docs/design/fakes.md#fake_clis.json_events.opencode
"""

from __future__ import annotations

import os
import time

from fake_clis import ids, jsonio
from fake_clis.argv import VARIADIC, Grammar
from fake_clis.base import CliSpec, FakeRun
from fake_clis.json_events.common import (
    Emulator,
    Fail,
    Session,
    Usage,
    filtered_help,
    is_old_build,
    most_recent_session,
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
    from collections.abc import Callable
    from typing import Any

    from fake_clis.argv import Parsed
    from fake_clis.scenario import Step

__all__ = ["BYOK_SPEC", "MIMO_SPEC", "MIMO_VERSION", "OPENCODE_SPEC", "OPENCODE_VERSION"]


OPENCODE_VERSION = "1.18.33"
MIMO_VERSION = "0.4.2"


_OPENCODE_MODELS: tuple[tuple[str, str], ...] = (
    ("opencode/big-pickle", "Big Pickle"),
    ("anthropic/claude-sonnet-4-5", "Claude Sonnet 4.5"),
    ("openai/gpt-5", "GPT-5"),
)
_MIMO_MODELS: tuple[tuple[str, str], ...] = (
    ("xiaomi/mimo-v2.5-pro", "MiMo V2.5 Pro"),
    ("xiaomi/mimo-v2.5", "MiMo V2.5"),
)


#: Flags of `opencode run` that only current builds have (seed 000 §5.6, ref §8.3).
_OPENCODE_OPTIONAL = ("--dangerously-skip-permissions", "--auto", "--dir", "--variant", "--pure")


class _OpenCodeFlavour:
    """What differs between OpenCode and its forks."""

    __slots__ = ("agent_id", "config_env", "has_optional_flags", "models", "prog", "version")

    def __init__(
        self,
        agent_id: str,
        prog: str,
        version: str,
        config_env: str,
        models: tuple[tuple[str, str], ...],
        *,
        has_optional_flags: bool = True,
    ) -> None:
        self.agent_id = agent_id
        self.prog = prog
        self.version = version
        #: Env var carrying per-invocation config JSON (seed 002 §8.1).
        self.config_env = config_env
        self.models = models
        #: Whether the build has the optional `run` flags at all.
        self.has_optional_flags = has_optional_flags


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
            out.append(jsonio.dumps(meta, indent=2))
    return "\n".join(out) + "\n"


def _opencode_id(prefix: str) -> str:
    """OpenCode's ids: a prefix, 12 hex digits of time, 14 random base62 characters."""
    return f"{prefix}_{now_ms():012x}{random_alnum(14)}"


_OPENCODE_REASONS = {"end_turn": "stop", "max_tokens": "length", "tool_use": "tool-calls"}


class _OpenCode(Emulator):
    """One ``opencode run --format json`` turn (wire §A.5 OpenCode)."""

    def __init__(
        self, run: FakeRun, session: Session, *, json_mode: bool, show_thinking: bool
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
            "timestamp": now_ms(),
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
        self.emit(self._line("step_start", self._part("step-start", snapshot=ids.token_hex(20))))

    def _end_step(self, reason: str, usage: Usage | None) -> None:
        u = usage or Usage()
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
        # wire §A.5 / the real opencode (recordings/real/opencode): whole finished parts, never
        # token deltas.
        text = "".join(step.chunks)
        if not text:
            return
        self._ensure_step()
        now = now_ms()
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
        now = now_ms()
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
        now = now_ms()
        state: dict[str, Any]
        if kind == "write":
            rel, target, existed, content = write_target(self.run, step)
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
            name = step_tool_name(step, "lookup")
            tool_input = step_tool_input(step)
            if failed:
                state = {"status": "error", "input": tool_input, "error": output or "tool failed"}
            else:
                state = {"status": "completed", "input": tool_input, "output": output}
        state["time"] = {"start": now, "end": now_ms()}
        part = self._part("tool", callID="call_" + random_alnum(24), tool=name, state=state)
        self.emit(self._line("tool_use", part))
        # The model stops for the tool; the next model call is a new step.
        self._end_step("tool-calls", None)

    def _log_service_error(self, message: str) -> None:
        """seed 002 §7.4: OpenCode writes the provider's failure into its own log, which the
        host reads after the run. OpenCode 1.18.33 appends logfmt lines to
        ``~/.local/share/opencode/log/opencode.log``; its failure line names the SDK error
        and its message, not the HTTP status."""
        home = self.run.env.get("HOME")
        if not home:
            return
        folder = os.path.join(home, ".local", "share", "opencode", "log")
        os.makedirs(folder, exist_ok=True)
        now = time.time()
        millis = int(now * 1000) % 1000
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{millis:03d}Z"
        head = f"timestamp={stamp} level=%s run={ids.token_hex(4)} message="
        provider, _, model = str(self.run.record.get("model") or "").partition("/")
        where = f" providerID={provider} modelID={model}" if model else ""
        with open(os.path.join(folder, "opencode.log"), "a", encoding="utf-8") as log:
            log.write(head % "INFO" + f'"creating instance" directory={self.run.cwd}\n')
            log.write(
                head % "ERROR"
                + f'"stream error"{where} session.id={self.session.id} small=false '
                + "agent=build mode=primary error.error="
                + jsonio.dumps(f"AI_APICallError: {message}")
                + "\n"
            )

    def api_error(self, step: Step) -> int:
        status = int(step.get("status", 500))
        self._log_service_error(str(step.get("message", "")))
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
        now = now_ms()
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
            run.out(filtered_help(_opencode_help(flavour), optional, is_old_build(run)))
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
        except Fail as fail:
            run.err(fail.message + "\n")
            return fail.code

    return main


def _opencode_config(run: FakeRun, env_key: str) -> None:
    """Per-invocation config (seed 002 §8.1): must be a JSON object when present."""
    raw = run.env.get(env_key)
    if raw is None:
        return
    try:
        value = jsonio.loads(raw)
    except jsonio.JSONDecodeError as exc:
        raise Fail(
            f"Error: Config file at {env_key} is not valid JSON(C):\n  {exc.msg} at line "
            f"{exc.lineno}, column {exc.colno}",
            1,
        ) from None
    if not isinstance(value, dict):
        raise Fail(
            f"Error: Configuration is invalid at {env_key}\n↳ Expected object, "
            f"received {type(value).__name__}",
            1,
        )
    run.record["config_content"] = value


def _opencode_run(run: FakeRun, parsed: Parsed, flavour: _OpenCodeFlavour) -> int:
    _opencode_config(run, flavour.config_env)
    fmt = parsed.value("--format", "default") or "default"
    if fmt not in ("default", "json"):
        raise Fail(
            f'Invalid values:\n  Argument: format, Given: "{fmt}", Choices: "default", "json"', 1
        )
    directory = parsed.value("--dir")
    if directory is not None:
        path = os.path.join(run.cwd, directory)
        if not os.path.isdir(path):
            raise Fail(f"Error: Failed to change directory to {directory}", 1)
        run.cwd = os.path.realpath(path)
        run.record["dir"] = directory
    for flag in ("--dangerously-skip-permissions", "--auto", "--thinking"):
        run.record[flag.lstrip("-").replace("-", "_")] = parsed.has(flag)
    run.record["model"] = parsed.value("--model")
    prior: dict[str, Any] | None = None
    session_id = parsed.value("--session")
    if session_id is not None:
        prior = run.load_session(session_id)
        if prior is None:
            raise Fail(f"Error: Session not found: {session_id}", 1)
    elif parsed.has("--continue"):
        prior = most_recent_session(run)
        session_id = str(prior["id"]) if prior is not None else None
    prompt = read_prompt(run, parsed.positionals)
    if not prompt.strip():
        raise Fail("Error: You must provide a message or a command", 1)
    session = Session(run, session_id or _opencode_id("ses"), prior)
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
        # indented JSON needs json: built for the probe only
        models_output=lambda: _opencode_models_text(flavour, verbose=True),
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

OPENCODE_SPEC = _opencode_spec(_OPENCODE)
BYOK_SPEC = _opencode_spec(_BYOK)
MIMO_SPEC = _opencode_spec(_MIMO)
