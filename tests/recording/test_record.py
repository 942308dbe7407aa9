"""Recording format v1: writer, reader, schema (``harness/recording/record.py``).

Rules: RECORD-FORMAT-001, RECORD-BYTES-001, RECORD-READ-001, RECORD-PATHS-001,
RECORD-SECRET-ENV-001. The files under ``data/`` are written by hand from the
documented wire shapes (ref §2.1 for claude-stream-json, seed 001 §6 / ref §2.8 for
dsh-profile-jsonl); a recording's lines are built here from plain dicts.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.recording.record import (
    FORMAT_NAME,
    Chunk,
    Direction,
    ExitInfo,
    Expectation,
    Recording,
    RecordingError,
    RecordingHeader,
    RecordingVersionError,
    RecordingWriter,
    format_recording,
    load_recording,
    parse_recording,
    restore_paths,
)
from harness.schemas import load_schema
from harness.secrets.scrub import REDACTED

DATA = Path(__file__).parent / "data"
SCHEMA = load_schema("recording-v1.schema.json")
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _part(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{name}"})


HEADER_VALIDATOR = _part("header")
CHUNK_VALIDATOR = _part("chunk")
EXIT_VALIDATOR = _part("exit")


def _header(**fields: Any) -> RecordingHeader:
    values: dict[str, Any] = {
        "agent": "claude",
        "stream_format": "claude-stream-json",
        "event_parser": None,
        "transport": "default",
        "argv": ("claude", "-p"),
        "prompt_delivery": "stdin",
        "platform": "linux",
        "cli_version": "2.1.259",
        "env": {},
    }
    values.update(fields)
    return RecordingHeader(**values)


def _header_json(**fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "format": "adapter-harness-recording",
        "version": 1,
        "agent": "claude",
        "stream_format": "claude-stream-json",
        "event_parser": None,
        "transport": "default",
        "argv": ["claude"],
        "prompt_delivery": "stdin",
        "platform": "linux",
        "cli_version": None,
        "env": {},
    }
    obj.update(fields)
    return obj


def _file(*objects: Any) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objects).encode()


def _assert_lines_valid(text: str, *, whole_schema: bool = True) -> list[dict[str, Any]]:
    """Every line valid for its position's definition (and for the one-line schema)."""
    objects = [json.loads(line) for line in text.splitlines()]
    if whole_schema:
        for obj in objects:
            VALIDATOR.validate(obj)
    HEADER_VALIDATOR.validate(objects[0])
    for obj in objects[1:-1]:
        CHUNK_VALIDATOR.validate(obj)
    EXIT_VALIDATOR.validate(objects[-1])
    return objects


# -- format and schema (RECORD-FORMAT-001) -------------------------------------------------------


@pytest.mark.rule("RECORD-FORMAT-001")
def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.rule("RECORD-FORMAT-001")
@pytest.mark.parametrize("name", ["claude_hello.jsonl", "dsh_run.jsonl"])
def test_hand_written_recordings_validate_and_read(name: str) -> None:
    text = (DATA / name).read_text(encoding="utf-8")
    _assert_lines_valid(text)
    recording = load_recording(DATA / name)
    assert recording.source == str(DATA / name)
    # The canonical writer reproduces the hand-written file byte for byte.
    assert format_recording(recording) == text


@pytest.mark.rule("RECORD-FORMAT-001")
def test_writer_output_is_header_chunks_exit_in_arrival_order() -> None:
    writer = RecordingWriter(
        _header(created="2026-11-30T10:00:00Z", expect=Expectation("failed", "E1", "R-X-001"))
    )
    text = writer.header_line()
    # stdout's chunk ends inside a token, so it is held; stderr's line waits behind it.
    text += writer.chunk("stdout", b"token abc", 1.5)
    text += writer.chunk(Direction.STDERR, b"warning\n", 2)
    assert text.count("\n") == 1
    text += writer.chunk("stdin", b"", 3)  # nothing: no line
    text += writer.chunk("stdout", b"def\n", 4)
    text += writer.exit(1, None, 10.25)
    objects = _assert_lines_valid(text)
    assert objects[0]["format"] == FORMAT_NAME
    assert objects[0]["expect"] == {"status": "failed", "error_code": "E1", "error_rule": "R-X-001"}
    assert objects[0]["created"] == "2026-11-30T10:00:00Z"
    assert objects[1:] == [
        {"t": 1.5, "dir": "stdout", "data": "token abc"},
        {"t": 2, "dir": "stderr", "data": "warning\n"},
        {"t": 4, "dir": "stdout", "data": "def\n"},
        {"exit": {"code": 1, "signal": None, "duration_ms": 10.25}},
    ]


