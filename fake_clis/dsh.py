"""Fake DeepSeek Harness (``dsh``) with the ``open-design`` profile: the ``dsh-profile-jsonl``
emulator (seed 001 whole; ref §2.8; wire §A.5 "DeepSeek Harness").

Design: docs/design/fakes.md#fake_clis.dsh
"""

from __future__ import annotations

import _queue
import _thread
import os
import time

from fake_clis import ids, jsonio
from fake_clis.argv import Grammar
from fake_clis.base import CliSpec, FakeRun, read_text, write_text

# A fake starts hundreds of times per conform: no pathlib, typing or re here, and stdin is
# read on a thread through the C modules under queue and threading (each of those would
# import functools and collections). hashlib and tarfile only load for ``plugin add``.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    from fake_clis.scenario import Step

__all__ = [
    "DEFAULT_MODEL",
    "DSH_VERSION",
    "MODELS",
    "PLUGIN_VERSION",
    "PROFILE",
    "SPECS",
    "profile_marker",
]

#: One of ``AGENT_DEF.version_policy.supported_versions`` (ref §8.3).
DSH_VERSION = "0.1.2-rc.1"
#: The bundle version the seed's own example packs (seed 000 §5.12: ``...-0.1.0.tgz``).
PLUGIN_VERSION = "0.1.0"
#: A newer bundle that speaks protocol generation 2 (``FAKE_DSH_PROFILE=incompatible``).
INCOMPATIBLE_PLUGIN_VERSION = "0.2.0"
PROFILE = "open-design"
RUNTIME = "open-design"
PACKAGE = "@open-design/dsh-runtime"
COMPATIBILITY_GENERATION = "od-dsh.1"
PROVIDER = "deepseek-official"
#: ``--models`` catalog (seed 000 §5.12: "Each model may expose its own reasoning-effort choices").
#: The catalog the real runtime's open-design profile advertises (dsh 0.2.1-rc.2).
_EFFORTS = (
    {"id": "off", "name": "Off"},
    {"id": "low", "name": "Low"},
    {"id": "high", "name": "High", "default": True},
    {"id": "max", "name": "Max"},
)
MODELS: tuple[dict[str, Any], ...] = (
    {
        "provider": PROVIDER,
        "provider_name": "DeepSeek",
        "id": "deepseek-flash",
        "name": "DeepSeek-V4.1-Flash",
        "reasoning_options": [dict(e) for e in _EFFORTS],
    },
    {
        "provider": PROVIDER,
        "provider_name": "DeepSeek",
        "id": "deepseek-v4-pro",
        "name": "DeepSeek-V4-Pro",
        "reasoning_options": [dict(e) for e in _EFFORTS],
    },
)
#: seed 001 §12 "Phase one may use one tested default DeepSeek model": the runtime's default.
DEFAULT_MODEL = "deepseek-flash"
#: The runtime's error code for a provider answer's HTTP status (others keep the step's code).
API_ERROR_CODES = {400: "INVALID_REQUEST", 401: "AUTH"}
#: ... and for any 5xx.
SERVER_ERROR_CODE = "SERVER"
_CAPABILITIES = {"session_resume": True, "session_cancel": True, "structured_events": True}
_PROFILE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_ASCII_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _is_absolute(path: str) -> bool:
    """Whether ``path`` is absolute for the runtime: ``/...``, a drive letter and a slash,
    or UNC (the regex ``^(?:/|[A-Za-z]:[\\\\/]|\\\\\\\\)``, without ``re``)."""
    if path.startswith(("/", "\\\\")):
        return True
    return len(path) >= 3 and path[0] in _ASCII_LETTERS and path[1] == ":" and path[2] in "\\/"


_STATES = ("installed", "missing", "incompatible")


class _Exit(Exception):
    """Leave the emulator with ``code`` after writing ``message`` to stderr."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


# =========================================================================== argv and help


def _grammar(old: bool) -> Grammar:
    """``dsh`` (commander style). ``old``: a bundle without ``--models`` (see module doc)."""
    top: dict[str, int] = {
        "--version": 0,
        "--help": 0,
        "--profile": 1,
        "--probe": 0,
        "--stdio": 0,
    }
    if not old:
        top["--models"] = 0
    small = {"--help": 0}
    plugin = Grammar(
        flags={"--profile": 1, "--help": 0},
        aliases={"-h": "--help"},
        subcommands={
            "add": Grammar(flags=small, aliases={"-h": "--help"}, positionals=(1, 1)),
        },
    )
    return Grammar(
        flags=top,
        aliases={"-V": "--version", "-h": "--help"},
        subcommands={"plugin": plugin},
    )


_HELP = """Usage: dsh [options] [command]

