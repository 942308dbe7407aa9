"""One test per fault scenario (``fake_clis/scenarios/*.json``), across every stream format.

Each test runs the scenario against one def per stream format and transport
(:data:`FORMAT_CASES`), concurrently, through the real runner and real fake processes.
Every case must end (no hang), leave nothing behind (the autouse leak check), keep the
events produced before the fault, and report the fault typed: a failed status with an
error code, or, where the format tolerates the fault (non-JSON noise is a ``raw`` event,
design principle 3), a success that still shows the fault.

The strict format is dsh-profile-jsonl (seed 001 §6: "malformed frames fail the run
deterministically instead of being ignored"; §14: "Stdout contains protocol frames only").
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable, Sequence

import psutil
import pytest

from fake_clis.catalog import spec_for
from fake_clis.codex_app_server import SIGTERM_EXIT_CODE as APP_SERVER_SIGTERM_EXIT_CODE
from harness.events import Raw
from harness.runner import RunOutcome, RunResult, run_agent_async
from tests.runner import test_amr_continuation as amr_continuation
from tests.runner.conftest import (
    FORMAT_CASES,
    WHOLE_MESSAGES,
    FakeWorld,
    case_id,
    run_all,
    text_of,
)

STRICT_FORMATS = frozenset({"dsh-profile-jsonl"})
#: One-way JSONL formats: a line no parser claims is a raw event.
JSONL_ONE_WAY = frozenset(
    {"claude-stream-json", "json-event-stream", "copilot-stream-json", "qoder-stream-json"}
)
SIGTERM = int(signal.SIGTERM)

Check = Callable[[RunResult], list[str]]


def run_matrix(world: FakeWorld, scenario: str, **kw: object) -> list[tuple[str, RunResult]]:
    requests = [world.request(a, scenario, transport=t, **kw) for a, t in FORMAT_CASES]
    return [(case_id(c), r) for c, r in zip(FORMAT_CASES, run_all(requests), strict=True)]


def expect(results: Sequence[tuple[str, RunResult]], check: Check) -> None:
    problems: list[str] = []
    for name, result in results:
        problems.extend(f"{name}: {p}" for p in check(result))
    assert not problems, "\n".join(problems)


def _failed_typed(result: RunResult, code: str | None = None) -> list[str]:
    out: list[str] = []
    if result.status is not RunOutcome.FAILED:
        out.append(f"status {result.status.value}, expected failed")
    if result.error is None or not result.error.code:
        out.append("no typed error")
    elif code is not None and result.error.code != code:
        out.append(f"error {result.error.code}, expected {code}")
    return out


def _succeeded(result: RunResult) -> list[str]:
    if result.status is RunOutcome.SUCCEEDED and result.error is None:
        return []
    return [f"status {result.status.value} error {result.error}"]


def _sigterm_exit_code(result: RunResult) -> int | None:
    """The code the run's fake exits with when it traps SIGTERM (``None``: it dies of it)."""
    if result.stream_format == "codex-app-server":
        return APP_SERVER_SIGTERM_EXIT_CODE
    return spec_for(result.agent_id).sigterm_exit_code


def _ended_by_sigterm(result: RunResult) -> bool:
    """Died of SIGTERM, or trapped it and exited as its CLI does then (claude 143, codex
    app-server 0)."""
    if result.signal == SIGTERM:
        return True
    code = _sigterm_exit_code(result)
    return result.signal is None and code is not None and result.exit_code == code


def _has_text(result: RunResult, *pieces: str) -> list[str]:
    text = text_of(result.events)
    return [f"text {text[:120]!r} lacks {p!r}" for p in pieces if p not in text]


def _raw_lines(result: RunResult) -> list[Raw]:
    return [e for e in result.events if isinstance(e, Raw)]


# --------------------------------------------------------------------------- model failures


@pytest.mark.rule("RUN-STATUS-001")
def test_api_error_fails_every_format_with_a_typed_error(world: FakeWorld) -> None:
    expect(run_matrix(world, "api_error"), _failed_typed)


@pytest.mark.rule("RUN-STATUS-001", "RUN-REAP-001")
def test_crash_mid_line_keeps_earlier_events_and_fails(world: FakeWorld) -> None:
    def check(result: RunResult) -> list[str]:
        problems = _failed_typed(result) + _has_text(result, "Starting.")
        if result.exit_code != 3:
            problems.append(f"exit {result.exit_code}, expected 3")
        return problems

    expect(run_matrix(world, "crash_mid_line"), check)


@pytest.mark.rule("RUN-STATUS-001")
def test_nonzero_exit_after_partial_output_fails(world: FakeWorld) -> None:
    def check(result: RunResult) -> list[str]:
        problems = _failed_typed(result) + _has_text(result, "Partial.")
        if result.exit_code != 7:
            problems.append(f"exit {result.exit_code}, expected 7")
        return problems

    expect(run_matrix(world, "exit_code"), check)


