"""The acp-json-rpc session, driven by a scripted agent (harness.protocols.peer).

One test (or one parametrized table) per rule of conformance/rules/acp.py. Agent
frames are written by hand from the shapes of wire §A.1.2/§A.1.3 and ref §2.6.

Shared helper: :func:`play` runs a script and :func:`check` asserts, for every
test, that **every frame the session wrote validates against the vendored ACP
schema** (checked here independently of ``harness.protocols.acp.schema``: the
``$def`` is found from ``x-method`` in the schema file itself), that every event
validates against ``events.schema.json``, and that a run ends at most once.
``test_acp_updates.py`` imports these helpers.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.defs.registry import BUILTIN_DEFS
from harness.defs.types import AcpEnvFormat
from harness.events import (
    Status,
    TextDelta,
    ToolResult,
    ToolUse,
    Usage,
)
from harness.protocols.acp import schema as acp_schema
from harness.protocols.acp.agent_requests import choose_permission_option
from harness.protocols.acp.config import DEFAULT_MAX_LINE_BYTES, AcpRequestError
from harness.protocols.acp.error_responses import infer_retryable
from harness.protocols.acp.mcp import version_at_least
from harness.protocols.acp.session import AcpSession
from harness.protocols.base import (
    Actions,
    CloseStdin,
    Control,
    Finished,
    LocalProtocolError,
    RunStatus,
    SessionRequest,
    SessionState,
    SetDeadline,
    Terminate,
)
from harness.protocols.jsonrpc import ErrorResponse
from harness.protocols.peer import (
    ANY,
    Cancel,
    Eof,
    Expect,
    ScriptResult,
    Send,
    Step,
    Tick,
    run_script,
)
from harness.schemas import load_schema
from tests.helpers import cut_points, split_at
from tests.support.examples import fuzz_sized

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "harness" / "schemas" / "acp" / "v1"
EVENT_SCHEMA = jsonschema.Draft202012Validator(load_schema("events.schema.json"))

SID = "sess-7f21"
CWD = "/work/project"
PROMPT = "Design a pricing page"
GRACE = 500
CANCEL_GRACE = 2000
STAGE = 10_000


# -- independent schema check of every frame the session writes ----------------------------


def _load(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    return schema


_FILES = [_load("schema.json"), _load("schema.unstable.json")]
_SUFFIXES = {"request": "Request", "notification": "Notification", "response": "Response"}
#: VENDORED.md: session/set_model is in neither file; checked against this shape.
_SET_MODEL: dict[str, dict[str, Any]] = {
    "request": {
        "type": "object",
        "properties": {"sessionId": {"type": "string"}, "modelId": {"type": "string"}},
        "required": ["sessionId", "modelId"],
    },
    "response": {"type": ["object", "null"]},
}

#: The AMR extension (Open Design's ``amr-continuation.ts`` contract): the session and the
#: version-1 cursor, nothing else -- above all no ``prompt``.
_CONTINUE: dict[str, dict[str, Any]] = {
    "request": {
        "type": "object",
        "properties": {
            "sessionId": {"type": "string"},
            "continuation": {
                "type": "object",
                "properties": {
                    "version": {"const": 1},
                    "userMessageId": {"type": "string", "minLength": 1},
                    "assistantMessageId": {"type": "string", "minLength": 1},
                    "toolResultsCommitted": {"const": True},
                },
                "required": [
                    "version",
                    "userMessageId",
                    "assistantMessageId",
                    "toolResultsCommitted",
                ],
                "additionalProperties": False,
            },
        },
        "required": ["sessionId", "continuation"],
        "additionalProperties": False,
    },
}


def _schema_for(method: str, kind: str) -> dict[str, Any]:
    for full in _FILES:
        for name, body in full["$defs"].items():
            if body.get("x-method") == method and name.endswith(_SUFFIXES[kind]):
                return {
                    "$schema": full["$schema"],
                    "$ref": f"#/$defs/{name}",
                    "$defs": full["$defs"],
                }
    if method == "session/set_model":
        return _SET_MODEL[kind]
    if method == "_session/continue":
        return _CONTINUE[kind]
    raise AssertionError(f"the vendored schema has no {kind} shape for {method!r}")


def _array_env(params: dict[str, Any]) -> dict[str, Any]:
    servers = []
    for server in params.get("mcpServers", []):
        env = server.get("env")
        if server.get("type", "stdio") == "stdio" and isinstance(env, dict):
            assert all(isinstance(v, str) for v in env.values()), env
            servers.append({**server, "env": [{"name": k, "value": v} for k, v in env.items()]})
        else:
            servers.append(server)
    return {**params, "mcpServers": servers}


def assert_frame_valid(
    frame: Any, answered: Mapping[Any, str], env_format: AcpEnvFormat = AcpEnvFormat.ARRAY
) -> None:
    """``frame`` (written by the session) validates against the vendored schema."""
    assert isinstance(frame, dict) and frame.get("jsonrpc") == "2.0", frame
    if "method" in frame:
        kind = "request" if "id" in frame else "notification"
        value = frame["params"]
        if env_format is AcpEnvFormat.MAP and frame["method"] in ("session/new", "session/load"):
            value = _array_env(value)
        schema = _schema_for(frame["method"], kind)
    elif "error" in frame:
        full = _FILES[0]
        schema = {"$schema": full["$schema"], "$ref": "#/$defs/Error", "$defs": full["$defs"]}
        value = frame["error"]
    else:
        assert frame["id"] in answered, f"response to an id the agent never used: {frame!r}"
        schema = _schema_for(answered[frame["id"]], "response")
        value = frame["result"]
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(value)]
    assert not errors, f"session wrote a frame the ACP schema rejects: {frame!r}: {errors}"


def _agent_requests(script: Sequence[Step]) -> dict[Any, str]:
    found: dict[Any, str] = {}
    for step in script:
        if not isinstance(step, Send):
            continue
        items: list[Any] = []
        if isinstance(step.data, (dict, list)):
            items = [step.data]
        else:
            raw = step.data if isinstance(step.data, bytes) else step.data.encode()
            for line in raw.split(b"\n"):
                with contextlib.suppress(ValueError):
                    items.append(json.loads(line))
        for item in items:
            if (
                isinstance(item, dict)
                and "method" in item
                and isinstance(item.get("id"), (int, str))
            ):
                found[item["id"]] = item["method"]
    return found


def check(
    res: ScriptResult,
    script: Sequence[Step] = (),
    env_format: AcpEnvFormat = AcpEnvFormat.ARRAY,
) -> ScriptResult:
    answered = _agent_requests(script)
    for frame in res.frames:
        assert_frame_valid(frame, answered, env_format)
    for event in res.events_json():
        assert EVENT_SCHEMA.is_valid(event), event
    finished = [c for c in res.controls if isinstance(c, Finished)]
    assert len(finished) <= 1, f"more than one Finished: {res.controls}"
    if finished:
        assert res.controls[-1] is finished[0], f"controls after Finished: {res.controls}"
    return res


def new_session(**kwargs: Any) -> AcpSession:
    kwargs.setdefault("shutdown_grace_ms", GRACE)
    kwargs.setdefault("cancel_grace_ms", CANCEL_GRACE)
    kwargs.setdefault("stage_timeout_ms", STAGE)
    return AcpSession(**kwargs)


def request(**kwargs: Any) -> SessionRequest:
    base: dict[str, Any] = {"prompt": PROMPT, "cwd": CWD}
    base.update(kwargs)
    return SessionRequest(**base)


def play(
    script: Sequence[Step],
    req: SessionRequest | None = None,
    *,
    sess: AcpSession | None = None,
    chunk_size: int | None = None,
    allow_unexpected_frames: bool = False,
) -> tuple[AcpSession, ScriptResult]:
    sess = sess or new_session()
    res = run_script(
        sess,
        req or request(),
        script,
        chunk_size=chunk_size,
        allow_unexpected_frames=allow_unexpected_frames,
    )
    return sess, check(res, script, sess.config.env_format)


def finished(res: ScriptResult) -> Finished:
    done = res.finished
    assert done is not None, f"the run did not finish: {res.controls}"
    return done


def failure(res: ScriptResult) -> tuple[str, str, str | None]:
    done = finished(res)
    assert done.status is RunStatus.FAILED and done.error is not None, done
    return done.error.code, done.error.message, done.error.rule


def non_deadline(controls: Sequence[Control]) -> list[Control]:
    return [c for c in controls if not isinstance(c, SetDeadline)]


def events_of(res: ScriptResult, *types: type) -> list[Any]:
    return [e for e in res.events if isinstance(e, types)]


# -- agent frames (hand-written from wire §A.1.2 / §A.1.3) ----------------------------------


def result(request_id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": err}


def init_result(*, load: bool = False, version: str | None = "1.4.0") -> dict[str, Any]:
    out: dict[str, Any] = {
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": load,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
        },
        "authMethods": [],
    }
    if version is not None:
        out["agentInfo"] = {"name": "fake-acp", "version": version}
    return out


def update(body: dict[str, Any], sid: str = SID) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": sid, "update": body},
    }


def message(text: str) -> dict[str, Any]:
    return update(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    )


def thought(text: str) -> dict[str, Any]:
    return update(
        {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": text}}
    )


def tool_call(tool_id: str, **fields: Any) -> dict[str, Any]:
    body = {
        "sessionUpdate": "tool_call",
        "toolCallId": tool_id,
        "title": fields.pop("title", "Tool"),
    }
    return update({**body, **fields})


def tool_update(tool_id: str, **fields: Any) -> dict[str, Any]:
    return update({"sessionUpdate": "tool_call_update", "toolCallId": tool_id, **fields})


def permission(
    request_id: Any, options: list[dict[str, Any]], tool_id: str = "call-1"
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "session/request_permission",
        "params": {
            "sessionId": SID,
            "toolCall": {"toolCallId": tool_id, "title": "Write index.html", "kind": "edit"},
            "options": options,
        },
    }


def option(option_id: str, kind: str) -> dict[str, Any]:
    return {"optionId": option_id, "name": option_id.replace("_", " ").title(), "kind": kind}


def prompt_done(request_id: int = 3, stop: str = "end_turn", **extra: Any) -> dict[str, Any]:
    return result(request_id, {"stopReason": stop, **extra})


INITIALIZE_PARAMS = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
    },
    "clientInfo": {"name": "adapter-harness", "version": ANY},
}
EXPECT_INIT = Expect(
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS}, "initialize"
)
EXPECT_NEW = Expect(
    {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": CWD, "mcpServers": []}},
    "session/new",
)


def expect_prompt(request_id: int = 3) -> Expect:
    return Expect(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "session/prompt",
            "params": {"sessionId": SID, "prompt": [{"type": "text", "text": PROMPT}]},
        },
        "session/prompt",
    )


def expect_reply(request_id: Any, value: Any) -> Expect:
    return Expect({"jsonrpc": "2.0", "id": request_id, "result": value}, f"reply to {request_id!r}")


def expect_method_not_found(request_id: Any) -> Expect:
    return Expect(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": ANY}},
        "method not found",
    )


EXPECT_CANCEL = Expect(
    lambda f: f == {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": SID}},
    "session/cancel notification",
)

HANDSHAKE: list[Step] = [
    EXPECT_INIT,
    Send(result(1, init_result())),
    EXPECT_NEW,
    Send(result(2, {"sessionId": SID})),
    expect_prompt(),
]

# -- handshake --------------------------------------------------------------------------------


@pytest.mark.rule(
    "ACP-INIT-001", "ACP-SESSION-001", "ACP-PROMPT-001", "ACP-RPC-002", "ACP-TURN-001"
)
def test_handshake_writes_initialize_new_prompt_in_order() -> None:
    sess, res = play([*HANDSHAKE, Send(message("Hello")), Send(prompt_done(), at_ms=40)])
    assert [f.get("method") for f in res.frames] == ["initialize", "session/new", "session/prompt"]
    assert [f["id"] for f in res.frames] == [1, 2, 3]
    assert res.frames[0]["params"]["clientInfo"]["name"] == "adapter-harness"
    assert res.events == [
        Status(label="waiting_for_first_output", session_id=SID, elapsed_ms=0.0),
        Status(label="streaming", ttft_ms=0.0),
        TextDelta(delta="Hello"),
        Usage(usage=None, duration_ms=40.0, stop_reason="end_turn"),
    ]
    assert finished(res) == Finished(RunStatus.COMPLETED)
    assert sess.state is SessionState.FINISHED and sess.session_id == SID
    assert sess.durable_session_id == SID and sess.status is RunStatus.COMPLETED
    assert sess.agent_info == {"name": "fake-acp", "version": "1.4.0"}
    assert sess.counters["frames_sent"] == 3 and sess.counters["frames_received"] == 4


@pytest.mark.rule("ACP-INIT-001")
def test_nothing_but_initialize_is_written_before_its_result() -> None:
    sess = new_session()
    started = sess.start(request(), 0)
    assert [json.loads(f)["method"] for f in started.frames] == ["initialize"]
    assert sess.state is SessionState.HANDSHAKE
    # Banner output, an unrelated notification and a half line write nothing.
    later = sess.receive(b"agent booting\n", 1)
    later.extend(
        sess.receive(
            json.dumps(update({"sessionUpdate": "plan", "entries": []})).encode() + b"\n", 1
        )
    )
    later.extend(sess.receive(json.dumps(result(1, init_result()))[:-3].encode(), 2))
    assert later.frames == []
    done = sess.receive(json.dumps(result(1, init_result()))[-3:].encode() + b"\n", 3)
    assert [json.loads(f)["method"] for f in done.frames] == ["session/new"]
    for frame in [*started.frames, *done.frames]:
        assert_frame_valid(json.loads(frame), {})


@pytest.mark.rule("ACP-SESSION-001")
def test_session_new_carries_absolute_cwd_and_relative_cwd_is_refused() -> None:
    script: list[Step] = [EXPECT_INIT, Send(result(1, init_result())), Expect(ANY, "session/new")]
    _, res = play(script, request(cwd="C:\\Users\\dev\\proj"))
    assert res.frames[1]["params"]["cwd"] == "C:\\Users\\dev\\proj"
    for bad in ("project", "./project", ""):
        with pytest.raises(AcpRequestError, match="absolute path"):
            new_session().start(request(cwd=bad), 0)


@pytest.mark.rule("ACP-SESSION-002")
def test_resume_uses_session_load_with_the_same_mcp_servers() -> None:
    servers = [{"name": "files", "command": "mcp-files", "args": [], "env": {"ROOT": "/w"}}]
    sent = [
        {
            "type": "stdio",
            "name": "files",
            "command": "mcp-files",
            "args": [],
            "env": [{"name": "ROOT", "value": "/w"}],
        }
    ]
    script: list[Step] = [
        EXPECT_INIT,
        Send(result(1, init_result(load=True))),
        Expect(
            {
                "id": 2,
                "method": "session/load",
                "params": {"sessionId": "old-session", "cwd": CWD, "mcpServers": sent},
            },
            "session/load",
        ),
        Send(result(2, {})),
        Expect({"id": 3, "method": "session/prompt", "params": {"sessionId": "old-session"}}),
        Send(prompt_done()),
    ]
    sess, res = play(script, request(resume_session_id="old-session", mcp_servers=servers))
    assert "session/new" not in [f.get("method") for f in res.frames]
    assert sess.session_id == "old-session" and finished(res).status is RunStatus.COMPLETED
    assert events_of(res, Status)[0] == Status(
        label="waiting_for_first_output", session_id="old-session", elapsed_ms=0.0
    )


@pytest.mark.rule("ACP-SESSION-003")
@pytest.mark.parametrize("caps", [{"loadSession": False}, {}, {"loadSession": "yes"}])
def test_resume_without_load_capability_fails_instead_of_starting_fresh(
    caps: dict[str, Any],
) -> None:
    init = {**init_result(), "agentCapabilities": caps}
    _, res = play([EXPECT_INIT, Send(result(1, init))], request(resume_session_id="old-session"))
    code, message, rule = failure(res)
    assert (code, rule) == ("ACP_LOAD_UNSUPPORTED", "ACP-SESSION-003")
    assert "old-session" in message and "loadSession" in message
    assert [f.get("method") for f in res.frames] == ["initialize"]
    assert non_deadline(res.controls) == [
        CloseStdin(),
        Terminate(after_ms=GRACE),
        Finished(RunStatus.FAILED, finished(res).error),
    ]


@pytest.mark.rule("ACP-RESULT-001")
@pytest.mark.parametrize(
    ("script", "needle"),
    [
        (
            [EXPECT_INIT, Send(result(1, "ready"))],
            "invalid initialize response: result is not an object",
        ),
        (
            [EXPECT_INIT, Send(result(1, init_result())), EXPECT_NEW, Send(result(2, {}))],
            "invalid session/new response: no sessionId",
        ),
        (
            [
                EXPECT_INIT,
                Send(result(1, init_result())),
                EXPECT_NEW,
                Send(result(2, {"sessionId": 5})),
            ],
            "no sessionId",
        ),
        (
            [EXPECT_INIT, Send(result(1, init_result())), EXPECT_NEW, Send(result(2, None))],
            "result is not an object",
        ),
    ],
)
def test_results_without_the_needed_fields_fail(script: list[Step], needle: str) -> None:
    sess, res = play(script)
    code, message, rule = failure(res)
    assert (code, rule) == ("ACP_INVALID_RESPONSE", "ACP-RESULT-001")
    assert needle in message
    error_ = finished(res).error
    assert error_ is not None and error_.line is not None  # the offending line, bounded
    assert sess.session_id is None


# -- model selection ---------------------------------------------------------------------------


def model_option(config_id: str, current: str = "fast") -> dict[str, Any]:
    return {
        "id": config_id,
        "name": "Model",
        "type": "select",
        "currentValue": current,
        "options": [{"value": "fast", "name": "Fast"}, {"value": "smart", "name": "Smart"}],
    }


@pytest.mark.rule("ACP-MODEL-001")
@pytest.mark.parametrize("config_id", ["model", "Models", "modelId", "MODELIDS"])
def test_model_is_set_through_a_model_config_option(config_id: str) -> None:
    options = [
        {"id": "mode", "name": "Mode", "type": "select", "currentValue": "a", "options": []},
        model_option(config_id),
    ]
    script: list[Step] = [
        EXPECT_INIT,
        Send(result(1, init_result())),
        EXPECT_NEW,
        Send(result(2, {"sessionId": SID, "configOptions": options})),
        Expect(
            {
                "id": 3,
                "method": "session/set_config_option",
                "params": {"sessionId": SID, "configId": config_id, "value": "smart"},
            }
        ),
        Send(result(3, {"configOptions": options})),
        expect_prompt(4),
        Send(prompt_done(4)),
    ]
    _, res = play(script, request(model="smart"))
    assert events_of(res, Status)[:2] == [
        Status(label="model", model="fast"),
        Status(label="model", model="smart"),
    ]
    assert finished(res).status is RunStatus.COMPLETED


@pytest.mark.rule("ACP-MODEL-001", "ACP-SCHEMA-003")
def test_model_falls_back_to_set_model_without_a_model_option() -> None:
    script: list[Step] = [
        EXPECT_INIT,
        Send(result(1, init_result())),
        EXPECT_NEW,
        Send(
            result(
                2,
                {
                    "sessionId": SID,
                    "models": {"currentModelId": "default-m", "availableModels": []},
                },
            )
        ),
        Expect(
            {
                "id": 3,
                "method": "session/set_model",
                "params": {"sessionId": SID, "modelId": "smart"},
            }
        ),
        Send(result(3, {})),
        expect_prompt(4),
        Send(prompt_done(4)),
    ]
    _, res = play(script, request(model=" smart "))
    assert events_of(res, Status)[:2] == [
        Status(label="model", model="default-m"),
        Status(label="model", model="smart"),
    ]


@pytest.mark.rule("ACP-MODEL-001")
@pytest.mark.parametrize("model", [None, "", "default", "  "])
def test_no_model_request_without_a_model_choice(model: str | None) -> None:
    _, res = play([*HANDSHAKE, Send(prompt_done())], request(model=model))
    assert [f.get("method") for f in res.frames] == ["initialize", "session/new", "session/prompt"]


@pytest.mark.rule("ACP-MODEL-002")
@pytest.mark.parametrize("code", [-32603, -32601])
def test_recoverable_model_error_continues_with_the_default(code: int) -> None:
    script: list[Step] = [
        EXPECT_INIT,
        Send(result(1, init_result())),
        EXPECT_NEW,
        Send(result(2, {"sessionId": SID})),
        Expect({"id": 3, "method": "session/set_model"}),
        Send(error(3, code, "model not available")),
        expect_prompt(4),
        Send(prompt_done(4)),
    ]
    _, res = play(script, request(model="smart"))
    assert Status(label="model", model="default") in res.events
    assert finished(res).status is RunStatus.COMPLETED


@pytest.mark.rule("ACP-MODEL-002", "ACP-ERROR-001")
def test_other_model_errors_fail_the_run() -> None:
    script: list[Step] = [
        EXPECT_INIT,
        Send(result(1, init_result())),
        EXPECT_NEW,
        Send(result(2, {"sessionId": SID})),
        Expect({"id": 3, "method": "session/set_model"}),
        Send(error(3, -32602, "Invalid params: modelId")),
    ]
    _, res = play(script, request(model="smart"))
    assert failure(res) == (
        "AGENT_EXECUTION_FAILED",
        "json-rpc id 3: Invalid params: modelId",
        "ACP-ERROR-001",
    )
    assert "session/prompt" not in [f.get("method") for f in res.frames]


# -- MCP servers ---------------------------------------------------------------------------------


ENV_MAP = {"TOKEN": "t-1", "MODE": "ro"}
ENV_ARRAY = [{"name": "TOKEN", "value": "t-1"}, {"name": "MODE", "value": "ro"}]


def _sent_servers(servers: list[dict[str, Any]], fmt: AcpEnvFormat) -> Any:
    script: list[Step] = [EXPECT_INIT, Send(result(1, init_result())), Expect(ANY, "session/new")]
    _, res = play(script, request(mcp_servers=servers), sess=new_session(env_format=fmt))
    return res.frames[1]["params"]["mcpServers"]


@pytest.mark.rule("ACP-MCP-001")
@pytest.mark.parametrize(
    ("fmt", "given_env", "sent_env"),
    [
        (AcpEnvFormat.ARRAY, ENV_MAP, ENV_ARRAY),
        (AcpEnvFormat.ARRAY, ENV_ARRAY, ENV_ARRAY),
        (AcpEnvFormat.ARRAY, None, []),
        (AcpEnvFormat.MAP, ENV_ARRAY, ENV_MAP),
        (AcpEnvFormat.MAP, ENV_MAP, ENV_MAP),
        (AcpEnvFormat.MAP, None, {}),
        (AcpEnvFormat.MAP, [{"name": "A"}, {"value": "v"}], {"A": "", "": "v"}),
    ],
)
def test_stdio_env_is_converted_to_the_def_format(
    fmt: AcpEnvFormat, given_env: Any, sent_env: Any
) -> None:
    server: dict[str, Any] = {"name": "files", "command": "mcp-files", "args": ["--ro"]}
    if given_env is not None:
        server["env"] = given_env
    assert _sent_servers([server], fmt) == [
        {
            "type": "stdio",
            "name": "files",
            "command": "mcp-files",
            "args": ["--ro"],
            "env": sent_env,
        }
    ]


@pytest.mark.rule("ACP-MCP-001")
def test_non_stdio_servers_pass_through_unchanged() -> None:
    http = {
        "type": "http",
        "name": "gh",
        "url": "https://mcp.example/x",
        "headers": [],
        "env": [{"key": "TOKEN", "value": "secret"}],
    }
    assert _sent_servers([http], AcpEnvFormat.ARRAY) == [http]
    assert _sent_servers([http], AcpEnvFormat.MAP) == [http]


@pytest.mark.rule("ACP-MCP-001", "ACP-SCHEMA-001")
@pytest.mark.parametrize(
    "server",
    [
        {"name": "x", "args": [], "env": []},  # no command
        {"name": "x", "command": "c", "env": "A=b"},
        {"type": "http", "name": "x"},  # no url
        "not-a-mapping",
    ],
)
def test_servers_that_cannot_be_sent_are_refused_at_start(server: Any) -> None:
    sess = new_session()
    with pytest.raises(AcpRequestError):
        sess.start(request(mcp_servers=[server]), 0)
    assert sess.state is SessionState.NEW


@pytest.mark.rule("ACP-MCP-002")
@pytest.mark.parametrize(
    ("version", "withheld"),
    [
        ("0.37.0", True),
        ("0.37.1", True),
        ("0.100.0", True),
        ("1.0", True),
        ("v0.38.2-beta.1", True),
        ("0.36.9", False),
        ("0.9.0", False),
        ("dev-build", False),
        (None, False),
    ],
)
def test_stdio_servers_are_withheld_from_new_enough_agents(
    version: str | None, withheld: bool
) -> None:
    stdio = {"name": "files", "command": "mcp-files", "args": [], "env": {}}
    http = {"type": "http", "name": "gh", "url": "https://mcp.example/x", "headers": []}
    script: list[Step] = [EXPECT_INIT, Send(result(1, init_result(version=version))), Expect(ANY)]
    sess = new_session(stdio_mcp_removed_in_version="0.37.0")
    sess, res = play(script, request(mcp_servers=[stdio, http]), sess=sess)
    names = [s["name"] for s in res.frames[1]["params"]["mcpServers"]]
    assert names == (["gh"] if withheld else ["files", "gh"])
    assert sess.counters["withheld_mcp_servers"] == (1 if withheld else 0)
    assert any(isinstance(e, Status) and e.label == "mcp_withheld" for e in res.events) is withheld


@pytest.mark.rule("ACP-MCP-002")
def test_no_servers_are_withheld_without_the_def_field() -> None:
    stdio = {"name": "files", "command": "mcp-files", "args": [], "env": {}}
    script: list[Step] = [EXPECT_INIT, Send(result(1, init_result(version="99.0.0"))), Expect(ANY)]
    _, res = play(script, request(mcp_servers=[stdio]))
    assert len(res.frames[1]["params"]["mcpServers"]) == 1
    assert version_at_least("0.37.0", "0.37") and not version_at_least("0.3.70", "0.37.0")


# -- permissions -------------------------------------------------------------------------------


@pytest.mark.rule("ACP-PERM-001", "ACP-RPC-002")
@pytest.mark.parametrize(
    ("options", "chosen"),
    [
        (
            [
                option("allow_once", "allow_once"),
                option("always", "allow_always"),
                option("approve_for_session", "allow_always"),
            ],
            "approve_for_session",
        ),
        (
            [
                option("reject", "reject_once"),
                option("once", "allow_once"),
                option("always", "allow_always"),
            ],
            "always",
        ),
        (
            [
                option("reject", "reject_always"),
                option("once-a", "allow_once"),
                option("once-b", "allow_once"),
            ],
            "once-a",
        ),
    ],
    ids=["approve_for_session", "allow_always", "allow_once"],
)
@pytest.mark.parametrize(
    "request_id", [7, "0b9c2f54-6d1e-4e8a-9a39-2f1d6c7e8a10"], ids=["int-id", "uuid-id"]
)
def test_permission_preference_order(
    options: list[dict[str, Any]], chosen: str, request_id: Any
) -> None:
    script: list[Step] = [
        *HANDSHAKE,
        Send(permission(request_id, options)),
        expect_reply(request_id, {"outcome": {"outcome": "selected", "optionId": chosen}}),
        Send(prompt_done()),
    ]
    sess, res = play(script)
    assert Status(label="permission_request", detail=chosen) in res.events
    assert sess.counters["permission_requests"] == 1
    assert finished(res).status is RunStatus.COMPLETED
    assert choose_permission_option(options) == chosen


@pytest.mark.rule("ACP-PERM-002")
@pytest.mark.parametrize(
    "options",
    [
        [option("no", "reject_once"), option("never", "reject_always")],
        [],
        [{"optionId": 5, "name": "x", "kind": "allow_once"}],
    ],
    ids=["only-rejects", "none", "non-string-id"],
)
def test_no_acceptable_option_is_answered_cancelled_and_fails(options: list[Any]) -> None:
    script: list[Step] = [
        *HANDSHAKE,
        Send(permission("p-1", options)),
        expect_reply("p-1", {"outcome": {"outcome": "cancelled"}}),
    ]
    _, res = play(script)
    code, message, rule = failure(res)
    assert (code, rule) == ("ACP_PERMISSION_UNHANDLED", "ACP-PERM-002")
    assert message.startswith("unhandled ACP permission request: ")


@pytest.mark.rule("ACP-PERM-003", "ACP-CANCEL-001")
def test_permission_after_cancel_is_answered_cancelled() -> None:
    script: list[Step] = [
        *HANDSHAKE,
        Cancel(at_ms=5),
        EXPECT_CANCEL,
        Send(permission(11, [option("always", "allow_always")])),
        expect_reply(11, {"outcome": {"outcome": "cancelled"}}),
        Send(prompt_done(stop="cancelled")),
    ]
    _, res = play(script)
    assert finished(res).status is RunStatus.CANCELLED
    assert Status(label="permission_request", detail="cancelled") in res.events


# -- agent requests we do not serve -------------------------------------------------------------


@pytest.mark.rule("ACP-RPC-003", "ACP-RPC-002")
def test_unsupported_agent_requests_get_method_not_found() -> None:
    uuid = "5f0e2a9c-1b7d-4c3e-8f61-0a2b3c4d5e6f"
    script: list[Step] = [
        *HANDSHAKE,
        Send(
            {
                "jsonrpc": "2.0",
                "id": uuid,
                "method": "fs/write_text_file",
                "params": {"sessionId": SID, "path": "/work/project/a.html", "content": "<p>"},
            }
        ),
        expect_method_not_found(uuid),
        Send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "terminal/create",
                "params": {"sessionId": SID, "command": "ls"},
            }
        ),
        expect_method_not_found(0),
        Send({"jsonrpc": "2.0", "id": 12, "method": "_vendor/ping", "params": {}}),
        expect_method_not_found(12),
        Send({"jsonrpc": "2.0", "id": True, "method": "fs/read_text_file", "params": {}}),
        Expect(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
        ),
        Send(prompt_done()),
    ]
    sess, res = play(script)
    assert res.frames[3]["error"]["message"] == "Method not found: fs/write_text_file"
    assert sess.counters["unsupported_requests"] == 3
    assert sess.counters["invalid_messages"] == 1
    assert finished(res).status is RunStatus.COMPLETED


@pytest.mark.rule("ACP-RPC-002")
def test_responses_correlate_by_exact_id() -> None:
    # "1" is not 1, and true is not 1: neither answers initialize.
    script: list[Step] = [
        EXPECT_INIT,
        Send(result("1", init_result())),
        Send({"jsonrpc": "2.0", "id": True, "result": init_result()}),
        Send(result(1, init_result())),
        EXPECT_NEW,
    ]
    sess, _ = play(script)
    assert sess.counters["unexpected_responses"] == 1
    assert sess.counters["invalid_messages"] == 1


# -- updates through the session ---------------------------------------------------------------


@pytest.mark.rule("ACP-UPDATE-REPLAY-001")
def test_history_replay_before_the_prompt_is_not_transcribed() -> None:
    script: list[Step] = [
        EXPECT_INIT,
        Send(result(1, init_result(load=True))),
        Expect({"method": "session/load"}),
        Send(
            update(
                {
                    "sessionUpdate": "user_message_chunk",
                    "content": {"type": "text", "text": "old question"},
                },
                sid="old",
            )
        ),
        Send(
            update(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "old answer"},
                },
                sid="old",
            )
        ),
        Send(
            update(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "old-1",
                    "title": "Read",
                    "status": "completed",
                },
                sid="old",
            )
        ),
        Send(update({"sessionUpdate": "current_mode_update", "currentModeId": "code"}, sid="old")),
        Send(result(2, {})),
        Expect({"method": "session/prompt"}),
        Send(
            update(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "new"},
                },
                sid="old",
            )
        ),
        Send(
            update(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "other"},
                },
                sid="someone-else",
            )
        ),
        Send(result(3, {"stopReason": "end_turn"})),
    ]
    sess, res = play(script, request(resume_session_id="old"))
    assert [e.delta for e in events_of(res, TextDelta)] == ["new"]
    assert not events_of(res, ToolUse)
    assert Status(label="current_mode_update", detail="code") in res.events
    assert sess.counters["replayed_updates"] == 3
    assert sess.counters["foreign_updates"] == 1


@pytest.mark.rule("ACP-UPDATE-TOOL-001", "ACP-UPDATE-TOOL-005", "ACP-TURN-001", "ACP-USAGE-001")
def test_prompt_result_flushes_open_tools_and_reports_usage() -> None:
    script: list[Step] = [
        EXPECT_INIT,
        Send(result(1, init_result()), at_ms=4),
        EXPECT_NEW,
        Send(result(2, {"sessionId": SID}), at_ms=8),  # the prompt is written at 8
        expect_prompt(),
        Send(
            tool_call(
                "call-1",
                kind="read",
                status="in_progress",
                locations=[{"path": "/work/project/a.md"}],
            ),
            at_ms=10,
        ),
        Send(tool_call("call-2", kind="edit", status="pending"), at_ms=11),
        Send(tool_update("call-2", status="completed", rawOutput="ok"), at_ms=12),
        Send(
            prompt_done(
                usage={
                    "inputTokens": 120,
                    "outputTokens": 30,
                    "totalTokens": 150,
                    "cachedReadTokens": 7,
                }
            ),
            at_ms=90,
        ),
    ]
    _, res = play(script)
    tools = events_of(res, ToolUse, ToolResult)
    assert tools == [
        ToolUse(id="call-2", name="Edit", input={}, started_at_ms=11),
        ToolResult(tool_use_id="call-2", content="ok", is_error=False),
        ToolUse(
            id="call-1", name="Read", input={"file_path": "/work/project/a.md"}, started_at_ms=10
        ),
        ToolResult(tool_use_id="call-1", content="", is_error=False),
    ]
    assert res.events[-1] == Usage(
        usage={
            "input_tokens": 120,
            "output_tokens": 30,
            "cached_read_tokens": 7,
            "total_tokens": 150,
        },
        duration_ms=82.0,  # from the prompt to its result
        stop_reason="end_turn",
    )
    assert res.events[0] == Status(label="waiting_for_first_output", session_id=SID, elapsed_ms=8.0)
    assert non_deadline(res.controls) == [
        CloseStdin(),
        Terminate(after_ms=GRACE),
        Finished(RunStatus.COMPLETED),
    ]


@pytest.mark.rule("ACP-TURN-001")
def test_shutdown_grace_is_a_constructor_argument() -> None:
    _, res = play([*HANDSHAKE, Send(prompt_done())], sess=new_session(shutdown_grace_ms=1234))
    assert Terminate(after_ms=1234) in res.controls
    _, res = play([*HANDSHAKE, Send(prompt_done(stop="max_tokens"))])
    assert events_of(res, Usage)[0].stop_reason == "max_tokens"
    assert finished(res).status is RunStatus.COMPLETED


@pytest.mark.rule("ACP-TURN-002")
def test_turn_end_update_completes_when_configured() -> None:
    turn_end = update({"sessionUpdate": "turn_end", "stopReason": "end_turn"})
    script: list[Step] = [*HANDSHAKE, Send(message("done")), Send(turn_end), Send(prompt_done())]
    sess, res = play(script, sess=new_session(turn_end_completes_prompt=True))
    assert finished(res).status is RunStatus.COMPLETED
    assert events_of(res, Usage) == [Usage(usage=None, duration_ms=0.0, stop_reason="end_turn")]
    assert sess.counters["lines_after_finish"] == 1  # the late prompt result is ignored
    # Without the flag turn_end is just another update: a status, and the run goes on.
    sess, res = play([*HANDSHAKE, Send(turn_end)])
    assert res.finished is None and Status(label="turn_end") in res.events
    assert sess.counters["schema_violations"] == 1  # turn_end is not an ACP v1 update


@pytest.mark.rule("ACP-TURN-002")
def test_turn_end_before_the_prompt_does_not_complete() -> None:
    turn_end = update({"sessionUpdate": "turn_end"})
    script: list[Step] = [EXPECT_INIT, Send(result(1, init_result())), EXPECT_NEW, Send(turn_end)]
    _, res = play(script, sess=new_session(turn_end_completes_prompt=True))
    assert res.finished is None


# -- errors ----------------------------------------------------------------------------------------


@pytest.mark.rule("ACP-ERROR-001")
@pytest.mark.parametrize(
    ("err", "message", "retryable"),
    [
        (
            error(3, -32603, "Internal error: upstream_error from provider"),
            "json-rpc id 3: Internal error: upstream_error from provider",
            True,
        ),
        (
            error(3, -32000, "Authentication required"),
            "json-rpc id 3: Authentication required",
            False,
        ),
        (error(3, -32603, "boom", {"retryable": True}), "json-rpc id 3: boom", True),
        (
            error(3, -32603, "Service Unavailable", {"isRetryable": False}),
            "json-rpc id 3: Service Unavailable",
            False,
        ),
        (error(3, -32603, "Provider overloaded"), "json-rpc id 3: Provider overloaded", True),
        (
            error(3, -32603, "overloaded: request_too_large"),
            "json-rpc id 3: overloaded: request_too_large",
            False,
        ),
        (error(3, -32603, "", {"detail": '{"is_retryable": true}'}), "json-rpc id 3: -32603", True),
        ({"jsonrpc": "2.0", "id": 3, "error": {}}, "json-rpc id 3: json-rpc error", False),
    ],
)
def test_json_rpc_error_fails_with_agent_execution_failed(
    err: dict[str, Any], message: str, retryable: bool
) -> None:
    _, res = play(
        [*HANDSHAKE, Send(tool_call("c1", kind="execute", status="in_progress")), Send(err)]
    )
    done = finished(res)
    assert done.status is RunStatus.FAILED and done.error is not None
    assert (done.error.code, done.error.message, done.error.rule) == (
        "AGENT_EXECUTION_FAILED",
        message,
        "ACP-ERROR-001",
    )
    assert done.error.retryable is retryable
    # open tools are flushed as errors on failure (ACP-UPDATE-TOOL-005)
    assert events_of(res, ToolResult) == [ToolResult(tool_use_id="c1", content="", is_error=True)]


@pytest.mark.rule("ACP-ERROR-001")
def test_handshake_errors_fail_too() -> None:
    _, res = play(
        [
            EXPECT_INIT,
            Send(result(1, init_result())),
            EXPECT_NEW,
            Send(error(2, -32000, "Authentication required")),
        ]
    )
    assert failure(res) == (
        "AGENT_EXECUTION_FAILED",
        "json-rpc id 2: Authentication required",
        "ACP-ERROR-001",
    )
    retry = ErrorResponse(1, -32603, "Gateway Timeout", None)
    assert infer_retryable(retry)


@pytest.mark.rule("ACP-ERROR-002")
def test_stray_internal_errors_and_late_errors_are_ignored() -> None:
    script: list[Step] = [
        *HANDSHAKE,
        Send(error(99, -32603, "cleanup failed")),
        Send(error(None, -32603, "cleanup failed")),
        Send(message("still here")),
        Send(prompt_done()),
        Send(error(3, -32603, "late")),
        Send(error(4, -32000, "late")),
        Send(b"late banner\n"),
    ]
    sess, res = play(script)
    assert finished(res).status is RunStatus.COMPLETED
    assert sess.counters["ignored_errors"] == 2 and sess.counters["lines_after_finish"] == 3
    assert sess.error is None


@pytest.mark.rule("ACP-ERROR-002", "ACP-ERROR-001")
def test_other_errors_on_unknown_ids_fail() -> None:
    _, res = play([*HANDSHAKE, Send(error(None, -32700, "Parse error"))])
    assert failure(res) == (
        "AGENT_EXECUTION_FAILED",
        "json-rpc id None: Parse error",
        "ACP-ERROR-001",
    )


@pytest.mark.rule("ACP-EXIT-001")
@pytest.mark.parametrize("upto", [0, 2, 5], ids=["before-init", "during-handshake", "mid-turn"])
def test_exit_before_completion_fails(upto: int) -> None:
    _, res = play([*HANDSHAKE[:upto], Eof()], allow_unexpected_frames=True)
    assert failure(res) == (
        "ACP_EXITED_EARLY",
        "ACP session exited before completion",
        "ACP-EXIT-001",
    )
    assert non_deadline(res.controls)[:2] == [CloseStdin(), Terminate(after_ms=GRACE)]


@pytest.mark.rule("ACP-EXIT-001", "ACP-FRAME-002")
def test_final_result_without_newline_still_completes() -> None:
    tail = json.dumps(prompt_done()).encode()  # no trailing LF
    _, res = play([*HANDSHAKE, Send(tail), Eof()])
    assert finished(res).status is RunStatus.COMPLETED


# -- stage watchdog ---------------------------------------------------------------------


@pytest.mark.rule("ACP-TIMEOUT-001")
def test_stage_watchdog_resets_on_traffic_and_fails_when_passed() -> None:
    script: list[Step] = [
        EXPECT_INIT,
        Tick(at_ms=STAGE - 1),
        Send(result(1, init_result()), at_ms=100),
        EXPECT_NEW,
        Send(b"still booting\n", at_ms=200),
        Tick(at_ms=200 + STAGE - 1),
        Tick(at_ms=200 + STAGE),
    ]
    _, res = play(script)
    deadlines = [c for c in res.controls if isinstance(c, SetDeadline)]
    assert [d.at_ms for d in deadlines] == [STAGE, 100 + STAGE, 200 + STAGE]
    assert {d.label for d in deadlines} == {"acp-stage"}
    assert failure(res) == (
        "ACP_STAGE_TIMEOUT",
        f"ACP session/new timed out after {STAGE}ms",
        "ACP-TIMEOUT-001",
    )


@pytest.mark.rule("ACP-TIMEOUT-001")
def test_stage_watchdog_names_the_prompt_stage() -> None:
    _, res = play([*HANDSHAKE, Send(message("a"), at_ms=5), Tick(at_ms=5 + STAGE)])
    assert failure(res)[1] == f"ACP session/prompt timed out after {STAGE}ms"


@pytest.mark.rule("ACP-TIMEOUT-001")
@pytest.mark.parametrize("timeout", [None, 0, -5])
def test_stage_watchdog_can_be_disabled(timeout: int | None) -> None:
    _, res = play([*HANDSHAKE, Tick(at_ms=10**9)], sess=new_session(stage_timeout_ms=timeout))
    assert res.finished is None
    assert not [c for c in res.controls if isinstance(c, SetDeadline)]


# -- cancellation ----------------------------------------------------------------------------------


@pytest.mark.rule("ACP-CANCEL-001", "ACP-UPDATE-TOOL-005")
def test_cancel_sends_a_notification_and_waits_for_the_cancelled_stop_reason() -> None:
    script: list[Step] = [
        *HANDSHAKE,
        Send(
            tool_call("c1", kind="execute", status="in_progress", rawInput={"command": "npm test"})
        ),
        Cancel(at_ms=50),
        EXPECT_CANCEL,
        # a late update for a tool flushed at cancel does not transcribe it again
        Send(tool_update("c1", status="completed", rawOutput="all tests passed")),
        Send(message("stopping")),
        Send(prompt_done(stop="cancelled"), at_ms=60),
    ]
    sess, res = play(script)
    cancel_frame = res.frames[3]
    assert "id" not in cancel_frame  # a notification (wire §A.1.2), not a request
    assert events_of(res, ToolUse, ToolResult) == [
        ToolUse(id="c1", name="Bash", input={"command": "npm test"}, started_at_ms=0),
        ToolResult(tool_use_id="c1", content="", is_error=True),
    ]
    # flushed by cancel() itself, before anything the agent sent afterwards
    assert res.events.index(ToolResult(tool_use_id="c1", content="", is_error=True)) < (
        res.events.index(TextDelta(delta="stopping"))
    )
    assert non_deadline(res.controls) == [
        CloseStdin(),
        Terminate(after_ms=GRACE),
        Finished(RunStatus.CANCELLED),
    ]
    assert SetDeadline(50 + CANCEL_GRACE, "acp-cancel-grace") in res.controls
    assert sess.state is SessionState.FINISHED


@pytest.mark.rule("ACP-CANCEL-001")
def test_cancel_race_with_a_normal_end_is_reported_as_stated() -> None:
    _, res = play([*HANDSHAKE, Cancel(), EXPECT_CANCEL, Send(prompt_done(stop="end_turn"))])
    assert finished(res).status is RunStatus.COMPLETED
    _, res = play(
        [*HANDSHAKE, Cancel(), EXPECT_CANCEL, Send(error(3, -32800, "Request cancelled"))]
    )
    assert finished(res).status is RunStatus.CANCELLED


@pytest.mark.rule("ACP-CANCEL-002")
def test_cancel_grace_expiry_terminates_at_once() -> None:
    script: list[Step] = [
        *HANDSHAKE,
        Send(tool_call("c2", kind="execute", status="pending")),
        Cancel(at_ms=100),
        EXPECT_CANCEL,
        Send(tool_call("c3", kind="read", status="pending")),
        Tick(at_ms=100 + CANCEL_GRACE - 1),
        Tick(at_ms=100 + CANCEL_GRACE),
        Send(prompt_done(stop="cancelled")),
    ]
    sess, res = play(script)
    assert non_deadline(res.controls) == [
        CloseStdin(),
        Terminate(after_ms=0),
        Finished(RunStatus.CANCELLED),
    ]
    assert [e.tool_use_id for e in events_of(res, ToolResult)] == ["c2", "c3"]
    assert all(e.is_error for e in events_of(res, ToolResult))
    assert sess.counters["lines_after_finish"] == 1


@pytest.mark.rule("ACP-CANCEL-003")
def test_cancel_is_idempotent_and_ends_at_once_before_the_prompt() -> None:
    _, res = play(
        [
            *HANDSHAKE,
            Cancel(),
            EXPECT_CANCEL,
            Cancel(),
            Cancel(),
            Send(prompt_done(stop="cancelled")),
            Cancel(),
        ]
    )
    assert [f.get("method") for f in res.frames].count("session/cancel") == 1
    assert finished(res).status is RunStatus.CANCELLED
    # Before session/new answered: no session to cancel, nothing to wait for.
    _, res = play([EXPECT_INIT, Cancel()])
    assert [f.get("method") for f in res.frames] == ["initialize"]
    assert non_deadline(res.controls) == [
        CloseStdin(),
        Terminate(after_ms=GRACE),
        Finished(RunStatus.CANCELLED),
    ]
    # Session known, model request in flight: the cancel notification, then done.
    script: list[Step] = [
        EXPECT_INIT,
        Send(result(1, init_result())),
        EXPECT_NEW,
        Send(result(2, {"sessionId": SID})),
        Expect({"method": "session/set_model"}),
        Cancel(),
        EXPECT_CANCEL,
    ]
    _, res = play(script, request(model="smart"))
    assert finished(res).status is RunStatus.CANCELLED


@pytest.mark.rule("ACP-CANCEL-001")
def test_end_of_output_while_cancelling_is_a_cancellation() -> None:
    _, res = play([*HANDSHAKE, Cancel(), EXPECT_CANCEL, Eof()])
    assert finished(res).status is RunStatus.CANCELLED


# -- framing ---------------------------------------------------------------------------------------


@pytest.mark.rule("ACP-FRAME-001")
def test_non_json_lines_are_counted_and_ignored() -> None:
    script: list[Step] = [
        Send(b"Loading model cache...\n"),
        EXPECT_INIT,
        Send(result(1, init_result())),
        EXPECT_NEW,
        Send(b"[SandboxDebug] ok\r\n\n"),
        Send(result(2, {"sessionId": SID})),
        expect_prompt(),
        Send(b"Model metadata for `mock-model` not found\n"),
        Send(prompt_done()),
    ]
    sess, res = play(script)
    assert sess.counters["non_json_lines"] == 3
    assert finished(res).status is RunStatus.COMPLETED


@pytest.mark.rule("ACP-FRAME-002")
def test_pretty_printed_response_is_reassembled() -> None:
    pretty = json.dumps(result(2, {"sessionId": SID}), indent=2).encode() + b"\n"
    script: list[Step] = [
        EXPECT_INIT,
        Send(result(1, init_result())),
        EXPECT_NEW,
        Send(pretty),
        expect_prompt(),
        Send(prompt_done()),
    ]
    sess, res = play(script)
    assert sess.counters["multiline_messages"] == 1 and sess.counters["non_json_lines"] == 0
    assert finished(res).status is RunStatus.COMPLETED


def big_commands_update(target_bytes: int) -> dict[str, Any]:
    commands = []
    size = 0
    index = 0
    while size < target_bytes:
        cmd = {
            "name": f"cmd-{index}",
            "description": "Run a project command. " * 20,
            "input": {"hint": "args"},
        }
        commands.append(cmd)
        size += len(json.dumps(cmd))
        index += 1
    return update({"sessionUpdate": "available_commands_update", "availableCommands": commands})


@pytest.mark.rule("ACP-FRAME-003", "ACP-UPDATE-STATUS-001")
def test_a_600_kb_update_line_is_processed() -> None:
    big = big_commands_update(600 * 1024)
    data = (json.dumps(big) + "\n").encode()
    assert len(data) > 600 * 1024
    sess, res = play(
        [*HANDSHAKE, Send(data), Send(message("ok")), Send(prompt_done())], chunk_size=64 * 1024
    )
    assert [e.delta for e in events_of(res, TextDelta)] == ["ok"]
    assert sess.counters["schema_violations"] == 0
    assert finished(res).status is RunStatus.COMPLETED
    assert DEFAULT_MAX_LINE_BYTES == 16 * 1024 * 1024


@pytest.mark.rule("ACP-FRAME-003")
def test_a_line_over_the_limit_fails_the_run() -> None:
    data = (json.dumps(big_commands_update(5000)) + "\n").encode()
    _, res = play([*HANDSHAKE, Send(data)], sess=new_session(max_line_bytes=4096))
    code, message, rule = failure(res)
    assert (code, rule) == ("ACP_FRAME_TOO_LARGE", "ACP-FRAME-003")
    assert f"{len(data) - 1}-byte line" in message and "4096" in message


# -- schema --------------------------------------------------------------------------------------


@pytest.mark.rule("ACP-SCHEMA-002")
def test_incoming_violations_are_reported_not_fatal() -> None:
    script: list[Step] = [
        *HANDSHAKE,
        Send({"id": 77, "result": {}}),  # no jsonrpc member, answers nothing
        Send(update({"sessionUpdate": "agent_message_chunk"})),  # no content
        Send(message("fine")),
        Send(result(3, {"stopReason": "finished"})),  # not a StopReason
    ]
    sess, res = play(script)
    violations = [e for e in res.events if isinstance(e, Status) and e.label == "schema_violation"]
    assert len(violations) == 3 == sess.counters["schema_violations"]
    assert all(v.detail for v in violations)
    assert 'jsonrpc must be "2.0"' in (violations[0].detail or "")
    assert finished(res).status is RunStatus.COMPLETED
    assert events_of(res, Usage)[0].stop_reason == "finished"


@pytest.mark.rule("ACP-SCHEMA-001")
def test_an_invalid_outgoing_frame_is_a_local_protocol_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = acp_schema.validate_outgoing

    def reject(frame: Any, *args: Any, **kwargs: Any) -> list[str]:
        if frame.get("method") == "initialize":
            return ["params: made invalid by the test"]
        return real(frame, *args, **kwargs)

    monkeypatch.setattr("harness.protocols.acp.context.validate_outgoing", reject)
    with pytest.raises(LocalProtocolError, match="invalid initialize frame: params: made invalid"):
        AcpSession().start(request(), 0)


@pytest.mark.rule("ACP-SCHEMA-001")
def test_host_misuse_is_a_local_protocol_error() -> None:
    sess = new_session()
    with pytest.raises(LocalProtocolError):
        sess.receive(b"{}\n", 0)
    with pytest.raises(LocalProtocolError):
        sess.cancel(0)
    sess.start(request(), 0)
    with pytest.raises(LocalProtocolError):
        sess.start(request(), 0)
    sess.end_of_output(1)
    with pytest.raises(LocalProtocolError):
        sess.receive(b"{}\n", 2)


# -- definitions are data ----------------------------------------------------------------


ACP_DEFS = [d for d in BUILTIN_DEFS if d.stream_format == "acp-json-rpc"]


@pytest.mark.rule("ACP-DEF-001")
@pytest.mark.parametrize("defn", ACP_DEFS, ids=[d.id for d in ACP_DEFS])
def test_from_def_reads_the_def_fields(defn: Any) -> None:
    sess = AcpSession.from_def(defn, stage_timeout_ms=5)
    assert sess.config.env_format is defn.acp.mcp_env_format
    assert sess.config.stdio_mcp_removed_in_version == defn.acp.stdio_mcp_removed_in_version
    assert sess.config.turn_end_completes_prompt is defn.acp.turn_end_completes_prompt
    assert sess.config.stage_timeout == 5


@pytest.mark.rule("ACP-DEF-001")
def test_from_def_refuses_other_formats_and_no_agent_id_appears_in_the_session() -> None:
    other = next(d for d in BUILTIN_DEFS if d.stream_format != "acp-json-rpc")
    with pytest.raises(ValueError, match="not 'acp-json-rpc'"):
        AcpSession.from_def(other)
    assert {d.acp.mcp_env_format for d in ACP_DEFS} == {AcpEnvFormat.ARRAY, AcpEnvFormat.MAP}
    root = Path(__file__).resolve().parents[2] / "harness" / "protocols"
    files = [*sorted((root / "acp").glob("*.py")), root / "jsonrpc.py"]
    sources = "".join(p.read_text(encoding="utf-8") for p in files)
    for defn in BUILTIN_DEFS:
        assert f'"{defn.id}"' not in sources and f"'{defn.id}'" not in sources, defn.id


# -- chunking and robustness -------------------------------------------------------------


def transcript(*items: Any) -> bytes:
    return b"".join(i if isinstance(i, bytes) else (json.dumps(i) + "\n").encode() for i in items)


FULL_TURN = transcript(
    b"agent v1 starting\n",
    result(1, init_result()),
    result(2, {"sessionId": SID}),
    thought("Plan"),
    message("Hel"),
    message("Hello"),
    message(" w\u00f6rld \u2028"),
    json.dumps(
        tool_call("t1", kind="edit", status="pending", rawInput={"path": "a.html"}), indent=2
    ).encode()
    + b"\n",
    permission("p-9", [option("always", "allow_always")]),
    tool_update(
        "t1", status="completed", content=[{"type": "diff", "path": "/w/a.html", "newText": "<p>"}]
    ),
    {
        "jsonrpc": "2.0",
        "id": "f-1",
        "method": "fs/read_text_file",
        "params": {"sessionId": SID, "path": "/w/a"},
    },
    update(
        {
            "sessionUpdate": "plan",
            "entries": [{"content": "x", "priority": "high", "status": "pending"}],
        }
    ),
    b"noise\n",
    prompt_done(usage={"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}),
)


def feed(
    chunks: Sequence[bytes], *, cancel_after: int | None = None
) -> tuple[list[Any], list[Any], list[Control]]:
    sess = new_session()
    out = Actions()
    out.extend(sess.start(request(), 0))
    for index, chunk in enumerate(chunks):
        if cancel_after is not None and index == cancel_after:
            out.extend(sess.cancel(1))
        out.extend(sess.receive(chunk, 1))
    out.extend(sess.end_of_output(2))
    frames = [json.loads(f) for f in out.frames]
    answered = _agent_requests([Send(b"".join(chunks))])
    for frame in frames:
        assert_frame_valid(frame, answered)
    return [e.to_json() for e in out.events], frames, out.controls


@pytest.mark.rule("ACP-CHUNK-001")
def test_full_turn_reference_output() -> None:
    events, frames, controls = feed([FULL_TURN])
    assert [f.get("method", f.get("result", f.get("error"))) for f in frames] == [
        "initialize",
        "session/new",
        "session/prompt",
        {"outcome": {"outcome": "selected", "optionId": "always"}},
        {"code": -32601, "message": "Method not found: fs/read_text_file"},
    ]
    texts = [e["delta"] for e in events if e["type"] == "text_delta"]
    assert texts == ["Hel", "lo", " w\u00f6rld \u2028"]
    assert [e["type"] for e in events if e["type"].startswith("tool")] == [
        "tool_use",
        "tool_result",
    ]
    assert controls[-1] == Finished(RunStatus.COMPLETED)


@pytest.mark.rule("ACP-CHUNK-001")
@settings(max_examples=40, deadline=None)
@given(cuts=cut_points())
def test_any_chunking_gives_identical_output(cuts: list[int]) -> None:
    whole = feed([FULL_TURN])
    assert feed(split_at(FULL_TURN, cuts)) == whole


@pytest.mark.rule("ACP-CHUNK-001")
def test_byte_by_byte_gives_identical_output() -> None:
    assert feed([FULL_TURN[i : i + 1] for i in range(len(FULL_TURN))]) == feed([FULL_TURN])


@pytest.mark.rule("ACP-CHUNK-001")
@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7, 64, 4096])
def test_run_script_chunk_sizes_give_identical_output(chunk_size: int) -> None:
    script: list[Step] = [
        *HANDSHAKE,
        Send(thought("Plan")),
        Send(message("Hi")),
        Send(permission(5, [option("once", "allow_once")])),
        expect_reply(5, {"outcome": {"outcome": "selected", "optionId": "once"}}),
        Send(tool_call("t", kind="search", status="completed", rawOutput={"hits": 2})),
        Send(prompt_done()),
    ]
    _, whole = play(script)
    _, chunked = play(script, chunk_size=chunk_size)
    assert chunked.events_json() == whole.events_json()
    assert chunked.frames == whole.frames and chunked.controls == whole.controls


@pytest.mark.rule("ACP-CHUNK-001", "ACP-CANCEL-001")
@settings(max_examples=30, deadline=None)
@given(cuts=cut_points())
def test_chunking_does_not_change_a_cancelled_run(cuts: list[int]) -> None:
    head = transcript(result(1, init_result()), result(2, {"sessionId": SID}), thought("x"))
    tail = transcript(message("y"), prompt_done(stop="cancelled"))
    whole = feed([head, tail], cancel_after=1)
    parts_head, parts_tail = split_at(head, cuts), split_at(tail, cuts)
    assert feed([*parts_head, *parts_tail], cancel_after=len(parts_head)) == whole


def _one_finish(controls: list[Control]) -> bool:
    done = [c for c in controls if isinstance(c, Finished)]
    return len(done) == 1 and controls[-1] is done[0]


@pytest.mark.rule("ACP-ROBUST-001")
@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=8), st.sampled_from([0, 1, 2]))
def test_arbitrary_bytes_never_raise(chunks: list[bytes], stage: int) -> None:
    sess = new_session(max_line_bytes=256)
    out = Actions()
    out.extend(sess.start(request(), 0))
    prefix = [result(1, init_result()), result(2, {"sessionId": SID})][:stage]
    out.extend(sess.receive(transcript(*prefix), 0))
    for chunk in chunks:
        out.extend(sess.receive(chunk, 1))
    out.extend(sess.end_of_output(2))
    assert sess.state is SessionState.FINISHED and _one_finish(out.controls)
    for frame in out.frames:
        assert_frame_valid(json.loads(frame), {})


agent_frames = st.sampled_from(
    [
        result(1, init_result(load=True)),
        result(2, {"sessionId": SID}),
        result(3, {"stopReason": "end_turn"}),
        result(3, {"stopReason": "cancelled"}),
        error(3, -32603, "x"),
        error(2, -32000, "auth"),
        message("m"),
        thought("t"),
        tool_call("a", kind="edit", status="completed"),
        tool_update("a", status="failed"),
        permission("p", [option("o", "allow_once")]),
        permission(4, []),
        {"jsonrpc": "2.0", "id": 9, "method": "terminal/output", "params": {}},
        update({"sessionUpdate": "turn_end"}),
        update({"sessionUpdate": "plan", "entries": []}),
        [1, 2],
        "str",
    ]
)


json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=6)
json_any = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
random_updates = st.builds(
    lambda kind, extra: update({"sessionUpdate": kind, **extra}),
    json_any | st.sampled_from(["tool_call", "agent_message_chunk", "turn_end", "plan"]),
    st.dictionaries(
        st.sampled_from(
            ["content", "toolCallId", "status", "kind", "rawInput", "locations", "title"]
        ),
        json_any,
        max_size=4,
    ),
)
random_messages = st.builds(
    lambda rid, key, value: {"jsonrpc": "2.0", "id": rid, key: value},
    json_any,
    st.sampled_from(["result", "error", "method"]),
    json_any,
)


@pytest.mark.rule("ACP-ROBUST-001")
@fuzz_sized(150)
@given(
    st.lists(agent_frames | random_updates | random_messages | st.binary(max_size=16), max_size=10),
    st.booleans(),
    st.booleans(),
)
def test_arbitrary_frame_sequences_end_in_exactly_one_finish(
    items: list[Any], cancel: bool, turn_end: bool
) -> None:
    sess = new_session(turn_end_completes_prompt=turn_end)
    out = Actions()
    out.extend(sess.start(request(model="smart"), 0))
    half = len(items) // 2
    out.extend(sess.receive(transcript(*items[:half]), 1))
    if cancel:
        out.extend(sess.cancel(2))
    out.extend(sess.receive(transcript(*items[half:]), 3))
    out.extend(sess.tick(10**9))
    out.extend(sess.end_of_output(10**9 + 1))
    assert _one_finish(out.controls)
    for event in out.events:
        assert EVENT_SCHEMA.is_valid(event.to_json())
    answered = {
        i["id"]: i["method"]
        for i in items
        if isinstance(i, dict) and "method" in i and isinstance(i.get("id"), (int, str))
    }
    for frame in out.frames:
        assert_frame_valid(json.loads(frame), answered)
