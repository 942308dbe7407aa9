"""Recording format v1: the model, a sans-IO writer and a strict reader.

Design: docs/design/recording.md#harness.recording.record
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import enum
import errno
import json
import math
import os
import platform as _platform
import signal as _signal
import socket
import stat
import sys
import tempfile
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from harness.defs.types import AgentDef, PromptDelivery
from harness.errors import HarnessError
from harness.ladder import Step, StepKind
from harness.secrets.detect import secret_values
from harness.secrets.hosts import host_names
from harness.secrets.scrub import (
    DEFAULT_MAX_HOLD,
    Scrubber,
    StreamScrubber,
    restore_bytes,
    restore_text,
)

if TYPE_CHECKING:
    from harness.runner.types import RunError

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "Chunk",
    "Direction",
    "ExitInfo",
    "Expectation",
    "RecordedFile",
    "Recording",
    "RecordingError",
    "RecordingHeader",
    "RecordingScan",
    "RecordingVersionError",
    "RecordingWriter",
    "RunRecorder",
    "continuation_path",
    "format_recording",
    "host_spellings",
    "load_recording",
    "parse_recording",
    "path_spellings",
    "recorded_env_names",
    "restore_header",
    "restore_paths",
    "scan_recording",
    "set_expectation",
]

FORMAT_NAME = "adapter-harness-recording"
FORMAT_VERSION = 1

#: A direction's queued raw bytes above which held-back chunks are released anyway.
DEFAULT_MAX_QUEUE = 4 * 1024 * 1024


class Direction(str, enum.Enum):
    STDOUT = "stdout"
    STDERR = "stderr"
    STDIN = "stdin"


_STATUSES = ("completed", "failed", "cancelled")


class RecordingError(HarnessError):
    """A recording that cannot be read: names the file and the 1-based line (RECORD-READ-001)."""

    code = "RECORDING_INVALID"

    def __init__(self, source: str, line: int | None, problem: str) -> None:
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {problem}", rule="RECORD-READ-001")
        self.source = source
        self.line = line
        self.problem = problem


class RecordingVersionError(RecordingError):
    """A recording of another format version: regenerate it (style anchors, example 14)."""

    code = "RECORDING_VERSION"


# -- the model -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expectation:
    """How a replay of this recording must end (REPLAY-STATUS-001)."""

    status: str
    error_code: str | None = None
    error_rule: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"status": self.status}
        if self.error_code is not None:
            out["error_code"] = self.error_code
        if self.error_rule is not None:
            out["error_rule"] = self.error_rule
        return out


@dataclass(frozen=True)
class RecordingHeader:
    agent: str
    stream_format: str
    event_parser: str | None
    transport: str
    argv: tuple[str, ...]
    prompt_delivery: str
    platform: str
    cli_version: str | None
    env: Mapping[str, str] = field(default_factory=dict)
    #: ISO-8601 time the recording was made (optional; no clock is read here).
    created: str | None = None
    expect: Expectation | None = None

    @classmethod
    def from_def(
        cls,
        defn: AgentDef,
        *,
        argv: Sequence[str],
        env: Mapping[str, str],
        platform: str,
        cli_version: str | None = None,
        created: str | None = None,
    ) -> RecordingHeader:
        """The header of a run of ``defn`` (already seen through its transport, e.g.
        :func:`harness.defs.transport.select_transport`) spawned as ``argv`` with ``env``.
        Nothing is scrubbed here: :class:`RecordingWriter` does that."""
        return cls(
            agent=defn.id,
            stream_format=defn.stream_format,
            event_parser=defn.event_parser,
            transport=defn.transport_name,
            argv=tuple(argv),
            prompt_delivery=defn.prompt_delivery.value,
            platform=platform,
            cli_version=cli_version,
            env=dict(env),
            created=created,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "agent": self.agent,
            "stream_format": self.stream_format,
            "event_parser": self.event_parser,
            "transport": self.transport,
            "argv": list(self.argv),
            "prompt_delivery": self.prompt_delivery,
            "platform": self.platform,
            "cli_version": self.cli_version,
            "env": dict(self.env),
        }
        if self.created is not None:
            out["created"] = self.created
        if self.expect is not None:
            out["expect"] = self.expect.to_json()
        return out


@dataclass(frozen=True)
class Chunk:
    t_ms: float
    direction: Direction
    data: bytes

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": _number(self.t_ms), "dir": self.direction.value}
        try:
            out["data"] = self.data.decode("utf-8")
        except UnicodeDecodeError:
            out["b64"] = base64.b64encode(self.data).decode("ascii")
        return out


@dataclass(frozen=True)
class ExitInfo:
    code: int | None
    signal: str | None
    duration_ms: float

    def to_json(self) -> dict[str, Any]:
        return {
            "exit": {
                "code": self.code,
                "signal": self.signal,
                "duration_ms": _number(self.duration_ms),
            }
        }


@dataclass(frozen=True)
class Recording:
    header: RecordingHeader
    chunks: tuple[Chunk, ...]
    exit: ExitInfo
    #: Where it was read from (for messages), when it was.
    source: str | None = None
    #: True while data and header strings still hold ``{cwd}``-style placeholders.
    placeholders: bool = True
    #: The stop ladder's steps (RECORD-LADDER-001), each placed among the chunks.
    steps: tuple[Step, ...] = ()

    def stream(self, direction: Direction | str) -> bytes:
        """Every byte of one direction, in order."""
        wanted = Direction(direction)
        return b"".join(c.data for c in self.chunks if c.direction is wanted)

    def chunks_of(self, direction: Direction | str) -> list[Chunk]:
        wanted = Direction(direction)
        return [c for c in self.chunks if c.direction is wanted]


def _number(value: float) -> int | float:
    rounded = round(float(value), 3)
    return int(rounded) if rounded.is_integer() else rounded


def _dumps(obj: Any) -> str:
    """One JSON line. Line and paragraph separators are escaped so that no JSONL reader
    that splits on them (``str.splitlines``, wire §A.0) breaks a record; a lone surrogate
    (an argv that was not UTF-8) falls back to ``\\uXXXX`` escapes."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")


