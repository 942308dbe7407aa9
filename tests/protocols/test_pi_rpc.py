"""The pi-rpc session and its image policy (rules PI-*), driven by a scripted peer.

Wire lines are written by hand from pi's RPC docs (``docs/rpc.md`` of
``@mariozechner/pi-coding-agent`` 0.73.1, wire §A.2) and ref §2.7. Their shapes — ``message``
and ``partial`` repeated in every ``message_update``, ``turn_end.message.usage``, the abort
response arriving after ``agent_end``, ``agent_end`` before ``auto_retry_start`` — were checked
against that real CLI driven by a loopback mock model. Every event the session emits is
validated against ``events.schema.json``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.events import (
    Error,
    Raw,
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
from harness.protocols.peer import (
    Cancel,
    Eof,
    Expect,
    ScriptResult,
    Send,
    Step,
    Tick,
    run_script,
)
from harness.protocols.pi_images import (
    MAX_IMAGE_COUNT,
    MAX_TOTAL_IMAGE_BYTES,
    ImageCandidate,
    is_inside,
    select_images,
)
from harness.protocols.pi_rpc import (
    CANCEL_DEADLINE,
    ERROR_RAW_LIMIT,
    FIRE_AND_FORGET_METHODS,
    RETRY_DEADLINE,
    PiRpcSession,
    changed_session_file,
)
from harness.schemas import load_schema
from tests.helpers import cut_points, split_at

EVENT_SCHEMA = jsonschema.Draft202012Validator(load_schema("events.schema.json"))

CWD = "/work/project"
PROMPT = "Design a pricing page"
MODEL = "mock/mock-model"
PARENT = "/work/project/.pi/sessions/2026-11-30T00-05-43_01a2.jsonl"
GRACE = 700
WINDOW = 300


# -- pi's wire shapes (docs/rpc.md, wire §A.2) ---------------------------------------------


def response(rid: Any, command: str, success: bool = True, **extra: Any) -> dict[str, Any]:
    frame: dict[str, Any] = {"id": rid, "type": "response", "command": command, "success": success}
    frame.update(extra)
    return frame


def assistant(content: list[dict[str, Any]], stop: str = "stop", **extra: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "mock",
        "model": "mock-model",
        "usage": {
            "input": 12,
            "output": 3,
            "cacheRead": 4,
            "cacheWrite": 1,
            "totalTokens": 20,
            "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3},
        },
        "stopReason": stop,
        "timestamp": 1795997144356,
        **extra,
    }


def update(event: dict[str, Any], text: str = "") -> dict[str, Any]:
    partial = assistant([{"type": "text", "text": text}])
    return {
        "type": "message_update",
        "assistantMessageEvent": {**event, "partial": partial},
        "message": partial,
    }


def text_delta(delta: str, index: int = 0) -> dict[str, Any]:
    return update({"type": "text_delta", "contentIndex": index, "delta": delta}, delta)


def thinking(kind: str, delta: str | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": kind, "contentIndex": 0}
    if delta is not None:
        event["delta"] = delta
    return update(event)


def turn_end(
    stop: str = "stop", message: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    msg = (
        message
        if message is not None
        else assistant([{"type": "text", "text": "Hi"}], stop, **extra)
    )
    return {"type": "turn_end", "message": msg, "toolResults": []}


def tool_start(call_id: str, name: str, args: Any) -> dict[str, Any]:
    return {"type": "tool_execution_start", "toolCallId": call_id, "toolName": name, "args": args}


def tool_end(call_id: str, result: Any, is_error: Any = False) -> dict[str, Any]:
    return {
        "type": "tool_execution_end",
        "toolCallId": call_id,
        "toolName": "write",
        "result": result,
        "isError": is_error,
    }


def ui(method: str, rid: Any = "uuid-1", **fields: Any) -> dict[str, Any]:
    frame: dict[str, Any] = {"type": "extension_ui_request", "method": method, **fields}
    if rid is not None:
        frame["id"] = rid
    return frame


AGENT_START: dict[str, Any] = {"type": "agent_start"}
TURN_START: dict[str, Any] = {"type": "turn_start"}
AGENT_END: dict[str, Any] = {
    "type": "agent_end",
    "messages": [assistant([{"type": "text", "text": "Hi"}])],
}
USER_MESSAGE = {"role": "user", "content": [{"type": "text", "text": PROMPT}], "timestamp": 1}
MESSAGE_START: dict[str, Any] = {"type": "message_start", "message": USER_MESSAGE}
MESSAGE_END: dict[str, Any] = {"type": "message_end", "message": USER_MESSAGE}

PROMPT_FRAME = Expect({"id": 1, "type": "prompt", "message": PROMPT}, "prompt")
ACCEPTED = Send(response(1, "prompt"))
OPEN: list[Step] = [PROMPT_FRAME, ACCEPTED, Send(AGENT_START), Send(TURN_START)]


# -- driving ----------------------------------------------------------------------------


def request(**kwargs: Any) -> SessionRequest:
    base: dict[str, Any] = {"prompt": PROMPT, "cwd": CWD, "model": MODEL}
    base.update(kwargs)
    return SessionRequest(**base)


def new_session(**kwargs: Any) -> PiRpcSession:
    kwargs.setdefault("graceful_shutdown_ms", GRACE)
    kwargs.setdefault("retry_window_ms", WINDOW)
    return PiRpcSession(**kwargs)


def check(res: ScriptResult) -> ScriptResult:
    for event in res.events_json():
        errors = [e.message for e in EVENT_SCHEMA.iter_errors(event)]
        assert not errors, f"event rejected by events.schema.json: {event!r}: {errors}"
    finished = [c for c in res.controls if isinstance(c, Finished)]
    assert len(finished) <= 1, f"more than one Finished: {res.controls}"
    return res


def play(
    script: Sequence[Step],
    req: SessionRequest | None = None,
    *,
    sess: PiRpcSession | None = None,
    chunk_size: int | None = None,
) -> tuple[PiRpcSession, ScriptResult]:
    sess = sess or new_session()
    res = run_script(sess, req or request(), script, chunk_size=chunk_size)
    return sess, check(res)


def state_of(sess: PiRpcSession) -> SessionState:
    """``sess.state`` without mypy narrowing it across calls that change it."""
    return sess.state


def run_status(res: ScriptResult) -> RunStatus:
    done = res.finished
    assert done is not None, "the run did not finish"
    return done.status


def failure(res: ScriptResult) -> tuple[str, str, str | None]:
    done = res.finished
    assert done is not None, "the run did not finish"
    assert done.status is RunStatus.FAILED, f"expected a failure, got {done}"
    assert done.error is not None
    return done.error.code, done.error.message, done.error.rule


def shutdown(after_ms: int, status: RunStatus) -> list[Control]:
    return [CloseStdin(), Terminate(after_ms=after_ms), Finished(status)]


def after_prompt(res: ScriptResult) -> list[dict[str, Any]]:
    """Events after the initializing status."""
    events = res.events_json()
    assert events[0] == {"type": "status", "label": "initializing", "model": MODEL}
    return events[1:]


# -- PI-START / PI-PROMPT ------------------------------------------------------------------


@pytest.mark.rule("PI-START-001")
@pytest.mark.parametrize(("model", "expected"), [(MODEL, MODEL), (None, None), ("", None)])
def test_start_emits_initializing_with_the_model_at_once(
    model: str | None, expected: str | None
) -> None:
    sess = new_session()
    actions = sess.start(request(model=model), 0.0)
    assert actions.events == [Status(label="initializing", model=expected)]
    assert state_of(sess) is SessionState.RUNNING
    assert actions.controls == []


@pytest.mark.rule("PI-PROMPT-001", "PI-FRAME-001")
def test_prompt_frame_is_one_compact_line_without_images_key() -> None:
    sess = new_session()
    actions = sess.start(request(prompt='Say \u2028hi\n"there"'), 0.0)
    assert len(actions.frames) == 1
    frame = actions.frames[0]
    assert frame.endswith(b"\n") and frame.count(b"\n") == 1
    assert b": " not in frame and b", " not in frame, "frames are compact"
    parsed = json.loads(frame)
    assert parsed == {"id": 1, "type": "prompt", "message": 'Say \u2028hi\n"there"'}
    assert type(parsed["id"]) is int
    assert next(iter(parsed)) == "id"


@pytest.mark.rule("PI-PROMPT-001")
def test_prompt_frame_carries_images_when_there_are_some() -> None:
    image = {
        "type": "image",
        "data": base64.b64encode(b"\x89PNG").decode(),
        "mimeType": "image/png",
    }
    _, res = play(
        [Expect({"id": 1, "type": "prompt", "message": PROMPT, "images": [image]})],
        request(images=[image]),
    )
    assert res.frames[0]["images"] == [image]


@pytest.mark.rule("PI-PROMPT-001")
def test_prompt_frame_survives_a_lone_surrogate() -> None:
    sess = new_session()
    frame = sess.start(request(prompt="bad \ud800 char"), 0.0).frames[0]
    assert json.loads(frame)["message"] == "bad \ud800 char"


def test_start_rejects_a_non_mapping_image_and_a_second_start() -> None:
    with pytest.raises(LocalProtocolError, match=r"images\[0\]"):
        new_session().start(request(images=["not-a-dict"]), 0.0)
    sess = new_session()
    sess.start(request(), 0.0)
    with pytest.raises(LocalProtocolError, match="start"):
        sess.start(request(), 1.0)


def test_calls_before_start_are_caller_bugs() -> None:
    sess = new_session()
    with pytest.raises(LocalProtocolError, match="before start"):
        sess.receive(b"{}\n", 0)
    with pytest.raises(LocalProtocolError, match="before start"):
        sess.end_of_output(0)
    with pytest.raises(LocalProtocolError, match="before start"):
        sess.tick(0)
    sess.start(request(), 0.0)
    sess.end_of_output(1.0)
    with pytest.raises(LocalProtocolError, match="after end_of_output"):
        sess.receive(b"{}\n", 2.0)
    assert sess.end_of_output(3.0) == Actions()


@pytest.mark.rule("PI-PROMPT-002")
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"error": "Agent is busy"}, "prompt rejected: Agent is busy"),
        ({}, "prompt rejected: unknown"),
    ],
)
def test_prompt_rejected_fails_the_run(extra: dict[str, Any], message: str) -> None:
    _, res = play([PROMPT_FRAME, Send(response(1, "prompt", False, **extra))])
    assert failure(res) == ("PI_PROMPT_REJECTED", message, "PI-PROMPT-002")
    assert res.controls[:2] == [CloseStdin(), Terminate(after_ms=GRACE)]


@pytest.mark.rule("PI-PROMPT-002", "PI-FRAME-001")
@pytest.mark.parametrize("rid", [True, 1.0, "1", None, 2])
def test_a_rejection_with_another_id_is_not_our_prompt(rid: Any) -> None:
    sess, res = play([PROMPT_FRAME, Send(response(rid, "prompt", False, error="x"))])
    assert res.finished is None
    assert sess.counters["responses_ignored"] == 1


@pytest.mark.rule("PI-PROMPT-003")
def test_prompt_accepted_only_means_accepted() -> None:
    sess, res = play([PROMPT_FRAME, ACCEPTED])
    assert res.finished is None and state_of(sess) is SessionState.RUNNING
    _, res = play([PROMPT_FRAME, ACCEPTED, Eof()])
    assert failure(res)[0] == "PI_EXITED_BEFORE_AGENT_END"


# -- PI-RESUME ------------------------------------------------------------------------------


@pytest.mark.rule("PI-RESUME-001", "PI-FRAME-001")
def test_new_session_is_sent_before_the_prompt() -> None:
    sess = new_session()
    script: list[Step] = [
        Expect({"id": 1, "type": "new_session", "parentSession": PARENT}, "new_session"),
        Send(response(2, "new_session")),  # not ours: no prompt yet
        Send(response(True, "new_session")),
        Send(AGENT_END),  # cannot end a prompt that was never sent
        Send(response(1, "new_session", data={"cancelled": False})),
        Expect({"id": 2, "type": "prompt", "message": PROMPT}, "prompt after ack"),
        Send(response(2, "prompt")),
        Send(AGENT_START),
        Send(AGENT_END),
    ]
    res = run_script(sess, request(resume_session_id=PARENT), script)
    check(res)
    assert run_status(res) is RunStatus.COMPLETED
    # two foreign ids, and the prompt's success response (it needs no action)
    assert sess.counters["responses_ignored"] == 3
    assert sess.counters["agent_end_before_prompt"] == 1
    assert [f["type"] for f in res.frames] == ["new_session", "prompt"]


@pytest.mark.rule("PI-RESUME-001")
def test_no_prompt_while_waiting_for_the_parent_session() -> None:
    sess = new_session()
    actions = sess.start(request(resume_session_id=PARENT), 0.0)
    assert [json.loads(f)["type"] for f in actions.frames] == ["new_session"]
    assert state_of(sess) is SessionState.HANDSHAKE
    more = sess.receive(b'{"type":"agent_start"}\n', 1.0)
    assert more.frames == []


@pytest.mark.rule("PI-RESUME-002")
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"error": "no such session"}, "parent session rejected: no such session"),
        ({}, "parent session rejected: unknown"),
        ({"error": {"why": "gone"}}, 'parent session rejected: {"why":"gone"}'),
    ],
)
def test_parent_session_rejected_fails_without_prompt(extra: dict[str, Any], message: str) -> None:
    script: list[Step] = [
        Expect({"type": "new_session", "parentSession": PARENT}),
        Send(response(1, "new_session", False, **extra)),
        Send(response(1, "new_session")),  # too late: nothing more is sent
    ]
    sess, res = play(script, request(resume_session_id=PARENT))
    assert failure(res) == ("PI_PARENT_SESSION_FAILED", message, "PI-RESUME-002")
    assert [f["type"] for f in res.frames] == ["new_session"]
    assert sess.counters["lines_after_finish"] == 1


@pytest.mark.rule("PI-RESUME-003")
@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ({}, {}, None),
        ({"/s/a.jsonl": (10, 1.0)}, {"/s/a.jsonl": (10, 1.0)}, None),
        ({}, {"/s/a.jsonl": (10, 1.0)}, "/s/a.jsonl"),
        ({"/s/a.jsonl": (10, 1.0)}, {"/s/a.jsonl": (12, 1.0)}, "/s/a.jsonl"),
        ({"/s/a.jsonl": (10, 1.0)}, {"/s/a.jsonl": (10, 2.5)}, "/s/a.jsonl"),
        (
            {"/s/a.jsonl": (10, 1.0)},
            {"/s/a.jsonl": (10, 1.0), "/s/b.jsonl": (3, 2.0)},
            "/s/b.jsonl",
        ),
        ({}, {"/s/a.jsonl": (1, 1.0), "/s/b.jsonl": (1, 1.0)}, None),
        ({"/s/a.jsonl": (1, 1.0)}, {"/s/a.jsonl": (2, 1.0), "/s/b.jsonl": (1, 1.0)}, None),
        ({"/s/a.jsonl": (1, 1.0)}, {}, None),
        ({}, {"/s/notes.txt": (1, 1.0), "/s/a.jsonl.tmp": (1, 1.0)}, None),
        ({}, {"/s/notes.txt": (1, 1.0), "/s/a.jsonl": (1, 1.0)}, "/s/a.jsonl"),
    ],
)
def test_changed_session_file(
    before: dict[str, tuple[int, float]], after: dict[str, tuple[int, float]], expected: str | None
) -> None:
    assert changed_session_file(before, after) == expected


@pytest.mark.rule("PI-RESUME-003")
def test_session_captures_the_changed_file_once() -> None:
    sess, _ = play([*OPEN, Send(AGENT_END)])
    assert sess.session_id is None
    assert sess.capture_session_file({}, {"/s/a.jsonl": (5, 1.0), "/s/b.jsonl": (5, 1.0)}) is None
    assert sess.capture_session_file({}, {"/s/a.jsonl": (5, 1.0)}) == "/s/a.jsonl"
    assert sess.capture_session_file({}, {"/s/b.jsonl": (5, 1.0)}) == "/s/a.jsonl"
    assert sess.session_id == "/s/a.jsonl"


@pytest.mark.rule("PI-RESUME-004")
def test_new_session_cancelled_by_an_extension_warns_and_prompts() -> None:
    script: list[Step] = [
        Expect({"type": "new_session"}),
        Send(response(1, "new_session", data={"cancelled": True})),
        Expect({"id": 2, "type": "prompt", "message": PROMPT}),
    ]
    sess, res = play(script, request(resume_session_id=PARENT))
    warning = after_prompt(res)
    assert warning == [
        {
            "type": "status",
            "label": "warning",
            "detail": ("pi extension cancelled new_session; parent session not linked"),
        }
    ]
    assert sess.counters["parent_session_cancelled"] == 1


# -- PI-UI -------------------------------------------------------------------------------------


def replies_to(*frames: dict[str, Any]) -> tuple[PiRpcSession, list[Any]]:
    sess = new_session()
    res = run_script(
        sess, request(), OPEN + [Send(f) for f in frames], allow_unexpected_frames=True
    )
    check(res)
    return sess, res.frames[1:]


@pytest.mark.rule("PI-UI-001")
def test_confirm_is_confirmed() -> None:
    sess, frames = replies_to(ui("confirm", "uuid-2", title="Clear session?", timeout=5000))
    assert frames == [{"type": "extension_ui_response", "id": "uuid-2", "confirmed": True}]
    assert sess.counters["extension_ui_replies"] == 1


@pytest.mark.rule("PI-UI-002")
@pytest.mark.parametrize(
    ("request_frame", "reply"),
    [
        (ui("select", options=["Allow", "Block"]), {"value": "Allow"}),
        (ui("select", options=[{"label": "Allow", "value": "a"}]), {"value": "Allow"}),
        (ui("select", options=[{"label": None, "value": "a"}]), {"value": "a"}),
        (ui("select", options=[{"value": 0}]), {"value": 0}),
        (ui("select", options=[{"id": "x"}]), {"value": ""}),
        (ui("select", options=[7, "later"]), {"value": ""}),
        (ui("select", options=["outer"], params={"options": ["inner"]}), {"value": "inner"}),
        (ui("select", options=["outer"], params={"title": "t"}), {"value": "outer"}),
        (ui("select", options=[]), {"cancelled": True}),
        (ui("select"), {"cancelled": True}),
        (ui("input", title="Enter a value", placeholder="type"), {"cancelled": True}),
        (ui("editor", title="Edit", prefill="Line 1\nLine 2"), {"cancelled": True}),
        (ui("input", options=["typed"]), {"value": "typed"}),
        (ui("someFutureDialog"), {"cancelled": True}),
        (ui("select", 42, options=["A"]), {"value": "A"}),
    ],
)
def test_dialogs_get_the_first_option_or_cancelled(
    request_frame: dict[str, Any], reply: dict[str, Any]
) -> None:
    _, frames = replies_to(request_frame)
    assert frames == [{"type": "extension_ui_response", "id": request_frame["id"], **reply}]


@pytest.mark.rule("PI-UI-003")
@pytest.mark.parametrize("method", sorted(FIRE_AND_FORGET_METHODS))
def test_fire_and_forget_methods_get_no_reply(method: str) -> None:
    sess, frames = replies_to(ui(method, "uuid-5", message="Command blocked", statusKey="k"))
    assert frames == []
    assert sess.counters["extension_ui_fire_and_forget"] == 1
    assert sess.counters["extension_ui_requests"] == 1


@pytest.mark.rule("PI-UI-003")
def test_fire_and_forget_set_is_exactly_the_seeds() -> None:
    assert {
        "setStatus",
        "setWidget",
        "notify",
        "setTitle",
        "set_editor_text",
    } == FIRE_AND_FORGET_METHODS


@pytest.mark.rule("PI-UI-004")
@pytest.mark.parametrize(
    "frame",
    [
        ui("confirm", None),
        ui("select", None, options=["A"]),
        {"type": "extension_ui_request", "id": None, "method": "confirm"},
    ],
)
def test_requests_without_id_are_ignored_and_counted(frame: dict[str, Any]) -> None:
    sess, frames = replies_to(frame)
    assert frames == []
    assert sess.counters["extension_ui_without_id"] == 1
    assert sess.counters["raw_lines"] == 0


@pytest.mark.rule("PI-UI-004", "PI-FRAME-003")
def test_an_id_that_cannot_be_echoed_is_no_id() -> None:
    sess, res = play(
        [
            *OPEN,
            Send(b'{"type":"extension_ui_request","id":1e999,"method":"confirm"}\n'),
            Send(b'{"type":"extension_ui_request","id":NaN,"method":"confirm"}\n'),
        ]
    )
    assert res.frames[1:] == []
    assert sess.counters["extension_ui_without_id"] == 1
    assert res.events[3:] == [
        Raw(line='{"type":"extension_ui_request","id":NaN,"method":"confirm"}')
    ]


@pytest.mark.rule("PI-UI-001", "PI-UI-003")
def test_extension_ui_is_answered_before_the_prompt_is_sent() -> None:
    sess = new_session()
    sess.start(request(resume_session_id=PARENT), 0.0)
    actions = sess.receive(
        b'{"type":"extension_ui_request","id":"u1","method":"confirm"}\n'
        b'{"type":"extension_ui_request","id":"u2","method":"notify","message":"hi"}\n',
        1.0,
    )
    assert [json.loads(f) for f in actions.frames] == [
        {"type": "extension_ui_response", "id": "u1", "confirmed": True}
    ]
    assert actions.events == []


# -- PI-EVENT ----------------------------------------------------------------------------------


@pytest.mark.rule("PI-EVENT-001")
def test_agent_start_and_turn_start_statuses() -> None:
    _, res = play([*OPEN, Send(TURN_START)])
    assert after_prompt(res) == [
        {"type": "status", "label": "working"},
        {"type": "status", "label": "thinking"},
        {"type": "status", "label": "thinking"},
    ]


@pytest.mark.rule("PI-EVENT-002")
def test_first_text_delta_reports_streaming_with_ttft() -> None:
    script: list[Step] = [
        PROMPT_FRAME,
        Send(AGENT_START, at_ms=100),
        Send(text_delta("Hello"), at_ms=250),
        Send(text_delta(" world"), at_ms=300),
        Send(text_delta(""), at_ms=310),
    ]
    sess = new_session()
    res = check(run_script(sess, request(), script, start_ms=40.0))
    assert after_prompt(res) == [
        {"type": "status", "label": "working"},
        {"type": "status", "label": "streaming", "ttft_ms": 210.0},
        {"type": "text_delta", "delta": "Hello"},
        {"type": "text_delta", "delta": " world"},
        {"type": "text_delta", "delta": ""},
    ]


@pytest.mark.rule("PI-EVENT-003")
def test_thinking_events() -> None:
    _, res = play(
        [
            *OPEN,
            Send(thinking("thinking_start")),
            Send(thinking("thinking_delta", "hm")),
            Send(thinking("thinking_end")),
        ]
    )
    assert res.events[3:] == [ThinkingStart(), ThinkingDelta(delta="hm"), ThinkingEnd()]


@pytest.mark.rule("PI-EVENT-004")
@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"type": "error", "reason": "aborted"}, "aborted"),
        ({"type": "error", "reason": "", "delta": "overloaded"}, "overloaded"),
        ({"type": "error"}, "Agent error"),
        ({"type": "error", "reason": 5, "delta": None}, "Agent error"),
    ],
)
def test_message_update_error(event: dict[str, Any], message: str) -> None:
    frame = update(event)
    _, res = play([*OPEN, Send(frame)])
    line = json.dumps(frame, ensure_ascii=False)
    assert res.events[3:] == [Error(message=message, raw=line)]


@pytest.mark.rule("PI-EVENT-005")
def test_known_events_without_a_mapping_emit_nothing() -> None:
    frames = [
        MESSAGE_START,
        MESSAGE_END,
        {"type": "message_end", "message": assistant([{"type": "text", "text": "Hi"}])},
        update({"type": "start"}),
        update({"type": "text_start", "contentIndex": 0}),
        update({"type": "text_end", "contentIndex": 0, "content": "Hi"}),
        update({"type": "toolcall_start", "contentIndex": 1}),
        update({"type": "toolcall_delta", "contentIndex": 1, "delta": '{"path"'}),
        update(
            {
                "type": "toolcall_end",
                "contentIndex": 1,
                "toolCall": {"type": "toolCall", "id": "c1", "name": "write", "arguments": {}},
            }
        ),
        update({"type": "done", "reason": "stop"}),
        {
            "type": "tool_execution_update",
            "toolCallId": "c1",
            "toolName": "bash",
            "args": {},
            "partialResult": {"content": [{"type": "text", "text": "partial"}]},
        },
        {"type": "queue_update", "steering": [], "followUp": []},
        {
            "type": "compaction_end",
            "reason": "threshold",
            "result": None,
            "aborted": False,
            "willRetry": False,
        },
        {"type": "auto_retry_end", "success": True, "attempt": 1},
    ]
    sess, res = play(OPEN + [Send(f) for f in frames])
    assert res.events[3:] == []
    assert sess.counters["consumed_events"] == len(frames)
    assert not [e for e in res.events if isinstance(e, Usage)], "usage only from turn_end"


@pytest.mark.rule("PI-EVENT-006")
def test_tool_execution_start_and_end() -> None:
    frames = [
        tool_start("call_1", "write", {"path": "hello.txt", "content": "hi\n"}),
        tool_end("call_1", {"content": [{"type": "text", "text": "Successfully wrote 3 bytes"}]}),
        {"type": "tool_execution_start", "toolCallId": "call_2", "toolName": "read"},
        tool_end(
            "call_2",
            {
                "content": [
                    {"type": "text", "text": "line 1"},
                    {"type": "image", "data": "QUJD", "mimeType": "image/png"},
                    {"type": "text"},
                    {"type": "text", "text": 7},
                ],
                "details": {},
            },
            is_error=True,
        ),
        tool_end("call_3", {"content": "plain string"}, is_error="true"),
        tool_end("call_4", {"details": {"exitCode": 1}}),
        tool_end("call_5", None),
        {"type": "tool_execution_start", "toolCallId": 9, "toolName": None, "args": []},
    ]
    _, res = play(OPEN + [Send(f) for f in frames])
    assert res.events[3:] == [
        ToolUse(id="call_1", name="write", input={"path": "hello.txt", "content": "hi\n"}),
        ToolResult(tool_use_id="call_1", content="Successfully wrote 3 bytes", is_error=False),
        ToolUse(id="call_2", name="read", input=None),
        ToolResult(
            tool_use_id="call_2",
            content='line 1\n{"type":"image","data":"QUJD","mimeType":"image/png"}\n\n7',
            is_error=True,
        ),
        ToolResult(tool_use_id="call_3", content="plain string", is_error=False),
        ToolResult(tool_use_id="call_4", content="", is_error=False),
        ToolResult(tool_use_id="call_5", content="", is_error=False),
        ToolUse(id=None, name=None, input=[]),
    ]


@pytest.mark.rule("PI-EVENT-007")
def test_turn_end_maps_usage_with_cost_and_duration() -> None:
    _, res = play([PROMPT_FRAME, Send(turn_end(), at_ms=1234)])
    assert res.events[1:] == [
        Usage(
            usage={
                "input_tokens": 12,
                "output_tokens": 3,
                "cached_read_tokens": 4,
                "cached_write_tokens": 1,
                "total_tokens": 20,
            },
            cost_usd=0.3,
            duration_ms=1234.0,
        )
    ]


@pytest.mark.rule("PI-EVENT-007")
@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (
            {"input": 5, "cost": {"totalCost": 0.5}},
            Usage(usage={"input_tokens": 5}, cost_usd=0.5, duration_ms=0.0),
        ),
        (
            {"output": 2, "cost": {"total": None, "totalCost": 1}},
            Usage(usage={"output_tokens": 2}, cost_usd=1.0, duration_ms=0.0),
        ),
        (
            {"output": 2, "cost": {"total": 0}},
            Usage(usage={"output_tokens": 2}, cost_usd=0.0, duration_ms=0.0),
        ),
        ({"totalTokens": 9, "cost": "free"}, Usage(usage={"total_tokens": 9}, duration_ms=0.0)),
        ({"input": True, "output": "3", "cost": {"total": 1}}, None),
        ({}, None),
    ],
)
def test_turn_end_usage_fields(usage: dict[str, Any], expected: Usage | None) -> None:
    message = assistant([], "stop")
    message["usage"] = usage
    _, res = play([PROMPT_FRAME, Send(turn_end(message=message))])
    assert res.events[1:] == ([expected] if expected else [])


@pytest.mark.rule("PI-EVENT-007")
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"errorMessage": "400 mock bad request"}, "400 mock bad request"),
        ({"errorMessage": ""}, "Pi agent error"),
        ({}, "Pi agent error"),
    ],
)
def test_turn_end_with_stop_reason_error_adds_an_error(extra: dict[str, Any], message: str) -> None:
    frame = turn_end("error", **extra)
    _, res = play([PROMPT_FRAME, Send(frame)])
    assert isinstance(res.events[1], Usage)
    assert res.events[2:] == [Error(message=message, raw=json.dumps(frame, ensure_ascii=False))]


@pytest.mark.rule("PI-EVENT-007")
def test_turn_end_without_a_message_or_with_other_stop_reasons() -> None:
    _, res = play(
        [
            PROMPT_FRAME,
            Send({"type": "turn_end"}),
            Send(turn_end("aborted")),
            Send(turn_end("length")),
        ]
    )
    assert [e.type for e in res.events[1:]] == ["usage", "usage"]


@pytest.mark.rule("PI-EVENT-008")
@pytest.mark.parametrize(
    ("error", "message"),
    [("Error message...", "Error message..."), ("", "Extension error"), (None, "Extension error")],
)
def test_extension_error(error: Any, message: str) -> None:
    frame = {
        "type": "extension_error",
        "extensionPath": "/x/ext.ts",
        "event": "tool_call",
        "error": error,
    }
    _, res = play([*OPEN, Send(frame)])
    assert res.events[3:] == [Error(message=message, raw=json.dumps(frame))]


@pytest.mark.rule("PI-EVENT-009")
def test_compaction_and_retry_events() -> None:
    exhausted = {
        "type": "auto_retry_end",
        "success": False,
        "attempt": 3,
        "finalError": "529 overloaded_error: Overloaded",
    }
    bare = {"type": "auto_retry_end", "success": False}
    frames = [
        {"type": "compaction_start", "reason": "threshold"},
        {"type": "auto_compaction_start", "reason": "threshold"},
        {
            "type": "auto_retry_start",
            "attempt": 1,
            "maxAttempts": 3,
            "delayMs": 2000,
            "errorMessage": "529 overloaded",
        },
        exhausted,
        bare,
    ]
    _, res = play(OPEN + [Send(f) for f in frames])
    assert res.events[3:] == [
        Status(label="compacting"),
        Status(label="compacting"),
        Status(label="retrying"),
        Error(message="529 overloaded_error: Overloaded", raw=json.dumps(exhausted)),
        Error(message="Auto-retry exhausted", raw=json.dumps(bare)),
    ]


@pytest.mark.rule("PI-EVENT-004", "PI-FRAME-001")
def test_error_raw_is_bounded() -> None:
    frame = update({"type": "error", "reason": "error", "pad": "x" * (ERROR_RAW_LIMIT * 2)})
    _, res = play([*OPEN, Send(frame)])
    error = res.events[3]
    assert isinstance(error, Error) and error.raw is not None
    assert len(error.raw) == ERROR_RAW_LIMIT


# -- the real CLI's shape, start to end ------------------------------------------------------

TOOL_RUN: list[Step] = [
    PROMPT_FRAME,
    Send(response(1, "prompt")),
    Send(AGENT_START),
    Send(TURN_START),
    Send(MESSAGE_START),
    Send(MESSAGE_END),
    Send(update({"type": "text_start", "contentIndex": 0})),
    Send(text_delta("Writing.")),
    Send(update({"type": "toolcall_start", "contentIndex": 1})),
    Send(update({"type": "toolcall_delta", "contentIndex": 1, "delta": '{"path":"hello.txt"}'})),
    Send(update({"type": "text_end", "contentIndex": 0, "content": "Writing."})),
    Send(tool_start("call_1", "write", {"path": "hello.txt", "content": "hi\n"})),
    Send(tool_end("call_1", {"content": [{"type": "text", "text": "Successfully wrote 3 bytes"}]})),
    Send(turn_end("toolUse")),
    Send(TURN_START),
    Send(text_delta("Done \u2028 ✓")),
    Send(turn_end("stop")),
    Send(AGENT_END),
]


@pytest.mark.rule("PI-END-001")
def test_a_tool_run_completes_and_shuts_pi_down_gracefully() -> None:
    sess, res = play(
        [*TOOL_RUN, Send(text_delta("late")), Send(AGENT_END), Send(response(9, "abort"))]
    )
    assert [e.type for e in res.events] == [
        "status",
        "status",
        "status",
        "status",
        "text_delta",
        "tool_use",
        "tool_result",
        "usage",
        "status",
        "text_delta",
        "usage",
    ]
    assert res.controls == shutdown(GRACE, RunStatus.COMPLETED)
    assert sess.status is RunStatus.COMPLETED and sess.error is None
    assert state_of(sess) is SessionState.FINISHED
    assert sess.counters["lines_after_finish"] == 3
    assert res.frames == [{"id": 1, "type": "prompt", "message": PROMPT}]


@pytest.mark.rule("PI-END-001")
def test_agent_end_without_any_turn_completes() -> None:
    _, res = play([PROMPT_FRAME, Send(AGENT_END)])
    assert res.controls == shutdown(GRACE, RunStatus.COMPLETED)


# -- PI-END --------------------------------------------------------------------------------------


@pytest.mark.rule("PI-END-002")
@pytest.mark.parametrize(
    ("frame", "message"),
    [
        ({"type": "extension_error", "error": "boom"}, "boom"),
        ({"type": "auto_retry_end", "success": False, "finalError": "gave up"}, "gave up"),
        (update({"type": "error", "reason": "aborted"}), "aborted"),
        (turn_end("error", errorMessage="400 bad"), "400 bad"),
    ],
)
def test_an_in_stream_error_fails_the_run_at_agent_end(frame: dict[str, Any], message: str) -> None:
    sess = new_session(retry_window_ms=0)
    _, res = play([*OPEN, Send(frame), Send(turn_end("stop")), Send(AGENT_END)], sess=sess)
    assert failure(res) == ("PI_AGENT_ERROR", f"pi run failed: {message}", "PI-END-002")
    assert res.controls[:2] == [CloseStdin(), Terminate(after_ms=GRACE)]


@pytest.mark.rule("PI-END-002")
def test_the_latest_error_names_the_failure() -> None:
    frames = [{"type": "extension_error", "error": "first"}, turn_end("error", errorMessage="last")]
    _, res = play(
        OPEN + [Send(f) for f in frames] + [Send(AGENT_END)], sess=new_session(retry_window_ms=0)
    )
    assert failure(res)[1] == "pi run failed: last"


@pytest.mark.rule("PI-END-003")
def test_error_turn_then_agent_end_waits_for_a_retry_that_succeeds() -> None:
    script: list[Step] = [
        *OPEN,
        Send(turn_end("error", errorMessage="503 service unavailable")),
        Send(AGENT_END, at_ms=1000),
        Send(
            {
                "type": "auto_retry_start",
                "attempt": 1,
                "maxAttempts": 2,
                "delayMs": 200,
                "errorMessage": "503 service unavailable",
            },
            at_ms=1001,
        ),
        Tick(at_ms=1000 + WINDOW),  # the window no longer applies
        Send(AGENT_START, at_ms=1500),
        Send(TURN_START),
        Send(text_delta("Hello")),
        Send({"type": "auto_retry_end", "success": True, "attempt": 1}),
        Send(turn_end("stop")),
        Send(AGENT_END, at_ms=2000),
    ]
    sess, res = play(script)
    assert SetDeadline(1000 + WINDOW, RETRY_DEADLINE) in res.controls
    assert res.controls[-3:] == shutdown(GRACE, RunStatus.COMPLETED)
    assert [e.type for e in res.events].count("error") == 1, "the failed attempt stays visible"
    assert Status(label="retrying") in res.events
    assert sess.status is RunStatus.COMPLETED


@pytest.mark.rule("PI-END-003")
def test_exhausted_retry_after_agent_end_fails_at_once() -> None:
    script: list[Step] = [
        *OPEN,
        Send(turn_end("error", errorMessage="503 service unavailable")),
        Send(AGENT_END, at_ms=10),
        Send(
            {
                "type": "auto_retry_end",
                "success": False,
                "attempt": 2,
                "finalError": "503 service unavailable",
            },
            at_ms=11,
        ),
    ]
    _, res = play(script)
    assert failure(res) == (
        "PI_AGENT_ERROR",
        "pi run failed: 503 service unavailable",
        "PI-END-002",
    )
    assert res.controls == [
        SetDeadline(10 + WINDOW, RETRY_DEADLINE),
        CloseStdin(),
        Terminate(after_ms=GRACE),
        res.finished,
    ]


@pytest.mark.rule("PI-END-003")
def test_no_retry_within_the_window_fails_on_tick() -> None:
    script: list[Step] = [
        *OPEN,
        Send(turn_end("error", errorMessage="401 unauthorized")),
        Send(AGENT_END, at_ms=10),
        Tick(at_ms=10 + WINDOW - 1),
    ]
    sess, res = play(script)
    assert res.finished is None and state_of(sess) is SessionState.RUNNING
    _, res = play([*script, Tick(at_ms=10 + WINDOW)])
    assert failure(res) == ("PI_AGENT_ERROR", "pi run failed: 401 unauthorized", "PI-END-002")


@pytest.mark.rule("PI-END-003")
def test_retry_window_zero_finishes_at_the_first_agent_end() -> None:
    script: list[Step] = [*OPEN, Send(turn_end("error", errorMessage="503")), Send(AGENT_END)]
    _, res = play(script, sess=new_session(retry_window_ms=0))
    assert failure(res)[1] == "pi run failed: 503"
    assert not [c for c in res.controls if isinstance(c, SetDeadline)]


@pytest.mark.rule("PI-END-003")
def test_end_of_output_inside_the_window_reports_the_model_error() -> None:
    script: list[Step] = [
        *OPEN,
        Send(turn_end("error", errorMessage="500 oops")),
        Send(AGENT_END),
        Eof(),
    ]
    _, res = play(script)
    assert failure(res)[:2] == ("PI_AGENT_ERROR", "pi run failed: 500 oops")


@pytest.mark.rule("PI-END-003")
@pytest.mark.parametrize("will_retry", [False, None])
def test_overflow_compaction_that_will_not_retry_fails(will_retry: bool | None) -> None:
    end: dict[str, Any] = {
        "type": "compaction_end",
        "reason": "overflow",
        "result": None,
        "aborted": False,
        "errorMessage": "quota",
    }
    if will_retry is not None:
        end["willRetry"] = will_retry
    script: list[Step] = [
        *OPEN,
        Send(turn_end("error", errorMessage="context overflow")),
        Send(AGENT_END),
        Send({"type": "compaction_start", "reason": "overflow"}),
        Send(end),
    ]
    _, res = play(script)
    assert failure(res)[1] == "pi run failed: context overflow"


@pytest.mark.rule("PI-END-003")
def test_overflow_compaction_that_retries_continues() -> None:
    script: list[Step] = [
        *OPEN,
        Send(turn_end("error", errorMessage="context overflow")),
        Send(AGENT_END),
        Send({"type": "compaction_start", "reason": "overflow"}),
        Send(
            {
                "type": "compaction_end",
                "reason": "overflow",
                "result": {"summary": "s"},
                "aborted": False,
                "willRetry": True,
            }
        ),
        Send(AGENT_START),
        Send(turn_end("stop")),
        Send(AGENT_END),
    ]
    _, res = play(script)
    assert run_status(res) is RunStatus.COMPLETED


@pytest.mark.rule("PI-END-003", "PI-END-002")
def test_a_run_level_error_survives_a_successful_retry() -> None:
    script: list[Step] = [
        *OPEN,
        Send({"type": "extension_error", "error": "ext broke"}),
        Send(turn_end("error", errorMessage="503")),
        Send(AGENT_END),
        Send({"type": "auto_retry_start", "attempt": 1}),
        Send(AGENT_START),
        Send(turn_end("stop")),
        Send(AGENT_END),
    ]
    _, res = play(script)
    assert failure(res)[1] == "pi run failed: ext broke"


@pytest.mark.rule("PI-END-004")
@pytest.mark.parametrize("tail", [[], [AGENT_START, TURN_START, text_delta("partial")]])
def test_end_of_output_before_agent_end_fails(tail: list[dict[str, Any]]) -> None:
    _, res = play([PROMPT_FRAME, ACCEPTED, *[Send(f) for f in tail], Eof()])
    assert failure(res) == (
        "PI_EXITED_BEFORE_AGENT_END",
        "pi exited before agent_end",
        "PI-END-004",
    )
    assert res.controls[:2] == [CloseStdin(), Terminate(after_ms=GRACE)]


@pytest.mark.rule("PI-END-004")
def test_end_of_output_while_waiting_for_the_parent_session_fails() -> None:
    _, res = play([Expect({"type": "new_session"}), Eof()], request(resume_session_id=PARENT))
    assert failure(res)[0] == "PI_EXITED_BEFORE_AGENT_END"


@pytest.mark.rule("PI-END-004", "PI-END-001")
def test_an_unterminated_final_agent_end_still_completes() -> None:
    _, res = play(
        [PROMPT_FRAME, Send(b'{"type":"agent_start"}\n{"type":"agent_end","messages":[]}'), Eof()]
    )
    assert run_status(res) is RunStatus.COMPLETED


# -- PI-CANCEL ---------------------------------------------------------------------------------


ABORT = Expect({"id": 2, "type": "abort"}, "abort")


@pytest.mark.rule("PI-CANCEL-001")
def test_cancel_sends_abort_and_agent_end_within_grace_cancels() -> None:
    script: list[Step] = [
        *OPEN,
        Send(text_delta("Slow")),
        Cancel(at_ms=500),
        ABORT,
        Send(update({"type": "text_end", "contentIndex": 0, "content": "Slow"}), at_ms=600),
        Send(turn_end("aborted", errorMessage="Request was aborted")),
        Send(AGENT_END, at_ms=700),
        Send(response(2, "abort"), at_ms=710),
        Tick(at_ms=500 + GRACE),
    ]
    sess, res = play(script)
    assert res.controls == [
        SetDeadline(500 + GRACE, CANCEL_DEADLINE),
        *shutdown(GRACE, RunStatus.CANCELLED),
    ]
    assert [e.type for e in res.events][-1] == "text_delta", "nothing published after cancel"
    assert sess.counters["events_after_cancel"] == 2
    assert sess.counters["lines_after_finish"] == 1


@pytest.mark.rule("PI-CANCEL-001")
def test_the_abort_response_within_grace_cancels() -> None:
    script: list[Step] = [
        *OPEN,
        Cancel(at_ms=5),
        ABORT,
        Send(response(1, "prompt")),
        Send(response(2, "abort")),
    ]
    _, res = play(script)
    assert res.controls[1:] == shutdown(GRACE, RunStatus.CANCELLED)


@pytest.mark.rule("PI-CANCEL-001", "PI-RESUME-001")
def test_cancel_while_waiting_for_the_parent_never_sends_the_prompt() -> None:
    script: list[Step] = [
        Expect({"id": 1, "type": "new_session"}),
        Cancel(),
        ABORT,
        Send(response(1, "new_session")),
        Send(response(2, "abort")),
    ]
    _, res = play(script, request(resume_session_id=PARENT))
    assert [f["type"] for f in res.frames] == ["new_session", "abort"]
    assert run_status(res) is RunStatus.CANCELLED


@pytest.mark.rule("PI-CANCEL-001", "PI-END-004")
def test_end_of_output_while_cancelling_is_a_cancellation() -> None:
    _, res = play([*OPEN, Cancel(), ABORT, Eof()])
    assert res.controls[1:] == shutdown(GRACE, RunStatus.CANCELLED)


@pytest.mark.rule("PI-CANCEL-002")
def test_cancel_grace_expiry_terminates_at_once() -> None:
    script: list[Step] = [*OPEN, Cancel(at_ms=100), ABORT, Tick(at_ms=100 + GRACE - 1)]
    sess, res = play(script)
    assert res.finished is None and state_of(sess) is SessionState.CANCELLING
    _, res = play([*script, Tick(at_ms=100 + GRACE), Send(AGENT_END)])
    assert res.controls == [
        SetDeadline(100 + GRACE, CANCEL_DEADLINE),
        *shutdown(0, RunStatus.CANCELLED),
    ]


@pytest.mark.rule("PI-CANCEL-003")
def test_cancel_before_start_only_finishes() -> None:
    sess = new_session()
    actions = sess.cancel(0.0)
    assert actions == Actions(controls=[Finished(RunStatus.CANCELLED)])
    assert state_of(sess) is SessionState.FINISHED and sess.status is RunStatus.CANCELLED
    assert sess.cancel(1.0) == Actions()
    with pytest.raises(LocalProtocolError):
        sess.start(request(), 2.0)


@pytest.mark.rule("PI-CANCEL-003")
def test_cancel_is_idempotent_and_a_no_op_after_the_end() -> None:
    _, res = play([*OPEN, Cancel(at_ms=1), ABORT, Cancel(at_ms=2), Cancel(at_ms=3)])
    assert [f["type"] for f in res.frames] == ["prompt", "abort"]
    assert [c for c in res.controls if isinstance(c, SetDeadline)] == [
        SetDeadline(1 + GRACE, CANCEL_DEADLINE)
    ]
    _, res = play([*OPEN, Send(AGENT_END), Cancel()])
    assert [f["type"] for f in res.frames] == ["prompt"]
    assert res.controls == shutdown(GRACE, RunStatus.COMPLETED)


@pytest.mark.rule("PI-CANCEL-004")
def test_dialogs_are_dismissed_while_cancelling() -> None:
    script: list[Step] = [
        *OPEN,
        Cancel(),
        ABORT,
        Send(ui("confirm", "c1", title="Allow rm -rf?")),
        Expect({"type": "extension_ui_response", "id": "c1", "cancelled": True}),
        Send(ui("select", "s1", options=["Allow"])),
        Expect({"type": "extension_ui_response", "id": "s1", "cancelled": True}),
        Send(ui("notify", "n1", message="x")),
        Send(b"not json\n"),
        Send({"type": "brand_new_event"}),
    ]
    sess, res = play(script)
    assert res.frames[2]["cancelled"] is True and "confirmed" not in res.frames[2]
    assert res.events[3:] == []
    assert sess.counters["events_after_cancel"] == 2


# -- PI-FRAME ------------------------------------------------------------------------------------


@pytest.mark.rule("PI-FRAME-001")
def test_ids_count_per_session_across_commands() -> None:
    script: list[Step] = [
        Expect({"id": 1, "type": "new_session", "parentSession": PARENT}),
        Send(response(1, "new_session")),
        Expect({"id": 2, "type": "prompt"}),
        Cancel(),
        Expect({"id": 3, "type": "abort"}),
        Send(response(2, "abort")),  # the prompt's id, not the abort's
    ]
    _, res = play(script, request(resume_session_id=PARENT))
    assert res.finished is None
    for frame in res.frames:
        assert type(frame["id"]) is int


@pytest.mark.rule("PI-FRAME-002")
def test_crlf_lines_and_unicode_separators() -> None:
    text = "a\u2028b\u2029c\x85d é"
    wire = (
        b'{"type":"agent_start"}\r\n'
        + json.dumps(text_delta(text), ensure_ascii=False).encode()
        + b"\r\n"
        + b'{"type":"agent_end","messages":[]}\r\n'
    )
    _, res = play([PROMPT_FRAME, Send(wire)])
    assert after_prompt(res) == [
        {"type": "status", "label": "working"},
        {"type": "status", "label": "streaming", "ttft_ms": 0.0},
        {"type": "text_delta", "delta": text},
    ]
    assert run_status(res) is RunStatus.COMPLETED


@pytest.mark.rule("PI-FRAME-002")
def test_blank_lines_are_skipped_and_stray_crs_tolerated() -> None:
    sess, res = play([PROMPT_FRAME, Send(b"\r\n\n   \n" + b'{"type":"agent_start"}\r\r\n')])
    assert after_prompt(res) == [{"type": "status", "label": "working"}]
    assert sess.counters["lines"] == 1


@pytest.mark.rule("PI-FRAME-003")
@pytest.mark.parametrize(
    ("line", "unknown"),
    [
        (b"Debugger listening on ws://127.0.0.1:9229", 0),
        (b'{"type": "agent_start"', 0),
        (b"[1, 2]", 0),
        (b'"agent_end"', 0),
        (b'{"no_type": true}', 0),
        (b'{"type": 5}', 0),
        (b'{"type": "brand_new_event", "x": 1}', 1),
        (b'{"type": "message_update", "assistantMessageEvent": {"type": "sparkle"}}', 1),
        (b'{"type": "message_update"}', 1),
        (b'{"type": "agent_start", "n": NaN}', 0),
        (
            b'{"type": "message_update", "assistantMessageEvent": {"type": "text_delta", '
            b'"delta": 5}}',
            1,
        ),
    ],
)
def test_unclaimed_lines_become_raw(line: bytes, unknown: int) -> None:
    sess, res = play([PROMPT_FRAME, Send(line + b"\n")])
    assert res.events[1:] == [Raw(line=line.decode())]
    assert sess.counters["raw_lines"] == 1
    assert sess.counters["unknown_events"] == unknown
    assert res.finished is None


@pytest.mark.rule("PI-FRAME-004")
def test_oversize_lines_are_raw_with_their_size() -> None:
    sess = new_session(max_line_bytes=64)
    big = json.dumps(tool_end("call_1", {"content": [{"type": "text", "text": "x" * 200}]}))
    _, res = play([PROMPT_FRAME, Send(big.encode() + b"\n"), Send(AGENT_START)], sess=sess)
    raw = res.events[1]
    assert isinstance(raw, Raw)
    assert raw.truncated_bytes == len(big) and big.startswith(raw.line)
    assert res.events[2:] == [Status(label="working")]
    assert sess.counters["oversize_lines"] == 1


@pytest.mark.rule("PI-FRAME-004")
def test_an_oversize_agent_end_still_ends_the_run() -> None:
    sess = new_session(max_line_bytes=64)
    big = json.dumps(
        {"type": "agent_end", "messages": [assistant([{"type": "text", "text": "y" * 500}])]}
    )
    _, res = play([PROMPT_FRAME, Send(big.encode() + b"\n")], sess=sess)
    assert res.controls == shutdown(GRACE, RunStatus.COMPLETED)
    assert res.events[1:] == []


def transcript() -> bytes:
    """A full run: UI requests, thinking, tools, CRLF lines, multi-byte text, noise."""
    frames: list[Any] = [
        response(1, "prompt"),
        AGENT_START,
        ui("setStatus", "s0", statusKey="k", statusText="busy"),
        TURN_START,
        MESSAGE_START,
        MESSAGE_END,
        thinking("thinking_start"),
        thinking("thinking_delta", "Let me think… 思考"),
        thinking("thinking_end"),
        ui("confirm", "c1", title="Allow write?"),
        text_delta("Hello \u2028 wörld "),
        text_delta("😀"),
        tool_start("call_1", "write", {"path": "a.html", "content": "<p>é</p>"}),
        ui("select", "s1", options=[{"label": "Yes"}, "No"]),
        tool_end("call_1", {"content": [{"type": "text", "text": "ok"}]}),
        {"type": "extension_error", "error": "ext"},
        {"type": "brand_new_event"},
        turn_end("stop"),
        AGENT_END,
        {"type": "after", "ignored": True},
    ]
    out = bytearray()
    for index, frame in enumerate(frames):
        line = json.dumps(frame, ensure_ascii=False).encode()
        out += line + (b"\r\n" if index % 3 == 0 else b"\n")
        if index == 4:
            out += b"some stderr-ish noise\n\n"
    return bytes(out)


TRANSCRIPT = transcript()


def drive(chunks: Sequence[bytes]) -> Actions:
    sess = new_session()
    total = sess.start(request(), 0.0)
    for chunk in chunks:
        total.extend(sess.receive(chunk, 1.0))
    total.extend(sess.end_of_output(2.0))
    total.extend(sess.tick(10_000.0))
    return total


def normalized(actions: Actions) -> tuple[list[Any], list[Any], list[Control]]:
    return (
        [e.to_json() for e in actions.events],
        [json.loads(f) for f in actions.frames],
        list(actions.controls),
    )


@pytest.mark.rule("PI-FRAME-005")
def test_the_transcript_yields_the_expected_run() -> None:
    whole = drive([TRANSCRIPT])
    events, frames, controls = normalized(whole)
    assert [e["type"] for e in events] == [
        "status",
        "status",
        "status",
        "raw",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "status",
        "text_delta",
        "text_delta",
        "tool_use",
        "tool_result",
        "error",
        "raw",
        "usage",
    ]
    assert frames[1:] == [
        {"type": "extension_ui_response", "id": "c1", "confirmed": True},
        {"type": "extension_ui_response", "id": "s1", "value": "Yes"},
    ]
    assert controls[:-1] == [CloseStdin(), Terminate(after_ms=GRACE)]
    assert whole.finished is not None and whole.finished.error is not None
    assert whole.finished.error.message == "pi run failed: ext"
    for event in events:
        assert EVENT_SCHEMA.is_valid(event), event


@pytest.mark.rule("PI-FRAME-005")
@settings(max_examples=60, deadline=None)
@given(cuts=cut_points())
def test_any_chunking_gives_identical_actions(cuts: list[int]) -> None:
    whole = normalized(drive([TRANSCRIPT]))
    assert normalized(drive(split_at(TRANSCRIPT, cuts))) == whole
    assert normalized(drive([TRANSCRIPT[i : i + 1] for i in range(len(TRANSCRIPT))])) == whole


VALID_LINES = [
    json.dumps(f).encode() + b"\n"
    for f in (
        response(1, "prompt"),
        response(1, "prompt", False),
        response(1, "new_session", False),
        response(2, "abort"),
        AGENT_START,
        TURN_START,
        AGENT_END,
        text_delta("x"),
        turn_end("error"),
        {"type": "auto_retry_start"},
        {"type": "auto_retry_end", "success": False},
        {"type": "compaction_start"},
        {"type": "compaction_end"},
        ui("confirm"),
        ui("select", None),
        tool_end("c", {"content": [1, None, {"type": "text", "text": [1]}]}),
    )
]


@pytest.mark.rule("PI-FRAME-005")
@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(st.one_of(st.binary(max_size=60), st.sampled_from(VALID_LINES)), max_size=25),
    cuts=cut_points(),
    resume=st.booleans(),
    cancel=st.booleans(),
    max_line=st.sampled_from([8, 64, 1 << 20]),
)
def test_arbitrary_bytes_never_raise(
    parts: list[bytes], cuts: list[int], resume: bool, cancel: bool, max_line: int
) -> None:
    sess = new_session(max_line_bytes=max_line)
    total = sess.start(request(resume_session_id=PARENT if resume else None), 0.0)
    data = b"".join(parts)
    chunks = split_at(data, cuts)
    for index, chunk in enumerate(chunks):
        if cancel and index == len(chunks) // 2:
            total.extend(sess.cancel(float(index)))
        total.extend(sess.receive(chunk, float(index)))
        total.extend(sess.tick(float(index)))
    total.extend(sess.end_of_output(100.0))
    total.extend(sess.tick(100_000.0))
    for frame in total.frames:
        assert frame.endswith(b"\n") and frame.count(b"\n") == 1
        json.loads(frame)
    for event in total.events:
        assert EVENT_SCHEMA.is_valid(event.to_json()), event
    finished = [c for c in total.controls if isinstance(c, Finished)]
    assert len(finished) == 1, total.controls
    assert state_of(sess) is SessionState.FINISHED


def test_constructor_rejects_bad_limits() -> None:
    for kwargs in ({"graceful_shutdown_ms": -1}, {"retry_window_ms": -5}, {"max_line_bytes": 0}):
        with pytest.raises(ValueError):
            PiRpcSession(**kwargs)


# -- PI-IMAGE --------------------------------------------------------------------------------------

ROOT = "/srv/uploads"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


def candidate(name: str, data: bytes | None = PNG, **kwargs: Any) -> ImageCandidate:
    realpath = kwargs.pop("realpath", f"{ROOT}/{name}")
    fields: dict[str, Any] = {
        "path": f"{ROOT}/{name}",
        "realpath": realpath,
        "size": len(data) if data is not None else 10,
        "is_file": True,
        "data": data,
    }
    fields.update(kwargs)
    return ImageCandidate(**fields)


@pytest.mark.rule("PI-IMAGE-001")
def test_at_most_ten_images() -> None:
    images = select_images(
        [candidate(f"{i}.png", PNG + bytes([i])) for i in range(13)], ROOT, sep="/"
    )
    assert len(images) == MAX_IMAGE_COUNT == 10
    assert [base64.b64decode(i["data"])[-1] for i in images] == list(range(10))


@pytest.mark.rule("PI-IMAGE-001")
def test_rejected_candidates_do_not_use_up_the_count() -> None:
    bad = [candidate(f"{i}.txt") for i in range(5)]
    good = [candidate(f"{i}.png") for i in range(10)]
    assert len(select_images(bad + good, ROOT, sep="/")) == 10


@pytest.mark.rule("PI-IMAGE-002")
def test_total_size_budget_skips_what_does_not_fit() -> None:
    nine = MAX_TOTAL_IMAGE_BYTES * 9 // 20
    big = candidate("big.png", b"\x00", size=nine)
    also_big = candidate("also.png", b"\x01", size=nine)
    too_big = candidate("too.png", b"\x02", size=MAX_TOTAL_IMAGE_BYTES // 5)
    small = candidate("small.png", b"\x03", size=1024)
    exact = candidate("exact.png", b"\x04", size=MAX_TOTAL_IMAGE_BYTES - 2 * nine - 1024)
    over = candidate("over.png", b"\x05", size=1)
    images = select_images([big, also_big, too_big, small, exact, over], ROOT, sep="/")
    assert [base64.b64decode(i["data"]) for i in images] == [b"\x00", b"\x01", b"\x03", b"\x04"]


@pytest.mark.rule("PI-IMAGE-002")
def test_a_file_that_grew_after_stat_is_weighed_by_its_bytes() -> None:
    grown = candidate("grown.png", b"\x00" * 32, size=4)
    images = select_images([grown, candidate("x.png", b"\x01" * 10)], ROOT, sep="/")
    assert len(images) == 2
    full = b"\x00" * MAX_TOTAL_IMAGE_BYTES
    assert select_images(
        [candidate("f.png", full, size=10), candidate("g.png", b"\x01", size=1)], ROOT, sep="/"
    ) == [{"type": "image", "data": base64.b64encode(full).decode(), "mimeType": "image/png"}]


@pytest.mark.rule("PI-IMAGE-003")
@pytest.mark.parametrize(
    ("name", "mime"),
    [
        ("a.png", "image/png"),
        ("a.PNG", "image/png"),
        ("a.jpg", "image/jpeg"),
        ("a.JPEG", "image/jpeg"),
        ("a.gif", "image/gif"),
        ("a.webp", "image/webp"),
        ("a.svg", None),
        ("a.bmp", None),
        ("png", None),
        (".png", None),
        ("a.png.exe", None),
        ("a.tiff", None),
    ],
)
def test_extensions(name: str, mime: str | None) -> None:
    images = select_images([candidate(name)], ROOT, sep="/")
    assert [i["mimeType"] for i in images] == ([mime] if mime else [])


@pytest.mark.rule("PI-IMAGE-003", "PI-IMAGE-004")
def test_extension_is_judged_on_the_resolved_path() -> None:
    disguised = candidate("photo.png", realpath=f"{ROOT}/notes.txt")
    renamed = candidate("photo.dat", realpath=f"{ROOT}/photo.gif")
    images = select_images([disguised, renamed], ROOT, sep="/")
    assert [i["mimeType"] for i in images] == ["image/gif"]


@pytest.mark.rule("PI-IMAGE-004")
@pytest.mark.parametrize(
    "bad",
    [
        {"realpath": "/etc/secret.png"},
        {"realpath": "/srv/uploads-evil/x.png"},
        {"realpath": "/srv/upload/x.png"},
        {"realpath": None},
        {"is_file": False},
        {"path": ""},
    ],
)
def test_outside_root_unresolved_or_not_a_file_is_skipped(bad: dict[str, Any]) -> None:
    assert select_images([candidate("x.png", **bad)], ROOT, sep="/") == []
    assert len(select_images([candidate("x.png", **bad), candidate("y.png")], ROOT, sep="/")) == 1


@pytest.mark.rule("PI-IMAGE-004")
def test_containment_is_per_component_on_each_platform() -> None:
    assert is_inside("/srv/uploads", "/srv/uploads/a/b.png", "/")
    assert is_inside("/srv/uploads/", "/srv/uploads/b.png", "/")
    assert not is_inside("/srv/uploads", "/srv/uploadsX/b.png", "/")
    assert is_inside("/", "/b.png", "/")
    assert not is_inside("", "/b.png", "/")
    assert is_inside("C:\\up", "C:\\up\\a.png", "\\")
    assert not is_inside("C:\\up", "C:\\upper\\a.png", "\\")
    assert is_inside("C:\\", "C:\\a.png", "\\")
    win = ImageCandidate(
        path="C:\\up\\a.PNG", realpath="C:\\up\\a.PNG", size=3, is_file=True, data=b"abc"
    )
    assert select_images([win], "C:\\up", sep="\\")[0]["mimeType"] == "image/png"
    assert select_images([win], "C:\\other", sep="\\") == []


@pytest.mark.rule("PI-IMAGE-005")
def test_unreadable_images_are_skipped_and_the_rest_encoded() -> None:
    images = select_images(
        [candidate("gone.png", None), candidate("ok.webp", b"RIFF")], ROOT, sep="/"
    )
    assert images == [
        {"type": "image", "data": base64.b64encode(b"RIFF").decode(), "mimeType": "image/webp"}
    ]
    assert select_images([], ROOT) == []


# -- live: the real pi CLI through the session (skipped unless PI_BIN or `pi` is found) --------
#
# real-clis.md "pi": ``pi --mode rpc --provider mock --model mock-model`` with HOME pointing at a
# temp dir whose ``.pi/agent/models.json`` names an OpenAI-compatible server on 127.0.0.1. The
# scripted model below answers "TOOL" prompts with one ``write`` call, "SLOW" prompts with a slow
# stream, "RETRY <n>" prompts with n HTTP 503s first, and everything else with "Hello world".


def _pi_bin() -> str | None:
    import os
    import shutil

    found = os.environ.get("PI_BIN") or shutil.which("pi")
    return found if found and os.access(found, os.X_OK) else None


class _MockModel:
    """A loopback OpenAI Chat Completions server (SSE) in a daemon thread."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        owner = self
        self.failures_left: dict[str, int] = {}

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                owner.answer(self, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, handler: Any, body: dict[str, Any]) -> None:
        import time

        messages = body.get("messages", [])
        last: dict[str, Any] = next((m for m in reversed(messages) if m.get("role") == "user"), {})
        prompt = json.dumps(last.get("content"))
        has_tool_result = any(m.get("role") == "tool" for m in messages)
        if "RETRY" in prompt:
            left = self.failures_left.setdefault(prompt, int(prompt.split("RETRY ")[1][0]))
            if left > 0:
                self.failures_left[prompt] = left - 1
                handler.send_response(503)
                handler.send_header("content-type", "application/json")
                handler.end_headers()
                handler.wfile.write(b'{"error":{"message":"service unavailable"}}')
                return
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.end_headers()

        def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
            data = {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "mock-model",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            handler.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")
            handler.wfile.flush()

        try:
            if "TOOL" in prompt and not has_tool_result:
                chunk({"role": "assistant", "content": "Writing."})
                call = {"path": "hello.txt", "content": "hi\n"}
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "write", "arguments": json.dumps(call)},
                            }
                        ]
                    }
                )
                chunk({}, "tool_calls")
            elif "SLOW" in prompt:
                chunk({"role": "assistant", "content": "Slow"})
                for _ in range(40):
                    time.sleep(0.25)
                    chunk({"content": " x"})
                chunk({}, "stop")
            else:
                chunk({"role": "assistant", "content": "Hello"})
                chunk({"content": " world"})
                chunk({}, "stop")
            usage = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
            handler.wfile.write(
                b"data: "
                + json.dumps({"id": "c1", "choices": [], "usage": usage}).encode()
                + b"\n\ndata: [DONE]\n\n"
            )
        except OSError:
            return  # the client aborted the stream


