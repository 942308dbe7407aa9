"""The recordings corpus: where it lives, how it is made, and what a test needs to list it.

Rules: RECORD-LADDER-001.
Design: docs/design/recording.md#harness.recording.corpus
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from fake_clis.catalog import all_specs, unemulated_steps
from fake_clis.scenario import SCENARIO_DIR, list_scenarios, load_scenario
from harness.defs.registry import BUILTIN_DEFS
from harness.defs.transport import select_transport, transport_names
from harness.defs.types import AgentDef
from harness.formats import is_two_way
from harness.host.launch import path_env_key
from harness.recording.record import (
    Chunk,
    Direction,
    ExitInfo,
    Expectation,
    Recording,
    RecordingError,
    RecordingHeader,
    RunRecorder,
    continuation_path,
    format_recording,
    load_recording,
    parse_recording,
)
from harness.recording.replay import replay_recording
from harness.runner import RunRequest, run_agent
from harness.runner.user_cancel import run_cancelled_after
from harness.runtime.fakes_install import install_fakes, prepare_fake_home

if TYPE_CHECKING:
    from harness.runner.types import RunError, RunResult

__all__ = [
    "CORPUS_DIR",
    "EDGE_DIR_NAME",
    "README_NAME",
    "FormatChoice",
    "RunPlan",
    "corpus_files",
    "expectation_for",
    "format_choices",
    "main",
    "readme_entries",
    "readme_problems",
    "record_scenario",
    "recording_id",
    "regenerate",
    "run_plan",
    "snapshot_mismatch",
    "snapshot_name",
]

#: The corpus at the repository root (beside ``harness/``).
CORPUS_DIR = Path(__file__).resolve().parents[2] / "recordings"
README_NAME = "README.md"
EDGE_DIR_NAME = "edge"
#: The fixed prompt of every generated recording.
PROMPT = "Create hello.html with a greeting."
#: The scenario whose oversize line is kept once only (a 1 MiB+ line per format would make
#: the corpus many megabytes): recorded for the first format in :data:`OVERSIZE_FORMATS`.
OVERSIZE_STEP = "oversize"
#: A scenario whose turn goes on in a second process (seed 000 §12: the AMR compaction
#: continuation) is recorded as two files (RECORD-CONTINUE-001): ``<name>.jsonl``, the
#: interrupted first process, and ``<name>`` + :data:`CONTINUED_SUFFIX`, the new one.
MULTI_PROCESS_STEPS = frozenset({"compaction"})
CONTINUED_SUFFIX = ".continued.jsonl"
#: Formats that get the oversize scenario: one JSONL one-way format with the 1 MiB decoder cap
#: (STREAM-FRAME-OVERSIZE-001, STREAM-RAW-BOUND-001). Not the strict dsh format: its session
#: takes ~10 s to replay a 1 MiB line byte by byte, which the corpus test does every run.
OVERSIZE_FORMATS = ("claude-stream-json",)
#: The oversize line is shortened to just past the 1 MiB cap (scenario option ``bytes``).
OVERSIZE_BYTES = 1024 * 1024 + 4096


# -- which def plays which format ----------------------------------------------------------------


@dataclass(frozen=True)
class FormatChoice:
    """The def (seen through ``transport``) whose fake records ``stream_format``."""

    stream_format: str
    agent: str
    transport: str
    defn: AgentDef


def format_choices(formats: Iterable[str] | None = None) -> list[FormatChoice]:
    """One choice per stream format that some built-in def with a fake reaches, sorted by
    format: the first such def in registry order, through the first such transport."""
    specs = all_specs()
    chosen: dict[str, FormatChoice] = {}
    for defn in BUILTIN_DEFS:
        if defn.id not in specs:
            continue
        for name in transport_names(defn):
            seen = select_transport(defn, name=name)
            chosen.setdefault(
                seen.stream_format, FormatChoice(seen.stream_format, defn.id, name, seen)
            )
    wanted = None if formats is None else set(formats)
    if wanted is not None:
        unknown = sorted(wanted - set(chosen))
        if unknown:
            raise ValueError(
                f"no built-in def with a fake speaks {unknown}; known: {sorted(chosen)}"
            )
    return [chosen[f] for f in sorted(chosen) if wanted is None or f in wanted]


# -- recording one fake run ----------------------------------------------------------------------


@dataclass(frozen=True)
class RunPlan:
    """Runner options for one scenario, read from the scenario's data (never its name)."""

    first_output_timeout_ms: int | None = None
    inactivity_timeout_ms: int = 30_000
    shutdown_grace_ms: int = 500
    #: The scenario step options to override (the oversize line's length).
    step_overrides: Mapping[str, Mapping[str, object]] | None = None
    #: Cancel the run this long after its first text (a cancel case).
    cancel_after_text_ms: int | None = None
    #: The scenario's steps, when it is not one of the fake's (a cancel case).
    steps: tuple[Mapping[str, object], ...] | None = None


@dataclass(frozen=True)
class CancelCase:
    """A run the user cancels, recorded per format as ``<format>/<name>.jsonl``."""

    name: str
    description: str
    #: The fake's scenario steps for the run.
    steps: tuple[Mapping[str, object], ...]
    #: The cancel comes this long after the first text.
    after_text_ms: int
    #: Only the two-way formats (where a protocol cancel has a grace to run out).
    two_way_only: bool = False


