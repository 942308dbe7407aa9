"""Replaying recordings through the engine (``harness/recording/replay.py``).

Rules: REPLAY-CHUNK-001, REPLAY-FRAMES-001, REPLAY-STATUS-001, REPLAY-TIMING-001,
RECORD-PATHS-001. ``data/claude_hello.jsonl`` (one-way, claude-stream-json, ref §2.1)
and ``data/dsh_run.jsonl`` (two-way, dsh-profile-jsonl, seed 001 §6, ref §2.8) are
hand-written; variants are built here by editing their lines as plain JSON.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness.events import Event
from harness.formats import create_parser
from harness.protocols.base import RunStatus
from harness.recording.record import (
    Expectation,
    Recording,
    load_recording,
    parse_recording,
    restore_paths,
)
from harness.recording.replay import CHUNKING_MODES, REPLAY_PATHS, replay_recording

DATA = Path(__file__).parent / "data"


class FakeClock:
    """A clock that only moves when slept on; records every wait."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.origin = start
        self.sleeps: list[float] = []

    def now_ms(self) -> float:
        return self.now

    def sleep_ms(self, ms: float) -> None:
        assert ms > 0
        self.sleeps.append(ms)
        self.now += ms

    def targets(self) -> list[float]:
        """Offsets from the start at which a delivery was due (cumulative waits)."""
        out: list[float] = []
        total = 0.0
        for ms in self.sleeps:
            total += ms
            out.append(round(total, 3))
        return out


class UnusableClock:
    def now_ms(self) -> float:
        raise AssertionError("the clock was read without timing")

    def sleep_ms(self, ms: float) -> None:
        raise AssertionError("slept without timing")


def _load(name: str) -> Recording:
    return load_recording(DATA / name)


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]


def _from_lines(lines: list[dict[str, Any]]) -> Recording:
    return parse_recording("".join(json.dumps(o) + "\n" for o in lines).encode(), "edited.jsonl")


def _json(events: list[Event]) -> list[dict[str, Any]]:
    return [e.to_json() for e in events]


def _text(events: list[Event]) -> str:
    return "".join(e["delta"] for e in _json(events) if e["type"] == "text_delta")


# -- chunking (REPLAY-CHUNK-001) -----------------------------------------------------------------


@pytest.mark.rule("REPLAY-CHUNK-001", "RECORD-PATHS-001")
def test_one_way_events_are_the_same_for_every_chunking() -> None:
    recording = _load("claude_hello.jsonl")
    results = {mode: replay_recording(recording, chunking=mode) for mode in CHUNKING_MODES}
    recorded = _json(results["recorded"].events)
    for mode, result in results.items():
        assert _json(result.events) == recorded, mode
    # The oracle: the parser fed the whole (restored) stdout at once.
    stdout = recording.stream("stdout").replace(b"{cwd}", REPLAY_PATHS["cwd"].encode())
    parser = create_parser("claude-stream-json", None)
    assert recorded == _json([*parser.feed(stdout), *parser.finish()])
    # The snowman was cut in three chunks and the placeholder restored.
    assert _text(results["1"].events) == "Hello from /replay/cwd ☃"
    kinds = [e["type"] for e in recorded]
    assert kinds[0] == "status" and recorded[0]["session_id"] == "sess-1"
    assert "turn_end" in kinds and "usage" in kinds
    assert results["recorded"].status is RunStatus.COMPLETED
    assert [f.to_json() for f in results["recorded"].findings] == [
        {"rule": "REPLAY-STATUS-001", "verdict": "pass", "message": "completed"}
    ]


