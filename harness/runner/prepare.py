"""Everything a run decides before it spawns (rule RUN-SPAWN-001).

Rules: MCP-BUNDLE-001, MCP-BUNDLE-005, MCP-RUN-004, RUN-FILES-001, SKILL-RUN-001.
Design: docs/design/runner.md#harness.runner.prepare
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.defs.transport import select_transport
from harness.defs.types import AgentDef, BuildOptions, RuntimeContext
from harness.errors import HarnessError, PromptTooLargeError
from harness.formats import UnknownStreamFormatError, create_parser, is_two_way
from harness.guards.budget import check_prompt_budget
from harness.guards.command_line import check_windows_command_line
from harness.host.launch import RealFileSystem, Resolution, launch_env, resolve_executable
from harness.host.prompt import prepare_prompt_file
from harness.host.skills import (
    Skill,
    SkillLinkError,
    SkillStagingError,
    StagedSkill,
    compose_skill_prompt,
    context_skill_dirs,
    stage_skill,
)
from harness.mcp.apply import AppliedInjection, McpApplyError, apply_injection, restore_injection
from harness.mcp.bundles import (
    BundleRefusedError,
    DeliveryTarget,
    resolve_servers_for_run,
    validate_run_tool_bundle,
)
from harness.mcp.inject import InjectionPlan, is_managed_project_cwd, plan_injection
from harness.protocols.base import Actions, LocalProtocolError
from harness.runner.sessions import SessionPlan, plan_session
from harness.runner.snapshot import TreeSnapshot, snapshot_jsonl, snapshot_tree
from harness.runner.types import RunErrorCode, RunRequest
from harness.runtime.detect import ProbeRunner, capabilities_for_run
from harness.runtime.probe import run_probe
from harness.streams import StreamParser

__all__ = [
    "SKILL_PROMPT_SEPARATOR",
    "AdapterLayer",
    "Prepared",
    "Refusal",
    "prepare",
    "prepare_async",
    "probed_capabilities",
]

#: Between the composed skill blocks and the user's prompt (seed 000 §4 step 2).
SKILL_PROMPT_SEPARATOR = "\n\n---\n\n"


@dataclass(frozen=True)
class Refusal:
    """Why the run was not spawned (becomes the failed result's error)."""

    code: str
    message: str
    rule: str | None
    source: str
    #: The def as far as it was resolved (the selected transport), when it was.
    defn: AgentDef | None = None
    #: Secret values known when the refusal was made (the MCP plan's), for the redactor.
    secrets: tuple[str, ...] = ()


@dataclass
class AdapterLayer:
    """What the adapter layer decided for a run (MCP plan, staged skills, secrets)."""

    plan: InjectionPlan
    staged: tuple[StagedSkill, ...] = ()
    #: Skills that could not be copied (recoverable failure): composed with the absolute
    #: source root only (seed 000 §4 step 4 "the absolute source fallback").
    skill_problems: tuple[str, ...] = ()
    #: The plan's secrets plus the request's.
    secrets: tuple[str, ...] = ()
    applied: AppliedInjection | None = None
    #: Problems restoring the ``.mcp.json`` after the run (never raised from cleanup).
    restore_problems: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """``RunResult.mcp_injection``: the plan's redacted JSON plus what was done."""
        out = self.plan.to_json()
        out["files_written"] = list(self.applied.written) if self.applied else []
        out["files_removed"] = list(self.applied.removed) if self.applied else []
        out["restore_problems"] = list(self.restore_problems)
        if self.skill_problems:
            out["skill_problems"] = list(self.skill_problems)
        return out


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
    #: The request as the run carries it out: the composed prompt, the merged ACP servers.
    request: RunRequest | None = None
    adapter: AdapterLayer | None = None
    #: The log file handed to a CLI silent on failure (FIDELITY-LOGFILE-001).
    log_path: str | None = None


def _agent_log_file(defn: AgentDef, stack: contextlib.ExitStack) -> str | None:
    """seed 002 §4.4 (FIDELITY-LOGFILE-001): a def that wants one gets a fresh, empty log
    file in a private temp directory removed after the run; the runner reads its tail."""
    if not defn.agent_log_file:
        return None
    folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="harness-agent-log-"))
    path = os.path.join(folder, "agent.log")
    with open(path, "x", encoding="utf-8"):
        pass
    return path


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


async def probed_capabilities(
    req: RunRequest,
    *,
    base_env: Mapping[str, str],
    home: str,
    platform: str,
    runner: ProbeRunner = run_probe,
) -> dict[str, bool] | None:
    """What the help probe found for the executable ``req`` will spawn (seed 002 §5.5).

    ``None`` when the request brings its own capabilities, runs a user-given command
    (no ``build_args``), or its def, transport or executable cannot be resolved (then
    :func:`prepare` gives the refusal). The probe runs on the launch path with the
    launch env, exactly as detection's (DETECT-LAUNCHPATH-001); its answer is kept per
    executable stamp, so one executable is probed once (FIDELITY-CAPS-001).
    """
    if req.capabilities is not None or req.argv_override is not None:
        return None
    try:
        defn = select_transport(req.defn, base_env, req.transport)
    except HarnessError:
        return None
    if defn.help_args is None or not defn.capability_flags:
        return {}
    resolution = _resolve(defn, req, base_env, platform, home)
    if resolution.launch_path is None:
        return None
    env = launch_env(
        base_env,
        resolution,
        platform=platform,
        interpreter_dir=os.path.dirname(sys.executable),
        home=home,
        defn=defn,
    )
    caps, _ = await capabilities_for_run(defn, resolution.launch_path, env, runner=runner)
    return caps


