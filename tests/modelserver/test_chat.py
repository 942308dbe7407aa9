"""OpenAI Chat Completions against a real server (MODEL-CHAT-*, script and tool rules).

Request bodies follow real-clis.md: opencode 1.18.33 (``stream_options.include_usage``,
tools ``bash, todowrite, write``, a title request without tools), pi, qwen ("SUGGESTION
MODE" and memory-extraction side requests) and aider (no tools, system reminders).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.modelserver.conftest import ServeFn
from tests.modelserver.support import CHAT_BASH, CHAT_TODO, CHAT_WRITE, post, scenario_of

AUTH = {"authorization": "Bearer sk-fake-opencode-0000000000"}
PROMPT: dict[str, Any] = {"role": "user", "content": "Create hello.html please."}
SYSTEM: dict[str, Any] = {
    "role": "system",
    "content": "You are opencode. Working directory: /work/proj",
}


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "model": "mock-model",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 32000,
        "tools": [CHAT_BASH, CHAT_TODO, CHAT_WRITE],
        "messages": [SYSTEM, *messages],
        **extra,
    }


def deltas(events: list[tuple[str | None, Any]]) -> list[dict[str, Any]]:
    return [d["choices"][0]["delta"] for _, d in events if isinstance(d, dict) and d.get("choices")]


def finish(events: list[tuple[str | None, Any]]) -> list[str]:
    return [
        d["choices"][0]["finish_reason"]
        for _, d in events
        if isinstance(d, dict) and d.get("choices") and d["choices"][0]["finish_reason"]
    ]


def content(events: list[tuple[str | None, Any]]) -> str:
    return "".join(d.get("content") or "" for d in deltas(events))


@pytest.mark.rule("MODEL-CHAT-001", "MODEL-SCRIPT-003", "MODEL-SCRIPT-004")
def test_text_reply_streams_role_content_finish_usage_done(serve: ServeFn) -> None:
    server = serve("text")
    reply = post(server, "/v1/chat/completions", body([PROMPT]), headers=AUTH)
    assert reply.status == 200
    events = reply.events()
    assert events[-1] == (None, "[DONE]")
    chunks = [d for _, d in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert [d.get("content") for d in deltas(events)[1:-1]] == [
        "Hello from ",
        "the fake model.",
        " PONG.",
    ]
    assert finish(events) == ["stop"]
    usage_chunk = chunks[-1]
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"]["prompt_tokens"] == 10
    assert usage_chunk["usage"]["completion_tokens"] == 8
    assert usage_chunk["usage"]["total_tokens"] == 18
    # without include_usage there is no usage chunk
    plain = post(
        server,
        "/v1/chat/completions",
        body([PROMPT], stream_options={"include_usage": False}),
        headers=AUTH,
    ).events()
    assert not any("usage" in d for _, d in plain if isinstance(d, dict))
    assert plain[-1] == (None, "[DONE]")


@pytest.mark.rule("MODEL-CHAT-001", "MODEL-TOOL-001", "MODEL-TOOL-004", "MODEL-SCRIPT-003")
def test_write_step_streams_tool_calls_deltas(serve: ServeFn) -> None:
    server = serve("happy")
    events = post(server, "/v1/chat/completions", body([PROMPT]), headers=AUTH).events()
    ds = deltas(events)
    assert [d["reasoning_content"] for d in ds if "reasoning_content" in d] == [
        "The user wants a page."
    ]
    assert content(events) == "I'll create the page."
    calls = [d["tool_calls"][0] for d in ds if "tool_calls" in d]
    first, rest = calls[0], calls[1:]
    assert first["index"] == 0 and first["id"] == "call_write_1" and first["type"] == "function"
    assert first["function"] == {"name": "write", "arguments": ""}
    assert rest and all(set(c) == {"index", "function"} for c in rest)
    arguments = json.loads("".join(c["function"]["arguments"] for c in rest))
    # "write" does not ask for absolute paths: the path stays relative
    assert arguments == {"filePath": "hello.html", "content": "<!doctype html>\n<h1>Hello</h1>\n"}
    assert finish(events) == ["tool_calls"]


@pytest.mark.rule("MODEL-SCRIPT-001")
def test_tool_message_gets_the_final_text(serve: ServeFn) -> None:
    server = serve("happy")
    messages: list[dict[str, Any]] = [
        PROMPT,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_write_1",
                    "type": "function",
                    "function": {"name": "write", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_write_1", "content": "Wrote file successfully."},
    ]
    events = post(server, "/v1/chat/completions", body(messages), headers=AUTH).events()
    assert content(events) == "Done: hello.html is ready."
    assert finish(events) == ["stop"]


AIDER_DIFF_SYSTEM = (
    "Act as an expert software developer.\nAlways use best practices when coding.\n"
    "Describe each change with a *SEARCH/REPLACE block* per the examples below."
)


@pytest.mark.rule("MODEL-TOOL-002", "MODEL-SCRIPT-002")
def test_without_tools_the_whole_scenario_comes_as_aider_text(serve: ServeFn) -> None:
    server = serve("happy")
    reminder = {"role": "system", "content": "# SEARCH/REPLACE block Rules: ..."}
    request = {
        "model": "mock-model",
        "stream": True,
        "messages": [{"role": "system", "content": AIDER_DIFF_SYSTEM}, PROMPT, reminder],
    }
    text = content(post(server, "/v1/chat/completions", request, headers=AUTH).events())
    assert text == (
        "I'll create the page.\nhello.html\n```\n<<<<<<< SEARCH\n=======\n"
        "<!doctype html>\n<h1>Hello</h1>\n>>>>>>> REPLACE\n```\nDone: hello.html is ready."
    )
    whole = dict(request, messages=[{"role": "system", "content": "Act as an expert."}, PROMPT])
    text = content(post(server, "/v1/chat/completions", whole, headers=AUTH).events())
    assert "\nhello.html\n```\n<!doctype html>\n<h1>Hello</h1>\n```\n" in text
    assert server.requests[-1].reply_kind == "text"


@pytest.mark.rule("MODEL-TOOL-002", "MODEL-TOOL-003")
def test_shell_fallback_command_really_writes_the_file(serve: ServeFn, tmp_path: Path) -> None:
    content_text = "line 'one'\n$HOME and `backticks`\n"
    server = serve(
        scenario_of(
            "w",
            [
                {
                    "kind": "tool",
                    "tool": "write",
                    "id": "c1",
                    "path": "sub/dir/out.txt",
                    "content": content_text,
                }
            ],
        )
    )
    events = post(
        server, "/v1/chat/completions", body([PROMPT], tools=[CHAT_TODO, CHAT_BASH]), headers=AUTH
    ).events()
    calls = [d["tool_calls"][0] for d in deltas(events) if "tool_calls" in d]
    assert calls[0]["function"]["name"] == "bash"
    args = json.loads("".join(c["function"]["arguments"] for c in calls[1:]))
    jsonschema.validate(args, CHAT_BASH["function"]["parameters"])  # "description" is required
    subprocess.run(["sh", "-c", args["command"]], cwd=tmp_path, check=True, timeout=10)
    assert (tmp_path / "sub" / "dir" / "out.txt").read_text() == content_text


@pytest.mark.rule("MODEL-ERR-001")
def test_api_error_is_openais_error_body(serve: ServeFn) -> None:
    server = serve(
        scenario_of(
            "e",
            [{"kind": "api_error", "message": "slow down", "code": "rate_limit", "status": 429}],
        )
    )
    reply = post(server, "/v1/chat/completions", body([PROMPT]), headers=AUTH)
    assert reply.status == 429
    assert reply.json() == {
        "error": {
            "message": "slow down",
            "type": "rate_limit_exceeded",
            "code": "rate_limit",
            "param": None,
        }
    }
    assert server.requests[-1].reply_kind == "error"
    assert server.requests[-1].status == 429


@pytest.mark.rule("MODEL-STRUCT-001")
def test_response_format_gets_schema_valid_content(serve: ServeFn) -> None:
    server = serve("happy")
    schema = {
        "type": "object",
        "properties": {
            "memories": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "fact": {"type": "string"},
                        "scope": {"enum": ["user", "project"]},
                    },
                    "required": ["fact", "scope"],
                },
            },
            "count": {"type": "integer", "minimum": 0},
        },
        "required": ["memories", "count"],
    }
    fmt = {"type": "json_schema", "json_schema": {"name": "m", "schema": schema}}
    events = post(
        server, "/v1/chat/completions", body([PROMPT], response_format=fmt), headers=AUTH
    ).events()
    jsonschema.validate(json.loads(content(events)), schema)
    assert not any("tool_calls" in d for d in deltas(events))
    obj = post(
        server,
        "/v1/chat/completions",
        body([PROMPT], response_format={"type": "json_object"}),
        headers=AUTH,
    ).events()
    assert isinstance(json.loads(content(obj)), dict)


@pytest.mark.rule("MODEL-SCRIPT-005")
@pytest.mark.parametrize(
    ("messages", "tools", "kind", "text"),
    [
        (
            [
                {
                    "role": "system",
                    "content": "You are a title generator. You output ONLY a thread title.",
                },
                {"role": "user", "content": "Create hello.html please."},
            ],
            None,
            "side:title",
            "Happy scenario",
        ),
        (
            # mistral-vibe 3.0.2's title request says "titles" (real-clis.md, vibe)
            [
                {
                    "role": "system",
                    "content": "You write short, descriptive titles for conversations.",
                },
                {"role": "user", "content": "Create hello.html please."},
            ],
            None,
            "side:title",
            "Happy scenario",
        ),
        (
            [
                PROMPT,
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "[SUGGESTION MODE: predict the next prompt]"},
            ],
            [CHAT_WRITE],
            "side:suggestion",
            "Thanks!",
        ),
        (
            [
                {"role": "system", "content": "Extract durable memories from the conversation."},
                PROMPT,
            ],
            [CHAT_WRITE],
            "side:memory",
            "No new memories.",
        ),
    ],
    ids=["title", "titles", "suggestion", "memory"],
)
def test_side_requests_get_small_replies_without_tool_calls(
    serve: ServeFn, messages: list[dict[str, Any]], tools: list[Any] | None, kind: str, text: str
) -> None:
    server = serve("happy")
    request: dict[str, Any] = {"model": "small", "stream": True, "messages": messages}
    if tools:
        request["tools"] = tools
    events = post(server, "/v1/chat/completions", request, headers=AUTH).events()
    assert content(events) == text
    assert not any("tool_calls" in d for d in deltas(events))
    record = server.requests[-1]
    assert record.reply_kind == kind and record.segment is None


@pytest.mark.rule("MODEL-CHAT-002")
def test_non_streaming_reply_is_one_chat_completion(serve: ServeFn) -> None:
    server = serve("happy")
    reply = post(server, "/v1/chat/completions", body([PROMPT], stream=False), headers=AUTH)
    completion = reply.json()
    assert completion["object"] == "chat.completion"
    choice = completion["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "I'll create the page."
    assert choice["message"]["reasoning_content"] == "The user wants a page."
    call = choice["message"]["tool_calls"][0]
    assert call["function"]["name"] == "write"
    assert json.loads(call["function"]["arguments"])["filePath"] == "hello.html"
    assert completion["usage"]["total_tokens"] == 0