def format_recording(recording: Recording) -> str:
    """The whole file for an already scrubbed recording (hand-written corpora, tests)."""
    lines: list[dict[str, Any]] = [recording.header.to_json()]
    steps = sorted(recording.steps, key=lambda s: s.chunk_index)
    at = 0
    for index, chunk in enumerate(recording.chunks):
        while at < len(steps) and steps[at].chunk_index <= index:
            lines.append(steps[at].to_json(_number(steps[at].t_ms)))
            at += 1
        lines.append(chunk.to_json())
    lines.extend(step.to_json(_number(step.t_ms)) for step in steps[at:])
    lines.append(recording.exit.to_json())
    return "".join(_dumps(obj) + "\n" for obj in lines)


# -- the writer ------------------------------------------------------------------------------------


def _signal_name(value: int | str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    try:
        return _signal.Signals(value).name
    except ValueError:
        return f"SIG{value}"


@dataclass
class _Slot:
    key: int
    t_ms: float
    direction: Direction
    size: int
    data: bytes | None = None
    #: A ladder step's line, ready at once (it holds no data to scrub).
    step: Step | None = None


class RecordingWriter:
    """Builds a recording line by line as a run happens (sans-IO; the caller writes).

    The runner calls, in order::

        writer = RecordingWriter(header, cwd=cwd, home=home, tmp=tmp)
        out.write(writer.header_line())            # optional: chunk()/exit() emit it too
        out.write(writer.chunk("stdout", data, t_ms))   # for every chunk, any direction
        out.write(writer.exit(code, signal, duration_ms))

    ``header`` carries the run's real argv and env; the writer scrubs both and uses
    the env's secret values to redact the data (:class:`~harness.secrets.scrub.Scrubber`).
    ``cwd``/``home``/``tmp`` become placeholders; each may list several spellings of its
    directory (:func:`path_spellings`); ``hosts`` (the machine's names,
    :func:`host_spellings`) become ``{host}``. Every method returns zero or more
    complete lines (``""`` when a chunk is held back).
    """

    def __init__(
        self,
        header: RecordingHeader,
        *,
        cwd: str | Sequence[str] | None = None,
        home: str | Sequence[str] | None = None,
        tmp: str | Sequence[str] | None = None,
        install: str | Sequence[str] | None = None,
        hosts: Iterable[str] = (),
        secrets: Iterable[str] = (),
        max_hold: int = DEFAULT_MAX_HOLD,
        max_queue: int = DEFAULT_MAX_QUEUE,
    ) -> None:
        self._scrubber = Scrubber(
            env=header.env,
            paths={"cwd": cwd, "home": home, "tmp": tmp, "install": install},
            hosts=hosts,
            secrets=secrets,
        )
        self.header = replace(
            header,
            argv=tuple(self._scrubber.scrub_text(a) for a in header.argv),
            env=self._scrubber.scrub_env(header.env),
        )
        self._streams = {d: StreamScrubber(self._scrubber, max_hold=max_hold) for d in Direction}
        self._queue: deque[_Slot] = deque()
        self._slots: dict[int, _Slot] = {}
        self._queued = 0
        self._max_queue = max_queue
        self._next_key = 0
        self._header_sent = False
        self._closed = False

    def header_line(self) -> str:
        """The scrubbed header line (once; later calls return ``""``)."""
        if self._header_sent:
            return ""
        self._header_sent = True
        return _dumps(self.header.to_json()) + "\n"

    def chunk(self, direction: Direction | str, data: bytes, t_ms: float) -> str:
        """Record ``data`` read from (or written to) ``direction`` at ``t_ms`` after start."""
        if self._closed:
            raise ValueError("chunk() after exit(): the recording is complete")
        where = Direction(direction)
        if not math.isfinite(t_ms) or t_ms < 0:
            raise ValueError(f"t_ms must be a finite number >= 0, got {t_ms!r}")
        out = self.header_line()
        if not data:
            return out
        slot = _Slot(self._next_key, float(t_ms), where, len(data))
        self._next_key += 1
        self._queue.append(slot)
        self._slots[slot.key] = slot
        self._queued += len(data)
        self._settle(self._streams[where].push(slot.key, bytes(data)))
        while self._queued > self._max_queue and self._queue and self._queue[0].data is None:
            # Bounded memory: release the direction that holds the oldest chunk back.
            self._settle(self._streams[self._queue[0].direction].flush())
        return out + self._drain()

    def step(self, kind: StepKind | str, t_ms: float, detail: Mapping[str, Any]) -> str:
        """Record a ladder step taken at ``t_ms`` (RECORD-LADDER-001). It keeps its place
        after the chunks given before it, even when one of them is held back."""
        if self._closed:
            raise ValueError("step() after exit(): the recording is complete")
        if not math.isfinite(t_ms) or t_ms < 0:
            raise ValueError(f"t_ms must be a finite number >= 0, got {t_ms!r}")
        step = Step(float(t_ms), StepKind(kind), dict(detail))
        problem = step.problem()
        if problem is not None:
            raise ValueError(problem)
        out = self.header_line()
        slot = _Slot(self._next_key, step.t_ms, Direction.STDIN, 0, data=b"", step=step)
        self._next_key += 1
        self._queue.append(slot)
        return out + self._drain()

    def exit(self, code: int | None, signal: int | str | None, duration_ms: float) -> str:
        """Release every held chunk, then the exit line. The recording is then complete."""
        if self._closed:
            raise ValueError("exit() called twice")
        if not math.isfinite(duration_ms) or duration_ms < 0:
            raise ValueError(f"duration_ms must be a finite number >= 0, got {duration_ms!r}")
        out = self.header_line()
        for stream in self._streams.values():
            self._settle(stream.flush())
        out += self._drain()
        self._closed = True
        return (
            out + _dumps(ExitInfo(code, _signal_name(signal), float(duration_ms)).to_json()) + "\n"
        )

    def _settle(self, released: Sequence[tuple[int, bytes]]) -> None:
        for key, data in released:
            self._slots.pop(key).data = data

    def _drain(self) -> str:
        lines: list[str] = []
        while self._queue and self._queue[0].data is not None:
            slot = self._queue.popleft()
            self._queued -= slot.size
            assert slot.data is not None
            if slot.step is not None:
                lines.append(_dumps(slot.step.to_json(_number(slot.t_ms))) + "\n")
                continue
            # A chunk emptied by a redaction that began in the chunk before keeps its line:
            # the boundary and the time stay in the recording (RECORD-BYTES-001).
            lines.append(_dumps(Chunk(slot.t_ms, slot.direction, slot.data).to_json()) + "\n")
        return "".join(lines)


def recorded_env_names(defn: AgentDef) -> frozenset[str]:
    """The env names (upper-cased) a recording of ``defn`` keeps in its header.

    The child env is the whole machine's environment (PATH, shell, locale, CA bundles,
    tool caches): noisy, machine-specific, and nothing a replay reads. A reader of the
    recording needs what shaped this def's run, and the def declares exactly that as
    data: the values it sets (``env``), the names its strip and value rules look at
    (ref §5.3, seed 002 §5.3), the transport selector (seed 000 §5.3), the executable
    override (``<ID>_BIN``, ref §5.2) and the default-model variable. The run adds the
    names it set itself (:class:`RunRecorder` ``env_names``). Rule RECORD-ENV-001. Secret
    values among them are still redacted by the writer (RECORD-SECRET-ENV-001).
    """
    names: set[str] = set(defn.env)
    for strip in defn.strip_env:
        names.update(strip.keys)
        names.update(strip.unless_set)
    names.update(rule.key for rule in defn.env_value_rules)
    for optional in (defn.transport_env_var, defn.bin_env_key, defn.default_model_env_var):
        if optional:
            names.add(optional)
    return frozenset(n.upper() for n in names)


def continuation_path(path: str | os.PathLike[str]) -> Path:
    """Where the process that continued a run's turn is recorded: ``run.jsonl`` ->
    ``run.continued.jsonl`` (a name without a suffix gets ``.continued``)."""
    first = Path(path)
    if first.suffix:
        return first.with_name(f"{first.stem}.continued{first.suffix}")
    return first.with_name(f"{first.name}.continued")


@dataclass(frozen=True)
class RecordedFile:
    """One finished file of a recorder that followed a run into a second process."""

    path: Path
    complete: bool
    lines: int
    chunks: Mapping[str, int]


class RunRecorder:
    """A runner tap (:class:`harness.runner.WireTap`) that writes a recording as the run goes.

    ``out`` is an open text stream, or a path opened only when the process is spawned:
    a run refused before the spawn leaves an existing file untouched and creates none
    (rule RECORD-PARTIAL-001). Lines reach the file as soon as the writer releases them
    and the file is flushed after each, so a run that dies half-way, or a harness
    interrupted by SIGINT, leaves every chunk up to the failure on disk (the reader then
    names the missing exit line).

    A path is never truncated (rule USERFILE-RECORD-002). A new one is created
    exclusively. An existing one (or a symbolic link in its place) is replaced only with
    ``replace=True``, and then whole: the lines go to a temp file beside it
    (``.<name>.<random>.partial``) that is renamed over it when the process exits or the
    recorder is closed, so a harness killed mid-run leaves the old file as it was. With
    ``replace=False`` an existing file is left alone: nothing is written and
    :attr:`error` says why. When writing fails half-way through a replacement, the old
    file is kept and :attr:`partial` names the temp file holding what was written.

    The header keeps only the env names :func:`recorded_env_names` lists for the def
    plus ``env_names`` (what the caller set for this run, e.g. a request's
    ``env_overlay``), where the child env has them; every secret-named value of the
    whole child env is still redacted from the data, as are ``secrets``
    (RECORD-SECRET-LITERAL-001). ``cwd``/``home``/the temp dir become placeholders.
    ``expect`` pins how a replay must end.

    A write that fails (disk full, the file removed under us) never breaks the run:
    the recorder stops writing and keeps the error in :attr:`error`.

    A recording holds one process. When the same recorder sees a second spawn (a
    conversation turn reseeded after an expired resume, seed 000 §8), the file starts
    over, so it holds the run whose result is reported; a stream given as ``out`` must
    then be seekable, else :attr:`error` says why nothing more was written.
    """

    def __init__(
        self,
        out: IO[str] | str | os.PathLike[str],
        *,
        cwd: str,
        home: str | None = None,
        tmp: str | None = None,
        cli_version: str | None = None,
        platform: str | None = None,
        secrets: Iterable[str] = (),
        created: str | None = None,
        expect: Expectation | None = None,
        env_names: Iterable[str] = (),
        replace: bool = True,
        program: str | None = None,
        install: str | None = None,
        hosts: Sequence[str] | None = None,
    ) -> None:
        """``program``: write the argv's first item as this name (live mode: the CLI's own
        name, not the place one machine keeps it); ``None`` keeps what was spawned.
        ``install``: where the CLI is installed, written as ``{install}``.
        ``hosts``: the host names written as ``{host}``; ``None``: this machine's
        (:func:`host_spellings`, rule RECORD-HOST-001)."""
        if isinstance(out, (str, os.PathLike)):
            self.path: Path | None = Path(out)
            self._out: IO[str] | None = None
        else:
            self.path = None
            self._out = out
        self._cwd = cwd
        self._home = home
        self._tmp = tmp if tmp is not None else tempfile.gettempdir()
        self._cli_version = cli_version
        self._platform = platform or sys.platform
        self._secrets = tuple(secrets)
        self._created = created
        self._expect = expect
        self._env_names = frozenset(n.upper() for n in env_names)
        self._replace = replace
        self._program = program
        self._install = install
        self._hosts = tuple(hosts) if hosts is not None else host_spellings()
        #: The temp file an existing recording is being replaced through.
        self._pending: Path | None = None
        #: Files this recorder wrote: it may start them over (a second spawn).
        self._mine: set[Path] = set()
        self._writer: RecordingWriter | None = None
        #: The process was spawned and the header written (or attempted).
        self.started = False
        #: The exit line was written: the recording is complete.
        self.complete = False
        #: Chunks recorded, by direction (``stdin``/``stdout``/``stderr``).
        self.chunks: dict[str, int] = {d.value: 0 for d in Direction}
        #: Lines written to the file so far.
        self.lines = 0
        #: The first error opening or writing the file; nothing more is written after it.
        self.error: OSError | None = None
        #: Files finished before the current one (a run continued in a new process).
        self.previous: list[RecordedFile] = []
        #: Why the continuing process was not recorded, when it was not.
        self.continuation_error: str | None = None
        #: Where an unfinished replacement was left when writing failed (the old file kept).
        self.partial: Path | None = None

    def spawned(
        self,
        defn: AgentDef,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        secrets: Sequence[str] = (),
    ) -> None:
        if self.started:
            self._restart()
        self.started = True
        keep = recorded_env_names(defn) | self._env_names
        if self._program is not None and argv:
            argv = [self._program, *argv[1:]]
        header = RecordingHeader.from_def(
            defn,
            argv=argv,
            env={k: v for k, v in env.items() if k.upper() in keep},
            platform=self._platform,
            cli_version=self._cli_version,
            created=self._created,
        )
        if self._expect is not None:
            header = replace(header, expect=self._expect)
        home = self._home or env.get("HOME") or env.get("USERPROFILE")
        # seed 001 §11: a secret never reaches the file, even when its name was not kept.
        env_secrets = secret_values(env)
        self._writer = RecordingWriter(
            header,
            cwd=path_spellings(self._cwd),
            home=path_spellings(home),
            tmp=path_spellings(self._tmp, env.get("TMPDIR")),
            install=path_spellings(self._install) if self._install else None,
            hosts=self._hosts,
            secrets=(*self._secrets, *secrets, *env_secrets),
        )
        if self.path is not None and self._out is None and self.error is None:
            self._open(self.path)
        self._emit(self._writer.header_line())

    def _open(self, path: Path) -> None:
        """Open ``path`` for this process's recording without truncating anything."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        try:
            try:
                fd = os.open(path, flags, 0o666)  # O_EXCL: never through a link either
            except FileExistsError:
                if not (self._replace or path in self._mine):
                    raise FileExistsError(
                        errno.EEXIST, "it already exists; not replaced", str(path)
                    ) from None
                fd, temp = tempfile.mkstemp(
                    dir=path.parent, prefix=f".{path.name}.", suffix=".partial"
                )
                self._pending = Path(temp)
                with contextlib.suppress(OSError):
                    old = os.lstat(path)
                    if stat.S_ISREG(old.st_mode):
                        os.chmod(temp, stat.S_IMODE(old.st_mode))
            self._out = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        except OSError as exc:
            self.error = exc
            return
        self._mine.add(path)

    def _finish(self) -> None:
        """Close the file; a replacement takes the old file's place now (whole)."""
        out, self._out = self._out, None
        if out is not None:
            try:
                out.close()
            except OSError as exc:
                self.error = self.error or exc
        pending, self._pending = self._pending, None
        if pending is None or self.path is None:
            return
        if self.error is None:
            try:
                os.replace(pending, self.path)
                return
            except OSError as exc:
                self.error = exc
        self.partial = pending  # the old file stays; what this run wrote is here

    def continued(
        self,
        defn: AgentDef,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        secrets: Sequence[str] = (),
        interruption: RunError | None = None,
    ) -> None:
        """The run's turn goes on in a new process (seed 000 §12; rule RECORD-CONTINUE-001).

        A recording holds one process, so the new one is recorded in a file of its own
        beside the first, :func:`continuation_path` (``run.jsonl`` ->
        ``run.continued.jsonl``), complete in itself; a replay of it drives the continuing
        session (``harness.capture.adapters.AcpCaptureAdapter.session_options``). The first
        file is kept as written, its ``expect`` pinned to the interruption it ended in.
        With a stream as ``out`` there is no second file to write: :attr:`continuation_error`
        says so and nothing more is written.
        """
        first = self.path
        if first is None:
            self.continuation_error = (
                "the recording is a stream: the continuing process has no file"
            )
            self._writer = None
            return
        done = RecordedFile(first, self.complete, self.lines, dict(self.chunks))
        self.close()
        self.previous.append(done)
        if done.complete and interruption is not None:
            try:
                set_expectation(first, Expectation("failed", interruption.code, interruption.rule))
            except (OSError, RecordingError) as exc:
                self.continuation_error = f"could not pin the first file's expectation: {exc}"
        # spawned() starts over as for any second spawn, now in the file beside the first.
        self.path = continuation_path(first)
        self._out = None
        self.error = None
        self.spawned(defn, argv, env, secrets=secrets)
        if isinstance(self.error, FileExistsError):
            self.continuation_error = f"{self.path} already exists and was not replaced"

    def data(self, direction: str, data: bytes, t_ms: float) -> None:
        if self._writer is not None and data:
            self.chunks[Direction(direction).value] += 1
            self._emit(self._writer.chunk(direction, data, t_ms))

    def step(self, kind: StepKind, t_ms: float, detail: Mapping[str, Any]) -> None:
        """A ladder step the run took (:class:`harness.runner.engine.LadderTap`)."""
        if self._writer is not None:
            self._emit(self._writer.step(kind, t_ms, detail))

    def exited(self, code: int | None, signal: int | None, duration_ms: float) -> None:
        if self._writer is not None:
            self._emit(self._writer.exit(code, signal, duration_ms))
            if self.path is not None:
                self._finish()
            self.complete = self.error is None

    def _restart(self) -> None:
        self.complete = False
        self.lines = 0
        self.chunks = {d.value: 0 for d in Direction}
        self._writer = None
        if self.path is not None:
            self._finish()  # spawned() starts the file over (it is this recorder's)
            return
        if self._out is None or self.error is not None:
            return
        try:
            self._out.seek(0)
            self._out.truncate()
        except (OSError, ValueError) as exc:
            self.error = exc if isinstance(exc, OSError) else OSError(str(exc))

    def close(self) -> None:
        """Close the file this recorder opened (a stream given as ``out`` stays open); a
        replacement takes the old file's place with what was written so far."""
        if self.path is not None:
            self._finish()

    def _emit(self, text: str) -> None:
        if not text or self._out is None or self.error is not None:
            return
        try:
            self._out.write(text)
            self._out.flush()
        except OSError as exc:
            self.error = exc
            return
        self.lines += text.count("\n")


# -- the reader ---------------------------------------------------------------------------------

_HEADER_REQUIRED = (
    "format",
    "version",
    "agent",
    "stream_format",
    "event_parser",
    "transport",
    "argv",
    "prompt_delivery",
    "platform",
    "cli_version",
    "env",
)
_HEADER_KEYS = frozenset({*_HEADER_REQUIRED, "created", "expect"})
#: seed 002 §6.2: how the prompt reaches the CLI (``PromptDelivery`` values).
_DELIVERIES = frozenset(p.value for p in PromptDelivery)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _shown(value: object) -> str:
    """``repr`` of a bad value, short: a huge int is named by its size, not printed."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, line: int | None, problem: str) -> RecordingError:
        return RecordingError(self.source, line, problem)

    def string(
        self,
        obj: Mapping[str, Any],
        key: str,
        line: int,
        *,
        null: bool = False,
        nonempty: bool = False,
    ) -> Any:
        value = obj.get(key)
        if (isinstance(value, str) and (value or not nonempty)) or (null and value is None):
            return value
        kind = "a non-empty string" if nonempty else "a string"
        raise self.fail(line, f"{key!r} must be {kind}{' or null' if null else ''}, got {value!r}")

    def number(self, obj: Mapping[str, Any], key: str, line: int) -> float:
        value = obj.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise self.fail(line, f"{key!r} must be a number >= 0, got {_shown(value)}")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf  # an int beyond the double range: no time a run can take
        if not math.isfinite(number):
            raise self.fail(line, f"{key!r} must be a finite number >= 0, got {_shown(value)}")
        return number

    def only(self, obj: Mapping[str, Any], keys: Iterable[str], line: int, what: str) -> None:
        extra = sorted(set(obj) - set(keys))
        if extra:
            raise self.fail(line, f"unknown key(s) in the {what}: {extra}")

    def header(self, obj: dict[str, Any], line: int) -> RecordingHeader:
        if obj.get("format") != FORMAT_NAME:
            raise self.fail(
                line, f"not a recording: 'format' is {obj.get('format')!r}, not {FORMAT_NAME!r}"
            )
        version = obj.get("version")
        if version != FORMAT_VERSION:
            raise RecordingVersionError(
                self.source,
                line,
                f"recording format version {version!r}; this harness reads version "
                f"{FORMAT_VERSION}: re-record it",
            )
        missing = [k for k in _HEADER_REQUIRED if k not in obj]
        if missing:
            raise self.fail(line, f"the header lacks {missing}")
        self.only(obj, _HEADER_KEYS, line, "header")
        argv = obj["argv"]
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise self.fail(line, f"'argv' must be a list of strings, got {argv!r}")
        env = obj["env"]
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise self.fail(line, f"'env' must map names to strings, got {env!r}")
        created = obj.get("created")
        if created is not None and not isinstance(created, str):
            raise self.fail(line, f"'created' must be a string, got {created!r}")
        delivery = obj["prompt_delivery"]
        if not isinstance(delivery, str) or delivery not in _DELIVERIES:
            raise self.fail(
                line, f"'prompt_delivery' must be one of {sorted(_DELIVERIES)}, got {delivery!r}"
            )
        return RecordingHeader(
            agent=self.string(obj, "agent", line, nonempty=True),
            stream_format=self.string(obj, "stream_format", line, nonempty=True),
            event_parser=self.string(obj, "event_parser", line, null=True),
            transport=self.string(obj, "transport", line, nonempty=True),
            argv=tuple(argv),
            prompt_delivery=delivery,
            platform=self.string(obj, "platform", line, nonempty=True),
            cli_version=self.string(obj, "cli_version", line, null=True),
            env=dict(env),
            created=created,
            expect=self.expectation(obj.get("expect"), line),
        )

    def expectation(self, value: Any, line: int) -> Expectation | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail(line, f"'expect' must be an object, got {value!r}")
        self.only(value, ("status", "error_code", "error_rule"), line, "expect object")
        status = value.get("status")
        if status not in _STATUSES:
            raise self.fail(line, f"'expect.status' must be one of {_STATUSES}, got {status!r}")
        return Expectation(
            status=status,
            error_code=self.string(value, "error_code", line, null=True),
            error_rule=self.string(value, "error_rule", line, null=True),
        )

    def chunk(self, obj: dict[str, Any], line: int) -> Chunk:
        self.only(obj, ("t", "dir", "data", "b64"), line, "chunk")
        t_ms = self.number(obj, "t", line)
        try:
            direction = Direction(obj.get("dir"))
        except ValueError:
            raise self.fail(
                line, f"'dir' must be stdout, stderr or stdin, got {obj.get('dir')!r}"
            ) from None
        if ("data" in obj) == ("b64" in obj):
            raise self.fail(line, "a chunk has exactly one of 'data' and 'b64'")
        if "data" in obj:
            text = self.string(obj, "data", line)
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:
                raise self.fail(line, "'data' holds a lone surrogate; use 'b64'") from None
        else:
            encoded = self.string(obj, "b64", line)
            try:
                data = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError):
                raise self.fail(line, "'b64' is not valid base64") from None
        return Chunk(t_ms, direction, data)

    def step(self, obj: dict[str, Any], line: int, chunks: int, stdout: int, stdin: int) -> Step:
        t_ms = self.number(obj, "t", line)
        try:
            kind = StepKind(obj.get("step"))
        except ValueError:
            known = ", ".join(k.value for k in StepKind)
            raise self.fail(
                line, f"'step' must be one of {known}, got {obj.get('step')!r}"
            ) from None
        detail = {k: v for k, v in obj.items() if k not in ("t", "step")}
        step = Step(
            t_ms,
            kind,
            detail,
            chunk_index=chunks,
            stdout_chunks=stdout,
            stdin_bytes=stdin,
            line=line,
        )
        problem = step.problem()
        if problem is not None:
            raise self.fail(line, problem)
        return step

    def exit(self, obj: dict[str, Any], line: int) -> ExitInfo:
        self.only(obj, ("exit",), line, "exit line")
        info = obj["exit"]
        if not isinstance(info, dict):
            raise self.fail(line, f"'exit' must be an object, got {info!r}")
        self.only(info, ("code", "signal", "duration_ms"), line, "exit object")
        code = info.get("code")
        if (
            "code" not in info
            or isinstance(code, bool)
            or not (code is None or isinstance(code, int))
        ):
            raise self.fail(line, f"'exit.code' must be an integer or null, got {code!r}")
        if "signal" not in info:
            raise self.fail(line, "'exit.signal' is missing")
        return ExitInfo(
            code=code,
            signal=self.string(info, "signal", line, null=True),
            duration_ms=self.number(info, "duration_ms", line),
        )


class _LineReader:
    """The strict reader's state over the lines of one recording, fed one at a time (the
    same checks and messages whether the file is parsed whole or scanned)."""

    def __init__(self, source: str) -> None:
        self.reader = _Reader(source)
        self.header: RecordingHeader | None = None
        self.exit: ExitInfo | None = None
        self.lines = 0
        #: Ladder steps read so far (RECORD-LADDER-001), and what came before the next one.
        self.steps: list[Step] = []
        self._chunks = 0
        self._stdout = 0
        self._stdin = 0

    def line(self, number: int, raw_line: bytes) -> Chunk | None:
        """Check line ``number`` (without its ``\\n``); its chunk, if it is one."""
        self.lines = number
        reader = self.reader
        raw = raw_line[:-1] if raw_line.endswith(b"\r") else raw_line
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise reader.fail(number, "the line is not UTF-8") from None
        if not text.strip():
            raise reader.fail(number, "blank line")
        try:
            obj = json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            raise reader.fail(number, f"not JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise reader.fail(number, f"a line must be a JSON object, got {type(obj).__name__}")
        if self.exit is not None:
            raise reader.fail(number, "a line after the exit line")
        if self.header is None:
            self.header = reader.header(obj, number)
        elif "exit" in obj:
            self.exit = reader.exit(obj, number)
        elif "step" in obj:
            self.steps.append(reader.step(obj, number, self._chunks, self._stdout, self._stdin))
        else:
            chunk = reader.chunk(obj, number)
            self._chunks += 1
            if chunk.direction is Direction.STDOUT:
                self._stdout += 1
            elif chunk.direction is Direction.STDIN:
                self._stdin += len(chunk.data)
            return chunk
        return None

    def end(self) -> tuple[RecordingHeader, ExitInfo]:
        if self.header is None:
            raise self.reader.fail(None, "empty file: no header line")
        if self.exit is None:
            raise self.reader.fail(self.lines, "no exit line: the recording is truncated")
        return self.header, self.exit


def parse_recording(data: bytes, source: str = "<recording>") -> Recording:
    """Read a recording; raises :class:`RecordingError` naming ``source`` and the line."""
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    lines = _LineReader(source)
    chunks: list[Chunk] = []
    for number, raw_line in enumerate(raw_lines, start=1):
        chunk = lines.line(number, raw_line)
        if chunk is not None:
            chunks.append(chunk)
    header, exit_info = lines.end()
    return Recording(header, tuple(chunks), exit_info, source=source, steps=tuple(lines.steps))


def load_recording(path: str | Path) -> Recording:
    """Read and parse the recording at ``path``."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise RecordingError(str(path), None, exc.strerror or str(exc)) from exc
    return parse_recording(data, str(path))


