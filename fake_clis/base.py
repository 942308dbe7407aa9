"""The runtime every fake CLI shares: probes, scenario steps that are the same in
every format (faults, sleeps, stderr), file writes, sessions, and the record of
what the fake was given.

Rules: FIDELITY-CAPS-001.
Design: docs/design/fakes.md#fake_clis.base
"""

from __future__ import annotations

import os
import sys
import time

from fake_clis import ids, jsonio
from fake_clis.argv import UsageError, parse_argv
from fake_clis.scenario import ScenarioError, load_scenario

# A fake starts hundreds of times per conform: nothing here imports dataclasses, pathlib,
# typing or re at run time (each costs a good part of a bare interpreter's start-up).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal  # the same functions and numbers, with types
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, BinaryIO, NoReturn

    from fake_clis.argv import Grammar, Parsed
    from fake_clis.scenario import Scenario, Step
else:
    # The C module under ``signal``: signal's enums pull in enum, functools and collections,
    # and every start installs a handler (SIGPIPE), so a lazy import would not help.
    import _signal

__all__ = [
    "RECORDED_ENV_KEYS",
    "CliSpec",
    "FakeRun",
    "is_within",
    "main_for",
    "read_text",
    "trap_sigterm",
    "write_text",
]

#: Env vars a fake copies into its record (MCP injection, transport switches).
RECORDED_ENV_KEYS = (
    "OPENCODE_CONFIG_CONTENT",
    "MIMOCODE_CONFIG_CONTENT",
    "GEMINI_CLI_TRUST_WORKSPACE",
    "OD_CODEX_TRANSPORT",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
)


class CliSpec:
    """What one emulated CLI looks like from outside."""

    __slots__ = (
        "agent_id",
        "auth_args",
        "auth_missing",
        "auth_ok",
        "grammar",
        "help_args",
        "help_text",
        "models_args",
        "models_output",
        "optional_flags",
        "optional_steps",
        "prog",
        "run",
        "sigterm_exit_code",
        "style",
        "version_args",
        "version_output",
    )

    def __init__(
        self,
        *,
        agent_id: str,
        prog: str,
        version_output: str,
        grammar: Callable[[bool], Grammar],
        style: str,
        run: Callable[[FakeRun], int],
        version_args: tuple[tuple[str, ...], ...] = (("--version",),),
        help_args: tuple[tuple[str, ...], ...] = (("--help",),),
        help_text: str = "",
        optional_flags: tuple[str, ...] = (),
        models_args: tuple[str, ...] | None = None,
        models_output: str | Callable[[], str] = "",
        auth_args: tuple[str, ...] | None = None,
        auth_ok: tuple[str, int] = ("Logged in", 0),
        auth_missing: tuple[str, int] = ("Not logged in", 1),
        optional_steps: frozenset[str] = frozenset(),
        sigterm_exit_code: int | None = None,
    ) -> None:
        self.agent_id = agent_id
        #: Program name used in messages (the real binary name).
        self.prog = prog
        self.version_output = version_output
        self.grammar = grammar
        #: ``commander`` | ``yargs`` | ``clap`` | ``argparse`` (see fake_clis.argv).
        self.style = style
        #: The emulator: runs one invocation after argv parsed; returns the exit code.
        self.run = run
        self.version_args = version_args
        self.help_args = help_args
        self.help_text = help_text
        #: Flags shown in help (and accepted) only by a current build.
        self.optional_flags = optional_flags
        self.models_args = models_args
        #: What the models probe prints; a callable is called then (an output that needs
        #: a heavy import to build is not built by every start).
        self.models_output = models_output
        self.auth_args = auth_args
        self.auth_ok = auth_ok
        self.auth_missing = auth_missing
        #: Step kinds beyond the common set (``fake_clis.scenario.OPTIONAL_STEP_KINDS``)
        #: this emulator renders; a scenario using another optional kind is refused (exit 2).
        self.optional_steps = optional_steps
        #: The CLI traps SIGTERM and exits with this code by itself (claude 2.1.332: 143,
        #: recordings/real/claude/cancel.jsonl); ``None``: it dies of the signal.
        self.sigterm_exit_code = sigterm_exit_code

    def __repr__(self) -> str:
        return f"CliSpec(agent_id={self.agent_id!r}, prog={self.prog!r})"


