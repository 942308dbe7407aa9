"""The AMR native session continuation (seed 000 "AMR compaction continuation (ACP
extension v1)"), sans-IO: the contract functions, the interrupted prompt, the continuing
session, and AMR's model-unavailable failure (ref §2.6 step 3).

The agent frames follow Open Design's contract (``amr-continuation.ts``) and its test
agent: the interrupted prompt is answered with ``-32600`` "opencode compaction
continuation ended before prompt completion" and structured ``data``; the continuing
process loads the durable session and sends ``_session/continue`` with only the cursor.
Every frame the session writes goes through ``tests/protocols/test_acp.py``'s independent
schema check (``play``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.defs.registry import BUILTIN_DEFS
from harness.events import Status, TextDelta, ToolResult, ToolUse, Usage
from harness.protocols.acp.amr_extension import (
    CAPABILITY,
    ERROR_CODE,
    ContinuationCursor,
    ContinuationEvidence,
    is_continuation_incomplete,
    parse_continuation_evidence,
    supports_native_continue,
)
from harness.protocols.acp.continuation import (
    CONTINUATION_EXHAUSTED,
    CONTINUATION_HISTORY,
    CONTINUATION_INCOMPLETE,
    CONTINUATION_UNSUPPORTED,
)
from harness.protocols.acp.session import AcpSession
from harness.protocols.base import Actions, Finished, RunStatus
from harness.protocols.peer import Cancel, Expect, Send, Step
from tests.protocols.test_acp import (
    CWD,
    EXPECT_INIT,
    SID,
    error,
    failure,
    finished,
    init_result,
    new_session,
    play,
    prompt_done,
    request,
    result,
    tool_call,
    tool_update,
    update,
)

DURABLE = "ses_durable01"
#: The runtime the AMR def accepts evidence from (``acp.native_continue_runtime``).
RUNTIME = "opencode"
SID2 = "acp-second"
LEGACY = "opencode compaction continuation ended before prompt completion"
CURSOR = {
    "version": 1,
    "userMessageId": "msg_user1",
    "assistantMessageId": "msg_asst1",
    "toolResultsCommitted": True,
}
EVIDENCE = ContinuationEvidence(DURABLE, ContinuationCursor("msg_user1", "msg_asst1"))


def incomplete(**patch: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "kind": "opencode_continuation_incomplete",
        "code": ERROR_CODE,
        "runtime": "opencode",
        "phase": "post_tool_resume",
        "retryable": False,
        "openCodeSessionId": DURABLE,
        "continuation": dict(CURSOR),
    }
    data.update(patch)
    return data


def amr_init(version: Any = 1, *, load: bool = True) -> dict[str, Any]:
    out = init_result(load=load)
    if version is not None:
        out["agentCapabilities"]["_meta"] = {CAPABILITY: {"version": version}}
    return out


def amr_session(**kwargs: Any) -> AcpSession:
    """A session configured as the AMR def configures it: it takes OpenCode's evidence."""
    return new_session(native_continue_runtime=RUNTIME, **kwargs)


def expect_prompt_then(*steps: Step, init: dict[str, Any] | None = None) -> list[Step]:
    """Handshake of the first process (session/new names the durable id), the prompt."""
    return [
        EXPECT_INIT,
        Send(result(1, init if init is not None else amr_init())),
        Expect({"id": 2, "method": "session/new"}, "session/new"),
        Send(result(2, {"sessionId": SID, "openCodeSessionId": DURABLE})),
        Expect({"id": 3, "method": "session/prompt"}, "session/prompt"),
        *steps,
    ]


WRITE_DONE: list[Step] = [
    Send(tool_call("write-1", kind="edit", status="in_progress", rawInput={"path": "a.txt"})),
    Send(tool_update("write-1", status="completed")),
]


def interrupted(data: Any = None, request_id: int = 3) -> Send:
    return Send(error(request_id, -32600, LEGACY, incomplete() if data is None else data))


# -- the contract functions --------------------------------------------------------------