CANCEL_CASES = (
    CancelCase(
        "cancel",
        "Some text, then a long pause the user cancels; a two-way CLI answers the protocol "
        "cancel, a one-way one is stopped.",
        (
            {"kind": "text", "text": "Working on it..."},
            {"kind": "sleep", "ms": 10_000},
            {"kind": "text", "text": "never reached"},
        ),
        after_text_ms=300,
    ),
    CancelCase(
        "cancel_unanswered",
        "Some text, then the CLI hangs; the user cancels, a CLI that does not answer waits "
        "out the grace and its tree is stopped.",
        ({"kind": "text", "text": "Working on it..."}, {"kind": "hang"}),
        after_text_ms=300,
        two_way_only=True,
    ),
)
_CANCEL_BY_NAME = {c.name: c for c in CANCEL_CASES}


#: A stall is cut by the first-output deadline and a hang by the inactivity one (ref
#: §10.1); generous enough that a slow interpreter start on a loaded machine is not idle.
STALL_DEADLINE_MS = 2000
HANG_DEADLINE_MS = 2500


def run_plan(scenario_name: str) -> RunPlan:
    """How to run ``scenario_name`` so that it ends on its own or by the deadline it is
    meant to hit (RUN-TIMEOUT-FIRST-001, RUN-TIMEOUT-IDLE-001)."""
    case = _CANCEL_BY_NAME.get(scenario_name)
    if case is not None:
        return RunPlan(cancel_after_text_ms=case.after_text_ms, steps=case.steps)
    scenario = load_scenario(scenario_name)
    kinds = {s.kind for s in scenario.steps}
    plan = RunPlan()
    if scenario.stall_ms:
        plan = replace(plan, first_output_timeout_ms=STALL_DEADLINE_MS)
    if "hang" in kinds or scenario.ignore_stdin_close:
        plan = replace(plan, inactivity_timeout_ms=HANG_DEADLINE_MS)
    if OVERSIZE_STEP in kinds:
        plan = replace(plan, step_overrides={OVERSIZE_STEP: {"bytes": OVERSIZE_BYTES}})
    return plan


def _scenario_file(scenario_name: str, plan: RunPlan, where: Path) -> str:
    """The scenario to give the fake: its name, or a copy with the plan's step options."""
    if plan.steps is not None:
        path = where / f"{scenario_name}.json"
        data = {"name": scenario_name, "description": scenario_name, "steps": list(plan.steps)}
        path.write_text(json.dumps(data), encoding="utf-8")
        return str(path)
    if not plan.step_overrides:
        return scenario_name
    data = json.loads((Path(SCENARIO_DIR) / f"{scenario_name}.json").read_text(encoding="utf-8"))
    for step in data["steps"]:
        step.update(plan.step_overrides.get(step["kind"], {}))
    path = where / f"{scenario_name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@dataclass(frozen=True)
class _World:
    """A sandbox for generating: fakes on PATH, a HOME, a project dir (all under ``root``)."""

    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def cwd(self) -> Path:
        return self.root / "cwd"

    def env(self, scenario: str) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if k.upper() in ("SYSTEMROOT", "COMSPEC")}
        key = path_env_key(dict(os.environ), sys.platform)
        system_path = os.pathsep.join(
            p for p in ("/usr/local/bin", "/usr/bin", "/bin") if os.path.isdir(p)
        )
        if sys.platform == "win32":
            system_path = os.environ.get(key, "")
        base.update(
            {
                key: str(self.bin) + os.pathsep + system_path,
                "HOME": str(self.home),
                "USERPROFILE": str(self.home),
                "LANG": "C.UTF-8",
                "FAKE_CLI_SCENARIO": scenario,
            }
        )
        return base


def _make_world(root: Path, choice: FormatChoice) -> _World:
    world = _World(root)
    world.home.mkdir(parents=True, exist_ok=True)
    world.cwd.mkdir(parents=True, exist_ok=True)
    install_fakes(world.bin, BUILTIN_DEFS, agents=[choice.agent])
    prepare_fake_home(world.home)
    return world


@dataclass(frozen=True)
class Recorded:
    """One generated recording: its text and the live run's outcome (for the first file
    of a continued run, the outcome of that process: the interruption)."""

    text: str
    status: str
    error_code: str | None
    error_source: str | None
    #: ``.jsonl``, or :data:`CONTINUED_SUFFIX` for the process that continued the turn.
    suffix: str = ".jsonl"


