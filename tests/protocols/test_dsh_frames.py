"""dsh-profile-jsonl frames: validation, host-command builders, probe, schema agreement.

Rules: DSH-SCHEMA-001, DSH-FRAME-INVALID-001, DSH-FRAME-TYPE-001, DSH-REQID-002,
DSH-READY-002, DSH-PROBE-001, DSH-EXEC-001, DSH-EXEC-MODEL-001, DSH-RESULT-FAILED-001,
DSH-EVENT-TOOL-001, DSH-SEC-001. Frames are written by hand from seed 001 §5-§6 and ref §2.8.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.protocols.base import SessionRequest
from harness.protocols.dsh_frames import (
    HOST_COMMAND_TYPES,
    RUNTIME_FRAME_TYPES,
    ContentFrame,
    DshRequestError,
    FrameError,
    IdentityFrame,
    ProtocolErrorFrame,
    ResultFrame,
    SessionFrame,
    ToolCallFrame,
    ToolResultFrame,
    UsageFrame,
    WireError,
    build_cancel,
    build_execute,
    encode_frame,
    load_json,
    parse_host_command,
    parse_model,
    parse_probe_stdout,
    parse_runtime_frame,
    schema_for,
    tool_input,
)
from tests.support.examples import fuzz_sized

RUNTIME_SCHEMA = jsonschema.Draft202012Validator(schema_for("runtime"))
HOST_SCHEMA = jsonschema.Draft202012Validator(schema_for("host"))
ANY_SCHEMA = jsonschema.Draft202012Validator(schema_for("any"))
SECRET = "SECRET-VALUE-7f3a"

CAPS = {"session_resume": True, "session_cancel": True, "structured_events": True}
PROBE = {
    "v": 1,
    "type": "probe",
    "runtime": "open-design",
    "protocol_version": 1,
    "plugin_version": "0.1.0",
    "capabilities": CAPS,
}
READY = {**PROBE, "type": "ready", "compatibility_generation": "od-gen:1.2_3"}
RID = "run-42"

#: One valid frame of every runtime type, as seed 001 §6 / ref §2.8 document them.
VALID_RUNTIME: dict[str, dict[str, Any]] = {
    "probe": PROBE,
    "ready": READY,
    "session": {
        "v": 1,
        "type": "session",
        "request_id": RID,
        "session_id": "s-1",
        "resumed": False,
    },
    "thinking": {"v": 1, "type": "thinking", "request_id": RID, "content": ""},
    "text": {"v": 1, "type": "text", "request_id": RID, "content": "Hello"},
    "tool_call": {
        "v": 1,
        "type": "tool_call",
        "request_id": RID,
        "call_id": "c1",
        "name": "write_file",
        "arguments": '{"path":"index.html"}',
    },
    "tool_result": {
        "v": 1,
        "type": "tool_result",
        "request_id": RID,
        "call_id": "c1",
        "name": "write_file",
        "output": "",
        "is_error": False,
    },
    "usage": {
        "v": 1,
        "type": "usage",
        "request_id": RID,
        "provider": "deepseek-official",
        "model": "deepseek-v4",
        "input_tokens": 10,
        "output_tokens": 2.5,
        "cache_read_tokens": 0,
    },
    "result": {
        "v": 1,
        "type": "result",
        "request_id": RID,
        "status": "failed",
        "session_id": "s-1",
        "stop_reason": "error",
        "output": "done",
        "resume_rejected": False,
        "error": {"code": "DSH_MODEL_UNAVAILABLE", "message": "model unavailable"},
    },
    "protocol_error": {"v": 1, "type": "protocol_error", "code": "BAD", "message": "bad"},
}


def schema_ok(validator: Any, value: Any) -> bool:
    return bool(validator.is_valid(value))


def hand_ok(value: Any) -> bool:
    try:
        parse_runtime_frame(value)
    except FrameError:
        return False
    return True


def host_ok(value: Any) -> bool:
    try:
        parse_host_command(value)
    except FrameError:
        return False
    return True


def without(frame: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in frame.items() if k != key}


# -- valid frames ---------------------------------------------------------------


@pytest.mark.rule("DSH-SCHEMA-001")
def test_every_runtime_type_has_a_valid_example_accepted_by_both_validators() -> None:
    assert set(VALID_RUNTIME) == set(RUNTIME_FRAME_TYPES)
    for kind, frame in VALID_RUNTIME.items():
        assert schema_ok(RUNTIME_SCHEMA, frame), kind
        assert schema_ok(ANY_SCHEMA, frame), kind
        assert not schema_ok(HOST_SCHEMA, frame), kind
        assert hand_ok(frame), kind


@pytest.mark.rule("DSH-SCHEMA-001")
def test_schema_lists_exactly_the_generation_1_types() -> None:
    defs = schema_for("any")["$defs"]
    runtime = {ref["$ref"].rsplit("/", 1)[1] for ref in defs["runtimeFrame"]["oneOf"]}
    host = {ref["$ref"].rsplit("/", 1)[1] for ref in defs["hostCommand"]["oneOf"]}
    assert runtime == set(RUNTIME_FRAME_TYPES)
    assert host == set(HOST_COMMAND_TYPES)


def test_parsed_frames_are_typed() -> None:
    parsed = {kind: parse_runtime_frame(frame) for kind, frame in VALID_RUNTIME.items()}
    assert parsed["ready"] == IdentityFrame(
        type="ready", plugin_version="0.1.0", compatibility_generation="od-gen:1.2_3"
    )
    assert parsed["session"] == SessionFrame(request_id=RID, session_id="s-1", resumed=False)
    assert parsed["thinking"] == ContentFrame(type="thinking", request_id=RID, content="")
    assert isinstance(parsed["tool_call"], ToolCallFrame)
    assert isinstance(parsed["tool_result"], ToolResultFrame)
    assert parsed["usage"] == UsageFrame(
        request_id=RID,
        provider="deepseek-official",
        model="deepseek-v4",
        input_tokens=10,
        output_tokens=2.5,
        cache_read_tokens=0,
    )
    assert parsed["result"] == ResultFrame(
        request_id=RID,
        status="failed",
        session_id="s-1",
        resume_rejected=False,
        output="done",
        stop_reason="error",
        error=WireError("DSH_MODEL_UNAVAILABLE", "model unavailable"),
    )
    assert parsed["protocol_error"] == ProtocolErrorFrame(code="BAD", message="bad")


# -- invalid frames: each names the field, never the value -----------------------

INVALID: list[tuple[str, Any, str]] = [
    ("not an object", [1, 2], "frame must be a JSON object"),
    ("v missing", without(VALID_RUNTIME["text"], "v"), "v must equal 1"),
    ("v is 2", {**VALID_RUNTIME["text"], "v": 2}, "v must equal 1"),
    ("v is true", {**VALID_RUNTIME["text"], "v": True}, "v must equal 1"),
    ("type missing", without(VALID_RUNTIME["text"], "type"), "type must be a non-empty string"),
    ("runtime", {**READY, "runtime": SECRET}, "runtime must equal open-design"),
    ("protocol_version", {**READY, "protocol_version": 2}, "protocol_version must equal 1"),
    ("plugin_version", {**READY, "plugin_version": ""}, "plugin_version must be a non-empty"),
    (
        "compatibility_generation",
        {**READY, "compatibility_generation": SECRET + " !"},
        "compatibility_generation must be a bounded opaque token",
    ),
    (
        "compatibility_generation newline",
        {**READY, "compatibility_generation": "gen1\n"},
        "compatibility_generation must be a bounded opaque token",
    ),
    (
        "compatibility_generation too long",
        {**READY, "compatibility_generation": "g" * 129},
        "compatibility_generation must be a bounded opaque token",
    ),
    ("capabilities", {**READY, "capabilities": SECRET}, "capabilities must be a JSON object"),
    (
        "session_resume",
        {**READY, "capabilities": {**CAPS, "session_resume": False}},
        "capabilities.session_resume must be true",
    ),
    (
        "structured_events",
        {**READY, "capabilities": without(CAPS, "structured_events")},
        "capabilities.structured_events must be true",
    ),
    ("session_id", {**VALID_RUNTIME["session"], "session_id": ""}, "session_id must be"),
    ("resumed", {**VALID_RUNTIME["session"], "resumed": "yes"}, "resumed must be a boolean"),
    ("content", {**VALID_RUNTIME["text"], "content": None}, "content must be a string"),
    ("arguments", {**VALID_RUNTIME["tool_call"], "arguments": {"a": 1}}, "arguments must be"),
    ("call_id", without(VALID_RUNTIME["tool_call"], "call_id"), "call_id must be"),
    ("output", {**VALID_RUNTIME["tool_result"], "output": 3}, "output must be a string"),
    ("is_error", {**VALID_RUNTIME["tool_result"], "is_error": 0}, "is_error must be a boolean"),
    ("input_tokens", {**VALID_RUNTIME["usage"], "input_tokens": -1}, "input_tokens must be"),
    ("output_tokens", {**VALID_RUNTIME["usage"], "output_tokens": "2"}, "output_tokens must be"),
    ("cache_write", {**VALID_RUNTIME["usage"], "cache_write_tokens": True}, "cache_write_tokens"),
    ("status", {**VALID_RUNTIME["result"], "status": SECRET}, "status must be completed"),
    ("resume_rejected", without(VALID_RUNTIME["result"], "resume_rejected"), "resume_rejected"),
    ("result output", {**VALID_RUNTIME["result"], "output": ""}, "output must be a non-empty"),
    ("error shape", {**VALID_RUNTIME["result"], "error": SECRET}, "error must be a JSON object"),
    (
        "error.code",
        {**VALID_RUNTIME["result"], "error": {"message": SECRET}},
        "error.code must be a non-empty string",
    ),
    ("protocol_error code", without(VALID_RUNTIME["protocol_error"], "code"), "code must be"),
    (
        "protocol_error request_id",
        {**VALID_RUNTIME["protocol_error"], "request_id": None},
        "request_id must be a non-empty string",
    ),
]


@pytest.mark.rule("DSH-FRAME-INVALID-001", "DSH-READY-002", "DSH-SCHEMA-001", "DSH-SEC-001")
@pytest.mark.parametrize(("case", "frame", "detail"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_frame_detail_names_the_field_not_the_value(
    case: str, frame: Any, detail: str
) -> None:
    with pytest.raises(FrameError) as info:
        parse_runtime_frame(frame)
    assert detail in info.value.detail
    assert SECRET not in info.value.detail
    assert "\n" not in info.value.detail
    assert not schema_ok(RUNTIME_SCHEMA, frame), f"schema accepts {case}"


@pytest.mark.rule("DSH-FRAME-TYPE-001")
@pytest.mark.parametrize("kind", ["todo", "models", "execute", "Text", "heartbeat"])
def test_type_outside_generation_1_is_rejected(kind: str) -> None:
    frame = {**VALID_RUNTIME["text"], "type": kind}
    with pytest.raises(FrameError, match="type is not supported by protocol generation 1"):
        parse_runtime_frame(frame)
    assert not schema_ok(RUNTIME_SCHEMA, frame)


@pytest.mark.rule("DSH-REQID-002")
@pytest.mark.parametrize(
    "kind", ["session", "thinking", "text", "tool_call", "tool_result", "usage", "result"]
)
def test_run_scoped_frames_must_carry_request_id(kind: str) -> None:
    for frame in (
        without(VALID_RUNTIME[kind], "request_id"),
        {**VALID_RUNTIME[kind], "request_id": ""},
    ):
        with pytest.raises(FrameError, match=r"^request_id must be a non-empty string$"):
            parse_runtime_frame(frame)
        assert not schema_ok(RUNTIME_SCHEMA, frame)


@pytest.mark.rule("DSH-REQID-002")
def test_protocol_error_and_identity_frames_need_no_request_id() -> None:
    for kind in ("protocol_error", "ready", "probe"):
        assert "request_id" not in VALID_RUNTIME[kind]
        assert hand_ok(VALID_RUNTIME[kind])


@pytest.mark.rule("DSH-RESULT-FAILED-001")
def test_failed_result_must_carry_error() -> None:
    frame = without(VALID_RUNTIME["result"], "error")
    with pytest.raises(FrameError, match="error is required when status is failed"):
        parse_runtime_frame(frame)
    assert not schema_ok(RUNTIME_SCHEMA, frame)
    completed = {**frame, "status": "completed"}
    assert hand_ok(completed) and schema_ok(RUNTIME_SCHEMA, completed)


@pytest.mark.rule("DSH-READY-002")
def test_identity_accepts_float_one_and_extra_fields_like_upstream() -> None:
    frame = {**READY, "v": 1.0, "protocol_version": 1.0, "future_field": {"x": 1}}
    assert hand_ok(frame) and schema_ok(RUNTIME_SCHEMA, frame)
    assert hand_ok(without(READY, "compatibility_generation"))


# -- differential: the hand-written validator and the schema agree ----------------

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=3)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.sampled_from(["", "x", RID, "open-design", "completed", "failed", "ready", "\n"])
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=4,
)


@st.composite
def mutated_frames(draw: st.DrawFn, examples: dict[str, dict[str, Any]]) -> Any:
    frame = copy.deepcopy(draw(st.sampled_from(sorted(examples.values(), key=json.dumps))))
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        action = draw(st.sampled_from(["drop", "set", "nested"]))
        keys = sorted(frame)
        if action == "drop" and keys:
            frame.pop(draw(st.sampled_from(keys)))
        elif action == "set":
            key = draw(st.sampled_from([*keys, "extra", "request_id", "error", "model"]))
            frame[key] = draw(json_value)
        elif action == "nested":
            for key in ("capabilities", "error", "model"):
                if isinstance(frame.get(key), dict) and frame[key]:
                    inner = frame[key]
                    inner[draw(st.sampled_from(sorted(inner)))] = draw(json_value)
                    break
    return frame


@pytest.mark.rule("DSH-SCHEMA-001")
@fuzz_sized(300)
@given(mutated_frames(VALID_RUNTIME))
def test_hand_validator_and_schema_agree_on_runtime_frames(frame: Any) -> None:
    assert hand_ok(frame) == schema_ok(RUNTIME_SCHEMA, frame), frame


VALID_HOST: dict[str, dict[str, Any]] = {
    "execute": {
        "v": 1,
        "type": "execute",
        "request_id": RID,
        "cwd": "/work/project",
        "prompt": "Build a landing page",
        "resume_session_id": "s-1",
        "model": {"provider": "deepseek-official", "id": "deepseek-v4"},
        "reasoning_effort": "high",
        "mcp_servers": [],
    },
    "cancel": {"v": 1, "type": "cancel", "request_id": RID},
}


@pytest.mark.rule("DSH-SCHEMA-001")
@settings(max_examples=200)
@given(mutated_frames(VALID_HOST))
def test_hand_validator_and_schema_agree_on_host_commands(command: Any) -> None:
    assert host_ok(command) == schema_ok(HOST_SCHEMA, command), command


# -- host commands ----------------------------------------------------------------


def request(**kwargs: Any) -> SessionRequest:
    base: dict[str, Any] = {"prompt": "Build a page", "cwd": "/work/project", "request_id": RID}
    base.update(kwargs)
    return SessionRequest(**base)


@pytest.mark.rule("DSH-EXEC-001", "DSH-SCHEMA-001")
def test_execute_for_a_first_run_has_no_resume_id() -> None:
    command = build_execute(request())
    assert command == {
        "v": 1,
        "type": "execute",
        "request_id": RID,
        "cwd": "/work/project",
        "prompt": "Build a page",
        "mcp_servers": [],
    }
    assert schema_ok(HOST_SCHEMA, command)


@pytest.mark.rule("DSH-EXEC-001", "DSH-SCHEMA-001")
def test_execute_for_a_follow_up_carries_resume_id_model_reasoning_and_mcp() -> None:
    server = {"name": "fs", "command": "mcp-fs", "args": []}
    command = build_execute(
        request(
            resume_session_id="s-1",
            model="deepseek-official/deepseek-v4",
            reasoning="high",
            mcp_servers=[server],
        )
    )
    assert command["resume_session_id"] == "s-1"
    assert command["model"] == {"provider": "deepseek-official", "id": "deepseek-v4"}
    assert command["reasoning_effort"] == "high"
    assert command["mcp_servers"] == [server]
    assert schema_ok(HOST_SCHEMA, command)


@pytest.mark.rule("DSH-EXEC-001")
@pytest.mark.parametrize("cwd", ["C:\\Users\\me\\project", "D:/p", "\\\\server\\share\\p", "/"])
def test_execute_accepts_absolute_cwds_of_every_platform(cwd: str) -> None:
    command = build_execute(request(cwd=cwd))
    assert command["cwd"] == cwd and schema_ok(HOST_SCHEMA, command)


@pytest.mark.rule("DSH-EXEC-001", "DSH-SEC-001")
@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"cwd": "project"}, "cwd"), ({"cwd": ""}, "cwd"), ({"request_id": ""}, "request_id")],
)
def test_execute_rejects_a_bad_request_naming_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(DshRequestError) as info:
        build_execute(request(prompt=SECRET, **kwargs))
    assert info.value.field == field
    assert info.value.rule == "DSH-EXEC-001"
    assert SECRET not in str(info.value)


@pytest.mark.rule("DSH-EXEC-MODEL-001")
@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (None, None),
        ("", None),
        ("  ", None),
        ("default", None),
        (" default ", None),
        ("deepseek-official/deepseek-v4", {"provider": "deepseek-official", "id": "deepseek-v4"}),
        ("p/a/b", {"provider": "p", "id": "a/b"}),
        (" p/m ", {"provider": "p", "id": "m"}),
    ],
)
def test_model_is_parsed_from_provider_slash_model(
    model: str | None, expected: dict[str, str] | None
) -> None:
    assert parse_model(model) == expected


@pytest.mark.rule("DSH-EXEC-MODEL-001")
@pytest.mark.parametrize("model", ["deepseek-v4", "/deepseek-v4", "deepseek-official/", "/"])
def test_malformed_model_is_a_typed_error(model: str) -> None:
    with pytest.raises(DshRequestError, match="provider/model") as info:
        parse_model(model)
    assert info.value.field == "model"
    assert info.value.code == "DSH_PROFILE_INVALID_REQUEST"
    assert info.value.rule == "DSH-EXEC-MODEL-001"


@pytest.mark.rule("DSH-CANCEL-ORDER-001", "DSH-SCHEMA-001")
def test_cancel_command_shape() -> None:
    command = build_cancel(RID)
    assert command == {"v": 1, "type": "cancel", "request_id": RID}
    assert schema_ok(HOST_SCHEMA, command) and host_ok(command)


@pytest.mark.rule("DSH-FRAME-LINE-001")
def test_encoded_frame_is_exactly_one_line() -> None:
    command = build_execute(request(prompt="line one\nline two\u2028 \r end"))
    data = encode_frame(command)
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert json.loads(data) == command


# -- JSON strictness and tool input ---------------------------------------------


@pytest.mark.rule("DSH-FRAME-MALFORMED-001")
@pytest.mark.parametrize("text", ["NaN", '{"v": Infinity}', "-Infinity", "{", "", "{} {}"])
def test_load_json_is_as_strict_as_json_parse(text: str) -> None:
    with pytest.raises(ValueError):
        load_json(text)


@pytest.mark.rule("DSH-EVENT-TOOL-001")
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"path": "a.html", "n": [1]}', {"path": "a.html", "n": [1]}),
        ("[1, 2]", {"raw": "[1, 2]"}),
        ('"text"', {"raw": '"text"'}),
        ("null", {"raw": "null"}),
        ("{not json", {"raw": "{not json"}),
        ('{"x": NaN}', {"raw": '{"x": NaN}'}),
        ("", {"raw": ""}),
        ("[" * 100_000, {"raw": "[" * 100_000}),
    ],
)
def test_tool_input_is_the_argument_object_or_raw(arguments: str, expected: Any) -> None:
    assert tool_input(arguments) == expected


# -- probe ------------------------------------------------------------------------


@pytest.mark.rule("DSH-PROBE-001")
def test_probe_output_yields_the_plugin_version() -> None:
    stdout = "\n" + json.dumps({**PROBE, "compatibility_generation": "g1"}) + "\r\n"
    frame = parse_probe_stdout(stdout)
    assert frame.plugin_version == "0.1.0"
    assert frame.compatibility_generation == "g1"


@pytest.mark.rule("DSH-PROBE-001", "DSH-SEC-001")
@pytest.mark.parametrize(
    ("stdout", "problem"),
    [
        ("", "exactly one JSON line, got 0"),
        (json.dumps(PROBE) + "\n" + json.dumps(PROBE), "exactly one JSON line, got 2"),
        (f"dsh {SECRET}", "not valid JSON"),
        (json.dumps(READY), "field type must be probe"),
        (
            json.dumps({**PROBE, "capabilities": {**CAPS, "session_resume": False}}),
            "session_resume",
        ),
        (json.dumps({**PROBE, "protocol_version": 2}), "protocol_version must equal 1"),
        (json.dumps({**PROBE, "runtime": SECRET}), "runtime must equal open-design"),
    ],
)
def test_incompatible_probe_output_is_rejected(stdout: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem) as info:
        parse_probe_stdout(stdout)
    assert SECRET not in str(info.value)