DeepSeek Harness

Options:
  -V, --version         output the version number
  --profile <name>      run with an installed profile
  --probe               print the profile's probe frame and exit
  --stdio               run the profile's stdio protocol on stdin/stdout
  --models              print the profile's model catalog and exit
  -h, --help            display help for command

Commands:
  plugin [options]      manage the plugins of a profile
  help [command]        display help for command"""

_PLUGIN_HELP = """Usage: dsh plugin [options] [command]

manage the plugins of a profile

Options:
  --profile <name>      the profile to change
  -h, --help            display help for command

Commands:
  add <package>         install a plugin package (a packed .tgz) into the profile"""


# =========================================================================== the profile


def _dsh_home(run: FakeRun) -> str:
    """seed 001 §8: the Harness home is the user's DSH_HOME (``$HOME/.dsh`` by default)."""
    configured = run.env.get("DSH_HOME")
    return configured if configured else os.path.join(run.home, ".dsh")


def profile_marker(home: str, profile: str = PROFILE) -> str:
    """``<DSH home>/profiles/<profile>/package.json``: what ``plugin add`` writes."""
    return os.path.join(home, "profiles", profile, "package.json")


def _profile(run: FakeRun, name: str) -> tuple[str, str]:
    """``(state, plugin_version)`` of profile ``name``; state is one of :data:`_STATES`."""
    marker = profile_marker(_dsh_home(run), name)
    if os.path.isfile(marker):
        try:
            data = jsonio.loads(read_text(marker))
            plugin = data.get("dshPlugin")
            version = (
                str(plugin["version"]) if plugin is not None else _bundle_version(marker, data)
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            raise _Exit(f"error: profile {name!r} is damaged: {marker} is not readable") from None
        return "installed", version
    if name != PROFILE:
        return "missing", ""
    state = run.env.get("FAKE_DSH_PROFILE") or "installed"
    if state not in _STATES:
        raise _Exit(f"fake dsh: FAKE_DSH_PROFILE must be one of {', '.join(_STATES)}", 2)
    version = INCOMPATIBLE_PLUGIN_VERSION if state == "incompatible" else PLUGIN_VERSION
    return state, version


def _bundle_version(marker: str, data: dict[str, Any]) -> str:
    """The bundle version of a profile laid out as the real ``dsh plugin add`` leaves it:
    ``dsh.profile.bundles`` names the package and its ``package.json`` sits under the
    profile's ``node_modules`` (the version the real bundle reports in its frames)."""
    if PACKAGE not in data["dsh"]["profile"]["bundles"]:
        raise KeyError(PACKAGE)
    installed = os.path.join(os.path.dirname(marker), "node_modules", PACKAGE, "package.json")
    return str(jsonio.loads(read_text(installed))["version"])


def _identity(kind: str, state: str, plugin_version: str) -> dict[str, Any]:
    """probe / ready (seed 001 §5): generation 1, or 2 for an incompatible bundle."""
    return {
        "v": 1,
        "type": kind,
        "runtime": RUNTIME,
        "protocol_version": 2 if state == "incompatible" else 1,
        "plugin_version": plugin_version,
        "compatibility_generation": COMPATIBILITY_GENERATION,
        "capabilities": dict(_CAPABILITIES),
    }


def _models_frame() -> dict[str, Any]:
    return {"v": 1, "type": "models", "runtime": RUNTIME, "models": [dict(m) for m in MODELS]}


def _dumps(frame: Mapping[str, Any]) -> str:
    # Compact, one line; jsonio.dumps escapes every control character (seed 001 §6).
    return jsonio.dumps(frame, ensure_ascii=False, separators=(",", ":"))


# =========================================================================== entry point


def _main(run: FakeRun) -> int:
    try:
        return _dispatch(run)
    except _Exit as stop:
        run.err(stop.message + "\n")
        return stop.code


def _dispatch(run: FakeRun) -> int:
    parsed = run.parsed
    if parsed.has("--help"):
        if parsed.command[:1] == ("plugin",):
            run.out(_PLUGIN_HELP)
        elif run.env.get("FAKE_CLI_OLD_VERSION") == "1":
            run.out("\n".join(line for line in _HELP.splitlines() if "--models" not in line))
        else:
            run.out(_HELP)
        return 0
    if parsed.has("--version"):
        run.out(SPECS["deepseek-harness"].version_output)
        return 0
    if parsed.command == ("plugin",):
        raise _Exit(_PLUGIN_HELP)
    if parsed.command == ("plugin", "add"):
        return _plugin_add(run)
    if parsed.positionals:
        # The plain one-shot headless mode is not what OD uses (seed 001 §3); refused here.
        raise _Exit(
            f"error: too many arguments. Expected 0 arguments but got '{parsed.positionals[0]}'."
        )
    modes = [flag for flag in ("--probe", "--stdio", "--models") if parsed.has(flag)]
    if len(modes) > 1:
        raise _Exit(f"error: option '{modes[0]}' cannot be used with option '{modes[1]}'")
    if not modes:
        run.record["mode"] = "interactive"
        raise _Exit("error: interactive mode needs a terminal (stdin is not a TTY)")
    mode = modes[0]
    run.record["mode"] = mode.lstrip("-")
    name = parsed.value("--profile")
    if name is None:
        raise _Exit(f"error: option '{mode}' requires '--profile <name>'")
    run.record["profile"] = name
    state, plugin_version = _profile(run, name)
    if state == "missing":
        # seed 001 §5: "A missing profile ... makes the adapter unavailable".
        raise _Exit(
            f"error: profile '{name}' is not installed (looked in "
            f"{os.path.dirname(profile_marker(_dsh_home(run), name))}); install it with "
            f"`dsh plugin --profile {name} add <package>`"
        )
    if mode == "--probe":
        run.out(_dumps(_identity("probe", state, plugin_version)))
        return 0
    if mode == "--models":
        run.out(_dumps(_models_frame()))
        return 0
    return _StdioRun(run, state, plugin_version).drive()


def _plugin_add(run: FakeRun) -> int:
    """seed 001 §4: ``dsh plugin --profile open-design add <pinned OD bundle package>``."""
    parsed = run.parsed
    name = parsed.value("--profile")
    if name is None:
        raise _Exit("error: required option '--profile <name>' not specified")
    import hashlib
    import re  # ``plugin add`` is an install step, not a run

    if not re.match(_PROFILE_NAME, name):
        raise _Exit(f"error: invalid profile name '{name}'")
    raw = parsed.positionals[0]
    path = os.path.join(run.cwd, raw)  # an absolute one stays as it is
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise _Exit(f"error: cannot read package {raw}: {exc.strerror or exc}") from None
    digest = hashlib.sha256(data).hexdigest()
    run.record["plugin_add"] = {"profile": name, "tarball": path, "sha256": digest}
    package = _package_json(path)
    if package is None:
        raise _Exit(f"error: {raw} is not a packed npm package (no package/package.json)")
    pkg_name = str(package.get("name") or "")
    version = str(package.get("version") or "")
    if not pkg_name or not version:
        raise _Exit(f"error: {raw}: package.json must name the package and its version")
    marker = profile_marker(_dsh_home(run), name)
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    write_text(
        marker,
        jsonio.dumps(
            {
                "name": f"dsh-profile-{name}",
                "private": True,
                "dependencies": {pkg_name: version},
                "dshPlugin": {
                    "package": pkg_name,
                    "version": version,
                    "sha256": digest,
                    "tarball": path,
                },
            },
            indent=2,
        ),
    )
    run.record["plugin_add"].update(package=pkg_name, version=version, marker=marker)
    run.out(f"added {pkg_name}@{version} to profile {name}")
    return 0


def _package_json(path: str) -> dict[str, Any] | None:
    import tarfile

    try:
        with tarfile.open(path, mode="r:*") as archive:
            member = archive.getmember("package/package.json")
            handle = archive.extractfile(member)
            if handle is None:
                return None
            value = jsonio.loads(handle.read().decode("utf-8"))
    except (tarfile.TarError, KeyError, OSError, ValueError, EOFError):
        return None
    return value if isinstance(value, dict) else None


# =========================================================================== the stdio run


class _Cancelled(Exception):
    """The host cancelled the active request."""


class _StdioRun:
    """One ``--stdio`` process: ready, one execute, frames, one result (seed 001 §6, §7)."""

    def __init__(self, run: FakeRun, state: str, plugin_version: str) -> None:
        self.run = run
        self.state = state
        self.plugin_version = plugin_version
        self.inbox: _queue.SimpleQueue[tuple[str, Any]] = _queue.SimpleQueue()
        self.eof = False
        self.request_id = ""
        self.session_id = ""
        self.model = DEFAULT_MODEL
        self.turns: list[dict[str, Any]] = []
        self.replies: list[str] = []
        #: The open message's thinking and text frames, written when it ends.
        self.message: list[dict[str, Any]] = []
        #: The text of the last ended message that had any (the result's ``output``).
        self.last_text = ""
        self.usage: dict[str, int] | None = None
        self.tools = 0

    # -- stdin ------------------------------------------------------------------------------

    def _reader(self) -> None:
        # Raw reads on the descriptor: a daemon thread blocked inside the buffered
        # sys.stdin would hold its lock and abort the interpreter at exit.
        for line in _raw_lines(self.run.stdin.fileno()):
            if line is None:
                self.inbox.put(("eof", None))
                return
            if not line.strip():
                continue
            try:
                self.inbox.put(("frame", jsonio.loads(line)))
            except ValueError:
                self.inbox.put(("bad", None))

    def _next(self, timeout: float | None) -> tuple[str, Any] | None:
        if self.eof and self.inbox.empty():
            if timeout is not None:
                time.sleep(timeout)
            else:
                while True:
                    time.sleep(3600)
            return None
        try:
            item = self.inbox.get(timeout=timeout)
        except _queue.Empty:
            return None
        if item[0] == "eof":
            self.eof = True
        return item

    def _wait(self, seconds: float | None) -> None:
        """Sleep (``None``: forever), handling host commands; raises :class:`_Cancelled`."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            item = self._next(left)
            if item is not None:
                self._during_run(item)

    def _poll(self) -> None:
        while not self.inbox.empty():
            item = self._next(0)
            if item is not None:
                self._during_run(item)

    def _during_run(self, item: tuple[str, Any]) -> None:
        kind, frame = item
        if kind == "eof":
            # The host closed stdin: the run goes on to its result (seed 001 §7 "EOF and
            # reap" happens after the result), nothing to answer.
            self.run.record["stdin_closed_during_run"] = True
            return
        if kind == "bad" or not isinstance(frame, dict):
            self.run.record.setdefault("ignored_commands", []).append("<malformed>")
            return
        self.run.record.setdefault("stdin_frames", []).append(frame)
        kind = str(frame.get("type"))
        request_id = frame.get("request_id")
        if kind == "cancel" and request_id == self.request_id:
            raise _Cancelled
        if kind == "execute" and isinstance(request_id, str) and request_id:
            # One run per process (seed 001 §7); the refusal names the other request, so
            # the host's session for the active request ignores it (seed 001 §6).
            self._frame(
                {
                    "v": 1,
                    "type": "protocol_error",
                    "request_id": request_id,
                    "code": "RUNTIME_BUSY",
                    "message": "Another request is already running in this process.",
                },
                scoped=False,
            )
        self.run.record.setdefault("ignored_commands", []).append(kind)

    # -- frames ------------------------------------------------------------------------------

    def _frame(self, frame: dict[str, Any], *, scoped: bool = True) -> None:
        if scoped:
            frame = {"v": 1, "type": frame.pop("type"), "request_id": self.request_id, **frame}
        self.run.out(_dumps(frame))

    def _protocol_error(self, code: str, message: str, request_id: Any = None) -> int:
        frame: dict[str, Any] = {"v": 1, "type": "protocol_error"}
        if isinstance(request_id, str) and request_id:
            frame["request_id"] = request_id
        frame.update(code=code, message=message)
        self._frame(frame, scoped=False)
        return 1

    def _result(self, status: str, **fields: Any) -> None:
        frame: dict[str, Any] = {
            "type": "result",
            "status": status,
            "session_id": self.session_id,
            "resume_rejected": False,
        }
        frame.update(fields)
        self._frame(frame)
        self.run.record["result"] = status

    # -- the run ------------------------------------------------------------------------------

    def drive(self) -> int:
        run = self.run
        _thread.start_new_thread(self._reader, ())  # never joined: a daemon thread
        # seed 001 §6/§7: the first frame is ready (runtime identity and capabilities).
        run.out(_dumps(_identity("ready", self.state, self.plugin_version)))
        command = self._await_execute()
        if command is None:
            run.record["execute"] = False
            return 0
        if isinstance(command, int):
            return command
        return self._execute(command)

    def _await_execute(self) -> dict[str, Any] | int | None:
        while True:
            item = self._next(None)
            if item is None or item[0] == "eof":
                return None  # the host closed stdin before a request (cancel before ready)
            kind, frame = item
            if kind == "bad":
                return self._protocol_error(
                    "MALFORMED_COMMAND", "A host command was not valid JSON."
                )
            self.run.record.setdefault("stdin_frames", []).append(frame)
            problem = _command_problem(frame)
            request_id = frame.get("request_id") if isinstance(frame, dict) else None
            if problem is not None:
                return self._protocol_error(
                    "INVALID_COMMAND", f"Invalid host command: {problem}.", request_id
                )
            if frame["type"] == "cancel":
                # Nothing runs yet: a cancel for an unknown request changes nothing.
                self.run.record.setdefault("ignored_commands", []).append("cancel")
                continue
            return dict(frame)

    def _execute(self, command: dict[str, Any]) -> int:
        run = self.run
        self.request_id = str(command["request_id"])
        run.record["request_id"] = self.request_id
        run.record["prompt"] = command["prompt"]
        run.record["prompt_via"] = "execute"
        run.record["execute_cwd"] = command["cwd"]
        run.record["mcp_servers"] = command["mcp_servers"]
        cwd = command["cwd"]
        if not os.path.isdir(cwd):
            return self._protocol_error(
                "INVALID_CWD", "The execute cwd is not a directory.", self.request_id
            )
        run.cwd = cwd
        model = command.get("model")
        entry = _model_entry(model)
        if model is not None and entry is None:
            return self._protocol_error(
                "UNKNOWN_MODEL",
                "The requested model is not in this profile's catalog.",
                self.request_id,
            )
        if entry is not None:
            self.model = str(entry["id"])
        run.record["model"] = model
        effort = command.get("reasoning_effort")
        run.record["reasoning_effort"] = effort
        if effort is not None:
            allowed = [o["id"] for o in (entry or {}).get("reasoning_options", [])]
            if effort not in allowed:
                return self._protocol_error(
                    "UNSUPPORTED_REASONING_EFFORT",
                    "The requested reasoning effort is not offered by the selected model.",
                    self.request_id,
                )
        resume = command.get("resume_session_id")
        if resume is not None:
            prior = run.load_session(str(resume))
            turns = prior.get("turns") if isinstance(prior, dict) else None
            if not isinstance(turns, list):
                # seed 001 §6: "A missing or corrupt resume target returns a terminal
                # structured failure. It must not silently create a new session."
                self.session_id = str(resume)
                run.record["resumed"] = False
                run.record["resume_rejected"] = True
                reason = "SESSION_NOT_FOUND" if prior is None else "SESSION_CORRUPT"
                self._result(
                    "failed",
                    resume_rejected=True,
                    error={"code": reason, "message": "The saved session cannot be resumed."},
                )
                run.linger_if_asked()
                return 1
            self.session_id = str(resume)
            self.turns = [t for t in turns if isinstance(t, dict)]
        else:
            self.session_id = f"session-{ids.uuid4()}"
        run.record["resumed"] = resume is not None
        run.record["prior_turns"] = len(self.turns)
        run.record["session_id"] = self.session_id
        self.turns.append({"request_id": self.request_id, "prompt": command["prompt"], "reply": ""})
        run.save_session(self.session_id, self.turns)
        # Bounded diagnostics only: never the prompt, credentials or tool output (seed 001 §14).
        run.err(f"[open-design] request {self.request_id}: session {self.session_id}\n")
        self._frame(
            {"type": "session", "session_id": self.session_id, "resumed": resume is not None}
        )
        try:
            code = self._steps()
        except _Cancelled:
            # seed 001 §10 step 2: the run ends with result: cancelled; the session survives.
            run.record["cancelled"] = True
            self._end_message()
            self._save()
            self._write_usage()
            self._result("cancelled", stop_reason="cancelled")
            run.linger_if_asked()
            return 0
        if code is not None:
            return code
        self._save()
        self._write_usage()
        fields: dict[str, Any] = {}
        if self.last_text:
            fields["output"] = self.last_text
        fields["stop_reason"] = self.run.scenario.stop_reason
        self._result("completed", **fields)
        run.linger_if_asked()
        return run.scenario.exit_code

    def _save(self) -> None:
        self.turns[-1]["reply"] = "".join(self.replies)
        self.run.save_session(self.session_id, self.turns)
        self.run.record["turns"] = len(self.turns)

    def _end_message(self) -> None:
        """Write the open message's frames, as the bundle does once a message is committed."""
        text = "".join(str(f["content"]) for f in self.message if f["type"] == "text")
        for frame in self.message:
            self._frame(frame)
        self.message = []
        if text:
            self.last_text = text

    def _steps(self) -> int | None:
        for step in self.run.scenario.steps:
            self._poll()
            kind = step.kind
            if kind not in ("text", "thinking", "sleep", "hang", "usage"):
                self._end_message()
            if kind == "text":
                text = "".join(step.chunks)
                self.replies.append(text)
                if text:
                    self.message.append({"type": "text", "content": text})
            elif kind == "thinking":
                thought = "".join(step.chunks)
                if thought:
                    self.message.append({"type": "thinking", "content": thought})
            elif kind == "tool":
                self._tool(step)
            elif kind == "usage":
                self._usage(step)
            elif kind == "api_error":
                self._save()
                self._write_usage()
                error = {"code": _api_error_code(step), "message": str(step.get("message"))}
                self._result("failed", stop_reason="error", error=error)
                self.run.linger_if_asked()
                return self.run.scenario.exit_code
            elif kind == "sleep":
                self._wait(float(step.get("ms", 0)) / 1000.0)
            elif kind == "hang":
                # The model call never returns; only a cancel ends the run (seed 001 §10).
                self.run.finish_record()
                self._wait(None)
            elif kind == "malformed":
                line = _dumps(self._scoped("text", "The frame that never ends"))
                self.run.out(str(step.get("text") or line[: len(line) // 2]))
            elif kind == "foreign":
                frame = self._scoped("text", "Not for this request.")
                frame["request_id"] = f"{self.request_id}-other"
                self.run.out(_dumps(frame))
            elif kind == "oversize":
                self.run.out(self._oversize(int(step.get("bytes", 0))))
            elif kind == "crash" and step.get("mid_line"):
                line = _dumps(self._scoped("text", "Half a frame"))
                self.run.out_raw(line[: len(line) // 2].encode("utf-8"))
                self.run.exit(int(step.get("exit_code", 1)))
            else:
                self.run.run_common_step(step)
        self._poll()
        self._end_message()
        return None

    def _scoped(self, kind: str, content: str) -> dict[str, Any]:
        return {"v": 1, "type": kind, "request_id": self.request_id, "content": content}

    def _oversize(self, size: int) -> str:
        """One valid text frame whose line is exactly ``size`` bytes (when it fits)."""
        bare = _dumps(self._scoped("text", ""))
        pad = max(0, size - len(bare.encode("utf-8")))
        return _dumps(self._scoped("text", "x" * pad))

    def _tool(self, step: Step) -> None:
        self.tools += 1
        call_id = str(step.get("id") or f"call_{self.tools}")
        kind = step.get("tool")
        failed = bool(step.get("is_error"))
        if kind == "write":
            name = "write"
            path = str(step.get("path") or "output.txt")
            content = str(step.get("content", ""))
            arguments: dict[str, Any] = {"file_path": path, "content": content}
            written = _written(os.path.join(self.run.cwd, path))
            output = str(step.get("output", "")) if failed else written
        elif kind == "shell":
            name = "bash"
            command = str(step.get("command", ""))
            arguments = {"command": command, "description": f"Run {command}"}
            output = str(step.get("output", ""))
        else:
            name = str(step.get("name") or "lookup")
            raw_input = step.get("input")
            arguments = dict(raw_input) if isinstance(raw_input, dict) else {}
            output = str(step.get("output", ""))
        self._frame(
            {"type": "tool_call", "call_id": call_id, "name": name, "arguments": _dumps(arguments)}
        )
        if kind == "write" and not failed:
            try:
                self.run.write_file(path, content)
            except (ValueError, OSError):
                # seed 001 §14: the official workspace confinement refuses the write.
                failed = True
                output = "Refused: the path is outside the workspace."
        self._frame(
            {
                "type": "tool_result",
                "call_id": call_id,
                "name": name,
                "output": output,
                "is_error": failed,
            }
        )

    def _usage(self, step: Step) -> None:
        """Add a step's counts to the turn's total (written once, before the result)."""
        total = self.usage or dict.fromkeys(_USAGE_KEYS, 0)
        for key, wire in _USAGE_KEYS.items():
            total[key] += int(step.get(wire) or 0)
        self.usage = total

    def _write_usage(self) -> None:
        if self.usage is not None:
            self._frame({"type": "usage", "provider": PROVIDER, "model": self.model, **self.usage})


#: usage frame field -> scenario step field.
_USAGE_KEYS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_tokens": "cached_read_tokens",
    "cache_write_tokens": "cached_write_tokens",
}


def _api_error_code(step: Step) -> str:
    """The runtime's code for the provider's HTTP status, else the step's own code."""
    status = int(step.get("status") or 0)
    if status >= 500:
        return SERVER_ERROR_CODE
    return API_ERROR_CODES.get(status) or str(step.get("code") or "PROVIDER_ERROR")


def _written(path: str) -> str:
    """The write tool's result, as the runtime words it."""
    return f"<path>{path}</path>\n<type>file</type>\n<content>\nCreated file\n</content>"


def _raw_lines(fd: int) -> Iterator[bytes | None]:
    """Lines (without ``\\n`` and one ``\\r``) read with ``os.read``; ``None`` at EOF."""
    pending = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            if pending:
                yield pending.rstrip(b"\r")
            yield None
            return
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line.rstrip(b"\r")


def _model_entry(model: Any) -> dict[str, Any] | None:
    if not isinstance(model, dict):
        return None
    for entry in MODELS:
        if entry["provider"] == model.get("provider") and entry["id"] == model.get("id"):
            return dict(entry)
    return None


def _command_problem(frame: Any) -> str | None:
    """Why ``frame`` is not a generation-1 host command (seed 001 §6), naming the field only."""
    if not isinstance(frame, dict):
        return "a command must be a JSON object"
    if frame.get("v") != 1 or isinstance(frame.get("v"), bool):
        return "v must equal 1"
    kind = frame.get("type")
    if kind not in ("execute", "cancel"):
        return "type must be execute or cancel"
    request_id = frame.get("request_id")
    if not isinstance(request_id, str) or not request_id:
        return "request_id must be a non-empty string"
    if kind == "cancel":
        return None
    cwd = frame.get("cwd")
    if not isinstance(cwd, str) or not _is_absolute(cwd):
        return "cwd must be an absolute path"
    if not isinstance(frame.get("prompt"), str):
        return "prompt must be a string"
    for key in ("resume_session_id", "reasoning_effort"):
        if key in frame and (not isinstance(frame[key], str) or not frame[key]):
            return f"{key} must be a non-empty string"
    servers = frame.get("mcp_servers")
    if not isinstance(servers, list) or not all(isinstance(s, dict) for s in servers):
        return "mcp_servers must be an array of objects"
    if "model" in frame:
        model = frame["model"]
        if not isinstance(model, dict) or not all(
            isinstance(model.get(k), str) and model.get(k) for k in ("provider", "id")
        ):
            return "model must be {provider, id}"
    return None


def _version_output() -> str:
    """``dsh --version``; ``FAKE_CLI_VERSION`` overrides it (read when the fake starts)."""
    return os.environ.get("FAKE_CLI_VERSION") or DSH_VERSION


SPEC = CliSpec(
    agent_id="deepseek-harness",
    prog="dsh",
    version_output=_version_output(),
    grammar=_grammar,
    style="commander",
    run=_main,
    version_args=(("--version",), ("-V",)),
    help_args=(("--help",), ("-h",)),
    help_text=_HELP,
    optional_flags=("--models",),
    # --models depends on the installed profile (missing -> exit 1), which a static
    # CliSpec answer cannot express; the emulator answers it after argv parsing.
    models_args=None,
)

SPECS: dict[str, CliSpec] = {"deepseek-harness": SPEC}