# --------------------------------------------------------------------------- timeouts


@pytest.mark.rule("RUN-TIMEOUT-IDLE-001")
def test_hang_hits_the_inactivity_timeout_and_keeps_the_text(world: FakeWorld) -> None:
    # Generous enough that a slow interpreter start-up on a loaded machine is not "idle".
    results = run_matrix(world, "hang", inactivity_timeout_ms=8000)

    def check(result: RunResult) -> list[str]:
        problems = _failed_typed(result, "RUN_INACTIVITY_TIMEOUT")
        # A CLI that prints a message only when it ends has printed none of a hung one.
        if result.agent_id not in WHOLE_MESSAGES:
            problems += _has_text(result, "Thinking about it...")
        if sys.platform != "win32" and not _ended_by_sigterm(result):
            problems.append(f"ended by {result.signal}, expected SIGTERM from the runner")
        return problems

    expect(results, check)


@pytest.mark.rule("RUN-TIMEOUT-FIRST-001")
def test_stall_hits_the_first_output_timeout(world: FakeWorld) -> None:
    results = run_matrix(world, "stall", first_output_timeout_ms=2500)

    def check(result: RunResult) -> list[str]:
        problems = _failed_typed(result, "RUN_FIRST_OUTPUT_TIMEOUT")
        if result.first_output_ms is not None:
            problems.append("a substantive event was recorded")
        # The stall is 60 s: ending well before proves the deadline cut it.
        if not 2500 <= result.duration_ms < 45_000:
            problems.append(f"took {result.duration_ms:.0f} ms")
        return problems

    expect(results, check)


# --------------------------------------------------------------------------- bad stdout


def _tolerated(result: RunResult, *texts: str) -> list[str]:
    return _succeeded(result) + _has_text(result, *texts)


@pytest.mark.rule("RUN-STATUS-001")
def test_malformed_frame_fails_strict_formats_and_is_raw_elsewhere(world: FakeWorld) -> None:
    def check(result: RunResult) -> list[str]:
        if result.stream_format in STRICT_FORMATS:
            return _failed_typed(result, "DSH_PROFILE_MALFORMED_FRAME") + _has_text(
                result, "Before."
            )
        problems = _tolerated(result, "Before.", "After.")
        if result.stream_format in JSONL_ONE_WAY and not _raw_lines(result):
            problems.append("the malformed line is not a raw event")
        if result.stream_format == "acp-json-rpc" and not result.counters.get(
            "session.non_json_lines"
        ):
            problems.append("the malformed line was not counted")
        return problems

    expect(run_matrix(world, "malformed"), check)


@pytest.mark.rule("RUN-STATUS-001")
def test_foreign_frames_do_not_break_or_join_the_run(world: FakeWorld) -> None:
    def check(result: RunResult) -> list[str]:
        problems = _tolerated(result, "Mine.", "Still mine.")
        if result.stream_format in STRICT_FORMATS and not result.counters.get(
            "session.ignored_foreign_frames"
        ):
            problems.append("the foreign frame was not counted as ignored")
        return problems

    expect(run_matrix(world, "foreign"), check)


@pytest.mark.rule("RUN-PUMP-001")
def test_oversize_line_is_bounded_or_fatal_for_strict_formats(world: FakeWorld) -> None:
    def check(result: RunResult) -> list[str]:
        if result.stream_format in STRICT_FORMATS:
            return _failed_typed(result, "DSH_PROFILE_FRAME_TOO_LARGE") + _has_text(
                result, "Before."
            )
        problems = _tolerated(result, "Before.", "After.")
        if result.stream_format in JSONL_ONE_WAY:
            sizes = [e.truncated_bytes for e in _raw_lines(result) if e.truncated_bytes]
            if sizes != [2 * 1024 * 1024]:
                problems.append(f"oversize raw events {sizes}, expected one of 2 MiB")
        return problems

    expect(run_matrix(world, "oversize"), check)


@pytest.mark.rule("RUN-STATUS-001")
def test_noise_lines_are_raw_events_except_where_stdout_is_protocol_only(
    world: FakeWorld,
) -> None:
    def check(result: RunResult) -> list[str]:
        if result.stream_format in STRICT_FORMATS:
            return _failed_typed(result, "DSH_PROFILE_MALFORMED_FRAME")
        problems = _tolerated(result, "Hello.")
        if result.stream_format in JSONL_ONE_WAY:
            lines = [e.line for e in _raw_lines(result)]
            if "[SandboxDebug] starting" not in lines or "debug: done" not in lines:
                problems.append(f"noise not kept as raw: {lines}")
        if result.first_output_ms is None:
            problems.append("no substantive output recorded")
        return problems

    expect(run_matrix(world, "noise"), check)