def escape_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (JSON text may hold one as ``\\ud800``) written as
    its ``\\uXXXX`` escape, as node's ``JSON.stringify`` writes it: a real CLI never prints
    one raw, and UTF-8 cannot carry it. Only valid inside a JSON string, where they come from."""
    try:
        text.encode("utf-8")  # in C: almost every text holds none, and is returned as it is
    except UnicodeEncodeError:
        return "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def utf8_line(line: str) -> bytes:
    """``line`` as UTF-8 (:func:`escape_lone_surrogates` when it holds a lone surrogate)."""
    try:
        return line.encode("utf-8")
    except UnicodeEncodeError:
        return escape_lone_surrogates(line).encode("utf-8")


class FakeRun:
    """One invocation of a fake CLI: IO helpers plus the scenario.

    ``cwd`` and ``home`` are absolute paths as ``str`` (``os.path``: pathlib would cost a
    fake start as much as the rest of its imports).
    """

    __slots__ = (
        "argv",
        "cwd",
        "env",
        "home",
        "parsed",
        "record",
        "scenario",
        "spec",
        "stderr",
        "stdin",
        "stdout",
    )

    def __init__(
        self,
        *,
        spec: CliSpec,
        parsed: Parsed,
        argv: list[str],
        scenario: Scenario,
        cwd: str,
        home: str,
        env: Mapping[str, str],
        stdin: BinaryIO,
        stdout: BinaryIO,
        stderr: BinaryIO,
        record: dict[str, Any] | None = None,
    ) -> None:
        self.spec = spec
        self.parsed = parsed
        self.argv = argv
        self.scenario = scenario
        self.cwd = cwd
        self.home = home
        self.env = env
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.record: dict[str, Any] = {} if record is None else record

    # -- output ---------------------------------------------------------------

    def out(self, frame: Any) -> None:
        """Write one stdout line: a dict/list as compact JSON, a str verbatim."""
        line = frame if isinstance(frame, str) else jsonio.dumps(frame, ensure_ascii=False)
        self.stdout.write(utf8_line(line) + b"\n")
        self.stdout.flush()

    def out_raw(self, data: bytes) -> None:
        self.stdout.write(data)
        self.stdout.flush()

    def err(self, text: str) -> None:
        self.stderr.write(text.encode("utf-8"))
        self.stderr.flush()

    # -- input ----------------------------------------------------------------

    def read_stdin_text(self) -> str:
        data = self.stdin.read()
        text = data.decode("utf-8", "replace")
        self.record["prompt"] = text
        self.record["prompt_via"] = "stdin"
        return text

    def read_stdin_line(self) -> bytes | None:
        """One line from stdin (without ``\\n``), or None at EOF."""
        line = self.stdin.readline()
        if not line:
            return None
        return line.rstrip(b"\n").rstrip(b"\r")

    def read_frame(self) -> Any | None:
        """The next JSON frame from stdin (blank lines skipped); None at EOF."""
        while True:
            line = self.read_stdin_line()
            if line is None:
                return None
            if not line.strip():
                continue
            frame = jsonio.loads(line)
            self.record.setdefault("stdin_frames", []).append(frame)
            return frame

    # -- scenario -------------------------------------------------------------

    def sleep(self, ms: float) -> None:
        time.sleep(ms / 1000.0)

    def write_file(self, path: str, content: str) -> str:
        """Write a tool's file under the cwd, refusing paths that leave it; its real path."""
        target = os.path.realpath(os.path.join(self.cwd, path))
        if not is_within(target, os.path.realpath(self.cwd)):
            raise ValueError(f"fake refuses to write outside the cwd: {path}")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        write_text(target, content)
        self.record.setdefault("files_written", []).append(path)
        return target

    def run_common_step(self, step: Step) -> bool:
        """Steps that look the same in every format. True when handled here."""
        if step.kind == "sleep":
            self.sleep(float(step.get("ms", 0)))
        elif step.kind == "stderr":
            self.err(step.text)
        elif step.kind == "noise":
            self.out(step.text)
        elif step.kind == "spawn_tree":
            self.spawn_tree(bool(step.get("ignore_term", True)))
        elif step.kind == "hang":
            self.hang()
        elif step.kind == "crash" and not step.get("mid_line"):
            self.exit(int(step.get("exit_code", 1)))
        else:
            return False
        return True

    def spawn_tree(self, ignore_term: bool) -> None:
        """Start a child that starts a grandchild; both sleep (and may ignore SIGTERM)."""
        code = (
            "import os,signal,subprocess,sys,time\n"
            f"if {ignore_term!r} and hasattr(signal,'SIGTERM'):"
            " signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "if len(sys.argv) > 1:\n"
            "    subprocess.Popen([sys.executable, '-c', sys.argv[1]])\n"
            "print(os.getpid(), flush=True)\n"
            "while True: time.sleep(1)\n"
        )
        grandchild = code
        import subprocess  # only the orphan scenarios spawn; a fake starts hundreds of times

        child = subprocess.Popen(
            [sys.executable, "-c", code, grandchild],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.record.setdefault("spawned_pids", []).append(child.pid)

    def hang(self) -> NoReturn:
        self.finish_record()
        while True:
            time.sleep(3600)

    def exit(self, code: int) -> NoReturn:
        self.finish_record()
        self.stdout.flush()
        os._exit(code)

    def wait_for_stdin_close(self) -> None:
        """Block until stdin reaches EOF (a CLI that reads until the host closes it)."""
        while self.stdin.read(65536):
            pass

    def linger_if_asked(self) -> None:
        """``ignore_stdin_close``: keep running after the work is done until killed."""
        if self.scenario.ignore_stdin_close:
            self.hang()

    # -- sessions ----------------------------------------------------------------

    @property
    def session_dir(self) -> str:
        return os.path.join(self.home, ".fake-cli", self.spec.agent_id, "sessions")

    def saved_sessions(self) -> list[str]:
        """The ids of the saved sessions, oldest first (by modification time)."""
        directory = self.session_dir
        try:
            names = [n for n in os.listdir(directory) if n.endswith(".json")]
        except OSError:
            return []
        names.sort(key=lambda n: os.stat(os.path.join(directory, n)).st_mtime)
        return [n[: -len(".json")] for n in names]

    def resolve(self, path: str) -> str:
        """``path`` taken from the cwd, absolute, links resolved (``(cwd / path).resolve()``)."""
        return os.path.realpath(os.path.join(self.cwd, path))

    def new_session_id(self) -> str:
        return ids.uuid4()

    def load_session(self, session_id: str) -> dict[str, Any] | None:
        path = os.path.join(self.session_dir, f"{_safe_name(session_id)}.json")
        try:
            data: dict[str, Any] = jsonio.loads(read_text(path))
        except (OSError, ValueError):
            return None
        return data

    def save_session(self, session_id: str, turns: Sequence[Mapping[str, Any]]) -> None:
        os.makedirs(self.session_dir, exist_ok=True)
        path = os.path.join(self.session_dir, f"{_safe_name(session_id)}.json")
        write_text(path, jsonio.dumps({"id": session_id, "turns": list(turns)}))

    # -- record --------------------------------------------------------------------

    def finish_record(self) -> None:
        target = self.env.get("FAKE_CLI_RECORD")
        if not target:
            return
        self.record.setdefault("agent", self.spec.agent_id)
        self.record.setdefault("argv", self.argv)
        self.record.setdefault("cwd", self.cwd)
        self.record.setdefault("scenario", self.scenario.name)
        self.record["env"] = {k: self.env[k] for k in RECORDED_ENV_KEYS if k in self.env}
        mcp = os.path.join(self.cwd, ".mcp.json")
        if os.path.isfile(mcp):
            try:
                self.record["mcp_json"] = jsonio.loads(read_text(mcp))
            except ValueError:
                self.record["mcp_json"] = "<invalid JSON>"
        skills = _skill_paths(self.cwd, self.record)
        if skills:
            self.record["skills"] = skills
        # One line: its readers parse it, and indentation would cost a json import.
        write_text(target, jsonio.dumps(self.record))


def read_text(path: str) -> str:
    """The UTF-8 text of the file at ``path`` (``Path.read_text``, without pathlib)."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def write_text(path: str, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` (``Path.write_text``, without pathlib)."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def path_str(*parts: str) -> str:
    """``str(PurePath(*parts))``: the parts joined, without ``.`` parts, doubled separators
    or a trailing one. A path that needs no such cleaning (the usual case) is joined with
    ``os.path``; any other goes to pathlib itself, so the result is always pathlib's."""
    joined = os.path.join(*parts)
    pieces = joined.split(os.sep)
    clean = not (os.altsep and os.altsep in joined) and all(
        piece not in ("", ".") for piece in pieces[1:]
    )
    if clean and pieces[0] not in (".",) and (pieces[0] or len(pieces) > 1):
        return joined
    from pathlib import PurePath  # a path pathlib would clean up: let it

    return str(PurePath(*parts))


def is_within(path: str, root: str) -> bool:
    """Whether absolute ``path`` is ``root`` or under it (``Path.is_relative_to``)."""
    try:
        return os.path.commonpath([root, path]) == os.path.commonpath([root])
    except ValueError:  # different drives
        return False


#: A staged skill root named in a prompt (seed 000 §4: ``.od-skills/<basename>-<hash>``).
_SKILL_MARK = ".od-skills/"
_SKILL_PATH = r"\.od-skills/[A-Za-z0-9._-]+"


def _skill_paths(cwd: str, record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each staged skill root the prompt names, and what is really there under ``cwd``:
    whether it is a real directory, its regular files and any links inside it."""
    texts: list[str] = []
    for key in ("prompt", "prompts"):
        value = record.get(key)
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, list):
            texts.extend(v for v in value if isinstance(v, str))
    out: list[dict[str, Any]] = []
    texts = [text for text in texts if _SKILL_MARK in text]
    if not texts:
        return out
    import re  # only a prompt that names a staged skill needs it

    for rel in dict.fromkeys(m.group(0) for text in texts for m in re.finditer(_SKILL_PATH, text)):
        root = os.path.join(cwd, rel)
        entry: dict[str, Any] = {
            "path": rel,
            "is_dir": os.path.isdir(root) and not os.path.islink(root),
            "is_link": os.path.islink(root),
            "files": [],
            "links": [],
        }
        if entry["is_dir"]:
            for here, dirs, names in os.walk(root):
                for name in sorted([*dirs, *names]):
                    path = os.path.join(here, name)
                    relpath = os.path.relpath(path, root).replace(os.sep, "/")
                    if os.path.islink(path):
                        entry["links"].append(relpath)
                    elif os.path.isfile(path):
                        entry["files"].append(relpath)
            entry["files"].sort()
            entry["links"].sort()
        out.append(entry)
    return out


def _safe_name(session_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:200]


def old_build(env: Mapping[str, str]) -> bool:
    """``FAKE_CLI_VERSION=old`` or the older spelling ``FAKE_CLI_OLD_VERSION=1``."""
    return env.get("FAKE_CLI_VERSION") == "old" or env.get("FAKE_CLI_OLD_VERSION") == "1"


def _scenario_is_old(env: Mapping[str, str]) -> bool:
    """The scenario plays an old build (a bad scenario is reported by the run, not here)."""
    name = env.get("FAKE_CLI_SCENARIO")
    if not name:
        return False
    try:
        return load_scenario(name).old_version
    except ScenarioError:
        return False


def _probe(spec: CliSpec, argv: list[str], env: Mapping[str, str]) -> int | None:
    """Answer version / help / models / auth probes; None when argv is a real run."""
    args = tuple(argv)
    old = old_build(env)
    if args in spec.version_args:
        sys.stdout.write(spec.version_output + "\n")
        return 0
    if args in spec.help_args:
        text = spec.help_text
        if old or _scenario_is_old(env):
            text = "\n".join(
                line
                for line in text.splitlines()
                if not any(flag in line for flag in spec.optional_flags)
            )
        sys.stdout.write(text + "\n")
        return 0
    if spec.models_args is not None and args == spec.models_args:
        output = spec.models_output
        sys.stdout.write(output if isinstance(output, str) else output())
        return 0
    if spec.auth_args is not None and args == spec.auth_args:
        text, code = spec.auth_missing if env.get("FAKE_CLI_AUTH") == "missing" else spec.auth_ok
        (sys.stdout if code == 0 else sys.stderr).write(text + "\n")
        return code
    return None


def trap_sigterm(run: FakeRun, code: int | None) -> None:
    """On SIGTERM, write the record, then die of the signal (``code`` ``None``) or exit with
    ``code``, as a CLI that traps SIGTERM does (:attr:`CliSpec.sigterm_exit_code`; a mode of
    a CLI that exits otherwise traps it again with its own code).

    A host stops a CLI that lingers after its answer (ACP: 500 ms after the turn); on a
    loaded machine a fake can still be on its way out then, and the record it writes at
    exit is what the adapter-layer checks read.
    """
    if not hasattr(_signal, "SIGTERM"):
        return

    def on_term(signum: int, frame: object) -> None:
        _signal.signal(_signal.SIGTERM, _signal.SIG_DFL)
        try:
            run.finish_record()
        finally:
            if code is None:
                os.kill(os.getpid(), _signal.SIGTERM)
            else:
                try:  # noqa: SIM105 - contextlib stays off a fake's start path
                    run.stdout.flush()
                except (OSError, ValueError, RuntimeError):
                    # RuntimeError: the signal landed inside a write to the same buffer, so
                    # this flush would re-enter it; what it held is lost, as it is for a
                    # CLI stopped mid-write.
                    pass
                os._exit(code)

    _signal.signal(_signal.SIGTERM, on_term)


def main_for(spec: CliSpec, argv: list[str]) -> int:
    """Entry point for one emulated CLI."""
    env = dict(os.environ)
    if hasattr(_signal, "SIGPIPE"):
        _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
    probed = _probe(spec, argv, env)
    if probed is not None:
        return probed
    old = old_build(env)
    try:
        parsed = parse_argv(spec.grammar(old), argv, style=spec.style, prog=spec.prog)
    except UsageError as exc:
        sys.stderr.write(exc.message + "\n")
        return exc.exit_code
    try:
        scenario = load_scenario(env.get("FAKE_CLI_SCENARIO") or "happy")
    except ScenarioError as exc:
        # FAKE-SCENARIO-001: a bad scenario is named, not a traceback.
        sys.stderr.write(f"fake {spec.agent_id}: FAKE_CLI_SCENARIO: {exc}\n")
        return 2
    unemulated = scenario.unrendered_kinds(spec.optional_steps)
    if unemulated:
        # An optional step this CLI's emulator cannot play: refused before any output, so
        # a run of it never passes for a run of the scenario.
        for kind in unemulated:
            sys.stderr.write(f"{spec.prog}: the fake does not emulate scenario step '{kind}'\n")
        return 2
    if scenario.old_version and not old:
        try:
            parsed = parse_argv(spec.grammar(True), argv, style=spec.style, prog=spec.prog)
        except UsageError as exc:
            sys.stderr.write(exc.message + "\n")
            return exc.exit_code
    run = FakeRun(
        spec=spec,
        parsed=parsed,
        argv=argv,
        scenario=scenario,
        cwd=os.getcwd(),
        home=env.get("HOME") or env.get("USERPROFILE") or os.path.expanduser("~"),
        env=env,
        stdin=sys.stdin.buffer,
        stdout=sys.stdout.buffer,
        stderr=sys.stderr.buffer,
    )
    trap_sigterm(run, spec.sigterm_exit_code)
    if scenario.stall_ms:
        run.sleep(scenario.stall_ms)
    try:
        code = spec.run(run)
    except BrokenPipeError:
        code = 141
    run.finish_record()
    return code
