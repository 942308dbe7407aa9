"""The run loop: spawn one agent CLI, pump its pipes, drive its parser or session, end it.

Rules: RUN-BUDGET-001, RUN-CANCEL-ORDER-001, RUN-FILES-001, RUN-PUMP-001.
Design: docs/design/runner.md#harness.runner.engine
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import errno
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any, Protocol, runtime_checkable

from harness.defs.types import AgentDef, ResumeStyle
from harness.events import Artifact, Error, Event, Raw, Status, TextDelta
from harness.formats import keeps_turn_bookkeeping
from harness.host.failures import (
    GENERIC_AUTH_GUIDANCE,
    ServiceFailure,
    classify_log_failure,
    classify_service_failure,
    has_output,
)
from harness.host.prompt import (
    is_clean_terminal_turn,
    keep_stdin_open,
    should_close_stdin,
    stdin_payload,
    stream_json_user_message,
)
from harness.ladder import StepKind
from harness.protocols.base import (
    Actions,
    CloseStdin,
    ContinuableSession,
    Finished,
    RunStatus,
    SetDeadline,
    Terminate,
    TwoWaySession,
)
from harness.runner.ladder import LadderState, LadderWatch
from harness.runner.pipes import PipeQueue, errno_name
from harness.runner.plain import write_held_artifacts
from harness.runner.prepare import Prepared, Refusal, prepare_async
from harness.runner.proctree import OwnedTree, spawn_kwargs
from harness.runner.sessions import SessionPlan
from harness.runner.snapshot import changed_paths, snapshot_jsonl, snapshot_tree
from harness.runner.status import CloseFacts, RunOutcome, classify_close_status, ended_cleanly
from harness.runner.stop import Climb, Rung, StopLadder
from harness.runner.types import (
    DEFAULT_INACTIVITY_TIMEOUT_MS,
    RunError,
    RunErrorCode,
    RunRequest,
    RunResult,
)
from harness.runner.winspawn import shim_launch, spawn_command_line
from harness.runtime.watchdog import guard, release
from harness.secrets.redact import Redactor, StderrTail
from harness.streams import StreamParser

__all__ = [
    "CANCEL_SIGNALS",
    "CancelOnSignals",
    "ContinuingTap",
    "EventRetention",
    "LadderTap",
    "OnEvent",
    "WireTap",
    "is_substantive",
    "run_agent",
    "run_agent_async",
]

#: How often the tree is polled while it is being stopped.
_POLL_MS = 10.0
#: A spawn refused with ETXTBSY (a just-written executable) is tried this many times,
#: waiting this long times the attempt number in between.
_SPAWN_BUSY_TRIES = 5
_SPAWN_BUSY_WAIT_S = 0.05
#: How often the leader's descendants are snapshotted while it runs.
_SNAPSHOT_MS = 500.0
#: After the tree is gone, how long pipes may stay open (held by an escaped process).
_DRAIN_MS = 1000.0
#: After SIGKILL, how long to wait for the tree before reporting survivors (a killed
#: process still waits for an uninterruptible disk read to end before it dies).
_KILL_WAIT_MS = 5000.0

OnEvent = Callable[[Event], None]


@dataclass(frozen=True)
class EventRetention:
    """How much of a run's events :attr:`RunResult.events` keeps (design §Reliability).

    For a caller that takes every event through ``on_event`` (``harness run`` prints them)
    and reads the result only for its summary: a CLI printing hundreds of MB must not be
    held again as events. The run keeps its first events, up to ``head_events`` of them
    holding up to ``text_chars`` characters, then the last ``tail_events`` holding up to
    ``text_chars`` characters; the events in between are dropped and counted in the
    ``events_dropped`` counter. ``on_event`` still sees every event. Without a retention
    (the default, for library callers and conformance) every event is kept.
    """

    head_events: int = 1000
    tail_events: int = 1000
    text_chars: int = 512 * 1024

    def __post_init__(self) -> None:
        for name in ("head_events", "tail_events", "text_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"EventRetention.{name} must be an integer >= 0, got {value!r}")


def _text_chars(event: Event) -> int:
    """The characters an event holds in its string fields (a delta's text, a tool's output)."""
    total = 0
    for item in dataclasses.fields(event):
        value = getattr(event, item.name)
        if isinstance(value, str):
            total += len(value)
    return total


class _Retained:
    """The events a run keeps for its result: all of them, or as an :class:`EventRetention`
    says (a head, a tail, and a count of what was dropped between them)."""

    def __init__(self, policy: EventRetention | None) -> None:
        self._policy = policy
        self._head: list[Event] = []
        self._head_chars = 0
        self._head_open = True
        self._tail: collections.deque[tuple[Event, int]] = collections.deque()
        self._tail_chars = 0
        self.dropped = 0

    def add(self, event: Event) -> None:
        policy = self._policy
        if policy is None:
            self._head.append(event)
            return
        size = _text_chars(event)
        if self._head_open:
            if (
                len(self._head) < policy.head_events
                and self._head_chars + size <= policy.text_chars
            ):
                self._head.append(event)
                self._head_chars += size
                return
            self._head_open = False
        self._tail.append((event, size))
        self._tail_chars += size
        while self._tail and (
            len(self._tail) > policy.tail_events or self._tail_chars > policy.text_chars
        ):
            _, dropped = self._tail.popleft()
            self._tail_chars -= dropped
            self.dropped += 1

    def events(self) -> tuple[Event, ...]:
        return (*self._head, *(event for event, _ in self._tail))


#: How much of a CLI's own log is read after a failed run (FIDELITY-LOGFILE-001).
_LOG_TAIL_BYTES = 64 * 1024


def _tail(path: str) -> str:
    """The last :data:`_LOG_TAIL_BYTES` of ``path``, decoded; ``""`` when unreadable."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - _LOG_TAIL_BYTES))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


class WireTap(Protocol):
    """Sees a run on the wire (a recorder: :class:`harness.recording.record.RunRecorder`).

    ``spawned`` once the process exists (the def as resolved through its transport, the
    spawned argv unredacted, the child env, and the literal secrets the run knows — the
    request's and the MCP plan's, MCP-SECRET-002 — so the tap scrubs what it keeps); ``data``
    for every chunk written to stdin or read from stdout/stderr, ``t_ms`` after the
    spawn; ``exited`` once the tree is reaped. Never called for a run refused before
    the spawn.
    """

    def spawned(
        self,
        defn: AgentDef,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        secrets: Sequence[str] = (),
    ) -> None: ...

    def data(self, direction: str, data: bytes, t_ms: float) -> None: ...

    def exited(self, code: int | None, signal: int | None, duration_ms: float) -> None: ...


