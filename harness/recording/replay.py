"""Replaying a recording through the same parser or session a live run uses.

Rules: REPLAY-CHUNK-001.
Design: docs/design/recording.md#harness.recording.replay
"""

from __future__ import annotations

import bisect
import json
import math
import random
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.capture.adapters import adapter_for
from harness.capture.driver import (
    CaptureReplay,
    FrameComparison,
    HostInputError,
    ReplayAdapter,
    capture_values,
    parse_host_input,
    replay_capture,
)
from harness.defs.registry import BUILTIN_REGISTRY
from harness.defs.transport import select_transport
from harness.defs.types import AgentDef
from harness.errors import HarnessError
from harness.events import Error, Event, TextDelta, ThinkingDelta, ToolUse
from harness.formats import UnknownStreamFormatError, create_parser, is_two_way
from harness.host.prompt import is_terminal_turn
from harness.ladder import Step, StepKind
from harness.protocols.base import (
    Actions,
    Finished,
    RunStatus,
    SessionError,
    SessionRequest,
    SessionState,
    TwoWaySession,
)
from harness.recording.record import (
    Direction,
    ExitInfo,
    Expectation,
    Recording,
    RecordingError,
    RecordingHeader,
    RecordingScan,
    restore_header,
    restore_paths,
)
from harness.recording.replay_budget import BudgetVerdict, budget_verdicts
from harness.recording.replay_cancel import Canceller, CancelPlan, describe_ladder, ladder_problems
from harness.secrets.scrub import restore_bytes

__all__ = [
    "CHUNKING_MODES",
    "REPLAY_PATHS",
    "Clock",
    "Finding",
    "ReplayResult",
    "SystemClock",
    "chunk_cuts",
    "replay_recording",
]

#: ``--chunking`` values.
CHUNKING_MODES = ("recorded", "line", "1", "random")

#: Where placeholders point during a replay: absolute on every platform, and the same on
#: every machine, so the events of a replay are machine-independent.
REPLAY_PATHS: Mapping[str, str] = {
    "cwd": "/replay/cwd",
    "home": "/replay/home",
    "tmp": "/replay/tmp",
}

#: Largest random piece (bytes) in ``random`` mode.
_RANDOM_MAX = 97


class Clock(Protocol):
    """Milliseconds from any monotonic origin, and a way to wait."""

    def now_ms(self) -> float: ...

    def sleep_ms(self, ms: float) -> None: ...


class SystemClock:
    """The real clock (``time.monotonic``, ``time.sleep``)."""

    def now_ms(self) -> float:
        return time.monotonic() * 1000.0

    def sleep_ms(self, ms: float) -> None:
        time.sleep(ms / 1000.0)


@dataclass(frozen=True)
class Finding:
    """One rule checked by a replay: ``pass``, ``fail`` or ``skipped``, and why."""

    rule: str
    verdict: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "verdict": self.verdict, "message": self.message}


@dataclass
class ReplayResult:
    header: RecordingHeader
    source: str | None
    chunking: str
    #: The events, unless they were handed to ``on_event`` (then only counted).
    events: list[Event] = field(default_factory=list)
    event_count: int = 0
    #: Frames the session sent (two-way formats), parsed as JSON.
    frames: list[Any] = field(default_factory=list)
    status: RunStatus | None = None
    error: SessionError | None = None
    exit: ExitInfo | None = None
    findings: list[Finding] = field(default_factory=list)
    comparison: FrameComparison | None = None
    #: The capture driver's full report (two-way formats).
    capture: CaptureReplay | None = None
    #: A cancelled recording's cancel, as replayed (two-way formats).
    canceller: Canceller | None = None
    #: The prompt-budget guards' verdict per platform and launch (REPLAY-BUDGET-001).
    budget: list[BudgetVerdict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.verdict != "fail" for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "recording": self.source,
            "agent": self.header.agent,
            "stream_format": self.header.stream_format,
            "chunking": self.chunking,
            "ok": self.ok,
            "status": self.status.value if self.status else None,
            "error": self.error.to_json() if self.error else None,
            "events": self.event_count,
            "frames_sent": len(self.frames),
            # Two-way: stdout lines after the session finished (a later turn), judged as live.
            "remaining_lines": len(self.capture.remaining_lines) if self.capture else 0,
            "exit": self.exit.to_json()["exit"] if self.exit else None,
            "findings": [f.to_json() for f in self.findings],
            "comparison": self.comparison.to_json() if self.comparison else None,
            "grace_ticks": (
                [
                    {"label": t.label, "recorded_ms": t.recorded_ms, "clock_ms": t.delivered_ms}
                    for t in self.canceller.ticks
                ]
                if self.canceller is not None
                else []
            ),
            "budget": [b.to_json() for b in self.budget],
        }


