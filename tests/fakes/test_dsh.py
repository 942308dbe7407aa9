"""The DeepSeek Harness fake (``fake_clis/dsh.py``) as a real process, driven by the engine.

Rules: FAKE-DSH-HAPPY-001, FAKE-DSH-FRAMES-001, FAKE-DSH-STEPS-001, FAKE-DSH-FAULTS-001,
FAKE-DSH-RESUME-001, FAKE-DSH-CANCEL-001, FAKE-DSH-EXEC-001, FAKE-DSH-ARGV-001,
FAKE-DSH-PROBE-001, FAKE-DSH-PLUGIN-001 (conformance/rules/fakes_dsh_appserver.py).

Runs go through ``harness.protocols.dsh.DshProfileSession`` against the live process
(:func:`tests.support.drive.drive_session`: the session's frames to the fake's stdin, its
stdout back to ``receive``; seed 001 §6, §7). Every frame the fake writes is checked against
``harness/schemas/dsh-profile-v1.schema.json`` (generation 1).
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import sys
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import psutil
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from harness.defs.deepseek_harness import parse_dsh_version
from harness.defs.registry import get_agent_def
from harness.defs.types import BuildOptions, RuntimeContext
from harness.events import (
    Event,
    Status,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolResult,
    ToolUse,
    Usage,
)
from harness.host.launch import RealFileSystem
from harness.protocols.base import (
    Finished,
    RunStatus,
    SessionRequest,
)
from harness.protocols.dsh import DshProfileSession
from harness.protocols.dsh_frames import schema_for
from harness.runtime.detect import DetectionResult, DiagnosticCode, detect_agent
from tests.fakes.conftest import FakeCli, FakeResult, install_shim
from tests.support.drive import cancel_once, drive_session
from tests.support.processes import StdoutPump, kill_tree

AGENT = "deepseek-harness"
DEF = get_agent_def(AGENT)
STDIO = DEF.build_args("the prompt", [], [], BuildOptions(), RuntimeContext())
RUNTIME_SCHEMA = jsonschema.Draft202012Validator(schema_for("runtime"))
HTML = "<!doctype html>\n<h1>Hello</h1>\n"


# --------------------------------------------------------------------------- helpers


def lines_of(data: bytes) -> list[bytes]:
    return [line for line in data.split(b"\n") if line.strip()]


def frames_of(data: bytes) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line in lines_of(data):
        value = json.loads(line)
        assert isinstance(value, dict)
        out.append(value)
    return out


def assert_generation_1(stdout: bytes, request_id: str | None) -> list[dict[str, Any]]:
    """FAKE-DSH-FRAMES-001: ready first, every frame valid, run frames carry the request id."""
    frames = frames_of(stdout)
    assert frames and frames[0]["type"] == "ready", frames[:1]
    for frame in frames:
        problems = [e.message for e in RUNTIME_SCHEMA.iter_errors(frame)]
        assert not problems, f"{frame!r:.200} is not a generation-1 frame: {problems}"
    if request_id is not None:
        assert all(f.get("request_id") == request_id for f in frames[1:]), frames
    assert sum(f["type"] == "result" for f in frames) <= 1
    return frames


def execute_line(cwd: Path, prompt: str = "Create hello.html", **extra: Any) -> bytes:
    frame = {
        "v": 1,
        "type": "execute",
        "request_id": "req-1",
        "cwd": str(cwd),
        "prompt": prompt,
        "mcp_servers": [],
        **extra,
    }
    return (json.dumps(frame) + "\n").encode()


def run_stdio(fake: FakeCli, stdin: bytes, scenario: str = "happy", **env: str) -> FakeResult:
    """One ``--stdio`` run fed all of ``stdin`` at once (the fake exits after its result)."""
    return fake.run(AGENT, STDIO, input=stdin, env=fake.env(scenario, **env), timeout=30)


@dataclass
class Live:
    """One run driven by the engine's session against the live fake."""

    events: list[Event]
    finished: Finished | None
    code: int | None
    stdout: bytes
    stderr: str
    record: dict[str, Any]
    session: DshProfileSession
    frames: list[dict[str, Any]] = field(default_factory=list)

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def text(self) -> str:
        return "".join(e.delta for e in self.events if isinstance(e, TextDelta))


