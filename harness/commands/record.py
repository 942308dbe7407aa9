"""``harness record`` and ``harness run … --record FILE``: capture a run as a recording.

Both forms run through the runner with a :class:`harness.recording.record.RunRecorder` tap, so
the recording holds exactly the bytes the engine wrote and read (stdin frames of a
two-way session, the CLI's stdout and stderr), scrubbed as they are written (design
§Recordings, seed 001 §11).

Rules: RECORD-PARTIAL-001.
Design: docs/design/recording.md#harness.commands.record
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from harness.commands.common import load_defs
from harness.commands.render import format_event
from harness.defs.registry import get_agent_def
from harness.errors import HarnessError
from harness.events import Event, event_json_line
from harness.host.launch import path_env_key
from harness.inputs import read_text_file
from harness.recording.record import Expectation, RunRecorder, continuation_path
from harness.runner import RunRequest, run_agent_async
from harness.runtime.probe import run_probe
from harness.secrets.detect import secret_values

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from harness.defs.types import AgentDef
    from harness.runner import RunResult

__all__ = [
    "EXIT_INTERRUPTED",
    "RecordOutputError",
    "RecordTarget",
    "check_out_path",
    "cmd_record",
    "interrupted_message",
    "probe_cli_version",
    "recording_json",
    "recording_line",
]

EXIT_OK = 0
EXIT_FAILED = 1
#: 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C.
EXIT_INTERRUPTED = 130
#: The version probe of ``harness record`` is bounded by this (or the def's, if shorter).
VERSION_PROBE_TIMEOUT_MS = 3000
_VERSION_MAX_BYTES = 64 * 1024

#: RunOutcome value -> the status a recording's ``expect`` names (REPLAY-STATUS-001).
_OUTCOME_STATUS = {"succeeded": "completed", "failed": "failed", "cancelled": "cancelled"}


class RecordOutputError(HarnessError):
    """``--out`` / ``--record`` names a file that cannot be written (RECORD-CLI-001)."""

    code = "RECORD_OUT_UNWRITABLE"

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"cannot write the recording {path!r}: {problem}", rule="RECORD-CLI-001")
        self.path = path
        self.problem = problem


@dataclass(frozen=True)
class RecordTarget:
    """A recording file that was checked to be writable, not yet opened for the run."""

    path: Path
    #: The file existed before this run (it is left untouched when nothing is spawned).
    existed: bool
    #: ``--force``: an existing file (and its continuation sibling) may be replaced.
    force: bool = False

    def recorder(
        self,
        *,
        cwd: str,
        env: Mapping[str, str],
        env_names: Iterable[str] = (),
        cli_version: str | None = None,
        expect: Expectation | None = None,
        secrets: Iterable[str] = (),
    ) -> RunRecorder:
        """A recorder that opens this file when the process is spawned.

        ``env`` is the run's base env: every secret in it (secret-named values, passwords
        inside URLs) is redacted from the data too (the child env may lack a key the def
        stripped, ref §5.3, while the CLI could still have read it elsewhere). ``env_names``
        are the names the caller set for this run; the header keeps them beside the def's
        declared ones.
        """
        home = env.get("HOME") or env.get("USERPROFILE")
        return RunRecorder(
            self.path,
            cwd=os.path.abspath(cwd),
            home=home,
            cli_version=cli_version,
            secrets=[*secrets, *secret_values(env)],
            created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            expect=expect,
            env_names=env_names,
            replace=self.force,
        )


def check_out_path(raw: str, *, force: bool = False) -> RecordTarget:
    """Fail before anything runs when ``raw`` cannot be written (RECORD-CLI-001), or when
    it or its continuation sibling already exists and ``force`` is not set
    (USERFILE-RECORD-001).

    Nothing at ``raw`` is opened: a temp file is created in its directory and removed
    again, so a refused run leaves nothing behind and an existing file is not touched.
    """
    if not raw:
        raise RecordOutputError(raw, "the path is empty")
    path = Path(raw)
    if path.is_dir():
        raise RecordOutputError(raw, "it is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise RecordOutputError(raw, f"the directory {str(parent)!r} does not exist")
    existed = os.path.lexists(path)
    if not force:
        if existed:
            raise RecordOutputError(raw, "it already exists; pass --force to replace it")
        sibling = continuation_path(path)
        if os.path.lexists(sibling):
            raise RecordOutputError(
                str(sibling),
                "it already exists and a run continued in a new process is recorded there; "
                "pass --force to replace it",
            )
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".probe")
    except OSError as exc:
        raise RecordOutputError(raw, exc.strerror or str(exc)) from exc
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return RecordTarget(path, existed, force)


def recording_line(recorder: RunRecorder, result: RunResult) -> str:
    """What became of the recording, in one line."""
    path = recorder.path
    if not recorder.started:
        why = f"{result.error.code}: {result.error.message}" if result.error else "not spawned"
        kept = "left unchanged" if path is not None and path.exists() else "not created"
        return f"recording: none written, the run was refused before spawn ({why}); {path} {kept}"
    counts = ", ".join(f"{d} {n}" for d, n in recorder.chunks.items())
    if recorder.error is not None:
        problem = recorder.error.strerror or str(recorder.error)
        if recorder.partial is not None:
            return (
                f"recording: {path} kept as it was; this run's incomplete recording is "
                f"{recorder.partial} ({problem}); chunks: {counts}"
            )
        if recorder.lines == 0:
            return f"recording: none written to {path} ({problem})"
        return f"recording: {path} is incomplete ({problem}); chunks: {counts}"
    state = "complete" if recorder.complete else "incomplete (no exit line)"
    line = f"recording: {path} {state}, {recorder.lines} lines; chunks: {counts}"
    for earlier in recorder.previous:
        # seed 000 §12 (RECORD-CONTINUE-001): one file per process of a continued run.
        done = "complete" if earlier.complete else "incomplete"
        line += f"; the interrupted first process: {earlier.path} {done}, {earlier.lines} lines"
    if recorder.continuation_error is not None:
        line += f"; the run continued in a new process, not recorded: {recorder.continuation_error}"
    return line


def recording_json(recorder: RunRecorder) -> dict[str, Any]:
    """The recording's fate as one JSON object (``harness run --json --record``)."""
    return {
        "path": str(recorder.path),
        "written": recorder.started and recorder.error is None,
        "complete": recorder.complete,
        "lines": recorder.lines,
        "chunks": dict(recorder.chunks),
        "error": None if recorder.error is None else str(recorder.error),
        "partial": None if recorder.partial is None else str(recorder.partial),
    }


