"""Replaying a recording through the same parser or session a live run uses.

:func:`replay_recording` is the IO-free core of ``harness replay`` (design
§Recordings; the recording format is :mod:`harness.record`):

* **One-way formats** feed the recorded stdout to
  ``harness.streams.create_parser(stream_format, event_parser)``.
* **Two-way formats** drive the format's session with
  :func:`harness.capture.driver.replay_capture` (response ids matched, the request
  rebuilt from the recorded stdin by the format's adapter, frames compared after the
  adapter's normalizer drops ids, paths and timestamps). The recorded stdin is the
  host input; without one the adapter synthesizes the request and no frames are
  compared.
* **Chunking** (rule REPLAY-CHUNK-001): ``recorded`` feeds the recorded chunk
  boundaries, ``line`` one line at a time, ``1`` one byte at a time, ``random`` cuts
  drawn from ``random.Random(seed)``. The events never depend on the mode. For
  two-way formats the capture driver feeds one line per ``receive`` call (it rewrites
  response ids per line); :class:`_Rechunked` cuts each of those calls again at the
  boundaries the mode puts inside that line.
* **Timing** (rule REPLAY-TIMING-001): with ``timing=True`` each piece is delivered
  no earlier than the recorded offset of the chunk holding its last byte, measured
  from the start of the replay by an injectable :class:`Clock` (tests pass a fake;
  nothing else here sleeps). Sessions still get ``now_ms=0`` (the driver's "timeless"
  rule), so the events do not depend on timing either.
* **Paths**: a recording that still holds placeholders is restored first
  (:func:`harness.record.restore_paths`) with ``paths`` or :data:`REPLAY_PATHS`.

The result carries rule findings (:class:`Finding`): REPLAY-STATUS-001 (the run ends
as the header's ``expect`` says, else completed or cancelled; a two-way run's status
is its session's, a one-way stream's own verdict is ``failed`` when it published an
``error`` event, ref §1.2, whatever the exit code, which is reported beside it) and,
for two-way formats, REPLAY-FRAMES-001 (the session sent what the recorded stdin
holds; ``skipped`` when the recording has no stdin).
"""

from __future__ import annotations

import bisect
import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.capture.adapters import adapter_for
from harness.capture.driver import (
    CaptureReplay,
    FrameComparison,
    HostInputError,
    parse_host_input,
    replay_capture,
    split_capture,
)
from harness.defs.types import AgentDef
from harness.errors import HarnessError
from harness.events import Error, Event
from harness.protocols.base import (
    Actions,
    RunStatus,
    SessionError,
    SessionRequest,
    SessionState,
    TwoWaySession,
)
from harness.record import (
    Direction,
    ExitInfo,
    Recording,
    RecordingError,
    RecordingHeader,
    restore_paths,
)
from harness.streams import TWO_WAY_FORMATS, UnknownStreamFormatError, create_parser

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
    events: list[Event] = field(default_factory=list)
    #: Frames the session sent (two-way formats), parsed as JSON.
    frames: list[Any] = field(default_factory=list)
    status: RunStatus | None = None
    error: SessionError | None = None
    exit: ExitInfo | None = None
    findings: list[Finding] = field(default_factory=list)
    comparison: FrameComparison | None = None
    #: The capture driver's full report (two-way formats).
    capture: CaptureReplay | None = None

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
            "events": len(self.events),
            "frames_sent": len(self.frames),
            # Two-way: stdout lines after the session finished (a later turn), not replayed.
            "remaining_lines": len(self.capture.remaining_lines) if self.capture else 0,
            "exit": self.exit.to_json()["exit"] if self.exit else None,
            "findings": [f.to_json() for f in self.findings],
            "comparison": self.comparison.to_json() if self.comparison else None,
        }


# -- chunk plans ---------------------------------------------------------------------------------


def chunk_cuts(
    mode: str, data: bytes, recorded_ends: Sequence[int], rng: random.Random
) -> list[int]:
    """Sorted cut offsets (``0 < cut < len(data)``) for feeding ``data`` in ``mode``."""
    size = len(data)
    if mode == "recorded":
        return sorted({e for e in recorded_ends if 0 < e < size})
    if mode == "line":
        cuts: list[int] = []
        at = data.find(b"\n")
        while 0 <= at < size - 1:
            cuts.append(at + 1)
            at = data.find(b"\n", at + 1)
        return cuts
    if mode == "1":
        return list(range(1, size))
    if mode == "random":
        cuts = []
        at = rng.randint(1, _RANDOM_MAX)
        while at < size:
            cuts.append(at)
            at += rng.randint(1, _RANDOM_MAX)
        return cuts
    raise HarnessError(f"unknown chunking {mode!r}; one of {', '.join(CHUNKING_MODES)}")