def _snapshot(directory: Any) -> dict[str, tuple[int, float]]:
    out: dict[str, tuple[int, float]] = {}
    for path in directory.rglob("*.jsonl"):
        stat = path.stat()
        out[str(path)] = (stat.st_size, stat.st_mtime)
    return out


def _run_real(
    pi: str, home: Any, project: Any, req: SessionRequest, *, cancel_after_text: bool = False
) -> tuple[PiRpcSession, Actions]:
    """The IO shell in miniature: pipes, deadlines, stdin close, terminate."""
    import os
    import selectors
    import subprocess
    import time

    env = dict(os.environ, HOME=str(home), PI_OFFLINE="1", PI_TELEMETRY="0")
    argv = [pi, "--mode", "rpc", "--provider", "mock", "--model", "mock-model"]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=project,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    sess = PiRpcSession(graceful_shutdown_ms=3000, retry_window_ms=1500)
    total = Actions()
    begin = time.monotonic()
    deadline: float | None = None
    cancelled = False

    def now() -> float:
        return (time.monotonic() - begin) * 1000

    def apply(actions: Actions) -> None:
        nonlocal deadline
        total.extend(actions)
        assert proc.stdin is not None
        for frame in actions.frames:
            if not proc.stdin.closed:
                proc.stdin.write(frame)
                proc.stdin.flush()
        for control in actions.controls:
            if isinstance(control, CloseStdin) and not proc.stdin.closed:
                proc.stdin.close()
            elif isinstance(control, SetDeadline):
                deadline = control.at_ms

    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    try:
        apply(sess.start(req, now()))
        while total.finished is None:
            assert now() < 60_000, f"no end after 60 s: {total.events[-5:]}"
            wait = 0.2 if deadline is None else max(0.0, min(0.2, (deadline - now()) / 1000))
            if selector.select(wait):
                data = os.read(proc.stdout.fileno(), 65536)
                apply(sess.receive(data, now()) if data else sess.end_of_output(now()))
            if deadline is not None and now() >= deadline:
                apply(sess.tick(now()))
            if (
                cancel_after_text
                and not cancelled
                and any(isinstance(e, TextDelta) for e in total.events)
            ):
                cancelled = True
                apply(sess.cancel(now()))
        proc.wait(timeout=10)  # pi exits on stdin EOF well within the grace
    finally:
        selector.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return sess, total


