"""One turn of a conversation through the native-session bookkeeping: plan, run, store.

:func:`run_conversation_turn` plans the turn with :mod:`harness.host.native_sessions`
(FRESH or RESUME, seed 000 §8, seed 001 §7), runs it with the engine and records the
outcome; an expired handle reseeds the turn FRESH on the same def.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.events import Event
from harness.host.native_sessions import (
    CompatibilityKey,
    ExecutableIdentity,
    SessionStore,
    SessionUpdate,
    TranscriptMessage,
    TurnMode,
    TurnPlan,
    build_turn_prompt,
    captured_native_id,
    compatibility_key,
    generation_digest,
    plan_turn,
    record_outcome,
    reseed_plan,
    resume_expired,
)
from harness.runner.engine import run_agent_async
from harness.runner.types import RunRequest, RunResult

__all__ = ["ConversationTurn", "run_conversation_turn", "turn_key"]


@dataclass(frozen=True)
class ConversationTurn:
    """One turn of a conversation run through the native-session bookkeeping.

    ``attempts`` holds one ``(plan, result)`` per run: the planned turn, then, when the CLI
    said the resumed handle is unknown, the reseeded FRESH run on the SAME agent (seed 000 §8).
    """

    attempts: tuple[tuple[TurnPlan, RunResult], ...]
    update: SessionUpdate

    @property
    def plan(self) -> TurnPlan:
        return self.attempts[-1][0]

    @property
    def result(self) -> RunResult:
        return self.attempts[-1][1]


def turn_key(
    req: RunRequest, conversation_id: str, *, bootstrap: str = "", project_id: str | None = None
) -> CompatibilityKey:
    """The compatibility key of a turn of ``req`` (seed 001 §7).

    The composition generation digests what changes the agent's behaviour besides the
    model: the bootstrap text, the skill sources and the MCP servers by id. A change of any
    of them starts a fresh session ("never resumes old history under a different … profile
    composition").
    """
    mcp_ids = sorted(s.id for s in (*req.mcp_config, *req.run_tool_bundle) if s.enabled)
    composition = generation_digest(
        bootstrap,
        *sorted(os.path.abspath(d) for d in req.skill_dirs),
        *mcp_ids,
    )
    exe = req.bin_override
    return compatibility_key(
        conversation_id=conversation_id,
        defn=req.defn,
        cwd=req.cwd,
        project_id=project_id,
        model=req.model,
        executable=ExecutableIdentity(exe, req.agent_version) if exe else None,
        composition_generation=composition,
    )


async def run_conversation_turn(
    req: RunRequest,
    *,
    store: SessionStore,
    conversation_id: str,
    transcript: Sequence[TranscriptMessage] = (),
    bootstrap: str = "",
    key: CompatibilityKey | None = None,
    new_session_id_factory: Callable[[], str] = lambda: str(uuid.uuid4()),
    on_event: Callable[[Event], None] | None = None,
    cancel: asyncio.Event | None = None,
    tap: Any = None,
) -> ConversationTurn:
    """Run ``req.prompt`` as the next turn of ``conversation_id`` on ``req.defn``.

    1. :func:`~harness.host.native_sessions.plan_turn`: FRESH (bootstrap + transcript + the turn; a
       host-minted id for the specify style) or RESUME (only the turn; seed 001 §7-§8);
    2. the run, with the plan's resume / new session id;
    3. :func:`~harness.host.native_sessions.record_outcome`: the captured id is stored, a validated
       handle survives a cancel, an expired one is cleared;
    4. expired: the turn is reseeded FRESH with the full transcript on the same def: the
       agent is never switched (seed 000 §8, SESSION-EXPIRED-001, SELECT-NOFALLBACK-001).

    On a RESUME turn the skills are not composed again: they came with the bootstrap turn and
    the key's composition generation pins them (seed 001 §8 "only the new turn").
    """
    defn = req.defn
    key = key if key is not None else turn_key(req, conversation_id, bootstrap=bootstrap)
    plan = plan_turn(
        store, conversation_id, key, defn, new_session_id_factory=new_session_id_factory
    )
    attempts: list[tuple[TurnPlan, RunResult]] = []
    while True:
        prompt = build_turn_prompt(plan, transcript, req.prompt, bootstrap=bootstrap)
        run_req = dataclasses.replace(
            req,
            prompt=prompt,
            resume_session_id=plan.resume_session_id,
            new_session_id=plan.new_session_id,
            skill_dirs=() if plan.mode is TurnMode.RESUME else tuple(req.skill_dirs),
        )
        result = await run_agent_async(run_req, on_event=on_event, cancel=cancel, tap=tap)
        attempts.append((plan, result))
        native = captured_native_id(plan.resume_style, result.events, result.session_id)
        code = result.error.code if result.error is not None else None
        expired = resume_expired(
            plan, code, stderr=result.stderr_tail, patterns=defn.resume_failure_patterns
        )
        update = record_outcome(store, plan, result.status.value, native, expired=expired)
        if not update.reseed or result.cancel_requested:
            return ConversationTurn(tuple(attempts), update)
        plan = reseed_plan(plan, new_session_id_factory=new_session_id_factory)