# -- chunk plans ---------------------------------------------------------------------------------


class _Cuts(Protocol):
    """Where a chunking mode cuts the stdout, handed out as the stream is read."""

    def arrived(self, start: int, data: bytes) -> None:
        """The stdout bytes ``data`` starting at offset ``start`` were read."""

    def take(self, lo: int, hi: int) -> list[int]:
        """The cuts ``lo < c < hi`` in order; cuts up to ``hi`` are then spent."""


class _RecordedCuts:
    def __init__(self) -> None:
        self._ends: deque[int] = deque()

    def arrived(self, start: int, data: bytes) -> None:
        self._ends.append(start + len(data))

    def take(self, lo: int, hi: int) -> list[int]:
        ends, out = self._ends, []
        while ends and ends[0] < hi:
            cut = ends.popleft()
            if cut > lo:
                out.append(cut)
        return out


class _LineCuts(_RecordedCuts):
    def arrived(self, start: int, data: bytes) -> None:
        at = data.find(b"\n")
        while at >= 0:
            self._ends.append(start + at + 1)
            at = data.find(b"\n", at + 1)


class _ByteCuts:
    def __init__(self) -> None:
        self._spent = 0

    def arrived(self, start: int, data: bytes) -> None:
        pass

    def take(self, lo: int, hi: int) -> list[int]:
        first = max(lo, self._spent) + 1
        self._spent = max(self._spent, hi - 1)
        return list(range(first, hi))


class _RandomCuts:
    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._next = rng.randint(1, _RANDOM_MAX)

    def arrived(self, start: int, data: bytes) -> None:
        pass

    def take(self, lo: int, hi: int) -> list[int]:
        out: list[int] = []
        while self._next < hi:
            if self._next > lo:
                out.append(self._next)
            self._next += self._rng.randint(1, _RANDOM_MAX)
        return out


def _cutter(mode: str, rng: random.Random) -> _Cuts:
    if mode == "recorded":
        return _RecordedCuts()
    if mode == "line":
        return _LineCuts()
    if mode == "1":
        return _ByteCuts()
    if mode == "random":
        return _RandomCuts(rng)
    raise HarnessError(f"unknown chunking {mode!r}; one of {', '.join(CHUNKING_MODES)}")


def chunk_cuts(
    mode: str, data: bytes, recorded_ends: Sequence[int], rng: random.Random
) -> Iterator[int]:
    """The cut offsets (``0 < cut < len(data)``, ascending) for feeding ``data`` in
    ``mode``, made as they are needed: mode ``1`` never holds a list of every offset."""
    cutter = _cutter(mode, rng)
    size = len(data)
    if mode == "recorded":
        for end in sorted({e for e in recorded_ends if 0 < e < size}):
            cutter.arrived(end, b"")
    elif mode == "line":
        cutter.arrived(0, data)
    step = 1 << 16
    for lo in range(0, size, step):
        yield from cutter.take(lo - 1 if lo else 0, min(lo + step, size))


def _pieces(data: bytes, cuts: Sequence[int]) -> list[tuple[int, bytes]]:
    """``(end offset, piece)`` for ``data`` cut at ``cuts``."""
    out: list[tuple[int, bytes]] = []
    prev = 0
    for cut in [*cuts, len(data)]:
        if cut > prev:
            out.append((cut, data[prev:cut]))
            prev = cut
    return out


