"""The dsh-profile-jsonl session, driven by a scripted peer (harness.protocols.peer).

One test per strictness rule of seed 001 §6 and per lifecycle rule of seed 001 §7/§10;
event mapping of seed 001 §9 and ref §2.8; security of seed 001 §14. Every runtime frame
sent here is checked against ``dsh-profile-v1.schema.json`` (valid ones must pass, broken
ones must fail), every frame the session writes is checked against it too, and every
event against ``events.schema.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.events import (
    Error,
    Event,
    Status,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolResult,
    ToolUse,
    Usage,
)
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
from harness.protocols.dsh import PEER_MESSAGE_LIMIT, DshProfileSession
from harness.protocols.dsh_frames import DshRequestError, schema_for
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

RUNTIME_SCHEMA = jsonschema.Draft202012Validator(schema_for("runtime"))
HOST_SCHEMA = jsonschema.Draft202012Validator(schema_for("host"))
EVENT_SCHEMA = jsonschema.Draft202012Validator(load_schema("events.schema.json"))

RID = "run-7"
SID = "sess-1f2e"
CWD = "/work/project"
PROMPT = "Design a pricing page"
SECRET = "SECRET-PROMPT-9c1d"
CANCEL_GRACE = 500
TERMINATE_GRACE = 250

READY: dict[str, Any] = {
    "v": 1,
    "type": "ready",
    "runtime": "open-design",
    "protocol_version": 1,
    "plugin_version": "0.1.0",
    "compatibility_generation": "od-1",
    "capabilities": {"session_resume": True, "session_cancel": True, "structured_events": True},
}


# -- frames, written by hand from seed 001 §6 / ref §2.8 --------------------------


def valid(frame: dict[str, Any]) -> dict[str, Any]:
    """A runtime frame the test means to be valid: the schema must agree."""
    errors = [e.message for e in RUNTIME_SCHEMA.iter_errors(frame)]
    assert not errors, f"test frame is not schema-valid: {frame!r}: {errors}"
    return frame


def broken(frame: dict[str, Any]) -> dict[str, Any]:
    """A runtime frame the test means to be invalid: the schema must reject it too."""
    assert not RUNTIME_SCHEMA.is_valid(frame), f"schema accepts a broken frame: {frame!r}"
    return frame


def session(sid: str = SID, *, resumed: bool = False, rid: str = RID) -> dict[str, Any]:
    return valid(
        {"v": 1, "type": "session", "request_id": rid, "session_id": sid, "resumed": resumed}
    )


def text(content: str, *, rid: str = RID) -> dict[str, Any]:
    return valid({"v": 1, "type": "text", "request_id": rid, "content": content})


def thinking(content: str, *, rid: str = RID) -> dict[str, Any]:
    return valid({"v": 1, "type": "thinking", "request_id": rid, "content": content})


def tool_call(call_id: str, name: str, arguments: str, *, rid: str = RID) -> dict[str, Any]:
    return valid(
        {
            "v": 1,
            "type": "tool_call",
            "request_id": rid,
            "call_id": call_id,
            "name": name,
            "arguments": arguments,
        }
    )


def tool_result(call_id: str, output: str, *, is_error: bool = False) -> dict[str, Any]:
    return valid(
        {
            "v": 1,
            "type": "tool_result",
            "request_id": RID,
            "call_id": call_id,
            "name": "write_file",
            "output": output,
            "is_error": is_error,
        }
    )


def usage(**extra: Any) -> dict[str, Any]:
    frame = {
        "v": 1,
        "type": "usage",
        "request_id": RID,
        "provider": "deepseek-official",
        "model": "deepseek-v4",
        "input_tokens": 120,
        "output_tokens": 30,
    }
    return valid({**frame, **extra})


def result(status: str = "completed", sid: str = SID, **extra: Any) -> dict[str, Any]:
    frame = {
        "v": 1,
        "type": "result",
        "request_id": extra.pop("rid", RID),
        "status": status,
        "session_id": sid,
        "resume_rejected": False,
    }
    return valid({**frame, **extra})


def protocol_error(code: str = "DSH_PROFILE_BAD_COMMAND", **extra: Any) -> dict[str, Any]:
    return valid(
        {"v": 1, "type": "protocol_error", "code": code, "message": "bad command", **extra}
    )


def request(**kwargs: Any) -> SessionRequest:
    base: dict[str, Any] = {"prompt": PROMPT, "cwd": CWD, "request_id": RID}
    base.update(kwargs)
    return SessionRequest(**base)


EXECUTE = Expect({"v": 1, "type": "execute", "request_id": RID}, "execute")
CANCEL = Expect({"v": 1, "type": "cancel", "request_id": RID}, "cancel")


# -- running ------------------------------------------------------------------------


def new_session(**kwargs: Any) -> DshProfileSession:
    kwargs.setdefault("cancel_grace_ms", CANCEL_GRACE)
    kwargs.setdefault("terminate_grace_ms", TERMINATE_GRACE)
    return DshProfileSession(**kwargs)


def check(res: ScriptResult) -> ScriptResult:
    for frame in res.frames:
        errors = [e.message for e in HOST_SCHEMA.iter_errors(frame)]
        assert not errors, f"session wrote a frame the schema rejects: {frame!r}: {errors}"
    for event in res.events_json():
        assert EVENT_SCHEMA.is_valid(event), event
    finished = [c for c in res.controls if isinstance(c, Finished)]
    assert len(finished) <= 1, f"more than one Finished: {res.controls}"
    return res


def play(
    script: Sequence[Step],
    req: SessionRequest | None = None,
    *,
    sess: DshProfileSession | None = None,
    chunk_size: int | None = None,
) -> tuple[DshProfileSession, ScriptResult]:
    sess = sess or new_session()
    res = run_script(sess, req or request(), script, chunk_size=chunk_size)
    return sess, check(res)


def state_of(sess: DshProfileSession) -> SessionState:
    """``sess.state`` without mypy narrowing it across calls that change it."""
    return sess.state


def failure(res: ScriptResult) -> tuple[str, str, str | None]:
    done = res.finished
    assert done is not None, "the run did not finish"
    assert done.status is RunStatus.FAILED, f"expected a failure, got {done}"
    assert done.error is not None
    assert done.error.line is None
    return done.error.code, done.error.message, done.error.rule


def status(res: ScriptResult) -> RunStatus:
    done = res.finished
    assert done is not None, "the run did not finish"
    return done.status


HANDSHAKE: list[Step] = [Send(READY), EXECUTE]
OPEN: list[Step] = [*HANDSHAKE, Send(session())]


# -- the whole run --------------------------------------------------------------------


@pytest.mark.rule(
    "DSH-EVENT-SESSION-001",
    "DSH-EVENT-THINKING-001",
    "DSH-EVENT-TEXT-001",
    "DSH-EVENT-TOOL-001",
    "DSH-EVENT-USAGE-001",
    "DSH-EVENT-COMPLETE-001",
    "DSH-SCHEMA-001",
)
def test_first_run_maps_every_frame_to_its_event() -> None:
    sess, res = play(
        [
            *HANDSHAKE,
            Send(session()),
            Send(thinking("Plan the layout.")),
            Send(text("I'll create index.html.")),
            Send(tool_call("call-1", "write_file", '{"path": "index.html"}')),
            Send(tool_result("call-1", "wrote 1 file")),
            Send(usage(cache_read_tokens=7)),
            Send(result(stop_reason="end_turn", output="done")),
            Eof(),
        ]
    )
    assert res.events == [
        Status(label="working", session_id=SID),
        ThinkingStart(),
        ThinkingDelta(delta="Plan the layout."),
        ThinkingEnd(),
        TextDelta(delta="I'll create index.html."),
        ToolUse(id="call-1", name="write_file", input={"path": "index.html"}),
        ToolResult(tool_use_id="call-1", content="wrote 1 file", is_error=False),
        Usage(
            provider="deepseek-official",
            model="deepseek-v4",
            usage={
                "input_tokens": 120,
                "output_tokens": 30,
                "cached_read_tokens": 7,
                "cached_write_tokens": 0,
                "total_tokens": 150,
            },
        ),
    ]
    assert res.controls == [CloseStdin(), Finished(RunStatus.COMPLETED)]
    assert res.frames == [
        {
            "v": 1,
            "type": "execute",
            "request_id": RID,
            "cwd": CWD,
            "prompt": PROMPT,
            "mcp_servers": [],
        }
    ]
    assert state_of(sess) is SessionState.FINISHED and sess.status is RunStatus.COMPLETED
    assert sess.session_id == SID and sess.error is None
    assert sess.plugin_version == "0.1.0" and sess.compatibility_generation == "od-1"
    assert sess.counters["frames"] == 8


# -- handshake -------------------------------------------------------------------


@pytest.mark.rule("DSH-READY-001")
def test_nothing_is_written_before_ready() -> None:
    sess = new_session()
    assert sess.counters["frames"] == 0 and not sess.execute_sent
    started = sess.start(request(), 0)
    assert started.frames == [] and started.controls == [] and started.events == []
    assert state_of(sess) is SessionState.HANDSHAKE and not sess.execute_sent
    partial = sess.receive(json.dumps(READY).encode(), 1)  # no newline yet: not a frame yet
    assert partial.frames == []
    done = sess.receive(b"\n", 2)
    assert len(done.frames) == 1 and json.loads(done.frames[0])["type"] == "execute"
    assert state_of(sess) is SessionState.RUNNING and sess.execute_sent


@pytest.mark.rule("DSH-READY-001")
@pytest.mark.parametrize(
    "first",
    [
        session(),
        text("hi"),
        result(),
        protocol_error(),
        valid({**READY, "type": "probe"}),
        session(rid="someone-else"),
    ],
    ids=["session", "text", "result", "protocol_error", "probe", "foreign"],
)
def test_session_must_begin_with_ready(first: dict[str, Any]) -> None:
    sess, res = play([Send(first), Send(READY)])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_PROTOCOL_ERROR", "DSH-READY-001")
    assert "did not begin with a ready frame" in message
    assert res.frames == [] and not sess.execute_sent


@pytest.mark.rule("DSH-READY-002")
@pytest.mark.parametrize(
    ("ready", "field"),
    [
        ({**READY, "runtime": "multica"}, "runtime"),
        ({**READY, "protocol_version": 2}, "protocol_version"),
        ({**READY, "plugin_version": ""}, "plugin_version"),
        ({**READY, "compatibility_generation": "has space"}, "compatibility_generation"),
        (
            {**READY, "capabilities": {**READY["capabilities"], "session_cancel": False}},
            "session_cancel",
        ),
    ],
)
def test_ready_is_validated_like_the_probe(ready: dict[str, Any], field: str) -> None:
    _, res = play([Send(broken(ready))])
    code, message, rule = failure(res)
    assert code == "DSH_PROFILE_INVALID_FRAME" and rule == "DSH-FRAME-INVALID-001"
    assert f"invalid frame: {field}" in message or f"capabilities.{field}" in message
    assert res.frames == []


@pytest.mark.rule("DSH-READY-003")
@pytest.mark.parametrize("kind", ["ready", "probe"])
def test_identity_frame_after_the_handshake_is_fatal(kind: str) -> None:
    _, res = play([*OPEN, Send(valid({**READY, "type": kind})), Send(result())])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_PROTOCOL_ERROR", "DSH-READY-003")
    assert "unexpected identity frame" in message


# -- execute -------------------------------------------------------------------------


@pytest.mark.rule("DSH-EXEC-001")
def test_execute_is_written_once_with_the_documented_fields() -> None:
    server = {"name": "fs", "type": "stdio", "command": "mcp-fs", "args": []}
    req = request(
        resume_session_id=SID,
        model="deepseek-official/deepseek-v4-pro",
        reasoning="max",
        mcp_servers=[server],
    )
    _, res = play(
        [
            Send(READY),
            Expect(
                {
                    "v": 1,
                    "type": "execute",
                    "request_id": RID,
                    "cwd": CWD,
                    "prompt": PROMPT,
                    "resume_session_id": SID,
                    "model": {"provider": "deepseek-official", "id": "deepseek-v4-pro"},
                    "reasoning_effort": "max",
                    "mcp_servers": [server],
                }
            ),
            Send(session(resumed=True)),
            Send(text("ok")),
            Send(result()),
        ],
        req,
    )
    assert [f["type"] for f in res.frames] == ["execute"]
    assert status(res) is RunStatus.COMPLETED


@pytest.mark.rule("DSH-EXEC-001")
def test_first_run_execute_has_no_resume_model_or_reasoning_keys() -> None:
    _, res = play([*HANDSHAKE], request(model="default", reasoning=""))
    assert set(res.frames[0]) == {"v", "type", "request_id", "cwd", "prompt", "mcp_servers"}


@pytest.mark.rule("DSH-EXEC-001", "DSH-EXEC-MODEL-001")
@pytest.mark.parametrize(
    ("kwargs", "rule"),
    [
        ({"model": "deepseek-v4"}, "DSH-EXEC-MODEL-001"),
        ({"model": "provider/"}, "DSH-EXEC-MODEL-001"),
        ({"cwd": "relative/dir"}, "DSH-EXEC-001"),
    ],
)
def test_bad_request_is_a_typed_error_from_start(kwargs: dict[str, Any], rule: str) -> None:
    sess = new_session()
    with pytest.raises(DshRequestError) as info:
        sess.start(request(prompt=SECRET, **kwargs), 0)
    assert info.value.rule == rule and SECRET not in str(info.value)
    assert state_of(sess) is SessionState.NEW
    good = sess.start(request(), 0)  # the failed start changed nothing
    assert good.frames == []


# -- request ownership ---------------------------------------------------------------


@pytest.mark.rule("DSH-REQID-001")
def test_frames_for_another_request_are_ignored_and_counted() -> None:
    other = "run-other"
    sess, res = play(
        [
            *HANDSHAKE,
            Send(session("sess-other", rid=other)),
            Send(session()),
            Send(text("not ours", rid=other)),
            Send(thinking("not ours", rid=other)),
            Send(tool_call("c9", "shell", "{}", rid=other)),
            Send(protocol_error(request_id=other)),
            Send(result("failed", "sess-other", rid=other, error={"code": "X", "message": "y"})),
            Send(result("cancelled", rid=other)),
            Send(text("ours")),
            Send(result()),
        ]
    )
    assert res.events == [Status(label="working", session_id=SID), TextDelta(delta="ours")]
    assert status(res) is RunStatus.COMPLETED
    assert sess.counters["ignored_foreign_frames"] == 7
    assert sess.session_id == SID


@pytest.mark.rule("DSH-REQID-002")
@pytest.mark.parametrize("kind", ["session", "text", "result"])
def test_run_scoped_frame_without_request_id_is_invalid(kind: str) -> None:
    frame = {"session": session(), "text": text("x"), "result": result()}[kind]
    missing = broken({k: v for k, v in frame.items() if k != "request_id"})
    _, res = play([*OPEN, Send(missing)] if kind != "session" else [*HANDSHAKE, Send(missing)])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_INVALID_FRAME", "DSH-REQID-002")
    assert "request_id must be a non-empty string" in message


# -- session order ---------------------------------------------------------------------


@pytest.mark.rule("DSH-SESSION-ORDER-001")
@pytest.mark.parametrize(
    "frame",
    [
        thinking("t"),
        text("t"),
        tool_call("c1", "read", "{}"),
        tool_result("c1", "out"),
        usage(),
        result(),
    ],
    ids=["thinking", "text", "tool_call", "tool_result", "usage", "completed-result"],
)
def test_session_must_arrive_before_content(frame: dict[str, Any]) -> None:
    _, res = play([*HANDSHAKE, Send(frame), Send(session())])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_PROTOCOL_ERROR", "DSH-SESSION-ORDER-001")
    assert "before establishing a session" in message
    assert res.events == []


@pytest.mark.rule("DSH-SESSION-ONCE-001")
def test_second_session_frame_is_fatal() -> None:
    _, res = play([*OPEN, Send(session()), Send(result())])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_PROTOCOL_ERROR", "DSH-SESSION-ONCE-001")
    assert "more than one session frame" in message
    assert res.events == [Status(label="working", session_id=SID)]


# -- resume ------------------------------------------------------------------------------


@pytest.mark.rule("DSH-RESUME-001")
def test_resume_succeeds_with_the_same_id_and_resumed_true() -> None:
    sess, res = play(
        [*HANDSHAKE, Send(session(resumed=True)), Send(result())], request(resume_session_id=SID)
    )
    assert status(res) is RunStatus.COMPLETED and sess.session_id == SID


@pytest.mark.rule("DSH-RESUME-001", "DSH-RESUME-002")
@pytest.mark.parametrize(
    "frame",
    [session(resumed=False), session("sess-new", resumed=True), session("sess-new")],
    ids=["not-resumed", "other-id", "silently-new"],
)
def test_resume_must_return_the_requested_session(frame: dict[str, Any]) -> None:
    sess, res = play([*HANDSHAKE, Send(frame), Send(result())], request(resume_session_id=SID))
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_RESUME_MISMATCH", "DSH-RESUME-001")
    assert "resumed a different session" in message
    assert sess.session_id is None and res.events == []


@pytest.mark.rule("DSH-RESUME-002", "DSH-SEC-001")
@pytest.mark.parametrize("before_session", [True, False])
def test_rejected_resume_fails_and_never_becomes_a_new_session(before_session: bool) -> None:
    rejected = result(
        "failed",
        resume_rejected=True,
        error={"code": "DSH_SESSION_NOT_FOUND", "message": f"no file /home/u/{SECRET}"},
    )
    steps: list[Step] = [*HANDSHAKE]
    if not before_session:
        steps.append(Send(session(resumed=True)))
    sess, res = play([*steps, Send(rejected)], request(resume_session_id=SID))
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_RESUME_REJECTED", "DSH-RESUME-002")
    assert "could not resume the saved session" in message and SECRET not in message
    if before_session:
        assert sess.session_id is None and res.events == []


@pytest.mark.rule("DSH-RESUME-002")
def test_rejection_naming_another_session_is_a_mismatch() -> None:
    rejected = result(
        "failed", "sess-else", resume_rejected=True, error={"code": "X", "message": "y"}
    )
    _, res = play([*HANDSHAKE, Send(rejected)], request(resume_session_id=SID))
    assert failure(res)[0] == "DSH_PROFILE_RESUME_MISMATCH"


@pytest.mark.rule("DSH-RESUME-003")
def test_resumed_true_without_a_resume_request_is_fatal() -> None:
    sess, res = play([*HANDSHAKE, Send(session(resumed=True)), Send(result())])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_PROTOCOL_ERROR", "DSH-RESUME-003")
    assert "unexpected resumed session" in message and sess.session_id is None


@pytest.mark.rule("DSH-RESUME-004")
def test_resume_rejected_without_a_resume_request_is_fatal() -> None:
    _, res = play([*OPEN, Send(result(resume_rejected=True))])
    code, _, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_PROTOCOL_ERROR", "DSH-RESUME-004")


# -- terminal result ---------------------------------------------------------------------


@pytest.mark.rule("DSH-RESULT-ONCE-001")
def test_output_after_the_result_is_counted_and_reported_once() -> None:
    sess, res = play(
        [*OPEN, Send(result()), Send(result()), Send(text("late")), Send(b"garbage\n"), Eof()]
    )
    assert res.controls == [CloseStdin(), Finished(RunStatus.COMPLETED)]
    errors = [e for e in res.events if isinstance(e, Error)]
    assert len(errors) == 1
    assert errors[0].code == "DSH_PROFILE_FRAME_AFTER_RESULT"
    assert "DSH-RESULT-ONCE-001" in errors[0].message
    assert not any(isinstance(e, TextDelta) for e in res.events)
    assert sess.counters["frames_after_result"] == 3
    assert sess.status is RunStatus.COMPLETED


@pytest.mark.rule("DSH-RESULT-ONCE-001")
def test_unterminated_output_after_the_result_is_counted_at_eof() -> None:
    sess, res = play([*OPEN, Send(result()), Send(b'{"v":1'), Eof()])
    assert sess.counters["frames_after_result"] == 1
    assert [e.type for e in res.events].count("error") == 1


@pytest.mark.rule("DSH-RESULT-MISSING-001")
@pytest.mark.parametrize(
    "steps",
    [[], [*HANDSHAKE], [*OPEN, Send(text("all done"))], [*OPEN, Send(b"\n\n")]],
    ids=["before-ready", "after-execute", "text-only", "blank-lines"],
)
def test_eof_without_a_terminal_result_fails(steps: list[Step]) -> None:
    _, res = play([*steps, Eof()])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_MISSING_RESULT", "DSH-RESULT-MISSING-001")
    assert "without a terminal result" in message


@pytest.mark.rule("DSH-RESULT-SESSION-001")
def test_result_must_keep_the_session_id() -> None:
    _, res = play([*OPEN, Send(result(sid="sess-other"))])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_SESSION_MISMATCH", "DSH-RESULT-SESSION-001")
    assert "changed the session id" in message


@pytest.mark.rule("DSH-RESULT-FAILED-001")
@pytest.mark.parametrize("with_session", [True, False])
def test_failed_result_fails_the_run_with_its_error(with_session: bool) -> None:
    error = {"code": "DSH_AUTH_REQUIRED", "message": "DEEPSEEK_API_KEY is not configured"}
    steps = [*OPEN] if with_session else [*HANDSHAKE]
    sess, res = play([*steps, Send(result("failed", error=error))])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_AUTH_REQUIRED", "DSH-RESULT-FAILED-001")
    assert message.endswith("DEEPSEEK_API_KEY is not configured")
    assert sess.error is not None and sess.error.code == code


@pytest.mark.rule("DSH-RESULT-FAILED-001", "DSH-SEC-001")
def test_runtime_error_message_is_bounded() -> None:
    error = {"code": "E", "message": "x" * PEER_MESSAGE_LIMIT + SECRET}
    _, res = play([*OPEN, Send(result("failed", error=error))])
    _, message, _ = failure(res)
    assert "x" * PEER_MESSAGE_LIMIT in message and SECRET[:1] not in message.rsplit("x", 1)[1]


@pytest.mark.rule("DSH-RESULT-FAILED-001")
def test_failed_result_without_error_is_an_invalid_frame() -> None:
    frame = broken(
        {
            "v": 1,
            "type": "result",
            "request_id": RID,
            "status": "failed",
            "session_id": SID,
            "resume_rejected": False,
        }
    )
    _, res = play([*OPEN, Send(frame)])
    code, message, _ = failure(res)
    assert code == "DSH_PROFILE_INVALID_FRAME" and "error is required" in message


@pytest.mark.rule("DSH-RESULT-CANCELLED-001")
@pytest.mark.parametrize("with_session", [True, False])
def test_cancelled_result_without_our_cancel_is_fatal(with_session: bool) -> None:
    steps = [*OPEN] if with_session else [*HANDSHAKE]
    _, res = play([*steps, Send(result("cancelled"))])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_PROTOCOL_ERROR", "DSH-RESULT-CANCELLED-001")
    assert "did not cancel" in message


@pytest.mark.rule("DSH-PROTOCOL-ERROR-001")
@pytest.mark.parametrize("scoped", [True, False])
def test_protocol_error_is_fatal_with_its_code(scoped: bool) -> None:
    frame = protocol_error(
        "DSH_PROFILE_UNSUPPORTED_COMMAND", **({"request_id": RID} if scoped else {})
    )
    _, res = play([*OPEN, Send(frame), Send(result())])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_UNSUPPORTED_COMMAND", "DSH-PROTOCOL-ERROR-001")
    assert "reported a protocol error" in message


# -- event normalization ---------------------------------------------------------------


@pytest.mark.rule("DSH-EVENT-THINKING-001")
def test_thinking_starts_once_skips_empty_deltas_and_ends_before_finish() -> None:
    _, res = play(
        [
            *OPEN,
            Send(thinking("")),
            Send(thinking("a")),
            Send(thinking("")),
            Send(thinking("b")),
            Send(result()),
        ]
    )
    assert res.events[1:] == [
        ThinkingStart(),
        ThinkingDelta(delta="a"),
        ThinkingDelta(delta="b"),
        ThinkingEnd(),
    ]


@pytest.mark.rule("DSH-EVENT-THINKING-001")
@pytest.mark.parametrize(
    ("follower", "events"),
    [
        (text("answer"), [TextDelta(delta="answer")]),
        (text(""), []),
        (tool_call("c1", "shell", "{}"), [ToolUse(id="c1", name="shell", input={})]),
        (tool_result("c1", "ok"), [ToolResult(tool_use_id="c1", content="ok", is_error=False)]),
    ],
    ids=["text", "empty-text", "tool_call", "tool_result"],
)
def test_thinking_ends_where_a_frame_of_another_kind_follows(
    follower: dict[str, Any], events: list[Event]
) -> None:
    _, res = play([*OPEN, Send(thinking("plan")), Send(follower), Send(result())])
    assert res.events[1:] == [ThinkingStart(), ThinkingDelta(delta="plan"), ThinkingEnd(), *events]


@pytest.mark.rule("DSH-EVENT-THINKING-001")
def test_thinking_ends_before_usage_and_after_it_nothing_is_left_to_close() -> None:
    _, res = play([*OPEN, Send(thinking("plan")), Send(usage()), Send(result())])
    kinds = [type(e) for e in res.events[1:]]
    assert kinds == [ThinkingStart, ThinkingDelta, ThinkingEnd, Usage]


@pytest.mark.rule("DSH-EVENT-THINKING-001")
def test_thinking_after_other_content_opens_a_new_block() -> None:
    _, res = play(
        [
            *OPEN,
            Send(thinking("a")),
            Send(text("x")),
            Send(thinking("b")),
            Send(thinking("c")),
            Send(tool_call("c1", "shell", "{}")),
            Send(result()),
        ]
    )
    assert res.events[1:] == [
        ThinkingStart(),
        ThinkingDelta(delta="a"),
        ThinkingEnd(),
        TextDelta(delta="x"),
        ThinkingStart(),
        ThinkingDelta(delta="b"),
        ThinkingDelta(delta="c"),
        ThinkingEnd(),
        ToolUse(id="c1", name="shell", input={}),
    ]


@pytest.mark.rule("DSH-EVENT-THINKING-001", "DSH-REQID-001")
def test_a_foreign_frame_does_not_end_thinking() -> None:
    _, res = play(
        [
            *OPEN,
            Send(thinking("a")),
            Send(text("elsewhere", rid="run-other")),
            Send(thinking("b")),
            Send(result()),
        ]
    )
    assert res.events[1:] == [
        ThinkingStart(),
        ThinkingDelta(delta="a"),
        ThinkingDelta(delta="b"),
        ThinkingEnd(),
    ]


@pytest.mark.rule("DSH-EVENT-THINKING-001")
def test_a_failed_run_leaves_its_thinking_unclosed() -> None:
    _, res = play([*OPEN, Send(thinking("a")), Send(b"{broken\n")])
    assert failure(res)[0] == "DSH_PROFILE_MALFORMED_FRAME"
    assert not any(isinstance(e, ThinkingEnd) for e in res.events)


@pytest.mark.rule("DSH-EVENT-THINKING-001")
def test_no_thinking_end_without_thinking() -> None:
    _, res = play([*OPEN, Send(text("x")), Send(result())])
    assert not any(isinstance(e, (ThinkingStart, ThinkingEnd)) for e in res.events)


@pytest.mark.rule("DSH-EVENT-TEXT-001")
def test_text_deltas_skip_empty_content_and_keep_unicode() -> None:
    _, res = play(
        [*OPEN, Send(text("")), Send(text("a\u2028b\n")), Send(text("✓")), Send(result())]
    )
    assert res.events[1:] == [TextDelta(delta="a\u2028b\n"), TextDelta(delta="✓")]


@pytest.mark.rule("DSH-EVENT-TOOL-001")
def test_tool_frames_become_tool_use_and_tool_result() -> None:
    _, res = play(
        [
            *OPEN,
            Send(tool_call("c1", "shell", '{"cmd": "ls", "cwd": "."}')),
            Send(tool_call("c2", "shell", "[1]")),
            Send(tool_call("c3", "shell", "not json")),
            Send(tool_result("c1", "a.html\n", is_error=False)),
            Send(tool_result("c3", "boom", is_error=True)),
            Send(result()),
        ]
    )
    assert res.events[1:] == [
        ToolUse(id="c1", name="shell", input={"cmd": "ls", "cwd": "."}),
        ToolUse(id="c2", name="shell", input={"raw": "[1]"}),
        ToolUse(id="c3", name="shell", input={"raw": "not json"}),
        ToolResult(tool_use_id="c1", content="a.html\n", is_error=False),
        ToolResult(tool_use_id="c3", content="boom", is_error=True),
    ]


@pytest.mark.rule("DSH-EVENT-USAGE-001")
def test_usage_normalizes_token_names_and_totals() -> None:
    _, res = play(
        [
            *OPEN,
            Send(usage()),
            Send(usage(cache_read_tokens=5, cache_write_tokens=2.5)),
            Send(result()),
        ]
    )
    tokens = [e.usage for e in res.events if isinstance(e, Usage)]
    assert tokens == [
        {
            "input_tokens": 120,
            "output_tokens": 30,
            "cached_read_tokens": 0,
            "cached_write_tokens": 0,
            "total_tokens": 150,
        },
        {
            "input_tokens": 120,
            "output_tokens": 30,
            "cached_read_tokens": 5,
            "cached_write_tokens": 2.5,
            "total_tokens": 150,
        },
    ]
    first = next(e for e in res.events if isinstance(e, Usage))
    assert (first.provider, first.model) == ("deepseek-official", "deepseek-v4")


@pytest.mark.rule("DSH-EVENT-COMPLETE-001")
def test_only_a_completed_result_closes_stdin_and_completes() -> None:
    sess = new_session()
    sess.start(request(), 0)
    running = Actions()
    for frame in (READY, session(), text("x"), usage()):
        running.extend(sess.receive((json.dumps(frame) + "\n").encode(), 1))
    assert running.controls == [] and state_of(sess) is SessionState.RUNNING
    assert sess.tick(10**9).controls == []  # no deadline was asked for: tick does nothing
    done = sess.receive((json.dumps(result()) + "\n").encode(), 2)
    assert done.controls == [CloseStdin(), Finished(RunStatus.COMPLETED)]
    assert sess.end_of_output(3).controls == []


# -- cancellation (seed 001 §10, in order) ---------------------------------------------


@pytest.mark.rule("DSH-CANCEL-ORDER-001")
def test_cancel_sends_the_cancel_command_then_sets_the_grace_deadline() -> None:
    sess, res = play([*OPEN, Cancel(at_ms=1000), CANCEL])
    assert res.frames[-1] == {"v": 1, "type": "cancel", "request_id": RID}
    assert res.controls == [SetDeadline(1000 + CANCEL_GRACE, "dsh-cancel-grace")]
    assert state_of(sess) is SessionState.CANCELLING


@pytest.mark.rule("DSH-CANCEL-ACK-001")
def test_cancelled_result_within_the_grace_closes_stdin_and_finishes_cancelled() -> None:
    sess, res = play(
        [
            *OPEN,
            Send(thinking("hmm")),
            Cancel(at_ms=1000),
            CANCEL,
            Send(text("winding down"), at_ms=1100),
            Send(result("cancelled", stop_reason="cancelled"), at_ms=1200),
            Tick(at_ms=1000 + CANCEL_GRACE),
            Eof(),
        ]
    )
    assert res.controls == [
        SetDeadline(1000 + CANCEL_GRACE, "dsh-cancel-grace"),
        CloseStdin(),
        Finished(RunStatus.CANCELLED),
    ]
    assert res.events[-2:] == [ThinkingEnd(), TextDelta(delta="winding down")]
    assert sess.status is RunStatus.CANCELLED


@pytest.mark.rule("DSH-CANCEL-GRACE-001")
def test_grace_expiry_closes_stdin_then_terminates_then_finishes_cancelled() -> None:
    sess = new_session()
    play([*OPEN, Cancel(at_ms=1000), CANCEL], sess=sess)
    early = sess.tick(1000 + CANCEL_GRACE - 1)
    assert early.controls == [] and state_of(sess) is SessionState.CANCELLING
    late = sess.tick(1000 + CANCEL_GRACE)
    assert late.controls == [
        CloseStdin(),
        Terminate(after_ms=TERMINATE_GRACE),
        Finished(RunStatus.CANCELLED),
    ]
    assert sess.status is RunStatus.CANCELLED
    # A late acknowledgement after the shell took over changes nothing.
    tail = sess.receive((json.dumps(result("cancelled")) + "\n").encode(), 2000)
    assert tail.controls == [] and tail.events == [] and tail.frames == []
    assert sess.counters["lines_after_finish"] == 1
    assert sess.end_of_output(2001).controls == []


@pytest.mark.rule("DSH-CANCEL-BEFORE-READY-001")
def test_cancel_before_ready_finishes_cancelled_without_execute() -> None:
    sess, res = play([Cancel(at_ms=5), Send(READY), Send(session()), Eof()])
    assert res.frames == []
    assert res.controls == [
        CloseStdin(),
        Terminate(after_ms=TERMINATE_GRACE),
        Finished(RunStatus.CANCELLED),
    ]
    assert not sess.execute_sent and sess.status is RunStatus.CANCELLED
    assert sess.counters["lines_after_finish"] == 2


@pytest.mark.rule("DSH-CANCEL-AFTER-FINISH-001")
def test_cancel_after_finish_and_second_cancel_are_no_ops() -> None:
    _, done = play([*OPEN, Send(result()), Cancel(), Cancel()])
    assert done.controls == [CloseStdin(), Finished(RunStatus.COMPLETED)]
    assert [f["type"] for f in done.frames] == ["execute"]
    _, twice = play([*OPEN, Cancel(at_ms=1), CANCEL, Cancel(at_ms=2), Send(result("cancelled"))])
    assert [f["type"] for f in twice.frames] == ["execute", "cancel"]
    assert [type(c) for c in twice.controls] == [SetDeadline, CloseStdin, Finished]
    _, failed = play([Send(b"nope\n"), Cancel()])
    assert len(failed.controls) == 3 and failed.frames == []


@pytest.mark.rule("DSH-CANCEL-SESSION-001")
@pytest.mark.parametrize("acknowledged", [True, False])
def test_validated_session_id_survives_cancellation(acknowledged: bool) -> None:
    steps: list[Step] = [*OPEN, Cancel(at_ms=10), CANCEL]
    steps.append(Send(result("cancelled")) if acknowledged else Tick(at_ms=10 + CANCEL_GRACE))
    sess, res = play(steps)
    assert status(res) is RunStatus.CANCELLED
    assert sess.session_id == SID


@pytest.mark.rule("DSH-CANCEL-ACK-001")
def test_pre_session_cancelled_result_after_our_cancel_is_a_cancellation() -> None:
    sess, res = play([*HANDSHAKE, Cancel(), CANCEL, Send(result("cancelled"))])
    assert status(res) is RunStatus.CANCELLED and sess.session_id is None


# -- framing ------------------------------------------------------------------------------


@pytest.mark.rule("DSH-FRAME-LINE-001")
def test_blank_lines_are_skipped_and_crlf_is_accepted() -> None:
    data = b"\n   \r\n" + json.dumps(READY).encode() + b"\r\n\t\n"
    _, res = play([Send(data), EXECUTE, Send(session()), Send(result())])
    assert status(res) is RunStatus.COMPLETED


@pytest.mark.rule("DSH-FRAME-LINE-001")
@pytest.mark.parametrize(
    "data",
    [
        json.dumps(session(), indent=2).encode() + b"\n",
        (json.dumps(text("a")) + json.dumps(text("b")) + "\n").encode(),
    ],
    ids=["pretty-printed", "two-per-line"],
)
def test_a_frame_is_exactly_one_line(data: bytes) -> None:
    _, res = play([*HANDSHAKE, Send(data)])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_MALFORMED_FRAME", "DSH-FRAME-MALFORMED-001")
    assert "stdout line 2" in message


@pytest.mark.rule("DSH-FRAME-TOOLARGE-001")
def test_line_over_the_limit_fails_and_a_line_at_the_limit_passes() -> None:
    limit = 600
    at_limit = json.dumps(text("")).encode()
    at_limit = json.dumps(text("x" * (limit - len(at_limit)))).encode()
    assert len(at_limit) == limit
    over = json.dumps(text("x" * (limit + 1 - len(json.dumps(text("")))))).encode()
    sess = new_session(max_frame_bytes=limit)
    _, res = play([*OPEN, Send(at_limit + b"\n"), Send(result())], sess=sess)
    assert status(res) is RunStatus.COMPLETED
    _, res = play([*OPEN, Send(over + b"\n")], sess=new_session(max_frame_bytes=limit))
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_FRAME_TOO_LARGE", "DSH-FRAME-TOOLARGE-001")
    assert f"limit {limit} bytes" in message and "stdout line 3" in message


@pytest.mark.rule("DSH-FRAME-TOOLARGE-001")
def test_unterminated_buffer_over_the_limit_fails_before_any_newline() -> None:
    sess = new_session(max_frame_bytes=4096)
    sess.start(request(), 0)
    sess.receive((json.dumps(READY) + "\n").encode(), 0)
    assert sess.receive(b"{" + b" " * 4095, 1).controls == []  # exactly at the limit: buffered
    out = sess.receive(b" ", 2)  # one byte more, still no newline
    assert out.finished is not None and out.finished.error is not None
    assert out.finished.error.code == "DSH_PROFILE_FRAME_TOO_LARGE"
    assert "stdout line 2" in out.finished.error.message
    assert sess.receive(b"}\n", 3).controls == []


@pytest.mark.rule("DSH-FRAME-MALFORMED-001")
@pytest.mark.parametrize(
    "line", [b"hello", b"{'v': 1}", b'{"v": NaN}', b"\xff\xfe", b'{"v":1,}', b"\xef\xbb\xbf{}"]
)
def test_non_json_line_fails_as_malformed(line: bytes) -> None:
    _, res = play([*OPEN, Send(line + b"\n"), Send(result())])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_MALFORMED_FRAME", "DSH-FRAME-MALFORMED-001")
    assert message == "DeepSeek Harness profile emitted malformed JSON (stdout line 3)."


@pytest.mark.rule("DSH-FRAME-INVALID-001")
def test_invalid_frame_message_names_the_field() -> None:
    _, res = play([*OPEN, Send(broken({**text("x"), "content": 5}))])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_INVALID_FRAME", "DSH-FRAME-INVALID-001")
    assert message == (
        "DeepSeek Harness profile emitted an invalid frame: content must be a string "
        "(stdout line 3)."
    )


@pytest.mark.rule("DSH-FRAME-INVALID-001")
def test_deeply_nested_json_is_an_invalid_frame_not_a_crash() -> None:
    deep = b"[" * 200_000 + b"]" * 200_000
    _, res = play([*OPEN, Send(deep + b"\n")], sess=new_session(max_frame_bytes=1 << 20))
    code, message, _ = failure(res)
    assert code == "DSH_PROFILE_INVALID_FRAME" and "nested too deeply" in message


@pytest.mark.rule("DSH-FRAME-TYPE-001")
def test_unknown_frame_type_is_invalid() -> None:
    todo = broken({"v": 1, "type": "todo_snapshot", "request_id": RID, "items": []})
    _, res = play([*OPEN, Send(todo)])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_INVALID_FRAME", "DSH-FRAME-TYPE-001")
    assert "type is not supported by protocol generation 1" in message


@pytest.mark.rule("DSH-FRAME-TRUNCATED-001")
def test_truncated_final_frame_fails_at_eof() -> None:
    _, res = play([*OPEN, Send(b'{"v":1,"type":"result","request_id":"run-7"'), Eof()])
    code, message, rule = failure(res)
    assert (code, rule) == ("DSH_PROFILE_TRUNCATED_FRAME", "DSH-FRAME-TRUNCATED-001")
    assert "truncated frame (stdout line 3)" in message


@pytest.mark.rule("DSH-FRAME-TRUNCATED-001")
def test_complete_final_frame_without_newline_is_accepted() -> None:
    _, res = play([*OPEN, Send(json.dumps(result()).encode()), Eof()])
    assert status(res) is RunStatus.COMPLETED


@pytest.mark.rule("DSH-FRAME-FIRSTERROR-001")
def test_first_error_is_terminal() -> None:
    sess = new_session()
    _, res = play(
        [*OPEN, Send(b"oops\n" + json.dumps(text("after")).encode() + b"\n"), Send(result())],
        sess=sess,
    )
    assert res.events == [Status(label="working", session_id=SID)]
    assert [type(c) for c in res.controls] == [CloseStdin, Terminate, Finished]
    assert failure(res)[0] == "DSH_PROFILE_MALFORMED_FRAME"
    assert sess.receive(json.dumps(result()).encode() + b"\n", 9) == Actions()
    assert sess.cancel(9) == Actions() and sess.tick(10**9) == Actions()
    assert sess.end_of_output(10) == Actions()


@pytest.mark.rule("DSH-FRAME-FIRSTERROR-001")
def test_failure_asks_the_shell_to_close_stdin_and_terminate() -> None:
    _, res = play([*OPEN, Send(b"oops\n")])
    assert res.controls[:2] == [CloseStdin(), Terminate(after_ms=TERMINATE_GRACE)]


# -- security ---------------------------------------------------------------------------


@pytest.mark.rule("DSH-SEC-001")
@pytest.mark.parametrize(
    "bad",
    [
        f"{SECRET}\n".encode(),
        json.dumps({"v": 1, "type": "text", "request_id": RID, "content": 5, "x": SECRET}).encode()
        + b"\n",
        json.dumps({**result(), "status": SECRET}).encode() + b"\n",
        json.dumps(tool_result("c1", SECRET)).encode() + b"\n",
        json.dumps({"v": 1, "type": SECRET}).encode() + b"\n",
        b'{"v":1,"type":"text","content":"' + SECRET.encode(),
    ],
    ids=["malformed", "invalid-extra", "invalid-value", "order-tool-output", "type", "truncated"],
)
def test_errors_never_contain_prompt_or_frame_text(bad: bytes) -> None:
    sess, res = play([*HANDSHAKE, Send(bad), Eof()], request(prompt=SECRET))
    _, message, _ = failure(res)
    assert SECRET not in message
    assert sess.error is not None and sess.error.line is None
    assert SECRET not in json.dumps(sess.error.to_json())


# -- host misuse ------------------------------------------------------------------------


def test_calls_before_start_or_after_eof_are_local_errors() -> None:
    sess = new_session()
    assert state_of(sess) is SessionState.NEW
    with pytest.raises(LocalProtocolError):
        sess.receive(b"x", 0)
    with pytest.raises(LocalProtocolError):
        sess.cancel(0)
    with pytest.raises(LocalProtocolError):
        sess.tick(0)
    sess.start(request(), 0)
    with pytest.raises(LocalProtocolError):
        sess.start(request(), 0)
    sess.end_of_output(1)
    with pytest.raises(LocalProtocolError):
        sess.receive(b"{}", 2)
    with pytest.raises(ValueError):
        DshProfileSession(max_frame_bytes=0)
    with pytest.raises(ValueError):
        DshProfileSession(cancel_grace_ms=-1)


# -- properties: robustness and chunking ---------------------------------------------------


def transcript(*frames: dict[str, Any] | bytes) -> bytes:
    return b"".join(f if isinstance(f, bytes) else (json.dumps(f) + "\n").encode() for f in frames)


def feed(data_chunks: Sequence[bytes], *, cancel_after: int | None = None) -> list[Any]:
    """Feed chunks to a fresh session; return every output as comparable JSON-ish data."""
    sess = new_session(max_frame_bytes=2048)
    out = Actions()
    out.extend(sess.start(request(), 0))
    for index, chunk in enumerate(data_chunks):
        if cancel_after is not None and index == cancel_after:
            out.extend(sess.cancel(50))
        out.extend(sess.receive(chunk, index))
    out.extend(sess.end_of_output(10_000))
    return [
        [e.to_json() for e in out.events],
        [json.loads(f) for f in out.frames],
        [repr(c) for c in out.controls],
        dict(sess.counters),
    ]


TRANSCRIPTS: dict[str, bytes] = {
    "happy": transcript(
        READY,
        session(),
        thinking("Plan ✓ the "),
        thinking("layout"),
        text("Writing index.html\u2028now"),
        tool_call("c1", "write_file", '{"path": "index.html", "content": "<h1>é</h1>"}'),
        tool_result("c1", "ok"),
        text("", rid="run-other"),
        usage(cache_write_tokens=3),
        b"\r\n",
        result(),
    ),
    "resume-rejected": transcript(
        READY, result("failed", resume_rejected=True, error={"code": "E", "message": "m"})
    ),
    "malformed-tail": transcript(READY, session(), text("a"), b"{broken\n", text("b")),
    "oversize": transcript(READY, session(), text("x" * 3000), result()),
    "after-result": transcript(READY, session(), result(), text("late"), b"junk"),
    "truncated": transcript(READY, session(), text("a")) + b'{"v":1,"type":"res',
}


@pytest.mark.rule("DSH-CHUNK-001")
@pytest.mark.parametrize("name", sorted(TRANSCRIPTS))
@settings(max_examples=40)
@given(cuts=cut_points())
def test_any_chunking_gives_identical_output(name: str, cuts: list[int]) -> None:
    data = TRANSCRIPTS[name]
    whole = feed([data])
    assert feed([data[i : i + 1] for i in range(len(data))]) == whole
    assert feed(split_at(data, cuts)) == whole


@pytest.mark.rule("DSH-CHUNK-001")
@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7, 64])
def test_run_script_chunk_sizes_give_identical_output(chunk_size: int) -> None:
    script: list[Step] = [
        Send(TRANSCRIPTS["happy"][:-1]),
        Expect(ANY, "execute"),
        Send(b"\n"),
        Eof(),
    ]
    _, whole = play(script)
    _, chunked = play(script, chunk_size=chunk_size)
    assert chunked.events_json() == whole.events_json()
    assert chunked.frames == whole.frames and chunked.controls == whole.controls


@pytest.mark.rule("DSH-CHUNK-001", "DSH-CANCEL-ACK-001")
@settings(max_examples=60)
@given(cuts=cut_points())
def test_chunking_does_not_change_a_cancelled_run(cuts: list[int]) -> None:
    head = transcript(READY, session(), thinking("x"))
    tail = transcript(text("y"), result("cancelled"))
    whole = feed([head, tail], cancel_after=1)
    parts_head = split_at(head, cuts)
    parts_tail = split_at(tail, cuts)
    assert feed([*parts_head, *parts_tail], cancel_after=len(parts_head)) == whole


_THINKING_RUN_FRAMES = {
    "thinking": thinking("k"),
    "empty-thinking": thinking(""),
    "text": text("t"),
    "empty-text": text(""),
    "tool_call": tool_call("c", "n", "{}"),
    "tool_result": tool_result("c", "ok"),
    "usage": usage(),
    "foreign": thinking("f", rid="run-other"),
}


def _thinking_blocks(kinds: Sequence[str]) -> int:
    """How many runs of this request's thinking frames other frames of the run separate."""
    blocks, inside = 0, False
    for kind in kinds:
        if kind == "foreign":
            continue
        if kind.endswith("thinking") and not inside:
            blocks += 1
        inside = kind.endswith("thinking")
    return blocks