@pytest.mark.rule("ACP-AMR-CONTINUE-002")
@pytest.mark.parametrize(
    ("caps", "supported"),
    [
        ({"loadSession": True, "_meta": {CAPABILITY: {"version": 1}}}, True),
        ({"loadSession": False, "_meta": {CAPABILITY: {"version": 1}}}, False),
        ({"loadSession": True}, False),
        ({"loadSession": True, "_meta": {CAPABILITY: {"version": 2}}}, False),
        ({"loadSession": True, "_meta": {CAPABILITY: {"version": "1"}}}, False),
        ({"loadSession": True, "_meta": {CAPABILITY: {"version": True}}}, False),
        ({"loadSession": True, "_meta": {CAPABILITY: 1}}, False),
        (None, False),
        ([], False),
    ],
)
def test_the_extension_needs_load_session_and_version_1(caps: Any, supported: bool) -> None:
    assert supports_native_continue(caps) is supported


@pytest.mark.rule("ACP-AMR-CONTINUE-006")
def test_legacy_wording_is_classified_on_the_failure_channel_only() -> None:
    assert is_continuation_incomplete(LEGACY, None)
    assert is_continuation_incomplete(f"json-rpc id 4: opencode event stream: {LEGACY}", {})
    assert is_continuation_incomplete("something else", {"code": ERROR_CODE})
    assert not is_continuation_incomplete(f"I saw: {LEGACY}", {})
    assert not is_continuation_incomplete(f"{LEGACY} and more", None)
    # Classified, but never evidence: the words authorize nothing.
    assert parse_continuation_evidence({"message": LEGACY}, RUNTIME) is None


@pytest.mark.rule("ACP-AMR-CONTINUE-006")
@pytest.mark.parametrize(
    "patch",
    [
        {"phase": "tool_outstanding"},
        {"kind": "opencode_prompt_error"},
        {"runtime": "claude"},
        {"code": "OTHER"},
        {"openCodeSessionId": ""},
        {"openCodeSessionId": "   "},
        {"openCodeSessionId": "s" * 257},
        {"openCodeSessionId": 7},
        {"continuation": {**CURSOR, "version": 2}},
        {"continuation": {**CURSOR, "toolResultsCommitted": False}},
        {"continuation": {**CURSOR, "assistantMessageId": ""}},
        {"continuation": {**CURSOR, "userMessageId": None}},
        {"continuation": None},
    ],
)
def test_only_complete_versioned_exact_evidence_is_accepted(patch: dict[str, Any]) -> None:
    assert parse_continuation_evidence(incomplete(), RUNTIME) == EVIDENCE
    assert parse_continuation_evidence(incomplete(**patch), RUNTIME) is None


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
        max_leaves=12,
    )
)
@settings(max_examples=200)
def test_the_contract_functions_are_total(value: Any) -> None:
    supports_native_continue(value)
    is_continuation_incomplete("", value)
    assert parse_continuation_evidence(value, RUNTIME) is None or isinstance(value, dict)


def test_the_cursor_goes_back_on_the_wire_unchanged() -> None:
    assert EVIDENCE.cursor.to_wire() == CURSOR


# -- the interrupted prompt (first process) ----------------------------------------------


@pytest.mark.rule("ACP-AMR-CONTINUE-001")
def test_complete_evidence_after_terminal_tools_offers_one_continuation() -> None:
    sess, res = play(expect_prompt_then(*WRITE_DONE, interrupted()), sess=amr_session())
    code, text, rule = failure(res)
    assert (code, rule) == (CONTINUATION_INCOMPLETE, "ACP-AMR-CONTINUE-001")
    assert DURABLE in text and text.startswith("json-rpc id 3: ")
    assert finished(res).error is not None and finished(res).error.retryable is False  # type: ignore[union-attr]
    assert sess.continuation == EVIDENCE
    assert sess.durable_session_id == DURABLE and sess.session_id == SID
    assert sess.counters["continuations_offered"] == 1
    # The tool ran once and is transcribed once, as completed.
    assert [type(e) for e in res.events if isinstance(e, (ToolUse, ToolResult))] == [
        ToolUse,
        ToolResult,
    ]
    assert not [e for e in res.events if isinstance(e, ToolResult) and e.is_error]
    follow = sess.continuation_session()
    assert isinstance(follow, AcpSession) and follow.continuing == EVIDENCE