class _Pacer:
    """Delivers stream offsets no earlier than their recorded time (REPLAY-TIMING-001).

    Told each stdout chunk's end offset and time as it is read; forgets a chunk once a
    later offset was delivered, so it holds only the chunks read ahead of the feed."""

    def __init__(self, clock: Clock | None) -> None:
        self._clock = clock
        self._origin = clock.now_ms() if clock is not None else 0.0
        self._chunks: deque[tuple[int, float]] = deque()
        self._last: tuple[int, float] | None = None

    def arrived(self, end: int, t_ms: float) -> None:
        if self._clock is not None:
            self._chunks.append((end, t_ms))

    def wait_for(self, end_offset: int) -> None:
        """Wait until the byte before ``end_offset`` had arrived in the recording."""
        if self._clock is None or end_offset <= 0:
            return
        chunks = self._chunks
        while chunks and chunks[0][0] < end_offset:
            self._last = chunks.popleft()
        held = chunks[0] if chunks else self._last
        if held is None:
            return
        due = held[1] - (self._clock.now_ms() - self._origin)
        if due > 0:
            self._clock.sleep_ms(due)

    def wait_until(self, t_ms: float) -> float | None:
        """Wait until ``t_ms`` after the start (a recorded offset); the clock's reading
        then, ms after the start (``None`` without timing)."""
        if self._clock is None:
            return None
        due = t_ms - (self._clock.now_ms() - self._origin)
        if due > 0:
            self._clock.sleep_ms(due)
        return self._clock.now_ms() - self._origin


class _Stdout:
    """The recorded stdout as it is read, chunk by chunk (design §Reliability: never whole).

    Tells the pacer when each chunk was recorded, the cutter what was read, and keeps the
    end offset of each line read but not yet fed (with ``lines``, for :class:`_Rechunked`). The
    whole stream is tracked: a live run feeds the session after its finish too."""

    def __init__(
        self,
        chunks: Iterable[tuple[bytes, float]],
        pacer: _Pacer,
        cutter: _Cuts,
        *,
        lines: bool = False,
    ) -> None:
        self._chunks = chunks
        self._pacer = pacer
        self._cutter = cutter
        #: Whether line ends are kept (only :class:`_Rechunked` reads, and spends, them).
        self._lines = lines
        #: Bytes read so far.
        self.read = 0
        self.line_ends: deque[int] = deque()
        #: Told of each chunk as it is read (a cancelled two-way recording).
        self.canceller: Canceller | None = None

    def __iter__(self) -> Iterator[bytes]:
        for index, (data, t_ms) in enumerate(self._chunks):
            if self.canceller is not None:
                self.canceller.reading(index, t_ms)
            start = self.read
            self.read += len(data)
            self._pacer.arrived(self.read, t_ms)
            self._cutter.arrived(start, data)
            at = data.find(b"\n") if self._lines else -1
            while at >= 0:
                self.line_ends.append(start + at + 1)
                at = data.find(b"\n", at + 1)
            if data:
                yield data


#: A ``line`` piece is fed once it holds this many bytes, even without its newline: a
#: line of hundreds of MB is never held whole (the events do not depend on the cuts).
_MAX_PIECE = 4 * 1024 * 1024


def _stream_pieces(stdout: _Stdout, cutter: _Cuts) -> Iterator[tuple[int, bytes]]:
    """``(end offset, piece)`` of the stdout as read, cut where ``cutter`` says."""
    pending = bytearray()
    for data in stdout:
        end = stdout.read
        start = prev = end - len(data)
        for cut in cutter.take(start, end + 1):
            pending += data[prev - start : cut - start]
            prev = cut
            if pending:
                yield cut, bytes(pending)
                pending.clear()
        pending += data[prev - start :]
        if len(pending) >= _MAX_PIECE:
            yield end, bytes(pending)
            pending.clear()
    if pending:
        yield stdout.read, bytes(pending)


# -- the input -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Input:
    """What a replay reads, from a :class:`Recording` or a :class:`RecordingScan`, paths
    restored: the stdout is read again each time :attr:`stdout` is called."""

    header: RecordingHeader
    exit: ExitInfo
    source: str | None
    stdin: bytes
    stdout: Callable[[], Iterator[tuple[bytes, float]]]
    #: ``(line, t)`` of every chunk, for the ``--timing`` check.
    times: Callable[[], Iterator[tuple[int, float]]]
    #: The largest chunk time, when known: the check reads :attr:`times` only if it is late.
    latest_t_ms: float | None = None
    #: The stop ladder's steps (RECORD-LADDER-001).
    steps: tuple[Step, ...] = ()
    #: What the recorded host wrote to stdin from the cancel step on, paths restored.
    stdin_after_cancel: bytes = b""


