"""What a run is asked to do (:class:`RunRequest`) and what it did (:class:`RunResult`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.defs.types import AgentDef
from harness.events import Event
from harness.runner.status import RunOutcome

if TYPE_CHECKING:
    from harness.mcp.servers import McpServerConfig

__all__ = [
    "DEFAULT_INACTIVITY_TIMEOUT_MS",
    "DEFAULT_SHUTDOWN_GRACE_MS",
    "RunError",
    "RunErrorCode",
    "RunRequest",
    "RunResult",
]

#: ref §10.1: ``OD_CHAT_RUN_SHUTDOWN_GRACE_MS`` default 3000 ms between SIGTERM and SIGKILL.
DEFAULT_SHUTDOWN_GRACE_MS = 3000
#: ref §10.1: the inactivity watchdog defaults to 10 minutes.
DEFAULT_INACTIVITY_TIMEOUT_MS = 10 * 60 * 1000


class RunErrorCode:
    """Machine codes of the runner's own failures (the CLI's and sessions' keep theirs)."""

    #: The def's transport or stream format could not be used.
    DEF_INVALID = "RUN_DEF_INVALID"
    #: ``cwd`` is not an existing directory.
    CWD_INVALID = "RUN_CWD_INVALID"
    #: No executable for the def (resolution found nothing).
    EXECUTABLE_NOT_FOUND = "RUN_EXECUTABLE_NOT_FOUND"
    #: ``build_args`` raised.
    BUILD_ARGS_FAILED = "RUN_BUILD_ARGS_FAILED"
    #: The session refused the request before anything was spawned.
    SESSION_START_FAILED = "RUN_SESSION_START_FAILED"
    #: The operating system could not start the process.
    SPAWN_FAILED = "RUN_SPAWN_FAILED"
    #: No substantive output before the first-output deadline (RUN-TIMEOUT-FIRST-001).
    FIRST_OUTPUT_TIMEOUT = "RUN_FIRST_OUTPUT_TIMEOUT"
    #: No stdout/stderr activity for the inactivity timeout (RUN-TIMEOUT-IDLE-001).
    INACTIVITY_TIMEOUT = "RUN_INACTIVITY_TIMEOUT"
    #: The process exited non-zero (or by a signal) and nothing else explains the failure.
    EXIT_NONZERO = "RUN_EXIT_NONZERO"
    #: The stream reported an error event (ref §1.2 path 1) without a code of its own.
    STREAM_ERROR = "RUN_STREAM_ERROR"
    #: The run ended without any output a person can use (FIDELITY-EMPTY-001).
    EMPTY_OUTPUT = "AGENT_EMPTY_OUTPUT"
    #: Owned processes survived SIGKILL (e.g. stuck in uninterruptible sleep).
    TREE_SURVIVED = "RUN_TREE_SURVIVED"


@dataclass(frozen=True)
class RunError:
    """Why a run failed: a code, a message that never quotes the prompt, the rule."""

    code: str
    message: str
    rule: str | None = None
    #: ``runner``, ``session``, ``stream``, ``budget`` or ``process``.
    source: str = "runner"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message, "source": self.source}
        if self.rule:
            out["rule"] = self.rule
        return out


@dataclass(frozen=True)
class RunRequest:
    """One turn of one agent CLI.

    ``env`` is the base environment (``None``: this process's), ``env_overlay`` is laid
    over it. ``bin_override`` skips executable resolution. Timeouts and graces are in
    milliseconds; ``None`` means the def's value, then the default. ``cancel_grace_ms``
    is the protocol-cancel grace of two-way sessions (``None``: the session's default);
    ``shutdown_grace_ms`` is the wait between the graceful and the forced stop.
    """

    defn: AgentDef
    prompt: str
    cwd: str
    model: str | None = None
    reasoning: str | None = None
    service_tier: str | None = None
    permission_mode: str | None = None
    #: The help probe's findings for ``build_args`` (seed 002 §5.5). ``None``: the runner
    #: takes them from the probe of the executable it spawns (FIDELITY-CAPS-001).
    capabilities: Mapping[str, bool] | None = None
    resume_session_id: str | None = None
    new_session_id: str | None = None
    extra_dirs: Sequence[str] = ()
    image_paths: Sequence[str] = ()
    #: pi-rpc images must resolve inside this directory (default: ``cwd``).
    upload_root: str | None = None
    mcp_servers: Sequence[Mapping[str, Any]] = ()
    env: Mapping[str, str] | None = None
    env_overlay: Mapping[str, str] = field(default_factory=dict)
    bin_override: str | None = None
    transport: str | None = None
    #: dsh ``request_id`` and the like (default: a fresh ``run-<uuid>``).
    request_id: str | None = None
    first_output_timeout_ms: int | None = None
    inactivity_timeout_ms: int | None = None
    shutdown_grace_ms: int = DEFAULT_SHUTDOWN_GRACE_MS
    cancel_grace_ms: int | None = None
    #: What ``~`` expands to (default: the child env's HOME / USERPROFILE, then ours).
    home: str | None = None
    #: Run exactly this command instead of the def's executable and ``build_args``
    #: (``harness record -- CMD ARGS``); the def still decides the prompt delivery,
    #: the parser or session, and the env. ``argv_override[0]`` is resolved on PATH.
    argv_override: Sequence[str] | None = None
    #: Arguments put before / after what the def's ``build_args`` returns (a live recipe's
    #: telemetry switches or approval flag). ``build_args`` still runs with everything a run
    #: gives it (prompt file, capabilities), and the guards judge the whole argv.
    argv_prepend: Sequence[str] = ()
    argv_append: Sequence[str] = ()
    # --- the adapter layer around the run (seed 000 §4, seed 002 §8.1 / §8.4) ------------
    #: The user's persisted external MCP servers (``harness.mcp.load_mcp_config``). The
    #: def's ``external_mcp_injection`` decides how they reach the CLI; NONE is reported.
    mcp_config: Sequence[McpServerConfig] = ()
    #: seed 002 §8.4: this run's tool bundle, validated against the def's strategy and
    #: merged over ``mcp_config`` by server id.
    run_tool_bundle: Sequence[McpServerConfig] = ()
    #: seed 002 §8.4: in sandbox mode the persisted servers take no part in the run.
    sandbox: bool = False
    #: The managed projects root: ``.mcp.json`` is written only into a cwd strictly inside
    #: it (seed 002 §8.1). ``None``: no cwd is managed.
    projects_root: str | None = None
    #: server id -> stored OAuth access token (only persisted oauth servers receive one).
    mcp_tokens: Mapping[str, str] = field(default_factory=dict)
    #: The agent version detection found (ACP stdio MCP cutoff, ref §2.6).
    agent_version: str | None = None
    #: seed 000 §4: skill directories to stage into ``<cwd>/.od-skills/`` and compose into
    #: the prompt (before the prompt budget is checked).
    skill_dirs: Sequence[str] = ()
    #: Literal secret values to redact from the stderr tail, argv and error messages
    #: (the MCP plan's own secrets are added by the runner).
    secrets: Sequence[str] = ()