# --------------------------------------------------------------------------- processes


def _ignores_sigterm(pid: int) -> bool:
    """Linux: SIGTERM is in the process's ignored-signal mask (``SigIgn``)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("SigIgn:"):
                    return bool(int(line.split()[1], 16) & (1 << (SIGTERM - 1)))
    except OSError:
        return False
    return False


async def _helpers_ready(before: set[int], deadline_s: float) -> list[int]:
    """Wait until a fake's child and grandchild both ignore SIGTERM; return their pids.

    The run's leader is any child of ours not in ``before``, looked for anew each time:
    the runner's help probe (FIDELITY-CAPS-001) is a short-lived child started first."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline_s
    while loop.time() < end:
        for child in psutil.Process().children():
            if child.pid in before:
                continue
            try:
                helpers = child.children(recursive=True)
            except psutil.Error:
                continue
            pids = [h.pid for h in helpers]
            if len(pids) >= 2 and (
                not sys.platform.startswith("linux") or all(_ignores_sigterm(p) for p in pids)
            ):
                return pids
        await asyncio.sleep(0.05)
    return []


@pytest.mark.rule("RUN-CANCEL-ORDER-001", "RUN-REAP-001", "RUN-OWNED-001")
@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM-ignoring helpers are POSIX")
@pytest.mark.parametrize("case", FORMAT_CASES, ids=case_id)
def test_spawn_tree_cancel_kills_child_and_grandchild_that_ignore_sigterm(
    world: FakeWorld, case: tuple[str, str | None]
) -> None:
    agent, transport = case
    grace = 800
    request = world.request(
        agent, "spawn_tree", transport=transport, shutdown_grace_ms=grace, cancel_grace_ms=300
    )
    before = {p.pid for p in psutil.Process().children()}

    async def main() -> tuple[RunResult, list[int]]:
        cancel = asyncio.Event()
        task = asyncio.ensure_future(run_agent_async(request, cancel=cancel))
        helpers = await _helpers_ready(before, 20.0)
        cancel.set()
        return await task, helpers

    result, helpers = asyncio.run(main())
    assert len(helpers) >= 2, "the fake never started its helper processes"
    assert result.status is RunOutcome.CANCELLED
    assert result.error is None, result.error
    assert result.cancel_requested
    for pid in helpers:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"
    # Forced: the helpers ignore SIGTERM, so only the SIGKILL after the grace stops them.
    assert result.cancel_latency_ms is not None
    assert result.cancel_latency_ms >= grace * 0.9
    assert result.cancel_latency_ms < 300 + grace + 15_000


@pytest.mark.rule("RUN-PUMP-001")
def test_stderr_while_answering_is_captured_apart_from_stdout(world: FakeWorld) -> None:
    def check(result: RunResult) -> list[str]:
        problems = _tolerated(result, "Hello.")
        wanted = "warning: something noisy\nwarning: more noise\n"
        if not result.stderr_tail.endswith(wanted):
            problems.append(f"stderr tail {result.stderr_tail[-120:]!r}")
        if "warning" in text_of(result.events):
            problems.append("stderr leaked into the event stream")
        return problems

    expect(run_matrix(world, "stderr"), check)


