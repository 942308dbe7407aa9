"""The json-event-stream dispatcher, its shared helpers, and properties of every dialect.

Rules: JSONEV-DIALECT-001, JSONEV-RAW-001, JSONEV-ERRMSG-001,
JSONEV-ROBUST-001 (arbitrary bytes and arbitrary JSON objects never raise,
for each of the five dialects).
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.events import Raw
from harness.formats import create_parser, known_dialects, validate_stream_format
from harness.streams._jsonev import (
    extract_error_message,
    safe_parse_json,
    stringify_content,
    todo_write_input_from_items,
)
from harness.streams.json_events import DIALECTS, JsonEventStreamParser, create
from tests.helpers import as_json, assert_chunking_invariant, jsonl, run_whole
from tests.support.examples import fuzz_sized

ALL = sorted(DIALECTS)


def parse(dialect: str, data: bytes) -> list[dict[str, Any]]:
    return as_json(assert_chunking_invariant(functools.partial(create, dialect), data))


# -- JSONEV-DIALECT-001 -------------------------------------------------------------


@pytest.mark.rule("JSONEV-DIALECT-001")
def test_jsonev_dialect_001_five_dialects() -> None:
    assert frozenset({"codex", "cursor-agent", "opencode", "gemini", "kimi"}) == DIALECTS
    assert known_dialects("json-event-stream") == DIALECTS
    for dialect in ALL:
        parser = create_parser("json-event-stream", dialect)
        assert isinstance(parser, JsonEventStreamParser)
        assert parser.dialect == dialect


@pytest.mark.rule("JSONEV-DIALECT-001")
@pytest.mark.parametrize("dialect", [None, "", "claude", "Codex", "cursor"])
def test_jsonev_dialect_001_unknown_dialect_is_refused(dialect: Any) -> None:
    with pytest.raises(ValueError, match=r"JSONEV-DIALECT-001") as info:
        create(dialect)
    assert "cursor-agent" in str(info.value)  # names the known dialects
    with pytest.raises(ValueError):
        validate_stream_format("json-event-stream", dialect)
    if isinstance(dialect, str):
        with pytest.raises(ValueError):
            JsonEventStreamParser(dialect)


# -- JSONEV-RAW-001 -------------------------------------------------------------------


@pytest.mark.rule("JSONEV-RAW-001")
@pytest.mark.parametrize("dialect", ALL)
def test_jsonev_raw_001_unclaimed_lines_are_raw(dialect: str) -> None:
    unknown = {"type": "brand_new_event", "role": "narrator", "payload": {"x": 1}}
    data = (
        b"Reading prompt from stdin...\n"
        b"  [1, 2, 3]  \r\n"
        b'"just a string"\n'
        b"null\n"
        b"\n"
        b"   \n" + jsonl(unknown) + b"{broken json"
    )
    assert parse(dialect, data) == [
        {"type": "raw", "line": "Reading prompt from stdin..."},
        {"type": "raw", "line": "[1, 2, 3]"},
        {"type": "raw", "line": '"just a string"'},
        {"type": "raw", "line": "null"},
        {"type": "raw", "line": json.dumps(unknown, ensure_ascii=False)},
        {"type": "raw", "line": "{broken json"},
    ]


@pytest.mark.rule("JSONEV-RAW-001")
def test_jsonev_raw_001_another_dialects_lines_are_raw() -> None:
    # A codex line fed to the opencode dialect is nobody's: raw, not dropped.
    line = {"type": "thread.started", "thread_id": "t"}
    assert parse("opencode", jsonl(line)) == [{"type": "raw", "line": json.dumps(line)}]
    codex_item = {"type": "item.started", "item": {"id": "m", "type": "agent_message", "text": "x"}}
    assert parse("codex", jsonl(codex_item)) == [{"type": "raw", "line": json.dumps(codex_item)}]


# -- JSONEV-ERRMSG-001 ----------------------------------------------------------------


@pytest.mark.rule("JSONEV-ERRMSG-001")
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain", "plain"),
        ("", ""),
        (json.dumps({"message": "from json string"}), "from json string"),
        (json.dumps([1, 2]), json.dumps([1, 2])),  # an array: the string itself
        (json.dumps({"unrelated": 1}), json.dumps({"unrelated": 1})),
        ({"detail": "d", "message": "m"}, "d"),
        ({"detail": "", "message": "m"}, "m"),
        ({"message": json.dumps({"error": {"message": "deep"}})}, "deep"),
        ({"error": "as string", "data": {"message": "x"}}, "as string"),
        ({"error": {"name": "Inner"}}, "Inner"),
        ({"error": {}}, "FALLBACK"),
        ({"data": {"message": "from data"}, "name": "N"}, "from data"),
        ({"data": {"other": 1}, "name": "N"}, "N"),
        ({"message": 5, "name": ""}, "FALLBACK"),
        (None, "FALLBACK"),
        (42, "FALLBACK"),
        ([{"message": "in a list"}], "FALLBACK"),
    ],
)
def test_jsonev_errmsg_001_extract_error_message(value: Any, expected: str) -> None:
    assert extract_error_message(value, "FALLBACK") == expected


@pytest.mark.rule("JSONEV-ERRMSG-001", "JSONEV-ROBUST-001")
def test_jsonev_errmsg_001_deep_nesting_is_bounded() -> None:
    value: Any = {"message": "bottom"}
    for _ in range(500):
        value = {"error": value}
    assert extract_error_message(value, "FALLBACK") == "FALLBACK"
    shallow: Any = {"message": "bottom"}
    for _ in range(10):
        shallow = {"error": shallow}
    assert extract_error_message(shallow, "FALLBACK") == "bottom"


# -- helpers used by every dialect (JSONEV-ROBUST-001: total functions) ----------------


@pytest.mark.rule("JSONEV-ROBUST-001")
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ({"a": 1}, {"a": 1}),
        ([1], [1]),
        ('{"a": 1}', {"a": 1}),
        ("5", 5),
        ("nope", None),
        ("NaN", None),  # JSON.parse rejects it
        ("[" * 100_000, None),
        (5, None),
        (True, None),
    ],
)
def test_safe_parse_json(value: Any, expected: Any) -> None:
    assert safe_parse_json(value) == expected


@pytest.mark.rule("JSONEV-ROBUST-001")
def test_stringify_content() -> None:
    assert stringify_content("é") == "é"
    assert stringify_content(None) == ""
    assert stringify_content({"a": [1, True, None], "b": "é"}) == '{"a":[1,true,null],"b":"é"}'
    assert stringify_content(False) == "false"


@pytest.mark.rule("JSONEV-ROBUST-001")
def test_todo_items_statuses() -> None:
    items = [
        {"content": "a", "status": "In Progress"},
        {"label": "b", "status": "done"},
        {"description": "c", "status": "Blocked-by-review"},
        {"text": "d", "status": 3, "completed": True},
        {"text": "", "status": "pending"},
        {"content": 1, "label": "e"},
        {"title": "ignored"},
    ]
    assert todo_write_input_from_items(items) == {
        "todos": [
            {"content": "a", "status": "in_progress"},
            {"content": "b", "status": "completed"},
            {"content": "c", "status": "stopped"},
            {"content": "d", "status": "completed"},
            {"content": "e", "status": "pending"},
        ]
    }


@pytest.mark.rule("JSONEV-ROBUST-001")
@pytest.mark.parametrize("dialect", ALL)
def test_jsonev_robust_001_deeply_nested_lines(dialect: str) -> None:
    nested = b"[" * 50_000 + b"]" * 50_000
    events = run_whole(functools.partial(create, dialect), nested + b"\n" + b"{" * 3000 + b"\n")
    assert all(isinstance(e, Raw) for e in events)
    assert len(events) == 2


# -- JSONEV-ROBUST-001: hypothesis, per dialect ------------------------------------------

_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)

json_values = st.recursive(
    _json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)

#: Every discriminator value the five dialects look at, so random objects reach deep branches.
_TYPES = [
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "error",
    "item.started",
    "item.updated",
    "item.completed",
    "system",
    "assistant",
    "result",
    "user",
    "tool_call",
    "step_start",
    "text",
    "tool_use",
    "step_finish",
    "init",
    "message",
    "tool_result",
    "session.resume_hint",
]
_ITEM_TYPES = [
    "reasoning",
    "todo_list",
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
    "error",
    "agent_message",
    "plan",
]
_KEYS = [
    "id",
    "text",
    "items",
    "command",
    "aggregated_output",
    "exit_code",
    "status",
    "changes",
    "server",
    "tool",
    "arguments",
    "result",
    "error",
    "query",
    "action",
    "message",
    "usage",
    "thread_id",
    "session_id",
    "sessionID",
    "subtype",
    "model",
    "model_call_id",
    "timestamp_ms",
    "content",
    "part",
    "callID",
    "state",
    "tokens",
    "cache",
    "severity",
    "stats",
    "tool_id",
    "tool_name",
    "parameters",
    "role",
    "tool_calls",
    "tool_call_id",
    "function",
    "name",
    "diff",
    "kind",
    "path",
    "detail",
    "data",
    "output",
    "exit",
    "exitCode",
    "metadata",
]


def _shaped(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(
        st.sampled_from(_KEYS),
        children | st.sampled_from(_TYPES + _ITEM_TYPES + ["search", "add", "update", "bash"]),
        max_size=6,
    )


shaped_values = st.recursive(
    _json_scalars | st.sampled_from(_TYPES + _ITEM_TYPES),
    lambda children: st.lists(children, max_size=3) | _shaped(children),
    max_leaves=12,
)

shaped_objects = st.builds(
    lambda base, kind, item_type, role: {
        **base,
        "type": kind,
        "role": role,
        "item": {**base, "type": item_type},
        "part": base,
    },
    _shaped(shaped_values),
    st.sampled_from(_TYPES),
    st.sampled_from(_ITEM_TYPES),
    st.sampled_from(["assistant", "tool", "meta", "user"]),
)


@pytest.mark.rule("JSONEV-ROBUST-001")
@pytest.mark.parametrize("dialect", ALL)
@settings(deadline=None)
@given(data=st.binary(max_size=512))
def test_jsonev_robust_001_arbitrary_bytes_never_raise(dialect: str, data: bytes) -> None:
    parser = create(dialect)
    parser.feed(data)
    parser.feed(b"\n" + data)
    parser.finish()


@pytest.mark.rule("JSONEV-ROBUST-001")
@pytest.mark.parametrize("dialect", ALL)
@settings(max_examples=40, deadline=None)
@given(objects=st.lists(st.dictionaries(st.text(max_size=8), json_values, max_size=5), max_size=4))
def test_jsonev_robust_001_arbitrary_objects_never_raise(
    dialect: str, objects: list[dict[str, Any]]
) -> None:
    events = run_whole(functools.partial(create, dialect), jsonl(*objects))
    json.dumps(as_json(events))  # every event is plain JSON


@pytest.mark.rule("JSONEV-ROBUST-001")
@pytest.mark.parametrize("dialect", ALL)
@settings(max_examples=60, deadline=None)
@given(objects=st.lists(shaped_objects, min_size=1, max_size=4))
def test_jsonev_robust_001_dialect_shaped_objects_never_raise(
    dialect: str, objects: list[dict[str, Any]]
) -> None:
    events = run_whole(functools.partial(create, dialect), jsonl(*objects))
    json.dumps(as_json(events))


#: One valid line of every shape each dialect maps (written from ref §2.2 / wire §A.3.1, §A.5).
_TEMPLATES: dict[str, list[dict[str, Any]]] = {
    "codex": [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.completed", "usage": {"input_tokens": 1, "cached_input_tokens": 0}},
        {"type": "error", "message": "Reconnecting... 1/5 (stream disconnected before completion)"},
        {"type": "turn.failed", "error": {"message": "x"}},
        {"type": "item.started", "item": {"id": "r", "type": "reasoning", "text": "t"}},
        {
            "type": "item.updated",
            "item": {"id": "l", "type": "todo_list", "items": [{"text": "a", "completed": False}]},
        },
        {
            "type": "item.completed",
            "item": {
                "id": "c",
                "type": "command_execution",
                "command": "ls",
                "aggregated_output": "x",
                "exit_code": 0,
                "status": "completed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "f",
                "type": "file_change",
                "status": "failed",
                "changes": [{"path": "a", "kind": "update", "diff": "-a\n+b"}],
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "m",
                "type": "mcp_tool_call",
                "server": "s",
                "tool": "t",
                "arguments": {},
                "result": None,
                "error": {"message": "e"},
                "status": "failed",
            },
        },
        {
            "type": "item.completed",
            "item": {"id": "w", "type": "web_search", "query": "q", "action": {"type": "search"}},
        },
        {"type": "item.completed", "item": {"id": "e", "type": "error", "message": "m"}},
        {"type": "item.completed", "item": {"id": "a", "type": "agent_message", "text": "hi"}},
    ],
    "cursor-agent": [
        {"type": "system", "subtype": "init", "model": "m", "session_id": "s"},
        {
            "type": "assistant",
            "timestamp_ms": 1,
            "session_id": "s2",
            "message": {"content": [{"type": "text", "text": "x"}]},
        },
        {
            "type": "assistant",
            "model_call_id": "m",
            "message": {"content": [{"type": "text", "text": "xy"}]},
        },
        {"type": "result", "duration_ms": 1, "usage": {"inputTokens": 1, "cacheReadTokens": 2}},
    ],
    "opencode": [
        {"type": "step_start", "sessionID": "s"},
        {"type": "text", "part": {"text": "x"}},
        {
            "type": "tool_use",
            "sessionID": "s",
            "part": {
                "tool": "bash",
                "callID": "c",
                "state": {
                    "status": "completed",
                    "input": "{}",
                    "output": "o",
                    "error": "e",
                    "exit": 1,
                    "metadata": {"exit": 2},
                },
            },
        },
        {"type": "step_finish", "part": {"cost": 1, "tokens": {"input": 1, "cache": {"read": 1}}}},
        {"type": "error", "error": {"name": "E", "data": {"message": "m"}}},
    ],
    "gemini": [
        {"type": "init", "model": "m"},
        {
            "type": "tool_use",
            "tool_name": "write_file",
            "tool_id": "w",
            "parameters": {"file_path": "a.html", "content": "c"},
        },
        {"type": "message", "role": "assistant", "content": "<artifact>x</artifact>"},
        {
            "type": "tool_use",
            "tool_name": "write_todos",
            "tool_id": "t",
            "parameters": {"todos": [{"description": "d", "status": "pending"}]},
        },
        {"type": "tool_result", "tool_id": "t", "status": "error", "error": {"message": "m"}},
        {"type": "error", "severity": "warning", "message": "m"},
        {"type": "result", "status": "success", "stats": {"input_tokens": 1, "duration_ms": 2}},
    ],
    "kimi": [
        {
            "role": "assistant",
            "tool_calls": [{"id": "i", "function": {"name": "n", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "i", "content": "c"},
        {"role": "assistant", "content": "t"},
        {"role": "meta", "type": "session.resume_hint"},
    ],
}


def _dict_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths (key/index tuples) to every value inside nested dicts and lists."""
    paths: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        paths.append((*prefix, key))
        if isinstance(child, (dict, list)):
            paths.extend(_dict_paths(child, (*prefix, key)))
    return paths


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replace(copy[path[0]], path[1:], new)
    return copy


@pytest.mark.rule("JSONEV-ROBUST-001")
@pytest.mark.parametrize("dialect", ALL)
@fuzz_sized(80)
@given(data=st.data())
def test_jsonev_robust_001_mutated_valid_lines_never_raise(dialect: str, data: Any) -> None:
    lines = []
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        template = data.draw(st.sampled_from(_TEMPLATES[dialect]))
        path = data.draw(st.sampled_from(_dict_paths(template)))
        lines.append(_replace(template, path, data.draw(json_values)))
    events = run_whole(functools.partial(create, dialect), jsonl(*_TEMPLATES[dialect], *lines))
    json.dumps(as_json(events))
