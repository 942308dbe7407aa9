"""Drive a two-way session against a captured CLI stdout, as if the CLI were live.

Rules: CAPTURE-FAIL-001, DSH-RESULT-ONCE-001, PARSE-MEMORY-001, RECORD-LADDER-001.
Design: docs/design/capture.md#harness.capture.driver
"""

from __future__ import annotations

import codecs
import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.errors import HarnessError
from harness.events import Error, Event
from harness.protocols.base import (
    Actions,
    Control,
    Finished,
    RunStatus,
    SessionError,
    SessionRequest,
    TwoWaySession,
)
from harness.streams.base import js_trim
from harness.streams.decoder import Line, LineDecoder

__all__ = [
    "HELD_LINE_BYTES",
    "MISSING",
    "NOT_JSON",
    "VALUES_PER_KIND",
    "CaptureError",
    "CaptureLine",
    "CaptureReplay",
    "CapturedResponse",
    "FrameComparison",
    "FrameDifference",
    "HostInputError",
    "IdRewrite",
    "PendingRequest",
    "ReplayAdapter",
    "capture_values",
    "compare_frames",
    "id_key",
    "normalize_frame_values",
    "parse_host_input",
    "replay_capture",
    "split_capture",
]

#: A JSON-RPC or pi request id as the wire carries it.
RequestId = int | str

#: A capture line longer than this streams through to the session instead of being held.
HELD_LINE_BYTES = 4 * 1024 * 1024
#: How many values of each kind :func:`capture_values` keeps.
VALUES_PER_KIND = 64


class CaptureError(HarnessError):
    """A capture or host input that cannot be replayed at all (bad input, not a failed run)."""

    code = "CAPTURE_INVALID"


class HostInputError(CaptureError):
    """The ``--host-input`` file is not what a client writes to the CLI's stdin."""

    code = "HOST_INPUT_INVALID"


class _Marker:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


#: :attr:`CaptureLine.value` of a line that is not one JSON value.
NOT_JSON: Any = _Marker("NOT_JSON")
#: A side of a :class:`FrameDifference` that has no frame at that index.
MISSING: Any = _Marker("MISSING")


# -- what the driver asks of a wire format ------------------------------------------------


@dataclass(frozen=True, slots=True)
class PendingRequest:
    """A frame the session wrote that awaits a response: its id and kind (method/command)."""

    id: RequestId
    kind: str


@dataclass(frozen=True, slots=True)
class CapturedResponse:
    """A captured line that answers a request: the id it carries (``None``: none) and,
    when the line itself says so, the kind of request it answers."""

    id: RequestId | None
    kind: str | None = None


class ReplayAdapter(Protocol):
    """The per-format knowledge the driver needs (implemented in ``adapters.py``)."""

    @property
    def stream_format(self) -> str: ...

    def pending_request(self, frame: Any) -> PendingRequest | None: ...

    def captured_response(self, value: Any) -> CapturedResponse | None: ...

    def with_response_id(self, value: dict[str, Any], new_id: RequestId) -> dict[str, Any]: ...

    def turn_starts(self, frames: Sequence[Any]) -> list[int]: ...

    def normalize_frame(self, frame: Any) -> Any: ...


def id_key(value: Any) -> str:
    """A request id as a dict key that keeps ``1``, ``"1"`` and ``true`` apart."""
    return json.dumps(value, sort_keys=True)


# -- the capture -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CaptureLine:
    """One captured stdout line (1-based ``number``), its text and its JSON value."""

    number: int
    text: str
    #: False for a final line the capture did not end with ``\\n``.
    terminated: bool
    #: ``json.loads`` of the trimmed text, or :data:`NOT_JSON`.
    value: Any


def _loads(text: str) -> Any:
    trimmed = js_trim(text)
    if not trimmed:
        return NOT_JSON
    try:
        return json.loads(trimmed)
    except (ValueError, RecursionError):
        return NOT_JSON


