"""Pinned hostile inputs: each crash the fuzzer or a user found, as its smallest example.

Every case here raised out of a parser, a session, an adapter or ``harness parse``
before the fix; the fuzz suite (:mod:`tests.fuzz.test_hostile_frames`) finds their
kind again if one comes back.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.capture import adapter_for, replay
from harness.commands.render import format_event
from harness.events import Event, event_json_line
from harness.formats import create_parser
from harness.protocols.base import RunStatus
from harness.recording.record import Direction, load_recording
from harness.streams.decoder import loads_json
from tests.fuzz.hostile import RECORDINGS, one_way_targets

#: A line every one-way dialect claims or passes on as raw, with a lone surrogate in text.
SURROGATE_LINES = (
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"a\\ud800b"}]}}\n',
    b'{"type":"item.completed","item":{"type":"agent_message","text":"a\\ud800"}}\n',
    b'{"type":"text","part":{"text":"\\udc00"}}\n',
    b'{"\\udfff":"key"}\n',
)
OVERFLOW_LINE = b'{"type":"result","duration_ms":1e999,"usage":{"input_tokens":1e999}}\n'


def _written(events: list[Event]) -> list[str]:
    """What ``--json`` and the terminal renderer write, encoded as an output would."""
    out = []
    for event in events:
        line = event_json_line(event)
        line.encode("utf-8")
        assert loads_json(line) is not None  # strict: Infinity/NaN would not parse
        format_event(event).encode("utf-8")
        out.append(line)
    return out


def _parse(stream_format: str, dialect: str | None, data: bytes) -> list[Event]:
    parser = create_parser(stream_format, dialect)
    return [*parser.feed(data), *parser.finish()]


@pytest.mark.rule("ROBUST-SURROGATE-001")
@pytest.mark.parametrize("target", one_way_targets(), ids=lambda t: t.name)
def test_one_way_events_never_carry_a_lone_surrogate(target: object) -> None:
    stream_format, dialect = target.stream_format, target.dialect  # type: ignore[attr-defined]
    for line in SURROGATE_LINES:
        events = _parse(stream_format, dialect, line)
        assert "\ud800" not in repr(events) and "\udc00" not in repr(events)
        _written(events)


@pytest.mark.rule("ROBUST-SURROGATE-001")
def test_claude_text_with_a_lone_surrogate_reads_as_replacement_character() -> None:
    events = _parse("claude-stream-json", None, SURROGATE_LINES[0])
    assert any(getattr(e, "delta", None) == "a\ufffdb" for e in events), events


@pytest.mark.rule("ROBUST-JSONOUT-001")
@pytest.mark.parametrize("target", one_way_targets(), ids=lambda t: t.name)
def test_overflowing_numbers_are_written_as_null(target: object) -> None:
    stream_format, dialect = target.stream_format, target.dialect  # type: ignore[attr-defined]
    for line in _written(_parse(stream_format, dialect, OVERFLOW_LINE)):
        assert "Infinity" not in line and "NaN" not in line


@pytest.mark.rule("ROBUST-JSONOUT-001")
def test_claude_usage_from_1e999_is_null_in_json_output() -> None:
    events = _parse("claude-stream-json", None, OVERFLOW_LINE)
    usage = [json.loads(line) for line in _written(events) if '"type": "usage"' in line]
    assert usage and usage[0]["usage"] == {"input_tokens": None}, usage


@pytest.mark.rule("ROBUST-SURROGATE-001")
@pytest.mark.parametrize("stream_format", ["acp-json-rpc", "codex-app-server"])
def test_json_rpc_session_takes_a_lone_surrogate_id(stream_format: str) -> None:
    adapter = adapter_for(stream_format)
    session = adapter.create_session()
    session.start(adapter.synthesize_request([]), 0.0)
    for line in (
        b'{"jsonrpc":"2.0","id":"\\ud800","result":{}}\n',
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"session/request_permission","params":{}}\n',
    ):
        actions = session.receive(line, 0.0)
        _written(actions.events)
        for frame in actions.frames:
            assert "\ufffd" in loads_json(frame.decode("utf-8"))["id"]


@pytest.mark.rule("ROBUST-SURROGATE-001")
@pytest.mark.parametrize("stream_format", ["acp-json-rpc", "codex-app-server"])
def test_capture_summary_of_a_lone_surrogate_id_encodes(stream_format: str) -> None:
    result = replay(stream_format, b'{"jsonrpc":"2.0","id":"\\ud800","result":{}}\n')
    json.dumps(result.summary_json(), ensure_ascii=False, allow_nan=False).encode("utf-8")
    assert result.id_rewrites and result.id_rewrites[0].recorded == "\ufffd"


@pytest.mark.rule("ROBUST-WRONGTYPE-001")
@pytest.mark.parametrize(
    ("stream_format", "line"),
    [
        ("pi-rpc", b'{"type":"message_update","assistantMessageEvent":{"type":[]}}'),
        ("codex-app-server", b'{"method":"item/started","params":{"item":{"type":[]}}}'),
        ("dsh-profile-jsonl", b'{"v":1,"type":[],"request_id":"r"}'),
        ("dsh-profile-jsonl", b'{"v":1,"type":{},"request_id":"r"}'),
    ],
)
def test_a_type_of_the_wrong_type_is_the_documented_outcome(
    stream_format: str, line: bytes
) -> None:
    result = replay(stream_format, line + b"\n")
    _written(result.events)
    # Nothing claims the frame: it is raw, or the session failed with a typed error.
    assert result.status is RunStatus.FAILED or any(e.type == "raw" for e in result.events)


@pytest.mark.rule("ROBUST-WRONGTYPE-001")
@pytest.mark.parametrize("method", [{}, {"name": "session/prompt"}, ["session/prompt"]])
def test_acp_host_input_whose_method_is_an_object(method: object) -> None:
    recording = load_recording(RECORDINGS / "acp-json-rpc" / "happy.jsonl")
    lines = recording.stream(Direction.STDIN).replace(b"{cwd}", b"/cwd").split(b"\n")
    frame = json.loads(lines[0])
    assert frame["method"] == "initialize"
    frame["method"] = method
    lines[0] = json.dumps(frame).encode()
    stdout = recording.stream(Direction.STDOUT).replace(b"{cwd}", b"/cwd")
    result = replay("acp-json-rpc", stdout, host_input=b"\n".join(lines))
    # The recorded client's frame is not a request the session could have sent: a difference.
    assert result.comparison is not None and not result.comparison.ok
    json.dumps(result.summary_json(), allow_nan=False)


@pytest.mark.rule("ROBUST-SURROGATE-001")
def test_pi_capture_summary_of_a_lone_surrogate_command_encodes() -> None:
    line = b'{"type":"response","id":1,"command":"pro\\udc00mpt","success":true}\n'
    result = replay("pi-rpc", line)
    json.dumps(result.summary_json(), ensure_ascii=False, allow_nan=False).encode("utf-8")


def _tool_use_line(input_json: str) -> bytes:
    content = f'[{{"type":"tool_use","id":"t","name":"n","input":{{"x":{input_json}}}}}]'
    return f'{{"type":"assistant","message":{{"content":{content}}}}}\n'.encode()


@pytest.mark.rule("ROBUST-DEPTH-001")
@pytest.mark.parametrize("depth", [257, 990])
def test_json_nested_deeper_than_the_bound_is_raw_on_every_stack(depth: int) -> None:
    deep = "[" * depth + "]" * depth
    events = _parse("claude-stream-json", None, _tool_use_line(deep))
    assert [e.type for e in events] == ["raw"]
    # Past the bound it is refused; far past it Python's reader may give up first.
    with pytest.raises((ValueError, RecursionError)):
        loads_json(deep)
    if depth < 500:
        with pytest.raises(ValueError, match="nested deeper than 256"):
            loads_json(deep)


@pytest.mark.rule("ROBUST-DEPTH-001")
def test_json_nested_to_the_bound_is_read_and_written() -> None:
    deep = "[" * 250 + "]" * 250
    events = _parse("claude-stream-json", None, _tool_use_line(deep))
    assert any(e.type == "tool_use" for e in events)
    _written(events)


@pytest.mark.parametrize("huge", ["1" + "0" * 400, "1e999", "-0.5"])
def test_a_recording_with_a_huge_chunk_time_is_a_recording_error(huge: str) -> None:
    from harness.recording.record import RecordingError, parse_recording

    data = (RECORDINGS / "plain" / "happy.jsonl").read_bytes()
    lines = data.split(b"\n")
    chunk = json.loads(lines[1])
    lines[1] = json.dumps(chunk).replace(json.dumps(chunk["t"]), huge, 1).encode()
    with pytest.raises(RecordingError, match="'t' must be a"):
        parse_recording(b"\n".join(lines))


@pytest.mark.parametrize("delivery", [["stdin"], {"stdin": 1}, 1, None])
def test_a_recording_whose_prompt_delivery_is_no_string_is_a_recording_error(
    delivery: object,
) -> None:
    from harness.recording.record import RecordingError, parse_recording

    data = (RECORDINGS / "plain" / "happy.jsonl").read_bytes()
    lines = data.split(b"\n")
    header = json.loads(lines[0])
    header["prompt_delivery"] = delivery
    lines[0] = json.dumps(header).encode()
    with pytest.raises(RecordingError, match="'prompt_delivery' must be one of"):
        parse_recording(b"\n".join(lines))


# -- the command line: what it prints always encodes ------------------------------------------


def _harness_parse(tmp_path: Path, data: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    capture = tmp_path / "stdout.jsonl"
    capture.write_bytes(data)
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "parse", *args, str(capture)],
        capture_output=True,
        timeout=60,
        env={"PYTHONIOENCODING": "utf-8", "PATH": "/usr/bin:/bin"},
        check=False,
    )


@pytest.mark.rule("ROBUST-SURROGATE-001")
@pytest.mark.parametrize("as_json", [False, True])
def test_harness_parse_prints_text_with_a_lone_surrogate(tmp_path: Path, as_json: bool) -> None:
    flags = ["--json"] if as_json else []
    proc = _harness_parse(tmp_path, SURROGATE_LINES[0], "--format", "claude-stream-json", *flags)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert "a\ufffdb" in proc.stdout.decode("utf-8")


@pytest.mark.rule("ROBUST-JSONOUT-001")
def test_harness_parse_json_output_stays_json_for_1e999(tmp_path: Path) -> None:
    proc = _harness_parse(tmp_path, OVERFLOW_LINE, "--format", "claude-stream-json", "--json")
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    lines = proc.stdout.decode("utf-8").splitlines()
    assert lines
    for line in lines:
        loads_json(line)  # strict: refuses Infinity


@pytest.mark.rule("ROBUST-JSONOUT-001")
@pytest.mark.parametrize(
    ("stream_format", "path"),
    [("acp-json-rpc", "happy.jsonl"), ("pi-rpc", "happy.jsonl")],
)
def test_a_token_count_beyond_the_double_range_is_no_number(stream_format: str, path: str) -> None:
    recording = load_recording(RECORDINGS / stream_format / path)
    stdout = recording.stream(Direction.STDOUT).replace(b"{cwd}", b"/cwd")
    huge = b"1" + b"0" * 400
    stdout = re.sub(rb'("(?:outputTokens|output|total)":)\d+', rb"\g<1>" + huge, stdout)
    assert huge in stdout
    result = replay(stream_format, stdout)
    assert result.status is RunStatus.COMPLETED, result.error
    _written(result.events)