def _after_cancel(steps: Sequence[Step], stdin: bytes, values: Mapping[str, str] | None) -> bytes:
    """The raw recorded ``stdin`` from the first cancel step on, paths restored."""
    cancel = next((s for s in steps if s.kind is StepKind.CANCEL), None)
    if cancel is None:
        return b""
    rest = stdin[cancel.stdin_bytes :]
    return rest if values is None else restore_bytes(rest, values)


def _paths(paths: Mapping[str, str] | None) -> dict[str, str]:
    where = dict(REPLAY_PATHS)
    where.update(paths or {})
    return where


def _from_recording(recording: Recording, paths: Mapping[str, str] | None) -> _Input:
    values: dict[str, str] | None = None
    raw_stdin = recording.stream(Direction.STDIN) if recording.steps else b""
    if recording.placeholders:
        values = where = _paths(paths)
        recording = restore_paths(recording, cwd=where["cwd"], home=where["home"], tmp=where["tmp"])
    chunks = recording.chunks
    placed = [s.chunk_index for s in recording.steps]
    return _Input(
        recording.header,
        recording.exit,
        recording.source,
        recording.stream(Direction.STDIN),
        lambda: ((c.data, c.t_ms) for c in chunks if c.direction is Direction.STDOUT),
        # Chunk ``i`` is on line ``i + 2`` (the header is line 1) plus the steps before it.
        lambda: (
            (index + 2 + bisect.bisect_right(placed, index), c.t_ms)
            for index, c in enumerate(chunks)
        ),
        steps=recording.steps,
        stdin_after_cancel=_after_cancel(recording.steps, raw_stdin, values),
    )


def _from_scan(scan: RecordingScan, paths: Mapping[str, str] | None) -> _Input:
    header, stdin = scan.header, scan.stdin
    values: dict[str, str] | None = None
    if scan.placeholders:
        values = _paths(paths)
        header = restore_header(header, cwd=values["cwd"], home=values["home"], tmp=values["tmp"])
        stdin = b"".join(restore_bytes(data, values) for data in scan.stdin_chunks)

    def stdout() -> Iterator[tuple[bytes, float]]:
        for _, chunk in scan.chunks():
            if chunk.direction is Direction.STDOUT:
                data = chunk.data if values is None else restore_bytes(chunk.data, values)
                yield data, chunk.t_ms

    return _Input(
        header,
        scan.exit,
        scan.source,
        stdin,
        stdout,
        lambda: ((line, c.t_ms) for line, c in scan.chunks()),
        scan.latest_t_ms,
        steps=scan.steps,
        stdin_after_cancel=_after_cancel(scan.steps, scan.stdin, values),
    )


def _check_times(source: _Input) -> None:
    """Refuse a time offset ``--timing`` cannot wait for: not finite, or after the recorded
    exit (CLIERR-TIMING-001)."""
    limit = source.exit.duration_ms
    latest = source.latest_t_ms
    if latest is not None and math.isfinite(latest) and latest <= limit:
        return
    for line, t_ms in source.times():
        if math.isfinite(t_ms) and t_ms <= limit:
            continue
        problem = f"'t' must be a finite number of ms, got {t_ms!r}"
        if math.isfinite(t_ms):
            problem = f"'t' is {t_ms!r} ms, after the recorded exit at {limit!r} ms"
        raise RecordingError(
            source.source or "recording", line, f"{problem}; --timing cannot wait for it"
        )


class _Events:
    """Counts the events and keeps what the verdicts read (the first ``error``); hands each
    event to ``on_event``, or keeps it on the result when there is none."""

    def __init__(self, result: ReplayResult, on_event: Callable[[Event], None] | None) -> None:
        self._result = result
        self._on_event = on_event
        self.first_error: Error | None = None
        #: Terminal turns (ref §2.1.8: not paused for a tool) and content after the first.
        self.terminals = 0
        self.after_terminal = 0

    def add(self, event: Event) -> None:
        self._result.event_count += 1
        if self.first_error is None and isinstance(event, Error):
            self.first_error = event
        if self.terminals and isinstance(event, (TextDelta, ThinkingDelta, ToolUse)):
            self.after_terminal += 1
        if is_terminal_turn(event):
            self.terminals += 1
        if self._on_event is None:
            self._result.events.append(event)
        else:
            self._on_event(event)


