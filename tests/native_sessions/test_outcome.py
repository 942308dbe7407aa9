"""After the run: store, keep or clear the handle; reseed an expired one on the same agent.

Rules: SESSION-SPECIFY-001, SESSION-CAPTURE-001, SESSION-EXPIRED-001, SESSION-CANCEL-001,
SESSION-FAILED-001, SESSION-ADVANCE-001 (conformance/rules/sessions.py). Seed 001 §7, seed 000
§8, seed 000 §5.10, seed 002 §3.1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.defs.registry import get_agent_def
from harness.defs.types import ResumeStyle
from harness.events import Status, TextDelta
from harness.host.native_sessions import (
    EXPIRED_RESUME_ERROR_CODES,
    FreshReason,
    SessionAction,
    SessionPlanError,
    SessionStore,
    TranscriptMessage,
    TurnMode,
    TurnPlan,
    build_turn_prompt,
    captured_native_id,
    plan_turn,
    record_outcome,
    reseed_plan,
    resume_expired,
)
from harness.runner.status import RunOutcome
from tests.native_sessions.helpers import key_for, make_store, minted_ids, native_of, never_called

TRANSCRIPT = [
    TranscriptMessage("user", "first ask"),
    TranscriptMessage("assistant", "first answer"),
]


def first_turn(store: SessionStore, agent: str, cwd: Path, **factory: str) -> TurnPlan:
    defn = get_agent_def(agent)
    mint = minted_ids() if defn.resume_style is ResumeStyle.SPECIFY else never_called
    return plan_turn(store, "conv-1", key_for(defn, cwd), defn, new_session_id_factory=mint)


def resumed_turn(store: SessionStore, agent: str, cwd: Path, native: str) -> TurnPlan:
    plan = first_turn(store, agent, cwd)
    record_outcome(store, plan, "succeeded", native)
    again = first_turn(store, agent, cwd)
    assert again.mode is TurnMode.RESUME and again.resume_session_id == native
    return again


# --------------------------------------------------------------------------- specify / capture


@pytest.mark.rule("SESSION-SPECIFY-001")
def test_specify_success_stores_the_minted_id(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    plan = first_turn(store, "claude", tmp_path)
    update = record_outcome(store, plan, RunOutcome.SUCCEEDED, None)
    assert update.action is SessionAction.STORED
    assert update.record is not None and update.record.native_id == "minted-1"
    assert update.record.validated is True
    nxt = first_turn(store, "claude", tmp_path)
    assert nxt.mode is TurnMode.RESUME and nxt.resume_session_id == "minted-1"


@pytest.mark.rule("SESSION-SPECIFY-001")
def test_specify_ignores_the_echoed_request_id_as_evidence() -> None:
    events = [TextDelta(delta="hi")]
    assert captured_native_id(ResumeStyle.SPECIFY, events, "minted-1") is None
    events.append(Status(label="initializing", session_id="cli-said"))
    assert captured_native_id(ResumeStyle.SPECIFY, events, "minted-1") == "cli-said"


@pytest.mark.rule("SESSION-CAPTURE-001")
@pytest.mark.parametrize("agent", ["codex", "opencode", "deepseek-harness", "devin"])
def test_capture_stores_the_id_the_stream_reported(tmp_path: Path, agent: str) -> None:
    store = make_store(tmp_path)
    plan = first_turn(store, agent, tmp_path)
    events = [
        Status(label="initializing"),
        Status(label="running", session_id="thread-42"),
        TextDelta(delta="done"),
    ]
    native = captured_native_id(plan.resume_style, events, None)
    assert native == "thread-42"
    update = record_outcome(store, plan, "succeeded", native)
    assert update.action is SessionAction.STORED
    assert native_of(store, "conv-1") == "thread-42"
    assert first_turn(store, agent, tmp_path).resume_session_id == "thread-42"


@pytest.mark.rule("SESSION-CAPTURE-001")
def test_pi_session_file_is_the_handle(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    plan = first_turn(store, "pi", tmp_path)
    path = str(tmp_path / ".pi" / "sessions" / "2026-01-01_abc.jsonl")
    native = captured_native_id(plan.resume_style, [TextDelta(delta="x")], path)
    assert native == path
    record_outcome(store, plan, "succeeded", native)
    assert first_turn(store, "pi", tmp_path).resume_session_id == path


# --------------------------------------------------------------------------- expired


@pytest.mark.rule("SESSION-EXPIRED-001")
@pytest.mark.parametrize("agent", ["claude", "codex", "deepseek-harness", "pi"])
def test_expired_handle_is_cleared_and_reseeded_on_the_same_agent(
    tmp_path: Path, agent: str
) -> None:
    store = make_store(tmp_path)
    plan = resumed_turn(store, agent, tmp_path, "old-handle")
    update = record_outcome(store, plan, "failed", None, expired=True)
    assert update.action is SessionAction.CLEARED and update.reseed is True
    assert store.get("conv-1") is None
    retry = reseed_plan(plan, new_session_id_factory=minted_ids("reseed"))
    assert retry.runtime_id == plan.runtime_id == agent, "never another agent (seed 000 §8)"
    assert retry.key == plan.key and retry.resume_style is plan.resume_style
    assert retry.mode is TurnMode.FRESH and retry.reason is FreshReason.EXPIRED
    assert retry.resume_session_id is None
    expected_new = "reseed-1" if plan.resume_style is ResumeStyle.SPECIFY else None
    assert retry.new_session_id == expected_new
    prompt = build_turn_prompt(retry, TRANSCRIPT, "second ask", bootstrap="BOOT")
    assert "BOOT" in prompt and "first answer" in prompt and prompt.endswith("second ask")
    after = record_outcome(store, retry, "succeeded", "fresh-handle")
    assert after.record is not None and after.record.runtime_id == agent


@pytest.mark.rule("SESSION-EXPIRED-001")
def test_expired_is_detected_only_on_a_resume(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    fresh = first_turn(store, "deepseek-harness", tmp_path)
    for code in EXPIRED_RESUME_ERROR_CODES:
        assert resume_expired(fresh, code) is False
    resumed = resumed_turn(store, "deepseek-harness", tmp_path, "s1")
    assert resume_expired(resumed, "DSH_PROFILE_RESUME_REJECTED") is True
    assert resume_expired(resumed, "PI_PARENT_SESSION_FAILED") is True
    assert resume_expired(resumed, "RUN_INACTIVITY_TIMEOUT") is False
    assert resume_expired(resumed, None) is False
    pattern = r"no conversation found with session id"
    stderr = "No conversation found with session ID: s1\n"
    assert resume_expired(resumed, "RUN_EXIT_NONZERO", stderr=stderr, patterns=(pattern,))
    assert not resume_expired(fresh, "RUN_EXIT_NONZERO", stderr=stderr, patterns=(pattern,))


@pytest.mark.rule("SESSION-EXPIRED-001")
def test_expired_on_a_fresh_turn_clears_nothing(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    resumed_turn(store, "codex", tmp_path, "keep-me")
    other_key = key_for(get_agent_def("codex"), tmp_path, model="other-model")
    fresh = plan_turn(
        store, "conv-1", other_key, get_agent_def("codex"), new_session_id_factory=never_called
    )
    assert fresh.mode is TurnMode.FRESH
    update = record_outcome(store, fresh, "failed", None, expired=True)
    assert update.reseed is False
    assert native_of(store, "conv-1") == "keep-me"
    with pytest.raises(SessionPlanError):
        reseed_plan(fresh, new_session_id_factory=minted_ids())


@pytest.mark.rule("SESSION-EXPIRED-001")
def test_expired_clear_spares_a_newer_handle(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    plan = resumed_turn(store, "codex", tmp_path, "old")
    record_outcome(store, first_turn(store, "codex", tmp_path), "succeeded", "newer")
    record_outcome(store, plan, "failed", None, expired=True)
    assert native_of(store, "conv-1") == "newer"


# --------------------------------------------------------------------------- cancel / failure


@pytest.mark.rule("SESSION-CANCEL-001")
@pytest.mark.parametrize("status", ["cancelled", "failed", RunOutcome.CANCELLED, "canceled"])
def test_cancel_after_a_validated_session_keeps_the_handle(tmp_path: Path, status: str) -> None:
    store = make_store(tmp_path)
    plan = resumed_turn(store, "deepseek-harness", tmp_path, "dsh-1")
    update = record_outcome(store, plan, status, "dsh-1")
    assert update.action is SessionAction.KEPT
    assert update.record is not None and update.record.native_id == "dsh-1"
    nxt = first_turn(store, "deepseek-harness", tmp_path)
    assert nxt.mode is TurnMode.RESUME and nxt.resume_session_id == "dsh-1"
    update = record_outcome(store, nxt, status, None)
    assert update.action is SessionAction.KEPT
    assert first_turn(store, "deepseek-harness", tmp_path).resume_session_id == "dsh-1"


@pytest.mark.rule("SESSION-CANCEL-001")
def test_cancel_after_the_session_frame_of_a_first_turn_stores_it(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    plan = first_turn(store, "deepseek-harness", tmp_path)
    events = [Status(label="working", session_id="dsh-new"), TextDelta(delta="partial")]
    native = captured_native_id(plan.resume_style, events, "dsh-new")
    update = record_outcome(store, plan, "cancelled", native)
    assert update.action is SessionAction.STORED
    nxt = first_turn(store, "deepseek-harness", tmp_path)
    assert nxt.mode is TurnMode.RESUME and nxt.resume_session_id == "dsh-new"


@pytest.mark.rule("SESSION-FAILED-001")
@pytest.mark.parametrize("agent", ["claude", "codex", "deepseek-harness", "pi", "kiro"])
@pytest.mark.parametrize("status", ["failed", "cancelled"])
def test_failure_before_a_validated_session_stores_nothing(
    tmp_path: Path, agent: str, status: str
) -> None:
    store = make_store(tmp_path)
    plan = first_turn(store, agent, tmp_path)
    native = captured_native_id(plan.resume_style, [Status(label="initializing")], None)
    update = record_outcome(store, plan, status, native)
    assert update.action is SessionAction.UNCHANGED
    assert store.records() == {}
    assert first_turn(store, agent, tmp_path).mode is TurnMode.FRESH


@pytest.mark.rule("SESSION-FAILED-001")
def test_result_status_is_checked(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    plan = first_turn(store, "codex", tmp_path)
    with pytest.raises(SessionPlanError):
        record_outcome(store, plan, "maybe", "x")


# --------------------------------------------------------------------------- advance


@pytest.mark.rule("SESSION-ADVANCE-001")
def test_a_turn_on_a_stateless_agent_retires_the_stored_session(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    resumed_turn(store, "claude", tmp_path, "claude-1")
    plain = get_agent_def("qwen")
    plan = plan_turn(
        store, "conv-1", key_for(plain, tmp_path), plain, new_session_id_factory=never_called
    )
    update = record_outcome(store, plan, "succeeded", None)
    assert update.action is SessionAction.CLEARED
    back = first_turn(store, "claude", tmp_path)
    assert back.mode is TurnMode.FRESH, "claude's session missed the qwen turn"


@pytest.mark.rule("SESSION-ADVANCE-001")
def test_ambiguous_pi_capture_on_success_clears_the_old_handle(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    resumed_turn(store, "pi", tmp_path, "/p/.pi/sessions/a.jsonl")
    key = key_for(get_agent_def("pi"), tmp_path, model="another")
    plan = plan_turn(store, "conv-1", key, get_agent_def("pi"), new_session_id_factory=never_called)
    assert plan.mode is TurnMode.FRESH
    update = record_outcome(store, plan, "succeeded", None)
    assert update.action is SessionAction.CLEARED
    assert store.records() == {}