@runtime_checkable
class ContinuingTap(Protocol):
    """A tap that can follow a run into the process that continues its turn (seed 000 §12).

    After ``exited`` for the first process, ``continued`` replaces ``spawned`` for the new
    one (same arguments, plus the first process's error); ``data`` and ``exited`` follow as
    for any process. A tap without it sees the first process only.
    """

    def continued(
        self,
        defn: AgentDef,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        secrets: Sequence[str] = (),
        interruption: RunError | None = None,
    ) -> None: ...


@runtime_checkable
class LadderTap(Protocol):
    """A tap that also sees the stop ladder's steps (RECORD-LADDER-001): from the cancel
    request on, each step the run takes (:class:`harness.ladder.StepKind`), ``t_ms`` after
    the spawn, in order with the chunks ``data`` gets."""

    def step(self, kind: StepKind, t_ms: float, detail: Mapping[str, Any]) -> None: ...


def _reached(now: float, due: float | None) -> bool:
    """``due`` is set and ``now`` is at or past it."""
    return due is not None and now >= due


def _now() -> float:
    return time.monotonic() * 1000.0


def is_substantive(event: Event) -> bool:
    """Whether ``event`` ends the first-output wait (RUN-TIMEOUT-FIRST-001).

    ref §10.1: the deadline runs to "the first substantive event (status/heartbeat do
    not extend it)". ``raw`` (an unparsed banner or debug line) is noise too, and so is
    a whitespace-only text delta (a plain CLI printing blank lines).
    """
    if isinstance(event, (Status, Raw)):
        return False
    if isinstance(event, TextDelta):
        return bool(event.delta.strip())
    return True


