"""``harness run AGENT``: one turn of an agent CLI, events printed live, then a summary.

Rules: RUN-CLI-001, SESSION-RUN-002.
Design: docs/design/cli.md#harness.commands.run
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import sys
import tempfile
import uuid
from typing import TYPE_CHECKING, Any, TextIO

from conformance.fakes import fake_for
from harness.commands.common import ChosenDef, check_scenario, choose_def
from harness.commands.record import (
    EXIT_INTERRUPTED,
    check_out_path,
    interrupted_message,
    recording_json,
    recording_line,
)
from harness.commands.render import format_event
from harness.defs.types import ResumeStyle
from harness.errors import HarnessError
from harness.events import Event, TextDelta, event_json_line
from harness.host.launch import path_env_key
from harness.host.native_sessions import (
    SessionStore,
    TranscriptMessage,
    TranscriptStore,
    default_state_dir,
)
from harness.inputs import read_text_file
from harness.mcp import injection_secrets, load_mcp_config
from harness.mcp.bundles import load_run_tool_bundle
from harness.mcp.journal import JOURNAL_NAME, recover
from harness.runner import RunRequest, RunResult, run_agent_async
from harness.runner.conversation import run_conversation_turn
from harness.runner.engine import CancelOnSignals, EventRetention
from harness.runtime.fakes_install import install_fakes

if TYPE_CHECKING:
    from harness.defs.types import AgentDef
    from harness.recording.record import RunRecorder

__all__ = ["DEFAULT_FAKE_PROMPT", "cmd_run", "format_summary"]

#: The prompt of a ``--fake`` run when none is given (fakes follow their scenario).
DEFAULT_FAKE_PROMPT = "Create hello.html with a greeting."


def _prompt(args: argparse.Namespace) -> str:
    raw: str | None = args.prompt
    if raw is None:
        if args.fake:
            return DEFAULT_FAKE_PROMPT
        raise HarnessError("harness run: give --prompt TEXT or --prompt @FILE")
    if raw.startswith("@"):
        return read_text_file(raw[1:], label=f"--prompt {raw}")
    return raw


def format_summary(result: object) -> list[str]:
    assert isinstance(result, RunResult)
    if result.exit_code is not None:
        how = f"exit {result.exit_code}"
    elif result.signal is not None:
        how = f"signal {result.signal}"
    else:
        how = "not started" if result.pid is None else "exit unknown"
    lines = [f"status:   {result.status.value} ({how}) in {result.duration_ms / 1000:.2f} s"]
    lines.append(f"session:  {result.session_id or '-'}")
    lines.append("files:    " + (", ".join(result.files_written) or "-"))
    if result.continuations and result.interruption is not None:
        # seed 000 §12: the turn went on in a new process after the first was reaped.
        lines.append(
            f"continue: {result.continuations} new process after {result.interruption.code}"
        )
    if result.cancel_latency_ms is not None:
        lines.append(f"cancel:   tree reaped {result.cancel_latency_ms:.0f} ms after the request")
    if result.mcp_injection is not None and (
        result.mcp_injection.get("strategy") != "none" or result.mcp_injection.get("skipped")
    ):
        # seed 002 §8.1: "unsupported" is reported, never silent (MCP-RUN-004).
        lines.append(f"mcp:      {result.mcp_injection.get('reason')}")
    if result.skills_staged:
        lines.append("skills:   " + ", ".join(result.skills_staged))
    if result.error is not None:
        lines.append(f"error:    {result.error.code}: {result.error.message}")
        tail = result.stderr_tail.strip().splitlines()[-5:]
        lines.extend(f"stderr:   {line}" for line in tail)
    return lines


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    # SIG-CANCEL-001: from here on a signal cancels the run (or, before it, stops it from
    # starting) and every cleanup below still runs.
    with CancelOnSignals() as signals:
        code = _run(args, out, signals)
    if signals.exit_code is not None:
        print(
            f"harness: {signals.name} received: the run was cancelled, its process tree "
            "reaped and its injected files restored",
            file=sys.stderr,
        )
        return signals.exit_code
    return code


def _played_by(defn: AgentDef) -> dict[str, str]:
    """The fake that plays ``defn`` (an author's derived def: its built-in's; RUN-FAKES-001),
    chosen as ``harness conform`` chooses it."""
    emulator, _ = fake_for(defn)
    return {defn.id: emulator} if emulator is not None else {}


def _run(args: argparse.Namespace, out: TextIO, signals: CancelOnSignals) -> int:
    chosen = choose_def(args, args.agent)
    defn = chosen.defn
    _check_run_args(args)
    prompt = _prompt(args)
    cwd = args.cwd or os.getcwd()
    _recover_journal(cwd)
    env = dict(os.environ)
    layer = _adapter_layer_fields(args)
    # --record (RECORD-PARTIAL-001): the file is checked before anything runs.
    record_to = getattr(args, "record", None)
    force = bool(getattr(args, "force", False))
    target = check_out_path(record_to, force=force) if record_to else None

    def show(event: Event) -> None:
        if args.json:
            out.write(event_json_line(event) + "\n")
        else:
            out.write(format_event(event) + "\n")
        out.flush()

    with contextlib.ExitStack() as stack:
        if args.fake:
            bin_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="harness-fakes-"))
            _use_fakes(bin_dir, chosen, env, args.scenario or "happy")
        new_session_id = None
        if defn.resume_style is ResumeStyle.SPECIFY and not args.resume:
            new_session_id = str(uuid.uuid4())  # the host mints specify-style ids
        request = RunRequest(
            defn=defn,
            prompt=prompt,
            cwd=cwd,
            model=args.model,
            resume_session_id=args.resume,
            new_session_id=new_session_id,
            transport=args.transport,
            env=env,
            first_output_timeout_ms=args.first_output_timeout,
            inactivity_timeout_ms=args.inactivity_timeout,
            **layer,
        )

        notes: list[str] = []  # --conversation: what the session bookkeeping decided
        recorder = None
        if target is not None:
            # RECORD-ENV-001: the header keeps the names this run set itself.
            names = [*request.env_overlay, *(["FAKE_CLI_SCENARIO"] if args.fake else [])]
            recorder = target.recorder(cwd=cwd, env=env, env_names=names, secrets=request.secrets)

        async def main() -> object:
            cancel = asyncio.Event()
            signals.bind(cancel)
            if args.cancel_after is not None:
                asyncio.get_running_loop().call_later(args.cancel_after, cancel.set)
            if getattr(args, "conversation", None):
                return await _conversation_turn(
                    args, request, show=show, cancel=cancel, recorder=recorder, notes=notes
                )
            # The events are printed as they come and the summary reads none of them: the
            # result keeps a bounded head and tail (design §Reliability).
            return await run_agent_async(
                request, on_event=show, cancel=cancel, tap=recorder, retention=EventRetention()
            )

        try:
            result = asyncio.run(main())
        except KeyboardInterrupt:
            if recorder is None:
                raise
            recorder.close()
            out.flush()
            print(interrupted_message(recorder), file=sys.stderr)
            return EXIT_INTERRUPTED
        finally:
            if recorder is not None:
                recorder.close()

    assert isinstance(result, RunResult)
    _print_summary(args, out, result, notes, recorder)
    if recorder is not None and recorder.error is not None:
        print(f"harness: error: {recording_line(recorder, result)}", file=sys.stderr)
        return 1
    return 0 if result.succeeded else 1


def _check_run_args(args: argparse.Namespace) -> None:
    """Flags that only make sense together, and a scenario that exists."""
    if args.scenario and not args.fake:
        raise HarnessError("--scenario needs --fake")
    if args.scenario:
        check_scenario(args.scenario)
    if args.cancel_after is not None and args.cancel_after < 0:
        raise HarnessError("--cancel-after must be >= 0 seconds")


def _use_fakes(bin_dir: str, chosen: ChosenDef, env: dict[str, str], scenario: str) -> None:
    """Install the def's fake into ``bin_dir`` and point ``env`` at it: first on PATH,
    the scenario set, and the def's own binary override removed."""
    defn = chosen.defn
    report = install_fakes(bin_dir, chosen.family, agents=[defn.id], played_by=_played_by(defn))
    if not report.written:
        reasons = "; ".join(report.skipped)
        raise HarnessError(f"no fake CLI for agent {defn.id!r}: {reasons}")
    key = path_env_key(env, sys.platform)
    env[key] = bin_dir + os.pathsep + env.get(key, "")
    env["FAKE_CLI_SCENARIO"] = scenario
    if defn.bin_env_key:
        for name in [k for k in env if k.upper() == defn.bin_env_key.upper()]:
            del env[name]