# -- one-way formats -----------------------------------------------------------------------------


def _replay_one_way(
    source: _Input, cutter: _Cuts, pacer: _Pacer, result: ReplayResult, events: _Events
) -> None:
    header = source.header
    try:
        parser = create_parser(header.stream_format, header.event_parser)
    except UnknownStreamFormatError as exc:
        raise HarnessError(f"{source.source or 'recording'}: {exc}") from exc
    stdout = _Stdout(source.stdout(), pacer, cutter)
    for end, piece in _stream_pieces(stdout, cutter):
        pacer.wait_for(end)
        for event in parser.feed(piece):
            events.add(event)
    for event in parser.finish():
        events.add(event)
    # ref §1.2: an in-stream error event flips the run to failed.
    first = events.first_error
    result.status = RunStatus.FAILED if first is not None else RunStatus.COMPLETED
    if first is not None:
        result.error = SessionError(code=first.code or "STREAM_ERROR", message=first.message)
    if any(s.kind is StepKind.CANCEL for s in source.steps):
        # ref §10.1 rule 1: a cancelled run is cancelled, whatever its stream said.
        result.status = RunStatus.CANCELLED
        problems: list[str] = []
        if events.terminals > 1:
            problems.append(f"{events.terminals} terminal turns")
        if events.after_terminal:
            problems.append(
                f"{_count(events.after_terminal, 'event')} of content after the terminal turn"
            )
        verdict = "fail" if problems else "pass"
        message = "; ".join(problems) or "cancelled; at most one terminal turn, nothing after it"
        result.findings.append(Finding("REPLAY-CANCEL-STATUS-001", verdict, message))


# -- two-way formats -----------------------------------------------------------------------------


class _Rechunked:
    """A session whose ``receive`` calls are cut again at the replay's chunk boundaries.

    The capture driver calls ``receive`` once per captured stdout line held whole, and
    several times for a line it streams through (over ``HELD_LINE_BYTES``); a call that
    ends with ``\\n`` ends its line. Offsets are tracked, not calls: a call starts where
    the previous one of its line stopped (``line start + bytes fed``), and is cut where
    the chunking mode cuts between there and the line's end (offsets past the fed text,
    which may be shorter or longer after a response id was rewritten, are dropped).
    Everything else is passed through unchanged.
    """

    def __init__(
        self,
        inner: TwoWaySession,
        stdout: _Stdout,
        cutter: _Cuts,
        pacer: _Pacer,
        *,
        bytewise: bool,
    ) -> None:
        self._inner = inner
        self._stdout = stdout
        self._cutter = cutter
        self._pacer = pacer
        self._bytewise = bytewise
        self._line_start = 0
        self._fed = 0
        #: Cancels the session where the recording did (a cancelled recording).
        self.canceller: Canceller | None = None
        self.frames_sent = 0
        #: How often the session finished, and events it published after the first time.
        self.finishes = 0
        self.events_after_finish = 0

    @property
    def state(self) -> SessionState:
        return self._inner.state

    @property
    def session_id(self) -> str | None:
        return self._inner.session_id

    @property
    def counters(self) -> Mapping[str, int]:
        return self._inner.counters

    def _seen(self, actions: Actions) -> Actions:
        if self.finishes:
            self.events_after_finish += len(actions.events)
        self.frames_sent += len(actions.frames)
        self.finishes += sum(1 for c in actions.controls if isinstance(c, Finished))
        return actions

    def _due(self, *, final: bool = False) -> Actions:
        """The cancel and grace ticks the recording had before what comes next."""
        if self.canceller is None or self.finishes:
            return Actions()
        return self._seen(self.canceller.due(self._inner, self.frames_sent, final=final))

    def start(self, request: SessionRequest, now_ms: float) -> Actions:
        return self._seen(self._inner.start(request, now_ms))

    def receive(self, data: bytes, now_ms: float) -> Actions:
        early = self._due()
        return early.extend(self._receive(data, now_ms))

    def _receive(self, data: bytes, now_ms: float) -> Actions:
        stdout = self._stdout
        base = self._line_start + self._fed
        line_end = stdout.line_ends[0] if stdout.line_ends else max(stdout.read, base)
        if self._bytewise:
            relative = list(range(1, len(data)))
        else:
            cuts = self._cutter.take(base, min(line_end, base + len(data)))
            relative = [c - base for c in cuts]
        out = Actions()
        for end, piece in _pieces(data, relative):
            self._pacer.wait_for(base + min(end, line_end - base))
            out.extend(self._inner.receive(piece, now_ms))
        self._fed += len(data)
        if data.endswith(b"\n"):
            self._line_start = stdout.line_ends.popleft() if stdout.line_ends else stdout.read
            self._fed = 0
        return self._seen(out)

    def end_of_output(self, now_ms: float) -> Actions:
        early = self._due(final=True)
        if early.finished is not None:
            return early
        return early.extend(self._seen(self._inner.end_of_output(now_ms)))

    def cancel(self, now_ms: float) -> Actions:
        return self._seen(self._inner.cancel(now_ms))

    def tick(self, now_ms: float) -> Actions:
        return self._seen(self._inner.tick(now_ms))


