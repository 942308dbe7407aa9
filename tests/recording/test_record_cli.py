"""Recording live runs: ``RunRecorder`` on the runner, ``harness run --record`` and
``harness record -- CMD ARGS`` (``harness/recording/record.py``, ``harness/commands/record.py``).

Rules: RECORD-ROUNDTRIP-001, RECORD-ENV-001, RECORD-PARTIAL-001, RECORD-CLI-001,
RECORD-SECRET-LITERAL-001, RECORD-SECRET-ENV-001. Every run is a real subprocess: the
fake CLIs installed on a private PATH (``tests/runner/conftest.py``), whose leak check
fails a test that leaves a process behind.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.events import Event
from harness.recording.record import (
    Direction,
    RecordingError,
    RunRecorder,
    load_recording,
    parse_recording,
    recorded_env_names,
)
from harness.recording.replay import replay_recording
from harness.runner import RunOutcome, run_agent, run_agent_async
from harness.secrets.scrub import REDACTED
from tests.runner.conftest import FakeWorld
from tests.support.processes import kill_orphans

ROOT = Path(__file__).resolve().parents[2]

#: Fields that carry wall-clock time (elapsed, time to first token, start stamps,
#: durations): a replay reports them as 0, a live run as measured.
_TIMING_KEYS = frozenset({"elapsed_ms", "ttft_ms", "started_at_ms", "duration_ms"})


def _strip_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_timing(v) for k, v in value.items() if k not in _TIMING_KEYS}
    if isinstance(value, list):
        return [_strip_timing(v) for v in value]
    return value


def _untimed(events: Sequence[Event | dict[str, Any]]) -> list[Any]:
    out = []
    for event in events:
        data = _strip_timing(event if isinstance(event, dict) else event.to_json())
        if data.get("type") == "artifact":
            # seed 000 §5.13: the runner names a plain artifact against the project and
            # writes it after the exit (hello-2.html beside an existing hello.html); a
            # replay writes nothing, so name and path are the runner's, not the stream's.
            data.pop("name", None)
            data.pop("path", None)
        out.append(data)
    return out


@pytest.fixture
def world(tmp_path: Path) -> FakeWorld:
    return FakeWorld(tmp_path)


def _record(
    world: FakeWorld, tmp_path: Path, agent: str, scenario: str, **kw: Any
) -> tuple[Any, Path, Any]:
    """Run ``agent`` on its fake with a recorder writing ``<tmp>/<agent>.jsonl``."""
    request = world.request(agent, scenario, **kw)
    path = tmp_path / f"{agent}-{scenario}.jsonl"
    recorder = RunRecorder(path, cwd=request.cwd, home=str(world.home))
    try:
        result = run_agent(request, tap=recorder)
    finally:
        recorder.close()
    return result, path, request


def _replay_paths(request: Any, world: FakeWorld) -> dict[str, str]:
    return {"cwd": request.cwd, "home": str(world.home), "tmp": tempfile.gettempdir()}


# --------------------------------------------------------------------------- round trip


@pytest.mark.rule("RECORD-ROUNDTRIP-001", "RECORD-FORMAT-001")
@pytest.mark.parametrize(
    ("agent", "transport"),
    [
        ("claude", None),  # claude-stream-json, stdin held open
        ("codex", "exec-json"),  # json-event-stream/codex
        ("qwen", None),  # plain, stdin text
        ("grok-build", None),  # plain, prompt file
        ("devin", None),  # acp-json-rpc (two-way)
        ("pi", None),  # pi-rpc (two-way)
    ],
)
def test_replaying_a_recorded_run_gives_the_live_events(
    world: FakeWorld, tmp_path: Path, agent: str, transport: str | None
) -> None:
    result, path, request = _record(world, tmp_path, agent, "happy", transport=transport)
    assert result.status is RunOutcome.SUCCEEDED, result.error
    recording = load_recording(path)  # complete: header, chunks, exit line
    assert recording.header.agent == agent
    assert recording.exit.code == 0
    assert recording.stream(Direction.STDOUT), "stdout was recorded"
    replay = replay_recording(recording, paths=_replay_paths(request, world))
    assert _untimed(replay.events) == _untimed(result.events)
    assert replay.ok, [f.to_json() for f in replay.findings]
    if result.stream_format in ("acp-json-rpc", "pi-rpc"):
        # Both directions: the session's frames on stdin, compared on replay.
        assert recording.chunks_of(Direction.STDIN)
        assert replay.comparison is not None and replay.comparison.ok
        assert not replay.comparison.differences
        verdicts = {f.rule: f.verdict for f in replay.findings}
        assert verdicts["REPLAY-FRAMES-001"] == "pass"


@pytest.mark.rule("RECORD-ROUNDTRIP-001", "RECORD-BYTES-001")
def test_a_two_way_recording_keeps_every_stdin_frame_the_session_wrote(
    world: FakeWorld, tmp_path: Path
) -> None:
    result, path, _ = _record(world, tmp_path, "devin", "happy")
    recording = load_recording(path)
    frames = [json.loads(line) for line in recording.stream(Direction.STDIN).decode().splitlines()]
    methods = [f.get("method") for f in frames if "method" in f]
    assert methods[:3] == ["initialize", "session/new", "session/prompt"]
    assert result.counters["frames_written"] == len(recording.chunks_of(Direction.STDIN))


# --------------------------------------------------------------------------- env and secrets


@pytest.mark.rule("RECORD-ENV-001")
def test_the_env_names_kept_are_what_the_def_declares() -> None:
    claude = get_agent_def("claude", BUILTIN_DEFS)
    codex = get_agent_def("codex", BUILTIN_DEFS)
    # ref §5.3: claude strips ANTHROPIC_API_KEY unless ANTHROPIC_BASE_URL is set.
    assert {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_BIN"} <= recorded_env_names(claude)
    # seed 000 §5.3: codex picks its transport from OD_CODEX_TRANSPORT.
    assert "OD_CODEX_TRANSPORT" in recorded_env_names(codex)
    assert "PATH" not in recorded_env_names(codex)


@pytest.mark.rule("RECORD-ENV-001", "RECORD-SECRET-ENV-001")
def test_the_header_env_holds_declared_and_run_set_names_only(
    world: FakeWorld, tmp_path: Path
) -> None:
    request = world.request(
        "claude",
        "text",
        env_extra={
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            "ANTHROPIC_API_KEY": "sk-ant-api03-FAKEFAKEFAKEFAKEFAKE",
            "HARNESS_UNRELATED_NOISE": "machine-specific",
        },
    )
    path = tmp_path / "claude.jsonl"
    recorder = RunRecorder(path, cwd=request.cwd, env_names=["FAKE_CLI_SCENARIO"])
    try:
        run_agent(request, tap=recorder)
    finally:
        recorder.close()
    env = load_recording(path).header.env
    assert env == {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "ANTHROPIC_API_KEY": REDACTED,
        "FAKE_CLI_SCENARIO": "text",
    }


@pytest.mark.rule("RECORD-SECRET-LITERAL-001", "RECORD-SECRET-SHAPE-001")
@pytest.mark.parametrize("agent", ["codex", "pi"])
def test_a_secret_echoed_by_the_cli_never_reaches_the_file(
    world: FakeWorld, tmp_path: Path, agent: str
) -> None:
    key = "sk-proj-FAKEabcdefghijklmnopqrstuv0123"  # shaped like an OpenAI key
    token = "plain-looking-value-42"  # no key shape: only its env name marks it
    scenario = world.scenario_file(
        "echo-secrets",
        [
            {"kind": "stderr", "text": f"using key {key} and token {token}\n"},
            {"kind": "text", "text": f"Your key is {key}; token={token}."},
        ],
    )
    request = world.request(
        agent,
        scenario,
        transport="exec-json" if agent == "codex" else None,
        env_extra={"OPENAI_API_KEY": key, "OPENAI_BASE_URL": "http://127.0.0.1:9"},
        env_overlay={"MY_SERVICE_TOKEN": token},
    )
    path = tmp_path / f"{agent}.jsonl"
    recorder = RunRecorder(path, cwd=request.cwd)
    try:
        result = run_agent(request, tap=recorder)
    finally:
        recorder.close()
    assert result.status is RunOutcome.SUCCEEDED, result.error
    live_text = "".join(getattr(e, "delta", "") for e in result.events)
    assert key in live_text and token in live_text  # the fake did echo them
    raw = path.read_bytes()
    assert key.encode() not in raw and token.encode() not in raw
    assert REDACTED.encode() in raw
    recording = load_recording(path)
    assert b"<redacted>" in recording.stream(Direction.STDERR)


# --------------------------------------------------------------------------- partial recordings


@pytest.mark.rule("RECORD-PARTIAL-001")
def test_a_crashing_cli_is_recorded_up_to_its_half_frame_and_exit(
    world: FakeWorld, tmp_path: Path
) -> None:
    result, path, _ = _record(world, tmp_path, "claude", "crash_mid_line")
    assert result.status is RunOutcome.FAILED
    recording = load_recording(path)
    stdout = recording.stream(Direction.STDOUT)
    assert b"Starting." in stdout
    assert not stdout.endswith(b"\n"), "the half-written frame is kept as it was read"
    assert recording.exit.code == 3


@pytest.mark.rule("RECORD-PARTIAL-001")
def test_a_run_stopped_mid_way_keeps_every_chunk_and_the_reader_names_the_missing_exit(
    world: FakeWorld, tmp_path: Path
) -> None:
    request = world.request("claude", "hang")
    path = tmp_path / "hang.jsonl"
    recorder = RunRecorder(path, cwd=request.cwd)

    async def go() -> None:
        task = asyncio.ensure_future(run_agent_async(request, tap=recorder))
        deadline = time.monotonic() + 30
        while recorder.chunks["stdout"] == 0 or b"Thinking about it" not in path.read_bytes():
            assert time.monotonic() < deadline, "no stdout recorded"
            await asyncio.sleep(0.05)
        task.cancel()  # the harness dies mid-run: the runner kills and reaps the tree
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(go())
    finally:
        recorder.close()
    assert not recorder.complete
    lines = path.read_text(encoding="utf-8").splitlines()
    with pytest.raises(RecordingError) as caught:
        load_recording(path)
    assert caught.value.line == len(lines)
    assert "no exit line" in caught.value.problem
    header, *chunks = (json.loads(line) for line in lines)
    assert header["agent"] == "claude"
    assert any("Thinking about it" in c.get("data", "") for c in chunks)


def _wait_for(path: Path, needle: bytes, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not (path.exists() and needle in path.read_bytes()):
        if proc.poll() is not None:
            raise AssertionError(f"harness exited early: {proc.communicate()}")
        assert time.monotonic() < deadline, f"{needle!r} never reached {path}"
        time.sleep(0.05)


def _harness(*argv: str) -> list[str]:
    return [sys.executable, "-m", "harness.cli", *argv]


def _cli_env(world: FakeWorld, scenario: str = "happy") -> dict[str, str]:
    env = world.env(scenario)
    env["PYTHONPATH"] = str(ROOT)
    return env


def _start_hanging_run(world: FakeWorld, out: Path) -> subprocess.Popen[bytes]:
    """``harness run claude --record OUT`` on a CLI that hangs after some text."""
    project = world.project()
    proc = subprocess.Popen(
        _harness("run", "claude", "--prompt", "hi", "--record", str(out), "--cwd", str(project)),
        env=_cli_env(world, "hang"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _wait_for(out, b"Thinking about it", proc)
    return proc


@pytest.mark.rule("SIG-CANCEL-001", "SIG-RACE-001")
@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a process is POSIX")
def test_sigint_to_harness_run_cancels_it_and_completes_the_recording(
    world: FakeWorld, tmp_path: Path
) -> None:
    """SIGINT runs the cancel ladder (it no longer races a KeyboardInterrupt against the run
    loop, which could swallow it and leave the run and its CLI going): the recording holds
    every chunk seen and its exit line, and no traceback is printed."""
    out = tmp_path / "interrupted.jsonl"
    proc = _start_hanging_run(world, out)
    try:
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr.decode()
    assert b"Traceback" not in stderr and b"SIGINT received" in stderr
    assert b"status:   cancelled" in stdout
    assert f"recording: {out} complete".encode() in stdout
    recording = load_recording(out)  # the exit line is there
    assert recording.header.agent == "claude"
    assert b"Thinking about it" in recording.stream("stdout")


@pytest.mark.rule("RECORD-PARTIAL-001")
@pytest.mark.skipif(sys.platform == "win32", reason="kill -9 and orphans are POSIX")
def test_kill_9_of_harness_run_keeps_the_chunks_and_leaves_no_exit_line(
    world: FakeWorld, tmp_path: Path, no_leaked_processes: str
) -> None:
    out = tmp_path / "killed.jsonl"
    proc = _start_hanging_run(world, out)
    proc.kill()
    proc.communicate()
    # Nothing is left to reap the orphaned CLI after kill -9: stop it here.
    kill_orphans(no_leaked_processes)
    with pytest.raises(RecordingError, match="no exit line"):
        load_recording(out)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["agent"] == "claude"
    assert any("Thinking about it" in json.loads(line).get("data", "") for line in lines[1:])


@pytest.mark.rule("RECORD-PARTIAL-001", "RECORD-CLI-001")
def test_a_run_refused_before_spawn_writes_no_file(
    world: FakeWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never.jsonl"
    missing_cwd = tmp_path / "no-such-project"
    code = main(["run", "qwen", "--fake", "--record", str(out), "--cwd", str(missing_cwd)])
    printed = capsys.readouterr().out
    assert code == 1
    assert not out.exists()
    assert "none written, the run was refused before spawn (RUN_CWD_INVALID" in printed
    # An existing recording is left as it was, even when --force allowed replacing it.
    out.write_text("old recording\n", encoding="utf-8")
    argv = ["run", "qwen", "--fake", "--record", str(out), "--force", "--cwd", str(missing_cwd)]
    code = main(argv)
    assert code == 1
    assert out.read_text(encoding="utf-8") == "old recording\n"
    assert "left unchanged" in capsys.readouterr().out


# --------------------------------------------------------------------------- harness run --record


@pytest.mark.rule("RECORD-CLI-001", "RECORD-ROUNDTRIP-001")
def test_harness_run_record_prints_events_and_writes_a_replayable_file(
    world: FakeWorld,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [k for k in os.environ if k.upper().endswith("_BIN")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(world.home))
    project = world.project()
    out = tmp_path / "run.jsonl"
    code = main(["run", "pi", "--fake", "--cwd", str(project), "--record", str(out), "--json"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    events = [line for line in lines if "type" in line]
    recording_info = lines[-1]["recording"]
    assert recording_info["complete"] and recording_info["chunks"]["stdin"] >= 1
    recording = load_recording(out)
    assert recording.header.env == {"FAKE_CLI_SCENARIO": "happy"}
    where = {"cwd": str(project), "home": str(world.home), "tmp": tempfile.gettempdir()}
    replay = replay_recording(recording, paths=where)
    assert replay.ok, [f.to_json() for f in replay.findings]
    assert _untimed(replay.events) == _untimed(events)


# --------------------------------------------------------------------------- harness record


def _run_cli(
    world: FakeWorld, argv: Sequence[str], scenario: str = "happy", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _harness(*argv),
        env=_cli_env(world, scenario),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.rule("RECORD-CLI-001", "RECORD-ROUNDTRIP-001")
def test_harness_record_runs_the_command_records_both_directions_and_replays(
    world: FakeWorld, tmp_path: Path
) -> None:
    out = tmp_path / "pi.jsonl"
    project = world.project()
    argv = ["record", "--agent", "pi", "--out", str(out), "--cwd", str(project)]
    done = _run_cli(world, [*argv, "--prompt", "Make hello.html", "--", "pi", "--mode", "rpc"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1].startswith(f"recorded {out}: completed (exit 0), as expected; ")
    assert "; chunks: stdout " in lines[-1] and lines[-1].endswith("stdin 1")
    assert any(line.startswith("text_delta") for line in lines[:-1])
    recording = load_recording(out)
    header = recording.header
    assert header.argv[1:] == ("--mode", "rpc")  # exactly the user's command
    assert header.stream_format == "pi-rpc" and header.prompt_delivery == "protocol"
    # --cli-version default: what `pi --version` prints (the def's version probe).
    probe = subprocess.run(
        [str(world.bin / "pi"), "--version"],
        env=_cli_env(world),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert header.cli_version == probe.stdout.strip().splitlines()[0]
    stdin = recording.stream(Direction.STDIN)
    assert b"Make hello.html" in stdin  # the session's prompt frame
    replayed = _run_cli(world, ["replay", str(out)])
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "verdict REPLAY-FRAMES-001 pass" in replayed.stdout


@pytest.mark.rule("RECORD-CLI-001")
def test_harness_record_exit_code_follows_the_expectation(world: FakeWorld, tmp_path: Path) -> None:
    out = tmp_path / "qwen.jsonl"
    project = world.project()
    base = ["record", "--agent", "qwen", "--out", str(out), "--cwd", str(project)]
    base += ["--cli-version", "9.9.9-test", "--json", "--prompt", "hi"]
    failing = _run_cli(world, [*base, "--", "qwen"], scenario="exit_code")
    summary = json.loads(failing.stdout.splitlines()[-1])["record"]
    assert failing.returncode == 1
    assert summary["status"] == "failed" and summary["expected"] == "completed"
    assert summary["complete"] is True and summary["exit_code"] == 7
    assert "RUN_EXIT_NONZERO" in failing.stderr
    again = [*base, "--force", "--expect", "failed", "--", "qwen"]
    expected = _run_cli(world, again, scenario="exit_code")
    assert expected.returncode == 0, expected.stderr
    header = load_recording(out).header
    assert header.cli_version == "9.9.9-test"
    assert header.expect is not None and header.expect.status == "failed"


@pytest.mark.rule("RECORD-CLI-001", "RECORD-PARTIAL-001", "SIG-CANCEL-001")
@pytest.mark.skipif(sys.platform == "win32", reason="signals to a process are POSIX")
@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_harness_record_first_signal_cancels_and_completes_the_recording(
    world: FakeWorld, tmp_path: Path, signum: str
) -> None:
    out = tmp_path / "cancel.jsonl"
    project = world.project()
    argv = ["record", "--agent", "claude", "--out", str(out), "--cwd", str(project)]
    argv += ["--expect", "cancelled", "--cli-version", "1", "--prompt", "hi", "--"]
    claude = ["claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json"]
    proc = subprocess.Popen(
        _harness(*argv, *claude, "--verbose"),
        env=_cli_env(world, "hang"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(out, b"Thinking about it", proc)
        proc.send_signal(getattr(signal, signum))
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr.decode()
    assert b"cancelling the run" in stderr and b"Traceback" not in stderr
    assert b"cancelled (" in stdout and b"as expected" in stdout
    recording = load_recording(out)  # complete: the exit line is there
    assert recording.exit.code is not None or recording.exit.signal is not None


@pytest.mark.rule("RECORD-CLI-001")
def test_harness_record_names_each_usage_error(
    world: FakeWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "x.jsonl")

    def err(*argv: str) -> str:
        assert main(["record", *argv]) == 2
        return capsys.readouterr().err

    unknown = err("--agent", "no-such-agent", "--out", out, "--", "qwen")
    assert "unknown agent id 'no-such-agent'" in unknown and "claude" in unknown
    assert "put the command after '--'" in err("--agent", "qwen", "--out", out, "qwen")
    assert "no command:" in err("--agent", "qwen", "--out", out)
    assert "no command after '--'" in err("--agent", "qwen", "--out", out, "--")
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    for bad, why in [
        (tmp_path, "it is a directory"),
        (tmp_path / "missing" / "r.jsonl", "does not exist"),
        (a_file / "r.jsonl", "does not exist"),
    ]:
        message = err("--agent", "qwen", "--out", str(bad), "--", "qwen")
        assert "[RECORD-CLI-001] cannot write the recording" in message and why in message
    assert not Path(out).exists()


@pytest.mark.rule("RECORD-CLI-001", "RECORD-PARTIAL-001")
def test_harness_record_of_a_command_not_found_writes_nothing(
    world: FakeWorld, tmp_path: Path
) -> None:
    out = tmp_path / "none.jsonl"
    argv = ["record", "--agent", "qwen", "--out", str(out), "--cli-version", "1"]
    done = _run_cli(world, [*argv, "--", "no-such-cli-anywhere", "--flag"])
    assert done.returncode == 1
    assert "refused before spawn (RUN_EXECUTABLE_NOT_FOUND" in done.stdout
    assert not out.exists()


@pytest.mark.rule("RECORD-PARTIAL-001", "RECORD-FORMAT-001")
@pytest.mark.parametrize("target", ["path", "stream"])
def test_a_second_spawn_on_the_same_recorder_starts_the_file_over(
    tmp_path: Path, target: str
) -> None:
    # seed 000 §8: an expired resume is reseeded as a second process of the same turn.
    defn = get_agent_def("qwen", BUILTIN_DEFS)
    path = tmp_path / "reseeded.jsonl"
    stream = io.StringIO()
    recorder = RunRecorder(path if target == "path" else stream, cwd=str(tmp_path))
    recorder.spawned(defn, ["qwen", "--resume", "old"], {})
    recorder.data("stdout", b"session expired\n", 5.0)
    recorder.exited(1, None, 10.0)
    recorder.spawned(defn, ["qwen", "--yolo"], {})
    recorder.data("stdout", b"fresh answer\n", 7.0)
    recorder.exited(0, None, 12.0)
    recorder.close()
    text = path.read_text(encoding="utf-8") if target == "path" else stream.getvalue()
    recording = parse_recording(text.encode(), "reseeded")
    assert recording.header.argv == ("qwen", "--yolo")
    assert recording.stream(Direction.STDOUT) == b"fresh answer\n"
    assert recording.exit.code == 0
    assert recorder.complete and recorder.lines == 3 and recorder.chunks["stdout"] == 1


@pytest.mark.rule("RECORD-CONTINUE-001", "RECORD-ROUNDTRIP-001", "RUN-CONTINUE-001")
def test_a_continued_run_is_recorded_as_two_files_that_replay(
    world: FakeWorld, tmp_path: Path
) -> None:
    """seed 000 §12: the turn goes on in a second process; each process gets a complete
    recording, and replaying both gives the live run's events."""
    from harness.commands.record import recording_line
    from harness.recording.record import continuation_path

    request = world.request("amr", "compaction")
    path = tmp_path / "amr-compaction.jsonl"
    recorder = RunRecorder(path, cwd=request.cwd, home=str(world.home))
    try:
        result = run_agent(request, tap=recorder)
    finally:
        recorder.close()
    assert result.status is RunOutcome.SUCCEEDED and result.continuations == 1
    second = continuation_path(path)
    assert second.name == "amr-compaction.continued.jsonl"
    line = recording_line(recorder, result)
    assert f"{second} complete" in line and f"first process: {path} complete" in line
    live = [e.to_json() for e in result.events]
    mark = next(i for i, e in enumerate(live) if e.get("label") == "continuation")
    paths = _replay_paths(request, world)

    first = load_recording(path)
    assert first.header.expect is not None and first.header.expect.status == "failed"
    assert first.header.expect.error_code == "AMR_CONTINUATION_INCOMPLETE"
    replay_one = replay_recording(first, paths=paths)
    assert replay_one.ok, [f.to_json() for f in replay_one.findings]
    assert _untimed(replay_one.events) == _untimed(live[:mark])

    continued = load_recording(second)
    methods = [
        json.loads(line).get("method")
        for line in continued.stream(Direction.STDIN).decode().splitlines()
    ]
    assert methods == ["initialize", "session/load", "_session/continue"]
    replay_two = replay_recording(continued, paths=paths)
    assert replay_two.ok, [f.to_json() for f in replay_two.findings]
    assert _untimed(replay_two.events) == _untimed(live[mark:])
    verdicts = {f.rule: f.verdict for f in replay_two.findings}
    assert verdicts["REPLAY-FRAMES-001"] == "pass"