@pytest.mark.rule("REPLAY-CHUNK-001", "REPLAY-FRAMES-001")
def test_two_way_events_and_frames_are_the_same_for_every_chunking() -> None:
    recording = _load("dsh_run.jsonl")
    results = {mode: replay_recording(recording, chunking=mode) for mode in CHUNKING_MODES}
    recorded = results["recorded"]
    assert recorded.status is RunStatus.COMPLETED, recorded.error
    assert recorded.frames == [
        {
            "v": 1,
            "type": "execute",
            "request_id": "od-run-7",
            "cwd": "/replay/cwd",
            "prompt": "Make a landing page",
            "model": {"provider": "deepseek-official", "id": "deepseek-v4-pro"},
            "mcp_servers": [],
        }
    ]
    assert _text(recorded.events) == "Writing /replay/cwd/index.html"
    for mode, result in results.items():
        assert _json(result.events) == _json(recorded.events), mode
        assert result.frames == recorded.frames, mode
        assert [(f.rule, f.verdict) for f in result.findings] == [
            ("REPLAY-STATUS-001", "pass"),
            ("REPLAY-FRAMES-001", "pass"),
        ], mode
        assert result.ok


@pytest.mark.rule("REPLAY-CHUNK-001")
@settings(max_examples=25)
@given(seed=st.integers(min_value=0, max_value=2**32), name=st.sampled_from(["c", "d"]))
def test_random_chunking_never_changes_the_events(seed: int, name: str) -> None:
    recording = _load("claude_hello.jsonl" if name == "c" else "dsh_run.jsonl")
    baseline = replay_recording(recording, chunking="line")
    shuffled = replay_recording(recording, chunking="random", seed=seed)
    assert _json(shuffled.events) == _json(baseline.events)
    assert shuffled.frames == baseline.frames


@pytest.mark.rule("REPLAY-CHUNK-001")
def test_unknown_chunking_and_formats_are_typed_errors() -> None:
    recording = _load("claude_hello.jsonl")
    with pytest.raises(HarnessError, match="unknown chunking"):
        replay_recording(recording, chunking="2")
    odd = replace(recording, header=replace(recording.header, stream_format="smoke-signals"))
    with pytest.raises(HarnessError, match="smoke-signals"):
        replay_recording(odd)


# -- paths (RECORD-PATHS-001) --------------------------------------------------------------------


@pytest.mark.rule("RECORD-PATHS-001")
def test_replay_restores_placeholders_where_asked() -> None:
    result = replay_recording(_load("dsh_run.jsonl"), paths={"cwd": "/srv/site"})
    assert result.frames[0]["cwd"] == "/srv/site"
    assert _text(result.events) == "Writing /srv/site/index.html"
    assert result.ok  # paths are normalized before frames are compared


# -- frames (REPLAY-FRAMES-001) -------------------------------------------------------------------


@pytest.mark.rule("REPLAY-FRAMES-001")
def test_a_frame_the_session_would_not_send_fails_the_replay() -> None:
    lines = _lines("dsh_run.jsonl")
    stdin = next(o for o in lines if o.get("dir") == "stdin")
    execute = json.loads(stdin["data"])
    execute["client"] = "multica"  # another client's extra field
    stdin["data"] = json.dumps(execute) + "\n"
    result = replay_recording(_from_lines(lines))
    assert result.status is RunStatus.COMPLETED
    frames = [f for f in result.findings if f.rule == "REPLAY-FRAMES-001"]
    assert [f.verdict for f in frames] == ["fail"]
    assert "$.client" in frames[0].message
    assert not result.ok
    assert result.comparison is not None and len(result.comparison.differences) == 1


@pytest.mark.rule("REPLAY-FRAMES-001")
def test_without_stdin_the_request_is_synthesized_and_frames_are_skipped() -> None:
    lines = [o for o in _lines("dsh_run.jsonl") if o.get("dir") != "stdin"]
    result = replay_recording(_from_lines(lines))
    assert result.status is RunStatus.COMPLETED, result.error
    assert result.frames[0]["request_id"] == "od-run-7"  # adopted from the stdout
    assert [(f.rule, f.verdict) for f in result.findings] == [
        ("REPLAY-STATUS-001", "pass"),
        ("REPLAY-FRAMES-001", "skipped"),
    ]
    assert result.ok


