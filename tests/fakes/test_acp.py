"""The ACP fakes (amr, devin, hermes, kimi, kiro, kilo, reasonix, trae-cli, vibe) as real
processes, driven live by the engine's ACP session.

Rules: FAKE-ACP-001..011 (conformance/rules/fakes_protocol.py). Each test starts
``python -m fake_clis AGENT ...``; :func:`drive` runs the engine's session against it
(:func:`tests.support.drive.drive_session`: frames to stdin, stdout to ``receive``, until
the session finishes). :class:`RawClient` speaks JSON-RPC by hand where a test needs an
answer the engine would never give (a rejected permission, a wrong MCP env shape). Frames in
the tests are written from wire §A.1 and the vendored schema, not copied from the fakes.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from fake_clis.acp.agents import AGENTS as FAKE_AGENTS
from harness.defs.registry import get_agent_def
from harness.defs.types import AgentDef, BuildOptions, RuntimeContext
from harness.events import (
    Event,
    Status,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    Usage,
)
from harness.host.launch import RealFileSystem
from harness.protocols.acp.schema import validate_incoming
from harness.protocols.acp.session import AcpSession
from harness.protocols.base import (
    Actions,
    Finished,
    RunStatus,
    SessionRequest,
    TwoWaySession,
)
from harness.runtime.detect import detect_agent
from tests.fakes.conftest import FakeCli, events_of, install_shim, text_of
from tests.support.drive import OnEvents, drive_session
from tests.support.processes import StdoutPump, kill_tree

ACP_AGENTS = ("amr", "devin", "hermes", "kimi", "kiro", "kilo", "reasonix", "trae-cli", "vibe")
#: Agents that do not exit at stdin EOF (live: every vibe-acp 3.0.2 run ended by SIGTERM).
#: Agents that, as their real CLI, stay up when their client closes stdin (the host's
#: SIGTERM ends them): read from the fake's own table.
LINGERING_AGENTS = frozenset(a.agent_id for a in FAKE_AGENTS if not a.exits_at_eof)
HTML = "<!doctype html>\n<h1>Hello</h1>\n"
PROMPT = "Create hello.html"

# --------------------------------------------------------------------------- the live driver


def def_argv(defn: AgentDef, cwd: Path | None = None, **options: Any) -> list[str]:
    """The def's own argv (ACP defs take the prompt as a frame, never in argv)."""
    ctx = RuntimeContext(cwd=str(cwd) if cwd else None)
    return defn.build_args("the prompt", [], [], BuildOptions(**options), ctx)


@dataclass
class Live:
    """One session run against a live fake."""

    events: list[Event]
    finished: Finished | None
    code: int | None
    stdout: bytes
    stderr: bytes
    #: Frames the session wrote to the fake's stdin.
    sent: list[bytes]
    record: dict[str, Any]
    session: TwoWaySession

    def frames(self) -> list[dict[str, Any]]:
        return stdout_frames(self.stdout)


def stdout_frames(data: bytes) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def drive(
    fake: FakeCli,
    agent: str,
    session: TwoWaySession,
    request: SessionRequest,
    *,
    args: Sequence[str] | None = None,
    scenario: str = "happy",
    env: dict[str, str] | None = None,
    on_events: OnEvents | None = None,
    timeout: float = 30.0,
    exit_timeout: float = 10.0,
) -> Live:
    """Run ``session`` against ``python -m fake_clis agent`` until it finishes.

    ``on_events`` may return more actions (e.g. ``session.cancel``) after each chunk. After
    the end the fake gets ``exit_timeout`` seconds to exit on its own; then it is killed
    (``code`` None).
    """
    argv = list(args) if args is not None else def_argv(get_agent_def(agent))
    proc = fake.popen(agent, argv, scenario=scenario, env=env)
    run = drive_session(
        proc, session, request, on_events=on_events, timeout=timeout, exit_timeout=exit_timeout
    )
    return Live(
        run.events, run.finished, run.code, run.stdout, run.stderr, run.sent, fake.record(), session
    )


def acp_session(agent: str, **overrides: Any) -> AcpSession:
    return AcpSession.from_def(get_agent_def(agent), shutdown_grace_ms=2000, **overrides)


def request(fake: FakeCli, **kw: Any) -> SessionRequest:
    return SessionRequest(prompt=kw.pop("prompt", PROMPT), cwd=str(fake.cwd), **kw)


def schema_problems(live: Live) -> list[tuple[dict[str, Any], list[str]]]:
    """Every stdout frame checked against the vendored ACP schema for its method."""
    pending: dict[Any, str] = {}
    for raw in live.sent:
        frame = json.loads(raw)
        if "method" in frame and "id" in frame:
            pending[frame["id"]] = frame["method"]
    out: list[tuple[dict[str, Any], list[str]]] = []
    for frame in live.frames():
        problems = validate_incoming(frame, pending)
        if problems:
            out.append((frame, problems))
    return out


def updates(live: Live, kind: str) -> list[dict[str, Any]]:
    return [
        f["params"]["update"]
        for f in live.frames()
        if f.get("method") == "session/update"
        and f["params"]["update"].get("sessionUpdate") == kind
    ]


def scenario(fake: FakeCli, name: str, steps: list[dict[str, Any]], **top: Any) -> str:
    return fake.scenario_file(name, steps, **top)


# --------------------------------------------------------------------------- raw client


