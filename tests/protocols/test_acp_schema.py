"""Validation of ACP frames against the vendored schema (harness.protocols.acp.schema).

Rules: ACP-SCHEMA-001 (outgoing frames, by x-method), ACP-SCHEMA-002 (incoming
frames, reported as problems), ACP-SCHEMA-003 (unstable fallback, local
session/set_model shape). Frames are written by hand from wire §A.1.2 / §A.1.3.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.defs.types import AcpEnvFormat
from harness.protocols.acp.schema import (
    def_for,
    describe,
    known_methods,
    validate_incoming,
    validate_outgoing,
)

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "harness" / "schemas" / "acp" / "v1"
STABLE = json.loads((SCHEMA_DIR / "schema.json").read_text(encoding="utf-8"))
UNSTABLE = json.loads((SCHEMA_DIR / "schema.unstable.json").read_text(encoding="utf-8"))


def req(request_id: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def note(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def ok(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


INITIALIZE = req(
    1,
    "initialize",
    {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False},
            "terminal": False,
        },
        "clientInfo": {"name": "adapter-harness", "version": "0.1.0"},
    },
)
STDIO = {"type": "stdio", "name": "files", "command": "mcp-files", "args": ["--ro"], "env": []}


# -- the method map --------------------------------------------------------------------


@pytest.mark.rule("ACP-SCHEMA-001")
def test_every_x_method_def_of_the_stable_schema_is_mapped() -> None:
    expected = {
        (body["x-method"], name) for name, body in STABLE["$defs"].items() if "x-method" in body
    }
    mapped = set()
    for method, name in expected:
        kind = next(
            k
            for s, k in (
                ("Request", "request"),
                ("Response", "response"),
                ("Notification", "notification"),
            )
            if name.endswith(s)
        )
        found = def_for(method, kind)
        assert found is not None and found.name == name, (method, kind, found)
        assert found.source.endswith("v1/schema.json")
        mapped.add((method, name))
    assert mapped == expected
    assert {"initialize", "session/new", "session/prompt", "session/update"} <= known_methods()


@pytest.mark.rule("ACP-SCHEMA-003")
def test_unstable_only_methods_fall_back_to_the_unstable_file() -> None:
    stable_methods = {b["x-method"] for b in STABLE["$defs"].values() if "x-method" in b}
    only_unstable = {
        b["x-method"] for b in UNSTABLE["$defs"].values() if "x-method" in b
    } - stable_methods
    assert "session/fork" in only_unstable
    for method in only_unstable:
        found = def_for(method, "request") or def_for(method, "notification")
        assert found is not None and found.source.endswith("schema.unstable.json"), method
    fork = req(4, "session/fork", {"sessionId": "s", "cwd": "/w"})
    assert validate_outgoing(fork) == []
    assert validate_outgoing(req(4, "session/fork", {"cwd": "/w"}))


@pytest.mark.rule("ACP-SCHEMA-003")
def test_set_model_uses_the_local_two_field_shape() -> None:
    found = def_for("session/set_model", "request")
    assert found is not None and found.source == "local" and found.name is None
    assert validate_outgoing(req(3, "session/set_model", {"sessionId": "s", "modelId": "m"})) == []
    problems = validate_outgoing(req(3, "session/set_model", {"sessionId": "s"}))
    assert problems == ["params: 'modelId' is a required property"]
    assert validate_incoming(ok(3, {}), {3: "session/set_model"}) == []
    assert validate_incoming(ok(3, None), {3: "session/set_model"}) == []
    assert validate_incoming(ok(3, "yes"), {3: "session/set_model"})


# -- outgoing ----------------------------------------------------------------------------


@pytest.mark.rule("ACP-SCHEMA-001")
@pytest.mark.parametrize(
    "frame",
    [
        INITIALIZE,
        req(2, "session/new", {"cwd": "/w", "mcpServers": [STDIO]}),
        req(2, "session/load", {"sessionId": "s", "cwd": "/w", "mcpServers": []}),
        req(3, "session/set_config_option", {"sessionId": "s", "configId": "model", "value": "m"}),
        req(4, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}),
        note("session/cancel", {"sessionId": "s"}),
        {"jsonrpc": "2.0", "id": "u-1", "error": {"code": -32601, "message": "Method not found"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}},
    ],
    ids=lambda f: f.get("method", "error"),
)
def test_valid_client_frames_have_no_problems(frame: dict[str, Any]) -> None:
    assert validate_outgoing(frame) == []


@pytest.mark.rule("ACP-SCHEMA-001")
@pytest.mark.parametrize(
    ("frame", "needle"),
    [
        ({**INITIALIZE, "jsonrpc": "1.0"}, 'jsonrpc must be "2.0"'),
        (req(1, "initialize", {}), "'protocolVersion' is a required property"),
        (req(2, "session/new", {"cwd": "/w"}), "'mcpServers' is a required property"),
        (
            req(2, "session/new", {"cwd": "/w", "mcpServers": [{**STDIO, "env": {"A": "b"}}]}),
            "params.mcpServers[0]",
        ),
        (req(4, "session/prompt", {"sessionId": "s", "prompt": [{"type": "video"}]}), "prompt[0]"),
        (req(9, "session/cancel", {"sessionId": "s"}), "'session/cancel' is a notification"),
        (note("session/update", {"sessionId": "s", "update": {}}), "handled by the client"),
        (req(9, "made/up", {}), "request method 'made/up' is not in the schema"),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": "bad", "message": "m"}},
            "error.code must be an integer",
        ),
    ],
)
def test_invalid_client_frames_are_reported(frame: dict[str, Any], needle: str) -> None:
    problems = validate_outgoing(frame)
    assert problems, frame
    assert any(needle in p for p in problems), problems


@pytest.mark.rule("ACP-SCHEMA-001")
def test_our_responses_are_checked_against_the_answered_method() -> None:
    selected = ok("p-1", {"outcome": {"outcome": "selected", "optionId": "allow"}})
    assert validate_outgoing(selected, {"p-1": "session/request_permission"}) == []
    assert (
        validate_outgoing(
            ok("p-1", {"outcome": {"outcome": "cancelled"}}), {"p-1": "session/request_permission"}
        )
        == []
    )
    bad = ok("p-1", {"outcome": {"outcome": "selected"}})
    assert validate_outgoing(bad, {"p-1": "session/request_permission"})
    assert validate_outgoing(selected) == ["response to id 'p-1' answers no pending request"]
    # string and integer ids are distinct keys
    assert validate_outgoing(
        ok(1, {"outcome": {"outcome": "cancelled"}}), {"1": "session/request_permission"}
    )


@pytest.mark.rule("ACP-SCHEMA-001", "ACP-MCP-001")
def test_map_env_format_is_checked_as_its_array_twin() -> None:
    mapped = req(2, "session/new", {"cwd": "/w", "mcpServers": [{**STDIO, "env": {"A": "b"}}]})
    assert validate_outgoing(mapped, env_format=AcpEnvFormat.MAP) == []
    wrong = req(2, "session/new", {"cwd": "/w", "mcpServers": [{**STDIO, "env": {"A": 1}}]})
    problems = validate_outgoing(wrong, env_format=AcpEnvFormat.MAP)
    assert problems[0] == "params.mcpServers[0].env: values must be strings"
    assert len(problems) == 2 and problems[1].startswith("params.mcpServers[0]: ")
    # The map allowance is only for MAP format and only for session/new|load.
    assert validate_outgoing(mapped, env_format=AcpEnvFormat.ARRAY)
    missing_cwd = req(2, "session/load", {"sessionId": "s", "mcpServers": [{**STDIO, "env": {}}]})
    assert any("cwd" in p for p in validate_outgoing(missing_cwd, env_format=AcpEnvFormat.MAP))


# -- incoming -----------------------------------------------------------------------------


@pytest.mark.rule("ACP-SCHEMA-002")
@pytest.mark.parametrize(
    ("frame", "pending"),
    [
        (
            ok(1, {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}}),
            {1: "initialize"},
        ),
        (ok(2, {"sessionId": "s", "configOptions": None}), {2: "session/new"}),
        (ok(2, {}), {2: "session/load"}),
        (ok(4, {"stopReason": "end_turn"}), {4: "session/prompt"}),
        (
            note(
                "session/update",
                {
                    "sessionId": "s",
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "hi"},
                    },
                },
            ),
            {},
        ),
        (
            req(
                "7b1d",
                "session/request_permission",
                {
                    "sessionId": "s",
                    "toolCall": {"toolCallId": "t"},
                    "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
                },
            ),
            {},
        ),
        (req(5, "fs/read_text_file", {"sessionId": "s", "path": "/w/a"}), {}),
        (
            {
                "jsonrpc": "2.0",
                "id": 3,
                "error": {"code": -32000, "message": "Authentication required"},
            },
            {},
        ),
        (req(6, "_kimi/extension", {"anything": 1}), {}),
    ],
)
def test_valid_agent_frames_have_no_problems(
    frame: dict[str, Any], pending: dict[Any, str]
) -> None:
    assert validate_incoming(frame, pending) == []


@pytest.mark.rule("ACP-SCHEMA-002")
@pytest.mark.parametrize(
    ("frame", "pending", "needle"),
    [
        (ok(2, {}), {2: "session/new"}, "'sessionId' is a required property"),
        (ok(2, None), {2: "session/load"}, "result: None is not of type 'object'"),
        (ok(4, {"stopReason": "done"}), {4: "session/prompt"}, "result.stopReason"),
        (ok(4, {"stopReason": "end_turn"}), {}, "answers no pending request"),
        (
            note("session/update", {"sessionId": "s", "update": {"sessionUpdate": "turn_end"}}),
            {},
            "params.update",
        ),
        (note("session/update", {"sessionId": "s"}), {}, "'update' is a required property"),
        (req(1, "session/prompt", {"sessionId": "s", "prompt": []}), {}, "handled by the agent"),
        ({"id": 1, "result": {"protocolVersion": 1}}, {1: "initialize"}, 'jsonrpc must be "2.0"'),
        ("not an object", {}, "a JSON-RPC message is an object"),
    ],
)
def test_invalid_agent_frames_are_reported(
    frame: Any, pending: dict[Any, str], needle: str
) -> None:
    problems = validate_incoming(frame, pending)
    assert any(needle in p for p in problems), problems
    assert describe(problems).startswith(problems[0][:50])


@pytest.mark.rule("ACP-SCHEMA-002")
def test_problems_are_bounded_in_number_and_length() -> None:
    huge = "x" * 100_000
    frame = ok(4, {"stopReason": huge})
    problems = validate_incoming(frame, {4: "session/prompt"})
    assert problems and all(len(p) <= 240 for p in problems) and len(problems) <= 5
    many = note("session/update", {"update": [1] * 50})
    assert len(validate_incoming(many)) <= 5
    assert describe(["a", "b", "c"]) == "a (+2 more)" and describe([]) == ""


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
envelopes = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "1.0"])},
    optional={
        "id": st.one_of(st.integers(), st.text(max_size=4), st.none(), st.booleans()),
        "method": st.sampled_from(
            ["initialize", "session/update", "session/request_permission", "x"]
        ),
        "params": json_values,
        "result": json_values,
        "error": json_values,
    },
)


@pytest.mark.rule("ACP-ROBUST-001")
@settings(max_examples=200)
@given(st.one_of(json_values, envelopes))
def test_validation_never_raises(value: Any) -> None:
    pending: dict[int | str, str] = {1: "session/prompt", "1": "initialize", 0: "session/set_model"}
    for problems in (validate_incoming(value, pending), validate_outgoing(value, pending)):
        assert isinstance(problems, list) and all(isinstance(p, str) for p in problems)
    validate_outgoing(value, env_format=AcpEnvFormat.MAP)