def record_scenario(choice: FormatChoice, scenario_name: str) -> list[Recorded]:
    """Run ``choice``'s fake through the real runner on ``scenario_name`` and return the
    recording (placeholders for cwd, home and the sandbox root), two when the run went on
    in a new process (RECORD-CONTINUE-001); :func:`generate_scenario` sets ``expect``."""
    plan = run_plan(scenario_name)
    with tempfile.TemporaryDirectory(prefix="harness-corpus-") as tmp:
        world = _make_world(Path(tmp), choice)
        scenario = _scenario_file(scenario_name, plan, world.root)
        request = RunRequest(
            defn=choice.defn,
            prompt=PROMPT,
            cwd=str(world.cwd),
            env=world.env(scenario),
            transport=choice.transport,
            request_id="run-corpus-1",
            first_output_timeout_ms=plan.first_output_timeout_ms,
            inactivity_timeout_ms=plan.inactivity_timeout_ms,
            shutdown_grace_ms=plan.shutdown_grace_ms,
        )
        # A file (not a stream) so a continued run can be followed into its second file.
        first = world.root / "recording.jsonl"
        # No host names: the fakes print none, and the corpus must not depend on the name
        # of the machine that generates it (a name that is also a word in a fake's output).
        recorder = RunRecorder(
            first,
            cwd=str(world.cwd),
            home=str(world.home),
            tmp=str(world.root),
            platform="linux",
            hosts=(),
        )
        try:
            result = _run(request, recorder, plan.cancel_after_text_ms)
        finally:
            recorder.close()
        where = f"{choice.stream_format}/{scenario_name}"
        if not recorder.complete or recorder.continuation_error is not None:
            why = recorder.continuation_error or "no exit line"
            raise RuntimeError(f"{where}: the recording is incomplete ({why})")
        final = result.error
        if not result.continuations:
            return [_recorded(first, result.status.value, final)]
        continued = continuation_path(first)
        return [
            _recorded(first, "failed", result.interruption),
            _recorded(continued, result.status.value, final, CONTINUED_SUFFIX),
        ]


def _run(request: RunRequest, tap: RunRecorder, cancel_after_text_ms: int | None) -> RunResult:
    """Run ``request`` recorded; a cancel case is cancelled ``cancel_after_text_ms`` after
    its first text (:func:`~harness.runner.user_cancel.run_cancelled_after`)."""
    if cancel_after_text_ms is None:
        return run_agent(request, tap=tap)
    return run_cancelled_after(request, cancel_after_text_ms, tap=tap)


def _recorded(path: Path, status: str, error: RunError | None, suffix: str = ".jsonl") -> Recorded:
    return Recorded(
        text=path.read_text(encoding="utf-8"),
        status=status,
        error_code=error.code if error is not None else None,
        error_source=error.source if error is not None else None,
        suffix=suffix,
    )


def expectation_for(recorded: Recorded, replay_status: str, replay_code: str | None) -> Expectation:
    """``expect`` for a generated recording (REPLAY-STATUS-001).

    When the live run's outcome came from the stream or the session (success, cancel, an
    in-stream or session error), that outcome is pinned and the replay must agree: a
    disagreement is a bug, so this raises instead of pinning it. A session error's code is
    pinned too (the live run and a replay share the session's codes; a one-way stream's
    live code is the runner's wrapper, so only the status is pinned). When the runner or
    the process decided (a timeout, a kill, an exit code: ref §10.1), the recording's own
    verdict is what a replay can judge, and that is pinned as the replay gives it.
    """
    live = "completed" if recorded.status == "succeeded" else recorded.status
    if recorded.error_source in (None, "stream", "session"):
        if live != replay_status:
            raise RuntimeError(
                f"the live run ended {live} ({recorded.error_code}) but its replay ends "
                f"{replay_status} ({replay_code})"
            )
        if recorded.error_source == "session":
            if recorded.error_code != replay_code:
                raise RuntimeError(
                    f"the live session failed with {recorded.error_code}, its replay with "
                    f"{replay_code}"
                )
            return Expectation(live, error_code=recorded.error_code)
        return Expectation(live)
    return Expectation(replay_status, error_code=replay_code)


def _with_expect(text: str, expect: Expectation) -> str:
    """The recording with ``expect`` set in its header line (nothing else changes)."""
    head, _, rest = text.partition("\n")
    header = json.loads(head)
    header["expect"] = expect.to_json()
    return json.dumps(header, ensure_ascii=False, separators=(",", ":")) + "\n" + rest


def generate_scenario(choice: FormatChoice, scenario_name: str) -> list[tuple[str, Recorded]]:
    """Each generated recording's final text (``expect`` set) and the live run behind it:
    one, or two for a run continued in a new process."""
    out: list[tuple[str, Recorded]] = []
    for recorded in record_scenario(choice, scenario_name):
        replayed = replay_recording(parse_recording(recorded.text.encode("utf-8")))
        status = replayed.status.value if replayed.status is not None else "unfinished"
        code = replayed.error.code if replayed.error is not None else None
        try:
            expect = expectation_for(recorded, status, code)
        except RuntimeError as exc:
            where = f"{choice.stream_format}/{scenario_name}{recorded.suffix}"
            raise RuntimeError(f"{where}: {exc}") from None
        out.append((_with_expect(recorded.text, expect), recorded))
    return out


# -- hand-written edge cases -----------------------------------------------------------------------
#
# One recording per strictness rule of the stream parsers and sessions, named after the rule
# it breaks. The wire lines are written by hand from the documented shapes (ref §2.0-§2.8,
# seed 001 §6), never copied from our output. Two-way edges hold no stdin: the replay
# synthesizes the host's request from the stdout (CAPTURE-SYNTH-001), so the frames are not
# compared (REPLAY-FRAMES-001 is skipped) and the stdout alone shows the rule.