class RawClient:
    """A hand-written ACP client for the answers the engine never gives."""

    def __init__(
        self,
        fake: FakeCli,
        agent: str,
        scenario: str = "happy",
        args: Sequence[str] | None = None,
        **env: str,
    ) -> None:
        argv = list(args) if args is not None else def_argv(get_agent_def(agent))
        self.proc = fake.popen(agent, argv, scenario=scenario, env=fake.env(scenario, **env))
        self.pump = StdoutPump(self.proc)
        self.fake = fake
        self.next_id = 1
        self.seen = 0

    def send(self, frame: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(frame).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> int:
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def until(self, test: Callable[[dict[str, Any]], bool], timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            frames = stdout_frames(bytes(self.pump.received))
            for frame in frames[self.seen :]:
                self.seen += 1
                if test(frame):
                    return frame
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"frame never came; stdout {bytes(self.pump.received)!r}")
            if self.pump.next(left) is None:
                frames = stdout_frames(bytes(self.pump.received))
                if len(frames) == self.seen:
                    raise AssertionError(f"EOF; stdout {bytes(self.pump.received)!r}")

    def answer(self, rid: int, timeout: float = 20) -> dict[str, Any]:
        return self.until(lambda f: f.get("id") == rid and "method" not in f, timeout)

    def handshake(self, **new_params: Any) -> str:
        self.answer(self.request("initialize", {"protocolVersion": 1}))
        params = {"cwd": str(self.fake.cwd), "mcpServers": [], **new_params}
        result = self.answer(self.request("session/new", params))
        session_id: str = result["result"]["sessionId"]
        return session_id

    def close(self, timeout: float = 10) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=timeout)
        except Exception:
            kill_tree(self.proc)
            raise
        while self.pump.next(5) is not None:
            pass
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return code


# --------------------------------------------------------------------------- happy path


@pytest.mark.rule("FAKE-ACP-001", "FAKE-ACP-002", "FAKE-ACP-006", "FAKE-ACP-010")
@pytest.mark.parametrize("agent", ACP_AGENTS)
def test_happy_run_of_every_acp_agent(fake: FakeCli, agent: str) -> None:
    """FAKE-ACP-001: thinking, text, the write tool (file written), usage, completed."""
    defn = get_agent_def(agent)
    lingers = agent in LINGERING_AGENTS
    live = drive(fake, agent, acp_session(agent), request(fake), exit_timeout=1 if lingers else 10)
    assert live.finished == Finished(RunStatus.COMPLETED), live.stderr
    # vibe-acp and kimi wait for the host's SIGTERM after stdin closes (drive kills them:
    # code None).
    assert live.code == (None if lingers else 0)
    thinking = "".join(e.delta for e in events_of(live.events, ThinkingDelta))
    assert thinking == "The user wants a page."
    # hermes 0.19.0 starts the reply after a tool with a blank line
    # (recordings/real/hermes/happy.jsonl: "\n\nDone: hello.html is ready.").
    gap = "\n\n" if agent == "hermes" else ""
    assert text_of(live.events) == f"I'll create the page.{gap}Done: hello.html is ready."
    uses, results = events_of(live.events, ToolUse), events_of(live.events, ToolResult)
    assert len(uses) == 1 and [r.tool_use_id for r in results] == [uses[0].id]
    assert not results[0].is_error
    if agent == "kimi":
        # recordings/real/kimi/happy.jsonl: title "WriteFile", no kind, no rawInput; the id
        # is "<step id>/<model's id>"; the completed update carries only the diff.
        assert (uses[0].id or "").endswith("/call_write_1") and uses[0].name == "Write"
        assert uses[0].input == {"file_path": str(fake.cwd / "hello.html")}
        assert results[0].content.endswith(f"+++ new\n{HTML}")
    elif agent == "hermes":
        # recordings/real/hermes/happy.jsonl: kind edit, the path as given, no rawInput and
        # no update after the approved write; its content is the note.
        assert (uses[0].id or "").startswith("tc-") and uses[0].name == "Edit"
        assert uses[0].input == {"file_path": "hello.html"}
        assert results[0].content == (
            "Preparing write to hello.html. Approval prompt shows the diff."
        )
    else:
        assert [(u.id, u.name) for u in uses] == [("call_write_1", "Edit")]
        assert uses[0].input["file_path"] == str(fake.cwd / "hello.html")
        assert results[0].content == "Wrote hello.html"
    assert (fake.cwd / "hello.html").read_text(encoding="utf-8") == HTML
    response = [f for f in live.frames() if "stopReason" in f.get("result", {})]
    assert response[-1]["result"]["usage"] == {
        "inputTokens": 120,
        "outputTokens": 45,
        "totalTokens": 165,
    }
    usage = events_of(live.events, Usage)
    assert usage and usage[-1].stop_reason == "end_turn"
    if not defn.acp.turn_end_completes_prompt:
        assert usage[-1].usage == {"input_tokens": 120, "output_tokens": 45, "total_tokens": 165}
    # FAKE-ACP-002: every frame validates; kiro's turn_end update is the one exception.
    bad = schema_problems(live)
    expected_bad = updates(live, "turn_end") if defn.acp.turn_end_completes_prompt else []
    assert [f["params"]["update"] for f, _ in bad] == expected_bad
    assert not [e for e in events_of(live.events, Status) if e.label == "schema_violation"][
        len(expected_bad) :
    ]
    # FAKE-ACP-006: the posture decides whether the write was asked for.
    asked = [f for f in live.frames() if f.get("method") == "session/request_permission"]
    assert bool(asked) is (not live.record["auto_approve"])
    # The record: the prompt as the ACP frame carried it, and the session/new params.
    assert live.record["prompt"] == PROMPT and live.record["prompt_via"] == "acp"
    assert live.record["session_new"] == [
        {"method": "session/new", "cwd": str(fake.cwd), "mcpServers": []}
    ]


@pytest.mark.rule("FAKE-ACP-001", "FAKE-ACP-009")
def test_kiro_turn_end_completes_before_the_prompt_response(fake: FakeCli) -> None:
    """ref §2.6 step 5: Kiro's turn_end update precedes the prompt response."""
    live = drive(fake, "kiro", acp_session("kiro"), request(fake), scenario="text")
    frames = live.frames()
    turn_end = next(
        i
        for i, f in enumerate(frames)
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "turn_end"
    )
    response = next(i for i, f in enumerate(frames) if "stopReason" in f.get("result", {}))
    assert turn_end < response
    assert live.finished == Finished(RunStatus.COMPLETED) and live.code == 0


