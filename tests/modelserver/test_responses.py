"""OpenAI Responses against a real server (MODEL-RESP-*, and the script rules through it).

Request bodies follow what real-clis.md records for codex 0.171.0 (``-m gpt-5.5``):
``POST /v1/responses``, ``stream: true``, developer messages, an
``<environment_context>`` user message, ``exec_command`` / ``write_stdin`` function
tools and ``apply_patch`` as a *custom* tool.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from harness.modelserver.tools import add_file_patch
from tests.modelserver.conftest import ServeFn
from tests.modelserver.support import CODEX_EXEC, CODEX_PATCH, CODEX_STDIN, post, scenario_of

AUTH = {"authorization": "Bearer fake-mock-key-0001"}
TOOLS = [CODEX_EXEC, CODEX_STDIN, CODEX_PATCH]
NO_ESCALATION = (
    "<permissions instructions>\nApproval policy is currently never. Do not provide the "
    "`sandbox_permissions` for any reason, commands will be rejected.\n"
    "</permissions instructions>"
)


def msg(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


ENV = msg("user", "<environment_context>\n  <cwd>/work/proj</cwd>\n</environment_context>")
PROMPT = msg("user", "Say hello please.")


def body(items: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "model": "gpt-5.5",
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "instructions": "",
        "input": [msg("developer", "You are Codex."), msg("developer", NO_ESCALATION), ENV, *items],
        "tools": TOOLS,
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        **extra,
    }


def kinds(events: list[tuple[str | None, Any]]) -> list[str]:
    return [d["type"] for _, d in events]


@pytest.mark.rule("MODEL-RESP-001", "MODEL-SCRIPT-003", "MODEL-SCRIPT-004")
def test_text_reply_streams_the_documented_event_sequence(serve: ServeFn) -> None:
    server = serve("text")
    reply = post(server, "/v1/responses", body([PROMPT]), headers=AUTH)
    assert reply.status == 200
    events = reply.events()
    assert kinds(events) == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [name for name, _ in events] == kinds(events)
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
    deltas = [d["delta"] for _, d in events if d["type"] == "response.output_text.delta"]
    assert deltas == ["Hello from ", "the fake model.", " PONG."]
    done = next(d for _, d in events if d["type"] == "response.output_text.done")
    assert done["text"] == "Hello from the fake model. PONG."
    created = events[0][1]["response"]
    completed = events[-1][1]["response"]
    # real-clis.md: codex needs response.completed carrying id and usage
    assert completed["id"] == created["id"] and completed["id"]
    assert completed["status"] == "completed"
    assert completed["usage"]["input_tokens"] == 10
    assert completed["usage"]["output_tokens"] == 8
    assert completed["usage"]["total_tokens"] == 18
    assert [i["type"] for i in completed["output"]] == ["message"]


@pytest.mark.rule("MODEL-RESP-002", "MODEL-TOOL-002", "MODEL-SCRIPT-003")
def test_write_step_becomes_a_custom_apply_patch_call(serve: ServeFn) -> None:
    server = serve("happy")
    events = post(server, "/v1/responses", body([PROMPT]), headers=AUTH).events()
    added = [d["item"]["type"] for _, d in events if d["type"] == "response.output_item.added"]
    assert added == ["reasoning", "message", "custom_tool_call"]
    summary = [
        d["delta"] for _, d in events if d["type"] == "response.reasoning_summary_text.delta"
    ]
    assert summary == ["The user wants a page."]
    pieces = [d["delta"] for _, d in events if d["type"] == "response.custom_tool_call_input.delta"]
    done = next(d for _, d in events if d["type"] == "response.custom_tool_call_input.done")
    patch = (
        "*** Begin Patch\n*** Add File: hello.html\n+<!doctype html>\n+<h1>Hello</h1>\n"
        "*** End Patch"
    )
    assert "".join(pieces) == done["input"] == patch
    item = [d["item"] for _, d in events if d["type"] == "response.output_item.done"][-1]
    assert item["type"] == "custom_tool_call"
    assert (item["name"], item["call_id"], item["input"]) == ("apply_patch", "call_write_1", patch)
    assert not any(d["type"].startswith("response.function_call") for _, d in events)
    assert server.requests[-1].reply_kind == "tool_call"


@pytest.mark.rule("MODEL-RESP-001", "MODEL-TOOL-002")
def test_apply_patch_as_a_function_tool_gets_function_call_arguments(serve: ServeFn) -> None:
    server = serve("happy")
    function_patch = {
        "type": "function",
        "name": "apply_patch",
        "description": "Apply a patch",
        "parameters": {
            "type": "object",
            "properties": {"input": {"type": "string"}},
            "required": ["input"],
        },
    }
    events = post(
        server, "/v1/responses", body([PROMPT], tools=[CODEX_EXEC, function_patch]), headers=AUTH
    ).events()
    pieces = [
        d["delta"] for _, d in events if d["type"] == "response.function_call_arguments.delta"
    ]
    done = next(d for _, d in events if d["type"] == "response.function_call_arguments.done")
    assert "".join(pieces) == done["arguments"]
    assert len(pieces) > 1  # arguments stream in pieces
    assert json.loads(done["arguments"]) == {
        "input": add_file_patch("hello.html", "<!doctype html>\n<h1>Hello</h1>\n")
    }
    item = [d["item"] for _, d in events if d["type"] == "response.output_item.done"][-1]
    assert item["type"] == "function_call" and item["name"] == "apply_patch"


@pytest.mark.rule("MODEL-SCRIPT-001")
def test_tool_output_item_gets_the_final_text(serve: ServeFn) -> None:
    server = serve("happy")
    items = [
        PROMPT,
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "x"}]},
        msg("assistant", "I'll create the page."),
        {
            "type": "custom_tool_call",
            "call_id": "call_write_1",
            "name": "apply_patch",
            "input": "*** Begin Patch",
        },
        {"type": "custom_tool_call_output", "call_id": "call_write_1", "output": "Done!"},
    ]
    events = post(server, "/v1/responses", body(items), headers=AUTH).events()
    deltas = [d["delta"] for _, d in events if d["type"] == "response.output_text.delta"]
    assert "".join(deltas) == "Done: hello.html is ready."
    completed = events[-1][1]["response"]
    assert completed["usage"]["input_tokens"] == 120
    assert completed["usage"]["output_tokens"] == 45
    assert server.requests[-1].message_roles[-2:] == ("custom_tool_call", "custom_tool_call_output")


@pytest.mark.rule("MODEL-TOOL-003", "MODEL-TOOL-005")
def test_shell_step_calls_exec_command_escalating_only_when_allowed(serve: ServeFn) -> None:
    server = serve("shell")

    def call_args(request_body: dict[str, Any]) -> dict[str, Any]:
        events = post(server, "/v1/responses", request_body, headers=AUTH).events()
        item = next(d["item"] for _, d in events if d["type"] == "response.output_item.done")
        assert (item["type"], item["name"]) == ("function_call", "exec_command")
        args: dict[str, Any] = json.loads(item["arguments"])
        jsonschema.validate(args, CODEX_EXEC["parameters"])
        return args

    # approval policy "never": codex rejects sandbox_permissions, so none is sent
    assert call_args(body([PROMPT])) == {"cmd": "echo hi"}
    # without that instruction the schema's require_escalated is offered and taken
    # (real-clis.md: codex-acp without bubblewrap needs it)
    allowed = body([PROMPT])
    allowed["input"] = [msg("developer", "You are Codex."), ENV, PROMPT]
    args = call_args(allowed)
    assert args["cmd"] == "echo hi"
    assert args["sandbox_permissions"] == "require_escalated"
    assert args["justification"]


@pytest.mark.rule("MODEL-ERR-001")
def test_api_error_is_openais_error_body_and_status(serve: ServeFn) -> None:
    server = serve("api_error")
    reply = post(server, "/v1/responses", body([PROMPT]), headers=AUTH)
    assert reply.status == 500
    assert reply.json() == {
        "error": {
            "message": "Internal server error",
            "type": "server_error",
            "code": "api_error",
            "param": None,
        }
    }
    late = serve(
        scenario_of(
            "late",
            [
                {"kind": "text", "text": "Partial"},
                {"kind": "api_error", "message": "boom", "status": 500},
            ],
        )
    )
    events = post(late, "/v1/responses", body([PROMPT]), headers=AUTH).events()
    assert events[-1][1]["type"] == "response.failed"
    assert events[-1][1]["response"]["error"]["message"] == "boom"


@pytest.mark.rule("MODEL-STRUCT-001")
def test_text_format_json_schema_gets_schema_valid_output_text(serve: ServeFn) -> None:
    server = serve("happy")
    schema = {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["pass", "fail"]},
            "findings": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "confidence": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        },
        "required": ["verdict", "findings", "confidence"],
        "additionalProperties": False,
    }
    fmt = {"format": {"type": "json_schema", "name": "review", "schema": schema, "strict": True}}
    events = post(server, "/v1/responses", body([PROMPT], text=fmt), headers=AUTH).events()
    text = next(d["text"] for _, d in events if d["type"] == "response.output_text.done")
    jsonschema.validate(json.loads(text), schema)
    assert server.requests[-1].structured


@pytest.mark.rule("MODEL-RESP-001")
def test_non_streaming_reply_is_one_response_object(serve: ServeFn) -> None:
    server = serve("happy")
    reply = post(server, "/v1/responses", body([PROMPT], stream=False), headers=AUTH)
    response = reply.json()
    assert response["object"] == "response" and response["status"] == "completed"
    assert [i["type"] for i in response["output"]] == ["reasoning", "message", "custom_tool_call"]
    assert response["usage"]["total_tokens"] == 0
