"""Replay judges cancellation from a recording (``harness/recording/replay_cancel.py``,
``replay.py``).

Rules: REPLAY-CANCEL-LADDER-001, REPLAY-CANCEL-FRAMES-001, REPLAY-CANCEL-STATUS-001,
REPLAY-CANCEL-TIMING-001. The corpus's cancel recordings (one per format, made by the
fakes under the real runner) pass; each is then tampered with one line at a time (frames
reordered, a second terminal, an event after the terminal, a ladder out of order) and
the matching rule must fail.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.ladder import Step, StepKind
from harness.recording.corpus import CANCEL_CASES, CORPUS_DIR
from harness.recording.record import load_recording, parse_recording
from harness.recording.replay import ReplayResult, replay_recording
from harness.recording.replay_cancel import describe_ladder, ladder_problems
from tests.recording.test_replay import FakeClock

CANCEL_FILES = sorted(p for c in CANCEL_CASES for p in CORPUS_DIR.glob(f"*/{c.name}.jsonl"))
TWO_WAY = ("acp-json-rpc", "codex-app-server", "dsh-profile-jsonl", "pi-rpc")


def _verdicts(result: ReplayResult) -> dict[str, str]:
    return {f.rule: f.verdict for f in result.findings}


def _message(result: ReplayResult, rule: str) -> str:
    return next(f.message for f in result.findings if f.rule == rule)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _replay(lines: list[dict[str, Any]], **kw: Any) -> ReplayResult:
    data = "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")
    return replay_recording(parse_recording(data, "tampered.jsonl"), **kw)


def _index(lines: list[dict[str, Any]], **match: Any) -> int:
    for i, line in enumerate(lines):
        if all(line.get(k) == v if v is not ... else k in line for k, v in match.items()):
            return i
    raise AssertionError(f"no line {match}")


def test_the_corpus_has_a_cancel_recording_for_every_transport() -> None:
    formats = {p.parent.name for p in CANCEL_FILES if p.stem == "cancel"}
    assert {*TWO_WAY, "claude-stream-json", "plain", "json-event-stream"} <= formats
    unanswered = {p.parent.name for p in CANCEL_FILES if p.stem == "cancel_unanswered"}
    assert unanswered == set(TWO_WAY)


@pytest.mark.rule(
    "REPLAY-CANCEL-LADDER-001",
    "REPLAY-CANCEL-FRAMES-001",
    "REPLAY-CANCEL-STATUS-001",
    "REPLAY-STATUS-001",
)
@pytest.mark.parametrize("path", CANCEL_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_recorded_cancel_replays_as_a_cancel(path: Path) -> None:
    recording = load_recording(path)
    assert recording.steps and recording.steps[0].kind is StepKind.CANCEL
    result = replay_recording(recording)
    verdicts = _verdicts(result)
    assert result.status is not None and result.status.value == "cancelled"
    assert verdicts["REPLAY-STATUS-001"] == "pass"
    assert verdicts["REPLAY-CANCEL-LADDER-001"] == "pass", result.findings
    assert verdicts["REPLAY-CANCEL-STATUS-001"] == "pass", result.findings
    if recording.header.stream_format in TWO_WAY:
        assert verdicts["REPLAY-CANCEL-FRAMES-001"] == "pass", result.findings
        assert result.canceller is not None and result.canceller.sent
        assert verdicts["REPLAY-FRAMES-001"] == "pass", result.findings
    else:
        assert "REPLAY-CANCEL-FRAMES-001" not in verdicts


@pytest.mark.rule("REPLAY-CANCEL-STATUS-001")
def test_a_recording_without_steps_gets_no_cancel_verdicts() -> None:
    result = replay_recording(load_recording(CORPUS_DIR / "dsh-profile-jsonl" / "happy.jsonl"))
    assert not [f for f in result.findings if f.rule.startswith("REPLAY-CANCEL-")]


# -- tampered recordings ---------------------------------------------------------------------


@pytest.mark.rule("REPLAY-CANCEL-FRAMES-001", "REPLAY-FRAMES-001")
def test_reordered_host_frames_fail() -> None:
    lines = _lines(CORPUS_DIR / "codex-app-server" / "cancel.jsonl")
    stdin = [i for i, line in enumerate(lines) if line.get("dir") == "stdin"]
    turn_start, interrupt = stdin[-2], stdin[-1]
    assert "turn/interrupt" in lines[interrupt]["data"]
    # The interrupt and the turn it interrupts swap their data (times and places kept).
    lines[turn_start]["data"], lines[interrupt]["data"] = (
        lines[interrupt]["data"],
        lines[turn_start]["data"],
    )
    result = _replay(lines)
    verdicts = _verdicts(result)
    assert verdicts["REPLAY-CANCEL-FRAMES-001"] == "fail"
    assert "after the cancel" in _message(result, "REPLAY-CANCEL-FRAMES-001")
    assert verdicts["REPLAY-FRAMES-001"] == "fail"


@pytest.mark.rule("REPLAY-CANCEL-FRAMES-001")
def test_a_missing_cancel_frame_fails() -> None:
    lines = _lines(CORPUS_DIR / "dsh-profile-jsonl" / "cancel.jsonl")
    del lines[_index(lines, dir="stdin", data=lines[_index(lines, step="cancel") + 1]["data"])]
    result = _replay(lines)
    assert _verdicts(result)["REPLAY-CANCEL-FRAMES-001"] == "fail"
    assert "sent but not recorded" in _message(result, "REPLAY-CANCEL-FRAMES-001")


@pytest.mark.rule("REPLAY-CANCEL-STATUS-001")
def test_a_second_terminal_frame_fails() -> None:
    lines = _lines(CORPUS_DIR / "dsh-profile-jsonl" / "cancel.jsonl")
    result_at = max(
        i for i, line in enumerate(lines) if '"type":"result"' in str(line.get("data", ""))
    )
    lines.insert(result_at + 1, dict(lines[result_at], t=lines[result_at]["t"] + 1))
    result = _replay(lines)
    assert _verdicts(result)["REPLAY-CANCEL-STATUS-001"] == "fail"
    assert "after the terminal" in _message(result, "REPLAY-CANCEL-STATUS-001")


@pytest.mark.rule("REPLAY-CANCEL-STATUS-001")
def test_an_event_after_the_terminal_fails_for_a_session() -> None:
    lines = _lines(CORPUS_DIR / "dsh-profile-jsonl" / "cancel.jsonl")
    answer = max(
        i for i, line in enumerate(lines) if '"type":"result"' in str(line.get("data", ""))
    )
    late = {"v": 1, "type": "text", "request_id": "run-corpus-1", "content": "late"}
    chunk = {"t": lines[answer]["t"] + 1, "dir": "stdout", "data": json.dumps(late) + "\n"}
    lines.insert(answer + 1, chunk)
    result = _replay(lines)
    assert _verdicts(result)["REPLAY-CANCEL-STATUS-001"] == "fail"
    assert "published after the terminal" in _message(result, "REPLAY-CANCEL-STATUS-001")
    # The same frame before the terminal is a text like any other.
    lines.insert(answer, lines.pop(answer + 1))
    assert _verdicts(_replay(lines))["REPLAY-CANCEL-STATUS-001"] == "pass"


@pytest.mark.rule("REPLAY-CANCEL-STATUS-001")
def test_content_after_a_terminal_turn_fails_for_a_one_way_stream() -> None:
    lines = _lines(CORPUS_DIR / "claude-stream-json" / "happy.jsonl")
    cancel = {"t": 1.0, "step": "cancel", "stdin_open": False, "exited": False}
    reaped = {"t": lines[-1]["exit"]["duration_ms"], "step": "reaped", "abandoned": False}
    late = {"type": "assistant", "message": {"id": "m9", "role": "assistant", "content": []}}
    late["message"]["content"] = [{"type": "text", "text": "late"}]  # type: ignore[index]
    text = {"t": lines[-2]["t"], "dir": "stdout", "data": json.dumps(late) + "\n"}
    lines[1:1] = [cancel]
    lines[-1:-1] = [text, reaped]
    result = _replay(lines)
    assert result.status is not None and result.status.value == "cancelled"
    assert _verdicts(result)["REPLAY-CANCEL-STATUS-001"] == "fail"
    assert "content after the terminal" in _message(result, "REPLAY-CANCEL-STATUS-001")


@pytest.mark.rule("REPLAY-CANCEL-LADDER-001")
@pytest.mark.parametrize(
    ("tamper", "problem"),
    [
        pytest.param("swap-close-terminate", "while stdin was still open", id="terminate-first"),
        pytest.param("second-reaped", "2 'reaped' steps", id="second-reaped"),
        pytest.param("step-before-cancel", "before the cancel", id="step-before-cancel"),
    ],
)
def test_a_ladder_out_of_order_fails(tamper: str, problem: str) -> None:
    lines = _lines(CORPUS_DIR / "dsh-profile-jsonl" / "cancel.jsonl")
    close, terminate = _index(lines, step="stdin_close"), _index(lines, step="terminate")
    if tamper == "swap-close-terminate":
        lines[close], lines[terminate] = lines[terminate], lines[close]
        lines[close]["t"], lines[terminate]["t"] = lines[terminate]["t"], lines[close]["t"]
    elif tamper == "second-reaped":
        reaped = _index(lines, step="reaped")
        lines.insert(reaped + 1, dict(lines[reaped]))
    else:
        grace = lines.pop(_index(lines, step="grace"))
        lines.insert(_index(lines, step="cancel"), dict(grace, t=lines[1]["t"]))
    result = _replay(lines)
    assert _verdicts(result)["REPLAY-CANCEL-LADDER-001"] == "fail"
    assert problem in _message(result, "REPLAY-CANCEL-LADDER-001")


def _step(t: float, kind: StepKind, stdout_chunks: int = 0, **detail: Any) -> Step:
    return Step(t, kind, detail, stdout_chunks=stdout_chunks)


CANCEL = _step(100, StepKind.CANCEL, stdin_open=True, exited=False)


@pytest.mark.rule("REPLAY-CANCEL-LADDER-001")
@pytest.mark.parametrize(
    ("steps", "problem"),
    [
        pytest.param(
            [
                CANCEL,
                _step(100, StepKind.GRACE, ms=2000, label="g"),
                _step(500, StepKind.STDIN_CLOSE),
                _step(500, StepKind.TERMINATE, signal="SIGTERM", grace_ms=3000),
                _step(600, StepKind.EXITED, code=None, signal="SIGTERM"),
                _step(600, StepKind.REAPED, abandoned=False),
            ],
            "before the 2000 ms grace ended",
            id="grace-cut-short",
        ),
        pytest.param(
            [
                CANCEL,
                _step(100, StepKind.STDIN_CLOSE),
                _step(100, StepKind.TERMINATE, signal="SIGTERM", grace_ms=3000),
                _step(1100, StepKind.KILL, signal="SIGKILL"),
                _step(1200, StepKind.REAPED, abandoned=False),
            ],
            "before its 3000 ms wait ended",
            id="kill-too-early",
        ),
        pytest.param(
            [
                CANCEL,
                _step(100, StepKind.STDIN_CLOSE),
                _step(200, StepKind.KILL, signal="SIGKILL"),
                _step(300, StepKind.REAPED, abandoned=False),
            ],
            "without a graceful stop",
            id="kill-without-terminate",
        ),
        pytest.param(
            [CANCEL, _step(100, StepKind.STDIN_CLOSE)],
            "never reaped",
            id="not-reaped",
        ),
        pytest.param(
            [
                CANCEL,
                _step(90, StepKind.STDIN_CLOSE),
                _step(95, StepKind.REAPED, abandoned=False),
            ],
            "comes before",
            id="time-goes-back",
        ),
        pytest.param(
            [
                CANCEL,
                _step(200, StepKind.REAPED, abandoned=False),
                _step(300, StepKind.EXITED, code=0, signal=None),
            ],
            "after the tree was reaped",
            id="after-reaped",
        ),
    ],
)
def test_ladder_problems_name_what_is_wrong(steps: list[Step], problem: str) -> None:
    problems = ladder_problems(steps)
    assert any(problem in p for p in problems), problems


@pytest.mark.rule("REPLAY-CANCEL-LADDER-001")
def test_an_answered_cancel_may_stop_before_the_grace_ends() -> None:
    steps = [
        CANCEL,
        _step(100, StepKind.GRACE, ms=2000, label="g"),
        _step(150, StepKind.STDIN_CLOSE, stdout_chunks=1),
        _step(150, StepKind.TERMINATE, stdout_chunks=1, signal="SIGTERM", grace_ms=500),
        _step(170, StepKind.EXITED, stdout_chunks=1, code=None, signal="SIGTERM"),
        _step(170, StepKind.REAPED, stdout_chunks=1, abandoned=False),
    ]
    assert ladder_problems(steps) == []
    # A cancel that came after the tree was gone is one step.
    assert ladder_problems([_step(5, StepKind.CANCEL, stdin_open=False, exited=True)]) == []


# -- timing ----------------------------------------------------------------------------------


@pytest.mark.rule("REPLAY-CANCEL-TIMING-001", "REPLAY-TIMING-001")
def test_with_timing_the_grace_expires_at_the_recorded_offset() -> None:
    recording = load_recording(CORPUS_DIR / "acp-json-rpc" / "cancel_unanswered.jsonl")
    cancel = recording.steps[0]
    grace = next(
        s.detail["ms"]
        for s in recording.steps
        if s.kind is StepKind.GRACE and s.detail["label"] == "acp-cancel-grace"
    )
    clock = FakeClock()
    result = replay_recording(recording, timing=True, clock=clock)
    assert _verdicts(result)["REPLAY-CANCEL-TIMING-001"] == "pass", result.findings
    assert result.canceller is not None
    (tick,) = result.canceller.ticks
    assert tick.recorded_ms == pytest.approx(cancel.t_ms + grace)
    assert tick.delivered_ms is not None and tick.delivered_ms >= tick.recorded_ms
    assert clock.now - clock.origin >= cancel.t_ms + grace
    # Without timing the grace still expires at the recorded place, unpaced.
    plain = replay_recording(recording)
    assert _verdicts(plain)["REPLAY-CANCEL-TIMING-001"] == "skipped"
    assert plain.canceller is not None and len(plain.canceller.ticks) == 1
    assert [e.to_json() for e in plain.events] == [e.to_json() for e in result.events]


class StoppedClock(FakeClock):
    """A clock whose sleeps do not advance it: the replay cannot wait for anything."""

    def sleep_ms(self, ms: float) -> None:
        self.sleeps.append(ms)


@pytest.mark.rule("REPLAY-CANCEL-TIMING-001")
def test_a_grace_delivered_early_fails() -> None:
    recording = load_recording(CORPUS_DIR / "acp-json-rpc" / "cancel_unanswered.jsonl")
    result = replay_recording(recording, timing=True, clock=StoppedClock())
    assert _verdicts(result)["REPLAY-CANCEL-TIMING-001"] == "fail"
    assert "before the recorded" in _message(result, "REPLAY-CANCEL-TIMING-001")


@pytest.mark.rule("REPLAY-CANCEL-LADDER-001")
def test_a_passing_ladder_is_described_with_its_gaps() -> None:
    steps = [
        CANCEL,
        _step(100.4, StepKind.GRACE, ms=2000, label="g"),
        _step(104, StepKind.STDIN_CLOSE, stdout_chunks=1),
        _step(104, StepKind.TERMINATE, stdout_chunks=1, signal="SIGTERM", grace_ms=500),
        _step(171, StepKind.EXITED, stdout_chunks=1, code=None, signal="SIGTERM"),
        _step(171, StepKind.REAPED, stdout_chunks=1, abandoned=False),
    ]
    assert describe_ladder(steps) == (
        "cancel at 100 ms > grace 2000 ms (g) +0 ms > stdin_close +4 ms > "
        "terminate SIGTERM +4 ms > exited SIGTERM +71 ms > reaped +71 ms"
    )
    result = replay_recording(load_recording(CORPUS_DIR / "claude-stream-json" / "cancel.jsonl"))
    assert "terminate SIGTERM +" in _message(result, "REPLAY-CANCEL-LADDER-001")