class _Run:
    """One run of one CLI (single use)."""

    def __init__(
        self,
        request: RunRequest,
        on_event: OnEvent | None,
        cancel: asyncio.Event | None,
        tap: WireTap | None = None,
        retention: EventRetention | None = None,
        *,
        messages: asyncio.Queue[str] | None = None,
    ) -> None:
        self.req = request
        self.on_event = on_event
        self.tap = tap
        self.cancel_event = cancel
        #: The host's further user messages for this turn (FIDELITY-MIDTURN-001).
        self.messages = messages
        #: User messages written mid-turn; stdin stays open until each has its own
        #: terminal turn.
        self.forwarded = 0
        self.terminal_turns = 0
        self.t0 = _now()
        self.platform = sys.platform
        env = dict(os.environ if request.env is None else request.env)
        env.update(request.env_overlay)
        self.base_env = env
        # ``~`` means what it means to the child: its HOME (USERPROFILE on Windows).
        self.home = (
            request.home or env.get("HOME") or env.get("USERPROFILE") or os.path.expanduser("~")
        )
        self.defn: AgentDef = request.defn
        self.cwd = os.path.abspath(request.cwd)
        # seed 001 §11 / §14: the caller's literal secrets are redacted from the start (a
        # refusal's message too); the MCP plan's join them in execute().
        self.secrets: tuple[str, ...] = tuple(s for s in request.secrets if s)
        self.redactor = Redactor(request.prompt, env=env, secrets=self.secrets)
        self.stderr = StderrTail(self.redactor)
        self.events = _Retained(retention)
        self.retention = retention
        self.argv: tuple[str, ...] = ()
        #: What build_args read (FIDELITY-CAPS-001); ``None`` until it ran.
        self.capabilities: dict[str, bool] | None = None
        #: Some event a person can use was published (FIDELITY-EMPTY-001).
        self.output_seen = False
        #: The log a CLI silent on failure was given (FIDELITY-LOGFILE-001).
        self.log_path: str | None = None
        #: Wall-clock time of the spawn: a CLI log written since is this run's.
        self.spawned_wall: float | None = None
        self.counters: dict[str, int] = {
            "stdout_bytes": 0,
            "frames_written": 0,
            "frames_dropped": 0,
        }
        # process state
        self.transport: asyncio.SubprocessTransport | None = None
        self.protocol: PipeQueue | None = None
        self.tree: OwnedTree | None = None
        self.pid: int | None = None
        self.t_spawn = self.t0
        self.exited = False
        self.returncode: int | None = None
        self.eof = {1: False, 2: False}
        self.stdin_closed = False
        self.stdin_lost = False
        # stream state
        self.parser: StreamParser | None = None
        self.plan: SessionPlan | None = None
        self.session: TwoWaySession | None = None
        self.finished: Finished | None = None
        self.output_finished = False
        self.held: list[Event] = []
        self.stream_error: Error | None = None
        self.turn_clean = False
        self.stream_session_id: str | None = None
        self.first_output_at: float | None = None
        #: When a stream-json turn completed cleanly (stdin was closed as the "done" signal).
        self.completed_at: float | None = None
        self.last_activity = self.t0
        # deadlines and stopping
        self.deadlines: list[tuple[float, str]] = []
        self.terminate_at: float | None = None
        self.stop = StopLadder()
        self.term_started = 0.0
        self.kill_started = 0.0
        self.tree_dead_at: float | None = None
        #: The leader survived SIGKILL (uninterruptible sleep): the run ends without it.
        self.abandoned = False
        self.drain_deadline: float | None = None
        self.next_snapshot = 0.0
        self.runner_error: RunError | None = None
        self.cancel_requested = False
        self.cancel_at: float | None = None
        #: Notes the ladder's steps for a tap that records them (one per process).
        self.ladder: LadderWatch | None = None
        self.ladder_tap: LadderTap | None = None
        #: Processes started after the first to continue its turn (at most one), and how
        #: the first one's turn ended.
        self.continuations = 0
        self.interruption: RunError | None = None
        self.first_output_ms = self._timeout(
            request.first_output_timeout_ms, request.defn.first_output_timeout_ms, None
        )
        self.inactivity_ms = self._timeout(
            request.inactivity_timeout_ms,
            request.defn.inactivity_timeout_ms,
            DEFAULT_INACTIVITY_TIMEOUT_MS,
        )
        self.pi_before: dict[str, tuple[int, float]] = {}
        self.files_before: dict[str, tuple[int, int]] = {}
        self.artifacts_written: list[str] = []
        self._files_written: list[str] = []
        self._files_truncated = False

    @staticmethod
    def _timeout(asked: int | None, from_def: int | None, default: int | None) -> float | None:
        for value in (asked, from_def, default):
            if value is not None:
                return float(value) if value > 0 else None
        return None

    # ------------------------------------------------------------------ results

    def _result(self, status: RunOutcome, error: RunError | None) -> RunResult:
        end = _now()
        latency = None
        if self.cancel_at is not None:
            done = self.tree_dead_at if self.tree_dead_at is not None else end
            latency = max(0.0, done - self.cancel_at)
        rc = self.returncode
        counters = dict(self.counters)
        if self.protocol is not None:
            counters["pipe_pauses"] = self.protocol.pauses
        if self.session is not None:
            counters.update({f"session.{k}": v for k, v in self.session.counters.items()})
        if self.retention is not None:
            counters["events_dropped"] = self.events.dropped
        return RunResult(
            agent_id=self.req.defn.id,
            status=status,
            events=self.events.events(),
            exit_code=rc if rc is not None and rc >= 0 else None,
            signal=-rc if rc is not None and rc < 0 else None,
            duration_ms=end - self.t0,
            files_written=tuple(self._files_written),
            artifacts_written=tuple(self.artifacts_written),
            stderr_tail=self.stderr.text(),
            stderr_bytes=self.stderr.total_bytes,
            error=error,
            session_id=self._session_id(),
            argv=tuple(self.redactor.redact(a) for a in self.argv),
            pid=self.pid,
            stream_format=self.defn.stream_format,
            transport=self.defn.transport_name,
            cancel_requested=self.cancel_requested,
            cancel_latency_ms=latency,
            first_output_ms=(
                None if self.first_output_at is None else self.first_output_at - self.t_spawn
            ),
            files_truncated=self._files_truncated,
            counters=counters,
            continuations=self.continuations,
            interruption=self.interruption,
            capabilities=self.capabilities,
        )

    def _early(self, code: str, message: str, *, rule: str | None, source: str) -> RunResult:
        """A failed result for a run that never spawned."""
        error = RunError(code=code, message=self.redactor.redact(message), rule=rule, source=source)
        return self._result(RunOutcome.FAILED, error)

    def _session_id(self) -> str | None:
        # seed 002 §7.4 (getDurableSessionId): an ACP agent over another runtime (Vela over
        # OpenCode) names a durable handle besides its per-process ACP id; that is the one
        # a later turn loads.
        durable = getattr(self.session, "durable_session_id", None)
        if isinstance(durable, str) and durable:
            return durable
        if self.session is not None and self.session.session_id:
            return self.session.session_id
        if self.stream_session_id:
            return self.stream_session_id
        if self.defn.resume_style is ResumeStyle.SPECIFY:
            return self.req.resume_session_id or self.req.new_session_id
        return None

    # ------------------------------------------------------------------ preparation

    def _use_secrets(self, prompt: str, secrets: Sequence[str]) -> None:
        """Redact ``prompt`` (the composed one) and ``secrets`` from here on (nothing was
        read from the child yet, so the stderr tail starts empty either way)."""
        self.secrets = tuple(dict.fromkeys((*self.secrets, *(s for s in secrets if s))))
        self.redactor = Redactor(prompt, env=self.base_env, secrets=self.secrets)
        self.stderr = StderrTail(self.redactor)

    async def execute(self) -> RunResult:
        prepared: Prepared | Refusal | None = None
        with contextlib.ExitStack() as stack:
            prepared = await prepare_async(
                self.req,
                cwd=self.cwd,
                base_env=self.base_env,
                home=self.home,
                platform=self.platform,
                stack=stack,
                now_ms=_now,
            )
            if isinstance(prepared, Refusal):
                if prepared.defn is not None:
                    self.defn = prepared.defn
                self._use_secrets(self.req.prompt, prepared.secrets)
                return self._early(
                    prepared.code, prepared.message, rule=prepared.rule, source=prepared.source
                )
            # The adapter layer (prepare) composed skills into the prompt and merged the
            # ACP MCP servers: the run carries out that request (seed 000 §4, 002 §8.1).
            if prepared.request is not None:
                self.req = prepared.request
            adapter = prepared.adapter
            self._use_secrets(self.req.prompt, adapter.secrets if adapter else ())
            self.defn = prepared.defn
            self.argv = (prepared.launch_path, *prepared.args)
            self.log_path = prepared.log_path
            if self.req.argv_override is None:
                self.capabilities = dict(self.req.capabilities or {})
            self.parser = prepared.parser
            self.plan = prepared.plan
            self.session = prepared.plan.session if prepared.plan is not None else None
            self.pi_before = prepared.session_files_before
            self.files_before = prepared.files_before
            result = await self._spawn_and_run(prepared)
        # The stack is closed: the .mcp.json was restored (MCP-RUN-001); report the layer.
        error = result.error
        if error is not None:
            # seed 001 §11: no secret in an error message, whichever layer wrote it.
            error = dataclasses.replace(error, message=self.redactor.redact(error.message))
        if adapter is None:
            return dataclasses.replace(result, error=error)
        return dataclasses.replace(
            result,
            error=error,
            mcp_injection=adapter.summary(),
            skills_staged=tuple(s.relative_dir for s in adapter.staged),
        )

    # ------------------------------------------------------------------ the live run

    async def _spawn_and_run(self, prepared: Prepared) -> RunResult:
        early = await self._run_process(prepared, prepared.start_actions)
        if early is not None:
            return early
        follow = self._continuation()
        if follow is not None:
            early = await self._continue_in_new_process(prepared, follow)
            if early is not None:
                return early
        return self._finish()

    def _continuation(self) -> TwoWaySession | None:
        """The session that continues this run's interrupted turn natively, or ``None``.

        seed 000 "AMR compaction continuation": "The daemon waits for the previous process
        tree to become quiescent, loads the same durable session in a new process" and "At
        most one native continuation is allowed per physical Run" (RUN-CONTINUE-001). Not
        after a cancel (it stops the run), a runner failure (a timeout), or when any owned
        process of the first tree could not be reaped.
        """
        session = self.session
        if (
            not isinstance(session, ContinuableSession)
            or self.continuations >= 1
            or self.finished is None
            or self.finished.status is not RunStatus.FAILED
            or self.cancel_requested
            or self.runner_error is not None
            or self.abandoned
            or self.tree is None
            or self.tree.survivors()
        ):
            return None
        follow = session.continuation_session()
        if follow is not None and self.cancel_event is not None and self.cancel_event.is_set():
            # The cancel came after the first process ended, before its watcher saw it:
            # the run is cancelled (ref §10.1 rule 1) and nothing more is started.
            self.cancel_requested = True
            self.cancel_at = _now()
            return None
        return follow

    async def _continue_in_new_process(
        self, prepared: Prepared, session: TwoWaySession
    ) -> RunResult | None:
        """Start ``session`` in a new process of the same command: the run goes on.

        The first process is over and its tree reaped (``_complete``); its events stay.
        A tap that can follow the run (:class:`ContinuingTap`) sees the new process too;
        any other sees the first one only.
        """
        assert self.plan is not None
        if self.transport is not None:
            self.transport.close()
        if self.tap is not None:
            rc = self.returncode
            self.tap.exited(
                rc if rc is not None and rc >= 0 else None,
                -rc if rc is not None and rc < 0 else None,
                _now() - self.t_spawn,
            )
            if not isinstance(self.tap, ContinuingTap):
                self.tap = None
        self.continuations += 1
        first = self._error_for(RunOutcome.FAILED, self._close_facts())
        if first is not None:
            # seed 001 §11: no secret in an error message, the kept one included.
            first = dataclasses.replace(first, message=self.redactor.redact(first.message))
        self.interruption = first
        self._reset_process()
        self.session = session
        return await self._run_process(prepared, session.start(self.plan.request, _now()))

    def _reset_process(self) -> None:
        """Forget the per-process state of the last process (a new one is about to start)."""
        self.transport = None
        self.protocol = None
        self.tree = None
        self.exited = False
        self.returncode = None
        self.eof = {1: False, 2: False}
        self.stdin_closed = False
        self.stdin_lost = False
        self.finished = None
        self.output_finished = False
        self.deadlines = []
        self.terminate_at = None
        self.stop = StopLadder()  # the next process has its own tree to bring down
        self.tree_dead_at = None
        self.drain_deadline = None

    async def _run_process(
        self, prepared: Prepared, start_actions: Actions | None
    ) -> RunResult | None:
        """Spawn one process of the run and drive it until it is reaped.

        Returns a failed result when the process could not be started, else ``None``.
        """
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        protocol = PipeQueue(queue, asyncio.get_running_loop().create_future())
        try:
            transport = await self._spawn(prepared, protocol)
        except (OSError, ValueError) as exc:
            what = errno_name(exc) if isinstance(exc, OSError) else type(exc).__name__
            return self._early(
                RunErrorCode.SPAWN_FAILED,
                f"could not start {prepared.launch_path}: {what}",
                rule="RUN-SPAWN-001",
                source="runner",
            )
        self._adopt(transport, protocol)
        try:
            self._announce(prepared)
            feeders = self._feeders(queue)
            try:
                self._deliver_prompt(start_actions)
                await self._loop(queue)
            except BaseException:
                await self._emergency_stop()
                raise
            finally:
                for feeder in feeders:
                    if not feeder.done():
                        feeder.cancel()
        finally:
            release(transport.get_pid())  # SIG-WATCHDOG-001: the tree is reaped or given up
        return None

    async def _spawn(self, prepared: Prepared, protocol: PipeQueue) -> asyncio.SubprocessTransport:
        """Start the process with its pipes (RUN-SPAWN-001); a Windows .cmd shim starts
        with the exact line its guards judged (winspawn)."""
        loop = asyncio.get_running_loop()
        pipes: dict[str, Any] = {
            "stdin": subprocess.PIPE,
            "stdout": subprocess.PIPE,
            "stderr": subprocess.PIPE,
            "cwd": self.cwd,
            "env": prepared.child_env,
            **spawn_kwargs(),
        }
        shim = shim_launch(
            prepared.launch_path, prepared.args, platform=self.platform, env=prepared.child_env
        )
        attempt = 1
        while True:
            try:
                if shim is None:
                    transport, _ = await loop.subprocess_exec(
                        lambda: protocol, prepared.launch_path, *prepared.args, **pipes
                    )
                else:
                    transport, _ = await spawn_command_line(loop, lambda: protocol, shim, **pipes)
                return transport
            except OSError as exc:
                # ETXTBSY: the executable was just written (a fresh shim) and a process
                # forked meanwhile still holds its write handle until it execs; the
                # kernel refuses the exec only for that moment, so try again shortly.
                if exc.errno != errno.ETXTBSY or attempt >= _SPAWN_BUSY_TRIES:
                    raise
                await asyncio.sleep(_SPAWN_BUSY_WAIT_S * attempt)
                attempt += 1

    def _adopt(self, transport: asyncio.SubprocessTransport, protocol: PipeQueue) -> None:
        """Take on the started process: its pipes, its owned tree, its clocks."""
        self.transport = transport
        self.protocol = protocol
        self.pid = transport.get_pid()
        # RUN-WINJOB-001: what the tree reports (a CTRL_BREAK that failed, no Job Object) is
        # a line of the run's stderr tail, where a user looks for the cause.
        self.tree = OwnedTree(self.pid, on_note=self._tree_note)
        # SIG-WATCHDOG-001: should this process die without a word, the watchdog stops the
        # CLI's group by the run's own ladder (SIGTERM, the grace, SIGKILL).
        guard(self.pid, self.req.shutdown_grace_ms)
        self.t_spawn = self.last_activity = _now()
        self.spawned_wall = time.time()
        self.next_snapshot = self.t_spawn + _SNAPSHOT_MS

    def _announce(self, prepared: Prepared) -> None:
        """Tell the tap the process exists (a continuing one, that the run went on), and
        start noting the stop ladder for a tap that records it (RECORD-LADDER-001)."""
        if isinstance(self.tap, ContinuingTap) and self.continuations:
            self.tap.continued(
                self.defn,
                self.argv,
                prepared.child_env,
                secrets=self.secrets,
                interruption=self.interruption,
            )
        elif self.tap is not None:
            self.tap.spawned(self.defn, self.argv, prepared.child_env, secrets=self.secrets)
        self.ladder_tap = self.tap if isinstance(self.tap, LadderTap) else None
        if self.ladder_tap is not None:
            self.ladder = LadderWatch(
                platform=self.platform, shutdown_grace_ms=self.req.shutdown_grace_ms
            )
            self._note_ladder(self.t_spawn)

    def _feeders(self, queue: asyncio.Queue[tuple[str, Any]]) -> list[asyncio.Future[Any]]:
        """The tasks that turn the host's cancel and its further user messages into
        messages of the loop; cancelled when the process is over."""
        feeders: list[asyncio.Future[Any]] = []
        if self.cancel_event is not None:
            watcher = asyncio.ensure_future(self.cancel_event.wait())
            watcher.add_done_callback(
                lambda fut: None if fut.cancelled() else queue.put_nowait(("cancel", None))
            )
            feeders.append(watcher)
        if self.messages is not None:
            feeders.append(asyncio.ensure_future(_relay(self.messages, queue)))
        return feeders

    def _deliver_prompt(self, start_actions: Actions | None) -> None:
        """seed 002 §6.2 (RUN-STDIN-001): the prompt reaches the CLI its def's way."""
        if start_actions is not None:
            self._apply(start_actions)
            return
        payload = stdin_payload(self.defn, self.req.prompt)
        if payload:
            self._write(payload)
        if payload is None or not keep_stdin_open(self.defn):
            # text stdin: write, then close; file / argv delivery: nothing to read.
            self._close_stdin()

    async def _loop(self, queue: asyncio.Queue[tuple[str, Any]]) -> None:
        # One pending get, awaited with asyncio.wait: ``asyncio.wait_for`` (3.10, 3.11)
        # returns the inner result and drops a cancellation of this task that lands in the
        # same loop turn as a message (SIG-RACE-001); the run would then go on unstopped.
        getter: asyncio.Future[tuple[str, Any]] | None = None
        try:
            while True:
                now = _now()
                self._timers(now)
                self._note_ladder(now)
                if self._complete():
                    return
                wake = self._next_wake(now)
                timeout = None if wake is None else max(0.0, (wake - now) / 1000.0)
                if getter is None:
                    getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({getter}, timeout=timeout)
                if not getter.done():
                    continue
                message, getter = getter.result(), None
                self._handle(message)
                while not queue.empty():
                    self._handle(queue.get_nowait())
                self._note_ladder(_now())
        finally:
            if getter is not None:
                getter.cancel()

    def _handle(self, message: tuple[str, Any]) -> None:
        kind, value = message
        now = _now()
        if kind == "data":
            fd, chunk = value
            assert self.protocol is not None
            self.protocol.consumed(len(chunk))
            self.last_activity = now
            if fd == 1:
                self.counters["stdout_bytes"] += len(chunk)
                self._tap("stdout", chunk, now)
                self._stdout(chunk, now)
            elif fd == 2:
                self._tap("stderr", chunk, now)
                self.stderr.feed(chunk)
        elif kind == "eof":
            if value == 0:
                self.stdin_lost = True
            elif value in self.eof:
                self.eof[value] = True
                if value == 1:
                    self._end_of_output(now)
        elif kind == "exit":
            self._on_exit(now)
        elif kind == "cancel":
            self._on_cancel(now)
        elif kind == "user_message":
            self._on_user_message(str(value))

    def _on_user_message(self, text: str) -> None:
        """FIDELITY-MIDTURN-001: a further user message joins the turn where the protocol
        takes one (a stream-json stdin still open, seed 002 §6.2); elsewhere the run says
        it was not forwarded, never silently."""
        why: str | None = None
        if not keep_stdin_open(self.defn):
            why = f"{self.defn.stream_format} takes no user message after the prompt"
        elif self.stdin_closed or self.stdin_lost or self.exited or self.cancel_requested:
            why = "the turn is over (stdin is closed)"
        if why is not None:
            self._publish(Status(label="user_message_not_forwarded", detail=why))
            return
        self._write(stream_json_user_message(text))
        self.forwarded += 1
        self._publish(Status(label="user_message_forwarded"))

    # ------------------------------------------------------------------ stdout

    def _stdout(self, chunk: bytes, now: float) -> None:
        if self.output_finished:
            return
        if self.session is not None:
            self._apply(self.session.receive(chunk, now))
        elif self.parser is not None:
            for event in self.parser.feed(chunk):
                self._publish(event)

    def _end_of_output(self, now: float) -> None:
        if self.output_finished:
            return
        self.output_finished = True
        if self.session is not None:
            # dsh note: read to EOF after Finished, then end_of_output (late frames -> Error).
            self._apply(self.session.end_of_output(now))
        elif self.parser is not None:
            holding = False
            for event in self.parser.finish():
                # seed 000 §5.13: plain artifacts are named and written after the exit.
                holding = holding or (isinstance(event, Artifact) and event.path is None)
                if holding:
                    self.held.append(event)
                else:
                    self._publish(event)

    def _publish(self, event: Event) -> None:
        now = _now()
        self.events.add(event)
        if not self.output_seen and has_output((event,)):
            self.output_seen = True
        if self.first_output_at is None and is_substantive(event):
            self.first_output_at = now
        if isinstance(event, Error) and self.stream_error is None:
            self.stream_error = event
        if isinstance(event, Status) and event.session_id:
            self.stream_session_id = event.session_id
        if self.session is None:
            bookkeeping = keeps_turn_bookkeeping(self.defn.stream_format)
            if bookkeeping and is_clean_terminal_turn(event):
                self.turn_clean = True
            if not self.stdin_closed and should_close_stdin(self.defn, event):
                self.terminal_turns += 1
            if self.terminal_turns > self.forwarded and not self.stdin_closed:
                # ref §2.1.8 (RUN-STDIN-001): the held-open stdin closes at the first
                # terminal turn, never at a mid-tool turn_end{tool_use}; a forwarded user
                # message gets its own terminal turn first (FIDELITY-MIDTURN-001).
                self._close_stdin()
                if self.turn_clean and self.completed_at is None:
                    self.completed_at = now
        if self.on_event is not None:
            self.on_event(event)

    # ------------------------------------------------------------------ session actions

    def _apply(self, actions: Actions) -> None:
        for event in actions.events:
            self._publish(event)
        for frame in actions.frames:
            self._write(frame)
        now = _now()
        newly_finished = False
        for control in actions.controls:
            if isinstance(control, CloseStdin):
                self._close_stdin()
            elif isinstance(control, Terminate):
                at = now + control.after_ms
                self.terminate_at = at if self.terminate_at is None else min(self.terminate_at, at)
            elif isinstance(control, SetDeadline):
                self.deadlines.append((control.at_ms, control.label))
            elif isinstance(control, Finished) and self.finished is None:
                self.finished = control
                newly_finished = True
                self._capture_pi_session()
        if newly_finished and self.terminate_at is None and not self.exited:
            if self.cancel_requested:
                # seed 001 §10: the cancel was acknowledged (step 2 is over): close stdin and
                # terminate the owned tree now (steps 3-4); the kill bound follows (step 5).
                self.terminate_at = now
            else:
                # seed 001 §6: "The runtime exits after the terminal result; OD still reaps
                # and verifies the process tree." A session that asked for no Terminate
                # still gets a bound: the tree is stopped unless it exits within the grace.
                self.terminate_at = now + self.req.shutdown_grace_ms

    def _capture_pi_session(self) -> None:
        plan = self.plan
        capture = getattr(self.session, "capture_session_file", None)
        if plan is None or plan.session_dir is None or not callable(capture):
            return
        capture(self.pi_before, snapshot_jsonl(plan.session_dir))

    def _write(self, data: bytes) -> None:
        if self.stdin_closed or self.stdin_lost or self.transport is None:
            self.counters["frames_dropped"] += 1
            return
        pipe = self.transport.get_pipe_transport(0)
        if not isinstance(pipe, asyncio.WriteTransport) or pipe.is_closing():
            self.counters["frames_dropped"] += 1
            return
        pipe.write(data)
        self.counters["frames_written"] += 1
        self._tap("stdin", data, _now())

    def _tap(self, direction: str, data: bytes, now: float) -> None:
        if self.tap is not None and data:
            self._note_ladder(now)  # a step taken before this chunk goes before it
            self.tap.data(direction, data, max(0.0, now - self.t_spawn))

    def _tree_note(self, text: str) -> None:
        self.stderr.feed(f"harness: {text}\n".encode())

    def _note_ladder(self, now: float) -> None:
        """RECORD-LADDER-001: hand a recording tap the stop-ladder steps taken since the
        last look. The one place steps are noted: the ladder is read from the run's state
        (:class:`~harness.runner.ladder.LadderWatch`), never reported by the code that
        stops processes."""
        watch, tap = self.ladder, self.ladder_tap
        if watch is None or tap is None:
            return
        state = LadderState(
            cancel_requested=self.cancel_requested,
            cancel_at=self.cancel_at,
            deadlines=tuple(self.deadlines),
            stdin_closed=self.stdin_closed,
            terminated_at=self.term_started or None,
            killed_at=self.kill_started or None,
            exited=self.exited,
            returncode=self.returncode,
            reaped_at=self.tree_dead_at,
            abandoned=self.abandoned,
        )
        for noted in watch.observe(state, now):
            at = noted.at_ms if noted.at_ms is not None else now
            tap.step(noted.kind, max(0.0, at - self.t_spawn), noted.detail)

    def _close_stdin(self) -> None:
        if self.stdin_closed:
            return
        self.stdin_closed = True
        if self.transport is None:
            return
        pipe = self.transport.get_pipe_transport(0)
        if pipe is not None:
            pipe.close()  # buffered bytes are flushed first

    # ------------------------------------------------------------------ exit, cancel, stop

    def _on_exit(self, now: float) -> None:
        assert self.transport is not None and self.tree is not None
        self.exited = True
        self.returncode = self.transport.get_returncode()
        self.tree.mark_root_exited()
        if self.stop.stopping:
            return  # the stop in progress verifies the tree
        if self.tree.survivors():
            # seed 001 §6: the runtime exited, we still reap and verify its tree.
            self._start_terminate(now)
        else:
            self._tree_gone(now)

    def _on_cancel(self, now: float) -> None:
        if self.cancel_requested:
            return
        self.cancel_requested = True
        self.cancel_at = now
        if self.tree_dead_at is not None or self.stop.stopping:
            return
        if self.session is not None and self.finished is None:
            # seed 001 §10 step 1 / ref §10.1: the protocol cancel first.
            before = len(self.deadlines)
            self._apply(self.session.cancel(now))
            if self.finished is None and len(self.deadlines) > before:
                return  # step 2: the session's bounded grace runs; tick() ends it
            if self.finished is not None and self.terminate_at is not None:
                return  # the session finished and said when to terminate
        # steps 3-5: close stdin, terminate the tree, force-kill after the grace.
        self._start_terminate(now)

    def _start_terminate(self, now: float) -> None:
        if self.stop.rung is not Rung.IDLE:
            return
        assert self.tree is not None
        self._close_stdin()
        self.stop.climb(Climb.TERMINATE)
        self.term_started = now
        self.tree.terminate()

    def _tree_gone(self, now: float) -> None:
        self.stop.climb(Climb.GONE)
        if self.tree_dead_at is None:
            self.tree_dead_at = now
        if not (self.eof[1] and self.eof[2]):
            self.drain_deadline = now + _DRAIN_MS

    # ------------------------------------------------------------------ timers

    def _timers(self, now: float) -> None:
        """Take each timed step that is due, in a fixed order: each step reads the state
        the one before it left (a timeout that starts the stop leaves the terminate, the
        linger and the poll to the stop)."""
        if self.tree is None:
            return
        self._output_timeouts(now)
        if _reached(now, self._session_due()):
            self._tick_session(now)
        if _reached(now, self._terminate_due()):
            self._terminate_requested(now)
        if _reached(now, self._linger_deadline()):
            # The turn completed and stdin (the CLI's "done" signal) was closed, yet the
            # CLI stays, silent: stop it (seed 001 §6 "reaps and verifies the process tree").
            self._start_terminate(now)
        if self.stop.stopping:
            self._poll_stop(now)
        if _reached(now, self._snapshot_due()):
            self._snapshot(now)
        if _reached(now, self.drain_deadline):
            self._drain(now)

    def _next_wake(self, now: float) -> float | None:
        """When the loop must look again without a message: the nearest deadline, and
        every :data:`_POLL_MS` while a stop is in progress (it polls the tree)."""
        points = [
            self._first_output_due(),
            self._idle_due(),
            self._session_due(),
            self._terminate_due(),
            self._linger_deadline(),
            now + _POLL_MS if self.stop.stopping else None,
            self._snapshot_due(),
            self.drain_deadline,
        ]
        due = [p for p in points if p is not None]
        return min(due) if due else None

    def _watching_output(self) -> bool:
        """The output timeouts apply: the CLI runs, nothing finished, stopped or failed it."""
        return (
            self.finished is None
            and not self.exited
            and not self.cancel_requested
            and self.stop.rung is Rung.IDLE
            and self.runner_error is None
        )

    def _first_output_due(self) -> float | None:
        """RUN-TIMEOUT-FIRST-001: when the first output is late, until it came."""
        if self.first_output_ms is None or self.first_output_at is not None:
            return None
        return self.t_spawn + self.first_output_ms if self._watching_output() else None

    def _idle_due(self) -> float | None:
        """RUN-TIMEOUT-IDLE-001: when a silent CLI (no stdout, no stderr) is stuck."""
        if self.inactivity_ms is None or not self._watching_output():
            return None
        return self.last_activity + self.inactivity_ms

    def _output_timeouts(self, now: float) -> None:
        """Fail the run on a late first output, else on a silence (one failure at most)."""
        if _reached(now, self._first_output_due()):
            self._timeout_fail(
                now,
                RunErrorCode.FIRST_OUTPUT_TIMEOUT,
                f"no output within {self.first_output_ms:.0f} ms of spawn",
                "RUN-TIMEOUT-FIRST-001",
            )
        elif _reached(now, self._idle_due()):
            self._timeout_fail(
                now,
                RunErrorCode.INACTIVITY_TIMEOUT,
                f"no stdout or stderr for {self.inactivity_ms:.0f} ms",
                "RUN-TIMEOUT-IDLE-001",
            )

    def _session_due(self) -> float | None:
        """The session's nearest deadline (a cancel's grace, an acknowledgement's wait)."""
        if not self.deadlines or self.session is None:
            return None
        return min(at for at, _ in self.deadlines)

    def _tick_session(self, now: float) -> None:
        """Drop the deadlines that passed and let the session act on them."""
        assert self.session is not None
        self.deadlines = [d for d in self.deadlines if d[0] > now]
        self._apply(self.session.tick(now))
        if self.cancel_requested and self.finished is None and not self.deadlines:
            # seed 001 §10 steps 3-5: the grace is over and the session did not end its
            # own cancel.
            self._start_terminate(now)

    def _terminate_due(self) -> float | None:
        """When a session's Terminate (or the bound after its Finished) falls due."""
        return self.terminate_at if self.stop.rung is Rung.IDLE else None

    def _terminate_requested(self, now: float) -> None:
        """Stop the tree as asked, unless it is gone already."""
        assert self.tree is not None
        self.terminate_at = None
        if not self.exited or self.tree.survivors():
            self._start_terminate(now)

    def _linger_deadline(self) -> float | None:
        """When a CLI that completed its turn and had stdin closed has stayed too long."""
        if self.completed_at is None or self.exited or self.stop.rung is not Rung.IDLE:
            return None
        return max(self.completed_at, self.last_activity) + self.req.shutdown_grace_ms

    def _poll_stop(self, now: float) -> None:
        """One look at a tree being stopped: gone, due for the kill, or given up on."""
        tree = self.tree
        assert tree is not None
        survivors = tree.survivors()
        if not survivors and self.exited:
            self._tree_gone(now)
        elif self.stop.rung is Rung.TERMINATING:
            if now >= self.term_started + self.req.shutdown_grace_ms:
                self._kill(now)
        elif self.stop.rung is Rung.KILLING and now >= self.kill_started + _KILL_WAIT_MS:
            self._give_up(now, [p.pid for p in survivors])

    def _kill(self, now: float) -> None:
        """seed 001 §10 step 5: force-kill what is left after the second bound."""
        assert self.tree is not None
        self.stop.climb(Climb.KILL)
        self.kill_started = now
        self.tree.kill()

    def _give_up(self, now: float, survivors: Sequence[int]) -> None:
        """RUN-REAP-001: the kill wait passed with processes alive (``survivors``, their
        pids); the run ends without them and says which survived."""
        if self.runner_error is None:
            pids = ", ".join(str(pid) for pid in survivors) or "the leader"
            self.runner_error = RunError(
                RunErrorCode.TREE_SURVIVED,
                f"processes survived SIGKILL: {pids}",
                rule="RUN-REAP-001",
            )
        self.abandoned = not self.exited
        self._tree_gone(now)

    def _snapshot_due(self) -> float | None:
        """When the leader's descendants are recorded next (while it runs)."""
        return None if self.exited else self.next_snapshot

    def _snapshot(self, now: float) -> None:
        assert self.tree is not None
        self.tree.snapshot()
        self.next_snapshot = now + _SNAPSHOT_MS

    def _drain(self, now: float) -> None:
        """The tree is gone but a pipe stays open (an escaped process holds it): stop
        reading, and end the output as if it had reached EOF."""
        self.drain_deadline = None
        if self.transport is not None:
            self.transport.close()
        for fd in (1, 2):
            if not self.eof[fd]:
                self.eof[fd] = True
                if fd == 1:
                    self._end_of_output(now)

    def _timeout_fail(self, now: float, code: str, message: str, rule: str) -> None:
        self.runner_error = RunError(code, message, rule=rule)
        self._start_terminate(now)

    def _complete(self) -> bool:
        return (
            (self.exited or self.abandoned)
            and self.stop.rung in (Rung.IDLE, Rung.GONE)
            and self.tree_dead_at is not None
            and self.eof[1]
            and self.eof[2]
        )

    async def _emergency_stop(self) -> None:
        """The awaiting task was cancelled or a callback raised: kill and reap, then re-raise.

        RUN-REAP-001 holds here too: the leader is reaped and no owned process is alive
        (bounded by the kill wait) before the exception propagates.
        """
        tree = self.tree
        if tree is not None:
            tree.kill()
        protocol = self.protocol
        deadline = _now() + _KILL_WAIT_MS
        with contextlib.suppress(asyncio.CancelledError):
            if protocol is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(protocol.exited), _KILL_WAIT_MS / 1000)
                if protocol.exited.done() and tree is not None:
                    tree.mark_root_exited()
            while tree is not None and tree.survivors() and _now() < deadline:
                tree.kill()
                await asyncio.sleep(_POLL_MS / 1000)
        if self.transport is not None:
            self.transport.close()

    # ------------------------------------------------------------------ the verdict

    def _finish(self) -> RunResult:
        now = _now()
        if self.transport is not None:
            self.transport.close()
        if not self.output_finished:
            self._end_of_output(now)
        if self.session is not None and self.finished is not None:
            self._capture_pi_session()
        self._write_artifacts()
        after, truncated = snapshot_tree(self.cwd)
        self._files_written = changed_paths(self.files_before, after)
        self._files_truncated = truncated
        facts = self._close_facts()
        status = classify_close_status(facts)
        result = self._result(status, self._error_for(status, facts))
        if self.tap is not None:
            self.tap.exited(result.exit_code, result.signal, result.duration_ms)
        return result

    def _close_facts(self) -> CloseFacts:
        """What the verdict reads once the process is gone (ref §10.1)."""
        rc = self.returncode
        return CloseFacts(
            cancel_requested=self.cancel_requested,
            runner_failed=self.runner_error is not None,
            exit_code=rc if rc is not None and rc >= 0 else None,
            signal=-rc if rc is not None and rc < 0 else None,
            session_status=self.finished.status if self.finished else None,
            stream_error=self.stream_error is not None,
            turn_completed_cleanly=self.turn_clean,
            artifact_produced=bool(self.artifacts_written),
            empty_output=self._empty_output(),
        )

    def _error_for(self, status: RunOutcome, facts: CloseFacts) -> RunError | None:
        if self.runner_error is not None:
            return self.runner_error
        if status is not RunOutcome.FAILED:
            return None
        if self.finished is not None and self.finished.error is not None:
            err = self.finished.error
            return RunError(err.code, err.message, rule=err.rule, source="session")
        if self.stream_error is not None:
            event = self.stream_error
            code = event.code or RunErrorCode.STREAM_ERROR
            stream = RunError(code, self.redactor.redact(event.message), source="stream")
            # seed 002 §7.4: the CLI's own log says more than its stream (OpenCode).
            found = classify_log_failure(self._own_log_tail())
            return stream if found is None else self._service_error(*found, stream)
        rc = self.returncode
        name = os.path.basename(self.argv[0]) if self.argv else "the CLI"
        if self._empty_output() and ended_cleanly(facts):
            # FIDELITY-EMPTY-001: an ACP agent that ended its turn and would not exit was
            # stopped by the host; its empty turn, not that stop, is what went wrong.
            how = "exited 0" if rc == 0 else "ended its turn"
            error = RunError(
                RunErrorCode.EMPTY_OUTPUT,
                f"{name} {how} without any output (no text, tool call or file)",
                rule="FIDELITY-EMPTY-001",
                source="process",
            )
        else:
            how = f"was killed by signal {-rc}" if rc is not None and rc < 0 else f"exited {rc}"
            error = RunError(
                RunErrorCode.EXIT_NONZERO, f"{name} {how}", rule="RUN-STATUS-001", source="process"
            )
        return self._classified(error)

    def _empty_output(self) -> bool:
        """FIDELITY-EMPTY-001: nothing a person can use came out of the run."""
        return not (self.output_seen or self._files_written or self.artifacts_written)

    def _log_tail(self) -> str:
        """The last 64 KiB of the CLI's log, when it was given one (FIDELITY-LOGFILE-001)."""
        return _tail(self.log_path) if self.log_path is not None else ""

    def _own_log_tail(self) -> str:
        """seed 002 §7.4: the tail of the newest ``*.log`` the CLI wrote into its own log
        directory since the spawn (FIDELITY-OPENCODE-LOG-001); ``""`` when none."""
        folder = self.defn.failure_log_dir
        if folder is None or self.spawned_wall is None:
            return ""
        if folder.startswith("~"):
            folder = self.home + folder[1:]
        newest: tuple[float, str] | None = None
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if not entry.name.endswith(".log") or not entry.is_file():
                        continue
                    mtime = entry.stat().st_mtime
                    if mtime + 1 >= self.spawned_wall and (newest is None or mtime > newest[0]):
                        newest = (mtime, entry.path)
        except OSError:
            return ""
        return _tail(newest[1]) if newest is not None else ""

    def _classified(self, error: RunError) -> RunError:
        """A failure nothing in the stream explains, read from stderr and the CLI's log as
        the host reads it (ref §5.4): an auth failure gets the def's guidance (seed 000
        §5.11, FIDELITY-AUTH-001), a rate limit or an unavailable upstream its own code."""
        found = classify_log_failure(self._own_log_tail()) or classify_service_failure(
            f"{self.stderr.text()}\n{self._log_tail()}"
        )
        return error if found is None else self._service_error(*found, error)

    def _service_error(self, kind: ServiceFailure, line: str, error: RunError) -> RunError:
        """The failure as the host names it, with the line that shows it."""
        if kind is ServiceFailure.AUTH_REQUIRED:
            guidance = self.defn.auth_guidance or GENERIC_AUTH_GUIDANCE
            message = f"{self.defn.name} could not authenticate ({line}). {guidance}"
            return RunError(kind.value, message, rule="FIDELITY-AUTH-001", source="process")
        message = f"{self.defn.name} failed: {line} ({error.message})"
        return RunError(kind.value, message, rule="FIDELITY-FAILURE-001", source="process")

    def _write_artifacts(self) -> None:
        """seed 000 §5.13 (RUN-ARTIFACTS-001): name against the project, write, report."""
        held, self.held = self.held, []
        if not held:
            return
        text = getattr(self.parser, "text", None)
        events, written = write_held_artifacts(
            held, text if isinstance(text, str) else None, self.cwd, cancelled=self.cancel_requested
        )
        self.artifacts_written.extend(written)
        for event in events:
            self._publish(event)