@pytest.mark.rule("REPLAY-FRAMES-001")
def test_stdin_that_is_not_frames_fails_the_frames_rule() -> None:
    lines = _lines("dsh_run.jsonl")
    next(o for o in lines if o.get("dir") == "stdin")["data"] = "Make a landing page\n"
    result = replay_recording(_from_lines(lines))
    failed = [f for f in result.findings if f.verdict == "fail"]
    assert [f.rule for f in failed] == ["REPLAY-FRAMES-001"]
    assert "unusable" in failed[0].message


# -- status (REPLAY-STATUS-001) -------------------------------------------------------------------


def _truncated_dsh(expect: dict[str, Any] | None) -> Recording:
    lines = _lines("dsh_run.jsonl")
    last = lines[-2]
    last["data"] = last["data"][: last["data"].index('{"v":1,"type":"result"')]
    if expect is not None:
        lines[0]["expect"] = expect
    return _from_lines(lines)


@pytest.mark.rule("REPLAY-STATUS-001")
def test_a_run_without_result_fails_unless_expected() -> None:
    plain = replay_recording(_truncated_dsh(None))
    assert plain.status is RunStatus.FAILED
    assert plain.findings[0].rule == "REPLAY-STATUS-001"
    assert plain.findings[0].verdict == "fail"
    assert "DSH_PROFILE_MISSING_RESULT" in plain.findings[0].message
    assert not plain.ok
    expected = replay_recording(
        _truncated_dsh({"status": "failed", "error_code": "DSH_PROFILE_MISSING_RESULT"})
    )
    assert expected.findings[0].verdict == "pass"
    assert expected.ok
    wrong = replay_recording(_truncated_dsh({"status": "failed", "error_code": "OTHER"}))
    assert wrong.findings[0].verdict == "fail"
    assert "expected 'OTHER'" in wrong.findings[0].message


@pytest.mark.rule("REPLAY-STATUS-001")
def test_an_expectation_of_success_fails_a_failed_run() -> None:
    recording = _truncated_dsh({"status": "completed"})
    result = replay_recording(recording)
    assert result.findings[0].verdict == "fail"
    assert "ended failed" in result.findings[0].message
    ruled = replace(
        recording,
        header=replace(recording.header, expect=Expectation("failed", error_rule="NO-SUCH-001")),
    )
    assert replay_recording(ruled).findings[0].verdict == "fail"


@pytest.mark.rule("REPLAY-STATUS-001")
def test_a_one_way_error_event_fails_the_stream_unless_expected() -> None:
    lines = _lines("claude_hello.jsonl")
    error_line = {
        "type": "assistant",
        "message": {"id": "msg_2", "role": "assistant", "content": [], "model": "m"},
        "parent_tool_use_id": None,
        "session_id": "sess-1",
        "error": "rate_limit",
    }
    lines.insert(-1, {"t": 990, "dir": "stdout", "data": "\n" + json.dumps(error_line) + "\n"})
    result = replay_recording(_from_lines(lines))
    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "rate_limit"
    assert [(f.rule, f.verdict) for f in result.findings] == [("REPLAY-STATUS-001", "fail")]
    lines[0]["expect"] = {"status": "failed", "error_code": "rate_limit"}
    assert replay_recording(_from_lines(lines)).ok


# -- timing (REPLAY-TIMING-001) -------------------------------------------------------------------


@pytest.mark.rule("REPLAY-TIMING-001")
def test_recorded_gaps_are_reapplied_with_an_injected_clock() -> None:
    recording = _load("claude_hello.jsonl")
    clock = FakeClock()
    timed = replay_recording(recording, timing=True, clock=clock)
    stdout_times = [c.t_ms for c in recording.chunks_of("stdout")]
    assert clock.targets() == stdout_times
    untimed = replay_recording(recording, timing=False, clock=UnusableClock())
    assert _json(timed.events) == _json(untimed.events)