def _def_for(header: RecordingHeader, defn: AgentDef | None) -> AgentDef | None:
    """The def whose fields configure the session: ``defn``, else the built-in named by the
    header, seen through the recorded transport; ``None`` when its format differs."""
    candidate = defn if defn is not None else BUILTIN_REGISTRY.get(header.agent)
    if candidate is None:
        return None
    try:
        chosen = select_transport(candidate, name=header.transport)
    except HarnessError:
        chosen = candidate
    return chosen if chosen.stream_format == header.stream_format else None


def _replay_two_way(
    source: _Input,
    cutter: _Cuts,
    pacer: _Pacer,
    result: ReplayResult,
    events: _Events,
    *,
    bytewise: bool,
    defn: AgentDef | None,
) -> None:
    header = source.header
    adapter = adapter_for(header.stream_format)
    stdin = source.stdin
    host_frames: list[Any] | None = None
    request: SessionRequest | None = None
    origin = "synthesized"
    if stdin.strip():
        try:
            host_frames = parse_host_input(stdin)
        except HostInputError as exc:
            result.findings.append(
                Finding("REPLAY-FRAMES-001", "fail", f"the recorded stdin is unusable: {exc}")
            )
        if host_frames is not None:
            try:
                request = adapter.host_request(host_frames)
                origin = "host-input"
            except HostInputError:
                # A run stopped before the host sent its prompt (killed in the handshake):
                # the request is synthesized, and the frames that were sent still compare.
                request = None
    if request is None:
        # The handshake, read in bounded memory (PARSE-MEMORY-001), as harness parse does.
        request = adapter.synthesize_request(capture_values(d for d, _ in source.stdout()))
    stdout = _Stdout(source.stdout(), pacer, cutter, lines=True)
    session = _Rechunked(
        adapter.create_session(_def_for(header, defn), host_frames),
        stdout,
        cutter,
        pacer,
        bytewise=bytewise,
    )
    plan = CancelPlan.from_steps(source.steps, source.exit.duration_ms)
    if plan is not None:
        session.canceller = stdout.canceller = Canceller(plan, pacer.wait_until)
        result.canceller = session.canceller
    capture = replay_capture(
        session,
        request,
        stdout,
        adapter,
        host_frames=host_frames,
        request_source=origin,
        on_event=events.add,
    )
    result.capture = capture
    result.frames.extend(capture.frames)
    result.status = capture.status
    result.error = capture.error
    result.comparison = capture.comparison
    if capture.comparison is not None:
        comparison = capture.comparison
        if comparison.ok:
            message = (
                f"{_count(comparison.sent, 'frame')} sent, matching the "
                f"{comparison.recorded} recorded"
            )
            result.findings.append(Finding("REPLAY-FRAMES-001", "pass", message))
        else:
            details = "; ".join(d.describe() for d in comparison.differences[:3])
            more = len(comparison.differences) - 3
            if more > 0:
                details += f"; and {more} more"
            result.findings.append(Finding("REPLAY-FRAMES-001", "fail", details))
    elif host_frames is None and not stdin.strip():
        result.findings.append(
            Finding("REPLAY-FRAMES-001", "skipped", "the recording holds no stdin to compare")
        )
    if plan is not None:
        result.findings.append(_cancel_frames_finding(source, session, capture, adapter))
        result.findings.append(
            _cancel_end_finding(result, session.finishes, session.events_after_finish)
        )