async def run_agent_async(
    request: RunRequest,
    *,
    on_event: OnEvent | None = None,
    cancel: asyncio.Event | None = None,
    tap: WireTap | None = None,
    retention: EventRetention | None = None,
    messages: asyncio.Queue[str] | None = None,
) -> RunResult:
    """Run one turn of ``request.defn`` and return what happened (never raises for the CLI).

    ``on_event`` sees every event as it is published; ``tap`` every byte written to
    or read from the CLI (a recorder). Setting ``cancel`` cancels the run in the seeds'
    order. Cancelling the awaiting task kills and reaps the tree first. ``retention``
    bounds the events kept on the result (:class:`EventRetention`; default: all).
    A text put on ``messages`` is a further user message for the turn in progress
    (FIDELITY-MIDTURN-001).
    """
    return await _Run(request, on_event, cancel, tap, retention, messages=messages).execute()


async def _relay(messages: asyncio.Queue[str], queue: asyncio.Queue[tuple[str, Any]]) -> None:
    """Hand each host message to the run's loop, in order."""
    while True:
        queue.put_nowait(("user_message", await messages.get()))


#: The signals that cancel a run started by a command (SIG-CANCEL-001): the terminal's
#: interrupt, a polite kill, a closed terminal (Windows: Ctrl-C and Ctrl-Break).
CANCEL_SIGNALS: tuple[int, ...] = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK")
    if hasattr(signal, name)
)