# --------------------------------------------------------------------------- handshake


@pytest.mark.rule("FAKE-ACP-003")
@pytest.mark.parametrize(
    ("agent", "model", "method"),
    [
        ("kilo", "kilo/openai/gpt-5.1", "session/set_config_option"),
        ("reasonix", "deepseek/deepseek-v4-pro", "session/set_config_option"),
        ("vibe", "mistral-medium-3.1", "session/set_model"),
        ("amr", "openai/gpt-5.1", "session/set_model"),
    ],
)
def test_both_model_selection_paths(fake: FakeCli, agent: str, model: str, method: str) -> None:
    live = drive(fake, agent, acp_session(agent), request(fake, model=model), scenario="text")
    assert live.finished == Finished(RunStatus.COMPLETED)
    assert live.record["model"] == model and live.record["model_via"] == method
    assert [e.model for e in events_of(live.events, Status) if e.label == "model"][-1] == model
    assert not schema_problems(live)


@pytest.mark.rule("FAKE-ACP-003")
def test_an_unknown_model_is_refused(fake: FakeCli) -> None:
    live = drive(fake, "kilo", acp_session("kilo"), request(fake, model="no/such"), scenario="text")
    assert live.finished is not None and live.finished.status is RunStatus.FAILED
    assert live.finished.error is not None and "unknown model" in live.finished.error.message


@pytest.mark.rule("FAKE-ACP-003")
def test_initialize_answer_and_session_new_record(fake: FakeCli) -> None:
    client = RawClient(fake, "amr")
    rid = client.request(
        "initialize", {"protocolVersion": 7, "clientInfo": {"name": "t", "version": "1"}}
    )
    result = client.answer(rid)["result"]
    assert result["protocolVersion"] == 1
    caps = result["agentCapabilities"]
    assert caps["loadSession"] is True
    assert caps["_meta"]["com.open-design.nativeSessionContinue"] == {"version": 1}
    assert set(caps) >= {"promptCapabilities", "mcpCapabilities"}
    assert result["agentInfo"]["version"] == "0.9.4" and result["authMethods"]
    # seed 000 §12: a per-process ACP id; the durable openCodeSessionId (ses_...) is
    # checked in test_acp_compaction.py.
    assert client.handshake().startswith("acp-")
    bad = client.request("session/new", {"cwd": "relative/dir", "mcpServers": []})
    assert client.answer(bad)["error"]["code"] == -32602
    missing = client.request("session/frobnicate", {})
    assert client.answer(missing)["error"]["code"] == -32601
    assert client.close() == 0
    assert fake.record()["stdin_frames"][0]["params"]["protocolVersion"] == 7


@pytest.mark.posix
@pytest.mark.rule("FAKE-ACP-003")
def test_a_terminated_fake_still_writes_its_record(fake: FakeCli) -> None:
    """A host that stops a lingering agent (SIGTERM) still finds session/new recorded."""
    import signal

    client = RawClient(fake, "kimi")
    servers = [{"name": "fs", "command": "od-fs", "args": [], "env": []}]
    client.handshake(mcpServers=servers)
    client.proc.send_signal(signal.SIGTERM)
    assert client.close() == -signal.SIGTERM  # still dies of the signal
    calls = fake.record()["session_new"]
    assert [c["method"] for c in calls] == ["session/new"]
    assert calls[0]["mcpServers"] == servers


@pytest.mark.rule("FAKE-ACP-003")
def test_session_new_needs_credentials_when_auth_is_missing(fake: FakeCli) -> None:
    client = RawClient(fake, "kimi", FAKE_CLI_AUTH="missing")
    client.answer(client.request("initialize", {"protocolVersion": 1}))
    rid = client.request("session/new", {"cwd": str(fake.cwd), "mcpServers": []})
    assert client.answer(rid)["error"] == {"code": -32000, "message": "Authentication required"}
    client.answer(client.request("authenticate", {"methodId": "login"}))
    client.answer(client.request("session/new", {"cwd": str(fake.cwd), "mcpServers": []}))
    assert _closed_as_its_cli(client, "kimi")


# --------------------------------------------------------------------------- MCP servers


STDIO_SERVER = {
    "type": "stdio",
    "name": "files",
    "command": "/usr/local/bin/mcp-files",
    "args": ["--root", "/srv"],
    "env": {"TOKEN": "t0k"},
}


@pytest.mark.rule("FAKE-ACP-004")
def test_mcp_env_shape_reaches_each_agent_as_it_expects(fake: FakeCli) -> None:
    """The engine converts env per def (ref §2.6); each fake records what arrived."""
    kimi = drive(
        fake,
        "kimi",
        acp_session("kimi"),
        request(fake, mcp_servers=[STDIO_SERVER]),
        scenario="text",
    )
    assert kimi.finished == Finished(RunStatus.COMPLETED)
    assert kimi.record["mcp_servers"][0]["env"] == [{"name": "TOKEN", "value": "t0k"}]
    reasonix = drive(
        fake,
        "reasonix",
        acp_session("reasonix"),
        request(fake, mcp_servers=[STDIO_SERVER]),
        scenario="text",
    )
    assert reasonix.finished == Finished(RunStatus.COMPLETED)
    assert reasonix.record["mcp_servers"][0]["env"] == {"TOKEN": "t0k"}