def _cancel_frames_finding(
    source: _Input, session: _Rechunked, capture: CaptureReplay, adapter: ReplayAdapter
) -> Finding:
    """REPLAY-CANCEL-FRAMES-001: from the cancel on, the session sends what the recorded
    host sent after its cancel step, in order (ids, paths and timestamps aside)."""
    rule = "REPLAY-CANCEL-FRAMES-001"
    canceller = session.canceller
    assert canceller is not None
    if not canceller.sent:
        return Finding(rule, "skipped", "the session finished before the cancel: none was sent")
    try:
        recorded = parse_host_input(source.stdin_after_cancel)
    except HostInputError as exc:
        return Finding(rule, "fail", f"the recorded stdin after the cancel is unusable: {exc}")
    sent = capture.frames[canceller.frames_before :]
    expected = [adapter.normalize_frame(f) for f in recorded]
    actual = [adapter.normalize_frame(f) for f in sent]
    for index, (left, right) in enumerate(zip(expected, actual, strict=False)):
        if left != right:
            return Finding(
                rule,
                "fail",
                f"frame {index} after the cancel: recorded {_short(left)}; sent {_short(right)}",
            )
    if len(expected) != len(actual):
        extra = expected[len(actual) :] or actual[len(expected) :]
        side = "recorded but not sent" if len(expected) > len(actual) else "sent but not recorded"
        return Finding(
            rule,
            "fail",
            f"{len(expected)} frame(s) recorded after the cancel, {len(actual)} sent; "
            f"{side}: {_short(extra[0])}",
        )
    return Finding(rule, "pass", f"{_count(len(actual), 'frame')} after the cancel, as recorded")


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    return text if len(text) <= 160 else text[:159] + "…"