@pytest.mark.rule("RECORD-FORMAT-001")
def test_exit_signal_numbers_are_written_as_names() -> None:
    writer = RecordingWriter(_header())
    line = writer.exit(None, 15, 3).splitlines()[-1]
    assert json.loads(line) == {"exit": {"code": None, "signal": "SIGTERM", "duration_ms": 3}}
    other = RecordingWriter(_header()).exit(None, 250, 3).splitlines()[-1]
    assert json.loads(other)["exit"]["signal"] == "SIG250"


@pytest.mark.rule("RECORD-FORMAT-001")
def test_writer_refuses_misuse() -> None:
    writer = RecordingWriter(_header())
    with pytest.raises(ValueError, match="t_ms"):
        writer.chunk("stdout", b"x", -1)
    with pytest.raises(ValueError, match="t_ms"):
        writer.chunk("stdout", b"x", float("nan"))
    with pytest.raises(ValueError):
        writer.chunk("stdsomething", b"x", 1)
    writer.exit(0, None, 1)
    with pytest.raises(ValueError, match="after exit"):
        writer.chunk("stdout", b"x", 2)
    with pytest.raises(ValueError, match="twice"):
        writer.exit(0, None, 1)


@pytest.mark.rule("RECORD-FORMAT-001")
def test_line_separators_inside_data_are_escaped() -> None:
    # wire §A.0: a reader that splits on U+2028/U+2029/U+0085 must not break a record.
    writer = RecordingWriter(_header())
    text = writer.chunk("stdout", "a\u2028b\u2029c\x85d\n".encode(), 1) + writer.exit(0, None, 1)
    assert "\u2028" not in text and "\u2029" not in text and "\x85" not in text
    assert len(text.splitlines()) == 3
    assert parse_recording(text.encode()).stream("stdout") == "a\u2028b\u2029c\x85d\n".encode()


# -- lossless bytes (RECORD-BYTES-001) -----------------------------------------------------------

_PIECES = st.sampled_from(
    [b"{cwd}", b"{!home}", b"{tmp:json}", b"/w/p", b"/h", b"\xff", b"\xe2\x98", b"\x83", b"\n"]
)
_CHUNK_DATA = st.lists(st.one_of(st.binary(max_size=24), _PIECES), min_size=1, max_size=4).map(
    b"".join
)


@pytest.mark.rule("RECORD-BYTES-001", "RECORD-FORMAT-001", "RECORD-PATHS-001")
@settings(max_examples=150)
@given(
    chunks=st.lists(
        st.tuples(st.sampled_from(list(Direction)), _CHUNK_DATA, st.integers(0, 10**7)),
        max_size=12,
    ),
    code=st.one_of(st.none(), st.integers(-(2**31), 2**31)),
)
@example(chunks=[(Direction.STDOUT, b"\xe2\x98", 1), (Direction.STDOUT, b"\x83", 2)], code=0)
@example(chunks=[(Direction.STDOUT, b"{cwd}{", 1), (Direction.STDIN, b"!/w/p", 2)], code=None)
def test_any_chunks_round_trip_exactly(
    chunks: list[tuple[Direction, bytes, int]], code: int | None
) -> None:
    writer = RecordingWriter(_header(), cwd="/w/p", home="/h", tmp="/t")
    text = writer.header_line()
    for direction, data, t in chunks:
        text += writer.chunk(direction, data, t / 100)
    text += writer.exit(code, None, 5)
    _assert_lines_valid(text, whole_schema=False)
    recording = parse_recording(text.encode(), "mem")
    restored = restore_paths(recording, cwd="/w/p", home="/h", tmp="/t")
    # An empty read is not a chunk: the writer records nothing for it.
    assert [(c.direction, c.data, c.t_ms) for c in restored.chunks] == [
        (d, data, t / 100) for d, data, t in chunks if data
    ]
    assert restored.exit == ExitInfo(code, None, 5.0)


