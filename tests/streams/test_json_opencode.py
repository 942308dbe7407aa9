"""The opencode dialect of json-event-stream (``opencode run --format json``).

Wire lines are written by hand from wire §A.5 "OpenCode" (``{type, timestamp,
sessionID, part}`` with ``step_start``, ``text``, ``tool_use``,
``step_finish``, ``error``) and ref §2.2 "opencode".

Rules: OPENCODE-SESSION-001, OPENCODE-TEXT-001, OPENCODE-DEDUPE-001,
OPENCODE-ISERROR-001, OPENCODE-USAGE-001, OPENCODE-ERROR-001, JSONEV-CHUNK-001.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from harness.streams.json_events import JsonEventStreamParser, create
from tests.helpers import as_json, assert_chunking_invariant, cut_points, jsonl, run_chunked

SID = "ses_6a1f0c2e5ffe1bQm9Yx2"
TS = 1_760_000_000_000


def factory() -> JsonEventStreamParser:
    return create("opencode")


def parse(*objects: Any) -> list[dict[str, Any]]:
    return as_json(assert_chunking_invariant(factory, jsonl(*objects)))


def tool(call_id: str, name: str = "bash", session: Any = SID, **state: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "type": "tool_use",
        "timestamp": TS,
        "part": {
            "id": "prt_1",
            "sessionID": session,
            "messageID": "msg_1",
            "type": "tool",
            "tool": name,
            "callID": call_id,
            "state": state,
        },
    }
    if session is not None:
        obj["sessionID"] = session
    return obj


# -- OPENCODE-SESSION-001 ---------------------------------------------------------


@pytest.mark.rule("OPENCODE-SESSION-001")
def test_opencode_session_001_step_start_carries_session() -> None:
    step = {
        "type": "step_start",
        "timestamp": TS,
        "sessionID": SID,
        "part": {"type": "step-start", "snapshot": "4b825dc6"},
    }
    assert parse(step) == [{"type": "status", "label": "running", "session_id": SID}]
    assert parse({"type": "step_start", "sessionID": ""}) == [
        {"type": "status", "label": "running"}
    ]


#: An error frame as opencode 1.18.33 prints it when the provider fails before any step.
_API_ERROR = {
    "type": "error",
    "timestamp": TS,
    "sessionID": SID,
    "error": {
        "name": "APIError",
        "data": {"message": "Internal server error", "statusCode": 500, "isRetryable": True},
    },
}


@pytest.mark.rule("OPENCODE-SESSION-001", "OPENCODE-ERROR-001")
def test_opencode_session_001_a_failed_run_names_its_session_on_the_error_frame() -> None:
    events = parse(_API_ERROR)
    assert events[0] == {"type": "status", "label": "session", "session_id": SID}
    assert [e["type"] for e in events] == ["status", "error"]
    assert events[1]["message"] == "Internal server error"


@pytest.mark.rule("OPENCODE-SESSION-001")
def test_opencode_session_001_an_error_repeats_no_session_already_reported() -> None:
    step = {"type": "step_start", "timestamp": TS, "sessionID": SID, "part": {}}
    events = parse(step, _API_ERROR, _API_ERROR)
    assert [(e["type"], e.get("session_id")) for e in events] == [
        ("status", SID),
        ("error", None),
        ("error", None),
    ]
    other = {**_API_ERROR, "sessionID": "ses_other"}
    assert [e.get("session_id") for e in parse(step, other) if e["type"] == "status"] == [
        SID,
        "ses_other",
    ]


@pytest.mark.rule("OPENCODE-SESSION-001")
@pytest.mark.parametrize("session", ["", None, 7, ["ses_x"]], ids=repr)
def test_opencode_session_001_an_error_without_a_string_session_reports_none(
    session: Any,
) -> None:
    frame = {**_API_ERROR, "sessionID": session}
    assert [e["type"] for e in parse(frame)] == ["error"]


@pytest.mark.rule("OPENCODE-SESSION-001", "JSONEV-CHUNK-001")
@settings(deadline=None)
@given(cuts=cut_points())
def test_opencode_session_001_the_error_session_survives_any_chunking(cuts: list[int]) -> None:
    data = jsonl({"type": "text", "sessionID": SID, "part": {"text": "partial"}}, _API_ERROR)
    events = as_json(assert_chunking_invariant(factory, data, cuts))
    assert [e.get("session_id") for e in events if e["type"] == "status"] == [SID]


# -- OPENCODE-TEXT-001 ------------------------------------------------------------


@pytest.mark.rule("OPENCODE-TEXT-001")
def test_opencode_text_001_text_part() -> None:
    text = {
        "type": "text",
        "timestamp": TS,
        "sessionID": SID,
        "part": {"type": "text", "text": "Hello from OpenCode.", "time": {"end": TS}},
    }
    assert parse(text) == [{"type": "text_delta", "delta": "Hello from OpenCode."}]
    empty = {"type": "text", "sessionID": SID, "part": {"type": "text", "text": ""}}
    assert parse(empty) == [{"type": "raw", "line": json.dumps(empty)}]


# -- OPENCODE-DEDUPE-001 ----------------------------------------------------------


@pytest.mark.rule("OPENCODE-DEDUPE-001")
def test_opencode_dedupe_001_started_and_completed_lines() -> None:
    events = parse(
        tool("call_1", status="running", input={"command": "ls"}),
        tool("call_1", status="completed", input={"command": "ls"}, output="index.html\n"),
        tool("call_1", status="completed", input={"command": "ls"}, output="index.html\n"),
    )
    assert events == [
        {"type": "tool_use", "id": "call_1", "name": "bash", "input": {"command": "ls"}},
        {
            "type": "tool_result",
            "tool_use_id": "call_1",
            "content": "index.html\n",
            "is_error": False,
        },
    ]


@pytest.mark.rule("OPENCODE-DEDUPE-001")
def test_opencode_dedupe_001_key_includes_the_session() -> None:
    events = parse(
        tool("call_1", status="completed", output="a"),
        tool("call_1", session="ses_other", status="completed", output="b"),
        tool("call_1", session=None, status="completed", output="c"),
        tool("call_1", session="", status="completed", output="d"),  # '' || 'session'
    )
    assert [(e["type"], e.get("content")) for e in events] == [
        ("tool_use", None),
        ("tool_result", "a"),
        ("tool_use", None),
        ("tool_result", "b"),
        ("tool_use", None),
        ("tool_result", "c"),
    ]


@pytest.mark.rule("OPENCODE-DEDUPE-001")
@pytest.mark.parametrize(
    ("raw_input", "expected"),
    [
        ('{"filePath": "a.md"}', {"filePath": "a.md"}),  # JSON-string input is parsed
        ("not json", "not json"),
        ("null", "null"),
        (7, 7),
        (None, None),
    ],
)
def test_opencode_dedupe_001_tool_input(raw_input: Any, expected: Any) -> None:
    events = parse(tool("c", name="write", status="pending", input=raw_input))
    assert events == [{"type": "tool_use", "id": "c", "name": "write", "input": expected}]


# -- OPENCODE-ISERROR-001 ---------------------------------------------------------

_PS_RECORD = (
    "Remove-Item : Cannot find path 'C:\\p\\x' because it does not exist.\r\n"
    "At line:1 char:1\r\n"
    "+ Remove-Item x\r\n"
    "+ ~~~~~~~~~~~~~\r\n"
    "    + CategoryInfo          : ObjectNotFound: (C:\\p\\x:String) [Remove-Item], "
    "ItemNotFoundException\r\n"
    "    + FullyQualifiedErrorId : PathNotFound,Microsoft.PowerShell.Commands.RemoveItemCommand\r\n"
)


@pytest.mark.rule("OPENCODE-ISERROR-001")
@pytest.mark.parametrize(
    ("name", "state", "content", "is_error"),
    [
        ("bash", {"status": "completed", "output": "ok"}, "ok", False),
        ("bash", {"status": "error", "error": "Command failed"}, "Command failed", True),
        ("bash", {"status": "FAILED", "output": "x"}, "x", True),
        ("read", {"status": "completed", "error": "boom", "output": "x"}, "boom", True),
        ("read", {"status": "completed", "error": {"code": 1}}, '{"code":1}', True),
        ("read", {"status": "completed", "error": "  ", "output": "x"}, "x", False),
        ("read", {"status": "completed", "error": {}, "output": "x"}, "x", False),
        ("read", {"status": "completed", "error": False, "output": "x"}, "x", False),
        ("read", {"status": "completed", "error": 0, "output": "x"}, "x", False),
        ("bash", {"status": "completed", "exit": 1, "output": "x"}, "x", True),
        ("bash", {"status": "completed", "exitCode": 2, "output": "x"}, "x", True),
        ("bash", {"status": "completed", "metadata": {"exit": 127}, "output": "x"}, "x", True),
        ("bash", {"status": "completed", "exit": 0, "exitCode": 0, "output": "x"}, "x", False),
        ("bash", {"status": "completed", "exit": True, "output": "x"}, "x", False),
        ("bash", {"status": "completed", "output": _PS_RECORD}, _PS_RECORD, True),
        ("shell", {"status": "completed", "output": _PS_RECORD}, _PS_RECORD, True),
        ("read", {"status": "completed", "output": _PS_RECORD}, _PS_RECORD, False),
        (
            "bash",
            {"status": "completed", "output": "+ CategoryInfo : only one field, failed"},
            "+ CategoryInfo : only one field, failed",
            False,
        ),
        ("bash", {"status": "completed", "output": {"lines": 2}}, '{"lines":2}', False),
    ],
)
def test_opencode_iserror_001_is_error_rules(
    name: str, state: dict[str, Any], content: str, is_error: bool
) -> None:
    events = parse(tool("call_9", name=name, **state))
    assert events[-1] == {
        "type": "tool_result",
        "tool_use_id": "call_9",
        "content": content,
        "is_error": is_error,
    }


@pytest.mark.rule("OPENCODE-ISERROR-001")
@pytest.mark.parametrize("status", ["running", "pending", "", None])
def test_opencode_iserror_001_unfinished_tool_has_no_result(status: Any) -> None:
    assert [e["type"] for e in parse(tool("c", status=status, output="x"))] == ["tool_use"]


# -- OPENCODE-USAGE-001 -----------------------------------------------------------


@pytest.mark.rule("OPENCODE-USAGE-001")
def test_opencode_usage_001_step_finish_usage() -> None:
    finish = {
        "type": "step_finish",
        "timestamp": TS,
        "sessionID": SID,
        "part": {
            "type": "step-finish",
            "reason": "stop",
            "cost": 0.0123,
            "tokens": {
                "input": 1200,
                "output": 80,
                "reasoning": 16,
                "cache": {"read": 1000, "write": 5},
                "total": 2301,
            },
        },
    }
    assert parse(finish) == [
        {
            "type": "usage",
            "usage": {
                "input_tokens": 1200,
                "output_tokens": 80,
                "thought_tokens": 16,
                "cached_read_tokens": 1000,
                "cached_write_tokens": 5,
            },
            "cost_usd": 0.0123,
        }
    ]


@pytest.mark.rule("OPENCODE-USAGE-001")
@pytest.mark.parametrize(
    "part",
    [
        {"type": "step-finish", "reason": "tool-calls"},
        {"tokens": {}, "cost": 0.5},
        {"tokens": {"input": "12", "cache": {"read": None}}},
        {"tokens": {"total": 99}},
    ],
)
def test_opencode_usage_001_no_token_field_no_usage(part: dict[str, Any]) -> None:
    # Claimed (not raw) but silent.
    assert parse({"type": "step_finish", "sessionID": SID, "part": part}) == []


@pytest.mark.rule("OPENCODE-USAGE-001")
def test_opencode_usage_001_one_cache_field_is_enough() -> None:
    events = parse(
        {"type": "step_finish", "part": {"tokens": {"cache": {"write": 3}}, "cost": "1"}}
    )
    assert events == [{"type": "usage", "usage": {"cached_write_tokens": 3}}]


# -- OPENCODE-ERROR-001 -----------------------------------------------------------


@pytest.mark.rule("OPENCODE-ERROR-001")
@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (
            {
                "type": "error",
                "timestamp": TS,
                "sessionID": SID,
                "error": {
                    "name": "ProviderAuthError",
                    "data": {"providerID": "mock", "message": "Invalid API key"},
                },
            },
            "Invalid API key",
        ),
        (
            {"type": "error", "error": {"name": "APIError", "data": {"statusCode": 500}}},
            "APIError",
        ),
        (
            {
                "type": "error",
                "error": {"message": json.dumps({"error": {"message": "insufficient_quota"}})},
            },
            "insufficient_quota",
        ),
        ({"type": "error", "message": "plain text failure"}, "plain text failure"),
        ({"type": "error"}, "OpenCode error"),
        ({"type": "error", "error": False}, "OpenCode error"),
    ],
)
def test_opencode_error_001_error_frames(frame: dict[str, Any], message: str) -> None:
    # The status naming the frame's session is OPENCODE-SESSION-001's.
    assert [e for e in parse(frame) if e["type"] != "status"] == [
        {"type": "error", "message": message, "raw": json.dumps(frame, separators=(",", ":"))}
    ]


# -- JSONEV-CHUNK-001 (opencode) ----------------------------------------------------

_STREAM = jsonl(
    {"type": "step_start", "timestamp": TS, "sessionID": SID, "part": {"type": "step-start"}},
    {"type": "text", "sessionID": SID, "part": {"type": "text", "text": "Écrit ✓\u2029ok"}},
    tool("call_1", name="write", status="running", input={"filePath": "a.html", "content": "<p>"}),
    tool("call_1", name="write", status="completed", input={}, output="Wrote file"),
    tool("call_2", status="completed", output=_PS_RECORD),
    {"type": "step_finish", "sessionID": SID, "part": {"tokens": {"input": 1}, "cost": 0}},
    {"type": "done", "reason": "idle", "rejected": []},
).replace(b"\n", b"\r\n")


@pytest.mark.rule("JSONEV-CHUNK-001")
def test_opencode_stream_bytewise_equals_whole() -> None:
    events = as_json(assert_chunking_invariant(factory, _STREAM))
    assert [e["type"] for e in events] == [
        "status",
        "text_delta",
        "tool_use",
        "tool_result",
        "tool_use",
        "tool_result",
        "usage",
        "raw",
    ]


_EXPECTED = as_json(run_chunked(factory, _STREAM, []))


@pytest.mark.rule("JSONEV-CHUNK-001")
@settings(deadline=None)
@given(cuts=cut_points())
def test_opencode_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    assert as_json(run_chunked(factory, _STREAM, cuts)) == _EXPECTED