def split_capture(data: bytes) -> list[CaptureLine]:
    """The capture as lines, by the shared decoder's framing (CAPTURE-FRAMING-001)."""
    # No cap: an oversize line must reach the session whole, to meet *its* limit.
    decoder = LineDecoder(max_line_bytes=len(data) + 1)
    items = [*decoder.feed(data), *decoder.finish()]
    lines: list[CaptureLine] = []
    for number, item in enumerate(items, start=1):
        assert isinstance(item, Line)  # nothing is longer than the whole capture
        lines.append(CaptureLine(number, item.text, not item.unterminated, _loads(item.text)))
    return lines


def _kind(value: Any) -> str:
    if not isinstance(value, dict):
        return "non-object"
    if isinstance(value.get("method"), str):
        return f"method {value['method']}"
    if isinstance(value.get("type"), str):
        return f"type {value['type']}"
    return "id" if "id" in value else "object"


def capture_values(chunks: Iterable[bytes], per_kind: int = VALUES_PER_KIND) -> list[Any]:
    """The JSON values of a capture read in chunks, in order, keeping the first ``per_kind``
    of each kind (a ``method``, a ``type``, a response, other): what
    :meth:`ReplayAdapter.synthesize_request` reads (the handshake) in bounded memory.
    Lines that are not JSON, and lines over :data:`HELD_LINE_BYTES`, are left out."""
    decoder = LineDecoder(max_line_bytes=HELD_LINE_BYTES)
    counts: dict[str, int] = {}
    values: list[Any] = []

    def take(items: Iterable[Any]) -> None:
        for item in items:
            if not isinstance(item, Line):
                continue
            value = _loads(item.text)
            if value is NOT_JSON:
                continue
            kind = _kind(value)
            seen = counts.get(kind, 0)
            if seen < per_kind:
                counts[kind] = seen + 1
                values.append(value)

    for chunk in chunks:
        take(decoder.feed(chunk))
    take(decoder.finish())
    return values


def parse_host_input(data: bytes) -> list[Any]:
    """What the recorded client wrote to stdin: one JSON value per non-blank line.

    Raises :class:`HostInputError` naming the first line that is not JSON.
    """
    frames: list[Any] = []
    for line in split_capture(data):
        if not js_trim(line.text):
            continue
        if line.value is NOT_JSON:
            raise HostInputError(
                f"host input line {line.number} is not a JSON value: {line.text[:80]!r}",
                rule="CAPTURE-HOSTINPUT-001",
            )
        frames.append(line.value)
    return frames


# -- frame comparison --------------------------------------------------------------------

_ISO_TIMESTAMP = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?$"
)
_TIMESTAMP_KEY = re.compile(
    r"^(?:timestamp|ts|time|date)$|_(?:at|ts|timestamp)$|[a-z](?:At|Timestamp)$"
)
_PATH_KEYS = frozenset({"cwd", "path", "file_path", "filePath", "parentSession", "sessionPath"})
_ABSOLUTE_PATH = re.compile(r"^(?:/|~/|[A-Za-z]:[\\/]|\\\\|file:/)\S*$")


def _looks_like_path(value: str) -> bool:
    return bool(_ABSOLUTE_PATH.match(value))


def normalize_frame_values(
    value: Any,
    *,
    drop_top_level: Sequence[str] = (),
    placeholders: Mapping[str, str] | None = None,
) -> Any:
    """``value`` with what legitimately differs between two clients replaced.

    Top-level keys in ``drop_top_level`` (JSON-RPC / pi ``id``) are removed;
    keys in ``placeholders`` get that placeholder (dsh ``request_id``);
    timestamps (keys such as ``timestamp``/``createdAt``, ISO-8601 strings)
    become ``"{timestamp}"``; paths (``cwd`` and similar keys, and any string
    that looks like an absolute path or a ``file:`` URI) become ``"{path}"``.
    Everything else is kept, so a real difference stays visible.
    """
    marks = dict(placeholders or {})

    def walk(node: Any, key: str | None) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, k) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(item, None) for item in node]
        if key is not None and key in marks:
            return marks[key]
        if key is not None and _TIMESTAMP_KEY.search(key) and isinstance(node, (int, float, str)):
            return "{timestamp}"
        if isinstance(node, str):
            if _ISO_TIMESTAMP.match(node):
                return "{timestamp}"
            if (key in _PATH_KEYS and node) or _looks_like_path(node):
                return "{path}"
        return node

    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k not in drop_top_level}
    return walk(value, None)