@pytest.mark.rule("ACP-AMR-CONTINUE-002")
@pytest.mark.parametrize("version", [None, 2, "1"])
def test_no_continuation_unless_initialize_negotiated_version_1(version: Any) -> None:
    sess, res = play(
        expect_prompt_then(*WRITE_DONE, interrupted(), init=amr_init(version)), sess=amr_session()
    )
    code, text, rule = failure(res)
    assert (code, rule) == (CONTINUATION_INCOMPLETE, "ACP-AMR-CONTINUE-002")
    assert "not continued" in text
    assert sess.continuation is None and sess.continuation_session() is None


@pytest.mark.rule("ACP-AMR-CONTINUE-006")
@pytest.mark.parametrize(
    "data",
    [
        {"kind": "opencode_prompt_error"},
        {"kind": "opencode_prompt_error", "retryable": True},
        None,
        incomplete(phase="tool_outstanding"),
    ],
)
def test_legacy_or_partial_evidence_is_classified_never_continued_never_retried(
    data: Any,
) -> None:
    frame = error(3, -32600, LEGACY) if data is None else error(3, -32600, LEGACY, data)
    sess, res = play(expect_prompt_then(*WRITE_DONE, Send(frame)), sess=amr_session())
    code, _text, rule = failure(res)
    assert (code, rule) == (CONTINUATION_INCOMPLETE, "ACP-AMR-CONTINUE-006")
    assert finished(res).error.retryable is False  # type: ignore[union-attr]
    assert sess.continuation is None


@pytest.mark.rule("ACP-AMR-CONTINUE-003")
def test_evidence_for_another_session_is_not_continued() -> None:
    sess, res = play(
        expect_prompt_then(*WRITE_DONE, interrupted(incomplete(openCodeSessionId="ses_other"))),
        sess=amr_session(),
    )
    code, text, rule = failure(res)
    assert (code, rule) == (CONTINUATION_INCOMPLETE, "ACP-AMR-CONTINUE-003")
    assert "ses_other" in text and sess.continuation is None


@pytest.mark.rule("ACP-AMR-CONTINUE-005")
@pytest.mark.parametrize(
    ("steps", "needle"),
    [
        # The agent's evidence says committed; our own frames say the write never ended.
        ([Send(tool_call("write-1", kind="edit", status="in_progress"))], "write-1"),
        (
            [*WRITE_DONE, Send(tool_call("shell-2", kind="execute", status="pending"))],
            "shell-2",
        ),
        # An update for a call no tool_call announced.
        ([*WRITE_DONE, Send(tool_update("ghost-9", status="completed"))], "ghost-9"),
    ],
)
def test_outstanding_or_unknown_tools_forbid_the_continuation(
    steps: list[Step], needle: str
) -> None:
    sess, res = play(expect_prompt_then(*steps, interrupted()), sess=amr_session())
    code, text, rule = failure(res)
    assert (code, rule) == (CONTINUATION_INCOMPLETE, "ACP-AMR-CONTINUE-005")
    assert needle in text and sess.continuation is None
    # The unfinished row is closed as an error, once.
    results = [e for e in res.events if isinstance(e, ToolResult)]
    assert len({e.tool_use_id for e in results}) == len(results)


@pytest.mark.rule("ACP-AMR-CONTINUE-007")
def test_cancellation_stops_the_run_without_a_continuation() -> None:
    sess, res = play(
        expect_prompt_then(
            *WRITE_DONE,
            Cancel(),
            Expect({"method": "session/cancel"}, "session/cancel"),
            interrupted(),
        ),
        sess=amr_session(),
    )
    assert finished(res).status is RunStatus.CANCELLED
    assert sess.continuation is None and sess.continuation_session() is None


@given(st.integers(min_value=1, max_value=64))
@settings(max_examples=25, deadline=None)
def test_any_chunking_gives_the_same_interrupted_run(chunk: int) -> None:
    script = expect_prompt_then(*WRITE_DONE, interrupted())
    _, whole = play(script, sess=amr_session())
    sess, pieces = play(script, sess=amr_session(), chunk_size=chunk)
    assert pieces.events == whole.events and pieces.frames == whole.frames
    assert sess.continuation == EVIDENCE