@pytest.mark.rule("FAKE-ACP-004")
@pytest.mark.parametrize(
    ("agent", "env", "needle"),
    [
        ("reasonix", [{"name": "TOKEN", "value": "t0k"}], "object of strings"),
        ("kimi", {"TOKEN": "t0k"}, "array of {name, value}"),
        ("devin", [{"name": "TOKEN"}], "array of {name, value}"),
    ],
)
def test_a_wrong_env_shape_is_invalid_params(
    fake: FakeCli, agent: str, env: Any, needle: str
) -> None:
    client = RawClient(fake, agent)
    client.answer(client.request("initialize", {"protocolVersion": 1}))
    server = {**STDIO_SERVER, "env": env}
    rid = client.request("session/new", {"cwd": str(fake.cwd), "mcpServers": [server]})
    error = client.answer(rid)["error"]
    assert error["code"] == -32602 and needle in error["message"]
    assert _closed_as_its_cli(client, agent)
    assert fake.record()["mcp_servers"] == [server]


@pytest.mark.rule("FAKE-ACP-004")
def test_kimi_refuses_stdio_mcp_from_0_37(fake: FakeCli) -> None:
    client = RawClient(fake, "kimi", FAKE_CLI_VERSION="0.37.1")
    info = client.answer(client.request("initialize", {"protocolVersion": 1}))["result"]
    assert info["agentInfo"]["version"] == "0.37.1"
    server = {**STDIO_SERVER, "env": []}
    rid = client.request("session/new", {"cwd": str(fake.cwd), "mcpServers": [server]})
    assert "not supported since kimi 0.37.0" in client.answer(rid)["error"]["message"]
    assert _closed_as_its_cli(client, "kimi")
    # The engine withholds stdio servers from such a kimi (ref §2.6 step 2): the run works.
    live = drive(
        fake,
        "kimi",
        acp_session("kimi"),
        request(fake, mcp_servers=[STDIO_SERVER]),
        scenario="text",
        env=fake.env("text", FAKE_CLI_VERSION="0.37.1"),
    )
    assert live.finished == Finished(RunStatus.COMPLETED)
    assert live.record["mcp_servers"] == []
    # The default 0.36.2 still takes them.
    old = RawClient(fake, "kimi")
    old.answer(old.request("initialize", {"protocolVersion": 1}))
    ok = old.request("session/new", {"cwd": str(fake.cwd), "mcpServers": [server]})
    assert "sessionId" in old.answer(ok)["result"]
    assert _closed_as_its_cli(old, "kimi")


# --------------------------------------------------------------------------- sessions


@pytest.mark.rule("FAKE-ACP-005")
def test_session_load_replays_history_and_continues(fake: FakeCli) -> None:
    first = drive(fake, "vibe", acp_session("vibe"), request(fake), scenario="text")
    session_id = first.session.session_id
    assert session_id and first.record["resumed"] is False
    second = drive(
        fake,
        "vibe",
        acp_session("vibe"),
        request(fake, prompt="again", resume_session_id=session_id),
        scenario="text",
    )
    assert second.finished == Finished(RunStatus.COMPLETED)
    assert second.record["resumed"] is True and second.record["prior_turns"] == 1
    replayed = [u for u in updates(second, "user_message_chunk")]
    assert replayed == [
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": PROMPT}}
    ]
    frames = second.frames()
    load_answer = next(i for i, f in enumerate(frames) if f.get("id") == 2)
    assert (
        max(
            i
            for i, f in enumerate(frames)
            if f.get("method") == "session/update"
            and f["params"]["update"]["sessionUpdate"] == "user_message_chunk"
        )
        < load_answer
    )
    assert second.session.counters["replayed_updates"] == 2
    assert text_of(second.events) == "Hello from the fake model. PONG."
    assert not schema_problems(second)


@pytest.mark.rule("FAKE-ACP-005")
def test_loading_an_unknown_session_is_resource_not_found(fake: FakeCli) -> None:
    live = drive(
        fake,
        "kilo",
        acp_session("kilo"),
        request(fake, resume_session_id="ses_missing"),
        scenario="text",
    )
    assert live.finished is not None and live.finished.status is RunStatus.FAILED
    error = next(f["error"] for f in live.frames() if "error" in f)
    assert error["code"] == -32002 and error["message"] == "Resource not found"


# --------------------------------------------------------------------------- permission


@pytest.mark.rule("FAKE-ACP-006")
@pytest.mark.parametrize(
    ("outcome", "written", "status"),
    [
        ({"outcome": "selected", "optionId": "allow_once"}, True, "completed"),
        ({"outcome": "selected", "optionId": "reject_once"}, False, "failed"),
        ({"outcome": "cancelled"}, False, "failed"),
    ],
)
def test_write_waits_for_the_permission_answer(
    fake: FakeCli, outcome: dict[str, Any], written: bool, status: str
) -> None:
    # amr renders the generic ACP tool shape (hermes and kimi have their own, pinned below).
    client = RawClient(fake, "amr")
    session_id = client.handshake()
    prompt = client.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    ask = client.until(lambda f: f.get("method") == "session/request_permission")
    assert [o["kind"] for o in ask["params"]["options"]] == [
        "allow_once",
        "allow_always",
        "reject_once",
    ]
    assert ask["params"]["toolCall"]["toolCallId"] == "call_write_1"
    # It waits: nothing after the question until we answer.
    assert not stdout_frames(bytes(client.pump.received))[client.seen :]
    with pytest.raises(TimeoutError):
        client.pump.next(0.2)
    assert not (fake.cwd / "hello.html").exists()
    client.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": outcome}})
    final = client.until(
        lambda f: (
            f.get("method") == "session/update"
            and f["params"]["update"].get("status") in ("completed", "failed")
        )
    )
    assert final["params"]["update"]["status"] == status
    assert client.answer(prompt)["result"]["stopReason"] == "end_turn"
    assert (fake.cwd / "hello.html").exists() is written
    assert client.close() == 0


