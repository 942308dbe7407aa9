"""RECORD-LADDER-001: the stop ladder's steps in a recording (``harness/recording/record.py``).

The writer keeps a step's place among the chunks (also behind a chunk held back for a
secret cut across chunks), the reader places each step (chunks and stdout bytes before
it) and refuses a malformed one by line, the schema accepts exactly the documented
shapes, and a recording without steps reads as before.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from harness.ladder import STEP_FIELDS, Step, StepKind
from harness.recording.record import (
    Chunk,
    Direction,
    ExitInfo,
    Recording,
    RecordingError,
    RecordingHeader,
    RecordingWriter,
    format_recording,
    parse_recording,
    scan_recording,
)
from harness.schemas import load_schema

SCHEMA = load_schema("recording-v1.schema.json")
STEP_VALIDATOR = jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/step"})
LINE_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

#: One valid detail per kind.
DETAILS: dict[StepKind, dict[str, Any]] = {
    StepKind.CANCEL: {"stdin_open": True, "exited": False},
    StepKind.GRACE: {"ms": 2000, "label": "dsh-cancel-grace"},
    StepKind.STDIN_CLOSE: {},
    StepKind.TERMINATE: {"signal": "SIGTERM", "grace_ms": 3000},
    StepKind.KILL: {"signal": "SIGKILL"},
    StepKind.EXITED: {"code": None, "signal": "SIGTERM"},
    StepKind.REAPED: {"abandoned": False},
}


def _header() -> RecordingHeader:
    return RecordingHeader(
        agent="deepseek-harness",
        stream_format="dsh-profile-jsonl",
        event_parser=None,
        transport="default",
        argv=("dsh", "--stdio"),
        prompt_delivery="protocol",
        platform="linux",
        cli_version=None,
        env={"HOME": "/home/u"},
    )


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.rule("RECORD-LADDER-001")
def test_every_kind_has_a_documented_detail_and_validates() -> None:
    assert set(DETAILS) == set(StepKind) == set(STEP_FIELDS)
    for kind, detail in DETAILS.items():
        line = Step(12.5, kind, detail).to_json(12.5)
        assert Step(12.5, kind, detail).problem() is None
        STEP_VALIDATOR.validate(line)
        LINE_VALIDATOR.validate(line)


@pytest.mark.rule("RECORD-LADDER-001")
def test_writer_keeps_steps_in_place_and_the_reader_places_them() -> None:
    writer = RecordingWriter(_header())
    text = writer.header_line()
    text += writer.chunk("stdout", b'{"type":"text"}\n', 10)
    text += writer.step(StepKind.CANCEL, 20, DETAILS[StepKind.CANCEL])
    text += writer.chunk("stdin", b'{"type":"cancel"}\n', 21)
    text += writer.step(StepKind.GRACE, 21, DETAILS[StepKind.GRACE])
    text += writer.chunk("stdout", b'{"type":"result"}\n', 30)
    text += writer.step(StepKind.STDIN_CLOSE, 31, {})
    text += writer.step(StepKind.EXITED, 40, {"code": 0, "signal": None})
    text += writer.step(StepKind.REAPED, 40, DETAILS[StepKind.REAPED])
    text += writer.exit(0, None, 45)
    kinds = [line.get("step", line.get("dir", "exit")) for line in _lines(text)[1:]]
    assert kinds == [
        "stdout",
        "cancel",
        "stdin",
        "grace",
        "stdout",
        "stdin_close",
        "exited",
        "reaped",
        "exit",
    ]
    recording = parse_recording(text.encode("utf-8"))
    assert [s.kind for s in recording.steps] == [
        StepKind.CANCEL,
        StepKind.GRACE,
        StepKind.STDIN_CLOSE,
        StepKind.EXITED,
        StepKind.REAPED,
    ]
    cancel, grace = recording.steps[0], recording.steps[1]
    assert (cancel.chunk_index, cancel.stdout_chunks, cancel.stdin_bytes, cancel.line) == (
        1,
        1,
        0,
        3,
    )
    assert (grace.chunk_index, grace.stdout_chunks) == (2, 1)
    assert grace.stdin_bytes == len(b'{"type":"cancel"}\n')
    assert recording.steps[2].stdout_chunks == 2
    assert [c.direction for c in recording.chunks] == [
        Direction.STDOUT,
        Direction.STDIN,
        Direction.STDOUT,
    ]
    # format_recording writes the same lines back (a lossless round trip).
    assert format_recording(recording) == text


@pytest.mark.rule("RECORD-LADDER-001")
def test_a_step_waits_behind_a_chunk_held_for_a_split_secret() -> None:
    secret = "sk-ant-" + "a" * 40
    header = _header()
    writer = RecordingWriter(
        RecordingHeader(**{**header.__dict__, "env": {"ANTHROPIC_API_KEY": secret}})
    )
    text = writer.header_line()
    text += writer.chunk("stdout", ("x" + secret[:10]).encode(), 1)
    text += writer.step(StepKind.CANCEL, 2, DETAILS[StepKind.CANCEL])
    text += writer.chunk("stdout", (secret[10:] + "\n").encode(), 3)
    text += writer.exit(None, "SIGTERM", 4)
    assert secret not in text
    order = [line.get("step", line.get("dir")) for line in _lines(text)[1:-1]]
    assert order == ["stdout", "cancel", "stdout"]


@pytest.mark.rule("RECORD-LADDER-001")
def test_a_recording_without_steps_reads_as_before(tmp_path: Any) -> None:
    recording = Recording(
        _header(),
        (Chunk(1.0, Direction.STDOUT, b"x\n"),),
        ExitInfo(0, None, 2.0),
    )
    text = format_recording(recording)
    assert '"step"' not in text
    assert parse_recording(text.encode()).steps == ()
    path = tmp_path / "old.jsonl"
    path.write_text(text, encoding="utf-8")
    assert scan_recording(path).steps == ()


@pytest.mark.rule("RECORD-LADDER-001")
def test_scan_and_parse_read_the_same_steps(tmp_path: Any) -> None:
    recording = Recording(
        _header(),
        (Chunk(1.0, Direction.STDOUT, b"abc\n"), Chunk(5.0, Direction.STDIN, b"{}\n")),
        ExitInfo(None, "SIGTERM", 9.0),
        steps=(
            Step(4.0, StepKind.CANCEL, DETAILS[StepKind.CANCEL], chunk_index=1),
            Step(8.0, StepKind.TERMINATE, DETAILS[StepKind.TERMINATE], chunk_index=2),
        ),
    )
    path = tmp_path / "r.jsonl"
    path.write_text(format_recording(recording), encoding="utf-8")
    parsed = parse_recording(path.read_bytes())
    assert scan_recording(path).steps == parsed.steps
    assert [(s.chunk_index, s.stdout_chunks, s.stdin_bytes, s.line) for s in parsed.steps] == [
        (1, 1, 0, 3),
        (2, 1, 3, 5),
    ]


BAD_STEPS = [
    pytest.param({"t": 1, "step": "pause"}, "'step' must be one of", id="unknown-kind"),
    pytest.param({"t": 1, "step": "kill"}, "lacks 'signal'", id="missing-key"),
    pytest.param(
        {"t": 1, "step": "stdin_close", "signal": "SIGTERM"}, "unknown key", id="extra-key"
    ),
    pytest.param({"t": 1, "step": "reaped", "abandoned": 0}, "wrong type", id="int-for-bool"),
    pytest.param(
        {"t": 1, "step": "grace", "ms": True, "label": "x"}, "wrong type", id="bool-for-number"
    ),
    pytest.param(
        {"t": 1, "step": "grace", "ms": -5, "label": "x"}, "must be >= 0", id="negative-gap"
    ),
    pytest.param({"t": -1, "step": "stdin_close"}, "'t' must be", id="negative-time"),
]


@pytest.mark.rule("RECORD-LADDER-001", "RECORD-READ-001")
@pytest.mark.parametrize(("line", "problem"), BAD_STEPS)
def test_a_malformed_step_is_refused_by_line(line: dict[str, Any], problem: str) -> None:
    text = format_recording(Recording(_header(), (), ExitInfo(0, None, 1.0)))
    head, _, rest = text.partition("\n")
    data = (head + "\n" + json.dumps(line) + "\n" + rest).encode()
    with pytest.raises(RecordingError) as caught:
        parse_recording(data, "bad.jsonl")
    assert caught.value.line == 2
    assert problem in caught.value.problem
    if line["t"] >= 0:
        assert not STEP_VALIDATOR.is_valid(line)


@pytest.mark.rule("RECORD-LADDER-001")
def test_writer_refuses_a_malformed_step() -> None:
    writer = RecordingWriter(_header())
    with pytest.raises(ValueError, match="lacks 'signal'"):
        writer.step(StepKind.KILL, 1.0, {})
    writer.exit(0, None, 1.0)
    with pytest.raises(ValueError, match="after exit"):
        writer.step(StepKind.REAPED, 1.0, {"abandoned": False})
