"""Gemini API against a real server (MODEL-GEM-*, and the script rules through it).

Request bodies follow real-clis.md for gemini 0.61.0: the router classifier
``POST /v1beta/models/gemini-3.5-flash-lite:generateContent`` with
``responseJsonSchema {complexity_reasoning, complexity_score}``, then
``POST /v1beta/models/<routed>:streamGenerateContent?alt=sse`` with
``tools: [{functionDeclarations}]`` and an ``x-goog-api-key`` header.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from tests.modelserver.conftest import ServeFn
from tests.modelserver.support import GEMINI_TOOLS, post

KEY = {"x-goog-api-key": "AIzaFakeFakeFakeFakeFakeFakeFakeFakeFak"}
STREAM = "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse"
CONTEXT = {
    "role": "user",
    "parts": [
        {"text": "This is the Gemini CLI. I'm currently working in the directory: /work/proj\n"}
    ],
}
PROMPT = {"role": "user", "parts": [{"text": "Create hello.html please."}]}


def body(contents: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "contents": [CONTEXT, {"role": "model", "parts": [{"text": "Got it."}]}, *contents],
        "systemInstruction": {"parts": [{"text": "You are an interactive CLI agent."}]},
        "tools": GEMINI_TOOLS,
        "generationConfig": {"temperature": 1, "thinkingConfig": {"includeThoughts": True}},
        **extra,
    }


def parts(events: list[tuple[str | None, Any]]) -> list[dict[str, Any]]:
    return [p for _, d in events for p in d["candidates"][0]["content"]["parts"]]


@pytest.mark.rule("MODEL-GEM-001", "MODEL-SCRIPT-003", "MODEL-SCRIPT-004", "MODEL-ROUTE-001")
def test_stream_sends_one_chunk_per_scenario_chunk(serve: ServeFn) -> None:
    server = serve("text")
    reply = post(server, STREAM, body([PROMPT]), headers=KEY)
    assert reply.status == 200
    events = reply.events()
    assert all(name is None for name, _ in events)  # plain data: lines
    assert [p["text"] for p in parts(events)] == ["Hello from ", "the fake model.", " PONG."]
    assert [d["candidates"][0].get("finishReason") for _, d in events] == [None, None, "STOP"]
    usage = events[-1][1]["usageMetadata"]
    assert (usage["promptTokenCount"], usage["candidatesTokenCount"]) == (10, 8)
    assert usage["totalTokenCount"] == 18
    assert all(d["modelVersion"] == "gemini-3.8-flash" for _, d in events)
    record = server.requests[-1]
    assert (record.api, record.model, record.stream) == ("google-genai", "gemini-3.8-flash", True)
    assert record.query == "alt=sse"


@pytest.mark.rule("MODEL-GEM-001", "MODEL-TOOL-001", "MODEL-TOOL-004")
def test_write_step_is_a_function_call_on_write_file(serve: ServeFn) -> None:
    server = serve("happy")
    events = post(server, STREAM, body([PROMPT]), headers=KEY).events()
    got = parts(events)
    assert got[0] == {"text": "The user wants a page.", "thought": True}
    assert [p["text"] for p in got[1:3]] == ["I'll create ", "the page."]
    call = got[3]["functionCall"]
    assert call["name"] == "write_file"
    # write_file asks for "The absolute path": under the directory the context names
    assert call["args"] == {
        "file_path": "/work/proj/hello.html",
        "content": "<!doctype html>\n<h1>Hello</h1>\n",
    }
    assert events[-1][1]["candidates"][0]["finishReason"] == "STOP"


@pytest.mark.rule("MODEL-SCRIPT-001", "MODEL-TOOL-005")
def test_function_response_then_shell_scenario(serve: ServeFn) -> None:
    server = serve("happy")
    result = {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "call_write_1",
                    "name": "write_file",
                    "response": {"output": "ok"},
                }
            }
        ],
    }
    call = {"role": "model", "parts": [{"functionCall": {"name": "write_file", "args": {}}}]}
    events = post(server, STREAM, body([PROMPT, call, result]), headers=KEY).events()
    assert "".join(p["text"] for p in parts(events)) == "Done: hello.html is ready."
    shell = serve("shell")
    got = parts(post(shell, STREAM, body([PROMPT]), headers=KEY).events())
    # run_shell_command's OpenAPI schema (upper-case types) is read like JSON Schema
    assert got == [
        {
            "functionCall": {
                "id": "call_shell_1",
                "name": "run_shell_command",
                "args": {"command": "echo hi"},
            }
        }
    ]


ROUTER_SCHEMA = {
    "type": "object",
    "properties": {
        "complexity_reasoning": {"type": "string", "description": "Why."},
        "complexity_score": {"type": "integer", "minimum": 1, "maximum": 100},
    },
    "required": ["complexity_reasoning", "complexity_score"],
}


@pytest.mark.rule("MODEL-GEM-002", "MODEL-STRUCT-001")
@pytest.mark.parametrize(
    "config",
    [
        {"responseMimeType": "application/json", "responseJsonSchema": ROUTER_SCHEMA},
        {
            "responseMimeType": "application/json",
            "responseSchema": {
                "type": "OBJECT",
                "properties": {
                    "complexity_reasoning": {"type": "STRING"},
                    "complexity_score": {"type": "INTEGER"},
                },
                "required": ["complexity_reasoning", "complexity_score"],
            },
        },
    ],
    ids=["responseJsonSchema", "responseSchema-openapi"],
)
def test_router_classifier_gets_schema_valid_json(serve: ServeFn, config: dict[str, Any]) -> None:
    server = serve("happy")
    request = {
        "contents": [PROMPT],
        "systemInstruction": {"parts": [{"text": "You are a routing classifier."}]},
        "generationConfig": config,
    }
    reply = post(
        server, "/v1beta/models/gemini-3.5-flash-lite:generateContent", request, headers=KEY
    )
    assert reply.status == 200
    answer = reply.json()
    text = answer["candidates"][0]["content"]["parts"][0]["text"]
    value = json.loads(text)
    jsonschema.validate(value, ROUTER_SCHEMA)
    assert isinstance(value["complexity_score"], int) and value["complexity_score"] >= 1
    record = server.requests[-1]
    assert record.reply_kind == "structured" and record.segment is None  # no step consumed
    # the main call that follows still starts the scenario at its first segment
    main = parts(post(server, STREAM, body([PROMPT]), headers=KEY).events())
    assert main[-1]["functionCall"]["name"] == "write_file"


@pytest.mark.rule("MODEL-ERR-001")
def test_api_error_is_googles_error_body(serve: ServeFn) -> None:
    server = serve("api_error")
    reply = post(server, STREAM, body([PROMPT]), headers=KEY)
    assert reply.status == 500
    assert reply.json() == {
        "error": {"code": 500, "message": "Internal server error", "status": "INTERNAL"}
    }


@pytest.mark.rule("MODEL-GEM-001")
def test_generate_content_returns_every_part_at_once(serve: ServeFn) -> None:
    server = serve("happy")
    reply = post(
        server, "/v1beta/models/gemini-3.8-flash:generateContent", body([PROMPT]), headers=KEY
    )
    answer = reply.json()
    got = answer["candidates"][0]["content"]["parts"]
    assert got[0] == {"text": "The user wants a page.", "thought": True}
    assert got[1] == {"text": "I'll create the page."}
    assert got[2]["functionCall"]["name"] == "write_file"
    assert answer["candidates"][0]["finishReason"] == "STOP"
    count = post(
        server, "/v1beta/models/gemini-3.8-flash:countTokens", {"contents": [PROMPT]}, headers=KEY
    )
    assert count.status == 200 and count.json()["totalTokens"] > 0