# -- the continuing process ----------------------------------------------------------------


def expect_continue(request_id: int, sid: str = SID2) -> Expect:
    def only_the_cursor(frame: Any) -> bool:
        return frame == {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "_session/continue",
            "params": {"sessionId": sid, "continuation": CURSOR},
        }

    return Expect(only_the_cursor, "_session/continue with only the cursor")


def continuing(**kwargs: Any) -> AcpSession:
    return amr_session(continuing=EVIDENCE, **kwargs)


EXPECT_LOAD = Expect(
    {
        "id": 2,
        "method": "session/load",
        "params": {"sessionId": DURABLE, "cwd": CWD, "mcpServers": []},
    },
    "session/load of the durable session",
)
#: The continuing process up to the load's answer (no history replayed).
LOADED: list[Step] = [
    EXPECT_INIT,
    Send(result(1, amr_init())),
    EXPECT_LOAD,
    Send(result(2, {"sessionId": SID2, "openCodeSessionId": DURABLE})),
]
HISTORY: list[Step] = [
    Send(
        update(
            {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "p"}},
            sid=SID2,
        )
    ),
    Send(
        update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "write-1",
                "title": "Write",
                "status": "completed",
            },
            sid=SID2,
        )
    ),
]


@pytest.mark.rule("ACP-AMR-CONTINUE-001")
def test_the_new_process_loads_the_durable_session_and_sends_only_the_cursor() -> None:
    script: list[Step] = [
        EXPECT_INIT,
        Send(result(1, amr_init())),
        EXPECT_LOAD,
        *HISTORY,
        Send(result(2, {"sessionId": SID2, "openCodeSessionId": DURABLE})),
        expect_continue(3),
        Send(
            update(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "Recovered."},
                },
                sid=SID2,
            )
        ),
        Send(prompt_done(3, usage={"inputTokens": 5, "outputTokens": 2, "totalTokens": 7})),
    ]
    sess, res = play(script, sess=continuing())
    assert finished(res) == Finished(RunStatus.COMPLETED)
    assert [f.get("method") for f in res.frames] == [
        "initialize",
        "session/load",
        "_session/continue",
    ]
    assert not any("prompt" in (f.get("params") or {}) for f in res.frames)
    first = res.events[0]
    assert isinstance(first, Status) and first.label == "continuation"
    assert first.session_id == DURABLE and "msg_user1" in (first.detail or "")
    # History replayed by the load is not this turn's; the continued loop is.
    assert [e.delta for e in res.events if isinstance(e, TextDelta)] == ["Recovered."]
    assert not [e for e in res.events if isinstance(e, ToolUse)]
    assert next(e for e in res.events if isinstance(e, Usage)).stop_reason == "end_turn"
    assert sess.session_id == SID2 and sess.durable_session_id == DURABLE
    assert sess.counters["replayed_updates"] == 2
    # It is the run's one continuation: it offers none itself.
    assert sess.continuation_session() is None


@pytest.mark.rule("ACP-AMR-CONTINUE-001", "ACP-MODEL-001")
def test_model_selection_precedes_the_continue() -> None:
    script: list[Step] = [
        *LOADED,
        Expect(
            {
                "id": 3,
                "method": "session/set_model",
                "params": {"sessionId": SID2, "modelId": "m1"},
            },
            "set_model",
        ),
        Send(result(3, {})),
        expect_continue(4),
        Send(prompt_done(4)),
    ]
    _, res = play(script, request(model="m1"), sess=continuing())
    assert finished(res) == Finished(RunStatus.COMPLETED)


@pytest.mark.rule("ACP-AMR-CONTINUE-002")
@pytest.mark.parametrize("init", [amr_init(None), amr_init(2), amr_init(1, load=False)])
def test_the_new_process_must_negotiate_the_extension_too(init: dict[str, Any]) -> None:
    _, res = play([EXPECT_INIT, Send(result(1, init))], sess=continuing())
    code, _text, rule = failure(res)
    assert (code, rule) == (CONTINUATION_UNSUPPORTED, "ACP-AMR-CONTINUE-002")
    assert [f.get("method") for f in res.frames] == ["initialize"]