def drive(
    fake: FakeCli,
    request: SessionRequest | None = None,
    *,
    scenario: str = "happy",
    cancel_when: Callable[[list[Event]], bool] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 20.0,
) -> Live:
    """Spawn ``dsh --profile open-design --stdio`` and run the dsh session against it."""
    request = request or SessionRequest(prompt="Create hello.html", cwd=str(fake.cwd))
    proc = fake.popen(AGENT, STDIO, env=env or fake.env(scenario))
    session = DshProfileSession(cancel_grace_ms=3000)
    run = drive_session(proc, session, request, on_events=cancel_once(cancel_when), timeout=timeout)
    stderr = run.stderr.decode("utf-8", "replace")
    return Live(run.events, run.finished, run.code, run.stdout, stderr, fake.record(), session)


def write_scenario(fake: FakeCli, name: str, steps: list[dict[str, Any]], **top: Any) -> str:
    return fake.scenario_file(name, steps, **top)


def tarball(root: Path, name: str = "@open-design/dsh-runtime", version: str = "0.1.0") -> Path:
    """An ``npm pack`` style tarball: ``package/package.json`` inside a gzip tar."""
    path = root / f"open-design-dsh-runtime-{version}.tgz"
    data = json.dumps({"name": name, "version": version}).encode()
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo("package/package.json")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return path


# --------------------------------------------------------------------------- happy path


@pytest.mark.rule("FAKE-DSH-HAPPY-001", "FAKE-DSH-FRAMES-001")
def test_happy_run_through_the_engine_session(fake: FakeCli) -> None:
    """The dsh session reads the fake's happy run as seed 001 §9 maps it."""
    live = drive(fake)
    assert live.finished == Finished(RunStatus.COMPLETED)
    assert live.code == 0
    status = live.of(Status)
    assert len(status) == 1 and status[0].label == "working" and status[0].session_id
    assert live.of(ThinkingStart) and live.of(ThinkingEnd)
    assert [e.delta for e in live.of(ThinkingDelta)] == ["The user wants a page."]
    assert live.text == "I'll create the page.Done: hello.html is ready."
    (use,) = live.of(ToolUse)
    assert use.id == "call_write_1" and use.name == "write"
    assert use.input == {"file_path": "hello.html", "content": HTML}
    (result,) = live.of(ToolResult)
    assert result.tool_use_id == "call_write_1" and not result.is_error
    assert result.content == f"<path>{fake.cwd / 'hello.html'}</path>\n<type>file</type>\n" + (
        "<content>\nCreated file\n</content>"
    )
    (usage,) = live.of(Usage)
    assert usage.provider == "deepseek-official" and usage.model == "deepseek-flash"
    assert usage.usage is not None and usage.usage["total_tokens"] == 165
    assert (fake.cwd / "hello.html").read_text(encoding="utf-8") == HTML
    frames = assert_generation_1(live.stdout, "run-1")
    assert [f["type"] for f in frames][:2] == ["ready", "session"]
    assert frames[-1]["type"] == "result" and frames[-1]["status"] == "completed"
    assert frames[-1]["session_id"] == status[0].session_id
    assert status[0].session_id.startswith("session-")
    # The result's output is the last message's text, as the bundle reports it.
    assert frames[-1]["output"] == "Done: hello.html is ready."
    assert live.record["prompt"] == "Create hello.html"
    assert live.record["prompt_via"] == "execute"
    assert live.record["stdin_frames"][0]["type"] == "execute"
    assert live.session.counters["ignored_foreign_frames"] == 0


@pytest.mark.rule("FAKE-DSH-FRAMES-001")
@pytest.mark.parametrize(
    "scenario", ["happy", "text", "shell", "tool_error", "slow", "stderr", "api_error"]
)
def test_every_frame_is_generation_1(fake: FakeCli, scenario: str) -> None:
    """No fault injected: every stdout line is a valid frame of the active request."""
    result = run_stdio(fake, execute_line(fake.cwd), scenario)
    frames = assert_generation_1(result.stdout, "req-1")
    assert frames[-1]["type"] == "result"
    assert result.stdout.endswith(b"\n")
    if scenario == "stderr":
        # Diagnostics go to stderr, never stdout (seed 001 §6, §14).
        assert "warning: something noisy" in result.err


# --------------------------------------------------------------------------- steps


