"""The pi-rpc fakes (pi, prime-agent) as real processes, driven live by the engine's session.

Rules: FAKE-PI-001..008 (conformance/rules/fakes_protocol.py). The live driver is the one the
ACP tests use (:func:`tests.fakes.test_acp.drive`); :class:`PiClient` writes commands by hand
where a test needs an answer the engine never gives. Commands and events are written from
pi's ``docs/rpc.md`` (wire §A.2, ref §2.7), not copied from the fakes.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from fake_clis.pi_rpc import parse_pi_args
from harness.defs.pi import parse_pi_model_table
from harness.defs.prime_agent import parse_prime_model_list
from harness.defs.registry import get_agent_def
from harness.defs.types import AgentDef, BuildOptions, RuntimeContext
from harness.events import (
    Error,
    Event,
    Raw,
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
from harness.protocols.base import Actions, Finished, RunStatus, SessionRequest, TwoWaySession
from harness.protocols.pi_rpc import PiRpcSession
from harness.runtime.detect import detect_agent
from harness.runtime.fakes_install import prepare_fake_home
from tests.fakes.conftest import FakeCli, events_of, install_shim, text_of
from tests.fakes.test_acp import Live, drive, stdout_frames
from tests.support.processes import StdoutPump, kill_tree

HTML = "<!doctype html>\n<h1>Hello</h1>\n"
PROMPT = "Create hello.html"
ASSISTANT_EVENTS = {
    "text_start",
    "text_delta",
    "text_end",
    "thinking_start",
    "thinking_delta",
    "thinking_end",
    "toolcall_start",
    "toolcall_delta",
    "toolcall_end",
}


def argv(agent: str, fake: FakeCli, **options: Any) -> list[str]:
    ctx_fields = {k: options.pop(k) for k in ("resume_session_id", "skill_dirs") if k in options}
    dirs = options.pop("dirs", ())
    ctx = RuntimeContext(cwd=str(fake.cwd), **ctx_fields)
    return get_agent_def(agent).build_args("p", [], list(dirs), BuildOptions(**options), ctx)


def pi_session() -> PiRpcSession:
    return PiRpcSession(graceful_shutdown_ms=3000, retry_window_ms=300)


def run_pi(
    fake: FakeCli,
    agent: str = "pi",
    scenario: str = "happy",
    *,
    resume: str | None = None,
    on_events: Callable[[TwoWaySession, list[Event], float], Actions | None] | None = None,
    args: list[str] | None = None,
    **kw: Any,
) -> Live:
    defn = get_agent_def(agent)
    # ref §8.1 piRpcResumeViaProcessArgs: prime-agent resumes through argv, so the session
    # must not also send new_session(parentSession).
    via_argv = defn.pi.resume_via_process_args
    request = SessionRequest(
        prompt=PROMPT, cwd=str(fake.cwd), resume_session_id=None if via_argv else resume
    )
    if args is None:
        args = argv(agent, fake, resume_session_id=resume) if via_argv else argv(agent, fake)
    return drive(
        fake, agent, pi_session(), request, args=args, scenario=scenario, on_events=on_events, **kw
    )


def session_dir(fake: FakeCli, agent: str) -> Path:
    if agent == "prime-agent":
        return fake.home / ".prime" / "agent" / "sessions"
    return fake.cwd / ".pi" / "sessions"


def snapshot(directory: Path) -> dict[str, tuple[int, float]]:
    if not directory.is_dir():
        return {}
    return {str(p): (p.stat().st_size, p.stat().st_mtime) for p in directory.glob("*.jsonl")}


def events_named(live: Live, kind: str) -> list[dict[str, Any]]:
    return [f for f in live.frames() if f.get("type") == kind]


class PiClient:
    """Hand-written pi RPC commands."""

    def __init__(
        self,
        fake: FakeCli,
        agent: str = "pi",
        scenario: str = "happy",
        args: list[str] | None = None,
        **env: str,
    ) -> None:
        self.proc = fake.popen(
            agent, args or argv(agent, fake), scenario=scenario, env=fake.env(scenario, **env)
        )
        self.pump = StdoutPump(self.proc)
        self.seen = 0

    def send(self, command: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command).encode() + b"\n")
        self.proc.stdin.flush()

    def until(self, test: Callable[[dict[str, Any]], bool], timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            frames = stdout_frames(bytes(self.pump.received))
            for frame in frames[self.seen :]:
                self.seen += 1
                if test(frame):
                    return frame
            left = deadline - time.monotonic()
            if left <= 0 or self.pump.next(left) is None:
                raise AssertionError(f"frame never came: {bytes(self.pump.received)[-2000:]!r}")

    def close(self, timeout: float = 10) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return code


# --------------------------------------------------------------------------- happy path


@pytest.mark.rule("FAKE-PI-001", "FAKE-PI-002", "FAKE-PI-003", "FAKE-PI-007")
@pytest.mark.parametrize("agent", ["pi", "prime-agent"])
def test_happy_run(fake: FakeCli, agent: str) -> None:
    directory = session_dir(fake, agent)
    before = snapshot(directory)
    live = run_pi(fake, agent)
    assert live.finished == Finished(RunStatus.COMPLETED), live.stderr
    assert live.code == 0  # exits once the session closes stdin after agent_end
    kinds = [type(e) for e in live.events]
    assert kinds.index(ThinkingStart) < kinds.index(ThinkingDelta) < kinds.index(ThinkingEnd)
    assert "".join(e.delta for e in events_of(live.events, ThinkingDelta)) == (
        "The user wants a page."
    )
    assert text_of(live.events) == "I'll create the page.Done: hello.html is ready."
    uses = events_of(live.events, ToolUse)
    assert [(u.id, u.name, u.input) for u in uses] == [
        ("call_write_1", "write", {"path": "hello.html", "content": HTML})
    ]
    assert [(r.tool_use_id, r.content, r.is_error) for r in events_of(live.events, ToolResult)] == [
        ("call_write_1", "Wrote hello.html", False)
    ]
    assert (fake.cwd / "hello.html").read_text(encoding="utf-8") == HTML
    usage = events_of(live.events, Usage)[-1]
    assert usage.usage is not None
    assert (usage.usage["input_tokens"], usage.usage["output_tokens"]) == (120, 45)
    assert usage.usage["total_tokens"] == 165
    # FAKE-PI-003: exactly one changed session file, which the engine can capture.
    after = snapshot(directory)
    assert len(after) == 1
    session = live.session
    assert isinstance(session, PiRpcSession)
    assert session.capture_session_file(before, after) == next(iter(after))
    header = json.loads(Path(next(iter(after))).read_text().splitlines()[0])
    assert header["type"] == "session" and header["version"] == 3
    assert live.record["prompt"] == PROMPT and live.record["prompt_via"] == "rpc"


@pytest.mark.rule("FAKE-PI-002")
def test_frames_follow_rpc_md(fake: FakeCli) -> None:
    live = run_pi(fake, "pi")
    frames = live.frames()
    response = frames[0]
    assert response == {"id": 1, "type": "response", "command": "prompt", "success": True}
    events = [f for f in frames if f["type"] != "response"]
    assert all("id" not in f for f in events)  # rpc.md: events carry no id
    order = [f["type"] for f in events]
    assert order[:4] == ["agent_start", "turn_start", "message_start", "message_end"]
    assert order[-1] == "agent_end" and order.count("turn_end") == 2
    updates = [f["assistantMessageEvent"]["type"] for f in events_named(live, "message_update")]
    assert set(updates) <= ASSISTANT_EVENTS and "toolcall_end" in updates
    for turn_end in events_named(live, "turn_end"):
        usage = turn_end["message"]["usage"]
        assert set(usage) == {"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}
        assert "total" in usage["cost"]
    stops = [f["message"]["stopReason"] for f in events_named(live, "turn_end")]
    assert stops == ["toolUse", "stop"]
    tool_end = events_named(live, "tool_execution_end")[0]
    assert tool_end["result"]["content"] == [{"type": "text", "text": "Wrote hello.html"}]


@pytest.mark.rule("FAKE-PI-001", "FAKE-PI-002")
def test_pi_stays_alive_after_agent_end_until_stdin_closes(fake: FakeCli) -> None:
    client = PiClient(fake, scenario="text")
    client.send({"id": "req-1", "type": "prompt", "message": "hi"})
    assert client.until(lambda f: f.get("type") == "response")["id"] == "req-1"
    client.until(lambda f: f.get("type") == "agent_end")
    time.sleep(0.3)
    assert client.proc.poll() is None
    client.send({"id": "s", "type": "get_state"})
    state = client.until(lambda f: f.get("type") == "response")
    assert state["command"] == "get_state" and state["data"]["messageCount"] == 2
    client.send({"id": "m", "type": "get_messages"})
    messages = client.until(lambda f: f.get("type") == "response")["data"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    client.send({"type": "frobnicate"})
    assert client.until(lambda f: f.get("type") == "response") == {
        "type": "response",
        "command": "frobnicate",
        "success": False,
        "error": "Unknown command: frobnicate",
    }
    assert client.proc.stdin is not None
    client.proc.stdin.write(b"{not json\n")
    client.proc.stdin.flush()
    parse = client.until(lambda f: f.get("type") == "response")
    assert parse["command"] == "parse" and parse["success"] is False
    assert client.close() == 0


# --------------------------------------------------------------------------- sessions


@pytest.mark.rule("FAKE-PI-003")
def test_new_session_links_an_existing_parent(fake: FakeCli) -> None:
    directory = session_dir(fake, "pi")
    first = run_pi(fake, "pi", "text")
    parent = next(iter(snapshot(directory)))
    before = snapshot(directory)
    second = run_pi(fake, "pi", "text", resume=parent)
    assert second.finished == Finished(RunStatus.COMPLETED)
    assert second.record["resumed"] is True and second.record["prior_turns"] == 1
    assert second.record["parent_session"] == parent
    sent = [json.loads(raw) for raw in second.sent]
    assert [c["type"] for c in sent[:2]] == ["new_session", "prompt"]
    assert events_named(second, "response")[0]["data"] == {"cancelled": False}
    changed = second.session
    assert isinstance(changed, PiRpcSession)
    new_file = changed.capture_session_file(before, snapshot(directory))
    assert new_file is not None and new_file != parent
    assert json.loads(Path(new_file).read_text().splitlines()[0])["parentSession"] == parent
    assert first.record["resumed"] is False


@pytest.mark.rule("FAKE-PI-003")
def test_new_session_with_a_missing_parent_fails(fake: FakeCli) -> None:
    live = run_pi(fake, "pi", "text", resume=str(fake.root / "gone.jsonl"))
    assert live.finished is not None and live.finished.error is not None
    assert live.finished.error.code == "PI_PARENT_SESSION_FAILED"
    response = events_named(live, "response")[0]
    assert response["success"] is False and "not found" in response["error"]
    assert "prompt" not in live.record


@pytest.mark.rule("FAKE-PI-003")
def test_prime_resume_continues_the_saved_session(fake: FakeCli) -> None:
    directory = session_dir(fake, "prime-agent")
    run_pi(fake, "prime-agent", "text")
    saved = next(iter(snapshot(directory)))
    session_id = Path(saved).stem
    before = snapshot(directory)
    again = run_pi(fake, "prime-agent", "text", resume=session_id)
    assert again.finished == Finished(RunStatus.COMPLETED)
    assert again.record["resumed"] is True and again.record["prior_turns"] == 1
    assert [json.loads(raw)["type"] for raw in again.sent] == ["prompt"]  # argv carries resume
    session = again.session
    assert isinstance(session, PiRpcSession)
    assert session.capture_session_file(before, snapshot(directory)) == saved
    missing = fake.run("prime-agent", argv("prime-agent", fake, resume_session_id="nope"))
    assert missing.code == 1 and "No session found matching 'nope'" in missing.err


# --------------------------------------------------------------------------- abort


def _abort_after_text(session: TwoWaySession, events: list[Event], now: float) -> Actions | None:
    if any(isinstance(e, TextDelta) for e in events):
        return session.cancel(now)
    return None


@pytest.mark.rule("FAKE-PI-004")
def test_abort_ends_the_run_aborted(fake: FakeCli) -> None:
    slow = fake.scenario_file(
        "long",
        [
            {"kind": "text", "text": "Working"},
            {"kind": "sleep", "ms": 5000},
            {"kind": "text", "text": "never"},
        ],
    )
    started = time.monotonic()
    live = run_pi(fake, "pi", slow, on_events=_abort_after_text)
    assert time.monotonic() - started < 5
    assert live.finished == Finished(RunStatus.CANCELLED)
    assert "never" not in text_of(live.events)
    tail = [f["type"] for f in live.frames()][-3:]
    assert tail == ["turn_end", "agent_end", "response"]
    assert events_named(live, "turn_end")[-1]["message"]["stopReason"] == "aborted"
    assert events_named(live, "response")[-1]["command"] == "abort"


# --------------------------------------------------------------------------- extension UI


CONFIRM = [
    {
        "kind": "tool",
        "tool": "other",
        "id": "c1",
        "name": "confirm",
        "input": {"title": "Allow rm?", "message": "rm -rf build"},
        "output": "removed",
    },
]


@pytest.mark.rule("FAKE-PI-005")
def test_confirm_is_answered_by_the_engine(fake: FakeCli) -> None:
    live = run_pi(fake, "pi", fake.scenario_file("confirm", CONFIRM))
    assert live.finished == Finished(RunStatus.COMPLETED)
    request = events_named(live, "extension_ui_request")[0]
    assert (request["method"], request["title"]) == ("confirm", "Allow rm?")
    assert [(r.content, r.is_error) for r in events_of(live.events, ToolResult)] == [
        ("removed", False)
    ]
    assert live.record["extension_ui"][0]["answer"]["confirmed"] is True


@pytest.mark.rule("FAKE-PI-005")
def test_confirm_waits_and_a_refusal_blocks_the_tool(fake: FakeCli) -> None:
    client = PiClient(fake, scenario=fake.scenario_file("confirm", CONFIRM))
    client.send({"id": 1, "type": "prompt", "message": "go"})
    ask = client.until(lambda f: f.get("type") == "extension_ui_request")
    # It waits: nothing after the dialog until the client answers.
    assert not stdout_frames(bytes(client.pump.received))[client.seen :]
    with pytest.raises(TimeoutError):
        client.pump.next(0.2)
    client.send({"type": "extension_ui_response", "id": ask["id"], "confirmed": False})
    end = client.until(lambda f: f.get("type") == "tool_execution_end")
    assert end["isError"] is True
    assert end["result"]["content"] == [{"type": "text", "text": "Blocked by user"}]
    client.until(lambda f: f.get("type") == "agent_end")
    assert client.close() == 0


# --------------------------------------------------------------------------- step kinds


@pytest.mark.rule("FAKE-PI-006")
def test_shell_and_tool_errors(fake: FakeCli) -> None:
    shell = run_pi(fake, "pi", "shell")
    assert [(u.name, u.input) for u in events_of(shell.events, ToolUse)] == [
        ("bash", {"command": "echo hi"})
    ]
    assert [r.content for r in events_of(shell.events, ToolResult)] == ["hi\n"]
    assert events_named(shell, "tool_execution_update")
    failing = run_pi(fake, "pi", "tool_error")
    assert [(r.content, r.is_error) for r in events_of(failing.events, ToolResult)] == [
        ("command failed with exit code 1", True)
    ]


@pytest.mark.rule("FAKE-PI-006")
def test_api_error_then_auto_retry_exhausted(fake: FakeCli) -> None:
    settings = fake.cwd / ".pi" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"retry": {"maxRetries": 1, "baseDelayMs": 0}}))
    live = run_pi(fake, "pi", "api_error")
    assert live.finished is not None and live.finished.status is RunStatus.FAILED
    assert next(e.message for e in events_of(live.events, Error)) == "500 Internal server error"
    assert "retrying" in [e.label for e in events_of(live.events, Status)]
    retry_end = events_named(live, "auto_retry_end")
    assert retry_end == [
        {
            "type": "auto_retry_end",
            "success": False,
            "attempt": 1,
            "finalError": "500 Internal server error",
        }
    ]
    # pi reports the failure in the stream and its rpc shutdown exits 0 (pi 0.73.1,
    # recordings/real/pi/api_error.jsonl), whatever the scenario says.
    assert live.code == 0


@pytest.mark.rule("FAKE-PI-006")
def test_a_prepared_fake_home_keeps_the_retries_and_shrinks_their_waits(fake: FakeCli) -> None:
    """The HOME conform gives its fake runs: pi retries as by default, 20 ms apart."""
    prepare_fake_home(fake.home)
    live = run_pi(fake, "pi", "api_error")
    starts = events_named(live, "auto_retry_start")
    assert [(s["attempt"], s["delayMs"]) for s in starts] == [(1, 20), (2, 40), (3, 80)]
    assert events_named(live, "auto_retry_end")[0]["attempt"] == 3


@pytest.mark.rule("FAKE-PI-006")
def test_a_non_retryable_error_is_not_retried(fake: FakeCli) -> None:
    bad = fake.scenario_file("bad", [{"kind": "api_error", "message": "invalid x", "status": 400}])
    live = run_pi(fake, "pi", bad)
    assert live.finished is not None and live.finished.status is RunStatus.FAILED
    assert not events_named(live, "auto_retry_start")
    assert events_named(live, "turn_end")[0]["message"]["errorMessage"] == "400 invalid x"


@pytest.mark.rule("FAKE-PI-006")
def test_malformed_foreign_noise_and_oversize(fake: FakeCli) -> None:
    malformed = run_pi(fake, "pi", "malformed")
    assert malformed.finished == Finished(RunStatus.COMPLETED)
    assert text_of(malformed.events) == "Before.After."
    raws = events_of(malformed.events, Raw)
    assert len(raws) == 1 and raws[0].line.startswith('{"type":"message_update"')
    foreign = run_pi(fake, "pi", "foreign")
    assert text_of(foreign.events) == "Mine. Still mine."
    # pi's own prompt response is not the end of the turn either: it and the foreign one.
    assert foreign.session.counters["responses_ignored"] == 2
    noise = run_pi(fake, "pi", "noise")
    assert [r.line for r in events_of(noise.events, Raw)] == [
        "[SandboxDebug] starting",
        "debug: done",
    ]
    oversize = run_pi(fake, "pi", "oversize")
    assert text_of(oversize.events) == "Before.After."
    assert 2_097_152 in [len(line) for line in oversize.stdout.split(b"\n")]
    assert oversize.session.counters["extension_ui_fire_and_forget"] == 1


@pytest.mark.rule("FAKE-PI-006")
def test_crashes_and_exit_codes(fake: FakeCli) -> None:
    mid = run_pi(fake, "prime-agent", "crash_mid_line")
    assert mid.code == 3 and not mid.stdout.endswith(b"\n")
    assert mid.finished is not None and mid.finished.error is not None
    assert mid.finished.error.code == "PI_EXITED_BEFORE_AGENT_END"
    plain = run_pi(fake, "pi", "exit_code")
    assert plain.code == 7 and text_of(plain.events) == "Partial."
    noisy = run_pi(fake, "pi", "stderr")
    assert b"warning: more noise" in noisy.stderr
    slow = run_pi(fake, "pi", "slow")
    assert text_of(slow.events) == "abc"


@pytest.mark.rule("FAKE-PI-006")
def test_hang_spawn_tree_linger_and_eof(fake: FakeCli) -> None:
    hang = PiClient(fake, scenario="spawn_tree")
    hang.send({"id": 1, "type": "prompt", "message": "go"})
    hang.until(lambda f: f.get("type") == "message_update")
    family: list[psutil.Process] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(family) < 2:
        family = psutil.Process(hang.proc.pid).children(recursive=True)
        time.sleep(0.05)
    assert len(family) == 2
    assert {p.pid for p in family} <= set(kill_tree(hang.proc))
    linger = run_pi(fake, "pi", "ignore_stdin", exit_timeout=0.5)
    assert linger.finished == Finished(RunStatus.COMPLETED) and linger.code is None
    # rpc-mode.js: stdin EOF shuts pi down at once, even mid-run.
    slow = fake.scenario_file(
        "slow5", [{"kind": "text", "text": "a"}, {"kind": "sleep", "ms": 5000}]
    )
    eof = PiClient(fake, scenario=slow)
    eof.send({"id": 1, "type": "prompt", "message": "go"})
    eof.until(lambda f: f.get("type") == "message_update")
    started = time.monotonic()
    assert eof.close() == 0 and time.monotonic() - started < 3


# --------------------------------------------------------------------------- argv


@pytest.mark.rule("FAKE-PI-007")
@pytest.mark.parametrize(
    ("agent", "args", "message", "code"),
    [
        ("pi", ["--mode", "rpc", "--bogus"], "Error: Unknown option: --bogus", 1),
        (
            "pi",
            ["--mode", "rpc", "--bogus", "v", "--worse"],
            "Unknown options: --bogus, --worse",
            1,
        ),
        ("pi", ["--mode", "rpc", "-x"], "Error: Unknown option: -x", 1),
        (
            "pi",
            ["--mode", "rpc", "--model", "nope"],
            'Error: Model "nope" not found. Use --list-models to see available models.',
            1,
        ),
        ("pi", ["--mode", "rpc", "@notes.md"], "@file arguments are not supported in RPC mode", 1),
        ("pi", ["--cwd", "/tmp", "--mode", "rpc"], "Error: Unknown option: --cwd", 1),
        ("prime-agent", ["--mode", "rpc", "--cwd", "/nonexistent/dir"], "is not a directory", 1),
        ("pi", ["--mode", "json"], "this fake emulates only --mode rpc", 2),
    ],
)
def test_argv_is_refused_like_pi(
    fake: FakeCli, agent: str, args: list[str], message: str, code: int
) -> None:
    result = fake.run(agent, args)
    assert result.code == code and message in result.err
    assert result.stdout == b""


@pytest.mark.rule("FAKE-PI-007")
def test_def_argv_is_accepted_with_every_option(fake: FakeCli) -> None:
    skill = str(fake.root / "skill")
    extra = str(fake.root / "extra")
    for caps in ({}, {"anything": True}):
        args = argv(
            "pi",
            fake,
            model="openai/gpt-5",
            reasoning="high",
            skill_dirs=(skill,),
            dirs=[extra],
            capabilities=caps,
        )
        result = fake.run("pi", args)
        assert (result.code, result.err) == (0, ""), args
        recorded = result.record["pi_args"]
        assert recorded["thinking"] == "high" and recorded["skills"] == [skill]
        assert recorded["append_system_prompt"] == [extra]
        assert result.record["model"] == "openai/gpt-5"
    prime = argv("prime-agent", fake, model="openai/gpt-5", reasoning="low")
    assert prime[prime.index("--provider") + 1] == "openai"
    result = fake.run("prime-agent", prime)
    assert (result.code, result.err) == (0, "")
    assert result.record["model"] == "openai/gpt-5"
    custom = fake.run("pi", ["--mode", "rpc", "--model", "openai/gpt-9"])
    assert custom.code == 0 and 'Model "gpt-9" not found for provider "openai"' in custom.err
    warned = fake.run("pi", ["--mode", "rpc", "--thinking", "extreme"])
    assert warned.code == 0 and 'Warning: Invalid thinking level "extreme"' in warned.err


@pytest.mark.rule("FAKE-PI-007")
def test_parse_pi_args_follows_args_js() -> None:
    parsed = parse_pi_args(["--mode", "rpc", "--model", "--skill", "s", "msg", "-p", "hi", "--x"])
    assert parsed.mode == "rpc"
    assert parsed.model == "--skill"  # a value flag takes the next argument, whatever it is
    assert parsed.messages == ["s", "msg", "hi"] and parsed.print_
    assert parsed.unknown_flags == ["x"]
    assert parse_pi_args(["--resume", "abc"]).resume is None  # pi: a picker switch
    assert parse_pi_args(["--resume", "abc"], prime=True).resume == "abc"


# --------------------------------------------------------------------------- probes


@pytest.mark.rule("FAKE-PI-008")
def test_model_listings_parse_with_the_defs(fake: FakeCli) -> None:
    pi = get_agent_def("pi")
    assert pi.list_models is not None
    listing = fake.run("pi", list(pi.list_models.args))
    assert listing.out.splitlines()[0].split() == [
        "provider",
        "model",
        "context",
        "max-out",
        "thinking",
        "images",
    ]
    models = parse_pi_model_table(listing.out)
    assert models is not None and "anthropic/claude-sonnet-4-5" in [m.id for m in models]
    prime = get_agent_def("prime-agent")
    assert prime.list_models is not None
    table = fake.run("prime-agent", list(prime.list_models.args))
    parsed = parse_prime_model_list(table.out)
    assert parsed is not None and "prime/intellect-3" in [m.id for m in parsed]
    assert fake.run("pi", ["--version"]).out.strip() == "0.73.1"
    assert "--append-system-prompt" in fake.run("pi", ["--help"]).out
    assert "--resume" in fake.run("prime-agent", ["-h"]).out


def _detect(fake: FakeCli, defn: AgentDef) -> Any:
    bin_dir = fake.root / "bin"
    install_shim(bin_dir, defn.bin, defn.id)
    environment = fake.env("happy", PATH=f"{bin_dir}:/usr/bin:/bin")
    return asyncio.run(
        detect_agent(
            defn, env=environment, platform=sys.platform, home=str(fake.home), fs=RealFileSystem()
        )
    )


@pytest.mark.rule("FAKE-PI-008")
@pytest.mark.posix
def test_detection_probes_the_pi_fakes(fake: FakeCli) -> None:
    found = _detect(fake, get_agent_def("pi"))
    assert found.available and found.version == "0.73.1"
    assert found.models_source == "live"
    prime = _detect(fake, get_agent_def("prime-agent"))
    assert prime.available and prime.models_source == "live"