@pytest.mark.rule("RECORD-CONTINUE-001")
def test_a_continued_run_recorded_to_a_stream_says_the_rest_is_not_recorded(
    world: FakeWorld,
) -> None:
    from harness.commands.record import recording_line

    request = world.request("amr", "compaction")
    out = io.StringIO()
    recorder = RunRecorder(out, cwd=request.cwd, home=str(world.home))
    result = run_agent(request, tap=recorder)
    assert result.continuations == 1
    assert recorder.continuation_error is not None
    assert "not recorded" in recording_line(recorder, result)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert "exit" in lines[-1] and sum(1 for line in lines if "format" in line) == 1


def _readme_record_example() -> list[str]:
    """The ``harness record`` command of the README's replay section, as argv words."""
    import re
    import shlex

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    joined = re.sub(r"\\\n\s*", "", text)  # the shell's line continuations
    line = next(x for x in joined.splitlines() if x.startswith("harness record "))
    return shlex.split(line, comments=True)[2:]  # after "harness record"


@pytest.mark.rule("RECORD-CLI-001")
def test_the_readme_record_example_records_the_write_not_a_permission_request(
    world: FakeWorld, tmp_path: Path
) -> None:
    """The README's example is the def's own argv, so the fake writes the file."""
    argv = _readme_record_example()
    command = argv[argv.index("--") + 1 :]
    shown = _run_cli(world, ["argv", "claude", "--json"])
    assert command[1:] == json.loads(shown.stdout)["argv"][1:]
    out = tmp_path / "mine.jsonl"
    argv[argv.index("--out") + 1] = str(out)
    project = world.project()
    done = _run_cli(world, ["record", "--cwd", str(project), *argv])
    assert done.returncode == 0, done.stderr
    assert (project / "hello.html").is_file()
    events = replay_recording(load_recording(out)).events
    results = [e.to_json() for e in events if e.to_json().get("type") == "tool_result"]
    assert results and not any(r.get("is_error") for r in results), results