@pytest.mark.rule("ACP-AMR-CONTINUE-003")
def test_missing_history_fails_and_never_starts_afresh() -> None:
    gone = error(2, -32600, "session gone", {"kind": "resume_failed", "retryable": True})
    _, res = play(
        [EXPECT_INIT, Send(result(1, amr_init())), EXPECT_LOAD, Send(gone)], sess=continuing()
    )
    code, text, rule = failure(res)
    assert (code, rule) == (CONTINUATION_HISTORY, "ACP-AMR-CONTINUE-003")
    assert "session gone" in text and finished(res).error.retryable is False  # type: ignore[union-attr]
    assert [f.get("method") for f in res.frames] == ["initialize", "session/load"]


@pytest.mark.rule("ACP-AMR-CONTINUE-003")
def test_changed_history_fails_before_the_continue() -> None:
    _, res = play(
        [
            EXPECT_INIT,
            Send(result(1, amr_init())),
            EXPECT_LOAD,
            Send(result(2, {"sessionId": SID2, "openCodeSessionId": "ses_changed"})),
        ],
        sess=continuing(),
    )
    code, text, rule = failure(res)
    assert (code, rule) == (CONTINUATION_HISTORY, "ACP-AMR-CONTINUE-003")
    assert "ses_changed" in text
    assert "_session/continue" not in [f.get("method") for f in res.frames]


@pytest.mark.rule("ACP-AMR-CONTINUE-004")
def test_a_second_interruption_exhausts_the_recovery() -> None:
    script: list[Step] = [
        *LOADED,
        expect_continue(3),
        Send(
            update(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "write-2",
                    "title": "Write",
                    "status": "completed",
                },
                sid=SID2,
            )
        ),
        interrupted(request_id=3),
    ]
    sess, res = play(script, sess=continuing())
    code, _text, rule = failure(res)
    assert (code, rule) == (CONTINUATION_EXHAUSTED, "ACP-AMR-CONTINUE-004")
    assert sess.continuation is None and sess.continuation_session() is None


@pytest.mark.rule("ACP-ERROR-001")
def test_an_unsafe_continuation_refusal_is_an_ordinary_failure() -> None:
    script: list[Step] = [
        *LOADED,
        expect_continue(3),
        Send(error(3, -32600, "unsafe continuation")),
    ]
    _, res = play(script, sess=continuing())
    code, text, rule = failure(res)
    assert (code, rule) == ("AGENT_EXECUTION_FAILED", "ACP-ERROR-001")
    assert text == "json-rpc id 3: unsafe continuation"


# -- AMR's model-unavailable failure (ref §2.6 step 3) -----------------------------------------


@pytest.mark.rule("ACP-MODEL-003")
@pytest.mark.parametrize("code", [-32603, -32601, -32602])
def test_a_refused_model_fails_with_the_defs_code_instead_of_the_default(code: int) -> None:
    sess = new_session(model_unavailable_error_code="AMR_MODEL_UNAVAILABLE")
    script: list[Step] = [
        EXPECT_INIT,
        Send(result(1, init_result())),
        Expect({"id": 2, "method": "session/new"}, "session/new"),
        Send(result(2, {"sessionId": SID})),
        Expect({"id": 3, "method": "session/set_model", "params": {"modelId": "gone"}}, "set"),
        Send(error(3, code, "model not available")),
    ]
    _, res = play(script, request(model="gone"), sess=sess)
    got, text, rule = failure(res)
    assert (got, rule) == ("AMR_MODEL_UNAVAILABLE", "ACP-MODEL-003")
    assert "model not available" in text and "choose another model" in text
    assert finished(res).error.retryable is False  # type: ignore[union-attr]
    assert "session/prompt" not in [f.get("method") for f in res.frames]
    assert not [e for e in res.events if isinstance(e, Status) and e.model == "default"]