class CancelOnSignals:
    """Turn SIGINT / SIGTERM / SIGHUP into the run's cancel (SIG-CANCEL-001).

    A context manager around a command's whole run: while it is open these signals no
    longer raise ``KeyboardInterrupt`` or end the process; the first one is remembered in
    :attr:`received` and sets the event handed to :meth:`bind`, so the run stops by the
    ``--cancel-after`` ladder (protocol cancel, grace, close stdin, terminate, kill), its
    cleanup (injected files, temp dirs) runs, and the caller exits ``128 + signum``. A
    signal that came before :meth:`bind` sets the event at once. Later signals are counted
    and change nothing: the ladder is bounded already. Outside the main thread (where
    Python cannot install handlers) it does nothing.
    """

    def __init__(self, signals: Sequence[int] = CANCEL_SIGNALS) -> None:
        self.signals = tuple(signals)
        self.received: int | None = None
        self.count = 0
        self._previous: dict[int, Any] = {}
        self._target: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None

    def __enter__(self) -> CancelOnSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in self.signals:
                self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._target = None
        for signum, previous in self._previous.items():
            # None: the handler was not set from Python; the default is the closest.
            signal.signal(signum, signal.SIG_DFL if previous is None else previous)
        self._previous.clear()

    def bind(self, cancel: asyncio.Event) -> None:
        """From now on a signal sets ``cancel`` (call it inside the running loop)."""
        self._target = (asyncio.get_running_loop(), cancel)
        if self.received is not None:
            cancel.set()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        # Runs in the main thread between two bytecodes, possibly inside the loop's own
        # callbacks: hand the set to the loop instead of touching the event here.
        self.count += 1
        if self.received is None:
            self.received = signum
        target = self._target
        if target is not None:
            loop, cancel = target
            with contextlib.suppress(RuntimeError):  # the loop was closed meanwhile
                loop.call_soon_threadsafe(cancel.set)

    @property
    def exit_code(self) -> int | None:
        """``128 + signum`` once a signal came (SIGINT 130, SIGHUP 129, SIGTERM 143)."""
        return None if self.received is None else 128 + self.received

    @property
    def name(self) -> str:
        """The received signal's name (``SIGTERM``), or ``""``."""
        if self.received is None:
            return ""
        try:
            return signal.Signals(self.received).name
        except ValueError:
            return f"signal {self.received}"


def run_agent(
    request: RunRequest,
    *,
    on_event: OnEvent | None = None,
    cancel: threading.Event | None = None,
    tap: WireTap | None = None,
    retention: EventRetention | None = None,
) -> RunResult:
    """:func:`run_agent_async` for synchronous callers (runs its own event loop).

    ``cancel`` is a :class:`threading.Event` another thread may set. Must not be called
    from a thread that is already running an event loop.
    """

    async def main() -> RunResult:
        if cancel is None:
            return await run_agent_async(request, on_event=on_event, tap=tap, retention=retention)
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        stop = threading.Event()

        def bridge() -> None:
            while not stop.is_set():
                if cancel.wait(0.02):
                    loop.call_soon_threadsafe(event.set)
                    return

        thread = threading.Thread(target=bridge, name="harness-run-cancel", daemon=True)
        thread.start()
        try:
            return await run_agent_async(
                request, on_event=on_event, cancel=event, tap=tap, retention=retention
            )
        finally:
            stop.set()

    return asyncio.run(main())