def _diff_paths(expected: Any, actual: Any, path: str, out: list[str], limit: int) -> None:
    if len(out) >= limit:
        return
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in [*expected, *(k for k in actual if k not in expected)]:
            sub = f"{path}.{key}"
            if key not in actual or key not in expected:
                out.append(sub)
            else:
                _diff_paths(expected[key], actual[key], sub, out, limit)
            if len(out) >= limit:
                return
        return
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for index, (left, right) in enumerate(zip(expected, actual, strict=True)):
            _diff_paths(left, right, f"{path}[{index}]", out, limit)
        return
    if expected != actual or type(expected) is not type(actual):
        out.append(path)


def _excerpt(value: Any, limit: int = 240) -> str:
    if value is MISSING:
        return "(none)"
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class FrameDifference:
    """One place where the session's frames and the recorded client's differ.

    ``index`` is the recorded frame's position and ``sent_index`` the session
    frame's; one of them is ``None`` (and that side :data:`MISSING`) when a
    frame has no counterpart. ``expected``/``actual`` are normalized frames.
    """

    index: int | None
    sent_index: int | None
    expected: Any
    actual: Any
    #: JSON paths (``$.params.cwd``) where the two differ; ``("$",)`` for a missing frame.
    paths: tuple[str, ...]

    def describe(self) -> str:
        if self.sent_index is None:
            return f"recorded frame {self.index} was not sent: {_excerpt(self.expected)}"
        if self.index is None:
            return f"sent frame {self.sent_index} was not recorded: {_excerpt(self.actual)}"
        where = ", ".join(self.paths)
        position = (
            f"frame {self.index}"
            if self.index == self.sent_index
            else f"recorded frame {self.index} / sent frame {self.sent_index}"
        )
        return (
            f"{position} differs at {where}: recorded {_excerpt(self.expected)}; "
            f"sent {_excerpt(self.actual)}"
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "sent_index": self.sent_index,
            "paths": list(self.paths),
        }
        if self.expected is not MISSING:
            out["expected"] = self.expected
        if self.actual is not MISSING:
            out["actual"] = self.actual
        return out


@dataclass(frozen=True, slots=True)
class FrameComparison:
    """The session's frames against the recorded client's first turn (CAPTURE-FRAMES-001)."""

    #: How many recorded frames belong to the first turn (the ones compared).
    recorded: int
    sent: int
    differences: tuple[FrameDifference, ...]
    #: Recorded frames from the recorded client's second turn on (counted, not compared).
    after_first_turn: int

    @property
    def ok(self) -> bool:
        return not self.differences

    def to_json(self) -> dict[str, Any]:
        return {
            "recorded": self.recorded,
            "sent": self.sent,
            "after_first_turn": self.after_first_turn,
            "differences": [d.to_json() for d in self.differences],
        }


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