@pytest.fixture
def real_pi(tmp_path: Any) -> Any:
    pi = _pi_bin()
    if pi is None:
        pytest.skip("the real pi CLI is not installed (set PI_BIN)")
    model = _MockModel()
    home = tmp_path / "home"
    (home / ".pi" / "agent").mkdir(parents=True)
    provider = {
        "baseUrl": f"http://127.0.0.1:{model.port}/v1",
        "api": "openai-completions",
        "apiKey": "sk-mock",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [
            {"id": "mock-model", "name": "Mock", "contextWindow": 128000, "maxTokens": 4096}
        ],
    }
    (home / ".pi" / "agent" / "models.json").write_text(
        json.dumps({"providers": {"mock": provider}})
    )
    (home / ".pi" / "agent" / "settings.json").write_text(
        json.dumps({"retry": {"baseDelayMs": 100, "maxRetries": 2}})
    )
    project = tmp_path / "project"
    project.mkdir()
    yield pi, home, project
    model.close()


@pytest.mark.posix
@pytest.mark.rule("PI-END-001", "PI-EVENT-006", "PI-RESUME-001", "PI-RESUME-003")
def test_real_pi_tool_run_then_resume(real_pi: Any) -> None:
    pi, home, project = real_pi
    before = _snapshot(home)
    sess, total = _run_real(pi, home, project, request(prompt="TOOL please", model=None))
    assert total.finished == Finished(RunStatus.COMPLETED), total.events
    types = [e.type for e in total.events]
    assert types[:3] == ["status", "status", "status"]
    assert "tool_use" in types and "tool_result" in types and "usage" in types
    assert (project / "hello.txt").read_text() == "hi\n"
    parent = sess.capture_session_file(before, _snapshot(home))
    assert parent is not None and parent.endswith(".jsonl")

    _, total = _run_real(pi, home, project, request(resume_session_id=parent, model=None))
    assert total.finished == Finished(RunStatus.COMPLETED), total.events
    assert [json.loads(f)["type"] for f in total.frames] == ["new_session", "prompt"]
    assert "".join(e.delta for e in total.events if isinstance(e, TextDelta)) == "Hello world"


@pytest.mark.posix
@pytest.mark.rule("PI-END-003")
def test_real_pi_retry_after_agent_end_completes(real_pi: Any) -> None:
    pi, home, project = real_pi
    # 3 failures: the OpenAI client retries twice itself, so pi sees one failed attempt.
    _, total = _run_real(pi, home, project, request(prompt="RETRY 3 then hello", model=None))
    assert total.finished == Finished(RunStatus.COMPLETED), total.events
    assert Status(label="retrying") in total.events
    assert any(isinstance(e, Error) for e in total.events)


@pytest.mark.posix
@pytest.mark.rule("PI-CANCEL-001")
def test_real_pi_abort(real_pi: Any) -> None:
    pi, home, project = real_pi
    _, total = _run_real(
        pi, home, project, request(prompt="SLOW please", model=None), cancel_after_text=True
    )
    assert total.finished == Finished(RunStatus.CANCELLED), total.events
    assert [json.loads(f)["type"] for f in total.frames] == ["prompt", "abort"]
    assert not [c for c in total.controls if isinstance(c, Terminate) and c.after_ms == 0]