def _pieces(data: bytes, cuts: Sequence[int]) -> list[tuple[int, bytes]]:
    """``(end offset, piece)`` for ``data`` cut at ``cuts``."""
    out: list[tuple[int, bytes]] = []
    prev = 0
    for cut in [*cuts, len(data)]:
        if cut > prev:
            out.append((cut, data[prev:cut]))
            prev = cut
    return out


def _check_times(recording: Recording) -> None:
    """Refuse a time offset ``--timing`` cannot wait for: not finite, or after the recorded
    exit (CLIERR-TIMING-001). Chunk ``i`` is on line ``i + 2`` (the header is line 1)."""
    limit = recording.exit.duration_ms if recording.exit is not None else None
    for index, chunk in enumerate(recording.chunks):
        t_ms = chunk.t_ms
        if math.isfinite(t_ms) and (limit is None or t_ms <= limit):
            continue
        problem = f"'t' must be a finite number of ms, got {t_ms!r}"
        if math.isfinite(t_ms):
            problem = f"'t' is {t_ms!r} ms, after the recorded exit at {limit!r} ms"
        raise RecordingError(
            recording.source or "recording", index + 2, f"{problem}; --timing cannot wait for it"
        )


class _Pacer:
    """Delivers stream offsets no earlier than their recorded time (REPLAY-TIMING-001)."""

    def __init__(self, ends: Sequence[int], times: Sequence[float], clock: Clock | None) -> None:
        self._ends = list(ends)
        self._times = list(times)
        self._clock = clock
        self._origin = clock.now_ms() if clock is not None else 0.0

    def wait_for(self, end_offset: int) -> None:
        """Wait until the byte before ``end_offset`` had arrived in the recording."""
        if self._clock is None or end_offset <= 0 or not self._ends:
            return
        index = min(bisect.bisect_left(self._ends, end_offset), len(self._ends) - 1)
        due = self._times[index] - (self._clock.now_ms() - self._origin)
        if due > 0:
            self._clock.sleep_ms(due)


# -- one-way formats -----------------------------------------------------------------------------


def _replay_one_way(
    recording: Recording, data: bytes, cuts: Sequence[int], pacer: _Pacer, result: ReplayResult
) -> None:
    header = recording.header
    try:
        parser = create_parser(header.stream_format, header.event_parser)
    except UnknownStreamFormatError as exc:
        raise HarnessError(f"{recording.source or 'recording'}: {exc}") from exc
    for end, piece in _pieces(data, cuts):
        pacer.wait_for(end)
        result.events.extend(parser.feed(piece))
    result.events.extend(parser.finish())
    # ref §1.2: an in-stream error event flips the run to failed.
    errors = [e for e in result.events if isinstance(e, Error)]
    result.status = RunStatus.FAILED if errors else RunStatus.COMPLETED
    if errors:
        first = errors[0]
        result.error = SessionError(code=first.code or "STREAM_ERROR", message=first.message)


# -- two-way formats -----------------------------------------------------------------------------


class _Rechunked:
    """A session whose ``receive`` calls are cut again at the replay's chunk boundaries.

    The capture driver calls ``receive`` once per captured stdout line, in order (its
    ``chunk_size`` is left unset). Call ``k`` is line ``k`` of the recorded stdout;
    the pieces of that call are cut where the chunking mode cuts inside the line
    (offsets past the fed text, which may be shorter or longer after a response id was
    rewritten, are dropped). Everything else is passed through unchanged.
    """

    def __init__(
        self,
        inner: TwoWaySession,
        data: bytes,
        cuts: Sequence[int],
        pacer: _Pacer,
        *,
        bytewise: bool,
    ) -> None:
        self._inner = inner
        self._pacer = pacer
        self._bytewise = bytewise
        self._lines: list[tuple[int, int]] = []
        start = 0
        while start < len(data):
            newline = data.find(b"\n", start)
            end = len(data) if newline < 0 else newline + 1
            self._lines.append((start, end))
            start = end
        self._cuts = list(cuts)
        self._calls = 0

    @property
    def state(self) -> SessionState:
        return self._inner.state

    @property
    def session_id(self) -> str | None:
        return self._inner.session_id

    @property
    def counters(self) -> Mapping[str, int]:
        return self._inner.counters

    def start(self, request: SessionRequest, now_ms: float) -> Actions:
        return self._inner.start(request, now_ms)

    def receive(self, data: bytes, now_ms: float) -> Actions:
        index = self._calls
        self._calls += 1
        if index < len(self._lines):
            line_start, line_end = self._lines[index]
        else:  # more calls than lines: deliver as given
            line_start = line_end = self._lines[-1][1] if self._lines else 0
        if self._bytewise:
            relative = list(range(1, len(data)))
        else:
            lo = bisect.bisect_right(self._cuts, line_start)
            hi = bisect.bisect_left(self._cuts, line_end)
            relative = [c - line_start for c in self._cuts[lo:hi] if c - line_start < len(data)]
        out = Actions()
        for end, piece in _pieces(data, relative):
            self._pacer.wait_for(line_start + min(end, line_end - line_start))
            out.extend(self._inner.receive(piece, now_ms))
        return out

    def end_of_output(self, now_ms: float) -> Actions:
        return self._inner.end_of_output(now_ms)

    def cancel(self, now_ms: float) -> Actions:
        return self._inner.cancel(now_ms)

    def tick(self, now_ms: float) -> Actions:
        return self._inner.tick(now_ms)