@dataclass(frozen=True)
class EdgeCase:
    """One hand-written recording: ``rule`` is the rule it shows, ``shows`` the events (as
    subsets of their JSON) that prove it, in order; ``summary`` is its README line."""

    rule: str
    stream_format: str
    agent: str
    summary: str
    stdout: tuple[bytes, ...]
    expect: Expectation
    event_parser: str | None = None
    transport: str = "default"
    prompt_delivery: str = "stdin"
    exit_code: int | None = 0
    shows: tuple[Mapping[str, object], ...] = ()
    #: Run-level rules the recording breaks on purpose besides ``rule`` (none by default).
    breaks: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        return f"{self.stream_format}/{EDGE_DIR_NAME}/{self.rule}.jsonl"

    def text(self) -> str:
        """The recording file: header, one stdout chunk per piece 10 ms apart, the exit."""
        header = RecordingHeader(
            agent=self.agent,
            stream_format=self.stream_format,
            event_parser=self.event_parser,
            transport=self.transport,
            argv=(f"{{tmp}}/bin/{self.agent}",),
            prompt_delivery=self.prompt_delivery,
            platform="linux",
            cli_version=None,
            env={"HOME": "{home}", "PATH": "{tmp}/bin:/usr/bin:/bin"},
            expect=self.expect,
        )
        chunks = tuple(
            Chunk(10.0 * (i + 1), Direction.STDOUT, piece) for i, piece in enumerate(self.stdout)
        )
        duration = 10.0 * (len(chunks) + 1)
        return format_recording(Recording(header, chunks, ExitInfo(self.exit_code, None, duration)))


def _lines(*objects: object) -> bytes:
    return b"".join(json.dumps(o, separators=(",", ":")).encode("utf-8") + b"\n" for o in objects)


# ref §2.1.1-§2.1.4: a minimal claude-stream-json turn.
_CLAUDE_INIT = {"type": "system", "subtype": "init", "session_id": "sess-edge", "model": "m-1"}
_CLAUDE_TEXT = {
    "type": "assistant",
    "message": {"id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": "Hi."}]},
    "session_id": "sess-edge",
}
_CLAUDE_RESULT = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "result": "Hi.",
    "stop_reason": "end_turn",
    "duration_ms": 12,
    "total_cost_usd": 0.001,
    "usage": {"input_tokens": 3, "output_tokens": 1},
}
# ref §2.8 / seed 001 §6: a dsh-profile-jsonl run up to its session frame.
_DSH_READY = {
    "v": 1,
    "type": "ready",
    "runtime": "open-design",
    "protocol_version": 1,
    "plugin_version": "0.1.0",
    "capabilities": {"session_resume": True, "session_cancel": True, "structured_events": True},
}
_DSH_REQ = "od-edge-1"
_DSH_SESSION = {
    "v": 1,
    "type": "session",
    "request_id": _DSH_REQ,
    "session_id": "dsh-edge",
    "resumed": False,
}
_DSH_TEXT = {"v": 1, "type": "text", "request_id": _DSH_REQ, "content": "Working."}
_DSH_RESULT = {
    "v": 1,
    "type": "result",
    "request_id": _DSH_REQ,
    "status": "completed",
    "session_id": "dsh-edge",
    "output": "Working.",
    "resume_rejected": False,
}
_DSH_FORMAT = "dsh-profile-jsonl"
_DSH_AGENT = "deepseek-harness"
_DSH_PROTOCOL = "protocol"


def _dsh_failed(code: str, rule: str) -> Expectation:
    return Expectation("failed", error_code=code, error_rule=rule)