@pytest.mark.rule("FAKE-DSH-STEPS-001")
def test_each_step_kind_in_its_frames(fake: FakeCli) -> None:
    """A message's thinking and text arrive whole, one frame per step, once the message
    ends (at the tool call); shell/other tools with is_error; usage summed, with both cache
    counts, just before the result."""
    scenario = write_scenario(
        fake,
        "steps",
        [
            {"kind": "thinking", "text": "ab", "chunks": ["a", "b"]},
            {"kind": "text", "text": "xyz", "chunks": ["x", "y", "z"]},
            {
                "kind": "tool",
                "tool": "shell",
                "id": "sh1",
                "command": "false",
                "output": "exit 1",
                "is_error": True,
            },
            {
                "kind": "tool",
                "tool": "other",
                "id": "o1",
                "name": "web_search",
                "input": {"q": "dsh"},
                "output": "found",
            },
            {"kind": "usage", "input_tokens": 7, "output_tokens": 3, "cached_read_tokens": 2},
            {"kind": "text", "text": "end"},
            {"kind": "usage", "input_tokens": 1, "output_tokens": 1},
        ],
    )
    result = run_stdio(fake, execute_line(fake.cwd), scenario)
    frames = assert_generation_1(result.stdout, "req-1")
    body = [(f["type"], f.get("content")) for f in frames if f["type"] in ("thinking", "text")]
    assert body == [("thinking", "ab"), ("text", "xyz"), ("text", "end")]
    kinds = [f["type"] for f in frames]
    assert kinds.index("text") < kinds.index("tool_call")
    assert kinds[-2:] == ["usage", "result"]
    calls = [f for f in frames if f["type"] == "tool_call"]
    assert [(c["call_id"], c["name"], json.loads(c["arguments"])) for c in calls] == [
        ("sh1", "bash", {"command": "false", "description": "Run false"}),
        ("o1", "web_search", {"q": "dsh"}),
    ]
    results = [f for f in frames if f["type"] == "tool_result"]
    assert [(r["call_id"], r["output"], r["is_error"]) for r in results] == [
        ("sh1", "exit 1", True),
        ("o1", "found", False),
    ]
    (usage,) = [f for f in frames if f["type"] == "usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (8, 4)
    assert (usage["cache_read_tokens"], usage["cache_write_tokens"]) == (2, 0)
    assert frames[-1]["output"] == "end"


@pytest.mark.rule("FAKE-DSH-STEPS-001")
def test_api_error_is_a_failed_result(fake: FakeCli) -> None:
    """seed 001 §9 "result: failed → structured run failure", exit 1; the code is the
    runtime's class of the HTTP status (a 500 is ``SERVER``)."""
    live = drive(fake, scenario="api_error")
    assert live.finished is not None and live.finished.status is RunStatus.FAILED
    assert live.finished.error is not None and live.finished.error.code == "SERVER"
    assert "Internal server error" in live.finished.error.message
    assert live.code == 1
    frames = assert_generation_1(live.stdout, "run-1")
    assert frames[-1]["error"] == {"code": "SERVER", "message": "Internal server error"}
    assert frames[-1]["stop_reason"] == "error"


@pytest.mark.rule("FAKE-DSH-STEPS-001")
@pytest.mark.posix
def test_common_steps_run_inside_the_stdio_run(fake: FakeCli) -> None:
    """stderr text, and a child + grandchild started by the fake (killed as a tree)."""
    scenario = write_scenario(
        fake,
        "tree",
        [
            {"kind": "stderr", "text": "warming up\n"},
            {"kind": "spawn_tree", "ignore_term": True},
            {"kind": "text", "text": "Spawned."},
            {"kind": "hang"},
        ],
    )
    proc = fake.popen(AGENT, STDIO, scenario=scenario)
    assert proc.stdin is not None
    pump = StdoutPump(proc)
    try:
        proc.stdin.write(execute_line(fake.cwd))
        proc.stdin.flush()
        pump.until(b'"type":"session"', timeout=15)
        give_up = time.monotonic() + 10
        family = psutil.Process(proc.pid).children(recursive=True)
        while len(family) < 2 and time.monotonic() < give_up:
            time.sleep(0.05)
            family = psutil.Process(proc.pid).children(recursive=True)
        assert len(family) >= 2, "the fake should have a child and a grandchild"
    finally:
        killed = kill_tree(proc)
    assert len(killed) >= 3


# --------------------------------------------------------------------------- faults


@pytest.mark.rule("FAKE-DSH-FAULTS-001")
def test_malformed_frame_fails_the_run(fake: FakeCli) -> None:
    live = drive(fake, scenario="malformed")
    assert live.finished is not None and live.finished.error is not None
    assert live.finished.error.code == "DSH_PROFILE_MALFORMED_FRAME"
    bad = [line for line in lines_of(live.stdout) if not _is_json(line)]
    assert len(bad) == 1 and bad[0].startswith(b'{"v":1,"type":"text"')


@pytest.mark.rule("FAKE-DSH-FAULTS-001")
def test_foreign_frame_is_ignored_and_counted(fake: FakeCli) -> None:
    live = drive(fake, scenario="foreign")
    assert live.finished == Finished(RunStatus.COMPLETED)
    assert live.text == "Mine. Still mine."
    assert live.session.counters["ignored_foreign_frames"] == 1
    others = [f for f in frames_of(live.stdout)[1:] if f.get("request_id") != "run-1"]
    assert len(others) == 1 and others[0]["type"] == "text"


@pytest.mark.rule("FAKE-DSH-FAULTS-001")
def test_oversize_frame_is_exactly_the_asked_size(fake: FakeCli) -> None:
    result = run_stdio(fake, execute_line(fake.cwd), "oversize")
    (big,) = [line for line in lines_of(result.stdout) if len(line) > 1024]
    assert len(big) == 2097152
    assert json.loads(big)["type"] == "text"
    live = drive(fake, scenario="oversize")
    assert live.finished is not None and live.finished.error is not None
    assert live.finished.error.code == "DSH_PROFILE_FRAME_TOO_LARGE"


@pytest.mark.rule("FAKE-DSH-FAULTS-001")
def test_crash_mid_line_leaves_half_a_frame(fake: FakeCli) -> None:
    live = drive(fake, scenario="crash_mid_line")
    assert live.code == 3
    assert not live.stdout.endswith(b"\n")
    assert live.finished is not None and live.finished.error is not None
    assert live.finished.error.code == "DSH_PROFILE_TRUNCATED_FRAME"


@pytest.mark.rule("FAKE-DSH-FAULTS-001")
@pytest.mark.parametrize(
    ("scenario", "code", "error"),
    [
        ("noise", 0, "DSH_PROFILE_MALFORMED_FRAME"),
        ("exit_code", 7, "DSH_PROFILE_MISSING_RESULT"),
    ],
)
def test_noise_and_early_exit(fake: FakeCli, scenario: str, code: int, error: str) -> None:
    """Stdout is protocol frames only (seed 001 §14): debug noise there breaks the run; an
    exit without a result is never success (seed 001 §6)."""
    live = drive(fake, scenario=scenario)
    assert live.code == code
    assert live.finished is not None and live.finished.error is not None
    assert live.finished.error.code == error
    if scenario == "noise":
        assert b"[SandboxDebug] starting\n" in live.stdout


@pytest.mark.rule("FAKE-DSH-FAULTS-001")
def test_stall_writes_nothing_until_killed(fake: FakeCli) -> None:
    proc = fake.popen(AGENT, STDIO, scenario="stall")
    pump = StdoutPump(proc)
    try:
        with pytest.raises(TimeoutError):
            pump.next(0.5)
    finally:
        kill_tree(proc)
    assert bytes(pump.received) == b""


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------- resume


@pytest.mark.rule("FAKE-DSH-RESUME-001")
def test_resume_continues_the_saved_session(fake: FakeCli) -> None:
    first = drive(fake, scenario="text")
    session_id = first.session.session_id
    assert session_id is not None and first.record["resumed"] is False
    request = SessionRequest(
        prompt="Make it blue", cwd=str(fake.cwd), resume_session_id=session_id, request_id="r2"
    )
    second = drive(fake, request, scenario="text")
    assert second.finished == Finished(RunStatus.COMPLETED)
    assert second.session.session_id == session_id
    session_frame = frames_of(second.stdout)[1]
    assert session_frame == {
        "v": 1,
        "type": "session",
        "request_id": "r2",
        "session_id": session_id,
        "resumed": True,
    }
    assert second.record["resumed"] is True and second.record["prior_turns"] == 1
    saved = json.loads(
        (fake.home / ".fake-cli" / AGENT / "sessions" / f"{session_id}.json").read_text()
    )
    assert [t["prompt"] for t in saved["turns"]] == ["Create hello.html", "Make it blue"]


@pytest.mark.rule("FAKE-DSH-RESUME-001")
@pytest.mark.parametrize("damage", ["unknown", "corrupt", "not-json"])
def test_unknown_or_corrupt_resume_is_rejected(fake: FakeCli, damage: str) -> None:
    """seed 001 §6: a terminal structured failure, never a silently new session."""
    sessions = fake.home / ".fake-cli" / AGENT / "sessions"
    if damage != "unknown":
        sessions.mkdir(parents=True)
        text = '{"id": "gone", "turns": "lost"}' if damage == "corrupt" else "{not json"
        (sessions / "gone.json").write_text(text)
    before = sorted(sessions.glob("*.json")) if sessions.exists() else []
    request = SessionRequest(prompt="again", cwd=str(fake.cwd), resume_session_id="gone")
    live = drive(fake, request)
    assert live.finished is not None and live.finished.error is not None
    assert live.finished.error.code == "DSH_PROFILE_RESUME_REJECTED"
    frames = assert_generation_1(live.stdout, "run-1")
    assert [f["type"] for f in frames] == ["ready", "result"]
    assert frames[-1]["resume_rejected"] is True and frames[-1]["session_id"] == "gone"
    expected = "SESSION_CORRUPT" if damage == "corrupt" else "SESSION_NOT_FOUND"
    assert frames[-1]["error"]["code"] == expected
    after = sorted(sessions.glob("*.json")) if sessions.exists() else []
    assert after == before, "a rejected resume must not create a session"
    assert not (fake.cwd / "hello.html").exists()


# --------------------------------------------------------------------------- cancel


@pytest.mark.rule("FAKE-DSH-CANCEL-001")
def test_cancel_ends_a_hung_run_with_result_cancelled(fake: FakeCli) -> None:
    live = drive(
        fake,
        scenario="hang",
        cancel_when=lambda ev: any(isinstance(e, Status) and e.session_id for e in ev),
    )
    assert live.finished == Finished(RunStatus.CANCELLED)
    assert live.code == 0
    frames = assert_generation_1(live.stdout, "run-1")
    assert frames[-1]["type"] == "result" and frames[-1]["status"] == "cancelled"
    # The message a cancel interrupts is committed with whatever text it already had.
    assert [f["type"] for f in frames if f["type"] != "text"] == ["ready", "session", "result"]
    assert {f["content"] for f in frames if f["type"] == "text"} <= {"Thinking about it..."}
    assert live.session.session_id == frames[-1]["session_id"]
    assert live.record["cancelled"] is True
    assert live.record["stdin_frames"][-1] == {"v": 1, "type": "cancel", "request_id": "run-1"}
    # seed 001 §7: a cancelled run keeps its session handle for a later cold resume.
    sid = live.session.session_id
    assert (fake.home / ".fake-cli" / AGENT / "sessions" / f"{sid}.json").is_file()


@pytest.mark.rule("FAKE-DSH-CANCEL-001")
def test_cancel_for_another_request_is_ignored(fake: FakeCli) -> None:
    scenario = write_scenario(
        fake,
        "pause",
        [
            {"kind": "text", "text": "a"},
            {"kind": "sleep", "ms": 150},
            {"kind": "text", "text": "b"},
        ],
    )
    other = json.dumps({"v": 1, "type": "cancel", "request_id": "someone-else"}).encode() + b"\n"
    result = run_stdio(fake, execute_line(fake.cwd) + other, scenario)
    frames = assert_generation_1(result.stdout, "req-1")
    assert frames[-1]["status"] == "completed"
    assert [f["content"] for f in frames if f["type"] == "text"] == ["a", "b"]
    assert result.record["ignored_commands"] == ["cancel"]


@pytest.mark.rule("FAKE-DSH-CANCEL-001")
def test_stdin_closed_before_execute_exits_cleanly(fake: FakeCli) -> None:
    """ref §2.8 "Abort before ready → finish cancelled without sending execute"."""
    result = run_stdio(fake, b"")
    assert result.code == 0
    assert [f["type"] for f in frames_of(result.stdout)] == ["ready"]
    assert result.record["execute"] is False


# --------------------------------------------------------------------------- execute


@pytest.mark.rule("FAKE-DSH-EXEC-001")
def test_model_and_effort_travel_in_execute(fake: FakeCli) -> None:
    secret = "prompt-6f1d9c: make the pricing page"
    request = SessionRequest(
        prompt=secret,
        cwd=str(fake.cwd),
        model="deepseek-official/deepseek-v4-pro",
        reasoning="high",
    )
    live = drive(fake, request, scenario="text")
    assert live.finished == Finished(RunStatus.COMPLETED)
    assert live.record["model"] == {"provider": "deepseek-official", "id": "deepseek-v4-pro"}
    assert live.record["reasoning_effort"] == "high"
    assert live.record["prompt"] == secret
    (usage,) = live.of(Usage)
    assert usage.model == "deepseek-v4-pro"
    # seed 001 §6/§14: bounded stderr never holds the prompt.
    assert live.stderr and secret not in live.stderr and "pricing" not in live.stderr


@pytest.mark.rule("FAKE-DSH-EXEC-001")
def test_a_second_execute_is_refused_under_its_own_request_id(fake: FakeCli) -> None:
    """One run per process (seed 001 §7); the refusal cannot touch the active run (§6)."""
    scenario = write_scenario(
        fake,
        "pause",
        [
            {"kind": "text", "text": "a"},
            {"kind": "sleep", "ms": 150},
            {"kind": "text", "text": "b"},
        ],
    )
    second = json.loads(execute_line(fake.cwd))
    second["request_id"] = "req-2"
    stdin = execute_line(fake.cwd) + json.dumps(second).encode() + b"\n"
    result = run_stdio(fake, stdin, scenario)
    assert result.code == 0
    frames = frames_of(result.stdout)
    refusals = [f for f in frames if f["type"] == "protocol_error"]
    assert [(f["request_id"], f["code"]) for f in refusals] == [("req-2", "RUNTIME_BUSY")]
    mine = [f for f in frames[1:] if f["type"] != "protocol_error"]
    assert all(f["request_id"] == "req-1" for f in mine)
    assert mine[-1]["type"] == "result" and mine[-1]["status"] == "completed"


@pytest.mark.rule("FAKE-DSH-EXEC-001")
@pytest.mark.parametrize(
    ("model", "reasoning", "code"),
    [
        ("deepseek-official/no-such-model", None, "UNKNOWN_MODEL"),
        ("deepseek-official/deepseek-flash", "medium", "UNSUPPORTED_REASONING_EFFORT"),
    ],
)
def test_models_outside_the_catalog_are_refused(
    fake: FakeCli, model: str, reasoning: str | None, code: str
) -> None:
    """Only advertised models and efforts (ref §8.3 supportsCustomModel:false)."""
    request = SessionRequest(prompt="x", cwd=str(fake.cwd), model=model, reasoning=reasoning)
    live = drive(fake, request)
    assert live.finished is not None and live.finished.error is not None
    assert live.finished.error.code == code
    assert live.code == 1
    assert frames_of(live.stdout)[-1]["type"] == "protocol_error"


@pytest.mark.rule("FAKE-DSH-EXEC-001")
@pytest.mark.parametrize(
    ("line", "code", "names"),
    [
        (b"{not json\n", "MALFORMED_COMMAND", "JSON"),
        (
            b'{"v":1,"type":"execute","request_id":"r","cwd":"sub/dir","prompt":"",'
            b'"mcp_servers":[]}\n',
            "INVALID_COMMAND",
            "cwd",
        ),
        (b'{"v":2,"type":"execute"}\n', "INVALID_COMMAND", "v must"),
        (b'{"v":1,"type":"launch","request_id":"r"}\n', "INVALID_COMMAND", "type"),
    ],
)
def test_bad_host_commands_are_protocol_errors(
    fake: FakeCli, line: bytes, code: str, names: str
) -> None:
    """A contract error is fatal (seed 001 §6); the message names the field, not its value."""
    result = run_stdio(fake, line)
    assert result.code == 1
    frames = assert_generation_1(result.stdout, None)
    assert [f["type"] for f in frames] == ["ready", "protocol_error"]
    assert frames[-1]["code"] == code
    assert names in frames[-1]["message"] and "sub/dir" not in frames[-1]["message"]


# --------------------------------------------------------------------------- argv


def _def_argvs() -> list[list[str]]:
    caps = [{}, {"anything": True}]
    contexts = [
        RuntimeContext(),
        RuntimeContext(resume_session_id="s-1", has_prior_assistant_turn=True, platform="win32"),
    ]
    options = [
        BuildOptions(capabilities=c, model=m, reasoning=r)
        for c in caps
        for m, r in ((None, None), ("deepseek-official/deepseek-v4-pro", "high"))
    ]
    return [DEF.build_args("p", [], ["/x"], o, ctx) for o in options for ctx in contexts]


@pytest.mark.rule("FAKE-DSH-ARGV-001")
def test_every_def_argv_is_accepted(fake: FakeCli) -> None:
    """Every option/context combination (seed 001 §6: model, effort, resume go in execute)."""
    distinct = {tuple(argv) for argv in _def_argvs()}
    assert distinct == {tuple(STDIO)}
    for argv in map(list, distinct):
        result = fake.run(AGENT, argv, input=b"")
        assert result.code == 0, (argv, result.err)
        assert [f["type"] for f in frames_of(result.stdout)] == ["ready"]


@pytest.mark.rule("FAKE-DSH-ARGV-001")
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--profile", "open-design", "--stdio", "--bogus"], "error: unknown option '--bogus'"),
        (
            ["--profile", "open-design", "--probe", "--stdio"],
            "error: option '--probe' cannot be used with option '--stdio'",
        ),
        (["--stdio"], "error: option '--stdio' requires '--profile <name>'"),
        (["--profile", "open-design", "--stdio", "hello"], "error: too many arguments"),
        (["--profile", "open-design"], "interactive mode needs a terminal"),
        (["--profile"], "error: option '--profile' argument missing"),
        (["--profile", "other", "--stdio"], "error: profile 'other' is not installed"),
        (["plugin", "add", "x.tgz", "--bogus"], "error: unknown option '--bogus'"),
    ],
)
def test_refused_argv(fake: FakeCli, argv: list[str], message: str) -> None:
    result = fake.run(AGENT, argv)
    assert result.code == 1
    assert message in result.err
    assert result.stdout == b""


