"""The kimi dialect of json-event-stream (kimi prompt mode, stream-json messages).

Wire lines are written by hand from ref §2.2 "kimi": OpenAI-style chat
messages (``role`` assistant with ``tool_calls`` or ``content``, ``role``
tool with ``tool_call_id``) and the ``meta`` ``session.resume_hint`` line.

Rules: KIMI-TOOLCALL-001, KIMI-TOOLRESULT-001, KIMI-TEXT-001, KIMI-META-001,
JSONEV-CHUNK-001.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from harness.streams.json_events import JsonEventStreamParser, create
from tests.helpers import as_json, assert_chunking_invariant, cut_points, jsonl, run_chunked


def factory() -> JsonEventStreamParser:
    return create("kimi")


def parse(*objects: Any) -> list[dict[str, Any]]:
    return as_json(assert_chunking_invariant(factory, jsonl(*objects)))


def call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    return {"type": "function", "id": call_id, "function": {"name": name, "arguments": arguments}}


# -- KIMI-TOOLCALL-001 ------------------------------------------------------------


@pytest.mark.rule("KIMI-TOOLCALL-001")
def test_kimi_toolcall_001_one_tool_use_per_call() -> None:
    message = {
        "role": "assistant",
        "tool_calls": [
            call(" tool_abc ", " WriteFile ", '{"path": "index.html", "content": "<h1>"}'),
            call("tool_def", "Shell", "ls -la"),  # arguments that are not JSON pass through
            call("tool_ghi", "Glob", None),
            call("", "Skipped", "{}"),  # no id
            call("tool_jkl", "   ", "{}"),  # blank name
            "not a call",
            {"id": "tool_mno"},  # no function
        ],
    }
    assert parse(message) == [
        {
            "type": "tool_use",
            "id": "tool_abc",
            "name": "WriteFile",
            "input": {"path": "index.html", "content": "<h1>"},
        },
        {"type": "tool_use", "id": "tool_def", "name": "Shell", "input": "ls -la"},
        {"type": "tool_use", "id": "tool_ghi", "name": "Glob", "input": None},
    ]


@pytest.mark.rule("KIMI-TOOLCALL-001")
def test_kimi_toolcall_001_tool_calls_take_precedence_over_content() -> None:
    # Upstream order (ref §2.2): a message with tool_calls yields only the calls.
    message = {
        "role": "assistant",
        "content": "Let me write it.",
        "tool_calls": [call("t1", "WriteFile", "{}")],
    }
    assert parse(message) == [{"type": "tool_use", "id": "t1", "name": "WriteFile", "input": {}}]
    assert parse({"role": "assistant", "tool_calls": []}) == []


# -- KIMI-TOOLRESULT-001 ----------------------------------------------------------


@pytest.mark.rule("KIMI-TOOLRESULT-001")
def test_kimi_toolresult_001_tool_role_messages() -> None:
    parts = [{"type": "text", "text": "wrote 12 bytes"}]
    events = parse(
        {"role": "tool", "tool_call_id": " tool_abc ", "content": "File written"},
        {"role": "tool", "tool_call_id": "tool_def", "content": parts},
        {"role": "tool", "tool_call_id": "tool_ghi"},
    )
    assert events == [
        {
            "type": "tool_result",
            "tool_use_id": "tool_abc",
            "content": "File written",
            "is_error": False,
        },
        {
            "type": "tool_result",
            "tool_use_id": "tool_def",
            "content": json.dumps(parts, separators=(",", ":")),
            "is_error": False,
        },
        {"type": "tool_result", "tool_use_id": "tool_ghi", "content": "", "is_error": False},
    ]
    blank = {"role": "tool", "tool_call_id": "  ", "content": "x"}
    assert parse(blank) == [{"type": "raw", "line": json.dumps(blank)}]


# -- KIMI-TEXT-001 ----------------------------------------------------------------


@pytest.mark.rule("KIMI-TEXT-001")
def test_kimi_text_001_assistant_content() -> None:
    assert parse({"role": "assistant", "content": "Done. The page is ready."}) == [
        {"type": "text_delta", "delta": "Done. The page is ready."}
    ]
    for frame in (
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": [{"type": "text", "text": "parts are not mapped"}]},
    ):
        assert parse(frame) == [{"type": "raw", "line": json.dumps(frame)}]


# -- KIMI-META-001 ----------------------------------------------------------------


@pytest.mark.rule("KIMI-META-001")
def test_kimi_meta_001_resume_hint_is_consumed() -> None:
    hint = {
        "role": "meta",
        "type": "session.resume_hint",
        "content": "To resume this session: kimi -r 3f1c",
    }
    assert parse(hint) == []
    other = {"role": "meta", "type": "session.other"}
    assert parse(other) == [{"type": "raw", "line": json.dumps(other)}]


# -- JSONEV-CHUNK-001 (kimi) --------------------------------------------------------

_STREAM = (
    jsonl(
        {"role": "assistant", "tool_calls": [call("t1", "WriteFile", '{"path":"é.md"}')]},
        {"role": "tool", "tool_call_id": "t1", "content": "ok ✓"},
        {"role": "assistant", "content": "Fini\u2028 — 完成"},
        {"role": "meta", "type": "session.resume_hint", "content": "kimi -r x"},
        {"role": "system", "content": "unknown role"},
    )
    + b"\n\n   \n"
)


@pytest.mark.rule("JSONEV-CHUNK-001")
def test_kimi_stream_bytewise_equals_whole() -> None:
    events = as_json(assert_chunking_invariant(factory, _STREAM))
    assert [e["type"] for e in events] == ["tool_use", "tool_result", "text_delta", "raw"]


_EXPECTED = as_json(run_chunked(factory, _STREAM, []))


@pytest.mark.rule("JSONEV-CHUNK-001")
@settings(deadline=None)
@given(cuts=cut_points())
def test_kimi_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    assert as_json(run_chunked(factory, _STREAM, cuts)) == _EXPECTED
