"""Everything a run decides before it spawns (rule RUN-SPAWN-001).

In order: the transport (seed 000 §5.3, :func:`harness.defs.transport.select_transport`)
and its parser; the cwd; the executable (seed 002 §5, ref §5.2) and the launch env
(seed 002 §5.3); the prompt file for file delivery (seed 002 §6.2); ``build_args``; the
prompt budget (seed 002 §6.3, RUN-BUDGET-001); for two-way formats the session and its
``start`` (a request the session refuses never spawns); the cwd snapshot
(RUN-FILES-001). Any step that fails gives a :class:`Refusal` and nothing is spawned.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from harness.defs.transport import select_transport
from harness.defs.types import AgentDef, BuildOptions, RuntimeContext
from harness.errors import HarnessError, PromptTooLargeError
from harness.guards.budget import check_prompt_budget
from harness.launch import RealFileSystem, Resolution, launch_env, resolve_executable
from harness.prompt import prepare_prompt_file
from harness.protocols.base import Actions, LocalProtocolError
from harness.runner.sessions import SessionPlan, plan_session
from harness.runner.snapshot import TreeSnapshot, snapshot_jsonl, snapshot_tree
from harness.runner.types import RunErrorCode, RunRequest
from harness.streams import TWO_WAY_FORMATS, StreamParser, UnknownStreamFormatError, create_parser

__all__ = ["Prepared", "Refusal", "prepare"]


@dataclass(frozen=True)
class Refusal:
    """Why the run was not spawned (becomes the failed result's error)."""

    code: str
    message: str
    rule: str | None
    source: str
    #: The def as far as it was resolved (the selected transport), when it was.
    defn: AgentDef | None = None


@dataclass
class Prepared:
    """A run ready to spawn."""

    defn: AgentDef
    launch_path: str
    args: list[str]
    child_env: dict[str, str]
    #: One-way formats: the parser; two-way: ``None`` (see ``plan``).
    parser: StreamParser | None = None
    plan: SessionPlan | None = None
    #: What the session's ``start`` asked for (written once the process exists).
    start_actions: Actions | None = None
    #: pi-rpc session files before ``start`` (for the capture after the run).
    session_files_before: dict[str, tuple[int, float]] = field(default_factory=dict)
    files_before: TreeSnapshot = field(default_factory=dict)


def _resolve(
    defn: AgentDef, req: RunRequest, env: Mapping[str, str], platform: str, home: str
) -> Resolution:
    if req.bin_override:
        return Resolution(
            configured_override_path=req.bin_override,
            bundled_path=None,
            path_resolved_path=None,
            app_bundle_path=None,
            selected_path=req.bin_override,
            launch_path=req.bin_override,
        )
    return resolve_executable(defn, platform=platform, env=env, fs=RealFileSystem(), home=home)


def prepare(
    req: RunRequest,
    *,
    cwd: str,
    base_env: Mapping[str, str],
    home: str,
    platform: str,
    stack: contextlib.ExitStack,
    now_ms: Callable[[], float],
) -> Prepared | Refusal:
    """Decide the spawn; resources that must outlive it (the prompt file) join ``stack``.

    ``now_ms`` is the runner's clock (sessions never read one).
    """
    try:
        defn = select_transport(req.defn, base_env, req.transport)
        if defn.stream_format not in TWO_WAY_FORMATS:
            create_parser(defn.stream_format, defn.event_parser)
    except (HarnessError, UnknownStreamFormatError) as exc:
        return Refusal(RunErrorCode.DEF_INVALID, str(exc), "RUN-SPAWN-001", "runner")
    if not os.path.isdir(cwd):
        message = f"cwd {cwd!r} is not an existing directory"
        return Refusal(RunErrorCode.CWD_INVALID, message, "RUN-SPAWN-001", "runner", defn)
    if req.argv_override is not None:
        return _prepare_override(
            req,
            defn,
            cwd=cwd,
            base_env=base_env,
            home=home,
            platform=platform,
            stack=stack,
            now_ms=now_ms,
        )
    resolution = _resolve(defn, req, base_env, platform, home)
    launch_path = resolution.launch_path
    if launch_path is None:
        names = ", ".join([defn.bin, *defn.fallback_bins])
        message = f"{names} not found in {len(resolution.searched_dirs)} searched directories"
        return Refusal(RunErrorCode.EXECUTABLE_NOT_FOUND, message, "RUN-SPAWN-001", "runner", defn)
    child_env = launch_env(
        base_env,
        resolution,
        platform=platform,
        interpreter_dir=os.path.dirname(sys.executable),
        home=home,
        defn=defn,
    )
    prompt_file = prepare_prompt_file(defn, req.prompt)
    prompt_path = stack.enter_context(prompt_file) if prompt_file is not None else None
    context = RuntimeContext(
        cwd=cwd,
        platform=platform,
        env=child_env,
        resume_session_id=req.resume_session_id,
        new_session_id=req.new_session_id,
        prompt_file_path=prompt_path,
    )
    options = BuildOptions(
        model=req.model,
        reasoning=req.reasoning,
        service_tier=req.service_tier,
        permission_mode=req.permission_mode,
        capabilities=dict(req.capabilities),
    )
    try:
        args = list(
            defn.build_args(
                req.prompt, list(req.image_paths), list(req.extra_dirs), options, context
            )
        )
    except Exception as exc:  # a def's arg builder is data; any failure is reported
        message = f"build_args of {defn.id!r} raised {type(exc).__name__}: {exc}"
        return Refusal(RunErrorCode.BUILD_ARGS_FAILED, message, "RUN-SPAWN-001", "runner", defn)
    try:
        # seed 002 §6.3 (RUN-BUDGET-001): fail before spawn, never with E2BIG.
        check_prompt_budget(
            defn, req.prompt, platform=platform, resolved_bin=launch_path, args=args
        )
    except PromptTooLargeError as exc:
        return Refusal(exc.code, exc.message, exc.rule, "budget", defn)
    prepared = Prepared(defn=defn, launch_path=launch_path, args=args, child_env=child_env)
    if defn.stream_format in TWO_WAY_FORMATS:
        refused = _start_session(
            prepared, req, cwd=cwd, platform=platform, home=home, now_ms=now_ms()
        )
        if refused is not None:
            return refused
    else:
        prepared.parser = create_parser(defn.stream_format, defn.event_parser)
    prepared.files_before, _ = snapshot_tree(cwd)
    return prepared


def _prepare_override(
    req: RunRequest,
    defn: AgentDef,
    *,
    cwd: str,
    base_env: Mapping[str, str],
    home: str,
    platform: str,
    stack: contextlib.ExitStack,
    now_ms: Callable[[], float],
) -> Prepared | Refusal:
    """A user-given command (``harness record -- CMD ARGS``): no resolution, no build_args.

    The def still owns everything after the spawn: the prompt delivery, the parser or
    the session and the launch env.
    """
    override = list(req.argv_override or ())
    if not override or not override[0]:
        message = "the command to run is empty"
        return Refusal(RunErrorCode.DEF_INVALID, message, "RUN-SPAWN-001", "runner", defn)
    head = override[0]
    found = head if os.path.dirname(head) else shutil.which(head, path=base_env.get("PATH"))
    if found is None or not os.path.exists(found):
        message = f"{head} not found on PATH"
        return Refusal(RunErrorCode.EXECUTABLE_NOT_FOUND, message, "RUN-SPAWN-001", "runner", defn)
    resolution = Resolution(
        configured_override_path=found,
        bundled_path=None,
        path_resolved_path=None,
        app_bundle_path=None,
        selected_path=found,
        launch_path=found,
    )
    child_env = launch_env(
        base_env,
        resolution,
        platform=platform,
        interpreter_dir=os.path.dirname(sys.executable),
        home=home,
        defn=defn,
    )
    prompt_file = prepare_prompt_file(defn, req.prompt)
    if prompt_file is not None:
        stack.enter_context(prompt_file)
    prepared = Prepared(defn=defn, launch_path=found, args=override[1:], child_env=child_env)
    if defn.stream_format in TWO_WAY_FORMATS:
        refused = _start_session(
            prepared, req, cwd=cwd, platform=platform, home=home, now_ms=now_ms()
        )
        if refused is not None:
            return refused
    else:
        prepared.parser = create_parser(defn.stream_format, defn.event_parser)
    prepared.files_before, _ = snapshot_tree(cwd)
    return prepared


def _start_session(
    prepared: Prepared, req: RunRequest, *, cwd: str, platform: str, home: str, now_ms: float
) -> Refusal | None:
    defn = prepared.defn
    try:
        plan = plan_session(
            defn,
            req,
            cwd=cwd,
            env=prepared.child_env,
            platform=platform,
            home=home,
            request_id=req.request_id or f"run-{uuid.uuid4()}",
        )
    except (KeyError, ValueError, HarnessError) as exc:
        return Refusal(RunErrorCode.DEF_INVALID, str(exc), "RUN-SPAWN-001", "runner", defn)
    if plan.session_dir is not None:
        # ref §2.7: snapshot the session files before start(), capture after Finished.
        prepared.session_files_before = snapshot_jsonl(plan.session_dir)
    try:
        # Seeds' notes: start() refuses what it cannot send (a relative cwd, a malformed
        # model); nothing is spawned for such a request.
        actions = plan.session.start(plan.request, now_ms)
    except (HarnessError, LocalProtocolError, ValueError) as exc:
        if isinstance(exc, HarnessError):
            return Refusal(exc.code, str(exc), exc.rule or "RUN-SPAWN-001", "session", defn)
        code = RunErrorCode.SESSION_START_FAILED
        return Refusal(code, str(exc), "RUN-SPAWN-001", "session", defn)
    prepared.plan = plan
    prepared.start_actions = actions
    return None