EDGE_CASES: tuple[EdgeCase, ...] = (
    # -- the shared line decoder (ref §2.0), one one-way format each ---------------------------
    EdgeCase(
        rule="STREAM-FRAME-CRLF-001",
        stream_format="claude-stream-json",
        agent="claude",
        summary="every record ends in CRLF; the trailing CR is stripped, so the events are "
        "those of the LF stream (status, text, usage).",
        stdout=(_lines(_CLAUDE_INIT, _CLAUDE_TEXT, _CLAUDE_RESULT).replace(b"\n", b"\r\n"),),
        expect=Expectation("completed"),
        shows=(
            {"type": "status", "session_id": "sess-edge"},
            {"type": "text_delta", "delta": "Hi."},
        ),
    ),
    EdgeCase(
        rule="STREAM-FRAME-FLUSH-001",
        stream_format="claude-stream-json",
        agent="claude",
        summary="the final result record has no trailing LF; it is flushed at end of output "
        "and still gives its usage event.",
        stdout=(_lines(_CLAUDE_INIT, _CLAUDE_TEXT) + _lines(_CLAUDE_RESULT).rstrip(b"\n"),),
        expect=Expectation("completed"),
        shows=({"type": "text_delta", "delta": "Hi."}, {"type": "usage"}),
    ),
    EdgeCase(
        rule="STREAM-FRAME-UTF8-001",
        stream_format="copilot-stream-json",
        agent="copilot",
        summary="a snowman cut across two reads, then a line of bytes that are not UTF-8 "
        "(stored base64): the snowman decodes whole, the bad line is a raw event with U+FFFD "
        "for each bad byte, and nothing raises.",
        stdout=(
            b'{"type":"assistant.message_delta","data":{"deltaContent":"snow \xe2\x98',
            b'\x83"}}\n\xffnot json\xfe\n',
        ),
        expect=Expectation("completed"),
        shows=(
            {"type": "text_delta", "delta": "snow \u2603"},
            {"type": "raw", "line": "\ufffdnot json\ufffd"},
        ),
    ),
    EdgeCase(
        rule="STREAM-FRAME-LF-001",
        stream_format="json-event-stream",
        agent="codex",
        event_parser="codex",
        transport="exec-json",
        prompt_delivery="stdin",
        summary="an agent_message holding U+2028, U+2029 and U+0085 is one record: only LF "
        "splits records, so the text keeps the three separators.",
        stdout=(
            _lines(
                {"type": "thread.started", "thread_id": "th-edge"},
                {"type": "turn.started"},
                {
                    "type": "item.completed",
                    "item": {
                        "id": "item_0",
                        "type": "agent_message",
                        "text": "a\u2028b\u2029c\u0085d",
                    },
                },
                {"type": "turn.completed", "usage": {"input_tokens": 2, "output_tokens": 1}},
            ),
        ),
        expect=Expectation("completed"),
        shows=({"type": "text_delta", "delta": "a\u2028b\u2029c\u0085d"},),
    ),
    # -- one-way parsers: nothing is dropped silently (design principle 3) ---------------------
    EdgeCase(
        rule="CLAUDE-RAW-001",
        stream_format="claude-stream-json",
        agent="claude",
        summary="a malformed JSON line, a JSON array and an unknown frame type between good "
        "frames each become a raw event; the run still completes.",
        stdout=(
            _lines(_CLAUDE_INIT)
            + b'{"type":"assistant","message":{\n'
            + b"[1,2]\n"
            + _lines({"type": "telemetry_ping", "n": 1}, _CLAUDE_TEXT, _CLAUDE_RESULT),
        ),
        expect=Expectation("completed"),
        shows=(
            {"type": "raw", "line": '{"type":"assistant","message":{'},
            {"type": "raw", "line": "[1,2]"},
            {"type": "text_delta", "delta": "Hi."},
        ),
    ),
    EdgeCase(
        rule="CLAUDE-DEDUPE-TOOL-001",
        stream_format="claude-stream-json",
        agent="claude",
        summary="one tool_use id streamed (content_block_stop) and repeated by the assistant "
        "wrapper gives exactly one tool_use event.",
        stdout=(
            _lines(
                _CLAUDE_INIT,
                {
                    "type": "stream_event",
                    "event": {
                        "type": "message_start",
                        "message": {"id": "msg_t", "role": "assistant", "content": []},
                    },
                },
                {
                    "type": "stream_event",
                    "event": {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash"},
                    },
                },
                {
                    "type": "stream_event",
                    "event": {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "input_json_delta", "partial_json": '{"command":"ls"}'},
                    },
                },
                {"type": "stream_event", "event": {"type": "content_block_stop", "index": 0}},
                {
                    "type": "assistant",
                    "message": {
                        "id": "msg_t",
                        "role": "assistant",
                        "content": [
                            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
                        ],
                    },
                },
                {
                    "type": "user",
                    "message": {
                        "content": [
                            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}
                        ]
                    },
                },
                _CLAUDE_RESULT,
            ),
        ),
        expect=Expectation("completed"),
        shows=(
            {"type": "tool_use", "id": "toolu_1", "input": {"command": "ls"}},
            {"type": "tool_result", "tool_use_id": "toolu_1"},
        ),
    ),
    EdgeCase(
        rule="JSONEV-RAW-001",
        stream_format="json-event-stream",
        agent="codex",
        event_parser="codex",
        transport="exec-json",
        summary="a non-JSON banner, a JSON string and an unknown event shape in a codex "
        "stream each become a raw event carrying the line.",
        stdout=(
            b"Reading prompt from stdin...\n"
            + b'"just a string"\n'
            + _lines(
                {"type": "thread.started", "thread_id": "th-edge"},
                {"type": "mystery.event", "x": 1},
                {"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}},
            ),
        ),
        expect=Expectation("completed"),
        shows=(
            {"type": "raw", "line": "Reading prompt from stdin..."},
            {"type": "raw", "line": '"just a string"'},
            {"type": "raw", "line": '{"type":"mystery.event","x":1}'},
        ),
    ),
    # -- dsh-profile-jsonl: the strict format (seed 001 §6) ------------------------------------
    EdgeCase(
        rule="DSH-FRAME-MALFORMED-001",
        stream_format=_DSH_FORMAT,
        agent=_DSH_AGENT,
        prompt_delivery=_DSH_PROTOCOL,
        summary="a line that is not JSON after the session frame fails the run with "
        "DSH_PROFILE_MALFORMED_FRAME; the text before it is kept.",
        stdout=(_lines(_DSH_READY, _DSH_SESSION, _DSH_TEXT) + b'{"v":1,"type":"text",\n',),
        expect=_dsh_failed("DSH_PROFILE_MALFORMED_FRAME", "DSH-FRAME-MALFORMED-001"),
        exit_code=1,
        shows=({"type": "text_delta", "delta": "Working."},),
    ),
    EdgeCase(
        rule="DSH-FRAME-TRUNCATED-001",
        stream_format=_DSH_FORMAT,
        agent=_DSH_AGENT,
        prompt_delivery=_DSH_PROTOCOL,
        summary="output ends inside a frame (no newline, not complete JSON): "
        "DSH_PROFILE_TRUNCATED_FRAME.",
        stdout=(_lines(_DSH_READY, _DSH_SESSION) + b'{"v":1,"type":"result","request_id":"od-',),
        expect=_dsh_failed("DSH_PROFILE_TRUNCATED_FRAME", "DSH-FRAME-TRUNCATED-001"),
        exit_code=1,
    ),
    EdgeCase(
        rule="DSH-FRAME-TYPE-001",
        stream_format=_DSH_FORMAT,
        agent=_DSH_AGENT,
        prompt_delivery=_DSH_PROTOCOL,
        summary="a frame type outside protocol generation 1 (telemetry) fails the run as an "
        "invalid frame.",
        stdout=(
            _lines(_DSH_READY, _DSH_SESSION, {"v": 1, "type": "telemetry", "request_id": _DSH_REQ}),
        ),
        expect=_dsh_failed("DSH_PROFILE_INVALID_FRAME", "DSH-FRAME-TYPE-001"),
        exit_code=1,
    ),
    EdgeCase(
        rule="DSH-REQID-001",
        stream_format=_DSH_FORMAT,
        agent=_DSH_AGENT,
        prompt_delivery=_DSH_PROTOCOL,
        summary="a text frame for another request_id is ignored and counted; the run "
        "completes with only its own text.",
        stdout=(
            _lines(
                _DSH_READY,
                _DSH_SESSION,
                {"v": 1, "type": "text", "request_id": "someone-else", "content": "Not mine."},
                _DSH_TEXT,
                _DSH_RESULT,
            ),
        ),
        expect=Expectation("completed"),
        shows=({"type": "text_delta", "delta": "Working."},),
    ),
    EdgeCase(
        rule="DSH-RESULT-MISSING-001",
        stream_format=_DSH_FORMAT,
        agent=_DSH_AGENT,
        prompt_delivery=_DSH_PROTOCOL,
        summary="stdout ends after text without a result frame: DSH_PROFILE_MISSING_RESULT, "
        "even though the process exited 0.",
        stdout=(_lines(_DSH_READY, _DSH_SESSION, _DSH_TEXT),),
        expect=_dsh_failed("DSH_PROFILE_MISSING_RESULT", "DSH-RESULT-MISSING-001"),
        shows=({"type": "text_delta", "delta": "Working."},),
    ),
    EdgeCase(
        rule="DSH-SESSION-ONCE-001",
        stream_format=_DSH_FORMAT,
        agent=_DSH_AGENT,
        prompt_delivery=_DSH_PROTOCOL,
        summary="a second session frame fails the run.",
        stdout=(_lines(_DSH_READY, _DSH_SESSION, _DSH_SESSION, _DSH_RESULT),),
        expect=Expectation("failed", error_rule="DSH-SESSION-ONCE-001"),
        exit_code=1,
        shows=({"type": "status", "session_id": "dsh-edge"},),
    ),
)