def interrupted_message(recorder: RunRecorder) -> str:
    counts = ", ".join(f"{d} {n}" for d, n in recorder.chunks.items())
    if not recorder.started:
        return f"harness: interrupted before the spawn; no recording written to {recorder.path}"
    return (
        f"harness: interrupted: {recorder.path} keeps {recorder.lines} lines "
        f"(chunks: {counts}) and has no exit line"
    )


def _first_line(text: str) -> str | None:
    """ref §5.1 ``stdout.trim().split('\\n')[0].trim() || null``."""
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return None


def probe_cli_version(
    defn: AgentDef, command: str, env: Mapping[str, str], cwd: str | None = None
) -> str | None:
    """``CMD <version_args>`` (seed 002 §5.4), bounded; its first stdout line, or ``None``."""
    path = env.get(path_env_key(env, sys.platform))
    found = command if os.path.dirname(command) else shutil.which(command, path=path)
    if found is None:
        return None
    timeout_ms = min(defn.version_probe_timeout_ms or VERSION_PROBE_TIMEOUT_MS, 3000)
    result = asyncio.run(
        run_probe(
            [found, *defn.version_args],
            env=env,
            timeout_s=timeout_ms / 1000.0,
            max_output_bytes=_VERSION_MAX_BYTES,
            cwd=cwd,
        )
    )
    return _first_line(result.stdout) if result.ok else None


def _prompt(args: argparse.Namespace) -> str:
    if args.prompt is not None and args.prompt_file:
        raise HarnessError("harness record: give --prompt or --prompt-file, not both")
    if args.prompt_file:
        return read_text_file(args.prompt_file, label=f"--prompt-file {args.prompt_file}")
    return str(args.prompt or "")