def compare_frames(
    recorded: Sequence[Any], sent: Sequence[Any], adapter: ReplayAdapter, *, max_paths: int = 8
) -> FrameComparison:
    """Compare the frames after :meth:`ReplayAdapter.normalize_frame` (CAPTURE-FRAMES-001).

    Only the recorded client's first turn is compared: recorded frames from its
    second turn start (:meth:`ReplayAdapter.turn_starts`) on are counted. The
    two sequences are aligned (``difflib``), so one extra or missing frame is
    reported once instead of shifting every later frame; aligned frames that
    differ are reported with the JSON paths that differ.
    """
    starts = adapter.turn_starts(recorded)
    cut = starts[1] if len(starts) > 1 else len(recorded)
    expected = [adapter.normalize_frame(f) for f in recorded[:cut]]
    actual = [adapter.normalize_frame(f) for f in sent]
    matcher = difflib.SequenceMatcher(
        None, [_canonical(f) for f in expected], [_canonical(f) for f in actual], autojunk=False
    )
    differences: list[FrameDifference] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1)
        for offset in range(paired):
            left, right = expected[i1 + offset], actual[j1 + offset]
            paths: list[str] = []
            _diff_paths(left, right, "$", paths, max_paths)
            differences.append(
                FrameDifference(i1 + offset, j1 + offset, left, right, tuple(paths or ["$"]))
            )
        for index in range(i1 + paired, i2):
            differences.append(FrameDifference(index, None, expected[index], MISSING, ("$",)))
        for index in range(j1 + paired, j2):
            differences.append(FrameDifference(None, index, MISSING, actual[index], ("$",)))
    return FrameComparison(
        recorded=len(expected),
        sent=len(actual),
        differences=tuple(differences),
        after_first_turn=len(recorded) - cut,
    )


# -- the replay ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IdRewrite:
    """A captured response fed to the session under another id (CAPTURE-IDORDER-001)."""

    #: 1-based capture line.
    line: int
    #: The id as captured (``None``: the response carried none).
    recorded: RequestId | None
    #: The id the session saw.
    replayed: RequestId
    #: The kind of the session request it was matched to (or the response's own kind).
    kind: str | None
    #: ``order`` (oldest outstanding), ``kind`` (oldest outstanding of that kind), or
    #: ``unmatched`` (answers nothing the session asked; moved off a colliding id).
    reason: str

    def describe(self) -> str:
        how = {
            "order": "matched by order",
            "kind": "matched by kind",
            "unmatched": "answers no request of the session",
        }[self.reason]
        what = f"{self.kind}, " if self.kind else ""
        return (
            f"line {self.line}: response id {json.dumps(self.recorded)} -> "
            f"{json.dumps(self.replayed)} ({what}{how})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "recorded": self.recorded,
            "replayed": self.replayed,
            "kind": self.kind,
            "reason": self.reason,
        }


@dataclass
class CaptureReplay:
    """What the session did with one capture."""

    stream_format: str
    request: SessionRequest
    #: ``host-input`` or ``synthesized`` (how :attr:`request` was made).
    request_source: str
    events: list[Event] = field(default_factory=list)
    #: Every frame the session wrote, parsed as JSON (a frame that is not JSON: its text).
    frames: list[Any] = field(default_factory=list)
    controls: list[Control] = field(default_factory=list)
    finished: Finished | None = None
    #: Capture lines fed to the session up to its finish (blank ones included).
    lines_consumed: int = 0
    #: Non-blank capture lines after the session finished (a later turn or run); they are
    #: fed to the session too, as a live run feeds them.
    remaining_lines: tuple[str, ...] = ()
    #: The first error event the session published after it finished (for the lines
    #: after the finish, or at the end of output): a live run with it fails.
    late_error: Error | None = None
    id_rewrites: tuple[IdRewrite, ...] = ()
    comparison: FrameComparison | None = None

    @property
    def status(self) -> RunStatus | None:
        return self.finished.status if self.finished else None

    @property
    def error(self) -> SessionError | None:
        return self.finished.error if self.finished else None

    @property
    def ok(self) -> bool:
        """The run completed (or was cancelled), nothing after its finish was an error, and
        no frame comparison found a difference."""
        completed = self.status in (RunStatus.COMPLETED, RunStatus.CANCELLED)
        if not completed or self.late_error is not None:
            return False
        return self.comparison is None or self.comparison.ok

    def summary_json(self) -> dict[str, Any]:
        request = self.request
        return {
            "format": self.stream_format,
            "status": self.status.value if self.status else None,
            "error": self.error.to_json() if self.error else None,
            "request": {
                "source": self.request_source,
                "cwd": request.cwd,
                "request_id": request.request_id,
                "model": request.model,
                "reasoning": request.reasoning,
                "resume_session_id": request.resume_session_id,
            },
            "lines_consumed": self.lines_consumed,
            "remaining_lines": len(self.remaining_lines),
            "late_error": self.late_error.to_json() if self.late_error else None,
            "frames_sent": len(self.frames),
            "id_rewrites": [r.to_json() for r in self.id_rewrites],
            "comparison": self.comparison.to_json() if self.comparison else None,
        }


