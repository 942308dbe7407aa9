"""``harness replay`` streams its recording (rule REPLAY-MEMORY-001, design §Reliability).

:func:`harness.recording.record.scan_recording` checks a file line by line as
:func:`~harness.recording.record.load_recording` would, then
:func:`harness.recording.replay.replay_recording` reads its stdout again chunk by chunk.
Everything here compares that streamed replay with the replay of the recording loaded
whole: events, verdicts, errors and waits.
"""

from __future__ import annotations

import json
import random
import tracemalloc
from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate, islice
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.capture import driver
from harness.errors import HarnessError
from harness.events import Event
from harness.recording.record import RecordingError, load_recording, restore_paths, scan_recording
from harness.recording.replay import CHUNKING_MODES, REPLAY_PATHS, chunk_cuts, replay_recording
from tests.recording.test_replay import FakeClock

DATA = Path(__file__).parent / "data"
CORPUS = Path(__file__).resolve().parents[2] / "recordings"


def _recordings() -> list[Path]:
    return [*sorted(DATA.glob("*.jsonl")), *sorted(CORPUS.rglob("*.jsonl"))]


def _json(events: Sequence[Event]) -> list[dict[str, Any]]:
    return [e.to_json() for e in events]


@pytest.mark.rule("REPLAY-MEMORY-001", "REPLAY-CHUNK-001")
@pytest.mark.parametrize("path", _recordings(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_scanned_recording_replays_as_the_loaded_one(path: Path) -> None:
    loaded = load_recording(path)
    scan = scan_recording(path)
    assert (scan.header, scan.exit, scan.stdin) == (
        loaded.header,
        loaded.exit,
        loaded.stream("stdin"),
    )
    for mode in CHUNKING_MODES:
        whole = replay_recording(loaded, chunking=mode, seed=7)
        seen: list[Event] = []
        streamed = replay_recording(scan, chunking=mode, seed=7, on_event=seen.append)
        assert _json(seen) == _json(whole.events), mode
        # The events went to on_event: the result counts them and keeps none.
        assert streamed.events == [] and streamed.event_count == len(seen)
        assert streamed.to_json() == whole.to_json(), mode


def _write(tmp_path: Path, text: bytes) -> Path:
    path = tmp_path / "edited.jsonl"
    path.write_bytes(text)
    return path


def _good_lines() -> list[bytes]:
    return (DATA / "claude_hello.jsonl").read_bytes().splitlines(keepends=True)


def _broken() -> list[tuple[str, bytes]]:
    lines = _good_lines()
    chunk = lines[1]
    return [
        ("empty", b""),
        ("blank line", lines[0] + b"\n" + b"".join(lines[1:])),
        ("not json", lines[0] + b"{nope\n" + b"".join(lines[1:])),
        ("not utf-8", lines[0] + b'{"t":1,"dir":"stdout","data":"\xff"}\n' + b"".join(lines[1:])),
        ("after exit", b"".join(lines) + chunk),
        ("truncated", b"".join(lines[:-1])),
        ("array", lines[0] + b"[1]\n" + b"".join(lines[1:])),
        ("header", b'{"format":"other"}\n' + b"".join(lines[1:])),
        (
            "chunk key",
            lines[0] + b'{"t":1,"dir":"stdout","data":"x","y":1}\n' + b"".join(lines[1:]),
        ),
        ("no newline at the end", b"".join(lines)[:-1]),
    ]


@pytest.mark.rule("REPLAY-MEMORY-001", "RECORD-READ-001")
@pytest.mark.parametrize(("case", "text"), _broken(), ids=[c for c, _ in _broken()])
def test_a_scan_refuses_what_a_load_refuses_with_the_same_message(
    tmp_path: Path, case: str, text: bytes
) -> None:
    path = _write(tmp_path, text)
    try:
        expected: str | None = str(load_recording(path).header.agent)
    except RecordingError as exc:
        expected = str(exc)
    try:
        got: str | None = str(scan_recording(path).header.agent)
    except RecordingError as exc:
        got = str(exc)
    assert got == expected, case


@pytest.mark.rule("REPLAY-MEMORY-001", "CLIERR-TIMING-001")
@pytest.mark.parametrize("late", ["99999", "1e999"])
def test_timing_refuses_the_same_late_line_in_a_scan(tmp_path: Path, late: str) -> None:
    lines = [json.loads(line) for line in _good_lines()]
    lines[3]["t"] = 5
    text = "".join(json.dumps(o) + "\n" for o in lines).replace('"t": 5,', f'"t": {late},')
    path = _write(tmp_path, text.encode())
    messages = []
    # A time no run can take is refused when read (1e999); one that is only too late for
    # its line when the gaps are re-applied (99999). Either way, both readers say the same.
    for read in (load_recording, scan_recording):
        with pytest.raises(RecordingError) as caught:
            replay_recording(read(path), timing=True, clock=FakeClock())
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert ":4: " in messages[0]


class _Spy:
    """A session that notes the clock's offset and the size of every piece it receives."""

    def __init__(self, inner: Any, clock: FakeClock, log: list[tuple[float, int]]) -> None:
        self._inner = inner
        self._clock = clock
        self._log = log

    def receive(self, data: bytes, now_ms: float) -> Any:
        self._log.append((self._clock.now - self._clock.origin, len(data)))
        return self._inner.receive(data, now_ms)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.mark.rule("REPLAY-MEMORY-001", "REPLAY-TIMING-001")
@pytest.mark.parametrize("mode", CHUNKING_MODES)
@pytest.mark.parametrize("held", [None, 8])
def test_each_piece_is_delivered_at_the_time_of_its_last_byte(
    mode: str, held: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The capture driver streams a line over HELD_LINE_BYTES through in several receive
    # calls: the pieces of each call are placed by offset, not by counting calls.
    from harness.capture.adapters import DshCaptureAdapter

    recording = load_recording(DATA / "dsh_run.jsonl")
    clock = FakeClock()
    log: list[tuple[float, int]] = []
    real = DshCaptureAdapter.create_session
    monkeypatch.setattr(
        DshCaptureAdapter,
        "create_session",
        lambda self, d=None, frames=None: _Spy(real(self, d, frames), clock, log),
    )
    if held is not None:
        monkeypatch.setattr(driver, "HELD_LINE_BYTES", held)
    result = replay_recording(recording, chunking=mode, seed=3, timing=True, clock=clock)
    assert result.ok
    chunks = restore_paths(recording, **REPLAY_PATHS).chunks_of("stdout")
    ends = list(accumulate(len(c.data) for c in chunks))
    offset = 0
    for at, size in log:
        offset += size
        holder = chunks[min(bisect_left(ends, offset), len(ends) - 1)]
        assert at == holder.t_ms, f"the piece ending at byte {offset} came at {at} ms"
    assert offset == ends[-1]


def _reference_cuts(mode: str, data: bytes, ends: Sequence[int], rng: random.Random) -> list[int]:
    """The cuts as a list, the way the whole-data replay made them."""
    size = len(data)
    if mode == "recorded":
        return sorted({e for e in ends if 0 < e < size})
    if mode == "line":
        return [i + 1 for i, byte in enumerate(data) if byte == ord("\n") and i < size - 1]
    if mode == "1":
        return list(range(1, size))
    cuts = []
    at = rng.randint(1, 97)
    while at < size:
        cuts.append(at)
        at += rng.randint(1, 97)
    return cuts


@pytest.mark.rule("REPLAY-MEMORY-001", "REPLAY-CHUNK-001")
@settings(max_examples=60, deadline=None)
@given(
    data=st.binary(max_size=300).map(lambda b: b.replace(b"\x00", b"\n")),
    ends=st.lists(st.integers(min_value=-3, max_value=320), max_size=20),
    seed=st.integers(min_value=0, max_value=1000),
)
def test_chunk_cuts_are_the_cuts_of_each_mode(data: bytes, ends: list[int], seed: int) -> None:
    for mode in CHUNKING_MODES:
        got = list(chunk_cuts(mode, data, ends, random.Random(seed)))
        assert got == _reference_cuts(mode, data, ends, random.Random(seed)), mode


@pytest.mark.rule("REPLAY-MEMORY-001")
def test_chunk_cuts_one_byte_at_a_time_is_not_a_list_of_every_offset() -> None:
    data = b"x" * 8_000_000
    tracemalloc.start()
    try:
        first = list(islice(chunk_cuts("1", data, [], random.Random(0)), 5))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert first == [1, 2, 3, 4, 5]
    assert peak < 4 * 1024 * 1024, f"{peak} bytes for five cuts"


@pytest.mark.rule("REPLAY-MEMORY-001")
def test_an_unknown_mode_is_refused_before_any_event(tmp_path: Path) -> None:
    seen: list[Event] = []
    with pytest.raises(HarnessError, match="unknown chunking"):
        replay_recording(scan_recording(DATA / "dsh_run.jsonl"), chunking="2", on_event=seen.append)
    assert seen == []


@pytest.mark.rule("REPLAY-MEMORY-001")
def test_a_one_way_replay_of_many_chunks_holds_nothing_per_chunk(tmp_path: Path) -> None:
    # 40,000 two-byte stdout chunks that the parser passes on as raw lines: a replay that
    # kept anything per chunk or per line (an offset: 36 bytes, an event) would hold over a
    # MiB; one that keeps nothing peaks at tens of KiB (tracemalloc makes every chunk slow,
    # so the count is what the bound needs, no more).
    lines = _good_lines()
    path = tmp_path / "many.jsonl"
    chunk = b'{"t":1,"dir":"stdout","data":"x\\n"}\n'
    path.write_bytes(lines[0] + chunk * 40_000 + lines[-1])
    scan = scan_recording(path)
    count = 0

    def seen(event: Event) -> None:
        nonlocal count
        count += 1

    tracemalloc.start()
    try:
        result = replay_recording(scan, on_event=seen)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == result.event_count >= 40_000
    assert peak < 1024 * 1024, f"the replay held {peak} bytes"
