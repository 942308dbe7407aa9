"""Run failures classified as the host classifies them (seed 000 §5.10, §5.11; seed 002 §4.4).

FIDELITY-EMPTY-001: exit 0 with nothing a person can use is a failure.
FIDELITY-LOGFILE-001: agy print mode is silent on failure; the runner gives it a log file
and reads it. FIDELITY-AUTH-001 / FIDELITY-FAILURE-001: a failure nothing in the stream
explains is read from stderr and that log (ref §5.4), with the def's auth guidance.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.defs.types import AgentDef
from harness.events import Status, TextDelta, ToolUse, Usage
from harness.host.failures import (
    GENERIC_AUTH_GUIDANCE,
    ServiceFailure,
    classify_log_failure,
    classify_service_failure,
    has_output,
)
from harness.runner import RunResult, run_agent_async
from harness.runner.status import CloseFacts, RunOutcome, classify_close_status
from tests.runner.conftest import FakeWorld

posix_only = pytest.mark.skipif(os.name == "nt", reason="the fake shims are POSIX scripts")


class _Argv:
    """A wire tap that keeps the spawned argv unredacted (the log path is in it)."""

    def __init__(self) -> None:
        self.argv: list[str] = []

    def spawned(
        self,
        defn: AgentDef,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        secrets: Sequence[str] = (),
    ) -> None:
        self.argv = list(argv)

    def data(self, direction: str, data: bytes, t_ms: float) -> None:
        return None

    def exited(self, code: int | None, signal: int | None, duration_ms: float) -> None:
        return None


def _run(world: FakeWorld, agent: str, steps: list[dict[str, Any]], **top: Any) -> RunResult:
    scenario = world.scenario_file(f"{agent}-case", steps, **top)
    return asyncio.run(run_agent_async(world.request(agent, scenario)))


# -- empty output (FIDELITY-EMPTY-001) -------------------------------------------------------


@pytest.mark.rule("FIDELITY-EMPTY-001")
def test_the_close_status_fails_an_empty_run_whatever_its_exit() -> None:
    assert classify_close_status(CloseFacts(exit_code=0)) is RunOutcome.SUCCEEDED
    assert classify_close_status(CloseFacts(exit_code=0, empty_output=True)) is RunOutcome.FAILED
    cancelled = CloseFacts(cancel_requested=True, empty_output=True)
    assert classify_close_status(cancelled) is RunOutcome.CANCELLED
    assert not has_output([Status(label="initializing"), Usage(usage={}), TextDelta(delta=" \n")])
    assert has_output([TextDelta(delta="hi")])
    assert has_output([ToolUse(id="t", name="Write", input={})])


@pytest.mark.rule("FIDELITY-EMPTY-001")
@pytest.mark.parametrize("agent", ["qwen", "claude"])
def test_exit_0_with_no_output_fails_with_agent_empty_output(world: FakeWorld, agent: str) -> None:
    result = _run(world, agent, [{"kind": "usage", "input_tokens": 1, "output_tokens": 0}])
    assert result.exit_code == 0
    assert result.status is RunOutcome.FAILED
    assert result.error is not None and result.error.code == "AGENT_EMPTY_OUTPUT"
    assert result.error.rule == "FIDELITY-EMPTY-001"
    assert "exited 0 without any output" in result.error.message


# -- agy's log file (FIDELITY-LOGFILE-001) ------------------------------------------------------


@posix_only
@pytest.mark.rule("FIDELITY-LOGFILE-001", "FIDELITY-AUTH-001", "FIDELITY-EMPTY-001")
def test_agy_is_given_a_log_file_that_explains_a_silent_failure(world: FakeWorld) -> None:
    tap = _Argv()
    scenario = world.scenario_file("agy-no-login", [{"kind": "text", "text": "x"}], auth="missing")
    result = asyncio.run(run_agent_async(world.request("antigravity", scenario), tap=tap))
    # seed 002 §4.4: --log-file comes before -p, or agy leaves the log empty.
    assert tap.argv[1:] == ["--log-file", tap.argv[2], "-p", "-"]
    log = Path(tap.argv[2])
    assert log.name == "agent.log" and log.parent.name.startswith("harness-agent-log-")
    assert not log.parent.exists(), "the log's directory is removed after the run"
    assert result.exit_code == 0 and result.stderr_tail == ""
    assert result.status is RunOutcome.FAILED
    assert result.error is not None and result.error.code == "AGENT_AUTH_REQUIRED"
    assert "authentication required: no signed-in account" in result.error.message
    assert "sign in to your Google account" in result.error.message


@posix_only
@pytest.mark.rule("FIDELITY-LOGFILE-001", "FIDELITY-FAILURE-001")
def test_agy_quota_in_the_log_is_a_rate_limit(world: FakeWorld) -> None:
    steps = [{"kind": "api_error", "status": 429, "message": "RESOURCE_EXHAUSTED: quota"}]
    result = _run(world, "antigravity", steps)
    assert result.status is RunOutcome.FAILED
    assert result.error is not None and result.error.code == "RATE_LIMITED"
    assert "status 429" in result.error.message


# -- auth guidance (FIDELITY-AUTH-001) ---------------------------------------------------------


@pytest.mark.rule("FIDELITY-AUTH-001")
def test_deepseek_auth_failure_names_its_key_locations(world: FakeWorld) -> None:
    steps = [
        {
            "kind": "api_error",
            "status": 401,
            "message": "Authentication Fails, Your api key: ****abcd is invalid",
        }
    ]
    result = _run(world, "deepseek", steps)
    assert result.status is RunOutcome.FAILED
    assert result.error is not None and result.error.code == "AGENT_AUTH_REQUIRED"
    assert "~/.deepseek/config.toml" in result.error.message
    assert "DEEPSEEK_API_KEY" in result.error.message
    assert "API request failed (401)" in result.error.message


@pytest.mark.rule("FIDELITY-AUTH-001")
def test_a_def_without_guidance_gets_the_hosts(world: FakeWorld) -> None:
    steps = [{"kind": "api_error", "status": 401, "message": "invalid api key"}]
    result = _run(world, "atomcode", steps)
    assert result.error is not None and result.error.code == "AGENT_AUTH_REQUIRED"
    assert result.error.message.endswith(GENERIC_AUTH_GUIDANCE)


@pytest.mark.rule("FIDELITY-FAILURE-001")
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Error: API request failed (401): bad key", ServiceFailure.AUTH_REQUIRED),
        ("HTTP 401 and then 429", ServiceFailure.AUTH_REQUIRED),
        ("status: 429 Too Many Requests", ServiceFailure.RATE_LIMITED),
        ("insufficient balance on the account", ServiceFailure.RATE_LIMITED),
        ("code=503 upstream", ServiceFailure.UPSTREAM_UNAVAILABLE),
        ("the model is overloaded", ServiceFailure.UPSTREAM_UNAVAILABLE),
        ("process ended with exit code 401", None),
        ("wrote 429 lines", None),
    ],
)
def test_service_failures_are_classified_in_ref_order(
    text: str, kind: ServiceFailure | None
) -> None:
    found = classify_service_failure(f"noise\n{text}\nmore noise")
    assert (found[0] if found else None) is kind
    if found is not None:
        assert found[1] == text


@posix_only  # the host stops the agent with SIGTERM
@pytest.mark.rule("FIDELITY-EMPTY-001", "RUN-FAULT-APIERROR-001")
def test_a_model_failure_an_acp_agent_hides_is_an_empty_run(world: FakeWorld) -> None:
    """kimi-cli ends the turn end_turn with no message when the model API fails
    (recordings/real/kimi/api_error.jsonl); the empty-output guard fails that run. Like the
    real kimi the fake stays up after stdin closes and the host's SIGTERM ends it: that
    stop after a completed turn is not the failure, the empty turn is."""
    result = asyncio.run(run_agent_async(world.request("kimi", "api_error")))
    assert result.status is RunOutcome.FAILED
    assert result.signal == signal.SIGTERM
    assert result.error is not None and result.error.code == "AGENT_EMPTY_OUTPUT"
    assert result.error.message.startswith("kimi ended its turn without any output")


# -- OpenCode's own log (FIDELITY-OPENCODE-LOG-001) ---------------------------------------------


@pytest.mark.rule("FIDELITY-OPENCODE-LOG-001")
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('ERROR x statusCode=429 message="unauthorized"', ServiceFailure.RATE_LIMITED),
        ('{"statusCode": 401}\n{"statusCode": 503}', ServiceFailure.UPSTREAM_UNAVAILABLE),
        ("ERROR statusCode=403 forbidden", ServiceFailure.AUTH_REQUIRED),
        ("ERROR statusCode=404 then rate limit exceeded", ServiceFailure.RATE_LIMITED),
        ("INFO nothing wrong", None),
    ],
)
def test_the_log_is_classified_by_its_status_code_first(
    text: str, kind: ServiceFailure | None
) -> None:
    found = classify_log_failure(text)
    assert (found[0] if found else None) is kind


@pytest.mark.rule("FIDELITY-OPENCODE-LOG-001", "FIDELITY-FAILURE-001")
def test_opencode_failure_is_read_from_its_own_log(world: FakeWorld) -> None:
    steps = [{"kind": "api_error", "status": 429, "message": "Provider quota exhausted"}]
    result = _run(world, "opencode", steps)
    assert result.status is RunOutcome.FAILED
    assert result.error is not None and result.error.code == "RATE_LIMITED"
    # The message quotes OpenCode 1.18.33's log line: the SDK error and its message.
    assert "level=ERROR" in result.error.message and '"stream error"' in result.error.message
    logs = list((world.home / ".local" / "share" / "opencode" / "log").glob("*.log"))
    assert logs, "the fake wrote OpenCode's log"


@pytest.mark.rule("FIDELITY-OPENCODE-LOG-001")
def test_a_log_older_than_the_run_is_not_read(world: FakeWorld) -> None:
    folder = world.home / ".local" / "share" / "opencode" / "log"
    folder.mkdir(parents=True)
    old = folder / "2020-01-01T000000.log"
    old.write_text("ERROR statusCode=401 unauthorized\n", encoding="utf-8")
    os.utime(old, (1_000_000_000, 1_000_000_000))
    result = _run(world, "opencode", [{"kind": "usage", "input_tokens": 1, "output_tokens": 0}])
    assert result.error is not None and result.error.code == "AGENT_EMPTY_OUTPUT"


# -- a user message mid-turn (FIDELITY-MIDTURN-001) --------------------------------------------


def _with_message(world: FakeWorld, agent: str, record: Path) -> RunResult:
    """Run ``agent`` on the slow scenario; send a further user message at its first text."""

    async def main() -> RunResult:
        messages: asyncio.Queue[str] = asyncio.Queue()

        def on_event(event: Any) -> None:
            if isinstance(event, TextDelta) and messages.empty() and not sent:
                sent.append(True)
                messages.put_nowait("Also add a footer.")

        request = world.request(agent, "slow", env_extra={"FAKE_CLI_RECORD": str(record)})
        return await run_agent_async(request, on_event=on_event, messages=messages)

    sent: list[bool] = []
    return asyncio.run(main())


@pytest.mark.rule("FIDELITY-MIDTURN-001")
def test_a_message_mid_turn_reaches_a_stream_json_cli_and_gets_its_own_turn(
    world: FakeWorld, tmp_path: Path
) -> None:
    record = tmp_path / "claude-record.json"
    result = _with_message(world, "claude", record)
    assert result.succeeded, result.error
    labels = [e.label for e in result.events if isinstance(e, Status)]
    assert "user_message_forwarded" in labels
    seen = json.loads(record.read_text(encoding="utf-8"))
    assert seen["prompts"][1] == "Also add a footer."
    # Both turns ran to their end before stdin closed: two terminal results.
    ends = [e for e in result.events if isinstance(e, Usage)]
    assert len(ends) == 2


@pytest.mark.rule("FIDELITY-MIDTURN-001")
def test_a_message_mid_turn_is_reported_where_the_protocol_takes_none(
    world: FakeWorld, tmp_path: Path
) -> None:
    result = _with_message(world, "qwen", tmp_path / "qwen-record.json")
    assert result.succeeded, result.error
    refused = [
        e
        for e in result.events
        if isinstance(e, Status) and e.label == "user_message_not_forwarded"
    ]
    assert len(refused) == 1 and refused[0].detail is not None
    assert "takes no user message" in refused[0].detail