@pytest.mark.rule("FAKE-ACP-006")
@pytest.mark.parametrize(("answer", "written"), [("allow_once", True), ("deny", False)])
def test_hermes_write_matches_its_recording(fake: FakeCli, answer: str, written: bool) -> None:
    """recordings/real/hermes/happy.jsonl: the write is a `tool_call` (tc-<hex>, kind edit,
    the path as given, a note, no rawInput); the permission request is about
    `edit-approval-1` with rawInput {tool: write_file, arguments}; no update follows an
    approved write."""
    client = RawClient(fake, "hermes")
    session_id = client.handshake()
    prompt = client.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    call = client.until(
        lambda f: (
            f.get("method") == "session/update"
            and f["params"]["update"]["sessionUpdate"] == "tool_call"
        )
    )["params"]["update"]
    assert re.fullmatch(r"tc-[0-9a-f]{12}", call["toolCallId"])
    assert (call["title"], call["kind"], call["locations"]) == (
        "write: hello.html",
        "edit",
        [{"path": "hello.html"}],
    )
    assert "rawInput" not in call and "status" not in call
    ask_frame = client.until(lambda f: f.get("method") == "session/request_permission")
    ask = ask_frame["params"]
    assert [(o["optionId"], o["kind"]) for o in ask["options"]] == [
        ("allow_once", "allow_once"),
        ("deny", "reject_once"),
    ]
    assert ask["toolCall"]["toolCallId"] == "edit-approval-1"
    assert ask["toolCall"]["rawInput"] == {
        "tool": "write_file",
        "arguments": {"path": "hello.html", "content": HTML},
    }
    asked = client.seen
    client.send(
        {
            "jsonrpc": "2.0",
            "id": ask_frame["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": answer}},
        }
    )
    assert client.answer(prompt)["result"]["stopReason"] == "end_turn"
    after = stdout_frames(bytes(client.pump.received))[asked:]
    closing = [
        f["params"]["update"]
        for f in after
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "tool_call_update"
    ]
    assert [u["status"] for u in closing] == ([] if written else ["failed"])
    texts = [
        f["params"]["update"]["content"]["text"]
        for f in after
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert texts == ["\n\nDone: hello.html is ready."]
    assert (fake.cwd / "hello.html").exists() is written
    assert client.close() == 0


@pytest.mark.rule("FAKE-ACP-006")
@pytest.mark.parametrize(
    ("scenario_name", "status", "result", "reply"),
    [
        ("shell", "completed", "- **output:** hi\n- **exit_code:** 0", "The command printed hi."),
        (
            "tool_error",
            "failed",
            "- **output:** command failed with exit code 1\n- **exit_code:** 1",
            "The command failed.",
        ),
    ],
)
def test_hermes_terminal_matches_its_recording(
    fake: FakeCli, scenario_name: str, status: str, result: str, reply: str
) -> None:
    """recordings/real/hermes/shell.jsonl: `tool_call` "terminal: echo hi" (tc-<hex>, kind
    execute, no locations, "$ echo hi", no rawInput, no status), nothing asked, one update
    with the output and exit code, then the reply after a blank line (no text came
    before it)."""
    client = RawClient(fake, "hermes", scenario=scenario_name)
    session_id = client.handshake()
    prompt = client.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    assert client.answer(prompt)["result"]["stopReason"] == "end_turn"
    updates = [
        f["params"]["update"]
        for f in stdout_frames(bytes(client.pump.received))
        if f.get("method") == "session/update"
    ]
    assert not [
        f
        for f in stdout_frames(bytes(client.pump.received))
        if f.get("method") == "session/request_permission"
    ]
    (call,) = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    command = "echo hi" if scenario_name == "shell" else "false"
    assert re.fullmatch(r"tc-[0-9a-f]{12}", call["toolCallId"])
    assert (call["title"], call["kind"], call["locations"]) == (
        f"terminal: {command}",
        "execute",
        [],
    )
    assert call["content"] == [
        {"type": "content", "content": {"type": "text", "text": f"$ {command}"}}
    ]
    assert "rawInput" not in call and "status" not in call
    (done,) = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    assert (done["toolCallId"], done["status"]) == (call["toolCallId"], status)
    assert done["content"][0]["content"]["text"] == f"terminal result\n{result}"
    texts = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert texts == [f"\n\n{reply}"]
    assert client.close() == 0


@pytest.mark.rule("FAKE-ACP-006")
def test_kimi_shell_matches_its_recording(fake: FakeCli) -> None:
    """recordings/real/kimi/shell.jsonl: `tool_call` "Shell" (in_progress, empty text, no kind
    or rawInput), an update "Shell: echo hi" with the arguments as JSON text, a permission
    request (approve / approve_for_session / reject) also for a shell command, then
    `completed` with the output."""
    client = RawClient(fake, "kimi", scenario="shell")
    session_id = client.handshake()
    prompt = client.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    ask = client.until(lambda f: f.get("method") == "session/request_permission")
    assert [(o["optionId"], o["kind"]) for o in ask["params"]["options"]] == [
        ("approve", "allow_once"),
        ("approve_for_session", "allow_always"),
        ("reject", "reject_once"),
    ]
    assert ask["params"]["toolCall"]["title"] == "Shell: echo hi"
    client.send(
        {
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "approve"}},
        }
    )
    assert client.answer(prompt)["result"]["stopReason"] == "end_turn"
    tool_updates = [
        f["params"]["update"]
        for f in stdout_frames(bytes(client.pump.received))
        if f.get("method") == "session/update"
        and f["params"]["update"]["sessionUpdate"] in ("tool_call", "tool_call_update")
    ]
    first, args, done = tool_updates
    assert first["sessionUpdate"] == "tool_call" and first["title"] == "Shell"
    assert "kind" not in first and "rawInput" not in first
    assert first["toolCallId"].endswith("/call_shell_1") and first["status"] == "in_progress"
    assert (args["title"], args["content"][0]["content"]["text"]) == (
        "Shell: echo hi",
        '{"command": "echo hi"}',
    )
    assert (done["status"], done["content"][0]["content"]["text"]) == ("completed", "hi\n")
    assert _closed_as_its_cli(client, "kimi")  # kimi 1.51.0 waits for the host's SIGTERM


