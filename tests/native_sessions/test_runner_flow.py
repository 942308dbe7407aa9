"""Session bookkeeping around real runs of the fake CLIs (the calls the runner makes).

Each turn: :func:`plan_turn` -> :func:`build_turn_prompt` -> ``run_agent`` with the plan's ids ->
:func:`captured_native_id` -> :func:`resume_expired` -> :func:`record_outcome` (and
:func:`reseed_plan` when asked). The fakes keep real sessions under their HOME and record the
prompt they received, so "only the new turn" and "the handle survives" are observed on the
other side of a pipe.

Rules: SESSION-RESUME-001, SESSION-FRESH-001, SESSION-SPECIFY-001, SESSION-CAPTURE-001,
SESSION-EXPIRED-001 (conformance/rules/sessions.py).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.defs.registry import get_agent_def
from harness.host.native_sessions import (
    SessionAction,
    SessionStore,
    SessionUpdate,
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
from harness.runner import RunRequest, RunResult, run_agent
from tests.native_sessions.helpers import key_for, make_store

REPO_ROOT = Path(__file__).resolve().parents[2]
BOOTSTRAP = "BOOTSTRAP: Open Design system prompt."
#: What a def would declare for claude's "unknown session" prose (see the report's def change).
CLAUDE_EXPIRED = (r"no conversation found with session id",)

pytestmark = pytest.mark.posix


@dataclass
class Turn:
    plan: TurnPlan
    result: RunResult
    prompt_seen: str
    update: SessionUpdate


class Host:
    """A tiny host: one conversation, its transcript, the store and a fake CLI."""

    def __init__(self, tmp_path: Path, agent: str, binary: str) -> None:
        self.defn = get_agent_def(agent)
        self.cwd = tmp_path / "project"
        self.home = tmp_path / "home"
        self.cwd.mkdir()
        self.home.mkdir()
        self.shim = tmp_path / "bin" / binary
        self.shim.parent.mkdir()
        self.shim.write_text(
            f'#!/bin/sh\nexec "{sys.executable}" -m fake_clis {agent} "$@"\n', encoding="utf-8"
        )
        self.shim.chmod(0o755)
        self.record = tmp_path / "record.json"
        self.store: SessionStore = make_store(tmp_path)
        self.transcript: list[TranscriptMessage] = []
        self.patterns: tuple[str, ...] = ()

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith("FAKE_CLI_")}
        env.update(
            HOME=str(self.home),
            PYTHONPATH=str(REPO_ROOT),
            FAKE_CLI_SCENARIO="happy",
            FAKE_CLI_RECORD=str(self.record),
        )
        return env

    def run(self, plan: TurnPlan, text: str) -> tuple[RunResult, str]:
        prompt = build_turn_prompt(plan, self.transcript, text, bootstrap=BOOTSTRAP)
        if self.record.exists():
            self.record.unlink()
        result = run_agent(
            RunRequest(
                defn=self.defn,
                prompt=prompt,
                cwd=str(self.cwd),
                env=self.env(),
                bin_override=str(self.shim),
                resume_session_id=plan.resume_session_id,
                new_session_id=plan.new_session_id,
                inactivity_timeout_ms=30_000,
            )
        )
        seen = json.loads(self.record.read_text(encoding="utf-8")).get("prompt", "")
        return result, str(seen)

    def turn(self, text: str) -> list[Turn]:
        key = key_for(self.defn, self.cwd)
        plan = plan_turn(
            self.store, "conv-1", key, self.defn, new_session_id_factory=lambda: str(uuid.uuid4())
        )
        turns: list[Turn] = []
        while True:
            result, seen = self.run(plan, text)
            native = captured_native_id(plan.resume_style, result.events, result.session_id)
            code = result.error.code if result.error else None
            expired = resume_expired(plan, code, stderr=result.stderr_tail, patterns=self.patterns)
            update = record_outcome(self.store, plan, result.status, native, expired=expired)
            turns.append(Turn(plan, result, seen, update))
            if not update.reseed:
                break
            plan = reseed_plan(plan, new_session_id_factory=lambda: str(uuid.uuid4()))
        if result.succeeded:
            self.transcript += [
                TranscriptMessage("user", text),
                TranscriptMessage("assistant", "ok"),
            ]
        return turns


@pytest.mark.rule("SESSION-CAPTURE-001", "SESSION-RESUME-001", "SESSION-EXPIRED-001")
def test_dsh_profile_session_lifecycle(tmp_path: Path) -> None:
    host = Host(tmp_path, "deepseek-harness", "dsh")

    [first] = host.turn("Make a landing page.")
    assert first.plan.mode is TurnMode.FRESH and first.result.succeeded
    assert first.prompt_seen.startswith(BOOTSTRAP) and first.prompt_seen.endswith("landing page.")
    assert first.update.action is SessionAction.STORED
    handle = first.update.record.native_id if first.update.record else ""
    assert handle

    [second] = host.turn("Make the header blue.")
    assert second.plan.mode is TurnMode.RESUME and second.plan.resume_session_id == handle
    assert second.result.succeeded
    assert second.prompt_seen == "Make the header blue.", "a healthy resume sends only the new turn"
    assert host.store.get("conv-1") is not None

    # The CLI loses its session (pruned history): the next resume is rejected.
    shutil.rmtree(host.home / ".fake-cli")
    expired, reseeded = host.turn("Now add a footer.")
    assert expired.plan.mode is TurnMode.RESUME
    assert expired.result.error is not None
    assert expired.result.error.code == "DSH_PROFILE_RESUME_REJECTED"
    assert expired.update.action is SessionAction.CLEARED and expired.update.reseed
    assert reseeded.plan.runtime_id == "deepseek-harness"
    assert reseeded.plan.mode is TurnMode.FRESH and reseeded.result.succeeded
    assert reseeded.prompt_seen.startswith(BOOTSTRAP)
    assert "## user\nMake the header blue." in reseeded.prompt_seen, "reseeded with the transcript"
    assert reseeded.prompt_seen.endswith("Now add a footer.")
    new_handle = host.store.get("conv-1")
    assert new_handle is not None and new_handle.native_id != handle


@pytest.mark.rule("SESSION-SPECIFY-001", "SESSION-FRESH-001", "SESSION-EXPIRED-001")
def test_claude_specify_session_lifecycle(tmp_path: Path) -> None:
    host = Host(tmp_path, "claude", "claude")
    host.patterns = CLAUDE_EXPIRED

    [first] = host.turn("Make a landing page.")
    minted = first.plan.new_session_id
    assert minted and first.result.succeeded
    assert first.update.record is not None and first.update.record.native_id == minted

    [second] = host.turn("Make the header blue.")
    assert second.plan.resume_session_id == minted
    assert second.prompt_seen == "Make the header blue."

    shutil.rmtree(host.home / ".fake-cli")
    expired, reseeded = host.turn("Now add a footer.")
    assert expired.update.reseed and expired.result.error is not None
    assert reseeded.plan.runtime_id == "claude"
    assert reseeded.plan.new_session_id and reseeded.plan.new_session_id != minted
    assert "Make a landing page." in reseeded.prompt_seen
    stored = host.store.get("conv-1")
    assert stored is not None and stored.native_id == reseeded.plan.new_session_id