def edge_case(path: str) -> EdgeCase | None:
    """The edge case whose file is ``path`` (relative to the corpus, ``/``-separated)."""
    for case in EDGE_CASES:
        if case.path == path:
            return case
    return None


# -- listing ---------------------------------------------------------------------------------------


def corpus_files(root: Path = CORPUS_DIR) -> list[Path]:
    """Every ``*.jsonl`` under ``root`` (``real/`` included), sorted by relative path."""
    if not root.is_dir():
        return []
    return sorted(
        (p for p in root.rglob("*.jsonl") if p.is_file()),
        key=lambda p: p.relative_to(root).as_posix(),
    )


def relative(path: Path, root: Path = CORPUS_DIR) -> str:
    return path.relative_to(root).as_posix()


def recording_id(path: Path, root: Path = CORPUS_DIR) -> str:
    """A test id for a recording: its relative path without ``.jsonl``, ``/`` as ``.``
    (only letters, digits, ``.``, ``_`` and ``-``, so it is a file name as it stands)."""
    rel = relative(path, root)
    stem = rel[: -len(".jsonl")] if rel.endswith(".jsonl") else rel
    return "".join(c if c.isalnum() or c in "._-" else "." for c in stem.replace("/", "."))


def snapshot_name(test_name: str, rec_id: str) -> str:
    """The file syrupy's single-file extension writes for ``test_name[rec_id]``."""
    return f"{test_name}[{rec_id}].jsonl"


def snapshot_mismatch(
    root: Path, snapshot_dir: Path, test_name: str
) -> tuple[list[str], list[str]]:
    """``(stray, missing)``: snapshot files of ``test_name`` in ``snapshot_dir`` that no
    recording under ``root`` owns, and recordings without a snapshot (CORPUS-UNUSED-001).
    syrupy's own unused-snapshot report is unreliable under pytest-xdist, hence this."""
    expected = {snapshot_name(test_name, recording_id(p, root)) for p in corpus_files(root)}
    prefix = f"{test_name}["
    present = (
        {p.name for p in snapshot_dir.iterdir() if p.is_file() and p.name.startswith(prefix)}
        if snapshot_dir.is_dir()
        else set()
    )
    return sorted(present - expected), sorted(expected - present)


