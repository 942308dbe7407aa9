"""The ``codex app-server`` fake (``fake_clis/codex_app_server.py``) as a real process.

Rules: FAKE-APPSERVER-HAPPY-001, FAKE-APPSERVER-WIRE-001, FAKE-APPSERVER-LIFECYCLE-001,
FAKE-APPSERVER-PATCH-001, FAKE-APPSERVER-RESUME-001, FAKE-APPSERVER-INTERRUPT-001,
FAKE-APPSERVER-ERROR-001, FAKE-APPSERVER-STEPS-001, FAKE-APPSERVER-APPROVAL-001,
FAKE-APPSERVER-SANDBOX-001 (conformance/rules/fakes_dsh_appserver.py).

The fake is started as the engine starts it, ``python -m fake_clis codex app-server`` (the
codex def's app-server transport argv; ``fake_clis.json_events`` dispatches it here). Turns
run through ``harness.protocols.codex_app_server.CodexAppServerSession`` against the live
process; lower-level checks talk JSON-RPC to it directly (:class:`Rpc`). Every message the
fake writes is checked against the JSON Schema codex 0.171.0 generates
(``harness/schemas/codex-app-server/``), picking the ``oneOf`` branch by ``method``.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from harness.defs.registry import get_agent_def
from harness.defs.types import BuildOptions, RuntimeContext
from harness.events import Event, Raw, Status, TextDelta, ThinkingDelta, ToolResult, ToolUse, Usage
from harness.protocols.base import (
    Actions,
    Finished,
    RunStatus,
    SessionRequest,
)
from harness.protocols.codex_app_server import CodexAppServerSession, parse_server_version
from harness.schemas import load_schema
from tests.fakes.conftest import FakeCli
from tests.support.drive import cancel_once, drive_session
from tests.support.processes import StdoutPump, kill_tree

CODEX = get_agent_def("codex")
(APP_SERVER,) = [t for t in CODEX.alt_transports if t.name == "app-server"]
ARGS = APP_SERVER.build_args("p", [], [], BuildOptions(), RuntimeContext())
HTML = "<!doctype html>\n<h1>Hello</h1>\n"
CLIENT = {"name": "adapter-harness", "title": "adapter-harness", "version": "0.1.0"}
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")

#: Our request method -> the generated schema of its result.
RESULT_SCHEMAS = {
    "initialize": "v1/InitializeResponse.json",
    "thread/start": "v2/ThreadStartResponse.json",
    "thread/resume": "v2/ThreadResumeResponse.json",
    "turn/start": "v2/TurnStartResponse.json",
    "turn/interrupt": "v2/TurnInterruptResponse.json",
}


# --------------------------------------------------------------------------- schema


@cache
def _validator(name: str, method: str | None) -> jsonschema.Draft7Validator:
    schema = load_schema(f"codex-app-server/{name}")
    if method is not None:
        for branch in schema.get("oneOf", ()):
            if branch.get("properties", {}).get("method", {}).get("enum") == [method]:
                merged = {**branch, "definitions": schema.get("definitions", {})}
                if "properties" in schema:
                    merged["properties"] = {**schema["properties"], **branch["properties"]}
                return jsonschema.Draft7Validator(merged)
        raise AssertionError(f"{name} has no method {method!r}")
    return jsonschema.Draft7Validator(schema)


def wire_problems(message: dict[str, Any], methods: Mapping[Any, str]) -> list[str]:
    """FAKE-APPSERVER-WIRE-001: problems of one message the fake wrote.

    ``methods`` maps the ids of the requests the client sent to their method, which picks
    the schema of a result.
    """
    if "jsonrpc" in message:
        return ["codex app-server omits the jsonrpc member (wire §A.0)"]
    method = message.get("method")
    if isinstance(method, str):
        name = "ServerRequest.json" if "id" in message else "ServerNotification.json"
        validator = _validator(name, method)
        target: Any = message
    elif "error" in message:
        validator, target = _validator("JSONRPCError.json", None), message
    else:
        validator = _validator(RESULT_SCHEMAS[methods[message["id"]]], None)
        target = message["result"]
    return [e.message[:200] for e in validator.iter_errors(target)]


def messages_of(stdout: bytes, *, strict: bool = True) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line in stdout.split(b"\n"):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            if strict:
                raise
            continue
        out.append(value)
    return out


def assert_wire(stdout: bytes, sent: list[dict[str, Any]], *, strict: bool = True) -> None:
    methods = {m["id"]: m["method"] for m in sent if "id" in m and "method" in m}
    for message in messages_of(stdout, strict=strict):
        problems = wire_problems(message, methods)
        assert not problems, f"{json.dumps(message)[:300]} violates the schema: {problems}"


def notes(stdout: bytes, method: str) -> list[dict[str, Any]]:
    return [m for m in messages_of(stdout, strict=False) if m.get("method") == method]


# --------------------------------------------------------------------------- the live session


@dataclass
class Live:
    events: list[Event]
    finished: Finished | None
    code: int | None
    stdout: bytes
    stderr: str
    record: dict[str, Any]
    session: CodexAppServerSession
    sent: list[dict[str, Any]]
    alive_after_turn: bool | None = None

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
    args: list[str] | None = None,
    check_alive: bool = False,
    timeout: float = 20.0,
) -> Live:
    """Spawn ``codex app-server`` and run one turn of the engine's session against it."""
    request = request or SessionRequest(prompt="Create hello.html", cwd=str(fake.cwd))
    proc = fake.popen("codex", args or ARGS, env=env or fake.env(scenario))
    session = CodexAppServerSession(shutdown_grace_ms=2000, interrupt_grace_ms=5000)
    alive: list[bool] = []

    def turn_over(actions: Actions, proc: subprocess.Popen[bytes]) -> None:
        if check_alive and actions.finished is not None and not alive:
            # The server must outlive the turn: still up a moment after turn/completed.
            time.sleep(0.2)
            alive.append(proc.poll() is None)

    run = drive_session(
        proc,
        session,
        request,
        on_events=cancel_once(cancel_when),
        on_actions=turn_over,
        timeout=timeout,
    )
    sent = [json.loads(frame) for frame in run.sent]
    stderr = run.stderr.decode("utf-8", "replace")
    return Live(
        run.events,
        run.finished,
        run.code,
        run.stdout,
        stderr,
        fake.record(),
        session,
        sent,
        alive[0] if alive else None,
    )