# --------------------------------------------------------------------------- probes


@pytest.mark.rule("FAKE-DSH-PROBE-001")
def test_version_probe(fake: FakeCli) -> None:
    result = fake.run(AGENT, list(DEF.version_args))
    assert result.code == 0
    version = parse_dsh_version(result.out.strip())
    assert DEF.version_policy is not None
    assert version in DEF.version_policy.supported_versions
    override = fake.run(AGENT, ["--version"], env=fake.env(FAKE_CLI_VERSION="0.9.0"))
    assert override.out.strip() == "0.9.0"


@pytest.mark.rule("FAKE-DSH-PROBE-001")
def test_probe_and_models_are_what_the_def_parses(fake: FakeCli) -> None:
    assert DEF.compatibility_probe is not None and DEF.list_models is not None
    probe = fake.run(AGENT, list(DEF.compatibility_probe.args))
    assert probe.code == 0
    assert DEF.compatibility_probe.parse(probe.out) == "0.1.0"
    (frame,) = frames_of(probe.stdout)
    assert frame["type"] == "probe" and not list(RUNTIME_SCHEMA.iter_errors(frame))
    models = fake.run(AGENT, list(DEF.list_models.args))
    assert models.code == 0
    parsed = DEF.list_models.parse(models.out)
    assert parsed is not None
    assert [m.id for m in parsed] == [
        "default",
        "deepseek-official/deepseek-flash",
        "deepseek-official/deepseek-v4-pro",
    ]


