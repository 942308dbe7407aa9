"""Run-level checks: rules judged on one observed run, live or replayed.

Design: docs/design/conformance.md#conformance.checks.runs
"""

from __future__ import annotations

import json
import os
import signal as _signal
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
from jsonschema.exceptions import best_match

from conformance.checks import Finding, check, failed, passed, select_checks, skipped
from conformance.evidence import Direction, Frame
from conformance.rules import all_rules
from fake_clis.scenario import Scenario, Step
from harness.events import Error
from harness.formats import find_format, keeps_turn_bookkeeping
from harness.host.failures import has_output
from harness.host.prompt import is_clean_terminal_turn
from harness.ladder import StepKind
from harness.recording.record import Direction as RecDirection
from harness.runner.status import CloseFacts, classify_close_status
from harness.schemas import load_schema
from harness.secrets.detect import SecretMatcher, spellings
from harness.secrets.redact import secret_env_values

if TYPE_CHECKING:
    from harness.recording.record import Recording
    from harness.recording.replay import ReplayResult
    from harness.recording.replay_budget import BudgetVerdict
    from harness.runner import RunRequest, RunResult

__all__ = [
    "FAULT_STEPS",
    "SUCCESS_STATUSES",
    "TERMINAL_STATUSES",
    "RunObservation",
    "evaluate_run",
    "fault_free",
    "observe_replay",
    "observe_run",
]

#: Scenario steps that make a run fail, hang or break the protocol on purpose.
FAULT_STEPS = frozenset({"api_error", "crash", "hang", "malformed", "foreign", "oversize"})
#: ``succeeded`` (a live run, ref §10.1) and ``completed`` (a session, ``RunStatus``).
SUCCESS_STATUSES = frozenset({"succeeded", "completed"})
TERMINAL_STATUSES = SUCCESS_STATUSES | {"failed", "cancelled"}
#: A secret shorter than this is not searched for (it would match ordinary words).
_MIN_SECRET = 8
#: Bytes of one written file read back for RUN-HAPPY-FILE-001.
_MAX_FILE_BYTES = 1024 * 1024
#: Characters of stderr kept by :func:`observe_replay` (acp-tck keeps 20 kB, wire §B.3).
_STDERR_TAIL = 20_000
_SECRET_MARK = "[SECRET]"


@dataclass(frozen=True)
class RunObservation:
    """One run as the run-level checks see it (a live run and a replay look the same).

    ``frames_out`` is what the CLI wrote on stdout and ``frames_in`` what the host wrote
    on its stdin, each in order (lines or chunks). ``files`` maps each written path to
    its text (``None`` when unreadable); ``None`` as a whole means no project directory
    was observed (a replay). ``secrets`` are the secret values given to the run (env
    values); ``events_at_finish`` is how many events were published when the session
    reported ``Finished``, when known.
    """

    def_id: str
    stream_format: str
    events: Sequence[Mapping[str, Any]] = ()
    frames_out: Sequence[str] = ()
    frames_in: Sequence[str] = ()
    exit_code: int | None = None
    signal: int | str | None = None
    status: str | None = None
    error: Mapping[str, Any] | None = None
    stderr_tail: str = ""
    files_written: Sequence[str] = ()
    duration_ms: float | None = None
    scenario: Scenario | None = None
    resume_style: str = "none"
    cancel_requested: bool = False
    session_id: str | None = None
    secrets: Sequence[str] = ()
    files: Mapping[str, str | None] | None = None
    events_at_finish: int | None = None
    repro_command: str | None = None
    #: The spawned argv (redacted); empty for a replay.
    argv: Sequence[str] = ()
    #: The def's help-probe flags, flag -> capability key (seed 002 §5.5).
    capability_flags: Mapping[str, str] = field(default_factory=dict)
    #: What ``build_args`` read (FIDELITY-CAPS-001); ``None``: not known (a replay).
    capabilities: Mapping[str, bool] | None = None
    #: The prompt-budget guards' verdicts on the spawned argv, per platform and launch
    #: (:func:`harness.recording.replay_budget.budget_verdicts`); empty when nothing was spawned.
    budget: Sequence[BudgetVerdict] = ()

    @property
    def repro(self) -> str:
        """The command that reproduces this run."""
        if self.repro_command:
            return self.repro_command
        if self.scenario is not None:
            cancel = " --cancel-after 1" if self.cancel_requested else ""
            return f"harness run {self.def_id} --fake --scenario {self.scenario.name} --json" + (
                cancel
            )
        return f"harness conform --agent {self.def_id}"

    @property
    def succeeded(self) -> bool:
        return self.status in SUCCESS_STATUSES


