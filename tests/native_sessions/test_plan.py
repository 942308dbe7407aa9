"""Planning a turn: fresh with bootstrap, or a healthy resume with only the new turn.

Rules: SESSION-COMPAT-001, SESSION-COMPAT-002, SESSION-RESUME-001, SESSION-FRESH-001,
SESSION-SPECIFY-001, SESSION-CAPTURE-001 (conformance/rules/sessions.py). Seed 001 §7-§8,
seed 002 §3.1.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from harness.defs.registry import get_agent_def
from harness.defs.types import AgentDef, ResumeStyle, VersionPolicy
from harness.host.native_sessions import (
    CompatibilityKey,
    FreshReason,
    SessionPlanError,
    SessionRecord,
    SessionStore,
    TranscriptMessage,
    TurnMode,
    build_turn_prompt,
    compatibility_key,
    model_route,
    plan_turn,
    record_outcome,
    version_family,
)
from harness.runtime.detect import DetectionResult
from tests.native_sessions.helpers import key_for, make_store, minted_ids, never_called

TRANSCRIPT = [
    TranscriptMessage("user", "Make a landing page."),
    TranscriptMessage("assistant", "Wrote index.html."),
]
BOOTSTRAP = "SYSTEM: you are the Open Design agent."


def stored(
    tmp_path: Path, agent: str, native: str = "sess-1", **key_args: str
) -> tuple[SessionStore, AgentDef, CompatibilityKey]:
    store = make_store(tmp_path)
    defn = get_agent_def(agent)
    key = key_for(defn, tmp_path, **key_args)
    store.put(
        SessionRecord(
            conversation_id=key.conversation_id,
            runtime_id=defn.id,
            resume_style=defn.resume_style,
            native_id=native,
            compatibility=key,
            validated=True,
        )
    )
    return store, defn, key


# --------------------------------------------------------------------------- SESSION-RESUME-001


@pytest.mark.rule("SESSION-RESUME-001")
@pytest.mark.parametrize("agent", ["claude", "codex", "deepseek-harness", "pi", "devin"])
def test_healthy_record_resumes_with_only_the_new_turn(tmp_path: Path, agent: str) -> None:
    store, defn, key = stored(tmp_path, agent)
    plan = plan_turn(store, "conv-1", key, defn, new_session_id_factory=never_called)
    assert plan.mode is TurnMode.RESUME
    assert plan.reason is None and plan.bootstrap is False
    assert plan.resume_session_id == "sess-1"
    assert plan.new_session_id is None
    prompt = build_turn_prompt(plan, TRANSCRIPT, "Make the header blue.", bootstrap=BOOTSTRAP)
    assert prompt == "Make the header blue."


# --------------------------------------------------------------------------- SESSION-COMPAT-001

KEY_FIELDS = [f.name for f in dataclasses.fields(CompatibilityKey)]


@pytest.mark.rule("SESSION-COMPAT-001")
@pytest.mark.parametrize(
    "field", [f for f in KEY_FIELDS if f not in ("conversation_id", "runtime_id")]
)
def test_any_key_difference_starts_fresh_with_bootstrap(tmp_path: Path, field: str) -> None:
    store, defn, key = stored(tmp_path, "deepseek-harness")
    current = getattr(key, field)
    changed = (
        dataclasses.replace(current, version="9.9.9")
        if field == "executable_identity"
        else f"{current}-changed"
    )
    new_key = dataclasses.replace(key, **{field: changed})
    plan = plan_turn(store, "conv-1", new_key, defn, new_session_id_factory=never_called)
    assert plan.mode is TurnMode.FRESH
    assert plan.reason is FreshReason.KEY_MISMATCH
    assert plan.mismatched == (field,)
    assert plan.resume_session_id is None
    prompt = build_turn_prompt(plan, TRANSCRIPT, "Next.", bootstrap=BOOTSTRAP)
    assert prompt.startswith(BOOTSTRAP) and "Wrote index.html." in prompt


@pytest.mark.rule("SESSION-COMPAT-001")
def test_record_of_another_runtime_is_not_resumed(tmp_path: Path) -> None:
    store, _, _ = stored(tmp_path, "claude")
    codex = get_agent_def("codex")
    plan = plan_turn(
        store, "conv-1", key_for(codex, tmp_path), codex, new_session_id_factory=never_called
    )
    assert plan.mode is TurnMode.FRESH
    assert plan.reason is FreshReason.STYLE_CHANGED


@pytest.mark.rule("SESSION-COMPAT-001")
def test_same_style_other_runtime_is_a_key_mismatch(tmp_path: Path) -> None:
    store, _, _ = stored(tmp_path, "codex")
    other = get_agent_def("opencode")  # also capture-style
    plan = plan_turn(
        store, "conv-1", key_for(other, tmp_path), other, new_session_id_factory=never_called
    )
    assert plan.reason is FreshReason.KEY_MISMATCH
    assert "runtime_id" in plan.mismatched


@pytest.mark.rule("SESSION-COMPAT-001")
def test_unvalidated_record_is_never_resumed(tmp_path: Path) -> None:
    store, defn, key = stored(tmp_path, "deepseek-harness")
    rec = store.get("conv-1")
    assert rec is not None
    store.put(dataclasses.replace(rec, validated=False))
    plan = plan_turn(store, "conv-1", key, defn, new_session_id_factory=never_called)
    assert plan.mode is TurnMode.FRESH and plan.reason is FreshReason.NOT_VALIDATED


@pytest.mark.rule("SESSION-COMPAT-001")
def test_key_must_describe_this_turn(tmp_path: Path) -> None:
    store, defn, key = stored(tmp_path, "deepseek-harness")
    with pytest.raises(SessionPlanError):
        plan_turn(store, "conv-2", key, defn, new_session_id_factory=never_called)
    with pytest.raises(SessionPlanError):
        plan_turn(
            store, "conv-1", key, get_agent_def("claude"), new_session_id_factory=never_called
        )


# --------------------------------------------------------------------------- SESSION-COMPAT-002


@pytest.mark.rule("SESSION-COMPAT-002")
def test_cwd_is_canonical(tmp_path: Path) -> None:
    real = tmp_path / "project"
    real.mkdir()
    try:
        os.symlink(real, tmp_path / "alias", target_is_directory=True)
    except (OSError, NotImplementedError) as exc:
        pytest.skip(f"cannot create symlinks here: {exc}")
    defn = get_agent_def("claude")
    a = key_for(defn, real)
    b = key_for(defn, tmp_path / "alias")
    c = key_for(defn, tmp_path / "project" / ".." / "project")
    assert a == b == c
    assert a.canonical_cwd == os.path.realpath(real)
    other = tmp_path / "other"
    other.mkdir()
    assert key_for(defn, other).mismatches(a) == ("canonical_cwd",)


@pytest.mark.rule("SESSION-COMPAT-002")
def test_model_route_normalization() -> None:
    assert model_route(None) == model_route("default") == model_route("  ") == "default"
    assert model_route("deepseek-chat", "deepseek-official") == "deepseek-official/deepseek-chat"
    assert model_route("deepseek-official/deepseek-chat", "deepseek-official") == (
        "deepseek-official/deepseek-chat"
    )
    assert model_route("gpt-5") != model_route("gpt-5.1")


@pytest.mark.rule("SESSION-COMPAT-002")
def test_key_from_detection_carries_executable_and_family(tmp_path: Path) -> None:
    base = get_agent_def("deepseek-harness")
    policy = VersionPolicy(
        supported_versions=("0.1.2-rc.1",), supported_version_pattern=r"0\.2\.\d+"
    )
    defn = dataclasses.replace(base, version_policy=policy)
    detection = DetectionResult(
        id=defn.id,
        name=defn.name,
        available=True,
        path="/home/u/.local/bin/dsh",
        launch_path="/home/u/.local/lib/dsh/bin/dsh",
        version="0.1.2-rc.1",
        companion_version="open-design-plugin-3",
    )
    key = compatibility_key(
        conversation_id="c",
        defn=defn,
        cwd=str(tmp_path),
        detection=detection,
        protocol_generation=1,
    )
    assert key.executable_identity is not None
    assert key.executable_identity.path == "/home/u/.local/lib/dsh/bin/dsh"
    assert key.executable_identity.version == "0.1.2-rc.1"
    assert key.tested_family == "0.1.2-rc.1"
    assert key.plugin_generation == "open-design-plugin-3"
    assert key.protocol_generation == "1"
    assert version_family(policy, "0.2.7") == r"pattern:0\.2\.\d+"
    assert version_family(policy, "0.3.0") == "untested"
    assert version_family(None, "0.3.0") is None


# --------------------------------------------------------------------------- SESSION-FRESH-001


@pytest.mark.rule("SESSION-FRESH-001")
def test_fresh_prompt_is_bootstrap_transcript_and_new_turn(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    defn = get_agent_def("deepseek-harness")
    plan = plan_turn(
        store, "conv-1", key_for(defn, tmp_path), defn, new_session_id_factory=never_called
    )
    assert plan.mode is TurnMode.FRESH and plan.reason is FreshReason.NO_RECORD
    assert plan.bootstrap is True
    prompt = build_turn_prompt(plan, TRANSCRIPT, "Make the header blue.", bootstrap=BOOTSTRAP)
    assert prompt == (
        f"{BOOTSTRAP}\n\n"
        "## user\nMake a landing page.\n\n"
        "## assistant\nWrote index.html.\n\n"
        "## user\nMake the header blue."
    )
    first = build_turn_prompt(plan, [], "Hello.", bootstrap=BOOTSTRAP)
    assert first == f"{BOOTSTRAP}\n\nHello."


@pytest.mark.rule("SESSION-FRESH-001")
@pytest.mark.parametrize("agent", ["qwen", "aider", "copilot"])
def test_no_native_resume_always_sends_the_transcript(tmp_path: Path, agent: str) -> None:
    defn = get_agent_def(agent)
    assert defn.resume_style is ResumeStyle.NONE
    store = make_store(tmp_path)
    key = key_for(defn, tmp_path)
    for _ in range(2):
        plan = plan_turn(store, "conv-1", key, defn, new_session_id_factory=never_called)
        assert plan.mode is TurnMode.FRESH and plan.reason is FreshReason.NO_NATIVE_RESUME
        assert "Wrote index.html." in build_turn_prompt(plan, TRANSCRIPT, "Next.")
        update = record_outcome(store, plan, "succeeded", "some-id")
        assert update.record is None
    assert store.records() == {}


@pytest.mark.rule("SESSION-FRESH-001")
def test_transcript_roles_are_checked() -> None:
    with pytest.raises(ValueError, match="role"):
        TranscriptMessage("system", "x")


# --------------------------------------------------------------------------- styles


@pytest.mark.rule("SESSION-SPECIFY-001")
def test_specify_style_fresh_turn_mints_an_id(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    defn = get_agent_def("claude")
    assert defn.resume_style is ResumeStyle.SPECIFY
    plan = plan_turn(
        store, "conv-1", key_for(defn, tmp_path), defn, new_session_id_factory=minted_ids()
    )
    assert plan.mode is TurnMode.FRESH
    assert plan.new_session_id == "minted-1"
    assert plan.resume_session_id is None


@pytest.mark.rule("SESSION-SPECIFY-001")
def test_specify_factory_must_return_an_id(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    defn = get_agent_def("claude")
    with pytest.raises(SessionPlanError):
        plan_turn(store, "conv-1", key_for(defn, tmp_path), defn, new_session_id_factory=lambda: "")


@pytest.mark.rule("SESSION-CAPTURE-001")
@pytest.mark.parametrize(
    "agent", ["codex", "opencode", "cursor-agent", "deepseek-harness", "pi", "kiro"]
)
def test_capture_and_protocol_styles_mint_nothing(tmp_path: Path, agent: str) -> None:
    store = make_store(tmp_path)
    defn = get_agent_def(agent)
    plan = plan_turn(
        store, "conv-1", key_for(defn, tmp_path), defn, new_session_id_factory=never_called
    )
    assert plan.mode is TurnMode.FRESH
    assert plan.new_session_id is None and plan.resume_session_id is None