@pytest.mark.rule("FAKE-DSH-PROBE-001")
def test_missing_and_incompatible_profiles(fake: FakeCli) -> None:
    assert DEF.compatibility_probe is not None
    args = list(DEF.compatibility_probe.args)
    missing = fake.run(AGENT, args, env=fake.env(FAKE_DSH_PROFILE="missing"))
    assert missing.code == 1 and missing.stdout == b""
    assert "profile 'open-design' is not installed" in missing.err
    stdio = fake.run(AGENT, STDIO, env=fake.env(FAKE_DSH_PROFILE="missing"))
    assert stdio.code == 1 and stdio.stdout == b""
    incompatible = fake.run(AGENT, args, env=fake.env(FAKE_DSH_PROFILE="incompatible"))
    assert incompatible.code == 0
    assert json.loads(incompatible.out)["protocol_version"] == 2
    with pytest.raises(ValueError, match="protocol_version"):
        DEF.compatibility_probe.parse(incompatible.out)
    live = drive(fake, env=fake.env(FAKE_DSH_PROFILE="incompatible"))
    assert live.finished is not None and live.finished.error is not None
    assert live.finished.error.code == "DSH_PROFILE_INVALID_FRAME"
    assert not live.session.execute_sent


@pytest.mark.rule("FAKE-DSH-PROBE-001")
def test_old_bundle_has_no_model_listing(fake: FakeCli) -> None:
    old = fake.env(FAKE_CLI_OLD_VERSION="1")
    help_text = fake.run(AGENT, ["--help"], env=old)
    assert "--probe" in help_text.out and "--models" not in help_text.out
    assert "--models" in fake.run(AGENT, ["--help"]).out
    assert DEF.list_models is not None
    result = fake.run(AGENT, list(DEF.list_models.args), env=old)
    assert result.code == 1 and "error: unknown option '--models'" in result.err


