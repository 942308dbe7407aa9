"""``copilot-stream-json`` parser (seed 000 §5.7, ref §2.3).

Rules: COPILOT-STATUS-001, COPILOT-MAP-001, COPILOT-TOOL-001, COPILOT-RESULT-001,
COPILOT-RAW-001, COPILOT-ROBUST-001. Wire lines are written from the shapes in
ref §2.3 and wire reference "GitHub Copilot CLI".
"""

from __future__ import annotations

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
    ToolResult,
    ToolUse,
    Usage,
)
from harness.formats import UnknownStreamFormatError, create_parser
from harness.schemas import load_schema
from harness.streams.copilot import (
    CopilotStreamParser,
    create,
    js_json_stringify,
    stringify_result,
)
from tests.helpers import as_json, assert_chunking_invariant, cut_points, jsonl, run_whole
from tests.support.examples import fuzz_sized

VALIDATOR = jsonschema.Draft202012Validator(load_schema("events.schema.json"))


def parse(data: bytes) -> list[Event]:
    events = run_whole(CopilotStreamParser, data)
    for event in events:
        VALIDATOR.validate(event.to_json())
    return events


def one(obj: Any) -> list[Event]:
    return parse(jsonl(obj))


# A whole run as ref §2.3 / the wire reference describe it.
SESSION = jsonl(
    {"type": "session.start", "data": {"sessionId": "s-1"}, "ephemeral": True},
    {"type": "session.tools_updated", "data": {"model": "claude-sonnet-4.6"}, "ephemeral": True},
    {"type": "assistant.turn_start", "data": {"turnId": "0"}},
    {"type": "assistant.reasoning_delta", "data": {"deltaContent": "Plan: "}, "ephemeral": True},
    {"type": "assistant.message_delta", "data": {"deltaContent": "Writing é ✓ "}},
    {
        "type": "tool.execution_start",
        "data": {"toolCallId": "call_1", "toolName": "create", "arguments": {"path": "a.html"}},
    },
    {
        "type": "tool.execution_complete",
        "data": {"toolCallId": "call_1", "success": True, "result": {"content": "Created"}},
    },
    {"type": "assistant.message_delta", "data": {"deltaContent": "done 🎉"}},
    {"type": "assistant.message", "data": {"content": "Writing é ✓ done 🎉"}},
    {
        "type": "result",
        "success": True,
        "exitCode": 0,
        "usage": {"premiumRequests": 1, "totalApiDurationMs": 900, "sessionDurationMs": 1234},
    },
)


def test_factory_is_registered_for_the_format_and_takes_no_dialect() -> None:
    assert isinstance(create_parser("copilot-stream-json"), CopilotStreamParser)
    with pytest.raises(UnknownStreamFormatError):
        create("copilot")


@pytest.mark.rule("COPILOT-STATUS-001")
def test_tools_updated_with_model_is_initializing_and_turn_start_is_streaming() -> None:
    events = parse(
        jsonl(
            {"type": "session.tools_updated", "data": {"model": "gpt-5.2"}},
            {"type": "assistant.turn_start", "data": {}},
        )
    )
    assert events == [Status(label="initializing", model="gpt-5.2"), Status(label="streaming")]


@pytest.mark.rule("COPILOT-STATUS-001", "COPILOT-RAW-001")
@pytest.mark.parametrize("data", [{}, {"model": ""}, {"model": None}, {"model": 7}, []])
def test_tools_updated_without_a_model_string_is_raw(data: Any) -> None:
    obj = {"type": "session.tools_updated", "data": data}
    events = one(obj)
    assert len(events) == 1 and isinstance(events[0], Raw)


@pytest.mark.rule("COPILOT-MAP-001")
def test_reasoning_and_message_deltas_map_to_thinking_and_text() -> None:
    events = parse(
        jsonl(
            {"type": "assistant.reasoning_delta", "data": {"deltaContent": "think"}},
            {"type": "assistant.message_delta", "data": {"deltaContent": "say"}},
            {"type": "assistant.message_delta", "data": {"deltaContent": ""}},
        )
    )
    assert events == [ThinkingDelta(delta="think"), TextDelta(delta="say"), TextDelta(delta="")]


