"""``session/update`` -> events (harness.protocols.acp.updates), ref §2.6 newer table.

Rules: ACP-UPDATE-TEXT-001, ACP-UPDATE-EXTRACT-001, ACP-UPDATE-THOUGHT-001,
ACP-UPDATE-TOOL-001..005, ACP-UPDATE-STATUS-001, ACP-USAGE-001. Updates are written
by hand from wire §A.1.3. Session-level cases run through ``play`` from
``test_acp.py``, which validates every frame the session writes against the
vendored schema.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.events import Status, TextDelta, ThinkingDelta, ThinkingStart, ToolResult, ToolUse
from harness.protocols.acp.tool_calls import (
    RESULT_LIMIT,
    TRUNCATION_MARK,
    is_think_only,
    normalize_tool_status,
    tool_name,
)
from harness.protocols.acp.updates import UpdateMapper, extract_update_text, format_usage
from harness.protocols.peer import Send, Step
from tests.protocols.test_acp import (
    HANDSHAKE,
    events_of,
    finished,
    play,
    prompt_done,
    thought,
    tool_call,
    tool_update,
)
from tests.support.examples import fuzz_sized


def chunk(text: str, kind: str = "agent_message_chunk") -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def tool(tool_id: str, session_update: str = "tool_call", **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"sessionUpdate": session_update, "toolCallId": tool_id}
    if session_update == "tool_call":
        body["title"] = fields.pop("title", "Tool")
    return {**body, **fields}


def run(*updates: dict[str, Any], prompt_sent_ms: float = 0.0, now_ms: float = 0.0) -> list[Any]:
    mapper = UpdateMapper(prompt_sent_ms=prompt_sent_ms)
    out: list[Any] = []
    for body in updates:
        out.extend(mapper.map(body, now_ms))
    return out


def deltas(events: list[Any]) -> list[str]:
    return [e.delta for e in events if isinstance(e, TextDelta)]


# -- text ------------------------------------------------------------------------------------


@pytest.mark.rule("ACP-UPDATE-TEXT-001")
def test_cumulative_snapshots_emit_only_the_new_suffix() -> None:
    events = run(chunk("Hel"), chunk("Hello"), chunk("Hello world"), chunk("Hello world!"))
    assert deltas(events) == ["Hel", "lo", " world", "!"]


@pytest.mark.rule("ACP-UPDATE-TEXT-001")
def test_plain_deltas_pass_through() -> None:
    events = run(chunk("The "), chunk("page "), chunk("is ready."))
    assert deltas(events) == ["The ", "page ", "is ready."]
    # A chunk that does not start with the emitted text is new text, emitted whole.
    assert deltas(run(chunk("abc"), chunk("xyzxyz"))) == ["abc", "xyzxyz"]


@pytest.mark.rule("ACP-UPDATE-TEXT-001")
def test_a_chunk_equal_to_everything_emitted_is_a_snapshot_with_nothing_new() -> None:
    # ref §2.6 semantics, pinned: "ha" after "ha" is read as a repeated snapshot.
    assert deltas(run(chunk("ha"), chunk("ha"), chunk("hah"))) == ["ha", "h"]


@pytest.mark.rule("ACP-UPDATE-TEXT-001")
def test_first_visible_text_emits_streaming_once_with_ttft() -> None:
    mapper = UpdateMapper(prompt_sent_ms=100.0)
    assert mapper.map(chunk(""), 110.0) == []
    assert mapper.map(chunk("Hi"), 125.0) == [
        Status(label="streaming", ttft_ms=25.0),
        TextDelta(delta="Hi"),
    ]
    assert mapper.map(chunk(" there"), 130.0) == [TextDelta(delta=" there")]
    assert mapper.text == "Hi there"


@pytest.mark.rule("ACP-UPDATE-TEXT-001")
@settings(max_examples=100)
@given(st.lists(st.text(alphabet="ab ", min_size=1, max_size=6), min_size=1, max_size=8))
def test_snapshot_stream_reconstructs_the_final_text(pieces: list[str]) -> None:
    snapshots = ["".join(pieces[: i + 1]) for i in range(len(pieces))]
    events = run(*(chunk(s) for s in snapshots))
    assert "".join(deltas(events)) == snapshots[-1]


@pytest.mark.rule("ACP-UPDATE-EXTRACT-001")
@pytest.mark.parametrize(
    ("body", "text"),
    [
        ({"content": {"type": "text", "text": "a"}}, "a"),
        ({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, "ab"),
        ({"content": {"type": "text", "text": ""}, "text": "fallback"}, "fallback"),
        ({"delta": "d"}, "d"),
        ({"message": {"parts": [{"text": "p1"}, {"text": "p2"}]}}, "p1p2"),
        ({"choices": [{"delta": {"content": "c"}}]}, "c"),
        ({"content": {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}}, ""),
        ({"content": {"content": {"content": {"content": {"text": "too deep"}}}}}, ""),
        ({"content": {"content": {"content": {"text": "deep enough"}}}}, "deep enough"),
        ({"content": 5, "answer": "x"}, "x"),
        ({}, ""),
    ],
)
def test_update_text_extraction(body: dict[str, Any], text: str) -> None:
    assert extract_update_text(body) == text


# -- thoughts ---------------------------------------------------------------------------------


@pytest.mark.rule("ACP-UPDATE-THOUGHT-001")
def test_thought_chunks_start_thinking_once() -> None:
    events = run(
        chunk("", "agent_thought_chunk"),
        chunk("Plan the", "agent_thought_chunk"),
        chunk("Text", "agent_message_chunk"),
        chunk(" layout.", "agent_thought_chunk"),
    )
    assert events == [
        ThinkingStart(),
        ThinkingDelta(delta="Plan the"),
        Status(label="streaming", ttft_ms=0.0),
        TextDelta(delta="Text"),
        ThinkingDelta(delta=" layout."),
    ]


@pytest.mark.rule("ACP-UPDATE-THOUGHT-001")
def test_thoughts_through_the_session() -> None:
    _, res = play([*HANDSHAKE, Send(thought("a")), Send(thought("b")), Send(prompt_done())])
    assert events_of(res, ThinkingStart, ThinkingDelta) == [
        ThinkingStart(),
        ThinkingDelta(delta="a"),
        ThinkingDelta(delta="b"),
    ]


# -- tools --------------------------------------------------------------------------------------


@pytest.mark.rule("ACP-UPDATE-TOOL-001")
def test_one_tool_use_and_one_result_per_call_at_the_terminal_status() -> None:
    mapper = UpdateMapper()
    out: list[Any] = []
    out += mapper.map(
        tool("call_01HX", kind="edit", status="pending", rawInput={"path": "a.html"}), 5
    )
    out += mapper.map(
        tool("call_01HX", "tool_call_update", status="in_progress", rawInput={"content": "<p>"}), 6
    )
    assert [e for e in out if not isinstance(e, Status)] == []
    out += mapper.map(
        tool("call_01HX", "tool_call_update", status="completed", rawOutput="wrote a.html"), 7
    )
    out += mapper.map(
        tool("call_01HX", "tool_call_update", status="completed", rawOutput="again"), 8
    )
    assert [e for e in out if not isinstance(e, Status)] == [
        ToolUse(
            id="call_01HX",
            name="Edit",
            input={"path": "a.html", "content": "<p>", "file_path": "a.html"},
            started_at_ms=5,
        ),
        ToolResult(tool_use_id="call_01HX", content="wrote a.html", is_error=False),
    ]
    assert [e.label for e in out if isinstance(e, Status)] == ["tool_call"] + [
        "tool_call_update"
    ] * 3
    assert mapper.open_tool_ids == [] and mapper.flush(is_error=False) == []


@pytest.mark.rule("ACP-UPDATE-TOOL-001")
@pytest.mark.parametrize(
    ("status", "is_error"),
    [
        ("completed", False),
        ("Complete", False),
        ("succeeded", False),
        ("SUCCESS", False),
        ("failed", True),
        ("Failure", True),
        ("error", True),
        ("cancelled", True),
        ("Canceled", True),
        ("in progress", None),
        ("in_progress", None),
        ("pending", None),
        (None, None),
    ],
)
def test_terminal_statuses_are_normalized(status: str | None, is_error: bool | None) -> None:
    expected = None if is_error is None else ("error" if is_error else "ok")
    assert normalize_tool_status(status) == expected
    events = run(tool("t", kind="read", status=status))
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.is_error for r in results] == ([] if is_error is None else [is_error])


@pytest.mark.rule("ACP-UPDATE-TOOL-001", "ACP-UPDATE-TOOL-005")
def test_tools_through_the_session_keep_the_agent_tool_call_id() -> None:
    script: list[Step] = [
        *HANDSHAKE,
        Send(tool_call("toolu_01A", kind="execute", status="pending", rawInput={"command": "ls"})),
        Send(
            tool_update(
                "toolu_01A", status="completed", rawOutput={"stdout": "a.html\n", "exit": 0}
            )
        ),
        Send(
            tool_call(
                "toolu_02B",
                kind="fetch",
                status="in_progress",
                rawInput={"url": "https://example.com"},
            )
        ),
        Send(prompt_done()),
    ]
    _, res = play(script)
    assert events_of(res, ToolUse, ToolResult) == [
        ToolUse(id="toolu_01A", name="Bash", input={"command": "ls"}, started_at_ms=0),
        ToolResult(
            tool_use_id="toolu_01A", content='{"stdout": "a.html\\n", "exit": 0}', is_error=False
        ),
        ToolUse(
            id="toolu_02B", name="Fetch", input={"url": "https://example.com"}, started_at_ms=0
        ),
        ToolResult(tool_use_id="toolu_02B", content="", is_error=False),
    ]
    assert finished(res).error is None


@pytest.mark.rule("ACP-UPDATE-TOOL-002")
@pytest.mark.parametrize(
    ("kind", "name", "title", "expected"),
    [
        ("edit", None, "x", "Edit"),
        ("patch", None, None, "Edit"),
        ("write", None, None, "Write"),
        ("create", None, None, "Write"),
        ("read", "Bash", None, "Read"),
        ("execute", None, None, "Bash"),
        ("shell", None, None, "Bash"),
        ("search", None, None, "Grep"),
        ("glob", None, None, "Grep"),
        ("think", None, None, "Think"),
        ("fetch", None, None, "Fetch"),
        ("web", None, None, "Fetch"),
        ("delete", None, None, "Delete"),
        ("switch_mode", None, None, "SwitchMode"),
        ("other", "write_file", None, "Write"),
        ("other", "mcp__acp__Write", None, "Write"),
        (None, "str_replace", None, "Edit"),
        (None, "list_dir", None, "list_dir"),
        (None, "Bash", None, "Other"),
        (None, "run_command", None, "Other"),
        (None, "not an identifier!", "Write hello.html", "Write"),
        (None, None, "Read README.md", "Read"),
        (None, None, "Searching for usages", "Other"),
        (None, None, None, "Other"),
    ],
)
def test_tool_names(kind: str | None, name: str | None, title: str | None, expected: str) -> None:
    assert tool_name(kind, name, title) == expected


@pytest.mark.rule("ACP-UPDATE-TOOL-003")
def test_file_path_comes_from_the_best_ranked_source() -> None:
    def input_of(*updates: dict[str, Any]) -> Any:
        events = run(*updates)
        return next(e for e in events if isinstance(e, ToolUse)).input

    # rank 1: a path-like title token
    assert input_of(tool("t", title="Write `site/index.html`", status="completed")) == {
        "file_path": "site/index.html"
    }
    # rank 2 beats rank 1
    assert input_of(
        tool(
            "t", title="Write index.html", rawInput={"filePath": "/w/real.html"}, status="completed"
        )
    ) == {"filePath": "/w/real.html", "file_path": "/w/real.html"}
    # rank 3 (locations, diff content) beats rank 2
    assert input_of(
        tool(
            "t",
            title="Edit",
            rawInput={"path": "rel.html"},
            locations=[{"path": "/w/loc.html", "line": 3}],
        ),
        tool("t", "tool_call_update", status="completed"),
    ) == {"path": "rel.html", "file_path": "/w/loc.html"}
    assert input_of(
        tool(
            "t",
            content=[{"type": "diff", "path": "/w/diff.css", "newText": "a{}"}],
            status="completed",
        )
    ) == {"file_path": "/w/diff.css"}
    # an explicit rawInput.file_path is kept; a non-object rawInput is wrapped; never the id
    assert input_of(
        tool("/w/id-looks-like-a-path.txt", rawInput={"file_path": "keep.txt"}, status="completed")
    ) == {"file_path": "keep.txt"}
    assert input_of(tool("a/b.txt", rawInput="ls -la", status="completed")) == {
        "raw_input": "ls -la"
    }
    # a URL in the title is not a path
    assert input_of(tool("t", title="Fetch https://example.com/a.html", status="completed")) == {}


@pytest.mark.rule("ACP-UPDATE-TOOL-003")
def test_result_text_sources_and_truncation() -> None:
    def result_of(*updates: dict[str, Any]) -> str:
        events = run(*updates)
        return next(e for e in events if isinstance(e, ToolResult)).content

    diff = {"type": "diff", "path": "/w/a.txt", "oldText": "old line", "newText": "new line"}
    text = {"type": "content", "content": {"type": "text", "text": "3 matches"}}
    terminal = {"type": "terminal", "terminalId": "term-1"}
    assert (
        result_of(tool("t", content=[diff], status="completed"))
        == "--- old\nold line\n+++ new\nnew line"
    )
    assert result_of(tool("t", content=[text, terminal, diff], status="completed")) == (
        "3 matches\n--- old\nold line\n+++ new\nnew line"
    )
    assert (
        result_of(tool("t", content=[text], rawOutput="raw wins", status="completed")) == "raw wins"
    )
    assert result_of(tool("t", rawOutput=["a", 1], status="completed")) == '["a", 1]'
    # ref §2.6: "truncated at 8000 chars with `\n…[truncated]`".
    assert RESULT_LIMIT == 8000 and TRUNCATION_MARK == "\n…[truncated]"
    truncated = result_of(tool("t", rawOutput="x" * 8050, status="completed"))
    assert truncated == "x" * 8000 + "\n…[truncated]"
    assert result_of(tool("t", rawOutput="y" * 8000, status="completed")) == "y" * 8000


@pytest.mark.rule("ACP-UPDATE-TOOL-004")
@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "think"},
        {"title": "Thinking"},
        {"name": "reasoning", "title": "x"},
        {"kind": "Thought"},
    ],
)
def test_think_only_tools_are_never_transcribed(fields: dict[str, Any]) -> None:
    mapper = UpdateMapper()
    events = mapper.map(tool("th-1", status="in_progress", **fields), 0)
    events += mapper.flush(is_error=False)
    events += mapper.map(tool("th-2", status="completed", **fields), 0)
    assert not [e for e in events if isinstance(e, (ToolUse, ToolResult))]
    assert is_think_only(fields.get("kind"), fields.get("name"), fields.get("title"))
    assert not is_think_only("edit", "write_file", "Write a thinking.md")


@pytest.mark.rule("ACP-UPDATE-TOOL-004")
def test_think_only_tools_through_the_session() -> None:
    script: list[Step] = [
        *HANDSHAKE,
        Send(tool_call("th", kind="think", status="completed", rawOutput="secret plan")),
        Send(tool_call("rd", kind="read", status="completed")),
        Send(prompt_done()),
    ]
    _, res = play(script)
    assert [e.id for e in events_of(res, ToolUse)] == ["rd"]


@pytest.mark.rule("ACP-UPDATE-TOOL-005")
def test_flush_closes_open_tools_with_the_given_error_flag() -> None:
    mapper = UpdateMapper()
    mapper.map(tool("a", kind="read", status="pending"), 1)
    mapper.map(tool("b", kind="edit", status="completed"), 2)
    mapper.map(tool("c", kind="execute", status="in_progress", rawOutput="partial"), 3)
    assert mapper.open_tool_ids == ["a", "c"]
    flushed = mapper.flush(is_error=True)
    assert [
        (e.tool_use_id, e.content, e.is_error) for e in flushed if isinstance(e, ToolResult)
    ] == [
        ("a", "", True),
        ("c", "partial", True),
    ]
    assert mapper.flush(is_error=True) == []
    # Updates after the flush do not transcribe the tool a second time.
    assert [
        e
        for e in mapper.map(tool("a", "tool_call_update", status="completed"), 4)
        if not isinstance(e, Status)
    ] == []


# -- other updates ---------------------------------------------------------------------------------


@pytest.mark.rule("ACP-UPDATE-STATUS-001")
@pytest.mark.parametrize(
    ("body", "events"),
    [
        ({"sessionUpdate": "plan", "entries": []}, [Status(label="plan")]),
        (
            {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
            [Status(label="current_mode_update", detail="ask")],
        ),
        (
            {"sessionUpdate": "config_option_update", "configOptions": []},
            [Status(label="config_option_update")],
        ),
        ({"sessionUpdate": "compaction_update"}, [Status(label="compaction_update")]),
        ({"sessionUpdate": ""}, [Status(label="session_update")]),
        ({}, [Status(label="session_update")]),
        ({"sessionUpdate": "usage_update", "used": 10, "size": 100}, []),
        ({"sessionUpdate": "session_info_update", "title": "Pricing"}, []),
        ({"sessionUpdate": "available_commands_update", "availableCommands": []}, []),
        ({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "me"}}, []),
    ],
)
def test_non_chunk_updates_become_status_or_are_ignored(
    body: dict[str, Any], events: list[Any]
) -> None:
    assert run(body) == events


# -- usage --------------------------------------------------------------------------------------


@pytest.mark.rule("ACP-USAGE-001")
@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (
            {
                "inputTokens": 10,
                "outputTokens": 5,
                "cachedReadTokens": 2,
                "cachedWriteTokens": 1,
                "thoughtTokens": 3,
                "totalTokens": 21,
            },
            {
                "input_tokens": 10,
                "output_tokens": 5,
                "cached_read_tokens": 2,
                "cached_write_tokens": 1,
                "thought_tokens": 3,
                "total_tokens": 21,
            },
        ),
        (
            {
                "input_tokens": 1,
                "output_tokens": 2,
                "cache_read_input_tokens": 4,
                "cache_creation_input_tokens": 6,
            },
            {
                "input_tokens": 1,
                "output_tokens": 2,
                "cache_read_input_tokens": 4,
                "cache_creation_input_tokens": 6,
            },
        ),
        (
            {"cacheCreationTokens": 8, "cached_read_tokens": 9},
            {"cache_creation_input_tokens": 8, "cached_read_tokens": 9},
        ),
        (
            {
                "inputTokens": "10",
                "outputTokens": True,
                "totalTokens": None,
                "thoughtTokens": float("inf"),
            },
            None,
        ),
        ({"inputTokens": 1.5, "custom": 3}, {"input_tokens": 1.5}),
        ({}, None),
        (None, None),
        ([1, 2], None),
    ],
)
def test_usage_normalization(usage: Any, expected: dict[str, Any] | None) -> None:
    assert format_usage(usage) == expected


@pytest.mark.rule("ACP-ROBUST-001")
@fuzz_sized(100)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(
                [
                    "sessionUpdate",
                    "toolCallId",
                    "kind",
                    "status",
                    "title",
                    "name",
                    "rawInput",
                    "rawOutput",
                    "content",
                    "locations",
                ]
            ),
            st.recursive(
                st.none()
                | st.booleans()
                | st.integers()
                | st.text(max_size=6)
                | st.sampled_from(
                    [
                        "tool_call",
                        "tool_call_update",
                        "agent_message_chunk",
                        "completed",
                        "think",
                        "edit",
                    ]
                ),
                lambda inner: (
                    st.lists(inner, max_size=3)
                    | st.dictionaries(
                        st.sampled_from(["path", "text", "type", "content", "newText"]),
                        inner,
                        max_size=3,
                    )
                ),
                max_leaves=8,
            ),
            max_size=6,
        ),
        max_size=8,
    )
)
def test_mapper_never_raises(updates: list[dict[str, Any]]) -> None:
    mapper = UpdateMapper()
    for body in updates:
        for event in mapper.map(body, 1.0):
            event.to_json()
    for event in mapper.flush(is_error=True):
        assert isinstance(event, (ToolUse, ToolResult))