def _detect(fake: FakeCli, **env: str) -> DetectionResult:
    bin_dir = fake.root / "bin"
    install_shim(bin_dir, DEF.bin, AGENT)
    environment = fake.env("happy", PATH=f"{bin_dir}:/usr/bin:/bin", **env)
    return asyncio.run(
        detect_agent(
            DEF, env=environment, platform=sys.platform, home=str(fake.home), fs=RealFileSystem()
        )
    )


@pytest.mark.rule("FAKE-DSH-PROBE-001")
@pytest.mark.posix
def test_detection_reads_the_fake(fake: FakeCli) -> None:
    found = _detect(fake)
    assert found.available and found.version == "0.1.2-rc.1"
    assert found.companion_version == "0.1.0" and found.models_source == "live"
    assert not found.diagnostics
    missing = _detect(fake, FAKE_DSH_PROFILE="missing")
    assert not missing.available
    assert [d.code for d in missing.diagnostics] == [DiagnosticCode.INCOMPATIBLE]
    untested = _detect(fake, FAKE_CLI_VERSION="0.9.0")
    assert untested.available
    assert DiagnosticCode.VERSION_UNTESTED in [d.code for d in untested.diagnostics]
    nightly = _detect(fake, FAKE_CLI_VERSION="nightly")
    assert not nightly.available
    assert DiagnosticCode.VERSION_REQUIRED in [d.code for d in nightly.diagnostics]