@pytest.mark.rule("COPILOT-MAP-001", "COPILOT-RAW-001")
@pytest.mark.parametrize("delta", [None, 3, ["a"], {"text": "a"}])
def test_delta_without_string_content_is_raw(delta: Any) -> None:
    line = {"type": "assistant.message_delta", "data": {"deltaContent": delta}}
    events = one(line)
    assert [type(e) for e in events] == [Raw]


@pytest.mark.rule("COPILOT-TOOL-001")
def test_tool_execution_start_and_complete() -> None:
    events = parse(
        jsonl(
            {
                "type": "tool.execution_start",
                "data": {"toolCallId": "t1", "toolName": "edit", "arguments": {"path": "x"}},
            },
            {
                "type": "tool.execution_complete",
                "data": {"toolCallId": "t1", "success": False, "result": "boom"},
            },
        )
    )
    assert events == [
        ToolUse(id="t1", name="edit", input={"path": "x"}),
        ToolResult(tool_use_id="t1", content="boom", is_error=True),
    ]


@pytest.mark.rule("COPILOT-TOOL-001")
def test_tool_fields_default_to_null_and_success_must_be_false_for_an_error() -> None:
    events = parse(
        jsonl(
            {"type": "tool.execution_start", "data": {}},
            {"type": "tool.execution_complete", "data": {"toolCallId": "t2"}},
            {"type": "tool.execution_complete", "data": {"toolCallId": "t3", "success": 0}},
        )
    )
    assert events == [
        ToolUse(id=None, name=None, input=None),
        ToolResult(tool_use_id="t2", content="", is_error=False),
        ToolResult(tool_use_id="t3", content="", is_error=False),
    ]


@pytest.mark.rule("COPILOT-TOOL-001", "COPILOT-RAW-001")
def test_tool_with_a_non_string_id_is_raw() -> None:
    events = parse(
        jsonl(
            {"type": "tool.execution_start", "data": {"toolCallId": 5, "toolName": "x"}},
            {"type": "tool.execution_complete", "data": {"toolCallId": {"a": 1}}},
        )
    )
    assert [type(e) for e in events] == [Raw, Raw]


@pytest.mark.rule("COPILOT-TOOL-001")
@pytest.mark.parametrize(
    ("result", "text"),
    [
        (None, ""),
        ("plain text", "plain text"),
        ({"content": "short", "detailedContent": "long"}, "short"),
        ({"content": 1, "detailedContent": "long"}, "long"),
        (
            {"contents": [{"type": "terminal", "exitCode": 0}]},
            '{"contents":[{"type":"terminal","exitCode":0}]}',
        ),
        ([1, "a", None, True], '[1,"a",null,true]'),
        (42, "42"),
        (False, "false"),
    ],
)
def test_stringify_result(result: Any, text: str) -> None:
    assert stringify_result(result) == text
    events = one({"type": "tool.execution_complete", "data": {"toolCallId": "t", "result": result}})
    assert events == [ToolResult(tool_use_id="t", content=text, is_error=False)]


@pytest.mark.rule("COPILOT-TOOL-001")
@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        # JavaScript prints numbers and orders keys its own way (ECMA-262 Number::toString,
        # OrdinaryOwnPropertyKeys); a tool_result's JSON text must match upstream's.
        (b'{"b":1,"2":true,"10":null,"01":0,"a":2}', '{"2":true,"10":null,"b":1,"01":0,"a":2}'),
        (b"[1.0, 2.50, -0.0, 1e21, 1e-7, 0.000001, 123e-2]", "[1,2.5,0,1e+21,1e-7,0.000001,1.23]"),
        (b"[9007199254740993, 1152921504606846976]", "[9007199254740992,1152921504606847000]"),
        (b"[1e400]", "[null]"),
        (
            b'["tab\\t", "nl\\n", "ctl\\u0001", "quote\\"", "lone\\ud800", "\\u2028"]',
            '["tab\\t","nl\\n","ctl\\u0001","quote\\"","lone\\ud800","\u2028"]',
        ),
    ],
)
def test_json_text_matches_javascript(wire: bytes, expected: str) -> None:
    import json

    assert js_json_stringify(json.loads(wire)) == expected


@pytest.mark.rule("COPILOT-TOOL-001")
def test_deeply_nested_result_is_stringified_without_recursion() -> None:
    value: Any = "x"
    for _ in range(50_000):
        value = [value]
    assert js_json_stringify(value) == "[" * 50_000 + '"x"' + "]" * 50_000


