"""The cursor-agent dialect of json-event-stream.

Wire lines are written by hand from wire §A.5 "Cursor Agent" (``system/init``,
``assistant`` with ``--stream-partial-output`` deltas carrying
``timestamp_ms``, the terminal replay carrying ``model_call_id``,
``tool_call``, ``result``) and ref §2.2 "cursor-agent".

Rules: CURSOR-INIT-001, CURSOR-SESSION-001, CURSOR-DELTA-001,
CURSOR-REPLAY-001, CURSOR-USAGE-001, JSONEV-CHUNK-001.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from harness.streams.json_events import JsonEventStreamParser, create
from tests.helpers import as_json, assert_chunking_invariant, cut_points, jsonl, run_chunked

SESSION = "c6b62c6f-7ead-4fd6-9922-e952131177ff"


def factory() -> JsonEventStreamParser:
    return create("cursor-agent")


def parse(*objects: Any) -> list[dict[str, Any]]:
    return as_json(assert_chunking_invariant(factory, jsonl(*objects)))


def delta(text: str, ts: int = 1) -> dict[str, Any]:
    """A ``--stream-partial-output`` incremental assistant chunk."""
    return {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
        "timestamp_ms": 1_760_000_000_000 + ts,
    }


def replay(text: str, model_call_id: bool = True) -> dict[str, Any]:
    """The terminal replay of the turn (``model_call_id``, or no timestamp at all)."""
    obj: dict[str, Any] = {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    }
    if model_call_id:
        obj["model_call_id"] = "mc_01"
    return obj


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "text_delta")


# -- CURSOR-INIT-001 --------------------------------------------------------------


@pytest.mark.rule("CURSOR-INIT-001")
def test_cursor_init_001_system_init() -> None:
    init = {
        "type": "system",
        "subtype": "init",
        "apiKeySource": "login",
        "cwd": "/p",
        "session_id": SESSION,
        "model": "Claude 4.5 Sonnet",
        "permissionMode": "default",
    }
    assert parse(init) == [
        {
            "type": "status",
            "label": "initializing",
            "model": "Claude 4.5 Sonnet",
            "session_id": SESSION,
        }
    ]
    assert parse({"type": "system", "subtype": "init"}) == [
        {"type": "status", "label": "initializing"}
    ]


# -- CURSOR-SESSION-001 -----------------------------------------------------------


@pytest.mark.rule("CURSOR-SESSION-001")
def test_cursor_session_001_late_session_id_capture() -> None:
    user = {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    }
    events = parse(
        {"type": "system", "subtype": "init", "model": "gpt-5"},  # no session id yet
        {**user, "session_id": SESSION},
        {**delta("Hello"), "session_id": SESSION},  # same session: no new status
        {**delta(" again"), "session_id": "s-2"},
    )
    assert events == [
        {"type": "status", "label": "initializing", "model": "gpt-5"},
        {"type": "status", "label": "running", "session_id": SESSION},
        {"type": "raw", "line": json.dumps({**user, "session_id": SESSION})},
        {"type": "text_delta", "delta": "Hello"},
        {"type": "status", "label": "running", "session_id": "s-2"},
        {"type": "text_delta", "delta": " again"},
    ]


@pytest.mark.rule("CURSOR-SESSION-001")
def test_cursor_session_001_init_session_is_not_repeated() -> None:
    events = parse(
        {"type": "system", "subtype": "init", "session_id": SESSION},
        {**delta("x"), "session_id": SESSION},
        {"type": "result", "subtype": "success", "session_id": SESSION, "usage": {}},
    )
    assert [e["label"] for e in events if e["type"] == "status"] == ["initializing"]


# -- CURSOR-DELTA-001 -------------------------------------------------------------


@pytest.mark.rule("CURSOR-DELTA-001")
def test_cursor_delta_001_ha_ha_is_haha() -> None:
    events = parse(delta("ha", 1), delta("ha", 2))
    assert events == [{"type": "text_delta", "delta": "ha"}, {"type": "text_delta", "delta": "ha"}]
    assert text_of(events) == "haha"


@pytest.mark.rule("CURSOR-DELTA-001")
def test_cursor_delta_001_prefix_of_earlier_text_is_kept() -> None:
    events = parse(delta("Hello wor", 1), delta("Hello", 2), delta("ld", 3))
    assert text_of(events) == "Hello worHellold"


@pytest.mark.rule("CURSOR-DELTA-001")
def test_cursor_delta_001_multi_block_message_concatenates_text_blocks() -> None:
    chunk = delta("")
    chunk["message"]["content"] = [
        {"type": "text", "text": "a"},
        {"type": "thinking", "thinking": "zzz"},
        {"type": "text", "text": "b"},
    ]
    assert parse(chunk) == [{"type": "text_delta", "delta": "ab"}]


# -- CURSOR-REPLAY-001 ------------------------------------------------------------


@pytest.mark.rule("CURSOR-REPLAY-001")
def test_cursor_replay_001_second_turn_does_not_reappend() -> None:
    # "secondsecond turn" (seed 002 §7.3): the baseline is THIS turn, not the run.
    events = parse(
        delta("first turn", 1),
        replay("first turn"),
        delta("second", 2),
        replay("second turn"),
    )
    assert text_of(events) == "first turn" + "second turn"
    assert events[-1] == {"type": "text_delta", "delta": " turn"}


@pytest.mark.rule("CURSOR-REPLAY-001")
def test_cursor_replay_001_missing_suffix_is_recovered() -> None:
    events = parse(delta("Hel", 1), replay("Hello"))
    assert events == [
        {"type": "text_delta", "delta": "Hel"},
        {"type": "text_delta", "delta": "lo"},
    ]


@pytest.mark.rule("CURSOR-REPLAY-001")
def test_cursor_replay_001_divergent_replay_emits_nothing() -> None:
    # A middle chunk was lost: emitted "Helo" is not a prefix of "Hello" -> no output.
    events = parse(
        delta("He", 1), delta("lo", 2), replay("Hello"), delta("Next", 3), replay("Next!")
    )
    assert text_of(events) == "Helo" + "Next!"


@pytest.mark.rule("CURSOR-REPLAY-001")
def test_cursor_replay_001_replay_without_deltas_and_fallback_terminal() -> None:
    # No partial output at all: the replay is the whole text. A non-timestamped
    # assistant message without model_call_id is the fallback terminal replay.
    events = parse(
        replay("Whole answer", model_call_id=False),
        replay("Second answer"),
        delta("Third", 1),
        replay("Third"),  # a replay equal to this turn's text adds nothing
    )
    assert text_of(events) == "Whole answerSecond answerThird"


@pytest.mark.rule("CURSOR-REPLAY-001")
def test_cursor_replay_001_empty_replay_advances_the_turn() -> None:
    events = parse(delta("one", 1), replay(""), delta("two", 2), replay("two!"))
    assert text_of(events) == "onetwo!"


@pytest.mark.rule("CURSOR-REPLAY-001")
def test_cursor_replay_001_textless_assistant_is_raw() -> None:
    frame = {"type": "assistant", "message": {"role": "assistant", "content": []}}
    assert parse(frame) == [{"type": "raw", "line": json.dumps(frame)}]


# -- CURSOR-USAGE-001 -------------------------------------------------------------


@pytest.mark.rule("CURSOR-USAGE-001")
def test_cursor_usage_001_result_usage() -> None:
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 5234,
        "duration_api_ms": 5234,
        "result": "Hello",
        "session_id": SESSION,
        "usage": {
            "inputTokens": 1200,
            "outputTokens": 80,
            "cacheReadTokens": 1000,
            "cacheWriteTokens": 0,
        },
    }
    assert parse(result) == [
        {"type": "status", "label": "running", "session_id": SESSION},
        {
            "type": "usage",
            "usage": {
                "input_tokens": 1200,
                "output_tokens": 80,
                "cached_read_tokens": 1000,
                "cached_write_tokens": 0,
            },
            "duration_ms": 5234,
        },
    ]
    no_usage = {"type": "result", "subtype": "success", "duration_ms": 1}
    assert parse(no_usage) == [{"type": "raw", "line": json.dumps(no_usage)}]


# -- JSONEV-CHUNK-001 (cursor) ------------------------------------------------------

_STREAM = jsonl(
    {"type": "system", "subtype": "init", "session_id": SESSION, "model": "gpt-5"},
    {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}},
    delta("Ça ", 1),
    delta("va ✓\u2028", 2),
    {
        "type": "tool_call",
        "subtype": "started",
        "call_id": "t1",
        "tool_call": {"readToolCall": {"args": {"path": "a.md"}}},
        "session_id": SESSION,
    },
    replay("Ça va ✓\u2028 bien"),
    delta("two", 3),
    replay("two"),
    {"type": "result", "duration_ms": 9, "usage": {"inputTokens": 1, "outputTokens": 2}},
).replace(b"\n", b"\r\n")


@pytest.mark.rule("JSONEV-CHUNK-001")
def test_cursor_stream_bytewise_equals_whole() -> None:
    events = as_json(assert_chunking_invariant(factory, _STREAM))
    assert text_of(events) == "Ça va ✓\u2028 bientwo"
    assert [e["type"] for e in events].count("raw") == 2  # user echo, tool_call


_EXPECTED = as_json(run_chunked(factory, _STREAM, []))


@pytest.mark.rule("JSONEV-CHUNK-001")
@settings(deadline=None)
@given(cuts=cut_points())
def test_cursor_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    assert as_json(run_chunked(factory, _STREAM, cuts)) == _EXPECTED