@pytest.mark.rule("FAKE-ACP-006")
def test_allow_always_is_remembered_for_the_session(fake: FakeCli) -> None:
    twice = scenario(
        fake,
        "twice",
        [
            {"kind": "tool", "tool": "write", "id": "w1", "path": "a.txt", "content": "a"},
            {"kind": "tool", "tool": "write", "id": "w2", "path": "b.txt", "content": "b"},
        ],
    )
    live = drive(fake, "kimi", acp_session("kimi"), request(fake), scenario=twice)
    asks = [f for f in live.frames() if f.get("method") == "session/request_permission"]
    # kimi's allow_always option is "approve_for_session" (recordings/real/kimi/happy.jsonl).
    assert len(asks) == 1 and live.record["permission_outcomes"] == ["approve_for_session"]
    assert (fake.cwd / "a.txt").read_text() == "a" and (fake.cwd / "b.txt").read_text() == "b"


@pytest.mark.rule("FAKE-ACP-006")
def test_trae_asks_without_yolo(fake: FakeCli) -> None:
    live = drive(fake, "trae-cli", acp_session("trae-cli"), request(fake), args=["acp", "serve"])
    assert live.record["auto_approve"] is False
    assert [f for f in live.frames() if f.get("method") == "session/request_permission"]
    assert (fake.cwd / "hello.html").exists()


# --------------------------------------------------------------------------- cancel


def _cancel_after_text(session: TwoWaySession, events: list[Event], now: float) -> Actions | None:
    if any(isinstance(e, TextDelta) for e in events):
        return session.cancel(now)
    return None


@pytest.mark.rule("FAKE-ACP-007")
def test_cancel_stops_the_stream_and_answers_cancelled(fake: FakeCli) -> None:
    slow = scenario(
        fake,
        "long",
        [
            {"kind": "text", "text": "Working"},
            {"kind": "sleep", "ms": 5000},
            {"kind": "text", "text": "never"},
        ],
    )
    started = time.monotonic()
    live = drive(
        fake,
        "devin",
        acp_session("devin"),
        request(fake),
        scenario=slow,
        on_events=_cancel_after_text,
    )
    assert time.monotonic() - started < 5
    assert live.finished == Finished(RunStatus.CANCELLED)
    assert "never" not in text_of(live.events)
    frames = live.frames()
    assert frames[-1]["result"] == {"stopReason": "cancelled"}
    assert live.record["cancels"] == [live.session.session_id]
    assert live.code == 0


@pytest.mark.rule("FAKE-ACP-007", "FAKE-ACP-006")
def test_cancel_while_a_permission_is_pending(fake: FakeCli) -> None:
    client = RawClient(fake, "amr")
    session_id = client.handshake()
    prompt = client.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    ask = client.until(lambda f: f.get("method") == "session/request_permission")
    client.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}})
    # wire §A.1.3: the client answers the pending permission with "cancelled".
    client.send(
        {"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": {"outcome": "cancelled"}}}
    )
    assert client.answer(prompt)["result"]["stopReason"] == "cancelled"
    assert not (fake.cwd / "hello.html").exists()
    assert client.close() == 0


# --------------------------------------------------------------------------- step kinds


def _run(fake: FakeCli, name: str, agent: str = "amr", **kw: Any) -> Live:
    return drive(fake, agent, acp_session(agent), request(fake), scenario=name, **kw)


@pytest.mark.rule("FAKE-ACP-008")
def test_shell_and_failing_tools(fake: FakeCli) -> None:
    shell = _run(fake, "shell")
    assert [(u.name, u.input["command"]) for u in events_of(shell.events, ToolUse)] == [
        ("Bash", "echo hi")
    ]
    assert [(r.content, r.is_error) for r in events_of(shell.events, ToolResult)] == [
        ("hi\n", False)
    ]
    failing = _run(fake, "tool_error")
    assert [(r.content, r.is_error) for r in events_of(failing.events, ToolResult)] == [
        ("command failed with exit code 1", True)
    ]
    assert not schema_problems(shell) and not schema_problems(failing)


@pytest.mark.rule("FAKE-ACP-008")
def test_other_tools_thinking_chunks_and_cost(fake: FakeCli) -> None:
    name = scenario(
        fake,
        "misc",
        [
            {"kind": "thinking", "text": "ab", "chunks": ["a", "b"]},
            {
                "kind": "tool",
                "tool": "other",
                "id": "r1",
                "name": "read",
                "input": {"path": "x.txt"},
                "output": "contents",
            },
            {"kind": "usage", "input_tokens": 3, "output_tokens": 4, "cost_usd": 0.5},
        ],
    )
    live = _run(fake, name)
    assert [e.delta for e in events_of(live.events, ThinkingDelta)] == ["a", "b"]
    assert [(u.name, u.input) for u in events_of(live.events, ToolUse)] == [
        ("Read", {"path": "x.txt", "file_path": "x.txt"})
    ]
    assert updates(live, "usage_update")[0]["cost"] == {"amount": 0.5, "currency": "USD"}
    assert not schema_problems(live)


@pytest.mark.rule("FAKE-ACP-008")
def test_api_error_is_a_json_rpc_error_to_the_prompt(fake: FakeCli) -> None:
    live = _run(fake, "api_error", agent="amr")
    assert live.finished is not None and live.finished.status is RunStatus.FAILED
    assert live.finished.error is not None
    assert live.finished.error.message.endswith("Internal server error")
    assert live.finished.error.retryable is True
    error = next(f for f in live.frames() if "error" in f)
    assert error["error"]["code"] == -32603 and error["error"]["data"]["statusCode"] == 500
    assert live.code == 1
    assert not schema_problems(live)