def _def_for(header: RecordingHeader, defn: AgentDef | None) -> AgentDef | None:
    """The def whose fields configure the session: ``defn``, else the built-in named by the
    header, seen through the recorded transport; ``None`` when its format differs."""
    from harness.defs.registry import BUILTIN_REGISTRY
    from harness.defs.transport import select_transport

    candidate = defn if defn is not None else BUILTIN_REGISTRY.get(header.agent)
    if candidate is None:
        return None
    try:
        chosen = select_transport(candidate, name=header.transport)
    except HarnessError:
        chosen = candidate
    return chosen if chosen.stream_format == header.stream_format else None


def _replay_two_way(
    recording: Recording,
    data: bytes,
    cuts: Sequence[int],
    pacer: _Pacer,
    result: ReplayResult,
    *,
    bytewise: bool,
    defn: AgentDef | None,
) -> None:
    header = recording.header
    adapter = adapter_for(header.stream_format)
    stdin = recording.stream(Direction.STDIN)
    host_frames: list[Any] | None = None
    request: SessionRequest | None = None
    source = "synthesized"
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
                source = "host-input"
            except HostInputError:
                # A run stopped before the host sent its prompt (killed in the handshake):
                # the request is synthesized, and the frames that were sent still compare.
                request = None
    if request is None:
        request = adapter.synthesize_request([line.value for line in split_capture(data)])
    session = _Rechunked(
        adapter.create_session(_def_for(header, defn), host_frames),
        data,
        cuts,
        pacer,
        bytewise=bytewise,
    )
    capture = replay_capture(
        session, request, data, adapter, host_frames=host_frames, request_source=source
    )
    result.capture = capture
    result.events.extend(capture.events)
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


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


# -- the entry point -----------------------------------------------------------------------------


def _status_finding(result: ReplayResult, recording: Recording) -> Finding:
    expect = recording.header.expect
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
    recording: Recording,
    *,
    chunking: str = "recorded",
    seed: int = 0,
    timing: bool = False,
    clock: Clock | None = None,
    defn: AgentDef | None = None,
    paths: Mapping[str, str] | None = None,
) -> ReplayResult:
    """Feed ``recording`` through its format's parser or session and judge the result.

    ``defn`` configures a two-way session (default: the built-in def the header names);
    ``paths`` restores placeholders (default :data:`REPLAY_PATHS`). Raises
    :class:`~harness.errors.HarnessError` for an unknown chunking mode or a stream
    format the engine cannot replay.
    """
    if chunking not in CHUNKING_MODES:
        raise HarnessError(f"unknown chunking {chunking!r}; one of {', '.join(CHUNKING_MODES)}")
    if recording.placeholders:
        where = dict(REPLAY_PATHS)
        where.update(paths or {})
        recording = restore_paths(recording, cwd=where["cwd"], home=where["home"], tmp=where["tmp"])
    header = recording.header
    result = ReplayResult(header, recording.source, chunking, exit=recording.exit)
    stdout = recording.chunks_of(Direction.STDOUT)
    data = b"".join(c.data for c in stdout)
    ends: list[int] = []
    offset = 0
    for chunk in stdout:
        offset += len(chunk.data)
        ends.append(offset)
    cuts = chunk_cuts(chunking, data, ends, random.Random(seed))
    if timing:
        _check_times(recording)
    pacer = _Pacer(ends, [c.t_ms for c in stdout], (clock or SystemClock()) if timing else None)
    two_way = header.stream_format in TWO_WAY_FORMATS
    if two_way:
        _replay_two_way(recording, data, cuts, pacer, result, bytewise=chunking == "1", defn=defn)
    else:
        _replay_one_way(recording, data, cuts, pacer, result)
    result.findings.insert(0, _status_finding(result, recording))
    return result