# -- the README ------------------------------------------------------------------------------------

#: ``- `path/to.jsonl` — what it shows`` (``(live: STATUS)`` at the end when generated).
_ENTRY_PREFIX = "- `"
_ENTRY_SEP = "` — "
_LIVE_MARK = " (live: "


@dataclass(frozen=True)
class ReadmeEntry:
    path: str
    text: str
    line: int

    @property
    def live_status(self) -> str | None:
        """The live run's status a generated recording came from, when the line says it."""
        if self.text.endswith(")") and _LIVE_MARK in self.text:
            return self.text.rsplit(_LIVE_MARK, 1)[1][:-1].split(" ", 1)[0] or None
        return None


def readme_entries(root: Path = CORPUS_DIR) -> list[ReadmeEntry]:
    """The entry lines of ``root/README.md``, in order."""
    readme = root / README_NAME
    if not readme.is_file():
        return []
    out: list[ReadmeEntry] = []
    for number, line in enumerate(readme.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith(_ENTRY_PREFIX) and _ENTRY_SEP in line:
            path, text = line[len(_ENTRY_PREFIX) :].split(_ENTRY_SEP, 1)
            out.append(ReadmeEntry(path, text.strip(), number))
    return out


def readme_problems(root: Path = CORPUS_DIR) -> list[str]:
    """What is wrong with the README (CORPUS-README-001): a recording without a line, a
    line naming no file, a path listed twice, a line that says nothing."""
    if not (root / README_NAME).is_file():
        return [f"{root / README_NAME}: missing"]
    entries = readme_entries(root)
    files = {relative(p, root) for p in corpus_files(root)}
    listed: dict[str, int] = {}
    problems: list[str] = []
    for entry in entries:
        where = f"{README_NAME}:{entry.line}"
        if entry.path in listed:
            problems.append(
                f"{where}: {entry.path} is listed twice (first at {listed[entry.path]})"
            )
        listed.setdefault(entry.path, entry.line)
        if entry.path not in files:
            problems.append(f"{where}: {entry.path} names no recording")
        if not entry.text:
            problems.append(f"{where}: {entry.path} says nothing about what it shows")
    problems += [f"{path} has no line in {README_NAME}" for path in sorted(files - set(listed))]
    return problems


# -- regenerating ----------------------------------------------------------------------------------

_README_INTRO = """\
# Recordings corpus

Every `*.jsonl` here is a recording (format v1, `harness/recording/record.py`; design
§Recordings). `tests/corpus/test_corpus.py` replays each one at every chunking
mode, compares its events with a snapshot in `tests/corpus/__snapshots__/`, checks
the header's `expect` and runs the run-level rule checks over it.

* `<stream_format>/<scenario>.jsonl`: the format's fake CLI on a fake scenario
  (`fake_clis/scenarios/`), made by `python -m harness.recording.corpus regen`; `(live: …)`
  is the status the live run had.
* `<stream_format>/edge/<RULE-ID>.jsonl`: hand-written, one per strictness rule,
  named after the rule it shows (`harness/recording/corpus.py`, `EDGE_CASES`).
* `real/<agent>/…`: runs of real CLIs (`harness record`).

After a change: `python -m harness.recording.corpus regen [--format F]`, then
`python -m pytest tests/corpus --snapshot-update`. One line per recording:
"""


def planned_scenarios(stream_format: str) -> list[str]:
    """The fake scenarios recorded for ``stream_format``: every scenario, except that the
    oversize one is kept only for :data:`OVERSIZE_FORMATS` (a 1 MiB line each), and a
    scenario with an optional step the format's fake does not emulate is left out."""
    agent = format_choices([stream_format])[0].agent
    out: list[str] = []
    for name in list_scenarios():
        scenario = load_scenario(name)
        kinds = {s.kind for s in scenario.steps}
        if OVERSIZE_STEP in kinds and stream_format not in OVERSIZE_FORMATS:
            continue
        if unemulated_steps(agent, scenario):
            continue
        out.append(name)
    two_way = is_two_way(stream_format)
    out.extend(c.name for c in CANCEL_CASES if two_way or not c.two_way_only)
    return out


def _description(name: str) -> tuple[str, set[str]]:
    """A planned run's README description and its scenario's step kinds."""
    case = _CANCEL_BY_NAME.get(name)
    if case is not None:
        return case.description, {str(s["kind"]) for s in case.steps}
    scenario = load_scenario(name)
    return scenario.description, {s.kind for s in scenario.steps}


def planned_paths(formats: Iterable[str] | None = None) -> dict[str, str]:
    """Relative path -> README text for every generated and edge recording planned."""
    out: dict[str, str] = {}
    choices = format_choices(formats)
    for choice in choices:
        via = f" ({choice.transport} transport)" if choice.transport != "default" else ""
        for name in planned_scenarios(choice.stream_format):
            text, kinds = _description(name)
            description = text.rstrip(".")
            out[f"{choice.stream_format}/{name}.jsonl"] = (
                f"fake `{choice.agent}`{via}, scenario `{name}`: {description}."
            )
            if kinds & MULTI_PROCESS_STEPS:
                out[f"{choice.stream_format}/{name}{CONTINUED_SUFFIX}"] = (
                    f"fake `{choice.agent}`{via}, scenario `{name}`, the process that "
                    "continued the interrupted turn (RECORD-CONTINUE-001)."
                )
    picked = {c.stream_format for c in choices}
    for case in EDGE_CASES:
        if formats is None or case.stream_format in picked:
            out[case.path] = f"{case.rule}: {case.summary}"
    return out


def _write_readme(root: Path, texts: Mapping[str, str]) -> None:
    existing = {e.path: e.text for e in readme_entries(root)}
    existing.update(texts)
    present = {relative(p, root) for p in corpus_files(root)}
    lines = [
        f"{_ENTRY_PREFIX}{path}{_ENTRY_SEP}{text}"
        for path, text in sorted(existing.items())
        if path in present
    ]
    (root / README_NAME).write_text(_README_INTRO + "\n" + "\n".join(lines) + "\n", "utf-8")


def regenerate(
    root: Path = CORPUS_DIR,
    formats: Iterable[str] | None = None,
    *,
    jobs: int = 4,
    log: TextIO | None = None,
) -> list[str]:
    """Re-record every planned fake run and rewrite every edge case under ``root`` (only
    ``formats`` when given), then the README; returns the paths written."""
    wanted = None if formats is None else list(formats)
    choices = format_choices(wanted)
    texts = planned_paths(wanted)
    tasks = [(c, s) for c in choices for s in planned_scenarios(c.stream_format)]

    def one(task: tuple[FormatChoice, str]) -> list[tuple[str, str, Recorded]]:
        choice, name = task
        return [
            (f"{choice.stream_format}/{name}{recorded.suffix}", text, recorded)
            for text, recorded in generate_scenario(choice, name)
        ]

    written: list[str] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for rel, text, recorded in (item for items in pool.map(one, tasks) for item in items):
            if rel not in texts:
                raise RuntimeError(f"{rel}: recorded but not planned (see MULTI_PROCESS_STEPS)")
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
            live = recorded.status + (f" {recorded.error_code}" if recorded.error_code else "")
            texts[rel] = f"{texts[rel]}{_LIVE_MARK}{live})"
            written.append(rel)
            if log is not None:
                print(f"wrote {rel} (live: {live})", file=log, flush=True)
    picked = {c.stream_format for c in choices}
    for case in EDGE_CASES:
        if wanted is not None and case.stream_format not in picked:
            continue
        target = root / case.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(case.text(), encoding="utf-8", newline="\n")
        written.append(case.path)
        if log is not None:
            print(f"wrote {case.path}", file=log, flush=True)
    # Keep the live status of generated recordings not re-recorded this time.
    for entry in readme_entries(root):
        if entry.path in texts and entry.path not in written and entry.live_status:
            texts[entry.path] = entry.text
    _write_readme(root, texts)
    return written


def check(root: Path = CORPUS_DIR, formats: Iterable[str] | None = None) -> list[str]:
    """What ``regen`` would change, without running anything: planned recordings that are
    missing or unreadable or lack ``expect``, edge cases whose file differs from
    :data:`EDGE_CASES`, and README problems (CORPUS-GEN-001, CORPUS-README-001)."""
    problems: list[str] = []
    for rel in planned_paths(formats):
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: missing (run: python -m harness.recording.corpus regen)")
            continue
        try:
            header = load_recording(path).header
        except RecordingError as exc:
            problems.append(f"{rel}: {exc}")
            continue
        if header.expect is None:
            problems.append(f"{rel}: the header has no expect")
        case = edge_case(rel)
        if case is not None and path.read_text(encoding="utf-8") != case.text():
            problems.append(f"{rel}: differs from its definition in harness/recording/corpus.py")
    return problems + readme_problems(root)


# -- command line ----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """``python -m harness.recording.corpus regen [--format F]... [--check] | list``."""
    stream = out if out is not None else sys.stdout
    parser = argparse.ArgumentParser(prog="python -m harness.recording.corpus", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    regen = sub.add_parser("regen", help="re-record the fake runs and rewrite the edge cases")
    regen.add_argument("--format", action="append", dest="formats", metavar="F")
    regen.add_argument("--check", action="store_true", help="write nothing; exit 1 on a problem")
    regen.add_argument("--root", type=Path, default=CORPUS_DIR, help=argparse.SUPPRESS)
    regen.add_argument("--jobs", type=int, default=4)
    listing = sub.add_parser("list", help="print every recording and its README line")
    listing.add_argument("--root", type=Path, default=CORPUS_DIR, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.command == "list":
        texts = {e.path: e.text for e in readme_entries(args.root)}
        for path in corpus_files(args.root):
            rel = relative(path, args.root)
            print(f"{rel}\t{texts.get(rel, '(no README line)')}", file=stream)
        return 0
    try:
        if args.check:
            problems = check(args.root, args.formats)
            for problem in problems:
                print(problem, file=stream)
            print(f"{len(problems)} problem(s)" if problems else "corpus up to date", file=stream)
            return 1 if problems else 0
        written = regenerate(args.root, args.formats, jobs=args.jobs, log=stream)
    except (ValueError, RuntimeError) as exc:
        print(f"harness.recording.corpus: error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(written)} recording(s) written under {args.root}", file=stream)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