@pytest.mark.rule("FAKE-ACP-008")
def test_malformed_foreign_noise_and_oversize_lines(fake: FakeCli) -> None:
    malformed = _run(fake, "malformed")
    assert malformed.finished == Finished(RunStatus.COMPLETED)
    assert text_of(malformed.events) == "Before.After."
    assert malformed.session.counters["non_json_lines"] == 1
    foreign = _run(fake, "foreign")
    assert text_of(foreign.events) == "Mine. Still mine."
    assert foreign.session.counters["foreign_updates"] == 1
    noise = _run(fake, "noise")
    assert text_of(noise.events) == "Hello." and noise.session.counters["non_json_lines"] == 2
    oversize = _run(fake, "oversize")
    assert text_of(oversize.events) == "Before.After."
    sizes = [len(line) for line in oversize.stdout.split(b"\n")]
    assert 2_097_152 in sizes
    assert not schema_problems(foreign) and not schema_problems(oversize)


@pytest.mark.rule("FAKE-ACP-008")
def test_crashes_end_the_run_early(fake: FakeCli) -> None:
    mid = _run(fake, "crash_mid_line")
    assert mid.code == 3 and not mid.stdout.endswith(b"\n")
    assert mid.finished is not None and mid.finished.error is not None
    assert mid.finished.error.code == "ACP_EXITED_EARLY"
    assert text_of(mid.events) == "Starting."
    plain = _run(fake, "exit_code")
    assert plain.code == 7 and text_of(plain.events) == "Partial."
    assert plain.finished is not None and plain.finished.status is RunStatus.FAILED


@pytest.mark.rule("FAKE-ACP-008")
def test_stderr_and_slow_output(fake: FakeCli) -> None:
    noisy = _run(fake, "stderr")
    assert noisy.finished == Finished(RunStatus.COMPLETED)
    assert b"warning: something noisy" in noisy.stderr and b"more noise" in noisy.stderr
    slow = _run(fake, "slow")
    assert text_of(slow.events) == "abc"


@pytest.mark.rule("FAKE-ACP-008")
def test_hang_and_spawn_tree_need_a_kill(fake: FakeCli) -> None:
    hang = RawClient(fake, "kiro", scenario="hang")
    session_id = hang.handshake()
    hang.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]}
    )
    hang.until(lambda f: f.get("method") == "session/update")
    with pytest.raises(TimeoutError):
        hang.pump.next(0.2)  # no prompt response: it hangs
    assert hang.proc.poll() is None
    kill_tree(hang.proc)
    tree = RawClient(fake, "kiro", scenario="spawn_tree")
    session_id = tree.handshake()
    tree.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]}
    )
    tree.until(lambda f: f.get("method") == "session/update")
    deadline = time.monotonic() + 20
    family: list[psutil.Process] = []
    while time.monotonic() < deadline and len(family) < 2:
        family = psutil.Process(tree.proc.pid).children(recursive=True)
        time.sleep(0.05)
    assert len(family) == 2
    assert {p.pid for p in family} <= set(kill_tree(tree.proc))
    stall = RawClient(fake, "kilo", scenario="stall")
    stall.request("initialize", {"protocolVersion": 1})
    with pytest.raises(TimeoutError):
        stall.pump.next(0.3)  # nothing at all: not even the initialize answer
    assert stall.proc.poll() is None
    kill_tree(stall.proc)


# --------------------------------------------------------------------------- stdin EOF


@pytest.mark.rule("FAKE-ACP-009")
def test_stdin_eof_ends_the_agent_with_the_scenario_code(fake: FakeCli) -> None:
    ok = RawClient(fake, "kilo", scenario="text")
    ok.handshake()
    assert ok.close() == 0
    failing = RawClient(fake, "kilo", scenario=scenario(fake, "rc5", [], exit_code=5))
    assert failing.close() == 5


@pytest.mark.rule("FAKE-ACP-009")
def test_ignore_stdin_close_keeps_the_agent_alive(fake: FakeCli) -> None:
    live = drive(
        fake,
        "hermes",
        acp_session("hermes"),
        request(fake),
        scenario="ignore_stdin",
        exit_timeout=0.5,
    )
    assert live.finished == Finished(RunStatus.COMPLETED)
    assert text_of(live.events) == "Done, but I linger."
    assert live.code is None  # still running after stdin closed: killed by the driver


# --------------------------------------------------------------------------- argv


@pytest.mark.rule("FAKE-ACP-010")
@pytest.mark.parametrize("agent", ACP_AGENTS)
def test_each_def_argv_is_accepted(fake: FakeCli, agent: str) -> None:
    """With and without capabilities, and with a model: ACP defs pass the same argv."""
    defn = get_agent_def(agent)
    plain = def_argv(defn, fake.cwd)
    probed = def_argv(defn, fake.cwd, model="x", capabilities={"anything": True})
    assert plain == probed
    if agent in LINGERING_AGENTS:
        client = RawClient(fake, agent, args=plain, scenario="text")
        client.handshake()
        assert _stays_after_eof(client)
        return
    result = fake.run(agent, plain, scenario="text")
    assert (result.code, result.err) == (0, "")


def _stays_after_eof(client: RawClient, wait: float = 0.5) -> bool:
    """Close stdin; whether the agent is still running ``wait`` s later (then SIGTERM it,
    as the host does, and check it goes)."""
    assert client.proc.stdin is not None
    client.proc.stdin.close()
    try:
        client.proc.wait(timeout=wait)
        return False
    except subprocess.TimeoutExpired:
        client.proc.terminate()
        client.proc.wait(timeout=10)
        return True


def _closed_as_its_cli(client: RawClient, agent: str) -> bool:
    """Close stdin as the host does: an agent that exits at EOF exits 0; one whose CLI
    stays up (:data:`LINGERING_AGENTS`) is still running and goes at SIGTERM."""
    if agent in LINGERING_AGENTS:
        return _stays_after_eof(client)
    return client.close() == 0