# --------------------------------------------------------------------------- plugin add


@pytest.mark.rule("FAKE-DSH-PLUGIN-001")
def test_plugin_add_installs_the_profile(fake: FakeCli) -> None:
    """seed 001 §4: missing profile -> explicit install of the pinned tarball -> probe passes."""
    assert DEF.compatibility_probe is not None
    env = fake.env(FAKE_DSH_PROFILE="missing")
    probe = list(DEF.compatibility_probe.args)
    assert fake.run(AGENT, probe, env=env).code == 1
    package = tarball(fake.root, version="0.1.3")
    added = fake.run(AGENT, ["plugin", "--profile", "open-design", "add", str(package)], env=env)
    assert added.code == 0, added.err
    record = added.record["plugin_add"]
    assert record["tarball"] == str(package)
    assert record["sha256"] == hashlib.sha256(package.read_bytes()).hexdigest()
    marker = fake.home / ".dsh" / "profiles" / "open-design" / "package.json"
    assert json.loads(marker.read_text())["dshPlugin"]["sha256"] == record["sha256"]
    after = fake.run(AGENT, probe, env=env)
    assert after.code == 0 and DEF.compatibility_probe.parse(after.out) == "0.1.3"


@pytest.mark.rule("FAKE-DSH-PLUGIN-001")
def test_plugin_add_honours_dsh_home_and_relative_paths(fake: FakeCli) -> None:
    dsh_home = fake.root / "dsh-home"
    package = tarball(fake.cwd)
    env = fake.env(DSH_HOME=str(dsh_home))
    added = fake.run(AGENT, ["--profile", "open-design", "plugin", "add", package.name], env=env)
    assert added.code == 0, added.err
    assert (dsh_home / "profiles" / "open-design" / "package.json").is_file()
    assert not (fake.home / ".dsh").exists()
    assert added.record["plugin_add"]["tarball"] == str(package)