def _dumps(value: Any) -> str:
    """Compact JSON; ``\\uXXXX`` escapes when a lone surrogate (from the capture) is present."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text


def _parse_frame(frame: bytes) -> Any:
    text = frame.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text.rstrip("\n")


class _Matcher:
    """Outstanding session requests, and the id each captured response is fed under."""

    def __init__(self, adapter: ReplayAdapter, recorded_kinds: Mapping[str, str]) -> None:
        self._adapter = adapter
        self._recorded_kinds = recorded_kinds
        #: id_key -> request, in the order the session wrote them (dicts keep order).
        self._outstanding: dict[str, PendingRequest] = {}
        self.rewrites: list[IdRewrite] = []

    def sent(self, frame: Any) -> None:
        pending = self._adapter.pending_request(frame)
        if pending is not None:
            self._outstanding[id_key(pending.id)] = pending

    def replayed_id(self, response: CapturedResponse, line: int) -> RequestId | None:
        """The id to feed ``response`` under, or ``None`` to feed it unchanged."""
        key = id_key(response.id) if response.id is not None else None
        kind = response.kind
        if kind is None and key is not None:
            kind = self._recorded_kinds.get(key)
        current = self._outstanding.get(key) if key is not None else None
        if current is not None and (kind is None or current.kind == kind):
            del self._outstanding[id_key(current.id)]
            return None
        for pending in self._outstanding.values():
            if kind is None or pending.kind == kind:
                del self._outstanding[id_key(pending.id)]
                reason = "order" if kind is None else "kind"
                self.rewrites.append(IdRewrite(line, response.id, pending.id, pending.kind, reason))
                return pending.id
        if current is not None:
            # The id is one of ours but answers another kind of request: keep it away.
            free = f"capture-line-{line}"
            self.rewrites.append(IdRewrite(line, response.id, free, kind, "unmatched"))
            return free
        return None


class _LongLine:
    """A line past :data:`HELD_LINE_BYTES`, streamed: decoded as it comes (U+FFFD for bad
    bytes, as a whole-line decode would), one trailing CR held back (the framing strips it)."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._cr = False
        #: The line's first bytes, decoded (what a remaining line is reported as).
        self.head = ""

    def piece(self, data: bytes) -> bytes:
        if self._cr:
            data = b"\r" + data
        self._cr = data.endswith(b"\r")
        if self._cr:
            data = data[:-1]
        text = self._decoder.decode(data)
        if len(self.head) < 80:
            self.head += text[: 80 - len(self.head)]
        return text.encode("utf-8")

    def end(self) -> bytes:
        return self._decoder.decode(b"", final=True).encode("utf-8")