@pytest.mark.rule("REPLAY-TIMING-001")
def test_a_piece_waits_for_the_chunk_of_its_last_byte() -> None:
    recording = _load("claude_hello.jsonl")
    clock = FakeClock()
    replay_recording(recording, chunking="line", timing=True, clock=clock)
    stdout_times = [c.t_ms for c in recording.chunks_of("stdout")]
    targets = clock.targets()
    assert targets == sorted(targets)
    assert set(targets) <= set(stdout_times)
    assert targets[-1] == stdout_times[-1]
    # Lines end in the chunks at 812 (init), 815.5 (message_start, content_block_start),
    # 840 (first delta), 843 (the delta holding the snowman, whose last byte came at 843;
    # the 1-byte chunk at 841 ends no line), 900 (message_delta) and 950.25 (the
    # assistant line's newline opens that chunk, then the unterminated result).
    assert targets == [812, 815.5, 840, 843, 900, 950.25]


@pytest.mark.rule("REPLAY-TIMING-001")
def test_two_way_timing_follows_the_recorded_stdout() -> None:
    clock = FakeClock()
    result = replay_recording(_load("dsh_run.jsonl"), timing=True, clock=clock)
    assert result.ok
    assert clock.targets() == [120, 300, 420, 655]


@pytest.mark.rule("REPLAY-TIMING-001")
def test_no_wait_when_the_replay_is_already_late() -> None:
    class LateClock(FakeClock):
        def now_ms(self) -> float:
            self.now += 10_000  # every read finds the replay far behind
            return self.now

    clock = LateClock()
    replay_recording(_load("claude_hello.jsonl"), timing=True, clock=clock)
    assert clock.sleeps == []


# -- the pieces each mode feeds (REPLAY-CHUNK-001) ------------------------------------------------


class _Spy:
    """Wraps a parser or session and records the size of every piece it is fed."""

    def __init__(self, inner: Any, sizes: list[int]) -> None:
        self._inner = inner
        self._sizes = sizes

    def feed(self, data: bytes) -> Any:
        self._sizes.append(len(data))
        return self._inner.feed(data)

    def receive(self, data: bytes, now_ms: float) -> Any:
        self._sizes.append(len(data))
        return self._inner.receive(data, now_ms)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _offsets(sizes: list[int]) -> list[int]:
    out: list[int] = []
    total = 0
    for size in sizes:
        total += size
        out.append(total)
    return out


@pytest.mark.rule("REPLAY-CHUNK-001")
@pytest.mark.parametrize("name", ["claude_hello.jsonl", "dsh_run.jsonl"])
def test_each_mode_feeds_the_pieces_it_names(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.recording.replay as replay_module
    from harness.capture.adapters import DshCaptureAdapter

    sizes: list[int] = []
    monkeypatch.setattr(replay_module, "create_parser", lambda *a: _Spy(create_parser(*a), sizes))
    real_session = DshCaptureAdapter.create_session
    monkeypatch.setattr(
        DshCaptureAdapter,
        "create_session",
        lambda self, d=None, frames=None: _Spy(real_session(self, d, frames), sizes),
    )
    recording = restore_paths(_load(name), **REPLAY_PATHS)
    stdout = recording.stream("stdout")
    recorded_ends = _offsets([len(c.data) for c in recording.chunks_of("stdout")])
    line_ends = [i + 1 for i, byte in enumerate(stdout) if byte == ord("\n")]
    if not stdout.endswith(b"\n"):
        line_ends.append(len(stdout))

    def fed(mode: str, seed: int = 0) -> list[int]:
        sizes.clear()
        replay_recording(recording, chunking=mode, seed=seed)
        return [s for s in sizes if s]

    if name.startswith("dsh"):
        # The capture driver feeds line by line: recorded cuts fall inside those lines.
        assert _offsets(fed("recorded")) == sorted(set(recorded_ends) | set(line_ends))
    else:
        assert _offsets(fed("recorded")) == recorded_ends
    assert _offsets(fed("line")) == line_ends
    assert fed("1") == [1] * len(stdout)
    random_a, random_b = fed("random", 1), fed("random", 2)
    assert sum(random_a) == sum(random_b) == len(stdout)
    assert random_a != random_b
    assert fed("random", 1) == random_a  # the seed decides