# -- builders ------------------------------------------------------------------------------------


def _read_files(cwd: str, paths: Sequence[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for rel in paths:
        try:
            with open(os.path.join(cwd, rel), "rb") as fh:
                data = fh.read(_MAX_FILE_BYTES + 1)
            out[rel] = None if len(data) > _MAX_FILE_BYTES else data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            out[rel] = None
    return out


def observe_run(
    result: RunResult,
    *,
    request: RunRequest | None = None,
    scenario: Scenario | None = None,
    frames_out: Sequence[str] = (),
    frames_in: Sequence[str] = (),
    read_files: bool = True,
    repro_command: str | None = None,
) -> RunObservation:
    """A live run as an observation. ``request`` supplies the resume style, the secrets
    given to the run and the cwd whose written files are read back."""
    secrets: list[str] = []
    files: dict[str, str | None] | None = None
    resume_style = "none"
    capability_flags: Mapping[str, str] = {}
    if request is not None:
        resume_style = request.defn.resume_style.value
        capability_flags = request.defn.capability_flags
        base = os.environ if request.env is None else request.env
        secrets = secret_env_values(base, request.env_overlay)
        if read_files:
            files = _read_files(request.cwd, result.files_written)
    return RunObservation(
        def_id=result.agent_id,
        stream_format=result.stream_format,
        events=[e.to_json() for e in result.events],
        frames_out=tuple(frames_out),
        frames_in=tuple(frames_in),
        exit_code=result.exit_code,
        signal=result.signal,
        status=result.status.value,
        error=result.error.to_json() if result.error is not None else None,
        stderr_tail=result.stderr_tail,
        files_written=tuple(result.files_written),
        duration_ms=result.duration_ms,
        scenario=scenario,
        resume_style=resume_style,
        cancel_requested=result.cancel_requested,
        session_id=result.session_id,
        secrets=tuple(secrets),
        files=files,
        repro_command=repro_command,
        argv=tuple(result.argv),
        capability_flags=dict(capability_flags),
        capabilities=None if result.capabilities is None else dict(result.capabilities),
    )


def _signal_number(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(_signal.Signals[value].value)
    except KeyError:
        return int(value) if value.lstrip("-").isdigit() else None


def observe_replay(
    replay: ReplayResult,
    recording: Recording,
    *,
    scenario: Scenario | None = None,
    resume_style: str = "none",
    cancel_requested: bool = False,
    secrets: Sequence[str] = (),
) -> RunObservation:
    """A replayed recording as an observation; its status is classified from the recorded
    exit, the session's finish and the events, as the live runner classifies a run."""
    header = recording.header
    exit_info = recording.exit
    # A recording of a cancelled run says so by its cancel step (RECORD-LADDER-001).
    cancelled = cancel_requested or any(s.kind is StepKind.CANCEL for s in recording.steps)
    facts = CloseFacts(
        cancel_requested=cancelled,
        exit_code=exit_info.code,
        signal=_signal_number(exit_info.signal),
        session_status=replay.status if replay.capture is not None else None,
        stream_error=any(isinstance(e, Error) for e in replay.events),
        turn_completed_cleanly=keeps_turn_bookkeeping(header.stream_format)
        and any(is_clean_terminal_turn(e) for e in replay.events),
        # FIDELITY-EMPTY-001, as the live runner judges it (a replay sees no files).
        empty_output=not has_output(replay.events),
    )

    def texts(direction: RecDirection) -> tuple[str, ...]:
        return tuple(c.data.decode("utf-8", "replace") for c in recording.chunks_of(direction))

    stderr = "".join(texts(RecDirection.STDERR))
    source = recording.source or "RECORDING"
    status = classify_close_status(facts)
    error = replay.error.to_json() if replay.error is not None else None
    if error is None and status.value == "failed":
        # As the live runner does (RUN-STATUS-001): nothing else explains the failure
        # than the recorded exit, so the exit is the error.
        how = (
            f"was killed by signal {exit_info.signal}"
            if exit_info.signal
            else f"exited {exit_info.code}"
        )
        error = {
            "code": "RUN_EXIT_NONZERO",
            "message": f"the CLI {how}",
            "source": "process",
            "rule": "RUN-STATUS-001",
        }
    return RunObservation(
        def_id=header.agent,
        stream_format=header.stream_format,
        events=[e.to_json() for e in replay.events],
        frames_out=texts(RecDirection.STDOUT),
        frames_in=texts(RecDirection.STDIN),
        exit_code=exit_info.code,
        signal=exit_info.signal,
        status=status.value,
        error=error,
        stderr_tail=stderr[-_STDERR_TAIL:],
        files_written=(),
        duration_ms=exit_info.duration_ms,
        scenario=scenario,
        resume_style=resume_style,
        cancel_requested=cancelled,
        secrets=tuple(secrets),
        files=None,
        repro_command=f"harness replay {source} --json",
    )


# -- helpers -------------------------------------------------------------------------------------


def _mask(text: str, secrets: Sequence[str]) -> str:
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, _SECRET_MARK)
    return text


def _dumps(event: Any) -> str:
    try:
        return json.dumps(event, ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError):
        return repr(event)


def _event_slice(obs: RunObservation, index: int | None, radius: int = 3) -> str:
    """The events around ``index`` (marked ``>>``), one JSON object per line."""
    events = list(obs.events)
    if not events:
        return "(no events)"
    if index is None:
        lo, hi = max(0, len(events) - 2 * radius - 1), len(events)
    else:
        lo, hi = max(0, index - radius), min(len(events), index + radius + 1)
    lines = [f"events [{lo}:{hi}] of {len(events)}:"]
    for i in range(lo, hi):
        mark = ">>" if i == index else "  "
        lines.append(f"{mark} #{i} {_dumps(events[i])}")
    return _mask("\n".join(lines), obs.secrets)


def _transcript(obs: RunObservation) -> list[Frame]:
    frames = [Frame(Direction.STDIN, _mask(f, obs.secrets)) for f in obs.frames_in]
    frames += [Frame(Direction.STDOUT, _mask(f, obs.secrets)) for f in obs.frames_out]
    return frames


def _fail(
    obs: RunObservation,
    summary: str,
    *,
    expected: str,
    actual: str,
    index: int | None = None,
) -> Finding:
    """A failed finding with the run's evidence: the events around the problem, the
    frames both ways, the stderr tail (secrets masked everywhere)."""
    return failed(
        f"{obs.def_id}: {summary}",
        repro_command=obs.repro,
        expected=_mask(expected, obs.secrets),
        actual=_mask(actual, obs.secrets) + "\n" + _event_slice(obs, index),
        transcript=_transcript(obs),
        stderr=_mask(obs.stderr_tail, obs.secrets),
    )


def _type(event: Any) -> Any:
    return event.get("type") if isinstance(event, Mapping) else None


def _text_of(obs: RunObservation) -> str:
    return "".join(
        e["delta"]
        for e in obs.events
        if _type(e) == "text_delta" and isinstance(e.get("delta"), str)
    )


def _squash(text: str) -> str:
    """Whitespace removed: paragraph joins and chunk seams differ between CLIs."""
    return "".join(text.split())


def fault_free(obs: RunObservation) -> str | None:
    """``None`` when the run's scenario is fault-free, else why it is not."""
    scenario = obs.scenario
    if scenario is None:
        return "the run had no scenario"
    if obs.cancel_requested:
        return "the host cancelled the run"
    # seed 001 §14: where every stdout line must be a frame (the spec's strict_framing),
    # a ``noise`` line is a fault too.
    spec = find_format(obs.stream_format)
    fatal = FAULT_STEPS | {"noise"} if spec is not None and spec.strict_framing else FAULT_STEPS
    faults = sorted({s.kind for s in scenario.steps if s.kind in fatal})
    if faults:
        return f"scenario {scenario.name!r} has fault steps ({', '.join(faults)})"
    if scenario.exit_code != 0:
        return f"scenario {scenario.name!r} exits {scenario.exit_code}"
    if scenario.auth != "ok":
        return f"scenario {scenario.name!r} runs unauthorized ({scenario.auth})"
    if scenario.stall_ms or scenario.ignore_stdin_close:
        return f"scenario {scenario.name!r} stalls or ignores stdin"
    return None


def _steps_before_fault(scenario: Scenario, fault: str) -> list[Step]:
    out: list[Step] = []
    for step in scenario.steps:
        if step.kind == fault:
            break
        out.append(step)
    return out


# -- the stream itself ---------------------------------------------------------------------------


@cache
def _event_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema("events.schema.json"))


@cache
def _branch_validators() -> dict[str, jsonschema.Draft202012Validator]:
    """One validator per event type: the schema's ``oneOf`` branch whose ``type`` const
    names it (every branch has one, so an event valid against its own branch is valid
    against the ``oneOf``; checked by a test). Validating every event against all fifteen
    branches took a third of the main process's time in ``harness conform``."""
    schema = load_schema("events.schema.json")
    root = {k: v for k, v in schema.items() if k != "oneOf"}
    return {
        name: jsonschema.Draft202012Validator({**root, "$ref": f"#/$defs/{name}"})
        for name, branch in schema["$defs"].items()
        if branch.get("properties", {}).get("type", {}).get("const") == name
    }


def event_schema_error(event: Any) -> jsonschema.ValidationError | None:
    """The best error of ``event`` against events.schema.json, ``None`` when valid."""
    kind = event.get("type") if isinstance(event, dict) else None
    branch = _branch_validators().get(kind) if isinstance(kind, str) else None
    if branch is not None and branch.is_valid(event):
        return None
    error: jsonschema.ValidationError | None = best_match(_event_validator().iter_errors(event))
    return error


@check("EVENT-SCHEMA-001", level="run")
def events_match_schema(obs: RunObservation) -> Finding:
    """EVENT-SCHEMA-001 (ref §1.1: the event contract; ``harness/schemas/events.schema.json``)."""
    for index, event in enumerate(obs.events):
        error = event_schema_error(event)
        if error is None:
            continue
        where = "/".join(str(p) for p in error.absolute_path) or "(the event)"
        return _fail(
            obs,
            f"event #{index} ({_type(event)!r}) does not match events.schema.json",
            expected="every event valid against harness/schemas/events.schema.json",
            actual=f"at {where}: {error.message}",
            index=index,
        )
    return passed(f"{len(obs.events)} events valid")


@check("RUN-TOOL-PAIR-001", level="run")
def tool_results_paired(obs: RunObservation) -> Finding:
    """RUN-TOOL-PAIR-001 (wire §B.3: "every tool_result refers to a prior tool_use")."""
    seen: set[str] = set()
    results = 0
    for index, event in enumerate(obs.events):
        kind = _type(event)
        if kind == "tool_use" and isinstance(event.get("id"), str):
            seen.add(event["id"])
        elif kind == "tool_result":
            results += 1
            ref = event.get("tool_use_id")
            if not isinstance(ref, str) or ref not in seen:
                return _fail(
                    obs,
                    f"tool_result #{index} names {ref!r}, which no earlier tool_use has",
                    expected=f"tool_use_id among the earlier tool_use ids {sorted(seen)}",
                    actual=f"tool_use_id={ref!r}",
                    index=index,
                )
    if not results:
        return passed("no tool_result in the run")
    return passed(f"{results} tool_result(s), each after its tool_use")


@check("RUN-TOOL-ONCE-001", level="run")
def tool_use_once(obs: RunObservation) -> Finding:
    """RUN-TOOL-ONCE-001 (wire §B.3: "exactly one tool_use per id"; ref §1.1: tool_in_flight
    is a separate live row, so it is not counted)."""
    first: dict[Any, int] = {}
    for index, event in enumerate(obs.events):
        if _type(event) != "tool_use":
            continue
        tool_id = event.get("id")
        if tool_id is None:
            continue
        key = json.dumps(tool_id) if not isinstance(tool_id, str) else tool_id
        if key in first:
            return _fail(
                obs,
                f"tool_use #{index} repeats id {tool_id!r} (first at #{first[key]})",
                expected="one tool_use per tool id",
                actual=f"tool_use id {tool_id!r} at #{first[key]} and #{index}",
                index=index,
            )
        first[key] = index
    return passed(f"{len(first)} distinct tool_use id(s)")


def _terminal_errors(obs: RunObservation) -> list[int]:
    return [
        i for i, e in enumerate(obs.events) if _type(e) == "error" and e.get("terminal") is True
    ]


@check("RUN-TERMINAL-001", level="run")
def one_terminal_outcome(obs: RunObservation) -> Finding:
    """RUN-TERMINAL-001 (seed 001 §6: "Only one terminal result is accepted"; wire §B.3: one
    terminal turn_end per turn, so a sub-agent's turn_end must not end the main turn; ref
    §1.2: an in-stream error "flips the run to failed")."""
    if obs.status not in TERMINAL_STATUSES:
        return _fail(
            obs,
            f"the run ended without a known outcome (status {obs.status!r})",
            expected=f"one of {sorted(TERMINAL_STATUSES)}",
            actual=f"status={obs.status!r}",
        )
    terminal = _terminal_errors(obs)
    if len(terminal) > 1:
        return _fail(
            obs,
            f"{len(terminal)} terminal error events",
            expected="at most one error event with terminal: true",
            actual=f"terminal errors at {terminal}",
            index=terminal[1],
        )
    turn_ends = [
        i
        for i, e in enumerate(obs.events)
        if _type(e) == "turn_end" and e.get("stop_reason") != "tool_use"
    ]
    if len(turn_ends) > 1:
        return _fail(
            obs,
            f"{len(turn_ends)} terminal turn_end events in one turn",
            expected="at most one turn_end whose stop_reason is not tool_use",
            actual=f"terminal turn_end at {turn_ends}",
            index=turn_ends[1],
        )
    errors = [i for i, e in enumerate(obs.events) if _type(e) == "error"]
    if obs.succeeded and (errors or obs.error):
        what = "an error event" if errors else "a run error"
        return _fail(
            obs,
            f"the run succeeded despite {what}",
            expected="an in-stream error or a run error ends the run failed",
            actual=f"status={obs.status!r}; error events at {errors}; run error {obs.error}",
            index=errors[0] if errors else None,
        )
    return passed(f"status {obs.status}")


@check("RUN-AFTER-TERMINAL-001", level="run")
def nothing_after_terminal(obs: RunObservation) -> Finding:
    """RUN-AFTER-TERMINAL-001 (seed 001 §6: the runtime exits after the terminal result;
    wire §B.4: no updates after the response)."""
    terminal = _terminal_errors(obs)
    if terminal and terminal[0] != len(obs.events) - 1:
        index = terminal[0]
        later = [_type(e) for e in list(obs.events)[index + 1 :]]
        return _fail(
            obs,
            f"{len(later)} event(s) after the terminal error #{index}",
            expected="the terminal error is the last event",
            actual=f"after it: {later}",
            index=index + 1,
        )
    finish = obs.events_at_finish
    if finish is not None and len(obs.events) > finish:
        return _fail(
            obs,
            f"{len(obs.events) - finish} event(s) after the session finished",
            expected=f"no event after the first {finish}",
            actual=f"{len(obs.events)} events",
            index=finish,
        )
    if not terminal and finish is None:
        return skipped("the run has no terminal error event and no recorded finish point")
    return passed()


# -- scenario outcomes ---------------------------------------------------------------------------


@check("RUN-HAPPY-TEXT-001", level="run")
def happy_text(obs: RunObservation) -> Finding:
    """RUN-HAPPY-TEXT-001 (seed 002 §7.1: text_delta is the assistant's text, one exit for
    every format; seed 000 §5.13: a plain stream's stdout is the text)."""
    why = fault_free(obs)
    if why is not None:
        return skipped(why)
    assert obs.scenario is not None
    pieces = [s.text for s in obs.scenario.steps if s.kind == "text" and s.text]
    got = _text_of(obs)
    spec = find_format(obs.stream_format)
    if spec is not None and spec.text_stream:
        # seed 000 §5.13: the CLI's own banners and tool echoes are text too, so the
        # scenario's text is contained, not equal.
        # A plain CLI's text mode may print only its final answer (qwen 0.24.4 leaves out
        # the text of a message a tool call follows: recordings/real/qwen/happy.jsonl), so
        # the last text step must be there; earlier ones, where printed, come in order.
        rest = _squash(got)
        found = 0
        for i, piece in enumerate(pieces):
            at = rest.find(_squash(piece))
            if at < 0 and i == len(pieces) - 1:
                return _fail(
                    obs,
                    "the plain stream lacks the scenario's final text (after the earlier ones)",
                    expected=f"text ending its scenario part with {piece!r} (steps: {pieces!r})",
                    actual=f"missing {piece!r}; text was {got!r}",
                )
            if at >= 0:
                found += 1
                rest = rest[at + len(_squash(piece)) :]
        return passed(f"{found} of {len(pieces)} text step(s) found in order, the final one too")
    if _squash(got) != _squash(obs.scenario.final_text):
        return _fail(
            obs,
            "the run's text differs from the scenario's text",
            expected=repr(obs.scenario.final_text),
            actual=repr(got),
        )
    return passed()


@check("RUN-HAPPY-FILE-001", level="run")
def happy_files(obs: RunObservation) -> Finding:
    """RUN-HAPPY-FILE-001 (seed 001 §8: the CLI "writes normal project files using its
    official tools"; OD's file watching is authoritative)."""
    why = fault_free(obs)
    if why is not None:
        return skipped(why)
    assert obs.scenario is not None
    writes = [s for s in obs.scenario.steps if s.kind == "tool" and s.get("tool") == "write"]
    if not writes:
        return skipped(f"scenario {obs.scenario.name!r} has no write tool step")
    if obs.files is None:
        return skipped("the observation holds no project directory (a replay)")
    written = {Path(p).as_posix() for p in obs.files_written}
    for step in writes:
        path = Path(str(step.get("path", ""))).as_posix()
        want = str(step.get("content", ""))
        if path not in written:
            return _fail(
                obs,
                f"the write tool step's file {path!r} was not written",
                expected=f"{path!r} among the files written",
                actual=f"files written: {sorted(written)}",
            )
        have = obs.files.get(path)
        if have != want:
            return _fail(
                obs,
                f"{path!r} does not hold the scenario's content",
                expected=repr(want),
                actual=repr(have) if have is not None else "(unreadable or not text)",
            )
    return passed(f"{len(writes)} file(s) written with the scenario's content")


@check("RUN-USAGE-001", level="run")
def usage_reported(obs: RunObservation) -> Finding:
    """RUN-USAGE-001 (seed 000 §12: "Parsers preserve usage and reported cost when a CLI
    exposes them"); plain streams are out of the rule's formats."""
    why = fault_free(obs)
    if why is not None:
        return skipped(why)
    assert obs.scenario is not None
    if not any(s.kind == "usage" for s in obs.scenario.steps):
        return skipped(f"scenario {obs.scenario.name!r} reports no usage")
    count = sum(1 for e in obs.events if _type(e) == "usage")
    if not count:
        return _fail(
            obs,
            "the scenario reports usage but the run published no usage event",
            expected="at least one usage event",
            actual=f"event types: {sorted({str(_type(e)) for e in obs.events})}",
        )
    return passed(f"{count} usage event(s)")


@check("RUN-SESSION-CAPTURE-001", level="run")
def session_captured(obs: RunObservation) -> Finding:
    """RUN-SESSION-CAPTURE-001 (seed 002 §3.1: capture-style "CLI 自己造 id 并在流里报出来",
    the host must take it from the parsed stream; ref §8.1: from a ``status{sessionId}``)."""
    if obs.resume_style != "capture":
        return skipped(f"resume style is {obs.resume_style}, not capture")
    if not obs.succeeded:
        return skipped(f"the run did not succeed (status {obs.status!r})")
    reported = [
        (i, e["session_id"])
        for i, e in enumerate(obs.events)
        if _type(e) == "status" and isinstance(e.get("session_id"), str) and e["session_id"]
    ]
    if not reported:
        return _fail(
            obs,
            "a capture-style run reported no session id in its stream",
            expected="a status event with session_id",
            actual="no status event carries session_id",
        )
    index, last = reported[-1]
    if obs.session_id is not None and obs.session_id != last:
        return _fail(
            obs,
            f"the run kept session id {obs.session_id!r}, not the last reported {last!r}",
            expected=repr(last),
            actual=repr(obs.session_id),
            index=index,
        )
    return passed(f"session id {last!r}")


@check("RUN-FAULT-APIERROR-001", level="run")
def api_error_fails(obs: RunObservation) -> Finding:
    """RUN-FAULT-APIERROR-001 (ref §1.2: an in-stream error event or a transport/session
    error; either fails the run)."""
    scenario = obs.scenario
    if scenario is None or not any(s.kind == "api_error" for s in scenario.steps):
        return skipped("the scenario has no api_error step")
    if obs.cancel_requested:
        return skipped("the host cancelled the run")
    errors = [i for i, e in enumerate(obs.events) if _type(e) == "error"]
    if obs.status != "failed" or not (errors or obs.error):
        return _fail(
            obs,
            f"the model API failed but the run ended {obs.status!r}"
            + ("" if errors or obs.error else " without reporting an error"),
            expected="status failed, with an error event or a run error",
            actual=f"status={obs.status!r}, error events at {errors}, run error {obs.error}",
        )
    return passed(f"failed with {'an error event' if errors else 'a run error'}")


def _continuation_expected(step: Step) -> tuple[bool, bool]:
    """For a ``compaction`` step: (a new process is due, the run then succeeds).

    seed 000 §12: a continuation needs the negotiated extension (version 1), complete
    structured evidence and every tool call terminal; it then succeeds only when the
    durable history is still there and the continuation is not interrupted again (at most
    one per run).
    """
    eligible = (
        step.get("evidence", "structured") == "structured"
        and step.get("advertise", 1) == 1
        and not step.get("pending_tool", False)
    )
    succeeds = eligible and step.get("history", "kept") == "kept" and not step.get("repeat", False)
    return eligible, succeeds


@check("RUN-CONTINUE-001", level="run")
def compaction_continues_once(obs: RunObservation) -> Finding:
    """RUN-CONTINUE-001 (seed 000 §12 "AMR compaction continuation"): judged on a scenario
    whose turn is interrupted by a ``compaction`` step, against what its options allow."""
    scenario = obs.scenario
    steps = [s for s in scenario.steps if s.kind == "compaction"] if scenario else []
    if not steps:
        return skipped("the scenario has no compaction step")
    if obs.cancel_requested:
        return skipped("the host cancelled the run")
    eligible, succeeds = _continuation_expected(steps[0])
    marks = [
        i
        for i, e in enumerate(obs.events)
        if _type(e) == "status" and e.get("label") == "continuation"
    ]
    want_marks = 1 if eligible else 0
    if len(marks) != want_marks:
        return _fail(
            obs,
            f"{len(marks)} continuation(s) started; the interruption allows {want_marks}",
            expected=f"{want_marks} status 'continuation' event(s)",
            actual=f"at event indexes {marks}",
            index=marks[want_marks] if len(marks) > want_marks else None,
        )
    if succeeds != obs.succeeded:
        return _fail(
            obs,
            f"the run ended {obs.status!r}; after this interruption it must "
            + ("succeed in the continuing process" if succeeds else "fail"),
            expected="succeeded" if succeeds else "failed",
            actual=f"status={obs.status!r}, error={obs.error}",
        )
    if succeeds:
        final = [s.text for s in scenario.steps if s.kind == "text"] if scenario else []
        text = _squash(_text_of(obs))
        if final and _squash(final[-1]) not in text:
            return _fail(
                obs,
                "the continued turn's text is not in the run's events",
                expected=repr(final[-1]),
                actual=repr(_text_of(obs)),
            )
        return passed("continued once in a new process and completed")
    return passed(("continued once, then " if eligible else "not continued; ") + "failed")


def _complete_stdout(obs: RunObservation) -> str:
    data = "".join(obs.frames_out)
    return data[: data.rfind("\n") + 1]


@check("RUN-FAULT-CRASH-001", level="run")
def crash_fails_keeping_events(obs: RunObservation) -> Finding:
    """RUN-FAULT-CRASH-001 (seed 000 §8: "a crash ... remains a failure for that run"; design
    §Principles 3: nothing is dropped). Text the CLI wrote on complete stdout lines before
    it died must be in the events; without recorded stdout, some event must be kept."""
    scenario = obs.scenario
    if scenario is None or not any(s.kind == "crash" for s in scenario.steps):
        return skipped("the scenario has no crash step")
    if obs.cancel_requested:
        return skipped("the host cancelled the run")
    if obs.status != "failed":
        return _fail(
            obs,
            f"the CLI crashed but the run ended {obs.status!r}",
            expected="status failed",
            actual=f"status={obs.status!r}, exit_code={obs.exit_code!r}, signal={obs.signal!r}",
        )
    before = [s.text for s in _steps_before_fault(scenario, "crash") if s.kind == "text"]
    before = [t for t in before if t]
    if not before:
        return passed("failed; no text before the crash")
    if not obs.frames_out:
        if not obs.events:
            return _fail(
                obs,
                "the run kept no event from before the crash",
                expected=f"the events published before the crash (text {before!r})",
                actual="no events",
            )
        return passed("failed, events kept (stdout not recorded: text not compared)")
    wire = _complete_stdout(obs)
    text = _squash(_text_of(obs))
    for piece in before:
        escaped = json.dumps(piece, ensure_ascii=False)[1:-1]
        on_wire = piece in wire or escaped in wire
        if on_wire and _squash(piece) not in text:
            return _fail(
                obs,
                f"text {piece!r} reached stdout before the crash but is not in the events",
                expected=f"{piece!r} in the run's text",
                actual=f"text was {_text_of(obs)!r}",
            )
    return passed("failed, events before the crash kept")


@check("RUN-CANCEL-001", level="run")
def cancel_ends_cancelled(obs: RunObservation) -> Finding:
    """RUN-CANCEL-001 (ref §10.1 ``classifyChatRunCloseStatus`` rule 1: "cancelRequested →
    canceled"; seed 001 §9: "result: cancelled → cancelled run")."""
    if not obs.cancel_requested:
        return skipped("the host did not cancel the run")
    if obs.status != "cancelled":
        return _fail(
            obs,
            f"the host cancelled the run but it ended {obs.status!r}",
            expected="status cancelled",
            actual=f"status={obs.status!r}, error={obs.error}",
        )
    return passed()


def _budget_on(obs: RunObservation, platform: str) -> Finding:
    """The prompt-budget guards' verdict for ``platform`` on the spawned argv (seed 002 §6.3;
    the same verdicts ``harness replay --platform`` gives a recording, REPLAY-BUDGET-001)."""
    verdicts = [b for b in obs.budget if b.platform == platform]
    if not verdicts:
        return skipped("no spawned argv was judged (nothing was spawned)")
    refused = [b for b in verdicts if b.verdict == "fail"]
    if refused:
        first = refused[0]
        return _fail(
            obs,
            f"{platform} would refuse this run: {first.describe()}",
            expected=f"every {platform} launch passes the prompt-budget guards",
            actual="; ".join(f"{b.launch}: {b.rule}" for b in refused),
        )
    if all(b.verdict == "skipped" for b in verdicts):
        return skipped(verdicts[0].message)
    return passed("; ".join(f"{b.launch}: {b.message}" for b in verdicts))


@check("CONFORM-BUDGET-LINUX-001", level="run")
def budget_on_linux(obs: RunObservation) -> Finding:
    """CONFORM-BUDGET-LINUX-001: the spawned argv passes the guards for a linux launch."""
    return _budget_on(obs, "linux")


@check("CONFORM-BUDGET-DARWIN-001", level="run")
def budget_on_darwin(obs: RunObservation) -> Finding:
    """CONFORM-BUDGET-DARWIN-001: the spawned argv passes the guards for a darwin launch."""
    return _budget_on(obs, "darwin")


@check("CONFORM-BUDGET-WIN32-001", level="run")
def budget_on_win32(obs: RunObservation) -> Finding:
    """CONFORM-BUDGET-WIN32-001: the spawned argv passes the guards for a win32 launch,
    through a ``.cmd`` shim and as a direct ``.exe``."""
    return _budget_on(obs, "win32")


@check("RUN-SECRET-001", level="run")
def stderr_keeps_no_secret(obs: RunObservation) -> Finding:
    """RUN-SECRET-001 (seed 001 §14: "Bounded stderr excludes prompts, credentials"; §11: a
    secret is never logged). The evidence masks the secret itself."""
    secrets = [s for s in obs.secrets if len(s) >= _MIN_SECRET]
    if not secrets:
        return skipped(f"no secret of at least {_MIN_SECRET} characters was given to the run")
    # SECRET-ENCODED-001: a secret printed JSON-escaped or percent-encoded is still leaked.
    tail = obs.stderr_tail.encode("utf-8", "surrogatepass")
    found = [(i, at) for i, s in enumerate(secrets) if (at := _first_spelling(tail, s)) >= 0]
    if found:
        index, at = found[0]
        near = tail[max(0, at - 40) : at + len(secrets[index]) + 40]
        masked = SecretMatcher(secrets).redact_bytes(near, _SECRET_MARK.encode("utf-8"))
        return _fail(
            obs,
            f"{len(found)} secret value(s) appear in the stderr tail",
            expected="every secret redacted from stderr",
            actual=f"secret #{index + 1} ({len(secrets[index])} characters) at byte {at}: "
            + masked.decode("utf-8", "replace"),
        )
    return passed(f"{len(secrets)} secret(s) absent from the stderr tail")


def _first_spelling(data: bytes, secret: str) -> int:
    """The offset of the first spelling of ``secret`` in ``data`` (raw, escaped, encoded), -1."""
    offsets = [at for spelling in spellings(secret) if (at := data.find(spelling)) >= 0]
    return min(offsets, default=-1)


def evaluate_run(
    obs: RunObservation, *, rule_ids: Iterable[str] | None = None
) -> dict[str, Finding]:
    """Run the run-level checks on one :class:`~conformance.checks.runs.RunObservation`.

    A rule whose ``formats`` do not include the run's stream format is skipped here, so
    no check needs to repeat that test.
    """
    if not isinstance(obs, RunObservation):
        raise TypeError(f"evaluate_run() needs a RunObservation, got {type(obs).__name__}")
    catalog = all_rules()
    out: dict[str, Finding] = {}
    for rid, chk in select_checks("run", rule_ids).items():
        formats = catalog[rid].formats
        if "*" not in formats and obs.stream_format not in formats:
            out[rid] = skipped(
                f"{rid} covers the formats {', '.join(formats)}, not {obs.stream_format}"
            )
            continue
        out[rid] = chk.run(obs)
    return out