def _cancel_end_finding(result: ReplayResult, finishes: int, after: int) -> Finding:
    """REPLAY-CANCEL-STATUS-001: ``cancelled``, one terminal, nothing after it."""
    problems: list[str] = []
    if finishes != 1:
        problems.append(f"the session finished {finishes} times")
    if after:
        problems.append(f"{_count(after, 'event')} published after the terminal one")
    session_status = result.status.value if result.status else "unfinished"
    result.status = RunStatus.CANCELLED
    if problems:
        return Finding("REPLAY-CANCEL-STATUS-001", "fail", "; ".join(problems))
    return Finding(
        "REPLAY-CANCEL-STATUS-001",
        "pass",
        f"cancelled; the session finished once ({session_status}), nothing after it",
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


# -- the entry point -----------------------------------------------------------------------------


def _status_finding(result: ReplayResult, expect: Expectation | None) -> Finding:
    status = result.status.value if result.status else "unfinished"
    error = result.error
    reason = f" ({error.code}: {error.message})" if error is not None else ""
    if expect is None:
        ok = status in (RunStatus.COMPLETED.value, RunStatus.CANCELLED.value)
        return Finding("REPLAY-STATUS-001", "pass" if ok else "fail", f"{status}{reason}")
    problems: list[str] = []
    if status != expect.status:
        problems.append(f"ended {status}{reason}, expected {expect.status}")
    if expect.error_code is not None and (error is None or error.code != expect.error_code):
        problems.append(
            f"error code {error.code if error else None!r}, expected {expect.error_code!r}"
        )
    if expect.error_rule is not None and (error is None or error.rule != expect.error_rule):
        problems.append(
            f"error rule {error.rule if error else None!r}, expected {expect.error_rule!r}"
        )
    if problems:
        return Finding("REPLAY-STATUS-001", "fail", "; ".join(problems))
    return Finding("REPLAY-STATUS-001", "pass", f"{status}{reason}, as expected")


def replay_recording(
    recording: Recording | RecordingScan,
    *,
    chunking: str = "recorded",
    seed: int = 0,
    timing: bool = False,
    clock: Clock | None = None,
    defn: AgentDef | None = None,
    paths: Mapping[str, str] | None = None,
    on_event: Callable[[Event], None] | None = None,
    platforms: Sequence[str] = (),
    bin_path: str | None = None,
) -> ReplayResult:
    """Feed ``recording`` through its format's parser or session and judge the result.

    ``recording`` is a parsed :class:`~harness.recording.record.Recording`, or a
    :class:`~harness.recording.record.RecordingScan` whose stdout is read from its file as it is fed
    (``harness replay``: memory does not grow with the file). ``on_event`` takes each event
    as it comes; the result then keeps only :attr:`ReplayResult.event_count` and what the
    verdicts read, not the events. ``defn`` configures a two-way session (default: the
    built-in def the header names); ``paths`` restores placeholders (default
    :data:`REPLAY_PATHS`). ``platforms`` (``linux``, ``darwin``, ``win32``) re-runs the
    prompt-budget guards on the recorded argv for each, with ``bin_path`` as the launched
    binary when given (REPLAY-BUDGET-001). Raises :class:`~harness.errors.HarnessError`
    for an unknown chunking mode or a stream format the engine cannot replay, before any
    event.
    """
    if chunking not in CHUNKING_MODES:
        raise HarnessError(f"unknown chunking {chunking!r}; one of {', '.join(CHUNKING_MODES)}")
    if isinstance(recording, RecordingScan):
        source = _from_scan(recording, paths)
    else:
        source = _from_recording(recording, paths)
    header = source.header
    result = ReplayResult(header, source.source, chunking, exit=source.exit)
    if timing:
        _check_times(source)
    events = _Events(result, on_event)
    cutter = _cutter(chunking, random.Random(seed))
    pacer = _Pacer((clock or SystemClock()) if timing else None)
    if is_two_way(header.stream_format):
        _replay_two_way(source, cutter, pacer, result, events, bytewise=chunking == "1", defn=defn)
    else:
        _replay_one_way(source, cutter, pacer, result, events)
    if platforms:
        result.findings.extend(_budget_findings(result, header, defn, platforms, bin_path))
    if source.steps:
        result.findings.append(_ladder_finding(source.steps))
        if result.canceller is not None:
            result.findings.append(_timing_finding(result.canceller, timing))
    result.findings.insert(0, _status_finding(result, header.expect))
    return result


def _budget_findings(
    result: ReplayResult,
    header: RecordingHeader,
    defn: AgentDef | None,
    platforms: Sequence[str],
    bin_path: str | None,
) -> list[Finding]:
    """REPLAY-BUDGET-001: each platform's verdict on spawning the recorded argv."""
    chosen = _def_for(header, defn)
    if chosen is None:
        why = f"no def {header.agent!r} speaking {header.stream_format} to judge the argv with"
        return [Finding("REPLAY-BUDGET-001", "skipped", why)]
    result.budget = budget_verdicts(chosen, header.argv, platforms=platforms, bin_path=bin_path)
    return [
        Finding("REPLAY-BUDGET-001", b.verdict, b.describe() + (f" [{b.rule}]" if b.rule else ""))
        for b in result.budget
    ]


def _ladder_finding(steps: Sequence[Step]) -> Finding:
    """REPLAY-CANCEL-LADDER-001: the recorded ladder's order and gaps."""
    problems = ladder_problems(steps)
    if problems:
        return Finding("REPLAY-CANCEL-LADDER-001", "fail", "; ".join(problems))
    return Finding("REPLAY-CANCEL-LADDER-001", "pass", describe_ladder(steps))


def _timing_finding(canceller: Canceller, timing: bool) -> Finding:
    """REPLAY-CANCEL-TIMING-001: with timing, a grace expires no earlier than recorded."""
    rule = "REPLAY-CANCEL-TIMING-001"
    if not canceller.ticks:
        return Finding(rule, "skipped", "no grace expired in the recording")
    if not timing:
        return Finding(rule, "skipped", "replayed without --timing")
    late = [t for t in canceller.ticks if t.delivered_ms is None or t.delivered_ms < t.recorded_ms]
    if late:
        tick = late[0]
        return Finding(
            rule,
            "fail",
            f"grace {tick.label!r} expired at {tick.delivered_ms} ms, before the recorded "
            f"{tick.recorded_ms} ms",
        )
    what = ", ".join(f"{t.label} at {t.recorded_ms:g} ms" for t in canceller.ticks)
    return Finding(rule, "pass", f"grace expired as recorded: {what}")
