"""Tests for the ``my-claude`` adapter def (``my_adapter.py``), with adapter-harness's plugin.

Copy this file and ``my_adapter.py`` into your project, then::

    pytest test_my_adapter.py --adapter-def my_adapter.py --snapshot-update   # first run
    pytest test_my_adapter.py --adapter-def my_adapter.py

The first run writes the event snapshot (``__snapshots__/test_my_adapter/*.jsonl``);
commit it. Later runs compare against it. Without the installed entry point add
``-p conformance.pytest_plugin``. Every fixture of the plugin appears below:

* ``agent_def`` -- the def under test (from ``--adapter-def``);
* ``adapter_fake_as`` -- which built-in fake plays the def's CLI (``None``: inferred);
* ``fake_cli(scenario)`` -- the fake installed under the def's binary name, to run yourself;
* ``run_agent(prompt=..., scenario=..., **overrides)`` -- one run through the real runner;
* ``replay(recording)`` -- a recording fed through the engine's parser;
* ``snapshot_events`` -- syrupy's ``snapshot`` for normalized event streams.

``@pytest.mark.adapter_rule("ID", ...)`` binds a test to conformance rules: a rule that has
a check is judged on the test's def or on every run and replay the test makes, and a
failure names the rule.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from conformance.pytest_plugin import AgentRunner, FakeCliFactory, Replayer
from harness.defs.types import AgentDef, BuildOptions, RuntimeContext
from harness.events import Status, TextDelta, Usage

PROMPT = "Create hello.html with a greeting."


def test_the_def_under_test(agent_def: AgentDef) -> None:
    assert agent_def.id == "my-claude"
    assert agent_def.stream_format == "claude-stream-json"


@pytest.mark.adapter_rule("ARGV-HEADLESS-001", "DEF-PROMPT-001", "DEFCHECK-RESUME-001")
def test_the_fake_receives_our_argv(
    agent_def: AgentDef, adapter_fake_as: str | None, fake_cli: FakeCliFactory
) -> None:
    """Run the installed fake by hand: it records exactly what it was given."""
    fake = fake_cli("happy")
    assert fake.emulator == (adapter_fake_as or "claude")
    assert fake.executable.parent == fake.bin_dir
    argv = agent_def.build_args(
        "Say hello", [], [], BuildOptions(), RuntimeContext(cwd=str(fake.cwd))
    )
    user_line = {"type": "user", "message": {"role": "user", "content": "Say hello"}}
    proc = subprocess.run(
        [str(fake.executable), *argv],
        input=json.dumps(user_line) + "\n",
        text=True,
        env=fake.env,
        cwd=fake.cwd,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    received = fake.record()
    assert received["argv"] == argv
    assert received["prompt"] == "Say hello"
    assert received["prompt_via"] == "stdin-stream-json"


@pytest.mark.adapter_rule(
    "RUN-HAPPY-TEXT-001", "RUN-HAPPY-FILE-001", "RUN-USAGE-001", "EVENT-SCHEMA-001"
)
def test_a_happy_run(run_agent: AgentRunner, snapshot_events: SnapshotAssertion) -> None:
    result = run_agent(prompt=PROMPT, scenario="happy")
    assert result.succeeded, result.error
    assert "hello.html" in result.files_written
    assert any(isinstance(e, Usage) for e in result.events)
    # The whole normalized stream, pinned: ids, times and tmp paths are placeholders.
    assert snapshot_events == result


@pytest.mark.adapter_rule("RUN-FAULT-CRASH-001", "RUN-TERMINAL-001")
def test_a_crash_fails_the_run_and_keeps_its_events(run_agent: AgentRunner) -> None:
    result = run_agent(prompt=PROMPT, scenario="crash_mid_line")
    assert not result.succeeded
    assert "".join(e.delta for e in result.events if isinstance(e, TextDelta)) == "Starting."


@pytest.mark.adapter_rule("RUN-FAULT-APIERROR-001")
def test_an_api_error_fails_the_run(run_agent: AgentRunner) -> None:
    result = run_agent(prompt=PROMPT, scenario="api_error")
    assert not result.succeeded


def test_a_second_turn_resumes_the_session(run_agent: AgentRunner) -> None:
    session = str(uuid.uuid4())
    first = run_agent(prompt=PROMPT, new_session_id=session)
    assert first.succeeded, first.error
    second = run_agent(prompt="Now add a footer.", resume_session_id=session)
    assert second.succeeded, second.error
    received = run_agent.last.fake.record()
    assert received["resumed"] is True
    assert received["session_id"] == session


def _write_recording(path: Path) -> Path:
    """A recording of a tiny my-claude run, written by hand from Claude's stream-json shapes.

    Real recordings are captured from runs (recording format v1, ``harness/recording/record.py``).
    """
    session = "0b7e6f3a-2c1d-4e5f-8a9b-0c1d2e3f4a5b"
    stdout = [
        {"type": "system", "subtype": "init", "session_id": session, "model": "sonnet"},
        {
            "type": "assistant",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "model": "sonnet",
                "content": [{"type": "text", "text": "Hello from the recording."}],
                "stop_reason": "end_turn",
            },
            "parent_tool_use_id": None,
            "session_id": session,
        },
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": 812,
            "num_turns": 1,
            "session_id": session,
            "total_cost_usd": 0.0012,
            "usage": {"input_tokens": 10, "output_tokens": 6},
        },
    ]
    header = {
        "format": "adapter-harness-recording",
        "version": 1,
        "agent": "my-claude",
        "stream_format": "claude-stream-json",
        "event_parser": None,
        "transport": "default",
        "argv": ["my-claude", "-p", "--output-format", "stream-json", "--verbose"],
        "prompt_delivery": "stdin",
        "platform": "linux",
        "cli_version": None,
        "env": {},
    }
    lines = [header]
    lines += [
        {"t": 10 * i, "dir": "stdout", "data": json.dumps(f) + "\n"} for i, f in enumerate(stdout)
    ]
    lines.append({"exit": {"code": 0, "signal": None, "duration_ms": 40}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.adapter_rule("RUN-TERMINAL-001", "EVENT-SCHEMA-001")
def test_a_recording_replays_the_same_at_any_chunking(replay: Replayer, tmp_path: Path) -> None:
    recording = _write_recording(tmp_path / "hello.jsonl")
    whole = replay(recording)
    assert whole.ok, [f.to_json() for f in whole.findings]
    assert "".join(e.delta for e in whole.events if isinstance(e, TextDelta)) == (
        "Hello from the recording."
    )
    assert any(isinstance(e, Status) and e.session_id for e in whole.events)
    bytewise = replay(recording, chunking="1")
    assert [e.to_json() for e in bytewise.events] == [e.to_json() for e in whole.events]