async def prepare_async(
    req: RunRequest,
    *,
    cwd: str,
    base_env: Mapping[str, str],
    home: str,
    platform: str,
    stack: contextlib.ExitStack,
    now_ms: Callable[[], float],
    runner: ProbeRunner = run_probe,
) -> Prepared | Refusal:
    """:func:`prepare` with the request's capabilities taken from the help probe when it
    brings none (:func:`probed_capabilities`)."""
    caps = await probed_capabilities(
        req, base_env=base_env, home=home, platform=platform, runner=runner
    )
    if caps is not None:
        req = dataclasses.replace(req, capabilities=caps)
    return prepare(
        req,
        cwd=cwd,
        base_env=base_env,
        home=home,
        platform=platform,
        stack=stack,
        now_ms=now_ms,
    )


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
        if not is_two_way(defn.stream_format):
            create_parser(defn.stream_format, defn.event_parser)
    except (HarnessError, UnknownStreamFormatError) as exc:
        return Refusal(RunErrorCode.DEF_INVALID, str(exc), "RUN-SPAWN-001", "runner")
    if not os.path.isdir(cwd):
        message = f"cwd {cwd!r} is not an existing directory"
        return Refusal(RunErrorCode.CWD_INVALID, message, "RUN-SPAWN-001", "runner", defn)
    layer = _adapter_layer(req, defn, cwd)
    if isinstance(layer, Refusal):
        return layer
    req, adapter = layer
    base_env = {**base_env, **adapter.plan.env}
    if req.argv_override is not None:
        return _prepare_override(
            req,
            adapter,
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
    log_path = _agent_log_file(defn, stack)
    context = RuntimeContext(
        cwd=cwd,
        platform=platform,
        env=child_env,
        resume_session_id=req.resume_session_id,
        new_session_id=req.new_session_id,
        prompt_file_path=prompt_path,
        agent_log_file_path=log_path,
        skill_dirs=context_skill_dirs(adapter.staged),
    )
    options = BuildOptions(
        model=req.model,
        reasoning=req.reasoning,
        service_tier=req.service_tier,
        permission_mode=req.permission_mode,
        capabilities=dict(req.capabilities or {}),
    )
    try:
        args = [
            *req.argv_prepend,
            *defn.build_args(
                req.prompt, list(req.image_paths), list(req.extra_dirs), options, context
            ),
            *req.argv_append,
        ]
    except Exception as exc:  # a def's arg builder is data; any failure is reported
        message = f"build_args of {defn.id!r} raised {type(exc).__name__}: {exc}"
        return Refusal(RunErrorCode.BUILD_ARGS_FAILED, message, "RUN-SPAWN-001", "runner", defn)
    try:
        # seed 002 §6.3 (RUN-BUDGET-001): fail before spawn, never with E2BIG.
        check_prompt_budget(
            defn, req.prompt, platform=platform, resolved_bin=launch_path, args=args
        )
    except PromptTooLargeError as exc:
        return Refusal(exc.code, exc.message, exc.rule, "budget", defn, adapter.secrets)
    # WIN-CMDLINE-SHIM-001 / WIN-CMDLINE-EXE-001: never hand a Windows CLI other arguments.
    unfaithful = check_windows_command_line(defn, launch_path, args, prompt=req.prompt)
    if unfaithful is not None:
        return Refusal(
            unfaithful.code, unfaithful.message, unfaithful.rule, "budget", defn, adapter.secrets
        )
    prepared = Prepared(
        defn=defn, launch_path=launch_path, args=args, child_env=child_env, log_path=log_path
    )
    return _finish_prepare(
        prepared, req, adapter, cwd=cwd, platform=platform, home=home, stack=stack, now_ms=now_ms
    )


def _finish_prepare(
    prepared: Prepared,
    req: RunRequest,
    adapter: AdapterLayer,
    *,
    cwd: str,
    platform: str,
    home: str,
    stack: contextlib.ExitStack,
    now_ms: Callable[[], float],
) -> Prepared | Refusal:
    """The session (two-way) or parser, the MCP files, the cwd snapshot: the last steps."""
    defn = prepared.defn
    prepared.request = req
    prepared.adapter = adapter
    if is_two_way(defn.stream_format):
        refused = _start_session(
            prepared, req, cwd=cwd, platform=platform, home=home, now_ms=now_ms()
        )
        if refused is not None:
            return dataclasses.replace(refused, secrets=adapter.secrets)
    else:
        prepared.parser = create_parser(defn.stream_format, defn.event_parser)
    # seed 002 §8.1: the .mcp.json exists while the CLI runs (it loads it at start) and is
    # removed / put back when the run's stack closes, whatever the outcome (MCP-RUN-001).
    # apply_injection re-proves on the real filesystem that the dir is managed
    # (MCP-MANAGED-003): a symlinked cwd that resolves out of the root is refused here.
    if adapter.plan.writes or adapter.plan.removals:
        try:
            applied = apply_injection(adapter.plan)
        except McpApplyError as exc:
            return Refusal(exc.code, str(exc), exc.rule, "mcp", defn, adapter.secrets)
        adapter.applied = applied
        stack.callback(_restore_quietly, applied, adapter.restore_problems)
    prepared.files_before, _ = snapshot_tree(cwd)
    return prepared


def _restore_quietly(applied: AppliedInjection, problems: list[str]) -> None:
    """Cleanup never raises out of a run: a failed restore is reported in the result."""
    try:
        restore_injection(applied)
    except (McpApplyError, OSError) as exc:
        problems.append(str(exc))


def _delivery_target(cwd: str, root: str | None) -> DeliveryTarget:
    if is_managed_project_cwd(cwd, root):
        return DeliveryTarget.MANAGED_PROJECT
    return DeliveryTarget.EXTERNAL_PROJECT


def _stage(cwd: str, sources: tuple[str, ...]) -> tuple[list[Skill], list[StagedSkill], list[str]]:
    skills = [Skill(id=os.path.basename(os.path.normpath(s)) or s, source_dir=s) for s in sources]
    staged: list[StagedSkill] = []
    problems: list[str] = []
    for skill in skills:
        try:
            staged.append(stage_skill(cwd, skill))
        except SkillLinkError:
            # Security: never stage, and never compose, a skill whose tree links
            # out of its source; the run is refused (SKILL-LINK-001/002).
            raise
        except SkillStagingError as exc:
            if not os.path.isdir(os.path.abspath(skill.source_dir)):
                raise
            # seed 000 §4 step 3 "attempts to copy"; step 4: the absolute source fallback.
            problems.append(str(exc))
    return skills, staged, problems


def _adapter_layer(
    req: RunRequest, defn: AgentDef, cwd: str
) -> tuple[RunRequest, AdapterLayer] | Refusal:
    """Bundle, MCP plan and skills for this run (module docstring); nothing is spawned."""
    root = os.path.abspath(req.projects_root) if req.projects_root else None
    secrets = tuple(s for s in req.secrets if s)
    try:
        # seed 002 §8.4 (run-tool-bundle.ts:108): the bundle is checked against the def's
        # strategy before anything else; the refusal names the row's rule.
        validate_run_tool_bundle(defn, req.run_tool_bundle, _delivery_target(cwd, root))
        selection = resolve_servers_for_run(req.mcp_config, req.run_tool_bundle, req.sandbox)
        # Only persisted oauth servers the run did not override need a stored token.
        tokens = {
            k: v for k, v in req.mcp_tokens.items() if k in selection.persisted_token_server_ids
        }
        plan = plan_injection(
            defn,
            selection.enabled_servers,
            tokens,
            cwd=cwd,
            managed_projects_root=root,
            agent_version=req.agent_version,
        )
    except BundleRefusedError as exc:
        return Refusal(exc.code, str(exc), exc.rule, "mcp", defn, secrets)
    except HarnessError as exc:  # McpInjectionError, McpBuildError
        return Refusal(exc.code, str(exc), exc.rule or "RUN-SPAWN-001", "mcp", defn, secrets)
    secrets = (*plan.secrets, *secrets)
    prompt = req.prompt
    staged: list[StagedSkill] = []
    problems: list[str] = []
    if req.skill_dirs:
        try:
            skills, staged, problems = _stage(cwd, tuple(req.skill_dirs))
            # seed 000 §4 step 2: the SKILL.md bodies go into the prompt, before build_args
            # and the budget check see it (SKILL-RUN-002).
            composed = compose_skill_prompt(skills, staged)
        except HarnessError as exc:  # SkillError and its subclasses
            rule = exc.rule or "SKILL-STAGE-001"
            return Refusal(exc.code, str(exc), rule, "skills", defn, secrets)
        prompt = composed.rstrip("\n") + SKILL_PROMPT_SEPARATOR + req.prompt
    effective = dataclasses.replace(
        req,
        prompt=prompt,
        mcp_servers=(*req.mcp_servers, *plan.acp_mcp_servers),
    )
    adapter = AdapterLayer(
        plan=plan, staged=tuple(staged), skill_problems=tuple(problems), secrets=secrets
    )
    return effective, adapter


def _prepare_override(
    req: RunRequest,
    adapter: AdapterLayer,
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
    return _finish_prepare(
        prepared, req, adapter, cwd=cwd, platform=platform, home=home, stack=stack, now_ms=now_ms
    )


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