@pytest.mark.rule("RECORD-BYTES-001")
def test_non_utf8_chunks_are_base64_and_text_chunks_are_text() -> None:
    writer = RecordingWriter(_header())
    text = writer.chunk("stdout", b"caf\xc3", 1) + writer.chunk("stdout", b"\xa9 ok\n", 2)
    text += writer.chunk("stderr", "café\n".encode(), 3) + writer.exit(0, None, 4)
    lines = [json.loads(line) for line in text.splitlines()[1:3]]
    assert lines[0] == {"t": 1, "dir": "stdout", "b64": base64.b64encode(b"caf\xc3").decode()}
    assert lines[1] == {"t": 2, "dir": "stdout", "b64": base64.b64encode(b"\xa9 ok\n").decode()}
    recording = parse_recording(text.encode())
    assert recording.stream("stdout") == "café ok\n".encode()
    assert recording.chunks_of("stderr") == [Chunk(3.0, Direction.STDERR, "café\n".encode())]


# -- header scrubbing (RECORD-SECRET-ENV-001, RECORD-PATHS-001) -----------------------------------


@pytest.mark.rule("RECORD-SECRET-ENV-001", "RECORD-PATHS-001")
def test_the_header_is_scrubbed() -> None:
    key = "sk-ant-api03-Zk4Jh8Lp2Qw6Er0Ty3Ui7Op1As5Df9Gh"
    header = _header(
        argv=("/home/bob/.local/bin/claude", "--add-dir", "/tmp/x", "--key", key),
        env={"ANTHROPIC_API_KEY": key, "HOME": "/home/bob", "TERM": "xterm"},
    )
    writer = RecordingWriter(header, cwd="/home/bob/p", home="/home/bob", tmp="/tmp")
    text = writer.header_line()
    assert key not in text
    obj = json.loads(text)
    assert obj["argv"] == ["{home}/.local/bin/claude", "--add-dir", "{tmp}/x", "--key", REDACTED]
    assert obj["env"] == {"ANTHROPIC_API_KEY": REDACTED, "HOME": "{home}", "TERM": "xterm"}
    assert writer.header_line() == ""  # once
    data = writer.chunk("stdout", f"echo {key}\n".encode(), 1) + writer.exit(0, None, 1)
    assert key not in data


# -- reading bad files (RECORD-READ-001) ---------------------------------------------------------

_GOOD_CHUNK = {"t": 1, "dir": "stdout", "data": "x"}
_GOOD_EXIT = {"exit": {"code": 0, "signal": None, "duration_ms": 1}}

# (lines, the line the error names, a fragment of the message, schema rejects that line)
_BAD: list[tuple[list[Any], int, str, bool]] = [
    ([_header_json(format="other")], 1, "not a recording", True),
    ([_header_json(agent="")], 1, "'agent'", True),
    ([{k: v for k, v in _header_json().items() if k != "env"}], 1, "lacks ['env']", True),
    ([_header_json(extra=1)], 1, "unknown key", True),
    ([_header_json(argv="claude -p")], 1, "'argv'", True),
    ([_header_json(env={"A": 1})], 1, "'env'", True),
    ([_header_json(prompt_delivery="carrier pigeon")], 1, "'prompt_delivery'", True),
    ([_header_json(expect={"status": "fine"})], 1, "'expect.status'", True),
    ([_header_json(), {"t": -1, "dir": "stdout", "data": "x"}], 2, "'t'", True),
    ([_header_json(), {"t": 1, "dir": "stdweird", "data": "x"}], 2, "'dir'", True),
    ([_header_json(), {"t": 1, "dir": "stdout"}], 2, "exactly one", True),
    ([_header_json(), {"t": 1, "dir": "stdout", "data": "x", "b64": "eA=="}], 2, "exactly", True),
    ([_header_json(), {"t": 1, "dir": "stdout", "b64": "not base64!"}], 2, "'b64'", True),
    ([_header_json(), _GOOD_CHUNK, {"exit": {"code": "0", "signal": None}}], 3, "exit.code", True),
    ([_header_json(), {"exit": {"code": 0, "duration_ms": 1}}], 2, "exit.signal", True),
    ([_header_json(), _GOOD_CHUNK, _GOOD_EXIT, _GOOD_CHUNK], 4, "after the exit", False),
    ([_header_json(), _GOOD_CHUNK], 2, "truncated", False),
    ([_header_json(), [1, 2]], 2, "JSON object", True),
]