def _print_summary(
    args: argparse.Namespace,
    out: TextIO,
    result: RunResult,
    notes: list[str],
    recorder: RunRecorder | None,
) -> None:
    """The run's summary, the conversation notes and the recording, as text or JSON."""
    if args.json:
        out.write(json.dumps({"summary": result.to_json(include_events=False)}) + "\n")
        if notes:
            out.write(json.dumps({"conversation": notes}) + "\n")
        if recorder is not None:
            out.write(json.dumps({"recording": recording_json(recorder)}) + "\n")
    else:
        for line in format_summary(result):
            out.write(line + "\n")
        for line in notes:
            out.write(line + "\n")
        if recorder is not None:
            out.write(recording_line(recorder, result) + "\n")
    out.flush()


def _recover_journal(cwd: str) -> None:
    """SIG-JOURNAL-002: files a killed run left injected in ``cwd`` come back before this run
    (a journal held by a harness still running is left to it)."""
    if not os.path.isfile(os.path.join(cwd, JOURNAL_NAME)):
        return
    report = recover(cwd)  # a journal that cannot be read stops the run, naming it
    for path in (*report.restored, *report.removed):
        print(f"harness: restored {path} as it was before an interrupted run", file=sys.stderr)


def _adapter_layer_fields(args: argparse.Namespace) -> dict[str, Any]:
    """``RunRequest`` fields for ``--mcp-config``, ``--tool-bundle``, ``--sandbox``,
    ``--skill``, ``--projects-root`` and ``--agent-version`` (seed 002 §8.1 / §8.4, seed 000
    §4). The MCP secrets go to ``RunRequest.secrets`` so no output shows them."""
    fields: dict[str, Any] = {}
    mcp_file = getattr(args, "mcp_config", None)
    servers = load_mcp_config(mcp_file) if mcp_file else ()
    bundle_file = getattr(args, "tool_bundle", None)
    bundle = load_run_tool_bundle(bundle_file) if bundle_file else ()
    if servers:
        fields["mcp_config"] = servers
    if bundle:
        fields["run_tool_bundle"] = bundle
    if getattr(args, "sandbox", False):
        fields["sandbox"] = True
    if getattr(args, "projects_root", None):
        fields["projects_root"] = os.path.abspath(args.projects_root)
    if getattr(args, "agent_version", None):
        fields["agent_version"] = args.agent_version
    skills = list(getattr(args, "skill", None) or [])
    if skills:
        fields["skill_dirs"] = tuple(os.path.abspath(d) for d in skills)
    secrets = injection_secrets((*servers, *bundle))
    if secrets:
        fields["secrets"] = secrets
    return fields


