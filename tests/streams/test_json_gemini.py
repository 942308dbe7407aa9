"""The gemini dialect of json-event-stream (``gemini -p … --output-format stream-json``).

Wire lines are written by hand from wire §A.5 "Gemini CLI" (``init``,
``message``, ``tool_use``, ``tool_result``, ``error``, ``result``) and ref §2.2
"gemini" (mapping, write_todos, the simple artifact-echo suppression).

Rules: GEMINI-INIT-001, GEMINI-SESSION-001, GEMINI-TEXT-001, GEMINI-TOOL-001, GEMINI-TODO-001,
GEMINI-SEVERITY-001, GEMINI-RESULT-001, GEMINI-ARTIFACT-001, JSONEV-CHUNK-001.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from harness.streams.json_events import JsonEventStreamParser, create
from tests.helpers import as_json, assert_chunking_invariant, cut_points, jsonl, run_chunked

TS = "2026-11-02T10:00:00.000Z"


def factory() -> JsonEventStreamParser:
    return create("gemini")


def parse(*objects: Any) -> list[dict[str, Any]]:
    return as_json(assert_chunking_invariant(factory, jsonl(*objects)))


def say(text: str) -> dict[str, Any]:
    return {"type": "message", "timestamp": TS, "role": "assistant", "content": text, "delta": True}


def write_file(tool_id: str = "write_file-1", path: str = "index.html") -> dict[str, Any]:
    return {
        "type": "tool_use",
        "timestamp": TS,
        "tool_name": "write_file",
        "tool_id": tool_id,
        "parameters": {"file_path": path, "content": "<h1>Hi</h1>"},
    }


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "text_delta")


# -- GEMINI-INIT-001 --------------------------------------------------------------


@pytest.mark.rule("GEMINI-INIT-001")
def test_gemini_init_001_init_status() -> None:
    init = {"type": "init", "timestamp": TS, "model": "gemini-3.8-flash"}
    assert parse(init) == [{"type": "status", "label": "initializing", "model": "gemini-3.8-flash"}]
    assert parse({"type": "init", "model": 3}) == [{"type": "status", "label": "initializing"}]


@pytest.mark.rule("GEMINI-SESSION-001", "GEMINI-INIT-001")
def test_gemini_session_001_init_session_id_is_captured() -> None:
    init = {"type": "init", "timestamp": TS, "session_id": "8d2f0b7e", "model": "gemini-3.8-flash"}
    assert parse(init) == [
        {
            "type": "status",
            "label": "initializing",
            "model": "gemini-3.8-flash",
            "session_id": "8d2f0b7e",
        }
    ]
    for odd in (None, "", 42, ["8d2f0b7e"]):
        status = parse({"type": "init", "session_id": odd})
        assert status == [{"type": "status", "label": "initializing"}], odd


# -- GEMINI-TEXT-001 --------------------------------------------------------------


@pytest.mark.rule("GEMINI-TEXT-001")
def test_gemini_text_001_assistant_text_and_user_echo() -> None:
    events = parse(
        {"type": "message", "timestamp": TS, "role": "user", "content": "Say hello please."},
        say("Hello"),
        say(" there."),
    )
    assert events == [
        {"type": "text_delta", "delta": "Hello"},
        {"type": "text_delta", "delta": " there."},
    ]
    empty = {"type": "message", "role": "assistant", "content": ""}
    assert parse(empty) == [{"type": "raw", "line": json.dumps(empty)}]


# -- GEMINI-TOOL-001 --------------------------------------------------------------


@pytest.mark.rule("GEMINI-TOOL-001")
def test_gemini_tool_001_tool_use_and_results() -> None:
    events = parse(
        {
            "type": "tool_use",
            "tool_name": "run_shell_command",
            "tool_id": "run_shell_command-1",
            "parameters": {"command": "ls"},
        },
        {
            "type": "tool_result",
            "tool_id": "run_shell_command-1",
            "status": "success",
            "output": "index.html",
        },
        {
            "type": "tool_result",
            "tool_id": "read_file-2",
            "status": "error",
            "error": {"type": "FILE_NOT_FOUND", "message": "File not found: a.md"},
        },
        {"type": "tool_result", "tool_id": "t3", "status": "success", "output": {"n": 1}},
        {"type": "tool_result", "tool_id": "t4", "status": "error"},
        {
            "type": "tool_result",
            "tool_id": "t5",
            "status": "success",
            "error": {"message": "partial write"},
        },
    )
    assert events == [
        {
            "type": "tool_use",
            "id": "run_shell_command-1",
            "name": "run_shell_command",
            "input": {"command": "ls"},
        },
        {
            "type": "tool_result",
            "tool_use_id": "run_shell_command-1",
            "content": "index.html",
            "is_error": False,
        },
        {
            "type": "tool_result",
            "tool_use_id": "read_file-2",
            "content": "File not found: a.md",
            "is_error": True,
        },
        {"type": "tool_result", "tool_use_id": "t3", "content": '{"n":1}', "is_error": False},
        {"type": "tool_result", "tool_use_id": "t4", "content": "", "is_error": True},
        # an error object alone makes it an error (ref §2.2: status==='error' || !!error)
        {"type": "tool_result", "tool_use_id": "t5", "content": "partial write", "is_error": True},
    ]


@pytest.mark.rule("GEMINI-TOOL-001")
def test_gemini_tool_001_string_parameters_and_missing_ids() -> None:
    events = parse(
        {"type": "tool_use", "tool_name": "glob", "tool_id": "g", "parameters": '{"p":"*"}'}
    )
    assert events == [{"type": "tool_use", "id": "g", "name": "glob", "input": {"p": "*"}}]
    no_id = {"type": "tool_use", "tool_name": "glob", "parameters": {}}
    assert parse(no_id) == [{"type": "raw", "line": json.dumps(no_id)}]


# -- GEMINI-TODO-001 --------------------------------------------------------------


@pytest.mark.rule("GEMINI-TODO-001")
def test_gemini_todo_001_write_todos_becomes_todowrite() -> None:
    todos = {
        "todos": [
            {"description": "Draft layout", "status": "in_progress"},
            {"description": "Polish", "status": "pending"},
            {"description": "Ship", "status": "cancelled"},
        ]
    }
    events = parse(
        {
            "type": "tool_use",
            "tool_name": "write_todos",
            "tool_id": "write_todos-1",
            "parameters": todos,
        }
    )
    assert events == [
        {
            "type": "tool_use",
            "id": "write_todos-1:todo-native",
            "name": "TodoWrite",
            "input": {
                "todos": [
                    {"content": "Draft layout", "status": "in_progress"},
                    {"content": "Polish", "status": "pending"},
                    {"content": "Ship", "status": "stopped"},
                ]
            },
        }
    ]


@pytest.mark.rule("GEMINI-TODO-001")
def test_gemini_todo_001_unusable_plan_is_a_plain_tool_use() -> None:
    events = parse(
        {
            "type": "tool_use",
            "tool_name": "write_todos",
            "tool_id": "w",
            "parameters": {"todos": []},
        }
    )
    assert events == [
        {"type": "tool_use", "id": "w", "name": "write_todos", "input": {"todos": []}}
    ]


# -- GEMINI-SEVERITY-001 ----------------------------------------------------------


@pytest.mark.rule("GEMINI-SEVERITY-001")
def test_gemini_severity_001_warning_vs_error() -> None:
    warning = {
        "type": "error",
        "timestamp": TS,
        "severity": "warning",
        "message": "Loop detected, stopping execution",
    }
    error = {
        "type": "error",
        "timestamp": TS,
        "severity": "error",
        "message": "[API Error: quota exceeded]",
    }
    no_message = {"type": "error", "severity": "WARNING"}
    assert parse(warning, error, no_message) == [
        {"type": "status", "label": "warning", "detail": "Loop detected, stopping execution"},
        {
            "type": "error",
            "message": "[API Error: quota exceeded]",
            "raw": json.dumps(error, separators=(",", ":")),
        },
        {"type": "status", "label": "warning", "detail": "Gemini CLI warning"},
    ]


# -- GEMINI-RESULT-001 ------------------------------------------------------------


@pytest.mark.rule("GEMINI-RESULT-001")
def test_gemini_result_001_usage_from_stats() -> None:
    result = {
        "type": "result",
        "timestamp": TS,
        "status": "success",
        "stats": {
            "total_tokens": 250,
            "input_tokens": 200,
            "output_tokens": 50,
            "cached": 120,
            "input": 80,
            "duration_ms": 1834,
            "tool_calls": 1,
        },
    }
    assert parse(result) == [
        {
            "type": "usage",
            "usage": {"input_tokens": 200, "output_tokens": 50, "cached_read_tokens": 120},
            "duration_ms": 1834,
        }
    ]
    assert parse({"type": "result", "status": "success"}) == []


@pytest.mark.rule("GEMINI-RESULT-001")
@pytest.mark.parametrize(
    ("result", "message"),
    [
        (
            {
                "type": "result",
                "status": "error",
                "error": {
                    "type": "FatalAuthenticationError",
                    "message": "Invalid auth method selected.",
                },
                "stats": {"input_tokens": 1},
            },
            "Invalid auth method selected.",
        ),
        ({"type": "result", "status": "error"}, "Gemini CLI error"),
        ({"type": "result", "status": "success", "error": {"name": "Oops"}}, "Oops"),
    ],
)
def test_gemini_result_001_error_result(result: dict[str, Any], message: str) -> None:
    assert parse(result) == [
        {"type": "error", "message": message, "raw": json.dumps(result, separators=(",", ":"))}
    ]


# -- GEMINI-ARTIFACT-001 ----------------------------------------------------------


@pytest.mark.rule("GEMINI-ARTIFACT-001")
def test_gemini_artifact_001_echo_after_write_is_dropped() -> None:
    events = parse(
        write_file(),
        {"type": "tool_result", "tool_id": "write_file-1", "status": "success", "output": ""},
        say('Here it is: <artifact identifier="p" type="text/html"><h1>Hi</h1>'),
        say("</artifact> Done."),
        say(' Again: <artifact identifier="q">kept</artifact>'),
    )
    assert text_of(events) == 'Here it is:  Done. Again: <artifact identifier="q">kept</artifact>'


@pytest.mark.rule("GEMINI-ARTIFACT-001")
def test_gemini_artifact_001_open_tag_split_across_messages() -> None:
    events = parse(write_file(), say("Saved.<art"), say('ifact type="text/html">x</artifact>!'))
    assert text_of(events) == "Saved.!"


@pytest.mark.rule("GEMINI-ARTIFACT-001")
def test_gemini_artifact_001_prose_disarms() -> None:
    events = parse(write_file(), say("I wrote the file."), say("<artifact>shown</artifact>"))
    assert text_of(events) == "I wrote the file.<artifact>shown</artifact>"


@pytest.mark.rule("GEMINI-ARTIFACT-001")
def test_gemini_artifact_001_held_candidate_is_released() -> None:
    # A held "<a" is flushed before the next non-text frame, and at end of output.
    events = parse(write_file(), say("x <a"), {"type": "result", "status": "success"})
    assert events[1:] == [
        {"type": "text_delta", "delta": "x "},
        {"type": "text_delta", "delta": "<a"},
    ]
    events = parse(write_file(), say("y <artif"))
    assert text_of(events) == "y <artif"


@pytest.mark.rule("GEMINI-ARTIFACT-001")
@pytest.mark.parametrize(
    ("name", "parameters", "arms"),
    [
        ("write_file", {"file_path": "a.HTML"}, True),
        ("replace", {"path": "s.css"}, True),
        ("edit", {"file_path": "n.txt", "new_string": "x"}, True),
        ("write", {"file_path": "notes.txt"}, False),
        ("write_file", {"file_path": "a.html\n"}, False),  # JS `$` is end of string
        ("read_file", {"file_path": "a.html"}, False),
    ],
)
def test_gemini_artifact_001_which_tools_arm(
    name: str, parameters: dict[str, Any], arms: bool
) -> None:
    use = {"type": "tool_use", "tool_name": name, "tool_id": "t", "parameters": parameters}
    events = parse(use, say("<artifact>body</artifact>"))
    assert text_of(events) == ("" if arms else "<artifact>body</artifact>")


# -- JSONEV-CHUNK-001 (gemini) ------------------------------------------------------

_STREAM = jsonl(
    {"type": "init", "timestamp": TS, "session_id": "s", "model": "gemini-3.8-flash"},
    {"type": "message", "role": "user", "content": "Make a page"},
    write_file(),
    {"type": "tool_result", "tool_id": "write_file-1", "status": "success", "output": "ok"},
    say("Voilà ✓ <arti"),
    say('fact type="text/html">…</artifact> fin\u2028.'),
    {"type": "retry", "attempt": 1},
    {"type": "result", "status": "success", "stats": {"input_tokens": 3, "duration_ms": 2}},
)


@pytest.mark.rule("JSONEV-CHUNK-001")
def test_gemini_stream_bytewise_equals_whole() -> None:
    events = as_json(assert_chunking_invariant(factory, _STREAM))
    assert text_of(events) == "Voilà ✓  fin\u2028."
    assert [e["type"] for e in events][-2:] == ["raw", "usage"]


_EXPECTED = as_json(run_chunked(factory, _STREAM, []))


@pytest.mark.rule("JSONEV-CHUNK-001")
@settings(deadline=None)
@given(cuts=cut_points())
def test_gemini_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    assert as_json(run_chunked(factory, _STREAM, cuts)) == _EXPECTED