@dataclass(frozen=True)
class RunResult:
    """What one run did. ``events`` are every event published, in order."""

    agent_id: str
    status: RunOutcome
    events: tuple[Event, ...]
    exit_code: int | None
    #: The signal number that ended the leader (POSIX), when one did.
    signal: int | None
    duration_ms: float
    #: Paths (relative to cwd, ``/``-separated) created or changed during the run.
    files_written: tuple[str, ...]
    #: Plain-stream artifacts the runner wrote (a subset of ``files_written``).
    artifacts_written: tuple[str, ...]
    #: The last 64 KiB of stderr, with the prompt and secrets redacted.
    stderr_tail: str
    stderr_bytes: int
    error: RunError | None
    session_id: str | None
    #: The spawned command, redacted (the prompt may travel in argv). Empty when not spawned.
    argv: tuple[str, ...]
    pid: int | None
    stream_format: str
    transport: str
    cancel_requested: bool = False
    #: Time from the cancel request to a fully reaped tree (RUN-REAP-001).
    cancel_latency_ms: float | None = None
    #: Time from spawn to the first substantive event.
    first_output_ms: float | None = None
    files_truncated: bool = False
    counters: Mapping[str, int] = field(default_factory=dict)
    #: The MCP injection the run used (``InjectionPlan.to_json()`` plus ``files_written``,
    #: ``files_removed``, ``restore_problems``): names and paths, never a value. ``None``
    #: when the run was refused before the plan was made.
    mcp_injection: Mapping[str, Any] | None = None
    #: Staged skill roots, relative to cwd (``.od-skills/<basename>-<hash>``).
    skills_staged: tuple[str, ...] = ()
    #: Processes started after the first to continue its interrupted turn natively (seed
    #: 000 "AMR compaction continuation": at most one per run). ``pid``, ``exit_code`` and
    #: ``argv`` describe the last process; ``events`` and ``files_written`` the whole run.
    continuations: int = 0
    #: With a continuation: how the first process's turn ended (the interruption the
    #: continuation recovered from, or did not), so it is never lost.
    interruption: RunError | None = None
    #: The capabilities ``build_args`` read (seed 002 §5.5, FIDELITY-CAPS-001): the help
    #: probe's findings for the spawned executable, or the request's own. ``None`` when
    #: no ``build_args`` ran (a refused run, a user-given command).
    capabilities: Mapping[str, bool] | None = None

    @property
    def succeeded(self) -> bool:
        return self.status is RunOutcome.SUCCEEDED

    def to_json(self, *, include_events: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "agent": self.agent_id,
            "status": self.status.value,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "duration_ms": round(self.duration_ms, 3),
            "files_written": list(self.files_written),
            "artifacts_written": list(self.artifacts_written),
            "session_id": self.session_id,
            "error": self.error.to_json() if self.error else None,
            "stderr_tail": self.stderr_tail,
            "stderr_bytes": self.stderr_bytes,
            "argv": list(self.argv),
            "pid": self.pid,
            "stream_format": self.stream_format,
            "transport": self.transport,
            "cancel_requested": self.cancel_requested,
            "cancel_latency_ms": (
                None if self.cancel_latency_ms is None else round(self.cancel_latency_ms, 3)
            ),
            "first_output_ms": (
                None if self.first_output_ms is None else round(self.first_output_ms, 3)
            ),
            "files_truncated": self.files_truncated,
            "counters": dict(self.counters),
            "mcp_injection": None if self.mcp_injection is None else dict(self.mcp_injection),
            "skills_staged": list(self.skills_staged),
            "continuations": self.continuations,
            "interruption": self.interruption.to_json() if self.interruption else None,
            "capabilities": None if self.capabilities is None else dict(self.capabilities),
        }
        if include_events:
            out["events"] = [e.to_json() for e in self.events]
        return out