async def _conversation_turn(
    args: argparse.Namespace,
    request: Any,
    *,
    show: Any,
    cancel: asyncio.Event,
    recorder: Any,
    notes: list[str],
) -> object:
    """``--conversation ID``: fresh / healthy resume / expired reseed on the same agent
    (seed 000 §8, seed 001 §7), then the captured session id is stored."""
    if args.resume:
        raise HarnessError("--conversation decides the resume itself; drop --resume")
    state = os.path.abspath(args.session_store or default_state_dir())
    store = SessionStore(os.path.join(state, "sessions.json"))
    transcripts = TranscriptStore(os.path.join(state, "transcripts"))
    conversation = str(args.conversation)
    transcript = transcripts.load(conversation)
    turn = await run_conversation_turn(
        dataclasses.replace(request, new_session_id=None),
        store=store,
        conversation_id=conversation,
        transcript=transcript,
        on_event=show,
        cancel=cancel,
        tap=recorder,
    )
    for plan, _ in turn.attempts:
        why = f" ({plan.reason.value})" if plan.reason is not None else ""
        if plan.mismatched:
            why += f" changed: {', '.join(plan.mismatched)}"
        notes.append(f"turn:     {plan.mode.value}{why}")
    record = turn.update.record
    stored = f" {record.native_id}" if record is not None else ""
    notes.append(f"store:    {turn.update.action.value}{stored} ({turn.update.reason})")
    result = turn.result
    if result.succeeded:
        reply = "".join(e.delta for e in result.events if isinstance(e, TextDelta))
        transcripts.append(
            conversation,
            TranscriptMessage("user", request.prompt),
            TranscriptMessage("assistant", reply),
        )
    return result