@pytest.mark.rule("ACP-MODEL-003", "ACP-DEF-001")
def test_only_the_amr_def_names_a_model_unavailable_code() -> None:
    named = {
        d.id: d.acp.model_unavailable_error_code
        for d in BUILTIN_DEFS
        if d.acp.model_unavailable_error_code
    }
    assert named == {"amr": "AMR_MODEL_UNAVAILABLE"}
    amr = next(d for d in BUILTIN_DEFS if d.id == "amr")
    assert AcpSession.from_def(amr).config.model_unavailable_error_code == ("AMR_MODEL_UNAVAILABLE")


# -- robustness --------------------------------------------------------------------------------

_CONTINUATION_FRAMES = st.sampled_from(
    [
        result(1, amr_init()),
        result(1, amr_init(2)),
        result(2, {"sessionId": SID, "openCodeSessionId": DURABLE}),
        result(2, {"sessionId": SID2, "openCodeSessionId": "ses_changed"}),
        result(2, {"sessionId": SID2}),
        error(2, -32600, "session gone", {"kind": "resume_failed", "retryable": True}),
        error(3, -32600, LEGACY, incomplete()),
        error(3, -32600, LEGACY, incomplete(phase="other")),
        error(3, -32600, LEGACY),
        error(3, -32600, "unsafe continuation"),
        prompt_done(3),
        tool_call("w", kind="edit", status="in_progress"),
        tool_update("w", status="completed"),
        tool_update("ghost", status="completed"),
        update(
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}},
            sid=SID2,
        ),
        b"not json\n",
        b'{"jsonrpc":"2.0","id":3,"error":',
    ]
)


@pytest.mark.rule("ACP-ROBUST-001", "ACP-AMR-CONTINUE-001")
@settings(max_examples=200, deadline=None)
@given(
    st.lists(_CONTINUATION_FRAMES | st.binary(max_size=24), max_size=10),
    st.booleans(),
    st.booleans(),
)
def test_any_frames_end_once_and_offer_a_continuation_only_when_earned(
    items: list[Any], continuing_mode: bool, cancel: bool
) -> None:
    sess = continuing() if continuing_mode else amr_session()
    out = Actions()
    out.extend(sess.start(request(), 0))
    wire = b"".join(i if isinstance(i, bytes) else json.dumps(i).encode() + b"\n" for i in items)
    half = len(wire) // 2
    out.extend(sess.receive(wire[:half], 1))
    if cancel:
        out.extend(sess.cancel(2))
    out.extend(sess.receive(wire[half:], 3))
    out.extend(sess.tick(10**9))
    out.extend(sess.end_of_output(10**9 + 1))
    done = [c for c in out.controls if isinstance(c, Finished)]
    assert len(done) == 1 and out.controls[-1] is done[0]
    if sess.continuation is not None:
        # Earned only by the interrupted prompt of a first process, never after a cancel.
        assert not continuing_mode and not cancel
        assert done[0].error is not None and done[0].error.rule == "ACP-AMR-CONTINUE-001"
        assert sess.continuation_session() is not None
    else:
        assert sess.continuation_session() is None
    for frame in out.frames:
        sent = json.loads(frame)
        assert "prompt" not in sent.get("params", {}) or sent.get("method") == "session/prompt"


@pytest.mark.rule("ACP-AMR-CONTINUE-002", "ACP-DEF-001")
def test_only_a_def_that_names_the_runtime_continues() -> None:
    sess, res = play(expect_prompt_then(*WRITE_DONE, interrupted()))  # no runtime named
    code, text, rule = failure(res)
    assert (code, rule) == (CONTINUATION_INCOMPLETE, "ACP-AMR-CONTINUE-002")
    assert "acp.native_continue_runtime" in text and sess.continuation is None
    named = {
        d.id: d.acp.native_continue_runtime for d in BUILTIN_DEFS if d.acp.native_continue_runtime
    }
    assert named == {"amr": RUNTIME}
    amr = next(d for d in BUILTIN_DEFS if d.id == "amr")
    _, from_def = play(
        expect_prompt_then(*WRITE_DONE, interrupted()), sess=AcpSession.from_def(amr)
    )
    assert failure(from_def)[2] == "ACP-AMR-CONTINUE-001"