@pytest.mark.rule("DSH-EVENT-THINKING-001", "DSH-CHUNK-001")
@settings(max_examples=80)
@given(st.lists(st.sampled_from(sorted(_THINKING_RUN_FRAMES)), max_size=10), cut_points())
def test_thinking_blocks_close_where_other_content_begins(
    kinds: list[str], cuts: list[int]
) -> None:
    data = transcript(READY, session(), *(_THINKING_RUN_FRAMES[k] for k in kinds), result())
    whole = feed([data])
    assert feed(split_at(data, cuts)) == whole
    inside = False
    for event in whole[0][1:]:
        kind = event["type"]
        if kind == "thinking_start":
            assert not inside, whole[0]
            inside = True
        elif kind in ("thinking_delta", "thinking_end"):
            assert inside, whole[0]
            inside = kind == "thinking_delta"
        else:
            assert not inside, f"{kind} inside a thinking block: {whole[0]}"
    assert not inside, "the completed run left a thinking block open"
    starts = [e for e in whole[0] if e["type"] == "thinking_start"]
    assert len(starts) == _thinking_blocks(kinds)


def _controls_ok(controls: list[Control]) -> bool:
    finished = [c for c in controls if isinstance(c, Finished)]
    return len(finished) == 1 and controls[-1] == finished[0]


