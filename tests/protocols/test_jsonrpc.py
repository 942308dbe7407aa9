"""JSON-RPC 2.0 helpers: builders, classifier, envelope checks, the line reader.

Rules: ACP-RPC-001 (envelope, dialects, classification), ACP-FRAME-004 (encoding),
ACP-FRAME-001/002/003 (reading: non-JSON lines, pretty-printed messages, oversize),
ACP-CHUNK-001 and ACP-ROBUST-001 for the reader. Wire lines are written by hand from
the JSON-RPC 2.0 shapes of wire §A.0 / §A.1.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.protocols import jsonrpc
from harness.protocols.jsonrpc import (
    CODEX_APP_SERVER,
    JSONRPC_2,
    MAX_AGGREGATE_CHARS,
    MAX_AGGREGATE_LINES,
    ErrorResponse,
    Invalid,
    JsonItem,
    JsonLineReader,
    NonJsonLine,
    Notification,
    OversizeItem,
    ReadItem,
    Request,
    Response,
    classify,
    encode,
    envelope_problems,
)
from tests.helpers import cut_points, split_at

# -- building ------------------------------------------------------------------------------


@pytest.mark.rule("ACP-RPC-001")
def test_acp_dialect_writes_the_version_member() -> None:
    assert jsonrpc.request(1, "initialize", {"protocolVersion": 1}) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": 1},
    }
    assert jsonrpc.notification("session/cancel", {"sessionId": "s"}) == {
        "jsonrpc": "2.0",
        "method": "session/cancel",
        "params": {"sessionId": "s"},
    }
    assert jsonrpc.response("req-9", {"ok": True}) == {
        "jsonrpc": "2.0",
        "id": "req-9",
        "result": {"ok": True},
    }
    assert jsonrpc.error_response(7, -32601, "Method not found") == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32601, "message": "Method not found"},
    }
    assert jsonrpc.error_response(None, -32600, "Invalid Request", {"why": "x"})["error"] == {
        "code": -32600,
        "message": "Invalid Request",
        "data": {"why": "x"},
    }


@pytest.mark.rule("ACP-RPC-001")
def test_codex_dialect_omits_the_version_member() -> None:
    # wire §A.0: codex app-server "omits \"jsonrpc\":\"2.0\" on the wire".
    frames = [
        jsonrpc.request(1, "thread/start", {}, CODEX_APP_SERVER),
        jsonrpc.notification("initialized", {}, CODEX_APP_SERVER),
        jsonrpc.response(1, {}, CODEX_APP_SERVER),
        jsonrpc.error_response(1, -32603, "boom", dialect=CODEX_APP_SERVER),
    ]
    assert all("jsonrpc" not in f for f in frames)
    assert envelope_problems({"id": 1, "result": {}}, CODEX_APP_SERVER) == []
    assert envelope_problems({"id": 1, "result": {}}, JSONRPC_2) == [
        'jsonrpc must be "2.0", got None'
    ]


@pytest.mark.rule("ACP-RPC-001")
@pytest.mark.parametrize("bad", [True, 1.5, None, [1], {"a": 1}])
def test_request_ids_are_strings_or_integers_only(bad: Any) -> None:
    with pytest.raises(ValueError, match="request id"):
        jsonrpc.request(bad, "initialize", {})
    assert not jsonrpc.is_request_id(bad)
    assert jsonrpc.is_request_id(0) and jsonrpc.is_request_id("uuid-1")


@pytest.mark.rule("ACP-FRAME-004")
def test_encode_is_one_compact_line_with_line_separators_escaped() -> None:
    frame = jsonrpc.request(3, "session/prompt", {"text": "a\nb\u2028c\u2029d\x85e é"})
    data = encode(frame)
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    text = data.decode("utf-8")
    assert "\u2028" not in text and "\u2029" not in text and "\x85" not in text
    assert "\\u2028" in text and "\\u2029" in text and "\\u0085" in text
    assert "é" in text  # other non-ASCII stays raw UTF-8
    assert ", " not in text and ": " not in text  # compact separators
    assert json.loads(text) == frame
    # A peer that splits on Unicode line breaks (str.splitlines) still sees one line.
    assert len(text.rstrip("\n").splitlines()) == 1


@pytest.mark.rule("ACP-FRAME-004")
def test_encode_refuses_nan() -> None:
    with pytest.raises(ValueError):
        encode({"x": float("nan")})


# -- classifying --------------------------------------------------------------------------


@pytest.mark.rule("ACP-RPC-001")
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            {"jsonrpc": "2.0", "id": 1, "method": "fs/read_text_file", "params": {"path": "/a"}},
            Request(1, "fs/read_text_file", {"path": "/a"}),
        ),
        (
            {"jsonrpc": "2.0", "id": "9f3c", "method": "session/request_permission"},
            Request("9f3c", "session/request_permission", None),
        ),
        (
            {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s"}},
            Notification("session/update", {"sessionId": "s"}),
        ),
        ({"jsonrpc": "2.0", "id": 2, "result": None}, Response(2, None)),
        ({"jsonrpc": "2.0", "id": "x", "result": {"a": 1}}, Response("x", {"a": 1})),
        (
            {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "boom", "data": 1}},
            ErrorResponse(3, -32603, "boom", 1),
        ),
        (
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
            ErrorResponse(None, -32700, "Parse error", None),
        ),
        ({"jsonrpc": "2.0", "id": 4, "error": "flat"}, ErrorResponse(4, None, None, "flat")),
        (
            {"jsonrpc": "2.0", "id": 4, "error": {"code": True, "message": 5}},
            ErrorResponse(4, None, None, None),
        ),
    ],
)
def test_classify_recognizes_each_kind(value: dict[str, Any], expected: Any) -> None:
    assert classify(value) == expected


@pytest.mark.rule("ACP-RPC-001")
@pytest.mark.parametrize(
    ("value", "answerable"),
    [
        ([{"jsonrpc": "2.0", "id": 1, "result": {}}], False),  # batches are not ACP v1
        ("text", False),
        (3, False),
        ({"jsonrpc": "2.0"}, False),
        ({"jsonrpc": "2.0", "id": 1}, False),
        ({"jsonrpc": "2.0", "id": None, "result": {}}, False),
        ({"jsonrpc": "2.0", "id": 1.5, "result": {}}, False),
        ({"jsonrpc": "2.0", "id": True, "method": "x"}, True),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, True),
        ({"jsonrpc": "2.0", "method": ["x"]}, False),
    ],
)
def test_classify_reports_unusable_values(value: Any, answerable: bool) -> None:
    message = classify(value)
    assert isinstance(message, Invalid)
    assert message.answerable is answerable
    assert message.reason


@pytest.mark.rule("ACP-RPC-001")
def test_classify_ignores_the_version_member_but_envelope_reports_it() -> None:
    value = {"id": 1, "method": "session/request_permission", "params": {}}
    assert classify(value) == Request(1, "session/request_permission", {})
    assert envelope_problems(value) == ['jsonrpc must be "2.0", got None']
    assert envelope_problems({**value, "jsonrpc": "1.0"}) == ["jsonrpc must be \"2.0\", got '1.0'"]


@pytest.mark.rule("ACP-RPC-001")
def test_envelope_problems_name_each_rule() -> None:
    both = {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}
    assert "a response carries both result and error" in envelope_problems(both)
    assert "params must be an object or an array" in envelope_problems(
        {"jsonrpc": "2.0", "method": "m", "params": 3}
    )
    bad_error = {"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}
    problems = envelope_problems(bad_error)
    assert "error.code must be an integer" in problems
    assert "error.message must be a string" in problems
    assert envelope_problems({"jsonrpc": "2.0", "id": 1, "error": []}) == [
        "error must be an object"
    ]
    assert envelope_problems([]) == ["a JSON-RPC message is an object, got list"]
    assert envelope_problems({"jsonrpc": "2.0", "id": 1, "result": {}}) == []


# -- reading -----------------------------------------------------------------------------


def read(data: bytes, *, max_line_bytes: int = 1 << 20) -> list[ReadItem]:
    reader = JsonLineReader(max_line_bytes)
    return [*reader.feed(data), *reader.finish()]


def values(items: list[ReadItem]) -> list[Any]:
    return [i.value if isinstance(i, JsonItem) else i for i in items]


FRAME_A = {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "a"}}
FRAME_B = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "a"}}


def line(value: Any) -> bytes:
    return (json.dumps(value) + "\n").encode()


@pytest.mark.rule("ACP-FRAME-001")
def test_reader_reports_non_json_lines_and_skips_blank_ones() -> None:
    data = (
        b"Starting agent v1.2...\n\n   \n" + line(FRAME_A) + b"[warn] slow disk\r\n" + line(FRAME_B)
    )
    assert values(read(data)) == [
        NonJsonLine("Starting agent v1.2..."),
        FRAME_A,
        NonJsonLine("[warn] slow disk"),
        FRAME_B,
    ]


@pytest.mark.rule("ACP-FRAME-001")
def test_reader_refuses_nan_and_deep_nesting_as_json() -> None:
    items = read(b'{"x": NaN}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n")
    assert all(isinstance(i, NonJsonLine) for i in items) and len(items) == 2


@pytest.mark.rule("ACP-FRAME-002")
def test_reader_reassembles_a_pretty_printed_message() -> None:
    pretty = json.dumps(FRAME_A, indent=2).encode() + b"\n"
    items = read(b"banner\n" + pretty + line(FRAME_B))
    assert values(items) == [NonJsonLine("banner"), FRAME_A, FRAME_B]
    assert isinstance(items[1], JsonItem) and items[1].lines == pretty.count(b"\n")


@pytest.mark.rule("ACP-FRAME-002")
def test_a_complete_one_line_message_is_never_absorbed() -> None:
    # A stray "{" must not hide the agent's next request (it would wait forever):
    # the request is delivered by feed(), not only at finish().
    reader = JsonLineReader(1 << 20)
    assert values(reader.feed(b"{\n" + line(FRAME_B))) == [NonJsonLine("{"), FRAME_B]
    assert reader.pending_lines == 0
    assert values(reader.feed(line(FRAME_A))) == [FRAME_A]
    assert reader.finish() == []


@pytest.mark.rule("ACP-FRAME-002")
def test_a_failed_aggregate_is_replayed_line_by_line() -> None:
    data = b'{\n  "a": 1,\n  oops\n' + line(FRAME_A)
    assert values(read(data)) == [
        NonJsonLine("{"),
        NonJsonLine('"a": 1,'),
        NonJsonLine("oops"),
        FRAME_A,
    ]


@pytest.mark.rule("ACP-FRAME-002")
def test_an_unterminated_aggregate_is_flushed_at_the_end() -> None:
    reader = JsonLineReader(1 << 20)
    assert reader.feed(b'{\n  "a": [\n') == []
    assert reader.pending_lines == 2
    assert values(reader.finish()) == [
        NonJsonLine("{"),
        NonJsonLine('"a": ['),
    ]


@pytest.mark.rule("ACP-FRAME-002")
def test_the_aggregate_is_bounded_in_lines() -> None:
    body = b"[\n" + b"1,\n" * (MAX_AGGREGATE_LINES + 5) + b"1]\n"
    items = read(body)
    assert not any(isinstance(i, JsonItem) and isinstance(i.value, list) for i in items)
    assert isinstance(items[0], NonJsonLine) and items[0].text == "["


@pytest.mark.rule("ACP-FRAME-002")
def test_the_aggregate_is_bounded_in_characters() -> None:
    big = '"' + "x" * (MAX_AGGREGATE_CHARS // 2) + '",'
    data = ("[\n" + big + "\n" + big + "\n" + big + "\n1]\n").encode()
    items = read(data)
    assert not any(isinstance(i, JsonItem) and isinstance(i.value, list) for i in items)


@pytest.mark.rule("ACP-FRAME-003")
def test_reader_reports_oversize_lines_with_their_size() -> None:
    data = line(FRAME_A) + b"{" + b"x" * 500 + b"}\n" + line(FRAME_B)
    items = read(data, max_line_bytes=200)
    assert values(items)[0] == FRAME_A and values(items)[2] == FRAME_B
    oversize = items[1]
    assert isinstance(oversize, OversizeItem) and oversize.size == 502


TRANSCRIPT = (
    b"hello\n"
    + line(FRAME_A)
    + json.dumps(FRAME_B, indent=1).encode()
    + b"\r\n"
    + b"{\n"
    + line(FRAME_A)
    + json.dumps({"t": "caf\u00e9 \u2028"}, ensure_ascii=False).encode()
    + b"\n"
    + b"[1,\n2]"
)


def _repr(items: list[ReadItem]) -> list[Any]:
    return [(type(i).__name__, getattr(i, "value", None), getattr(i, "text", None)) for i in items]


@pytest.mark.rule("ACP-CHUNK-001")
@settings(max_examples=60)
@given(cuts=cut_points())
def test_reader_output_does_not_depend_on_chunking(cuts: list[int]) -> None:
    whole = _repr(read(TRANSCRIPT))
    reader = JsonLineReader(1 << 20)
    out: list[ReadItem] = []
    for part in split_at(TRANSCRIPT, cuts):
        out.extend(reader.feed(part))
    out.extend(reader.finish())
    assert _repr(out) == whole
    bytewise = JsonLineReader(1 << 20)
    out = []
    for i in range(len(TRANSCRIPT)):
        out.extend(bytewise.feed(TRANSCRIPT[i : i + 1]))
    out.extend(bytewise.finish())
    assert _repr(out) == whole


@pytest.mark.rule("ACP-ROBUST-001")
@settings(max_examples=200)
@given(st.lists(st.binary(max_size=40) | st.sampled_from([b"{\n", b"[\n", b"\n", b"}\n"])))
def test_reader_never_raises(chunks: list[bytes]) -> None:
    reader = JsonLineReader(64)
    for chunk in chunks:
        for item in reader.feed(chunk):
            assert isinstance(item, (JsonItem, NonJsonLine, OversizeItem))
    reader.finish()
    assert reader.pending_lines == 0
