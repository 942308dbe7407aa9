"""RUN-TIMEOUT-FIRST-001, RUN-TIMEOUT-IDLE-001: the two watchdogs of ref §10.1."""

from __future__ import annotations

import dataclasses

import pytest

from harness.events import (
    Error,
    Raw,
    Status,
    TextDelta,
    ThinkingStart,
    ToolUse,
    Usage,
)
from harness.runner import RunErrorCode, RunOutcome, is_substantive, run_agent
from tests.runner.conftest import FakeWorld, run_all, text_of


@pytest.mark.rule("RUN-TIMEOUT-FIRST-001")
@pytest.mark.parametrize(
    ("event", "substantive"),
    [
        (Status(label="initializing", session_id="s"), False),
        (Status(label="waiting_for_first_output"), False),
        (Raw(line="[debug] banner"), False),
        (TextDelta(delta=" \n\t"), False),
        (TextDelta(delta="hi"), True),
        (ThinkingStart(), True),
        (ToolUse(id="t", name="Bash", input={}), True),
        (Usage(usage={"input_tokens": 1}), True),
        (Error(message="boom"), True),
    ],
)
def test_what_counts_as_first_output(event: object, substantive: bool) -> None:
    assert is_substantive(event) is substantive  # type: ignore[arg-type]


@pytest.mark.rule("RUN-TIMEOUT-FIRST-001")
def test_noise_does_not_satisfy_the_first_output_deadline(world: FakeWorld) -> None:
    scenario = world.scenario_file(
        "noisy_stall",
        [
            {"kind": "noise", "text": "[SandboxDebug] starting"},
            {"kind": "sleep", "ms": 60_000},
            {"kind": "text", "text": "too late"},
        ],
    )
    cases = [("claude", None), ("codex", "exec-json")]
    results = run_all(
        [world.request(a, scenario, transport=t, first_output_timeout_ms=6000) for a, t in cases]
    )
    for result in results:
        assert result.status is RunOutcome.FAILED
        assert result.error is not None
        assert result.error.code == RunErrorCode.FIRST_OUTPUT_TIMEOUT
        assert result.error.rule == "RUN-TIMEOUT-FIRST-001"
        # Events up to the timeout are kept, the noise among them.
        assert any(isinstance(e, Raw) and "SandboxDebug" in e.line for e in result.events)
        assert result.first_output_ms is None


@pytest.mark.rule("RUN-TIMEOUT-FIRST-001")
def test_the_defs_first_output_timeout_applies_when_the_request_sets_none(
    world: FakeWorld,
) -> None:
    request = world.request("qoder", "stall")
    defn = dataclasses.replace(request.defn, first_output_timeout_ms=2000)
    result = run_agent(dataclasses.replace(request, defn=defn))
    assert result.error is not None
    assert result.error.code == RunErrorCode.FIRST_OUTPUT_TIMEOUT
    assert "2000 ms" in result.error.message


@pytest.mark.rule("RUN-TIMEOUT-FIRST-001")
def test_a_prompt_answer_meets_the_deadline(world: FakeWorld) -> None:
    result = run_agent(world.request("claude", "text", first_output_timeout_ms=20_000))
    assert result.succeeded, result.error
    assert result.first_output_ms is not None and 0 < result.first_output_ms < 20_000


@pytest.mark.rule("RUN-TIMEOUT-IDLE-001")
def test_stderr_activity_resets_the_inactivity_timer(world: FakeWorld) -> None:
    ticks: list[dict[str, object]] = []
    for _ in range(6):
        ticks += [{"kind": "sleep", "ms": 1000}, {"kind": "stderr", "text": "tick\n"}]
    scenario = world.scenario_file(
        "ticking",
        [{"kind": "text", "text": "a"}, *ticks, {"kind": "text", "text": "b"}],
    )
    # stdout is silent for ~6 s, longer than the timeout; stderr speaks every second.
    result = run_agent(world.request("qwen", scenario, inactivity_timeout_ms=4000))
    assert result.succeeded, result.error
    assert "".join(text_of(result.events).split()) == "ab"
    assert result.stderr_tail.count("tick") == 6


@pytest.mark.rule("RUN-TIMEOUT-IDLE-001")
def test_silence_on_both_pipes_trips_the_inactivity_timer(world: FakeWorld) -> None:
    scenario = world.scenario_file(
        "silent",
        [
            {"kind": "text", "text": "a"},
            {"kind": "stderr", "text": "tick\n"},
            {"kind": "sleep", "ms": 60_000},
            {"kind": "text", "text": "b"},
        ],
    )
    result = run_agent(world.request("qwen", scenario, inactivity_timeout_ms=5000))
    assert result.status is RunOutcome.FAILED
    assert result.error is not None
    assert result.error.code == RunErrorCode.INACTIVITY_TIMEOUT
    assert text_of(result.events).strip() == "a"
    assert result.stderr_tail == "tick\n"