@pytest.mark.rule("FAKE-ACP-006")
def test_vibe_waits_for_the_hosts_sigterm_after_stdin_closes(fake: FakeCli) -> None:
    """vibe-acp 3.0.2 never exits at stdin EOF, after a completed or a failed prompt
    (recordings/real/vibe/*.jsonl all end in SIGTERM); other agents exit."""
    for scenario_name in ("text", "api_error"):
        client = RawClient(fake, "vibe", scenario=scenario_name)
        session_id = client.handshake()
        prompt = client.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]}
        )
        client.answer(prompt)
        assert _stays_after_eof(client), scenario_name
    other = RawClient(fake, "kilo", scenario="text")
    other.handshake()
    assert other.close() == 0


@pytest.mark.rule("FAKE-ACP-010")
@pytest.mark.parametrize(
    ("agent", "args", "message", "code"),
    [
        (
            "amr",
            ["agent", "run", "--runtime", "opencode", "--bogus"],
            "error: unknown option '--bogus'",
            1,
        ),
        ("amr", ["--runtime", "opencode", "agent", "run"], "error: unknown option '--runtime'", 1),
        (
            "devin",
            ["--permission-mode", "dangerous", "acp", "serve"],
            "error: too many arguments",
            1,
        ),
        (
            "devin",
            ["--respect-workspace-trust", "maybe", "acp"],
            "Allowed choices are true, false.",
            1,
        ),
        ("hermes", ["acp", "--bogus"], "hermes: error: unrecognized arguments: --bogus", 2),
        ("kimi", ["acp", "--print"], "kimi: error: unrecognized arguments: --print", 2),
        ("kiro", ["acp", "serve"], "error: unexpected argument 'serve' found", 2),
        ("kilo", ["acp", "--format", "json"], "Unknown argument: format", 1),
        ("reasonix", ["acp", "--bogus"], "flag provided but not defined: -bogus", 2),
        ("reasonix", ["acp", "-planner", "sometimes"], "Error: planner must be auto or off", 2),
        ("trae-cli", ["acp", "--yolo"], "error: unknown option '--yolo'", 1),
        ("vibe", ["acp"], "vibe-acp: error: unrecognized arguments: acp", 2),
        ("kimi", ["--print"], "this fake emulates only the ACP server mode", 2),
        ("kilo", ["run", "hello"], "this fake emulates only the ACP server mode", 2),
    ],
)
def test_argv_is_refused_like_the_real_cli(
    fake: FakeCli, agent: str, args: list[str], message: str, code: int
) -> None:
    result = fake.run(agent, args)
    assert result.code == code and message in result.err
    assert result.stdout == b""


@pytest.mark.rule("FAKE-ACP-010")
def test_reasonix_acp_flags_follow_go_flag() -> None:
    from fake_clis.acp import go_flag_parse

    flags = {"model": "string", "workspace-only": "bool"}
    parsed = go_flag_parse(flags, ["--model", "m", "-workspace-only", "rest"], "acp")
    assert not isinstance(parsed, tuple)
    assert parsed.values == {"model": "m", "workspace-only": "true"} and parsed.rest == ["rest"]
    assert go_flag_parse(flags, ["-model"], "acp") == (
        "flag needs an argument: -model\nUsage of acp:",
        2,
    )
    assert go_flag_parse(flags, ["-workspace-only=maybe"], "acp")[1] == 2  # type: ignore[index]


# --------------------------------------------------------------------------- probes


def _detect(fake: FakeCli, defn: AgentDef, **env: str) -> Any:
    bin_dir = fake.root / "bin"
    install_shim(bin_dir, defn.bin, defn.id)
    environment = fake.env("happy", PATH=f"{bin_dir}:/usr/bin:/bin", **env)
    return asyncio.run(
        detect_agent(
            defn, env=environment, platform=sys.platform, home=str(fake.home), fs=RealFileSystem()
        )
    )


@pytest.mark.rule("FAKE-ACP-011")
@pytest.mark.posix
@pytest.mark.parametrize("agent", ["amr", "kilo", "kimi", "devin"])
def test_detection_probes_the_fake(fake: FakeCli, agent: str) -> None:
    defn = get_agent_def(agent)
    found = _detect(fake, defn)
    assert found.available, found.diagnostics
    assert found.version and found.version.strip()
    if defn.list_models is not None:
        # amr lists models on a subcommand; kilo and trae-cli report them in session/new
        # (FIDELITY-ACP-MODELS-001).
        first = {"kilo": "kilo/anthropic/claude-sonnet-4.5", "trae-cli": "doubao-seed-code"}
        assert found.models_source == "live"
        expected = first.get(agent, "anthropic/claude-sonnet-4-5")
        assert [m.id for m in found.models][:2] == ["default", expected]
    if defn.version_policy is not None:
        assert not [d for d in found.diagnostics if "version" in str(d).lower()], found


@pytest.mark.rule("FAKE-ACP-011")
def test_help_and_model_list_outputs(fake: FakeCli) -> None:
    amr = get_agent_def("amr")
    assert amr.list_models is not None
    listing = fake.run("amr", list(amr.list_models.args))
    parsed = amr.list_models.parse(listing.out)
    assert parsed is not None and [m.id for m in parsed] == [
        "default",
        "anthropic/claude-sonnet-4-5",
        "openai/gpt-5.1",
        "opencode/big-pickle",
    ]
    text = fake.run("amr", ["model", "list", "--format", "text"])
    assert text.code == 0 and "openai/gpt-5.1" in text.out
    for agent in ACP_AGENTS:
        shown = fake.run(agent, ["--help"])
        assert shown.code == 0 and shown.out.strip()
    version = fake.run("kilo", ["--version"])
    policy = get_agent_def("kilo").version_policy
    assert policy is not None and policy.parse is not None
    assert re.match(policy.supported_version_pattern or "", policy.parse(version.out) or "")
