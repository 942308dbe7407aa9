"""Building the two-way session for a run: which class, which options, which request.

Keyed by stream format only (design principle 2): the format registry
(:mod:`harness.formats`) names each format's session, its grace keyword and its own
request fields; every difference between agents arrives through the def's fields, the run
request and the platform. This module adds the run's I/O (reading image files, the pi
session dir) and the fields every format shares. Nothing here spawns;
:mod:`harness.runner.engine` does.

:func:`run_conversation_turn` drives one turn of a conversation through the native-session
bookkeeping of :mod:`harness.sessions` (seed 000 §8, seed 001 §7): plan, run, store.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.defs.types import AgentDef
from harness.events import Event
from harness.formats import RequestInputs, create_session, session_request_fields
from harness.protocols.base import SessionRequest, TwoWaySession
from harness.protocols.pi_images import ImageCandidate
from harness.runner.types import RunRequest, RunResult
from harness.sessions import (
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

__all__ = [
    "ConversationTurn",
    "SessionPlan",
    "plan_session",
    "run_conversation_turn",
    "turn_key",
]


@dataclass(frozen=True)
class SessionPlan:
    session: TwoWaySession
    request: SessionRequest
    #: pi-rpc: the absolute session directory to snapshot around the run.
    session_dir: str | None = None


def _read_candidate(path: str, cwd: str) -> ImageCandidate:
    absolute = path if os.path.isabs(path) else os.path.join(cwd, path)
    try:
        real = os.path.realpath(absolute, strict=True)
    except (OSError, ValueError):
        return ImageCandidate(path=path, realpath=None, size=None, is_file=False, data=None)
    try:
        size: int | None = os.stat(real).st_size
        is_file = os.path.isfile(real)
    except OSError:
        size, is_file = None, False
    data: bytes | None = None
    if is_file:
        try:
            with open(real, "rb") as fh:
                data = fh.read()
        except OSError:
            data = None
    return ImageCandidate(path=path, realpath=real, size=size, is_file=is_file, data=data)


def _image_reader(req: RunRequest, cwd: str) -> Callable[[], tuple[str, list[ImageCandidate]]]:
    """The run's image facts for a format binding: the resolved upload root, one candidate
    per image path (realpath, stat, read; any error -> ``None``, seed 000 §5.10)."""

    def read() -> tuple[str, list[ImageCandidate]]:
        root = os.path.realpath(req.upload_root or cwd)
        return root, [_read_candidate(p, cwd) for p in req.image_paths]

    return read


def _session_dir(defn: AgentDef, cwd: str, home: str) -> str | None:
    configured = defn.pi_session_dir
    if not configured:
        return None
    if configured == "~" or configured.startswith(("~/", "~\\")):
        return os.path.join(home, configured[2:]) if len(configured) > 1 else home
    if os.path.isabs(configured):
        return configured
    return os.path.join(cwd, configured)


def plan_session(
    defn: AgentDef,
    req: RunRequest,
    *,
    cwd: str,
    env: Mapping[str, str],
    platform: str,
    home: str,
    request_id: str,
) -> SessionPlan:
    """The session object and its request for a two-way ``defn`` (not started yet)."""
    fmt = defn.stream_format
    session = create_session(fmt, defn, grace_ms=req.cancel_grace_ms)
    fields: dict[str, Any] = {
        "prompt": req.prompt,
        "cwd": cwd,
        "request_id": request_id,
        "model": req.model,
        "reasoning": req.reasoning,
        "resume_session_id": req.resume_session_id,
        "mcp_servers": tuple(req.mcp_servers),
    }
    inputs = RequestInputs(
        cwd=cwd,
        env=env,
        platform=platform,
        read_images=_image_reader(req, cwd),
        image_paths=tuple(req.image_paths),
        service_tier=req.service_tier,
    )
    fields.update(session_request_fields(fmt, defn, inputs))
    return SessionPlan(
        session=session,
        request=SessionRequest(**fields),
        session_dir=_session_dir(defn, cwd, home),
    )


# --------------------------------------------------------------------------- conversation turns


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

    1. :func:`~harness.sessions.plan_turn`: FRESH (bootstrap + transcript + the turn; a
       host-minted id for the specify style) or RESUME (only the turn; seed 001 §7-§8);
    2. the run, with the plan's resume / new session id;
    3. :func:`~harness.sessions.record_outcome`: the captured id is stored, a validated
       handle survives a cancel, an expired one is cleared;
    4. expired: the turn is reseeded FRESH with the full transcript on the same def: the
       agent is never switched (seed 000 §8, SESSION-EXPIRED-001, SELECT-NOFALLBACK-001).

    On a RESUME turn the skills are not composed again: they came with the bootstrap turn and
    the key's composition generation pins them (seed 001 §8 "only the new turn").
    """
    from harness.runner.engine import run_agent_async

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