@pytest.mark.rule("DSH-ROBUST-001")
@settings(max_examples=150)
@given(st.lists(st.binary(max_size=64), max_size=8), st.booleans())
def test_arbitrary_bytes_never_raise(chunks: list[bytes], after_handshake: bool) -> None:
    sess = new_session(max_frame_bytes=128)
    out = Actions()
    out.extend(sess.start(request(), 0))
    if after_handshake:
        out.extend(sess.receive(transcript(READY, session()), 0))
    for chunk in chunks:
        actions = sess.receive(chunk, 1)
        out.extend(actions)
    out.extend(sess.end_of_output(2))
    assert state_of(sess) is SessionState.FINISHED
    assert _controls_ok(out.controls)
    if sess.status is RunStatus.FAILED:
        assert sess.error is not None and sess.error.code.startswith("DSH_")


json_frames = st.sampled_from(
    [
        READY,
        session(),
        text("t"),
        thinking("k"),
        tool_call("c", "n", "{}"),
        usage(),
        result(),
        result("cancelled"),
        protocol_error(),
        text("x", rid="other"),
    ]
)


@pytest.mark.rule("DSH-ROBUST-001")
@settings(max_examples=150)
@given(st.lists(json_frames | st.binary(max_size=16), max_size=8))
def test_arbitrary_frame_sequences_end_in_exactly_one_finish(items: list[Any]) -> None:
    sess = new_session()
    out = Actions()
    out.extend(sess.start(request(), 0))
    out.extend(sess.receive(transcript(*items), 1))
    out.extend(sess.end_of_output(2))
    assert _controls_ok(out.controls)
    for event in out.events:
        assert EVENT_SCHEMA.is_valid(event.to_json())
    for frame in out.frames:
        assert HOST_SCHEMA.is_valid(json.loads(frame))
