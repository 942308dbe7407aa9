"""Anthropic Messages against a real server (MODEL-ANTH-*, and the script rules through it).

Request bodies are written from the shapes real-clis.md records for claude 2.1.332:
``POST /v1/messages?beta=true``, ``stream: true``, ``role: "system"`` entries inside
``messages``, tool results as user messages with ``tool_result`` blocks.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from tests.modelserver.conftest import ServeFn
from tests.modelserver.support import (
    CLAUDE_BASH,
    CLAUDE_TODO,
    CLAUDE_WRITE,
    post,
    scenario_of,
)

KEY = {"x-api-key": "sk-ant-fake-key", "anthropic-version": "2023-06-01"}
TOOLS = [CLAUDE_TODO, CLAUDE_BASH, CLAUDE_WRITE]
SYSTEM = [{"type": "text", "text": "You are Claude Code.\n\nWorking directory: /work/proj\n"}]


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-opus-5-5",
        "max_tokens": 128000,
        "stream": True,
        "system": SYSTEM,
        "tools": TOOLS,
        "messages": messages,
        **extra,
    }


PROMPT = {"role": "user", "content": [{"type": "text", "text": "Create hello.html please."}]}
TOOL_USE = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "call_write_1", "name": "Write", "input": {}}],
}
TOOL_RESULT = {
    "role": "user",
    "content": [{"type": "tool_result", "tool_use_id": "call_write_1", "content": "ok"}],
}


def names(events: list[tuple[str | None, Any]]) -> list[str]:
    return [str(name) for name, _ in events]


def block_types(events: list[tuple[str | None, Any]]) -> list[str]:
    return [d["content_block"]["type"] for n, d in events if n == "content_block_start"]


@pytest.mark.rule("MODEL-ANTH-001", "MODEL-SCRIPT-003", "MODEL-SCRIPT-004")
def test_text_reply_streams_the_documented_event_sequence(serve: ServeFn) -> None:
    server = serve("text")
    reply = post(server, "/v1/messages?beta=true", body([PROMPT]), headers=KEY)
    assert reply.status == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = reply.events()
    assert names(events) == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    for name, data in events:
        assert data["type"] == name  # the event line names the data's type
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    assert [d["type"] for d in deltas] == ["text_delta"] * 3
    assert [d["text"] for d in deltas] == ["Hello from ", "the fake model.", " PONG."]
    start = events[0][1]["message"]
    assert start["role"] == "assistant" and start["model"] == "claude-opus-5-5"
    assert start["usage"]["input_tokens"] == 10
    final = events[-2][1]
    assert final["delta"]["stop_reason"] == "end_turn"
    assert final["usage"]["output_tokens"] == 8


@pytest.mark.rule(
    "MODEL-ANTH-001", "MODEL-SCRIPT-001", "MODEL-SCRIPT-003", "MODEL-TOOL-001", "MODEL-TOOL-004"
)
def test_first_request_gets_thinking_text_and_one_write_call(serve: ServeFn) -> None:
    server = serve("happy")
    events = post(server, "/v1/messages?beta=true", body([PROMPT]), headers=KEY).events()
    assert block_types(events) == ["thinking", "text", "tool_use"]
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    thinking = [d["thinking"] for d in deltas if d["type"] == "thinking_delta"]
    assert thinking == ["The user wants a page."]
    assert any(d["type"] == "signature_delta" and d["signature"] for d in deltas)
    assert [d["text"] for d in deltas if d["type"] == "text_delta"] == ["I'll create ", "the page."]
    tool = next(
        d["content_block"]
        for n, d in events
        if n == "content_block_start" and d["content_block"]["type"] == "tool_use"
    )
    assert tool["name"] == "Write" and tool["id"] == "call_write_1"
    arguments = json.loads(
        "".join(d["partial_json"] for d in deltas if d["type"] == "input_json_delta")
    )
    # Write asks for "absolute, not relative" paths: made absolute under the prompt's cwd.
    assert arguments == {
        "file_path": "/work/proj/hello.html",
        "content": "<!doctype html>\n<h1>Hello</h1>\n",
    }
    jsonschema.validate(arguments, CLAUDE_WRITE["input_schema"])
    assert [d["delta"]["stop_reason"] for n, d in events if n == "message_delta"] == ["tool_use"]
    assert server.requests[-1].reply_kind == "tool_call"


@pytest.mark.rule("MODEL-SCRIPT-001", "MODEL-SCRIPT-004")
def test_tool_result_turn_gets_the_final_text_and_the_usage(serve: ServeFn) -> None:
    server = serve("happy")
    events = post(
        server, "/v1/messages", body([PROMPT, TOOL_USE, TOOL_RESULT]), headers=KEY
    ).events()
    assert block_types(events) == ["text"]
    texts = [d["delta"]["text"] for n, d in events if n == "content_block_delta"]
    assert "".join(texts) == "Done: hello.html is ready."
    final = next(d for n, d in events if n == "message_delta")
    assert final["delta"]["stop_reason"] == "end_turn"
    assert final["usage"]["output_tokens"] == 45 and final["usage"]["input_tokens"] == 120
    first = post(server, "/v1/messages", body([PROMPT]), headers=KEY).events()
    # the first segment has no usage step: zero usage, so the turn's total is the scenario's
    assert next(d for n, d in first if n == "message_delta")["usage"]["output_tokens"] == 0
    assert [r.segment for r in server.requests] == [1, 0]


@pytest.mark.rule("MODEL-SCRIPT-002")
@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # claude 2.1.332 puts role:"system" entries inside messages: still the first turn
        (
            [PROMPT, {"role": "system", "content": "Context was compacted."}],
            ["thinking", "text", "tool_use"],
        ),
        # a system entry after the tool result: still the tool-result turn
        ([PROMPT, TOOL_USE, TOOL_RESULT, {"role": "system", "content": "note"}], ["text"]),
        # a user turn that only carries a system reminder is not a real user turn
        (
            [
                PROMPT,
                TOOL_USE,
                TOOL_RESULT,
                {
                    "role": "user",
                    "content": "<system-reminder>todo list is empty</system-reminder>",
                },
            ],
            ["text"],
        ),
        # a resumed session: a new real user turn starts the scenario over
        (
            [
                PROMPT,
                TOOL_USE,
                TOOL_RESULT,
                {"role": "assistant", "content": "Done."},
                {"role": "system", "content": "resumed"},
                {"role": "user", "content": "Again."},
            ],
            ["thinking", "text", "tool_use"],
        ),
    ],
    ids=["system-after-prompt", "system-after-result", "reminder-only", "resumed"],
)
def test_system_entries_are_skipped_when_finding_the_last_user_turn(
    serve: ServeFn, messages: list[dict[str, Any]], expected: list[str]
) -> None:
    server = serve("happy")
    events = post(server, "/v1/messages", body(messages), headers=KEY).events()
    assert block_types(events) == expected


@pytest.mark.rule("MODEL-ANTH-002")
def test_non_streaming_reply_is_one_message_object(serve: ServeFn) -> None:
    server = serve("happy")
    reply = post(server, "/v1/messages", body([PROMPT], stream=False), headers=KEY)
    assert reply.status == 200
    message = reply.json()
    assert message["type"] == "message" and message["role"] == "assistant"
    assert [b["type"] for b in message["content"]] == ["thinking", "text", "tool_use"]
    assert message["content"][1]["text"] == "I'll create the page."
    assert message["content"][2]["input"]["file_path"] == "/work/proj/hello.html"
    assert message["stop_reason"] == "tool_use"


@pytest.mark.rule("MODEL-ANTH-002", "MODEL-ROUTE-001")
def test_count_tokens_answers_input_tokens(serve: ServeFn) -> None:
    server = serve("happy")
    reply = post(
        server,
        "/v1/messages/count_tokens?beta=true",
        {"model": "m", "messages": [PROMPT]},
        headers=KEY,
    )
    assert reply.status == 200
    answer = reply.json()
    assert set(answer) == {"input_tokens"}
    assert isinstance(answer["input_tokens"], int) and answer["input_tokens"] > 0
    assert server.requests[-1].reply_kind == "count_tokens"


@pytest.mark.rule("MODEL-ERR-001")
def test_api_error_is_anthropics_error_body_and_status(serve: ServeFn) -> None:
    server = serve("api_error")
    reply = post(server, "/v1/messages?beta=true", body([PROMPT]), headers=KEY)
    assert reply.status == 500
    assert reply.json() == {
        "type": "error",
        "error": {"type": "api_error", "message": "Internal server error"},
    }
    bad = serve(scenario_of("bad", [{"kind": "api_error", "message": "nope", "status": 400}]))
    reply = post(bad, "/v1/messages", body([PROMPT]), headers=KEY)
    assert reply.status == 400
    assert reply.json()["error"] == {"type": "invalid_request_error", "message": "nope"}


@pytest.mark.rule("MODEL-ERR-001", "MODEL-ANTH-001")
def test_error_after_content_is_an_in_stream_error_event(serve: ServeFn) -> None:
    server = serve(
        scenario_of(
            "late",
            [
                {"kind": "text", "text": "Partial"},
                {
                    "kind": "api_error",
                    "message": "Overloaded",
                    "code": "overloaded_error",
                    "status": 529,
                },
            ],
        )
    )
    events = post(server, "/v1/messages", body([PROMPT]), headers=KEY).events()
    assert names(events)[-1] == "error"
    assert events[-1][1] == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    assert "message_stop" not in names(events)


TITLE_SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string", "minLength": 1}},
    "required": ["title"],
    "additionalProperties": False,
}


@pytest.mark.rule("MODEL-STRUCT-001", "MODEL-SCRIPT-005")
@pytest.mark.parametrize(
    "extra",
    [
        {"output_config": {"format": {"type": "json_schema", "schema": TITLE_SCHEMA}}},
        {"output_format": {"type": "json_schema", "schema": TITLE_SCHEMA}},
    ],
    ids=["output_config.format", "output_format"],
)
def test_structured_output_is_schema_valid_json(serve: ServeFn, extra: dict[str, Any]) -> None:
    server = serve("happy")
    events = post(server, "/v1/messages", body([PROMPT], **extra), headers=KEY).events()
    assert block_types(events) == ["text"]  # no scenario step consumed
    text = "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta")
    jsonschema.validate(json.loads(text), TITLE_SCHEMA)
    record = server.requests[-1]
    assert record.structured and record.reply_kind == "structured"


@pytest.mark.rule("MODEL-STRUCT-001")
def test_forced_tool_choice_gets_a_schema_valid_tool_call(serve: ServeFn) -> None:
    server = serve("happy")
    schema = {
        "type": "object",
        "properties": {
            "isNewTopic": {"type": "boolean"},
            "title": {"type": ["string", "null"]},
            "score": {"type": "integer", "minimum": 3, "maximum": 9},
        },
        "required": ["isNewTopic", "title", "score"],
    }
    forced = {
        "name": "StructuredOutput",
        "description": "Return the answer",
        "input_schema": schema,
    }
    events = post(
        server,
        "/v1/messages",
        body(
            [PROMPT],
            tools=[*TOOLS, forced],
            tool_choice={"type": "tool", "name": "StructuredOutput"},
        ),
        headers=KEY,
    ).events()
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert [(b["type"], b["name"]) for b in starts] == [("tool_use", "StructuredOutput")]
    args = json.loads(
        "".join(d["delta"]["partial_json"] for n, d in events if n == "content_block_delta")
    )
    jsonschema.validate(args, schema)