@pytest.mark.rule("FAKE-DSH-PLUGIN-001")
@pytest.mark.parametrize("problem", ["absent", "not-a-tarball", "no-profile"])
def test_plugin_add_refuses_bad_input(fake: FakeCli, problem: str) -> None:
    target = fake.root / "bundle.tgz"
    if problem == "not-a-tarball":
        target.write_bytes(b"just bytes")
    elif problem == "no-profile":
        target = tarball(fake.root)
    argv: Sequence[str] = (
        ["plugin", "add", str(target)]
        if problem == "no-profile"
        else ["plugin", "--profile", "open-design", "add", str(target)]
    )
    result = fake.run(AGENT, list(argv))
    assert result.code == 1 and result.err.startswith("error:")
    assert not (fake.home / ".dsh" / "profiles" / "open-design" / "package.json").exists()


@pytest.mark.rule("FAKE-DSH-EXEC-001")
@given(
    st.lists(st.sampled_from(["/", "\\", "C", "z", ":", "1", "é", "a", " ", "\n"]), max_size=5).map(
        "".join
    )
)
@example("C:/x")
@example("c:\\")
@example("\\\\server")
@example("C:")
def test_execute_cwd_is_absolute_as_the_runtime_pattern_says(path: str) -> None:
    """The execute command's cwd check is the runtime's pattern, without ``re``."""
    import re

    from fake_clis.dsh import _is_absolute

    assert _is_absolute(path) == bool(re.match(r"^(?:/|[A-Za-z]:[\\/]|\\\\)", path))