@pytest.mark.rule("RECORD-READ-001")
@pytest.mark.parametrize(("lines", "line", "fragment", "schema_rejects"), _BAD)
def test_a_bad_recording_names_the_file_and_line(
    lines: list[Any], line: int, fragment: str, schema_rejects: bool
) -> None:
    with pytest.raises(RecordingError) as info:
        parse_recording(_file(*lines), "rec/bad.jsonl")
    error = info.value
    assert (error.source, error.line) == ("rec/bad.jsonl", line)
    assert str(error).startswith(f"[RECORD-READ-001] rec/bad.jsonl:{line}: ")
    assert fragment in error.problem
    if schema_rejects:
        # The schema and the reader agree about that line.
        assert not VALIDATOR.is_valid(lines[line - 1])


@pytest.mark.rule("RECORD-READ-001")
@pytest.mark.parametrize(
    ("data", "line", "fragment"),
    [
        (b"", None, "empty file"),
        (b"{not json\n", 1, "not JSON"),
        (b'{"a": NaN}\n', 1, "not JSON"),
        (b"\xff\xfe\n", 1, "not UTF-8"),
        (_file(_header_json()) + b"\n" + _file(_GOOD_EXIT), 2, "blank line"),
    ],
)
def test_lines_that_are_not_json_objects_are_named(
    data: bytes, line: int | None, fragment: str
) -> None:
    with pytest.raises(RecordingError) as info:
        parse_recording(data, "r.jsonl")
    assert info.value.line == line
    assert fragment in info.value.problem


@pytest.mark.rule("RECORD-READ-001")
def test_another_version_asks_for_regeneration() -> None:
    with pytest.raises(RecordingVersionError, match="re-record") as info:
        parse_recording(_file(_header_json(version=2), _GOOD_EXIT), "old.jsonl")
    assert info.value.line == 1
    assert info.value.code == "RECORDING_VERSION"


@pytest.mark.rule("RECORD-READ-001")
def test_a_missing_file_is_a_recording_error(tmp_path: Path) -> None:
    with pytest.raises(RecordingError) as info:
        load_recording(tmp_path / "nope.jsonl")
    assert info.value.line is None
    assert "nope.jsonl" in str(info.value)


@pytest.mark.rule("RECORD-READ-001")
def test_crlf_line_ends_are_read() -> None:
    data = _file(_header_json(), _GOOD_CHUNK, _GOOD_EXIT).replace(b"\n", b"\r\n")
    recording = parse_recording(data)
    assert isinstance(recording, Recording)
    assert recording.stream("stdout") == b"x"


@pytest.mark.rule("RECORD-BYTES-001", "RECORD-PATHS-001")
def test_an_argv_that_was_not_utf8_round_trips() -> None:
    # PEP 383: os.fsdecode(b"/home/bob/caf\xe9") holds a lone surrogate.
    odd = b"/home/bob/caf\xe9".decode("utf-8", "surrogateescape")
    writer = RecordingWriter(_header(argv=("cli", odd), env={"X": odd}), home="/home/bob")
    text = writer.header_line() + writer.exit(0, None, 1)
    text.encode("utf-8")  # the file is valid UTF-8 (\\u escapes)
    recording = parse_recording(text.encode())
    assert recording.header.argv == ("cli", "{home}/caf\udce9")
    restored = restore_paths(recording, cwd="/c", home="/home/bob", tmp="/t")
    assert restored.header.argv == ("cli", odd)
    assert restored.header.env == {"X": odd}


@pytest.mark.rule("RECORD-FORMAT-001")
def test_a_header_from_a_def_and_its_transport() -> None:
    from harness.defs.registry import get_agent_def
    from harness.defs.transport import select_transport

    codex = select_transport(get_agent_def("codex"), name="app-server")
    header = RecordingHeader.from_def(
        codex, argv=["codex", "app-server"], env={"HOME": "/h"}, platform="darwin"
    )
    assert (header.agent, header.stream_format, header.transport) == (
        "codex",
        "codex-app-server",
        "app-server",
    )
    assert header.prompt_delivery == "protocol"
    line = json.loads(RecordingWriter(header, home="/h").header_line())
    HEADER_VALIDATOR.validate(line)
    assert line["env"] == {"HOME": "{home}"} and line["platform"] == "darwin"
