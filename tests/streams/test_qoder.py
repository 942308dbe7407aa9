"""``qoder-stream-json`` parser (seed 000 §5.8, ref §2.4).

Rules: QODER-INIT-001, QODER-MAP-001, QODER-ERROR-001, QODER-RESULT-001,
QODER-RESULT-ERROR-001, QODER-RAW-001, QODER-ROBUST-001. Wire lines follow
ref §2.4 and the Claude-shaped records of the wire reference "Qoder CLI".
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.events import (
    Error,
    Event,
    Raw,
    Status,
    TextDelta,
    ThinkingDelta,
    ThinkingStart,
    Usage,
)
from harness.formats import UnknownStreamFormatError, create_parser
from harness.schemas import load_schema
from harness.streams.qoder import QoderStreamParser, create
from tests.helpers import as_json, assert_chunking_invariant, cut_points, jsonl, run_whole
from tests.support.examples import fuzz_sized

VALIDATOR = jsonschema.Draft202012Validator(load_schema("events.schema.json"))


def parse(data: bytes) -> list[Event]:
    events = run_whole(QoderStreamParser, data)
    for event in events:
        VALIDATOR.validate(event.to_json())
    return events


def line_of(obj: Any) -> str:
    return jsonl(obj).decode().rstrip("\n")


def assistant(*content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {"role": "assistant", "content": list(content)},
        **extra,
    }


SESSION = jsonl(
    {
        "type": "system",
        "subtype": "init",
        "session_id": "qs-1",
        "model": "auto",
        "qodercli_version": "1.1.52",
        "protocol_version": 1,
        "capabilities": ["x"],
    },
    assistant({"type": "thinking", "thinking": "consider"}),
    assistant({"type": "text", "text": "Héllo ✓ "}),
    assistant({"type": "tool_use", "id": "tu1", "name": "Write", "input": {"file_path": "a.md"}}),
    {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "tu1"}]}},
    assistant({"type": "thinking", "thinking": "again"}, {"type": "text", "text": "done 🎉"}),
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 2048,
        "total_cost_usd": 0.0125,
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5},
        "modelUsage": {"auto": {"inputTokens": 10}},
    },
)


def test_factory_is_registered_for_the_format_and_takes_no_dialect() -> None:
    assert isinstance(create_parser("qoder-stream-json"), QoderStreamParser)
    with pytest.raises(UnknownStreamFormatError):
        create("qoder")


@pytest.mark.rule("QODER-INIT-001")
def test_system_init_becomes_initializing_status_with_cli_version() -> None:
    events = parse(jsonl(json.loads(SESSION.splitlines()[0])))
    assert events == [
        Status(label="initializing", model="auto", session_id="qs-1", cli_version="1.1.52")
    ]


@pytest.mark.rule("QODER-INIT-001")
def test_system_init_drops_non_string_fields() -> None:
    obj = {"type": "system", "subtype": "init", "model": 3, "session_id": None}
    assert parse(jsonl(obj)) == [Status(label="initializing")]


@pytest.mark.rule("QODER-INIT-001", "QODER-RAW-001")
def test_other_system_subtypes_are_raw() -> None:
    obj = {"type": "system", "subtype": "status", "status": "compacting"}
    assert parse(jsonl(obj)) == [Raw(line=line_of(obj))]


@pytest.mark.rule("QODER-MAP-001")
def test_text_blocks_become_text_deltas_in_order() -> None:
    obj = assistant(
        {"type": "text", "text": "a"},
        {"text": "b"},
        {"type": "text", "text": ""},
        {"type": "text", "text": 5},
        {"type": "output_text", "text": "c"},
    )
    assert parse(jsonl(obj)) == [TextDelta(delta="a"), TextDelta(delta="b"), TextDelta(delta="c")]


@pytest.mark.rule("QODER-MAP-001")
def test_thinking_start_is_emitted_once_per_run() -> None:
    events = parse(
        jsonl(
            assistant({"type": "thinking", "thinking": "one"}),
            assistant(
                {"type": "thinking", "thinking": ""}, {"type": "thinking", "thinking": "two"}
            ),
        )
    )
    assert events == [
        ThinkingStart(),
        ThinkingDelta(delta="one"),
        ThinkingDelta(delta="two"),
    ]


@pytest.mark.rule("QODER-MAP-001")
def test_string_content_is_text_even_when_empty() -> None:
    events = parse(
        jsonl(
            {"type": "assistant", "message": {"content": "whole message"}},
            # An empty string still counts as text, so the error is not reported (ref §2.4).
            {"type": "assistant", "message": {"content": ""}, "error": "ignored"},
        )
    )
    assert events == [TextDelta(delta="whole message"), TextDelta(delta="")]


@pytest.mark.rule("QODER-ERROR-001")
@pytest.mark.parametrize(
    ("error", "message"),
    [
        ({"message": "rate limited", "type": "rate_limit"}, "rate limited"),
        ({"message": ""}, ""),
        ("authentication_failed", "authentication_failed"),
        ({}, "Unknown Qoder error"),
        ([], "Unknown Qoder error"),
        (True, "Unknown Qoder error"),
        (429, "Unknown Qoder error"),
    ],
)
def test_assistant_error_without_text_is_an_error_event(error: Any, message: str) -> None:
    obj = assistant({"type": "tool_use", "id": "x"}, error=error)
    assert parse(jsonl(obj)) == [Error(message=message, raw=line_of(obj))]


@pytest.mark.rule("QODER-ERROR-001")
def test_assistant_error_with_text_is_not_reported() -> None:
    obj = assistant({"type": "text", "text": "Not logged in"}, error={"message": "auth"})
    assert parse(jsonl(obj)) == [TextDelta(delta="Not logged in")]


@pytest.mark.rule("QODER-ERROR-001", "QODER-RAW-001")
@pytest.mark.parametrize("error", ["", 0, False, None])
def test_falsy_error_is_no_error_and_the_empty_record_is_raw(error: Any) -> None:
    obj = assistant(error=error)
    assert parse(jsonl(obj)) == [Raw(line=line_of(obj))]


@pytest.mark.rule("QODER-RESULT-001")
def test_result_becomes_usage() -> None:
    events = parse(jsonl(json.loads(SESSION.splitlines()[-1])))
    assert events == [
        Usage(
            usage={"input_tokens": 10, "output_tokens": 5},
            model_usage={"auto": {"inputTokens": 10}},
            cost_usd=0.0125,
            duration_ms=2048,
            stop_reason="end_turn",
            is_error=False,
        )
    ]


@pytest.mark.rule("QODER-RESULT-001")
def test_result_fields_of_the_wrong_type_are_left_out() -> None:
    obj = {
        "type": "result",
        "usage": [1],
        "total_cost_usd": "0.1",
        "duration_ms": True,
        "stop_reason": 3,
        "modelUsage": None,
    }
    assert parse(jsonl(obj)) == [Usage(is_error=False)]


@pytest.mark.rule("QODER-RESULT-ERROR-001")
@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"error": "quota exceeded", "message": "m", "stop_reason": "s"}, "quota exceeded"),
        ({"error": {"message": "nested"}, "message": "m"}, "nested"),
        ({"error": {"message": ""}, "message": "top message"}, "top message"),
        (
            {"error": "", "stop_reason": "authentication_failed"},
            "Qoder run failed: authentication_failed",
        ),
        ({}, "Qoder run failed"),
    ],
)
def test_failed_result_also_yields_an_error_after_usage(
    fields: dict[str, Any], message: str
) -> None:
    obj = {"type": "result", "subtype": "error_during_execution", "is_error": True, **fields}
    events = parse(jsonl(obj))
    assert [type(e) for e in events] == [Usage, Error]
    assert isinstance(events[0], Usage) and events[0].is_error is True
    assert events[1] == Error(message=message, raw=line_of(obj))


@pytest.mark.rule("QODER-RESULT-ERROR-001")
@pytest.mark.parametrize(
    ("flag", "is_error"), [(1, True), ("yes", True), ({}, True), (0, False), ("", False)]
)
def test_is_error_uses_javascript_truthiness(flag: Any, is_error: bool) -> None:
    events = parse(jsonl({"type": "result", "is_error": flag}))
    assert isinstance(events[0], Usage) and events[0].is_error is is_error
    assert len(events) == (2 if is_error else 1)


@pytest.mark.rule("QODER-RAW-001")
def test_unknown_records_and_bad_lines_are_raw() -> None:
    records = [
        {"type": "user", "message": {"content": [{"type": "tool_result"}]}},
        {"type": "keep_alive"},
        {"type": "assistant", "message": None},
        {"type": "assistant", "message": ["x"]},
        {"no_type": True},
    ]
    data = jsonl(*records) + b"oops {\n[1]\n"
    expected = [Raw(line=line_of(r)) for r in records] + [Raw(line="oops {"), Raw(line="[1]")]
    assert parse(data) == expected


@pytest.mark.rule("QODER-RAW-001")
def test_a_large_unclaimed_record_is_raw_within_the_raw_budget() -> None:
    data = jsonl({"type": "transcript_mirror", "text": "x" * 70_000})
    [event] = parse(data)
    assert isinstance(event, Raw) and event.truncated_bytes == len(data) - 1
    assert data.decode().startswith(event.line) and len(event.line) == 64 * 1024


@pytest.mark.rule("QODER-ROBUST-001", "QODER-RAW-001")
def test_deeply_nested_json_line_is_raw_not_a_crash() -> None:
    # Deeper than Python's parser recursion, still under the 64 KiB raw budget.
    line = b'{"a":' * 10_000 + b"1" + b"}" * 10_000
    assert parse(line + b"\n") == [Raw(line=line.decode())]


@pytest.mark.rule("QODER-ROBUST-001")
def test_a_whole_session_maps_as_documented() -> None:
    events = assert_chunking_invariant(QoderStreamParser, SESSION)
    lines = SESSION.decode().splitlines()
    assert as_json(events) == [
        {
            "type": "status",
            "label": "initializing",
            "model": "auto",
            "session_id": "qs-1",
            "cli_version": "1.1.52",
        },
        {"type": "thinking_start"},
        {"type": "thinking_delta", "delta": "consider"},
        {"type": "text_delta", "delta": "Héllo ✓ "},
        {"type": "raw", "line": lines[3]},
        {"type": "raw", "line": lines[4]},
        {"type": "thinking_delta", "delta": "again"},
        {"type": "text_delta", "delta": "done 🎉"},
        {
            "type": "usage",
            "usage": {"input_tokens": 10, "output_tokens": 5},
            "cost_usd": 0.0125,
            "duration_ms": 2048,
            "stop_reason": "end_turn",
            "is_error": False,
            "model_usage": {"auto": {"inputTokens": 10}},
        },
    ]


@pytest.mark.rule("QODER-ROBUST-001")
@given(cuts=cut_points())
def test_any_chunking_of_a_valid_stream_gives_the_same_events(cuts: list[int]) -> None:
    assert_chunking_invariant(QoderStreamParser, SESSION, cuts)


@pytest.mark.rule("QODER-ROBUST-001")
@given(data=st.binary(max_size=512), cuts=cut_points())
def test_arbitrary_bytes_never_raise(data: bytes, cuts: list[int]) -> None:
    for event in assert_chunking_invariant(QoderStreamParser, data, cuts):
        VALIDATOR.validate(event.to_json())


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["type", "text", "thinking", "message"]), inner, max_size=3
        )
    ),
    max_leaves=8,
)
_RECORD = st.fixed_dictionaries(
    {"type": st.sampled_from(["system", "assistant", "result", "user", "stream_event"])},
    optional={
        "subtype": st.sampled_from(["init", "success", "status"]),
        "message": _VALUES,
        "error": _VALUES,
        "is_error": _VALUES,
        "usage": _VALUES,
        "modelUsage": _VALUES,
        "total_cost_usd": _VALUES,
        "duration_ms": _VALUES,
        "stop_reason": _VALUES,
        "model": _VALUES,
        "qodercli_version": _VALUES,
    },
)


@pytest.mark.rule("QODER-ROBUST-001", "QODER-RAW-001")
@fuzz_sized(100)
@given(records=st.lists(_RECORD, max_size=6), cuts=cut_points())
def test_well_formed_lines_with_odd_payloads_each_yield_valid_events(
    records: list[dict[str, Any]], cuts: list[int]
) -> None:
    events = assert_chunking_invariant(QoderStreamParser, jsonl(*records), cuts)
    for event in events:
        VALIDATOR.validate(event.to_json())
    assert len(events) >= len(records)
    assert sum(isinstance(e, ThinkingStart) for e in events) <= 1