@pytest.mark.rule("COPILOT-RESULT-001")
@pytest.mark.parametrize(
    ("fields", "stop_reason"),
    [
        ({"success": True, "exitCode": 0}, "completed"),
        ({"success": True}, "completed"),
        ({"success": False, "exitCode": 0}, "completed"),
        ({"exitCode": 0.0}, "completed"),
        ({"success": False, "exitCode": 1}, "error"),
        ({"exitCode": False}, "error"),
        ({"success": "true"}, "error"),
        ({}, "error"),
    ],
)
def test_result_stop_reason(fields: dict[str, Any], stop_reason: str) -> None:
    events = one({"type": "result", **fields})
    assert events == [Usage(usage=None, stop_reason=stop_reason, duration_ms=None)]


@pytest.mark.rule("COPILOT-RESULT-001")
def test_result_usage_and_duration_are_top_level() -> None:
    usage = {"premiumRequests": 2, "totalApiDurationMs": 10, "sessionDurationMs": 4321}
    events = parse(
        jsonl(
            {"type": "result", "success": True, "usage": usage},
            # Under `data` is not where `result` keeps them.
            {"type": "result", "success": True, "data": {"usage": usage}},
            {"type": "result", "success": True, "usage": {"sessionDurationMs": "12"}},
        )
    )
    assert events == [
        Usage(usage=usage, stop_reason="completed", duration_ms=4321),
        Usage(usage=None, stop_reason="completed", duration_ms=None),
        Usage(usage={"sessionDurationMs": "12"}, stop_reason="completed", duration_ms=None),
    ]


@pytest.mark.rule("COPILOT-RAW-001")
def test_unknown_types_non_json_and_non_objects_are_raw() -> None:
    data = (
        b'{"type":"session.mcp_server_status","data":{"status":"ok"}}\n'
        b'  {"type":"assistant.message","data":{"content":"hi"}}  \r\n'
        b'{"type":7}\n'
        b'{"data":{}}\n'
        b"[1,2]\n"
        b"not json\n"
        b"\n"
    )
    events = parse(data)
    assert events == [
        Raw(line='{"type":"session.mcp_server_status","data":{"status":"ok"}}'),
        Raw(line='{"type":"assistant.message","data":{"content":"hi"}}'),
        Raw(line='{"type":7}'),
        Raw(line='{"data":{}}'),
        Raw(line="[1,2]"),
        Raw(line="not json"),
    ]


@pytest.mark.rule("COPILOT-RAW-001")
def test_a_large_unclaimed_record_is_raw_within_the_raw_budget() -> None:
    data = jsonl({"type": "session.log", "data": {"text": "x" * 70_000}})
    [event] = parse(data)
    assert isinstance(event, Raw) and event.truncated_bytes == len(data) - 1
    assert data.decode().startswith(event.line) and len(event.line) == 64 * 1024


@pytest.mark.rule("COPILOT-ROBUST-001", "COPILOT-RAW-001")
def test_deeply_nested_json_line_is_raw_not_a_crash() -> None:
    # Deeper than Python's parser recursion, still under the 64 KiB raw budget.
    line = b"[" * 30_000 + b"]" * 30_000
    events = parse(line + b"\n" + jsonl({"type": "assistant.turn_start"}))
    assert events == [Raw(line=line.decode()), Status(label="streaming")]


@pytest.mark.rule("COPILOT-ROBUST-001")
def test_a_whole_session_maps_as_documented() -> None:
    events = assert_chunking_invariant(CopilotStreamParser, SESSION)
    assert as_json(events) == [
        {
            "type": "raw",
            "line": '{"type": "session.start", "data": {"sessionId": "s-1"}, "ephemeral": true}',
        },
        {"type": "status", "label": "initializing", "model": "claude-sonnet-4.6"},
        {"type": "status", "label": "streaming"},
        {"type": "thinking_delta", "delta": "Plan: "},
        {"type": "text_delta", "delta": "Writing é ✓ "},
        {"type": "tool_use", "id": "call_1", "name": "create", "input": {"path": "a.html"}},
        {"type": "tool_result", "tool_use_id": "call_1", "content": "Created", "is_error": False},
        {"type": "text_delta", "delta": "done 🎉"},
        {
            "type": "raw",
            "line": '{"type": "assistant.message", "data": {"content": "Writing é ✓ done 🎉"}}',
        },
        {
            "type": "usage",
            "usage": {"premiumRequests": 1, "totalApiDurationMs": 900, "sessionDurationMs": 1234},
            "duration_ms": 1234,
            "stop_reason": "completed",
        },
    ]


