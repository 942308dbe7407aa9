"""The codex dialect of json-event-stream (``codex exec --json``) and the shared item mapper.

Wire lines are written by hand from wire §A.3.1 (exec event shapes), ref §2.2
"codex" (mapping tables and the recorded ``web_search`` / ``file_change`` /
``mcp_tool_call`` shapes quoted there) and wire §A.3.2 (app-server item names).

Rules: CODEX-SESSION-001, CODEX-TURN-001, CODEX-PARA-001, CODEX-REASONING-001,
CODEX-TODO-001, CODEX-BASH-001, CODEX-CONNECTOR-001, CODEX-FILECHANGE-001,
CODEX-MCP-001, CODEX-WEBSEARCH-001, CODEX-WARNING-001, CODEX-USAGE-001,
CODEX-ERROR-ONCE-001, CODEX-RECONNECT-001, CODEX-ITEMTYPE-001, JSONEV-CHUNK-001.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from harness.events import Event
from harness.streams.codex_items import CodexEventMapper, normalize_item, normalize_item_type
from harness.streams.json_events import JsonEventStreamParser, create
from tests.helpers import as_json, assert_chunking_invariant, cut_points, jsonl, run_chunked


def factory() -> JsonEventStreamParser:
    return create("codex")


def parse(*objects: Any) -> list[dict[str, Any]]:
    """Events for the objects as JSONL; every case is also checked fed byte by byte."""
    return as_json(assert_chunking_invariant(factory, jsonl(*objects)))


def parse_bytes(data: bytes) -> list[dict[str, Any]]:
    return as_json(assert_chunking_invariant(factory, data))


def item(phase: str, **fields: Any) -> dict[str, Any]:
    return {"type": f"item.{phase}", "item": fields}


def texts(events: list[dict[str, Any]], kind: str = "text_delta") -> list[str]:
    return [e["delta"] for e in events if e["type"] == kind]


# -- CODEX-SESSION-001 ------------------------------------------------------------


@pytest.mark.rule("CODEX-SESSION-001")
def test_codex_session_001_thread_id_is_the_session_id() -> None:
    events = parse({"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"})
    assert events == [
        {
            "type": "status",
            "label": "initializing",
            "session_id": "0199a213-81c0-7800-8aa1-bbab2a035a53",
        }
    ]


@pytest.mark.rule("CODEX-SESSION-001")
@pytest.mark.parametrize("thread_id", [None, "", 42])
def test_codex_session_001_missing_thread_id_gives_no_session(thread_id: Any) -> None:
    obj: dict[str, Any] = {"type": "thread.started"}
    if thread_id is not None:
        obj["thread_id"] = thread_id
    assert parse(obj) == [{"type": "status", "label": "initializing"}]


# -- CODEX-TURN-001 ---------------------------------------------------------------


@pytest.mark.rule("CODEX-TURN-001")
def test_codex_turn_001_turn_started_is_thinking_and_resets_paragraphs() -> None:
    events = parse(
        item("completed", id="item_0", type="agent_message", text="First turn"),
        {"type": "turn.started"},
        item("completed", id="item_1", type="agent_message", text="Second turn"),
    )
    assert events == [
        {"type": "text_delta", "delta": "First turn"},
        {"type": "status", "label": "thinking"},
        {"type": "text_delta", "delta": "Second turn"},
    ]


# -- CODEX-PARA-001 ---------------------------------------------------------------


@pytest.mark.rule("CODEX-PARA-001")
@pytest.mark.parametrize(
    ("first", "second", "expected_second"),
    [
        ("Hello.", "World.", "\nWorld."),  # glued without the fix
        ("Hello.\n", "World.", "World."),  # previous ended with a newline
        ("Hello.", "\nWorld.", "\nWorld."),  # this one starts with a newline
        ("Hello.\n", "\nWorld.", "\nWorld."),
    ],
)
def test_codex_para_001_paragraph_newline_rule(
    first: str, second: str, expected_second: str
) -> None:
    events = parse(
        {"type": "turn.started"},
        item("completed", id="item_0", type="agent_message", text=first),
        item("completed", id="item_1", type="agent_message", text=second),
    )
    assert texts(events) == [first, expected_second]


@pytest.mark.rule("CODEX-PARA-001")
def test_codex_para_001_a_tool_between_messages_clears_the_boundary() -> None:
    events = parse(
        item("completed", id="item_0", type="agent_message", text="Let me look."),
        item("started", id="item_1", type="command_execution", command="ls", status="in_progress"),
        item("completed", id="item_2", type="agent_message", text="Found it."),
    )
    assert texts(events) == ["Let me look.", "Found it."]


@pytest.mark.rule("CODEX-PARA-001")
def test_codex_para_001_reasoning_between_messages_keeps_the_boundary() -> None:
    # Reasoning items do not touch the paragraph state (ref §2.2 codex).
    events = parse(
        item("completed", id="item_0", type="agent_message", text="One."),
        item("completed", id="item_1", type="reasoning", text="**Thinking**"),
        item("completed", id="item_2", type="agent_message", text="Two."),
    )
    assert texts(events) == ["One.", "\nTwo."]


@pytest.mark.rule("CODEX-PARA-001")
def test_codex_para_001_empty_message_is_raw() -> None:
    line = item("completed", id="item_0", type="agent_message", text="")
    assert parse(line) == [{"type": "raw", "line": json.dumps(line)}]


# -- CODEX-REASONING-001 ----------------------------------------------------------


@pytest.mark.rule("CODEX-REASONING-001")
def test_codex_reasoning_001_suffix_dedupe_and_blank_line_between_items() -> None:
    events = parse(
        item("started", id="item_0", type="reasoning", text="**Planning**"),
        item("updated", id="item_0", type="reasoning", text="**Planning** the page"),
        item("updated", id="item_0", type="reasoning", text="**Planning** the page"),
        item("completed", id="item_0", type="reasoning", text="**Planning** the page layout"),
        item("completed", id="item_1", type="reasoning", text="**Checking** files"),
    )
    assert texts(events, "thinking_delta") == [
        "**Planning**",
        " the page",
        " layout",
        "\n\n**Checking** files",
    ]


@pytest.mark.rule("CODEX-REASONING-001")
def test_codex_reasoning_001_first_item_has_no_prefix_and_empty_text_is_claimed() -> None:
    events = parse(
        item("started", id="item_0", type="reasoning", text=""),
        item("completed", id="item_0", type="reasoning", text="Think"),
    )
    assert events == [{"type": "thinking_delta", "delta": "Think"}]


# -- CODEX-TODO-001 ---------------------------------------------------------------


@pytest.mark.rule("CODEX-TODO-001")
def test_codex_todo_001_todo_list_snapshots() -> None:
    plan = [{"text": "Read spec", "completed": False}, {"text": "Write page", "completed": False}]
    done = [{"text": "Read spec", "completed": True}, {"text": "Write page", "completed": False}]
    events = parse(
        item("started", id="item_5", type="todo_list", items=plan),
        item("updated", id="item_5", type="todo_list", items=done),
        item("completed", id="item_5", type="todo_list", items=done),
    )
    first = {"todos": [{"content": "Read spec", "status": "pending"}]}
    first["todos"].append({"content": "Write page", "status": "pending"})
    later = {"todos": [{"content": "Read spec", "status": "completed"}]}
    later["todos"].append({"content": "Write page", "status": "pending"})
    assert events == [
        {"type": "tool_use", "id": "item_5", "name": "TodoWrite", "input": first},
        {"type": "tool_use", "id": "item_5", "name": "TodoWrite", "input": later},
        {"type": "tool_use", "id": "item_5", "name": "TodoWrite", "input": later},
    ]


@pytest.mark.rule("CODEX-TODO-001")
def test_codex_todo_001_empty_list_is_raw() -> None:
    line = item("updated", id="item_5", type="todo_list", items=[])
    assert parse(line) == [{"type": "raw", "line": json.dumps(line)}]


# -- CODEX-BASH-001 ---------------------------------------------------------------


@pytest.mark.rule("CODEX-BASH-001")
def test_codex_bash_001_one_tool_use_and_exit_code_result() -> None:
    events = parse(
        item(
            "started",
            id="item_1",
            type="command_execution",
            command="bash -lc ls",
            aggregated_output="",
            exit_code=None,
            status="in_progress",
        ),
        item(
            "completed",
            id="item_1",
            type="command_execution",
            command="bash -lc ls",
            aggregated_output="index.html\n",
            exit_code=0,
            status="completed",
        ),
    )
    assert events == [
        {"type": "tool_use", "id": "item_1", "name": "Bash", "input": {"command": "bash -lc ls"}},
        {
            "type": "tool_result",
            "tool_use_id": "item_1",
            "content": "index.html\n",
            "is_error": False,
        },
    ]


@pytest.mark.rule("CODEX-BASH-001")
@pytest.mark.parametrize(
    ("fields", "is_error"),
    [
        ({"exit_code": 2, "status": "completed"}, True),
        ({"exit_code": 0, "status": "failed"}, False),  # a numeric exit code decides
        ({"status": "failed"}, True),  # no exit code: the status decides
        ({"exit_code": None, "status": "declined"}, False),
    ],
)
def test_codex_bash_001_error_rule(fields: dict[str, Any], is_error: bool) -> None:
    events = parse(item("completed", id="item_2", type="command_execution", command="x", **fields))
    # completed without a started event is self-sufficient: tool_use first.
    assert [e["type"] for e in events] == ["tool_use", "tool_result"]
    assert events[1] == {
        "type": "tool_result",
        "tool_use_id": "item_2",
        "content": "",
        "is_error": is_error,
    }


# -- CODEX-CONNECTOR-001 ----------------------------------------------------------

_CONNECTOR_MESSAGE = (
    "Connector tool delete_issue is not allowed for connector linear. Re-list the connector "
    "catalog and choose one of the currently allowed read-only tools."
)


def _connector_error(code: str = "CONNECTOR_TOOL_NOT_FOUND") -> dict[str, Any]:
    return {
        "code": code,
        "message": "tool not found",
        "details": {"connectorId": "linear", "toolName": "delete_issue"},
    }


@pytest.mark.rule("CODEX-CONNECTOR-001")
@pytest.mark.parametrize(
    "output",
    [
        json.dumps({"ok": False, "error": _connector_error()}),
        # JSONL output, the error wrapped under error.data.error
        "progress line\n"
        + json.dumps({"error": {"data": {"error": _connector_error()}}})
        + '\n{"done":true}',
    ],
)
def test_codex_connector_001_connector_tool_not_found_is_fatal(output: str) -> None:
    events = parse(
        item(
            "completed",
            id="item_3",
            type="command_execution",
            command="od connector call",
            aggregated_output=output,
            exit_code=1,
            status="failed",
        ),
        {"type": "turn.failed", "error": {"message": "later failure"}},
    )
    assert [e["type"] for e in events] == ["tool_use", "tool_result", "error"]
    assert events[2] == {"type": "error", "message": _CONNECTOR_MESSAGE}


@pytest.mark.rule("CODEX-CONNECTOR-001")
def test_codex_connector_001_without_details_and_plain_mentions() -> None:
    bare = json.dumps({"error": {"code": "CONNECTOR_TOOL_NOT_FOUND"}})
    events = parse(
        item("completed", id="a", type="command_execution", command="c", aggregated_output=bare),
    )
    assert events[-1] == {
        "type": "error",
        "message": "Connector tool the requested connector tool is not allowed. Re-list the "
        "connector catalog and choose one of the currently allowed read-only tools.",
    }
    # Plain text that mentions the code, or another code, is not a connector error.
    for output in (
        "grep CONNECTOR_TOOL_NOT_FOUND src/",
        json.dumps({"error": _connector_error("X")}) + " CONNECTOR_TOOL_NOT_FOUND",
    ):
        events = parse(
            item(
                "completed", id="b", type="command_execution", command="c", aggregated_output=output
            )
        )
        assert [e["type"] for e in events] == ["tool_use", "tool_result"]


# -- CODEX-FILECHANGE-001 -----------------------------------------------------------


@pytest.mark.rule("CODEX-FILECHANGE-001")
def test_codex_filechange_001_one_call_per_change() -> None:
    changes = [
        {"path": "/p/index.html", "kind": "add"},
        {"path": "/p/brand.md", "kind": "update", "diff": "@@ -1,2 +1,2 @@\n a\n-b\n+B\n+C\n"},
    ]
    events = parse(
        item("started", id="item_3", type="file_change", changes=changes, status="in_progress"),
        item("completed", id="item_3", type="file_change", changes=changes, status="completed"),
    )
    edit_input = {"file_path": "/p/brand.md", "od_diff_stat": {"added": 2, "removed": 1}}
    assert events == [
        {
            "type": "tool_use",
            "id": "item_3#0",
            "name": "Write",
            "input": {"file_path": "/p/index.html"},
        },
        {"type": "tool_use", "id": "item_3#1", "name": "Edit", "input": edit_input},
        {"type": "tool_result", "tool_use_id": "item_3#0", "content": "", "is_error": False},
        {"type": "tool_result", "tool_use_id": "item_3#1", "content": "", "is_error": False},
    ]


@pytest.mark.rule("CODEX-FILECHANGE-001")
def test_codex_filechange_001_add_diff_stat_and_failed_status() -> None:
    changes = [{"path": "a.txt", "kind": "add", "diff": "one\ntwo\n"}]
    events = parse(item("completed", id="i", type="file_change", changes=changes, status="failed"))
    assert events == [
        {
            "type": "tool_use",
            "id": "i#0",
            "name": "Write",
            "input": {"file_path": "a.txt", "od_diff_stat": {"added": 3, "removed": 0}},
        },
        {"type": "tool_result", "tool_use_id": "i#0", "content": "", "is_error": True},
    ]


@pytest.mark.rule("CODEX-FILECHANGE-001")
@pytest.mark.parametrize("phase", ["started", "completed"])
def test_codex_filechange_001_unknown_kind_leaves_the_whole_line_raw(phase: str) -> None:
    changes = [{"path": "/p/a.html", "kind": "add"}, {"path": "/p/old.css", "kind": "delete"}]
    line = item(phase, id="item_4", type="file_change", changes=changes, status="completed")
    assert parse(line) == [{"type": "raw", "line": json.dumps(line)}]


# -- CODEX-MCP-001 ----------------------------------------------------------------


@pytest.mark.rule("CODEX-MCP-001")
def test_codex_mcp_001_mcp_tool_call_failed() -> None:
    started = item(
        "started",
        id="item_2",
        type="mcp_tool_call",
        server="echofacts",
        tool="echo_fact",
        arguments={"topic": "owls"},
        result=None,
        error=None,
        status="in_progress",
    )
    completed = item(
        "completed",
        id="item_2",
        type="mcp_tool_call",
        server="echofacts",
        tool="echo_fact",
        arguments={"topic": "owls"},
        result=None,
        error={"message": "user cancelled MCP tool call"},
        status="failed",
    )
    assert parse(started, completed) == [
        {
            "type": "tool_use",
            "id": "item_2",
            "name": "mcp__echofacts__echo_fact",
            "input": {"topic": "owls"},
        },
        {
            "type": "tool_result",
            "tool_use_id": "item_2",
            "content": "user cancelled MCP tool call",
            "is_error": True,
        },
    ]


@pytest.mark.rule("CODEX-MCP-001")
def test_codex_mcp_001_success_result_and_unnamed_call() -> None:
    result = {"content": [{"type": "text", "text": "Owls can rotate their heads."}]}
    events = parse(
        item(
            "completed",
            id="item_7",
            type="mcp_tool_call",
            server="s",
            tool="t",
            arguments="not an object",
            result=result,
            error=None,
            status="completed",
        )
    )
    assert events == [
        {"type": "tool_use", "id": "item_7", "name": "mcp__s__t", "input": {}},
        {
            "type": "tool_result",
            "tool_use_id": "item_7",
            "content": json.dumps(result, separators=(",", ":")),
            "is_error": False,
        },
    ]
    unnamed = item("started", id="item_8", type="mcp_tool_call", server="", tool="t")
    assert parse(unnamed) == [{"type": "raw", "line": json.dumps(unnamed)}]


# -- CODEX-WEBSEARCH-001 ----------------------------------------------------------


@pytest.mark.rule("CODEX-WEBSEARCH-001")
def test_codex_websearch_001_in_flight_then_settled() -> None:
    # Codex serializes `id` twice; JSON keeps the last one (ref §2.2), as json.loads does.
    started = (
        b'{"type":"item.started","item":{"id":"item_2","type":"web_search",'
        b'"id":"exec-9fb8985e","query":"","action":{"type":"other"}}}\n'
    )
    completed = (
        b'{"type":"item.completed","item":{"id":"item_2","type":"web_search",'
        b'"id":"exec-9fb8985e","query":"codex release notes",'
        b'"action":{"type":"search","query":"codex release notes"}}}\n'
    )
    assert parse_bytes(started + completed) == [
        {"type": "tool_in_flight", "id": "exec-9fb8985e", "name": "web_search", "input": {}},
        {
            "type": "tool_use",
            "id": "exec-9fb8985e",
            "name": "web_search",
            "input": {"query": "codex release notes"},
        },
        {"type": "tool_result", "tool_use_id": "exec-9fb8985e", "content": "", "is_error": False},
    ]


@pytest.mark.rule("CODEX-WEBSEARCH-001")
def test_codex_websearch_001_other_actions_stay_raw() -> None:
    line = item("completed", id="ws", type="web_search", query="x", action={"type": "open_page"})
    assert parse(line) == [{"type": "raw", "line": json.dumps(line)}]


# -- CODEX-WARNING-001 ------------------------------------------------------------


@pytest.mark.rule("CODEX-WARNING-001")
def test_codex_warning_001_error_item_is_a_warning_not_a_failure() -> None:
    notice = "Model metadata for `mock-model` not found"
    events = parse(
        item("completed", id="item_0", type="error", message=notice),
        {"type": "error", "message": "stream error: unexpected status 401"},
    )
    assert events == [
        {"type": "status", "label": "warning", "detail": notice},
        # the warning did not trip the fatal latch
        {"type": "error", "message": "stream error: unexpected status 401"},
    ]


# -- CODEX-USAGE-001 --------------------------------------------------------------


@pytest.mark.rule("CODEX-USAGE-001")
def test_codex_usage_001_turn_completed_usage_normalized() -> None:
    usage = {
        "input_tokens": 24763,
        "cached_input_tokens": 24448,
        "output_tokens": 122,
        "reasoning_output_tokens": 64,
        "total_tokens": 24885,
    }
    assert parse({"type": "turn.completed", "usage": usage}) == [
        {
            "type": "usage",
            "usage": {
                "input_tokens": 24763,
                "output_tokens": 122,
                "thought_tokens": 64,
                "cached_read_tokens": 24448,
            },
        }
    ]
    without = {"type": "turn.completed"}
    assert parse(without) == [{"type": "raw", "line": json.dumps(without)}]


# -- CODEX-ERROR-ONCE-001 ---------------------------------------------------------


@pytest.mark.rule("CODEX-ERROR-ONCE-001")
def test_codex_error_once_001_first_error_only() -> None:
    events = parse(
        {"type": "error", "message": "unexpected status 429 Too Many Requests"},
        {"type": "error", "message": "second"},
        {"type": "turn.failed", "error": {"message": "third"}},
    )
    assert events == [{"type": "error", "message": "unexpected status 429 Too Many Requests"}]


@pytest.mark.rule("CODEX-ERROR-ONCE-001")
def test_codex_error_once_001_turn_failed_first_and_fallbacks() -> None:
    assert parse({"type": "turn.failed"}, {"type": "error"}) == [
        {"type": "error", "message": "Codex turn failed"}
    ]
    assert parse({"type": "error"}) == [{"type": "error", "message": "Codex error"}]
    nested = {"type": "error", "message": json.dumps({"error": {"message": "quota exceeded"}})}
    assert parse(nested) == [{"type": "error", "message": "quota exceeded"}]


# -- CODEX-RECONNECT-001 ----------------------------------------------------------


@pytest.mark.rule("CODEX-RECONNECT-001")
@pytest.mark.parametrize(
    ("message", "detail"),
    [
        (
            "Reconnecting... 2/5 (stream disconnected before completion: error sending request)",
            "2/5",
        ),
        ("Reconnecting... 1/5 (timeout waiting for child process to exit)", "1/5"),
        ("Reconnecting...  3/10 stream disconnected before completion", "3/10"),
    ],
)
def test_codex_reconnect_001_reconnect_is_a_status(message: str, detail: str) -> None:
    events = parse(
        {"type": "error", "message": message},
        {"type": "error", "message": "fatal after retries"},
    )
    assert events == [
        {"type": "status", "label": "agent_reconnecting", "detail": detail},
        # a reconnect notice does not trip the first-error latch
        {"type": "error", "message": "fatal after retries"},
    ]


@pytest.mark.rule("CODEX-RECONNECT-001")
@pytest.mark.parametrize(
    "message",
    [
        # merely mentions it mid-sentence
        "stream failed. Reconnecting... 2/5 (stream disconnected before completion)",
        # no attempt counter, or a zero one
        "Reconnecting... (stream disconnected before completion)",
        "Reconnecting... 0/5 (stream disconnected before completion)",
        # counter glued to a word character (JS \b)
        "Reconnecting... 2/5x stream disconnected before completion",
        # a counter but no known transport cause
        "Reconnecting... 2/5 (unauthorized)",
    ],
)
def test_codex_reconnect_001_other_messages_stay_fatal(message: str) -> None:
    assert parse({"type": "error", "message": message}) == [{"type": "error", "message": message}]


# -- CODEX-ITEMTYPE-001 -------------------------------------------------------------


@pytest.mark.rule("CODEX-ITEMTYPE-001")
@pytest.mark.parametrize(
    ("camel", "snake"),
    [
        ("agentMessage", "agent_message"),
        ("commandExecution", "command_execution"),
        ("fileChange", "file_change"),
        ("mcpToolCall", "mcp_tool_call"),
        ("webSearch", "web_search"),
        ("todoList", "todo_list"),
        ("reasoning", "reasoning"),
        ("error", "error"),
        ("agent_message", "agent_message"),
    ],
)
def test_codex_itemtype_001_normalize_item_type(camel: str, snake: str) -> None:
    assert normalize_item_type(camel) == snake


@pytest.mark.rule("CODEX-ITEMTYPE-001")
def test_codex_itemtype_001_app_server_items_map_through_the_same_mapper() -> None:
    app_server: list[tuple[str, dict[str, Any]]] = [
        ("completed", {"id": "m1", "type": "agentMessage", "text": "Hi"}),
        (
            "started",
            {
                "id": "c1",
                "type": "commandExecution",
                "command": "ls",
                "cwd": "/p",
                "status": "inProgress",
            },
        ),
        (
            "completed",
            {
                "id": "c1",
                "type": "commandExecution",
                "command": "ls",
                "aggregatedOutput": "a\n",
                "exitCode": 3,
                "status": "completed",
            },
        ),
        (
            "completed",
            {
                "id": "f1",
                "type": "fileChange",
                "status": "completed",
                "changes": [
                    {
                        "path": "n.md",
                        "kind": {"type": "update", "move_path": None},
                        "diff": "@@ -1 +1 @@\n-a\n+b\n",
                    }
                ],
            },
        ),
    ]
    exec_json: list[tuple[str, dict[str, Any]]] = [
        ("completed", {"id": "m1", "type": "agent_message", "text": "Hi"}),
        (
            "started",
            {
                "id": "c1",
                "type": "command_execution",
                "command": "ls",
                "cwd": "/p",
                "status": "inProgress",
            },
        ),
        (
            "completed",
            {
                "id": "c1",
                "type": "command_execution",
                "command": "ls",
                "aggregated_output": "a\n",
                "exit_code": 3,
                "status": "completed",
            },
        ),
        (
            "completed",
            {
                "id": "f1",
                "type": "file_change",
                "status": "completed",
                "changes": [{"path": "n.md", "kind": "update", "diff": "@@ -1 +1 @@\n-a\n+b\n"}],
            },
        ),
    ]

    def run(frames: list[tuple[str, dict[str, Any]]], normalize: bool) -> list[Event]:
        out: list[Event] = []
        mapper = CodexEventMapper(out.append)
        for phase, frame in frames:
            assert mapper.item(phase, normalize_item(frame) if normalize else frame)  # type: ignore[arg-type]
        return out

    from_app_server = run(app_server, normalize=True)
    assert from_app_server == run(exec_json, normalize=False)
    assert [e.type for e in from_app_server] == [
        "text_delta",
        "tool_use",
        "tool_result",
        "tool_use",
        "tool_result",
    ]
    assert as_json(from_app_server)[2]["is_error"] is True


# -- JSONEV-CHUNK-001 (codex) ---------------------------------------------------------

_STREAM = (
    jsonl(
        {"type": "thread.started", "thread_id": "th_1"},
        {"type": "turn.started"},
        item("started", id="r0", type="reasoning", text="**Plan**"),
        item("completed", id="r0", type="reasoning", text="**Plan** — déjà vu ✓"),
        item("started", id="t0", type="todo_list", items=[{"text": "page", "completed": False}]),
        item(
            "started",
            id="c0",
            type="command_execution",
            command="cat a\u2028b",
            status="in_progress",
        ),
        item(
            "completed",
            id="c0",
            type="command_execution",
            command="cat",
            aggregated_output="x",
            exit_code=0,
            status="completed",
        ),
        item("started", id="f0", type="file_change", changes=[{"path": "i.html", "kind": "add"}]),
        item("completed", id="f0", type="file_change", changes=[{"path": "i.html", "kind": "add"}]),
        item("completed", id="m0", type="agent_message", text="Done — 完成"),
        item("completed", id="m1", type="agent_message", text="Bye"),
        {"type": "error", "message": "Reconnecting... 1/5 (stream disconnected before completion)"},
        {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 7}},
    )
    + b"trailing noise without newline"
)


@pytest.mark.rule("JSONEV-CHUNK-001")
def test_codex_stream_bytewise_equals_whole() -> None:
    events = parse_bytes(_STREAM)
    assert events[-1] == {"type": "raw", "line": "trailing noise without newline"}
    assert [e["type"] for e in events] == [
        "status",
        "status",
        "thinking_delta",
        "thinking_delta",
        "tool_use",
        "tool_use",
        "tool_result",
        "tool_use",
        "tool_result",
        "text_delta",
        "text_delta",
        "status",
        "usage",
        "raw",
    ]
    assert events[10] == {"type": "text_delta", "delta": "\nBye"}


_EXPECTED = as_json(run_chunked(factory, _STREAM, []))


@pytest.mark.rule("JSONEV-CHUNK-001")
@settings(deadline=None)
@given(cuts=cut_points())
def test_codex_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    assert as_json(run_chunked(factory, _STREAM, cuts)) == _EXPECTED