def replay_capture(
    session: TwoWaySession,
    request: SessionRequest,
    cli_output: bytes | Iterable[bytes],
    adapter: ReplayAdapter,
    *,
    host_frames: Sequence[Any] | None = None,
    chunk_size: int | None = None,
    request_source: str = "synthesized",
    on_event: Callable[[Event], None] | None = None,
) -> CaptureReplay:
    """Run ``session`` against ``cli_output`` (what the CLI wrote) and report what it did.

    ``cli_output`` is the capture, whole or as chunks in order. ``host_frames`` (what the
    recorded client wrote to stdin, parsed) enables kind-aware id matching and the frame
    comparison. ``on_event`` receives the events as they come; they are then not kept on
    the result. Raises only what ``session.start`` raises for a request it cannot send (a
    typed :class:`~harness.errors.HarnessError`).
    """
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size!r}")
    recorded_kinds: dict[str, str] = {}
    for frame in host_frames or ():
        pending = adapter.pending_request(frame)
        if pending is not None:
            recorded_kinds.setdefault(id_key(pending.id), pending.kind)
    matcher = _Matcher(adapter, recorded_kinds)
    result = CaptureReplay(adapter.stream_format, request, request_source)
    now = 0.0

    def absorb(actions: Actions) -> None:
        if result.finished is not None and result.late_error is None:
            result.late_error = next((e for e in actions.events if isinstance(e, Error)), None)
        if on_event is None:
            result.events.extend(actions.events)
        else:
            for event in actions.events:
                on_event(event)
        result.controls.extend(actions.controls)
        for frame in actions.frames:
            parsed = _parse_frame(frame)
            result.frames.append(parsed)
            matcher.sent(parsed)
        if result.finished is None and actions.finished is not None:
            result.finished = actions.finished

    def feed(payload: bytes) -> None:
        size = chunk_size or len(payload) or 1
        for start in range(0, len(payload), size):
            absorb(session.receive(payload[start : start + size], now))

    remaining: list[str] = []
    number = 0

    def line(raw: bytes, terminated: bool) -> None:
        nonlocal number
        number += 1
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        text = raw.decode("utf-8", "replace")
        if result.finished is not None:
            # CAPTURE-TURNS-001 / FIDELITY-REPLAY-001: fed as a live run feeds it, and listed.
            if js_trim(text):
                remaining.append(text)
            feed(text.encode("utf-8") + (b"\n" if terminated else b""))
            return
        value = _loads(text)
        response = adapter.captured_response(value) if value is not NOT_JSON else None
        if response is not None and isinstance(value, dict):
            new_id = matcher.replayed_id(response, number)
            if new_id is not None:
                text = _dumps(adapter.with_response_id(value, new_id))
        feed(text.encode("utf-8") + (b"\n" if terminated else b""))
        result.lines_consumed += 1

    held = bytearray()
    long: _LongLine | None = None
    #: Whether the long line being streamed goes to the session (it began before the end).
    long_fed = False

    def partial(data: bytes) -> None:
        nonlocal long, long_fed
        if long is None:
            held.extend(data)
            if len(held) <= HELD_LINE_BYTES:
                return
            long, long_fed = _LongLine(), result.finished is None
            data = bytes(held)
            held.clear()
        piece = long.piece(data)
        if piece:
            feed(piece)

    def line_end(terminated: bool) -> None:
        nonlocal long, long_fed, number
        if long is None:
            raw = bytes(held)
            held.clear()
            line(raw, terminated)
            return
        number += 1
        feed(long.end() + (b"\n" if terminated else b""))
        if long_fed:
            result.lines_consumed += 1
        elif js_trim(long.head):
            remaining.append(long.head)
        long, long_fed = None, False

    absorb(session.start(request, now))
    for chunk in [cli_output] if isinstance(cli_output, (bytes, bytearray)) else cli_output:
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline == -1:
                if start < len(chunk):
                    partial(chunk[start:])
                break
            partial(chunk[start:newline])
            line_end(True)
            start = newline + 1
    if held or long is not None:
        line_end(False)
    # As live: end_of_output at the end of stdout, finished or not (late frames are judged).
    absorb(session.end_of_output(now))
    result.remaining_lines = tuple(remaining)
    result.id_rewrites = tuple(matcher.rewrites)
    if host_frames is not None:
        result.comparison = compare_frames(host_frames, result.frames, adapter)
    return result