@pytest.mark.rule("COPILOT-ROBUST-001")
def test_final_line_without_newline_is_flushed() -> None:
    assert parse(SESSION.rstrip(b"\n"))[-1] == parse(SESSION)[-1]


@pytest.mark.rule("COPILOT-ROBUST-001")
@given(cuts=cut_points())
def test_any_chunking_of_a_valid_stream_gives_the_same_events(cuts: list[int]) -> None:
    assert_chunking_invariant(CopilotStreamParser, SESSION, cuts)


@pytest.mark.rule("COPILOT-ROBUST-001")
@given(data=st.binary(max_size=512), cuts=cut_points())
def test_arbitrary_bytes_never_raise(data: bytes, cuts: list[int]) -> None:
    events = assert_chunking_invariant(CopilotStreamParser, data, cuts)
    for event in events:
        VALIDATOR.validate(event.to_json())


_WIRE_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
_TYPES = st.sampled_from(
    [
        "session.tools_updated",
        "assistant.turn_start",
        "assistant.reasoning_delta",
        "assistant.message_delta",
        "tool.execution_start",
        "tool.execution_complete",
        "result",
        "session.shutdown",
    ]
)
_FIELDS = st.sampled_from(
    [
        "data",
        "model",
        "deltaContent",
        "toolCallId",
        "toolName",
        "arguments",
        "result",
        "success",
        "exitCode",
        "usage",
        "sessionDurationMs",
    ]
)


@pytest.mark.rule("COPILOT-ROBUST-001", "COPILOT-RAW-001")
@fuzz_sized(100)
@given(
    records=st.lists(
        st.fixed_dictionaries(
            {"type": _TYPES},
            optional={"data": st.dictionaries(_FIELDS, _WIRE_VALUES, max_size=4)},
        ).flatmap(
            lambda r: st.dictionaries(_FIELDS, _WIRE_VALUES, max_size=3).map(lambda x: {**x, **r})
        ),
        max_size=6,
    ),
    cuts=cut_points(),
)
def test_well_formed_lines_with_odd_payloads_each_yield_valid_events(
    records: list[dict[str, Any]], cuts: list[int]
) -> None:
    data = jsonl(*records)
    events = assert_chunking_invariant(CopilotStreamParser, data, cuts)
    for event in events:
        VALIDATOR.validate(event.to_json())
    # Nothing is dropped: every record yields at least one event.
    assert len(events) >= len(records)


@pytest.mark.rule("COPILOT-ERROR-001")
def test_session_error_is_one_error_that_does_not_end_the_stream() -> None:
    failed = {
        "type": "session.error",
        "data": {
            "errorType": "query",
            "message": "Failed to get response from the AI model; retried 5 times",
            "statusCode": 500,
        },
    }
    assert one(failed) == [
        Error(
            message="Failed to get response from the AI model; retried 5 times",
            code="query",
            terminal=False,
        )
    ]
    untyped = {"type": "session.error", "data": {"message": "boom"}}
    assert one(untyped) == [Error(message="boom", code=None, terminal=False)]
    for data in ({"message": ""}, {"message": 7}, {}):
        line = {"type": "session.error", "data": data}
        assert [type(e) for e in one(line)] == [Raw]


@pytest.mark.rule("COPILOT-SESSION-001", "COPILOT-RESULT-001")
def test_the_results_session_id_is_a_status_before_its_usage() -> None:
    sid = "a88e367d-5c63-4c4b-95f0-48eadafc30d8"
    events = parse(
        jsonl(
            {"type": "result", "sessionId": sid, "exitCode": 0},
            {"type": "result", "sessionId": "", "exitCode": 0},
            {"type": "result", "sessionId": 7, "exitCode": 0},
        )
    )
    done = Usage(usage=None, stop_reason="completed", duration_ms=None)
    assert events == [Status(label="session", session_id=sid), done, done, done]