def _command(args: argparse.Namespace) -> list[str]:
    """The CMD ARGS after ``--`` (RECORD-CLI-001: the separator is required)."""
    usage = "harness record --agent ID --out FILE [options] -- CMD ARGS…"
    words = list(args.cmd or [])
    if not words:
        raise HarnessError(f"harness record: no command: {usage}", rule="RECORD-CLI-001")
    if words[0] != "--":
        raise HarnessError(
            f"harness record: put the command after '--' (got {words[0]!r}): {usage}",
            rule="RECORD-CLI-001",
        )
    words = words[1:]
    if not words or not words[0]:
        raise HarnessError(f"harness record: no command after '--': {usage}", rule="RECORD-CLI-001")
    return words


def cmd_record(args: argparse.Namespace, out: TextIO) -> int:
    defn = get_agent_def(args.agent, load_defs(args))
    command = _command(args)
    target = check_out_path(args.out, force=bool(getattr(args, "force", False)))
    prompt = _prompt(args)
    cwd = os.path.abspath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        raise HarnessError(f"--cwd {args.cwd}: not an existing directory")
    env = dict(os.environ)
    version = args.cli_version
    if version is None:
        version = probe_cli_version(defn, command[0], env, cwd)
    expected = args.expect or "completed"
    recorder = target.recorder(
        cwd=cwd,
        env=env,
        cli_version=version,
        expect=Expectation(args.expect) if args.expect else None,
    )
    request = RunRequest(
        defn=defn, prompt=prompt, cwd=cwd, env=env, transport=args.transport, argv_override=command
    )

    def show(event: Event) -> None:
        if args.json:
            out.write(event_json_line(event) + "\n")
        else:
            out.write(format_event(event) + "\n")
        out.flush()

    async def main() -> RunResult:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        interrupts = 0

        def on_sigint() -> None:
            # seed 001 §10: the first Ctrl-C cancels in order (the recording ends with its
            # exit line); a second one stops at once (the file keeps what it has).
            nonlocal interrupts
            interrupts += 1
            if interrupts == 1:
                print("harness: cancelling the run (Ctrl-C again to stop now)", file=sys.stderr)
                cancel.set()
            elif task is not None:
                task.cancel()

        # SIG-CANCEL-001: SIGTERM and SIGHUP cancel in the same order as the first Ctrl-C.
        installed: list[int] = []
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):
            signum = getattr(signal, name, None)
            if signum is None:
                continue
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, on_sigint)
                installed.append(signum)
        try:
            return await run_agent_async(request, on_event=show, cancel=cancel, tap=recorder)
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)

    try:
        result = asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        recorder.close()
        out.flush()
        print(interrupted_message(recorder), file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        recorder.close()
    status = _OUTCOME_STATUS[result.status.value]
    as_expected = status == expected
    ok = as_expected and recorder.complete
    if args.json:
        summary: dict[str, Any] = {
            "path": str(target.path),
            "agent": result.agent_id,
            "status": status,
            "expected": expected,
            "ok": ok,
            "complete": recorder.complete,
            "written": recorder.started and recorder.error is None,
            "lines": recorder.lines,
            "chunks": dict(recorder.chunks),
            "events": len(result.events),
            "exit_code": result.exit_code,
            "signal": result.signal,
            "cli_version": version,
            "error": result.error.to_json() if result.error else None,
        }
        out.write(json.dumps({"record": summary}, ensure_ascii=False) + "\n")
    else:
        how = f"exit {result.exit_code}" if result.exit_code is not None else "no exit code"
        if result.signal is not None:
            how = f"signal {result.signal}"
        verdict = "as expected" if as_expected else f"expected {expected}"
        counts = ", ".join(f"{d} {n}" for d, n in recorder.chunks.items())
        if recorder.started and recorder.error is None:
            out.write(
                f"recorded {target.path}: {status} ({how}), {verdict}; "
                f"{len(result.events)} events; chunks: {counts}\n"
            )
        else:
            out.write(recording_line(recorder, result) + "\n")
    out.flush()
    if result.error is not None and not as_expected:
        print(f"harness: run error: {result.error.code}: {result.error.message}", file=sys.stderr)
    if recorder.error is not None:
        print(f"harness: error: {recording_line(recorder, result)}", file=sys.stderr)
    return EXIT_OK if ok else EXIT_FAILED