# --------------------------------------------------------------------------- raw JSON-RPC


@dataclass
class Rpc:
    """A hand-driven client: write messages, read the server's, one at a time."""

    proc: subprocess.Popen[bytes]
    pump: StdoutPump
    sent: list[dict[str, Any]] = field(default_factory=list)
    seen: int = 0

    @classmethod
    def open(cls, fake: FakeCli, scenario: str = "happy", args: list[str] | None = None) -> Rpc:
        proc = fake.popen("codex", args or ARGS, scenario=scenario)
        return cls(proc, StdoutPump(proc))

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        self.raw(json.dumps(message).encode() + b"\n")

    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def messages(self) -> list[dict[str, Any]]:
        data = bytes(self.pump.received)
        return messages_of(data[: data.rfind(b"\n") + 1])

    def wait_for(
        self, pred: Callable[[dict[str, Any]], bool], timeout: float = 10
    ) -> dict[str, Any]:
        """The first new message matching ``pred`` (reads stdout until it arrives)."""
        give_up = time.monotonic() + timeout
        while True:
            found = self.messages()
            for index in range(self.seen, len(found)):
                if pred(found[index]):
                    self.seen = index + 1
                    return found[index]
            left = give_up - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching message; got {found[self.seen :]!r:.500}")
            try:
                if self.pump.next(left) is None:
                    raise AssertionError("stdout closed before the message arrived")
            except TimeoutError:
                continue

    def call(self, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send({"id": request_id, "method": method, "params": params})
        return self.wait_for(lambda m: m.get("id") == request_id and "method" not in m)

    def handshake(self) -> None:
        reply = self.call(1, "initialize", {"clientInfo": CLIENT})
        assert "result" in reply
        self.send({"method": "initialized"})

    def close(self) -> int:
        """Close stdin; the server must exit 0 on its own (wire §A.3.2)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=10)
        finally:
            while self.pump.next(5) is not None:
                pass
            assert_wire(bytes(self.pump.received), self.sent, strict=False)


@pytest.fixture
def rpc_factory(fake: FakeCli) -> Any:
    opened: list[Rpc] = []

    def factory(scenario: str = "happy", args: list[str] | None = None) -> Rpc:
        client = Rpc.open(fake, scenario, args)
        opened.append(client)
        return client

    yield factory
    for client in opened:
        kill_tree(client.proc)


# --------------------------------------------------------------------------- happy path


@pytest.mark.rule("FAKE-APPSERVER-HAPPY-001", "FAKE-APPSERVER-WIRE-001")
def test_happy_turn_through_the_engine_session(fake: FakeCli) -> None:
    live = drive(fake, check_alive=True)
    assert live.finished == Finished(RunStatus.COMPLETED)
    assert live.code == 0, live.stderr
    assert live.alive_after_turn is True, "app-server must not exit when the turn completes"
    (status,) = [e for e in live.of(Status) if e.session_id]
    assert UUID.match(status.session_id or "")
    assert [e.delta for e in live.of(ThinkingDelta)] == ["The user wants a page."]
    assert "I'll create the page." in live.text and "Done: hello.html is ready." in live.text
    (use,) = live.of(ToolUse)
    target = str((fake.cwd / "hello.html").resolve())
    assert use.name == "Write" and use.input["file_path"] == target
    (result,) = live.of(ToolResult)
    assert result.tool_use_id == use.id and not result.is_error
    (usage,) = live.of(Usage)
    assert usage.usage is not None
    assert (usage.usage["input_tokens"], usage.usage["output_tokens"]) == (120, 45)
    assert (fake.cwd / "hello.html").read_text(encoding="utf-8") == HTML
    # codex 0.171.0 ends a model call with its usage, then the rate-limit snapshot.
    methods = [m.get("method") for m in messages_of(live.stdout)]
    at = methods.index("thread/tokenUsage/updated")
    assert methods[at + 1] == "account/rateLimits/updated"
    assert methods.count("account/rateLimits/updated") == 1
    assert_wire(live.stdout, live.sent)
    # approvalPolicy never (what the engine sends): the server asks nothing.
    assert not [m for m in messages_of(live.stdout) if "id" in m and "method" in m]
    assert live.record["transport"] == "app-server"
    assert live.record["initialized_notification"] is True
    assert live.record["prompt"] == "Create hello.html"
    assert live.record["prompt_via"] == "turn/start"
    assert live.record["client_info"]["name"] == "adapter-harness"


@pytest.mark.rule("FAKE-APPSERVER-WIRE-001")
@pytest.mark.parametrize("scenario", ["text", "shell", "tool_error", "slow", "stderr", "api_error"])
def test_every_message_matches_the_generated_schema(fake: FakeCli, scenario: str) -> None:
    live = drive(fake, scenario=scenario)
    assert live.finished is not None and live.code == 0
    assert_wire(live.stdout, live.sent)
    completed = notes(live.stdout, "turn/completed")
    assert len(completed) == 1
    if scenario == "stderr":
        assert "warning: something noisy" in live.stderr


@pytest.mark.rule("FAKE-APPSERVER-WIRE-001")
def test_text_streams_in_one_delta_per_chunk(fake: FakeCli) -> None:
    live = drive(fake, scenario="text")
    deltas = [m["params"]["delta"] for m in notes(live.stdout, "item/agentMessage/delta")]
    assert deltas == ["Hello from ", "the fake model.", " PONG."]
    (done,) = [
        m
        for m in notes(live.stdout, "item/completed")
        if m["params"]["item"]["type"] == "agentMessage"
    ]
    assert done["params"]["item"]["text"] == "Hello from the fake model. PONG."
    assert live.text == "Hello from the fake model. PONG."


# --------------------------------------------------------------------------- lifecycle


@pytest.mark.rule("FAKE-APPSERVER-LIFECYCLE-001")
def test_handshake_errors_as_codex_reports_them(rpc_factory: Any) -> None:
    rpc: Rpc = rpc_factory()
    early = rpc.call(1, "thread/start", {})
    assert early["error"] == {"code": -32600, "message": "Not initialized"}
    assert list(early) == ["error", "id"]  # 0.171.0 writes the error first
    init = rpc.call(2, "initialize", {"clientInfo": CLIENT})
    agent = init["result"]["userAgent"]
    assert parse_server_version(agent) == "0.171.0"
    assert agent.startswith("adapter-harness/0.171.0 (")
    assert agent.endswith(") unknown (adapter-harness; 0.1.0)")
    again = rpc.call(3, "initialize", {"clientInfo": CLIENT})
    assert again["error"]["message"] == "Already initialized"
    rpc.send({"method": "initialized"})
    rpc.raw(b"this is not json\n")
    unknown = rpc.call(4, "bogus/method", {})
    assert unknown["error"]["code"] == -32600
    assert unknown["error"]["message"].startswith("Invalid request: unknown variant `bogus/method`")
    not_emulated = rpc.call(5, "thread/list", {})
    assert not_emulated["error"]["code"] == -32601
    lost = rpc.call(
        6, "turn/start", {"threadId": "019f0000-0000-7000-8000-000000000001", "input": []}
    )
    assert lost["error"]["message"] == "thread not found: 019f0000-0000-7000-8000-000000000001"
    policy = rpc.call(7, "thread/start", {"approvalPolicy": "bogus"})
    assert "unknown variant `bogus`" in policy["error"]["message"]
    # A client that sends the jsonrpc member is still understood.
    rpc.send({"jsonrpc": "2.0", "id": 8, "method": "thread/start", "params": {}})
    started = rpc.wait_for(lambda m: m.get("id") == 8)
    assert UUID.match(started["result"]["thread"]["id"])
    assert rpc.close() == 0
    assert b"Failed to deserialize JSONRPCMessage" in rpc.proc.stderr.read()  # type: ignore[union-attr]


@pytest.mark.rule("FAKE-APPSERVER-LIFECYCLE-001")
def test_the_server_serves_several_turns_then_exits_at_eof(rpc_factory: Any) -> None:
    rpc: Rpc = rpc_factory("text")
    rpc.handshake()
    thread = rpc.call(2, "thread/start", {"sandbox": "workspace-write", "approvalPolicy": "never"})
    thread_id = thread["result"]["thread"]["id"]
    assert rpc.wait_for(lambda m: m.get("method") == "thread/started")
    for n, request_id in enumerate((3, 4), start=1):
        turn = rpc.call(
            request_id,
            "turn/start",
            {"threadId": thread_id, "input": [{"type": "text", "text": f"turn {n}"}]},
        )
        assert turn["result"]["turn"]["status"] == "inProgress"
        done = rpc.wait_for(lambda m: m.get("method") == "turn/completed")
        assert done["params"]["turn"]["status"] == "completed"
        assert done["params"]["turn"]["id"] == turn["result"]["turn"]["id"]
        assert rpc.proc.poll() is None
    usage = notes(bytes(rpc.pump.received), "thread/tokenUsage/updated")
    totals = [u["params"]["tokenUsage"]["total"]["inputTokens"] for u in usage]
    assert totals == [10, 20], "total is cumulative over the thread, last is per call"
    assert rpc.close() == 0


@pytest.mark.rule("FAKE-APPSERVER-LIFECYCLE-001")
def test_ignore_stdin_close_keeps_the_server_alive(rpc_factory: Any) -> None:
    rpc: Rpc = rpc_factory("ignore_stdin")
    rpc.handshake()
    assert rpc.proc.stdin is not None
    rpc.proc.stdin.close()
    with pytest.raises(subprocess.TimeoutExpired):
        rpc.proc.wait(timeout=0.5)


@pytest.mark.rule("FAKE-APPSERVER-LIFECYCLE-001")
def test_stdin_eof_ends_a_hanging_turn_and_the_server(rpc_factory: Any) -> None:
    """codex 0.171.0 exits 0 at stdin EOF even while its model call hangs, and writes no
    turn/completed (probed live)."""
    rpc: Rpc = rpc_factory("hang")
    rpc.handshake()
    thread = rpc.call(2, "thread/start", {})
    thread_id = thread["result"]["thread"]["id"]
    rpc.call(3, "turn/start", {"threadId": thread_id, "input": [{"type": "text"}]})
    rpc.wait_for(
        lambda m: (
            m.get("method") == "item/completed" and m["params"]["item"]["type"] == "agentMessage"
        )
    )
    assert rpc.close() == 0
    assert not notes(bytes(rpc.pump.received), "turn/completed")


@pytest.mark.rule("FAKE-APPSERVER-LIFECYCLE-001")
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("mid_turn", [False, True], ids=["idle", "mid-turn"])
def test_sigterm_ends_the_server_with_exit_0(rpc_factory: Any, mid_turn: bool) -> None:
    """codex 0.171.0's app-server traps SIGTERM, idle or in a turn whose model call hangs,
    and exits 0 writing nothing more (probed live; recordings/real/codex/)."""
    rpc: Rpc = rpc_factory("hang")
    rpc.handshake()
    thread = rpc.call(2, "thread/start", {})
    rpc.wait_for(lambda m: m.get("method") == "thread/started")
    if mid_turn:
        thread_id = thread["result"]["thread"]["id"]
        rpc.call(3, "turn/start", {"threadId": thread_id, "input": [{"type": "text"}]})
        rpc.wait_for(
            lambda m: (
                m.get("method") == "item/completed"
                and m["params"]["item"]["type"] == "agentMessage"
            )
        )
    written = len(rpc.pump.received)
    rpc.proc.send_signal(signal.SIGTERM)
    assert rpc.proc.wait(timeout=10) == 0
    while rpc.pump.next(5) is not None:
        pass
    assert len(rpc.pump.received) == written


# --------------------------------------------------------------------------- patch previews


@pytest.mark.rule("FAKE-APPSERVER-PATCH-001")
def test_patch_previews_when_the_client_enables_them(fake: FakeCli) -> None:
    live = drive(fake)
    assert live.session.patch_streaming
    sent = [m for m in live.sent if m.get("method") == "thread/start"]
    assert sent[0]["params"]["config"]["features.apply_patch_streaming_events"] is True
    methods = [m.get("method") for m in messages_of(live.stdout)]
    first_preview = methods.index("item/fileChange/patchUpdated")
    item_started = [
        i
        for i, m in enumerate(messages_of(live.stdout))
        if m.get("method") == "item/started" and m["params"]["item"]["type"] == "fileChange"
    ]
    assert first_preview < item_started[0]
    previews = notes(live.stdout, "item/fileChange/patchUpdated")
    assert [p["params"]["changes"][0]["path"] for p in previews] == ["hello.html", "hello.html"]
    assert [p["params"]["changes"][0]["diff"] for p in previews] == ["", HTML]
    assert live.session.counters["patch_previews"] == 2
    assert live.session.counters["unsettled_previews"] == 0


@pytest.mark.rule("FAKE-APPSERVER-PATCH-001")
@pytest.mark.parametrize("enable", [False, True])
def test_no_previews_unless_enabled(rpc_factory: Any, fake: FakeCli, enable: bool) -> None:
    args = [*ARGS, "--enable", "apply_patch_streaming_events"] if enable else None
    rpc: Rpc = rpc_factory(args=args)
    rpc.handshake()
    thread = rpc.call(2, "thread/start", {"cwd": str(fake.cwd), "sandbox": "workspace-write"})
    thread_id = thread["result"]["thread"]["id"]
    rpc.call(3, "turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "go"}]})
    rpc.wait_for(lambda m: m.get("method") == "turn/completed")
    out = bytes(rpc.pump.received)
    assert bool(notes(out, "item/fileChange/patchUpdated")) is enable
    changes = [
        m["params"]["item"]["changes"]
        for m in notes(out, "item/completed")
        if m["params"]["item"]["type"] == "fileChange"
    ]
    assert changes == [
        [{"path": str((fake.cwd / "hello.html").resolve()), "kind": {"type": "add"}, "diff": HTML}]
    ]
    (diff,) = notes(out, "turn/diff/updated")
    assert diff["params"]["diff"].startswith("diff --git a/hello.html b/hello.html\nnew file")
    assert rpc.close() == 0


# --------------------------------------------------------------------------- resume


@pytest.mark.rule("FAKE-APPSERVER-RESUME-001")
def test_resume_continues_the_thread_and_replays_usage(fake: FakeCli) -> None:
    first = drive(fake, scenario="text")
    thread_id = first.session.session_id
    assert thread_id is not None
    request = SessionRequest(prompt="Again", cwd=str(fake.cwd), resume_session_id=thread_id)
    second = drive(fake, request, scenario="text")
    assert second.finished == Finished(RunStatus.COMPLETED)
    assert second.session.session_id == thread_id
    assert second.record["resumed"] is True and second.record["prior_turns"] == 1
    assert not notes(second.stdout, "thread/started"), "codex sends no thread/started on resume"
    # The replayed usage of turn 1 is not ours; ours is the thread total after turn 2.
    assert second.session.counters["foreign_notifications"] >= 1
    (usage,) = second.of(Usage)
    assert usage.usage is not None and usage.usage["input_tokens"] == 20
    assert_wire(second.stdout, second.sent)


@pytest.mark.rule("FAKE-APPSERVER-RESUME-001")
def test_resume_of_a_thread_codex_exec_started(fake: FakeCli) -> None:
    exec_run = fake.run("codex", ["exec", "--json", "--skip-git-repo-check"], input=b"hello")
    assert exec_run.code == 0, exec_run.err
    (started,) = [m for m in messages_of(exec_run.stdout) if m.get("type") == "thread.started"]
    request = SessionRequest(
        prompt="continue", cwd=str(fake.cwd), resume_session_id=started["thread_id"]
    )
    live = drive(fake, request, scenario="text")
    assert live.finished == Finished(RunStatus.COMPLETED)
    assert live.record["resumed"] is True and live.record["prior_turns"] == 1


@pytest.mark.rule("FAKE-APPSERVER-RESUME-001")
@pytest.mark.parametrize(
    ("thread_id", "message"),
    [
        ("019f0000-0000-7000-8000-000000000001", "no rollout found for thread id 019f0000-"),
        ("stale", "invalid session id: invalid character"),
    ],
)
def test_unknown_thread_resume_is_refused(fake: FakeCli, thread_id: str, message: str) -> None:
    request = SessionRequest(prompt="x", cwd=str(fake.cwd), resume_session_id=thread_id)
    live = drive(fake, request)
    assert live.finished is not None and live.finished.error is not None
    assert live.finished.error.code == "CODEX_APP_SERVER_RESUME_FAILED"
    assert message in live.finished.error.message and "(-32600)" in live.finished.error.message
    assert live.code == 0
    assert not (fake.home / ".fake-cli" / "codex" / "sessions").exists()


# --------------------------------------------------------------------------- interrupt


@pytest.mark.rule("FAKE-APPSERVER-INTERRUPT-001")
def test_interrupt_completes_the_turn_as_interrupted(fake: FakeCli) -> None:
    live = drive(
        fake, scenario="hang", cancel_when=lambda ev: any(isinstance(e, TextDelta) for e in ev)
    )
    assert live.finished == Finished(RunStatus.CANCELLED)
    assert live.code == 0
    interrupt = [m for m in live.sent if m.get("method") == "turn/interrupt"]
    assert len(interrupt) == 1
    replies = [m for m in messages_of(live.stdout) if m.get("id") == interrupt[0]["id"]]
    assert replies == [{"id": interrupt[0]["id"], "result": {}}]
    (done,) = notes(live.stdout, "turn/completed")
    assert done["params"]["turn"]["status"] == "interrupted"
    assert live.record["interrupted"] is True
    # codex 0.171.0 (recordings/real/codex/cancel.app-server.jsonl): the aborted model
    # call's rate limits, then the answer, then the turn's end.
    tail = [m.get("method") or m.get("id") for m in messages_of(live.stdout)][-4:]
    assert tail == [
        "account/rateLimits/updated",
        interrupt[0]["id"],
        "thread/status/changed",
        "turn/completed",
    ]
    assert_wire(live.stdout, live.sent)


@pytest.mark.rule("FAKE-APPSERVER-INTERRUPT-001", "FAKE-APPSERVER-WIRE-001")
def test_interrupt_answers_as_codex_does(rpc_factory: Any) -> None:
    """Another turn id names both ids, an unknown thread is not found, and the interrupt is
    answered {} once the turn has stopped (codex 0.171.0, probed live)."""
    rpc: Rpc = rpc_factory("hang")
    rpc.handshake()
    thread = rpc.call(2, "thread/start", {})
    thread_id = thread["result"]["thread"]["id"]
    turn = rpc.call(3, "turn/start", {"threadId": thread_id, "input": [{"type": "text"}]})
    turn_id = turn["result"]["turn"]["id"]
    rpc.wait_for(lambda m: m.get("method") == "item/agentMessage/delta")
    wrong = rpc.call(4, "turn/interrupt", {"threadId": thread_id, "turnId": "t"})
    assert wrong["error"] == {
        "code": -32600,
        "message": f"expected active turn id t but found {turn_id}",
    }
    other = "01a24b02-0000-7000-8000-000000000000"
    unknown = rpc.call(5, "turn/interrupt", {"threadId": other, "turnId": turn_id})
    assert unknown["error"] == {"code": -32600, "message": f"thread not found: {other}"}
    answer = rpc.call(6, "turn/interrupt", {"threadId": thread_id, "turnId": turn_id})
    assert answer == {"id": 6, "result": {}}
    done = rpc.wait_for(lambda m: m.get("method") == "turn/completed")
    assert done["params"]["turn"]["status"] == "interrupted"
    late = rpc.call(8, "turn/interrupt", {"threadId": thread_id, "turnId": turn_id})
    assert late["error"] == {"code": -32600, "message": "no active turn to interrupt"}
    assert rpc.close() == 0


@pytest.mark.rule("FAKE-APPSERVER-INTERRUPT-001")
def test_interrupt_without_an_active_turn(rpc_factory: Any) -> None:
    rpc: Rpc = rpc_factory()
    rpc.handshake()
    thread = rpc.call(2, "thread/start", {})
    thread_id = thread["result"]["thread"]["id"]
    reply = rpc.call(3, "turn/interrupt", {"threadId": thread_id, "turnId": "t"})
    assert reply["error"] == {"code": -32600, "message": "no active turn to interrupt"}
    assert rpc.close() == 0


# --------------------------------------------------------------------------- errors


@pytest.mark.rule("FAKE-APPSERVER-ERROR-001")
def test_api_error_fails_the_turn(fake: FakeCli) -> None:
    live = drive(fake, scenario="api_error")
    assert live.finished is not None and live.finished.error is not None
    assert live.finished.error.code == "CODEX_TURN_FAILED"
    assert "Internal server error" in live.finished.error.message
    assert live.finished.error.retryable  # codexErrorInfo internalServerError (HTTP 500)
    (error,) = notes(live.stdout, "error")
    assert error["params"]["willRetry"] is False
    (done,) = notes(live.stdout, "turn/completed")
    assert done["params"]["turn"]["status"] == "failed"
    assert done["params"]["turn"]["error"] == error["params"]["error"]
    assert live.code == 0


@pytest.mark.rule("FAKE-APPSERVER-ERROR-001")
def test_the_server_stays_up_after_a_failed_turn(rpc_factory: Any) -> None:
    rpc: Rpc = rpc_factory("api_error")
    rpc.handshake()
    thread_id = rpc.call(2, "thread/start", {})["result"]["thread"]["id"]
    for request_id in (3, 4):
        rpc.call(request_id, "turn/start", {"threadId": thread_id, "input": []})
        done = rpc.wait_for(lambda m: m.get("method") == "turn/completed")
        assert done["params"]["turn"]["status"] == "failed"
    assert rpc.close() == 0


# --------------------------------------------------------------------------- steps and faults


@pytest.mark.rule("FAKE-APPSERVER-STEPS-001")
def test_tools_as_thread_items(fake: FakeCli) -> None:
    scenario = fake.scenario_file(
        "tools",
        [
            {
                "kind": "tool",
                "tool": "shell",
                "id": "sh_ok",
                "command": "echo hi",
                "output": "hi\n",
            },
            {
                "kind": "tool",
                "tool": "shell",
                "id": "sh_bad",
                "command": "false",
                "output": "boom",
                "is_error": True,
            },
            {
                "kind": "tool",
                "tool": "other",
                "id": "mcp_1",
                "name": "mcp__docs__search",
                "input": {"q": "x"},
                "output": "found",
            },
            {
                "kind": "tool",
                "tool": "write",
                "id": "w_bad",
                "path": "nope.html",
                "content": "x",
                "is_error": True,
            },
            {"kind": "usage", "input_tokens": 9, "output_tokens": 4, "cached_read_tokens": 5},
        ],
    )
    live = drive(fake, scenario=scenario)
    assert live.finished == Finished(RunStatus.COMPLETED)
    assert_wire(live.stdout, live.sent)
    items = {
        m["params"]["item"]["id"]: m["params"]["item"] for m in notes(live.stdout, "item/completed")
    }
    assert items["sh_ok"]["type"] == "commandExecution"
    assert items["sh_ok"]["command"] == "/bin/bash -lc 'echo hi'"
    assert (items["sh_ok"]["status"], items["sh_ok"]["exitCode"]) == ("completed", 0)
    assert items["sh_ok"]["aggregatedOutput"] == "hi\n"
    assert (items["sh_bad"]["status"], items["sh_bad"]["exitCode"]) == ("failed", 1)
    assert items["mcp_1"]["type"] == "mcpToolCall"
    assert (items["mcp_1"]["server"], items["mcp_1"]["tool"]) == ("docs", "search")
    deltas = notes(live.stdout, "item/commandExecution/outputDelta")
    assert [d["params"]["delta"] for d in deltas] == ["hi\n", "boom"]
    assert items["w_bad"]["type"] == "fileChange" and items["w_bad"]["status"] == "failed"
    assert not (fake.cwd / "nope.html").exists()
    (usage,) = notes(live.stdout, "thread/tokenUsage/updated")
    assert usage["params"]["tokenUsage"]["last"]["cachedInputTokens"] == 5
    results = {r.tool_use_id: r for r in live.of(ToolResult)}
    assert len(live.of(ToolUse)) == 4 and len(results) == 4
    assert [r.is_error for r in results.values()] == [False, True, False, True]


@pytest.mark.rule("FAKE-APPSERVER-STEPS-001")
def test_malformed_and_foreign_lines(fake: FakeCli) -> None:
    malformed = drive(fake, scenario="malformed")
    assert malformed.finished == Finished(RunStatus.COMPLETED)
    assert malformed.session.counters["non_json_lines"] == 1
    (raw,) = malformed.of(Raw)
    assert raw.line.startswith('{"method":"item/agentMessage/delta"')
    foreign = drive(fake, scenario="foreign")
    assert foreign.finished == Finished(RunStatus.COMPLETED)
    assert foreign.session.counters["foreign_notifications"] >= 1
    assert "Not for this thread" not in foreign.text
    assert_wire(foreign.stdout, foreign.sent)


@pytest.mark.rule("FAKE-APPSERVER-STEPS-001")
def test_noise_and_early_exit(fake: FakeCli) -> None:
    noise = drive(fake, scenario="noise")
    assert noise.finished == Finished(RunStatus.COMPLETED)
    assert [r.line for r in noise.of(Raw)] == ["[SandboxDebug] starting", "debug: done"]
    early = drive(fake, scenario="exit_code")
    assert early.code == 7
    assert early.finished is not None and early.finished.error is not None
    assert early.finished.error.code == "CODEX_APP_SERVER_EOF"
    assert early.text == "Partial."


@pytest.mark.rule("FAKE-APPSERVER-STEPS-001")
def test_oversize_line_is_exactly_the_asked_size(fake: FakeCli) -> None:
    live = drive(fake, scenario="oversize")
    big = [line for line in live.stdout.split(b"\n") if len(line) > 1024 * 1024]
    (delta,) = [line for line in big if b'"item/agentMessage/delta"' in line[:40]]
    assert len(delta) == 2097152
    assert json.loads(delta)["method"] == "item/agentMessage/delta"
    # The session's 16 MiB line limit is not reached: the padded text arrives as text.
    assert live.finished == Finished(RunStatus.COMPLETED)
    assert len(live.text) > 2_000_000


@pytest.mark.rule("FAKE-APPSERVER-STEPS-001")
def test_crash_mid_line(fake: FakeCli) -> None:
    live = drive(fake, scenario="crash_mid_line")
    assert live.code == 3
    assert not live.stdout.endswith(b"\n")
    assert live.finished is not None and live.finished.error is not None
    assert live.finished.error.code == "CODEX_APP_SERVER_EOF"


# --------------------------------------------------------------------------- approvals, sandbox


@pytest.mark.rule("FAKE-APPSERVER-APPROVAL-001")
def test_untrusted_policy_asks_and_the_session_accepts(fake: FakeCli) -> None:
    request = SessionRequest(
        prompt="Create hello.html", cwd=str(fake.cwd), extra={"approval_policy": "untrusted"}
    )
    live = drive(fake, request)
    assert live.finished == Finished(RunStatus.COMPLETED)
    assert live.record["approvals"] == [
        {"method": "item/fileChange/requestApproval", "decision": "acceptForSession"}
    ]
    assert live.session.counters["approvals_answered"] == 1
    assert (fake.cwd / "hello.html").is_file()
    assert len(notes(live.stdout, "serverRequest/resolved")) == 1
    assert_wire(live.stdout, live.sent)


@pytest.mark.rule("FAKE-APPSERVER-APPROVAL-001")
def test_a_declined_command_does_not_run(rpc_factory: Any, fake: FakeCli) -> None:
    rpc: Rpc = rpc_factory("shell")
    rpc.handshake()
    thread = rpc.call(
        2, "thread/start", {"approvalPolicy": "untrusted", "sandbox": "workspace-write"}
    )
    thread_id = thread["result"]["thread"]["id"]
    rpc.call(3, "turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "ls"}]})
    ask = rpc.wait_for(lambda m: "id" in m and "method" in m)
    assert ask["method"] == "item/commandExecution/requestApproval"
    assert ask["params"]["itemId"] == "call_shell_1"
    rpc.send({"id": ask["id"], "result": {"decision": "decline"}})
    done = rpc.wait_for(
        lambda m: (
            m.get("method") == "item/completed"
            and m["params"]["item"]["type"] == "commandExecution"
        )
    )
    assert done["params"]["item"]["status"] == "declined"
    assert rpc.wait_for(lambda m: m.get("method") == "turn/completed")
    assert not notes(bytes(rpc.pump.received), "item/commandExecution/outputDelta")
    assert rpc.close() == 0


@pytest.mark.rule("FAKE-APPSERVER-SANDBOX-001")
def test_read_only_sandbox_rejects_the_write(fake: FakeCli) -> None:
    request = SessionRequest(
        prompt="Create hello.html", cwd=str(fake.cwd), extra={"sandbox": "read-only"}
    )
    live = drive(fake, request)
    assert live.finished == Finished(RunStatus.COMPLETED)
    assert not (fake.cwd / "hello.html").exists()
    assert live.record["rejected_writes"] == ["hello.html"]
    assert not live.of(ToolUse)
    assert "read-only sandbox" in live.stderr
    (response,) = [m for m in messages_of(live.stdout) if m.get("id") == 2]
    assert response["result"]["sandbox"]["type"] == "readOnly"


@pytest.mark.rule("FAKE-APPSERVER-PATCH-001")
@given(st.lists(st.sampled_from(["a\n", "b", "\n", "c\r\n", "d\x0b"]), max_size=6).map("".join))
@example("")
@example("one line")
@example("one line\n")
def test_a_new_files_diff_is_difflibs(new: str) -> None:
    """A new file's diff is built without difflib, and says what difflib says."""
    import difflib

    from fake_clis.codex_app_server import _added_diff

    expected = difflib.unified_diff(
        [], new.splitlines(keepends=True), fromfile="/dev/null", tofile="b/x.txt"
    )
    assert _added_diff("b/x.txt", new) == "".join(expected)


@pytest.mark.rule("FAKE-APPSERVER-WIRE-001")
def test_thread_ids_are_version_7_uuids() -> None:
    import uuid

    from fake_clis.codex_app_server import _uuid7

    for _ in range(50):
        text = _uuid7()
        parsed = uuid.UUID(text)
        assert str(parsed) == text and parsed.version == 7 and parsed.variant == uuid.RFC_4122
