"""The capture driver reads a capture in chunks and hands events on as they come.

Rule PARSE-MEMORY-001 (conformance/rules/memory.py): ``harness parse`` on a two-way
format feeds the file to :func:`harness.capture.driver.replay_capture` in chunks; a line
longer than the driver holds streams through to the session. Both must leave the
replay as it was with the capture given whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings

from harness import __version__
from harness.capture import adapter_for, driver
from harness.capture.driver import CaptureReplay, capture_values, replay_capture, split_capture
from harness.events import Event
from tests.helpers import cut_points, split_at

DATA = Path(__file__).resolve().parents[1] / "capture" / "data"

CASES = [
    ("acp-json-rpc", "acp_ids_from_0.jsonl", "acp_ids_from_0.host.jsonl"),
    ("acp-json-rpc", "acp_two_turns.jsonl", None),
    ("acp-json-rpc", "acp_truncated.jsonl", None),
    ("dsh-profile-jsonl", "dsh_run.jsonl", "dsh_run.host.jsonl"),
    ("dsh-profile-jsonl", "dsh_two_runs.jsonl", None),
    ("pi-rpc", "pi_resume.jsonl", "pi_resume.host.jsonl"),
]


def _bytes(name: str) -> bytes:
    return (DATA / name).read_bytes().replace(b"{harness_version}", __version__.encode())


def _run(
    fmt: str, output: bytes | list[bytes], host: str | None, *, stream: bool = False
) -> tuple[CaptureReplay, list[Event]]:
    adapter = adapter_for(fmt)
    whole = output if isinstance(output, bytes) else b"".join(output)
    frames = None
    if host is not None:
        from harness.capture.driver import parse_host_input

        frames = parse_host_input(_bytes(host))
        request = adapter.host_request(frames)
    else:
        request = adapter.synthesize_request([line.value for line in split_capture(whole)])
    seen: list[Event] = []
    result = replay_capture(
        adapter.create_session(None, frames),
        request,
        iter(output) if isinstance(output, list) else output,
        adapter,
        host_frames=frames,
        on_event=seen.append if stream else None,
    )
    return result, (seen if stream else result.events)


def _summary(result: CaptureReplay, events: list[Event]) -> dict[str, Any]:
    return {
        "events": [e.to_json() for e in events],
        "frames": result.frames,
        "status": result.status,
        "error": result.error,
        "consumed": result.lines_consumed,
        "remaining": result.remaining_lines,
        "rewrites": result.id_rewrites,
        "comparison": result.comparison,
    }


def _assert_same(streamed: dict[str, Any], expected: dict[str, Any]) -> None:
    assert [line[:80] for line in expected["remaining"]] == list(streamed["remaining"])
    assert {**streamed, "remaining": None} == {**expected, "remaining": None}


def _cases() -> Iterator[tuple[str, str, str | None]]:
    for fmt, name, host in CASES:
        if (DATA / name).exists():
            yield fmt, name, host


@pytest.mark.rule("PARSE-MEMORY-001")
@pytest.mark.parametrize(("fmt", "name", "host"), list(_cases()))
@settings(max_examples=25, deadline=None)
@given(cuts=cut_points())
def test_chunks_and_streamed_events_replay_as_the_whole_capture(
    fmt: str, name: str, host: str | None, cuts: list[int]
) -> None:
    data = _bytes(name)
    expected = _summary(*_run(fmt, data, host))
    assert _summary(*_run(fmt, split_at(data, cuts), host, stream=True)) == expected
    # Every line past the held size streams through: the session sees the same bytes.
    with mock.patch.object(driver, "HELD_LINE_BYTES", 8):
        streamed = _summary(*_run(fmt, split_at(data, cuts), host, stream=True))
    # Long lines are not rewritten (too long to be a response), so compare where none was;
    # a long line left after the first turn is reported by its first 80 characters.
    if not expected["rewrites"]:
        _assert_same(streamed, expected)


@pytest.mark.rule("PARSE-MEMORY-001")
def test_events_given_to_on_event_are_not_kept_on_the_result() -> None:
    result, events = _run("dsh-profile-jsonl", _bytes("dsh_run.jsonl"), None, stream=True)
    assert events and result.events == []


@pytest.mark.rule("PARSE-MEMORY-001")
def test_a_long_line_streams_through_with_its_bad_bytes_and_cr_as_a_whole_decode_would() -> None:
    data = _bytes("dsh_run.jsonl")
    first, rest = data.split(b"\n", 1)
    long_line = b"\xff" + b"z" * 40 + "é".encode() + b"\r\n"
    capture = first + b"\n" + long_line + rest
    expected = _summary(*_run("dsh-profile-jsonl", capture, None))
    with mock.patch.object(driver, "HELD_LINE_BYTES", 4):
        pieces = [capture[i : i + 3] for i in range(0, len(capture), 3)]
        _assert_same(_summary(*_run("dsh-profile-jsonl", pieces, None, stream=True)), expected)


@pytest.mark.rule("PARSE-MEMORY-001")
def test_capture_values_keep_the_first_of_each_kind_in_order() -> None:
    lines = [
        b'{"jsonrpc":"2.0","id":0,"result":{}}',
        *(b'{"jsonrpc":"2.0","method":"session/update","params":{"n":%d}}' % n for n in range(5)),
        b"not json",
        b'{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}',
    ]
    data = b"\n".join(lines) + b"\n"
    values = capture_values([data[:7], data[7:]], per_kind=2)
    assert values == [
        {"jsonrpc": "2.0", "id": 0, "result": {}},
        {"jsonrpc": "2.0", "method": "session/update", "params": {"n": 0}},
        {"jsonrpc": "2.0", "method": "session/update", "params": {"n": 1}},
        {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}},
    ]
    # The handshake a synthesized request reads is all there for every capture.
    for fmt, name, _ in _cases():
        whole = [line.value for line in split_capture(_bytes(name))]
        adapter = adapter_for(fmt)
        assert adapter.synthesize_request(capture_values([_bytes(name)])) == (
            adapter.synthesize_request(whole)
        )