def _file_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The lines of the file at ``path`` (1-based, without ``\\n``), read one at a time."""
    source = str(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise RecordingError(source, None, exc.strerror or str(exc)) from exc
    with handle:
        number = 0
        while True:
            try:
                raw = handle.readline()
            except OSError as exc:
                raise RecordingError(source, number + 1, exc.strerror or str(exc)) from exc
            if not raw:
                return
            number += 1
            yield number, raw[:-1] if raw.endswith(b"\n") else raw


@dataclass(frozen=True)
class RecordingScan:
    """A recording file checked line by line without holding its chunks (design
    §Reliability): what :func:`load_recording` would read, except the chunk data, which
    :meth:`chunks` reads again from the file when asked. Made by :func:`scan_recording`."""

    path: Path
    header: RecordingHeader
    exit: ExitInfo
    #: The stdin chunks' data, in order (what the recorded client wrote; small).
    stdin_chunks: tuple[bytes, ...]
    #: How many chunks, and stdout bytes, the file holds.
    chunk_count: int
    stdout_bytes: int
    #: The largest chunk time (``t``), ``0`` without chunks; ``inf`` when one is not finite.
    latest_t_ms: float
    placeholders: bool = True
    #: The stop ladder's steps (RECORD-LADDER-001): few, kept whole.
    steps: tuple[Step, ...] = ()

    @property
    def source(self) -> str:
        return str(self.path)

    @property
    def stdin(self) -> bytes:
        return b"".join(self.stdin_chunks)

    def chunks(self) -> Iterator[tuple[int, Chunk]]:
        """Every chunk with its 1-based line, read again from the file one line at a time.
        Raises :class:`RecordingError` if the file no longer reads as it did."""
        lines = _LineReader(self.source)
        for number, raw_line in _file_lines(self.path):
            chunk = lines.line(number, raw_line)
            if chunk is not None:
                yield number, chunk
        lines.end()


def scan_recording(path: str | Path) -> RecordingScan:
    """Check the recording at ``path`` line by line, as :func:`load_recording` would (the
    same :class:`RecordingError` for the same line), keeping the header, the exit and the
    stdin but no stdout or stderr data: its memory does not grow with the file."""
    target = Path(path)
    lines = _LineReader(str(target))
    stdin: list[bytes] = []
    count = stdout_bytes = 0
    latest = 0.0
    for number, raw_line in _file_lines(target):
        chunk = lines.line(number, raw_line)
        if chunk is None:
            continue
        count += 1
        latest = max(latest, chunk.t_ms if math.isfinite(chunk.t_ms) else math.inf)
        if chunk.direction is Direction.STDIN:
            stdin.append(chunk.data)
        elif chunk.direction is Direction.STDOUT:
            stdout_bytes += len(chunk.data)
    header, exit_info = lines.end()
    return RecordingScan(
        target,
        header,
        exit_info,
        tuple(stdin),
        count,
        stdout_bytes,
        latest,
        steps=tuple(lines.steps),
    )


# -- placeholders ----------------------------------------------------------------------------------


def path_spellings(*paths: str | None) -> tuple[str, ...]:
    """Each absolute path as given and as resolved through symlinks (``os.path.realpath``),
    without repeats: a CLI that prints ``os.getcwd()`` under a symlinked ``--cwd`` (macOS's
    ``/tmp`` is ``/private/tmp``) writes the resolved one (rule RECORD-PATHS-REAL-001)."""
    out: list[str] = []
    for path in paths:
        if not path:
            continue
        spellings = [path]
        if os.path.isabs(path):
            spellings.append(os.path.realpath(path))
        out.extend(s for s in spellings if s not in out)
    return tuple(out)


def host_spellings() -> tuple[str, ...]:
    """This machine's host names as a CLI may print them: ``socket.gethostname()``,
    ``platform.node()`` where it differs, and the short form of each before the first dot
    (rule RECORD-HOST-001; :mod:`harness.secrets.hosts` decides which are scrubbed)."""
    return host_names(socket.gethostname(), _platform.node())


def restore_header(header: RecordingHeader, *, cwd: str, home: str, tmp: str) -> RecordingHeader:
    """``header`` with the placeholders in argv and env values replaced (RECORD-PATHS-001)."""
    values = {"cwd": cwd, "home": home, "tmp": tmp}
    return replace(
        header,
        argv=tuple(restore_text(a, values) for a in header.argv),
        env={k: restore_text(v, values) for k, v in header.env.items()},
    )


def restore_paths(recording: Recording, *, cwd: str, home: str, tmp: str) -> Recording:
    """The recording with ``{cwd}``, ``{home}``, ``{tmp}`` replaced by these directories in
    argv, env values and every chunk (rule RECORD-PATHS-001); ``{install}`` and ``{host}``
    stay as they are (RECORD-HOST-001: a replay has no machine to name). Restoring twice is
    refused: the second pass would turn an escaped literal ``{!cwd}`` into a path."""
    if not recording.placeholders:
        raise ValueError("the recording's paths were already restored")
    values = {"cwd": cwd, "home": home, "tmp": tmp}
    header = restore_header(recording.header, cwd=cwd, home=home, tmp=tmp)
    chunks = tuple(replace(c, data=restore_bytes(c.data, values)) for c in recording.chunks)
    return replace(recording, header=header, chunks=chunks, placeholders=False)


def set_expectation(path: str | Path, expect: Expectation) -> None:
    """Pin how a replay of the recording at ``path`` must end (REPLAY-STATUS-001), once the
    run that made it is over: the header line is rewritten, every other line kept as is."""
    target = Path(path)
    text = target.read_text(encoding="utf-8")
    head, sep, rest = text.partition("\n")
    try:
        header = json.loads(head)
    except ValueError as exc:
        raise RecordingError(str(target), 1, f"the header is not JSON: {exc}") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise RecordingError(str(target), 1, "the first line is not a recording header")
    header["expect"] = expect.to_json()
    # Written beside the file and renamed over it: a crash leaves the old file whole.
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(_dumps(header) + sep + rest)
        with contextlib.suppress(OSError):
            os.chmod(temp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(temp, target)
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)
