"""The run-level checks judge live runs and replays alike: observations built from real
fake-CLI runs and from recordings pass, and a replayed crash is judged like a live one.

Rules: RUN-FAULT-CRASH-001, RUN-TERMINAL-001, RUN-AFTER-TERMINAL-001, RUN-CANCEL-001,
RUN-FAULT-APIERROR-001, RUN-HAPPY-TEXT-001, RUN-HAPPY-FILE-001, RUN-USAGE-001,
RUN-SESSION-CAPTURE-001, RUN-SECRET-001, EVENT-SCHEMA-001.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conformance.checks import Finding, all_checks
from conformance.checks.runs import RunObservation, evaluate_run, observe_replay, observe_run
from conformance.verdicts import Status
from fake_clis.scenario import load_scenario
from harness.defs.registry import BUILTIN_DEFS, BUILTIN_REGISTRY
from harness.defs.types import ResumeStyle
from harness.host.launch import path_env_key
from harness.recording.record import load_recording, parse_recording
from harness.recording.replay import replay_recording
from harness.runner import RunRequest, run_agent
from harness.runtime.fakes_install import install_fakes

RUN_RULES = sorted(all_checks("run"))
RECORDINGS = Path(__file__).resolve().parents[1] / "recording" / "data"
SECRET = "sk-test-conformance-0123456789"

#: (agent, scenario, cancel after seconds): one run per wire-format family and fault.
LIVE_RUNS: tuple[tuple[str, str, float | None], ...] = (
    ("claude", "happy", None),
    ("codex", "happy", None),
    ("opencode", "happy", None),
    ("kimi", "happy", None),
    ("aider", "happy", None),
    ("deepseek-harness", "api_error", None),
    ("amp", "api_error", None),
    ("qoder", "crash_mid_line", None),
    ("qwen", "hang", 1.5),
)


def _problems(findings: dict[str, Finding]) -> dict[str, str]:
    return {
        rule: f.reason
        for rule, f in findings.items()
        if f.status not in (Status.PASS, Status.SKIPPED)
    }


def _live(
    root: str, bin_dir: str, agent: str, scenario: str, cancel_after: float | None
) -> RunObservation:
    defn = BUILTIN_REGISTRY[agent]
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_CLI_")}
    key = path_env_key(env, sys.platform)
    env[key] = bin_dir + os.pathsep + env.get(key, "")
    env["FAKE_CLI_SCENARIO"] = scenario
    env["HARNESS_CONFORMANCE_API_KEY"] = SECRET
    if defn.bin_env_key:
        env.pop(defn.bin_env_key, None)
    cwd = tempfile.mkdtemp(prefix=f"{agent}-{scenario}-", dir=root)
    request = RunRequest(
        defn=defn,
        prompt="Create hello.html with a greeting.",
        cwd=cwd,
        env=env,
        new_session_id=str(uuid.uuid4()) if defn.resume_style is ResumeStyle.SPECIFY else None,
        first_output_timeout_ms=20_000,
        inactivity_timeout_ms=20_000,
    )
    cancel = threading.Event()
    timer = threading.Timer(cancel_after, cancel.set) if cancel_after is not None else None
    if timer is not None:
        timer.start()
    try:
        result = run_agent(request, cancel=cancel)
    finally:
        if timer is not None:
            timer.cancel()
    return observe_run(result, request=request, scenario=load_scenario(scenario))


@pytest.fixture(scope="module")
def live_observations() -> Iterator[dict[tuple[str, str], RunObservation]]:
    with tempfile.TemporaryDirectory(prefix="harness-checks-") as root:
        bin_dir = os.path.join(root, "bin")
        os.mkdir(bin_dir)
        install_fakes(bin_dir, BUILTIN_DEFS, agents=sorted({a for a, _, _ in LIVE_RUNS}))
        with ThreadPoolExecutor(max_workers=3) as pool:
            futures = {
                (agent, scenario): pool.submit(_live, root, bin_dir, agent, scenario, cancel)
                for agent, scenario, cancel in LIVE_RUNS
            }
            yield {key: future.result() for key, future in futures.items()}


@pytest.mark.rule(*RUN_RULES)
@pytest.mark.parametrize(("agent", "scenario"), [(a, s) for a, s, _ in LIVE_RUNS])
def test_live_fake_runs_pass_every_check(
    agent: str, scenario: str, live_observations: dict[tuple[str, str], RunObservation]
) -> None:
    obs = live_observations[(agent, scenario)]
    findings = evaluate_run(obs)
    assert _problems(findings) == {}
    assert findings["RUN-TERMINAL-001"].status is Status.PASS
    assert findings["RUN-SECRET-001"].status is Status.PASS  # the secret was given
    expected_pass = {
        "happy": ["RUN-HAPPY-TEXT-001", "RUN-HAPPY-FILE-001"],
        "api_error": ["RUN-FAULT-APIERROR-001"],
        "crash_mid_line": ["RUN-FAULT-CRASH-001"],
        "hang": ["RUN-CANCEL-001"],
    }[scenario]
    for rule in expected_pass:
        assert findings[rule].status is Status.PASS, rule
    if scenario == "happy" and obs.stream_format != "plain":
        assert findings["RUN-USAGE-001"].status is Status.PASS
    if obs.resume_style == "capture" and scenario == "happy":
        assert findings["RUN-SESSION-CAPTURE-001"].status is Status.PASS


@pytest.mark.rule("RUN-HAPPY-FILE-001")
def test_live_observations_read_back_the_written_files(
    live_observations: dict[tuple[str, str], RunObservation],
) -> None:
    obs = live_observations[("claude", "happy")]
    assert obs.files is not None
    assert obs.files["hello.html"] == "<!doctype html>\n<h1>Hello</h1>\n"
    assert SECRET in obs.secrets


@pytest.mark.rule("EVENT-SCHEMA-001", "RUN-TERMINAL-001", "RUN-AFTER-TERMINAL-001")
@pytest.mark.parametrize("name", ["claude_hello.jsonl", "dsh_run.jsonl"])
def test_replayed_recordings_pass(name: str) -> None:
    recording = load_recording(RECORDINGS / name)
    obs = observe_replay(replay_recording(recording), recording)
    assert obs.status == "succeeded"
    assert obs.files is None
    findings = evaluate_run(obs)
    assert _problems(findings) == {}
    assert findings["EVENT-SCHEMA-001"].status is Status.PASS
    assert findings["RUN-HAPPY-FILE-001"].status is Status.SKIPPED


def _claude_crash_recording(*, with_text: bool) -> bytes:
    header = {
        "format": "adapter-harness-recording",
        "version": 1,
        "agent": "claude",
        "stream_format": "claude-stream-json",
        "event_parser": None,
        "transport": "default",
        "argv": ["claude", "-p", "--output-format", "stream-json", "--verbose"],
        "prompt_delivery": "stdin",
        "platform": "linux",
        "cli_version": "2.1.259",
        "env": {},
    }
    frames = [
        {"type": "system", "subtype": "init", "session_id": "s-1", "model": "claude-opus"},
        {
            "type": "stream_event",
            "event": {
                "type": "message_start",
                "message": {"id": "m1", "type": "message", "role": "assistant", "content": []},
            },
            "parent_tool_use_id": None,
            "session_id": "s-1",
        },
        {
            "type": "stream_event",
            "event": {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            "parent_tool_use_id": None,
            "session_id": "s-1",
        },
    ]
    if with_text:
        frames.append(
            {
                "type": "stream_event",
                "event": {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": "Starting."},
                },
                "parent_tool_use_id": None,
                "session_id": "s-1",
            }
        )
    stdout = "".join(json.dumps(f) + "\n" for f in frames) + '{"type":"assistant","mess'
    lines = [
        header,
        {"t": 0, "dir": "stdin", "data": "Say hello\n"},
        {"t": 5, "dir": "stdout", "data": stdout},
        {"t": 6, "dir": "stderr", "data": "fatal: crashed\n"},
        {"exit": {"code": 3, "signal": None, "duration_ms": 7}},
    ]
    return "".join(json.dumps(x) + "\n" for x in lines).encode()


@pytest.mark.rule("RUN-FAULT-CRASH-001", "RUN-TERMINAL-001")
def test_a_replayed_crash_is_judged_like_a_live_one() -> None:
    recording = parse_recording(_claude_crash_recording(with_text=True), "crash.jsonl")
    replay = replay_recording(recording)
    obs = observe_replay(replay, recording, scenario=load_scenario("crash_mid_line"))
    # The replay engine's own one-way verdict ignores the exit; the observation classifies
    # the run from the recorded exit code as the live runner does.
    assert obs.status == "failed"
    assert obs.exit_code == 3
    assert obs.stderr_tail == "fatal: crashed\n"
    assert obs.repro_command == "harness replay crash.jsonl --json"
    findings = evaluate_run(obs)
    assert _problems(findings) == {}
    assert findings["RUN-FAULT-CRASH-001"].status is Status.PASS
    # Dropping the text event the CLI had completed before dying is caught.
    lossy = RunObservation(
        **{
            **obs.__dict__,
            "events": [e for e in obs.events if e.get("type") != "text_delta"],
        }
    )
    finding = evaluate_run(lossy, rule_ids=["RUN-FAULT-CRASH-001"])["RUN-FAULT-CRASH-001"]
    assert finding.status is Status.FAIL
    assert finding.evidence is not None
    assert finding.evidence.summary.startswith("RUN-FAULT-CRASH-001: claude: text 'Starting.'")
    assert any(f.dir.value == "stdout" for f in finding.evidence.transcript_slice)
    assert finding.evidence.stderr_tail == "fatal: crashed\n"


@pytest.mark.rule("RUN-FAULT-CRASH-001")
def test_a_replayed_crash_before_any_text_needs_none() -> None:
    recording = parse_recording(_claude_crash_recording(with_text=False), "crash.jsonl")
    obs = observe_replay(
        replay_recording(recording), recording, scenario=load_scenario("crash_mid_line")
    )
    finding = evaluate_run(obs, rule_ids=["RUN-FAULT-CRASH-001"])["RUN-FAULT-CRASH-001"]
    assert finding.status is Status.PASS