@pytest.mark.rule("RUN-PUMP-001", "RUN-STDERR-REDACT-001")
def test_megabytes_on_stdout_and_stderr_at_once_do_not_deadlock(world: FakeWorld) -> None:
    """5 MB of stderr interleaved with 5 MB of valid stdout frames (the "stderr" fault)."""
    line = "warning: something noisy " + "." * 40 + "\n"
    half = line * (5 * 1024 * 1024 // len(line) // 2)
    # Distinct 64 KiB chunks (a session may fold a repeated identical update).
    chunks = [f"<{i:03d}>" + "y" * (64 * 1024 - 5) for i in range(80)]
    first, second = chunks[:40], chunks[40:]
    scenario = world.scenario_file(
        "bigio",
        [
            {"kind": "stderr", "text": half},
            {"kind": "text", "text": "".join(first), "chunks": first},
            {"kind": "stderr", "text": half + "last stderr line\n"},
            {"kind": "text", "text": "".join(second), "chunks": second},
            {"kind": "text", "text": "END"},
        ],
    )
    # Formats whose frames carry each streamed chunk on its own line (the claude fake
    # repeats the whole message in one line, and a dsh result frame carries the whole
    # output: past the 1 MiB frame cap, raw or fatal; pi repeats the partial message in
    # every update, which makes 5 MB of text hundreds of MB of stdout).
    cases = [("qwen", None), ("devin", None), ("codex", None)]
    results = run_all([world.request(a, scenario, transport=t) for a, t in cases])
    for (agent, _), result in zip(cases, results, strict=True):
        assert result.succeeded, (agent, result.error)
        text = text_of(result.events)
        assert "".join(text.split()).startswith("".join(chunks)), agent
        assert text.rstrip().endswith("END"), agent
        assert result.stderr_bytes == 2 * len(half.encode()) + len("last stderr line\n"), agent
        assert len(result.stderr_tail.encode()) <= 64 * 1024
        assert result.stderr_tail.endswith("last stderr line\n"), agent


@pytest.mark.rule("RUN-SESSION-001", "RUN-STDIN-001", "RUN-TIMEOUT-IDLE-001")
def test_ignore_stdin_is_stopped_after_completion_or_by_the_watchdog(world: FakeWorld) -> None:
    """The CLI answers, then stays alive after stdin closes.

    Two-way sessions and stream-json input have a completion signal: the finished run's
    process is terminated after the bound and the run succeeds (ref §10.1 rules 3, 7).
    A text-stdin CLI has none: the inactivity watchdog stops it and the run fails.
    """
    results = run_matrix(world, "ignore_stdin", inactivity_timeout_ms=8000)

    def check(result: RunResult) -> list[str]:
        completes = result.stream_format not in JSONL_ONE_WAY | {"plain"} or (
            result.stream_format == "claude-stream-json"
        )
        problems = _has_text(result, "Done, but I linger.")
        if completes:
            problems += _succeeded(result)
            if sys.platform != "win32" and not _ended_by_sigterm(result):
                problems.append(f"ended by {result.signal}, expected SIGTERM")
        else:
            problems += _failed_typed(result, "RUN_INACTIVITY_TIMEOUT")
        return problems

    expect(results, check)


# --------------------------------------------------------------------------- benign variants


@pytest.mark.rule("RUN-TIMEOUT-IDLE-001")
def test_slow_output_is_not_inactivity(world: FakeWorld) -> None:
    results = run_matrix(world, "slow", inactivity_timeout_ms=15_000)

    def check(result: RunResult) -> list[str]:
        text = "".join(text_of(result.events).split())
        return _succeeded(result) + ([] if text == "abc" else [f"text {text!r}"])

    expect(results, check)


@pytest.mark.rule("RUN-SPAWN-001")
def test_old_version_runs_with_the_default_capabilities(world: FakeWorld) -> None:
    expect(run_matrix(world, "old_version"), lambda r: _tolerated(r, "Old but fine."))


@pytest.mark.rule("RUN-FILES-001")
def test_happy_scenario_on_every_format(world: FakeWorld) -> None:
    def check(result: RunResult) -> list[str]:
        problems = _tolerated(result, "Done: hello.html is ready.")
        if "hello.html" not in result.files_written:
            problems.append(f"files {result.files_written}")
        return problems

    expect(run_matrix(world, "happy"), check)


#: Scenario file -> the test above that runs it.
SCENARIO_TESTS: dict[str, Callable[..., None]] = {
    "api_error": test_api_error_fails_every_format_with_a_typed_error,
    "crash_mid_line": test_crash_mid_line_keeps_earlier_events_and_fails,
    "exit_code": test_nonzero_exit_after_partial_output_fails,
    "hang": test_hang_hits_the_inactivity_timeout_and_keeps_the_text,
    "stall": test_stall_hits_the_first_output_timeout,
    "malformed": test_malformed_frame_fails_strict_formats_and_is_raw_elsewhere,
    "foreign": test_foreign_frames_do_not_break_or_join_the_run,
    "oversize": test_oversize_line_is_bounded_or_fatal_for_strict_formats,
    "noise": test_noise_lines_are_raw_events_except_where_stdout_is_protocol_only,
    "spawn_tree": test_spawn_tree_cancel_kills_child_and_grandchild_that_ignore_sigterm,
    "stderr": test_stderr_while_answering_is_captured_apart_from_stdout,
    "ignore_stdin": test_ignore_stdin_is_stopped_after_completion_or_by_the_watchdog,
    "slow": test_slow_output_is_not_inactivity,
    "old_version": test_old_version_runs_with_the_default_capabilities,
    "happy": test_happy_scenario_on_every_format,
    "compaction": amr_continuation.test_an_interrupted_turn_continues_once_in_a_new_process,
}
#: Not faults; exercised by the fake-CLI tests.
NOT_FAULTS = frozenset({"shell", "text", "tool_error"})


@pytest.mark.rule("RUN-REAP-001")
def test_every_scenario_file_has_a_runner_test() -> None:
    from fake_clis.scenario import list_scenarios

    missing = sorted(set(list_scenarios()) - set(SCENARIO_TESTS) - NOT_FAULTS)
    assert not missing, f"scenarios without a runner test: {missing}"
