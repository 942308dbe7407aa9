"""The server itself: binding, lifecycle, routing, probes, listings, pauses and hangs.

MODEL-BIND-001/002, MODEL-ROUTE-001/002, MODEL-SCRIPT-006. Every test talks to a real
server on 127.0.0.1 through a real socket.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time
from typing import Any

import aiohttp
import psutil
import pytest

from harness.modelserver import ModelServer, NonLoopbackHostError, ServerStateError
from harness.modelserver.app import SHUTDOWN_GRACE_S, check_loopback, resolve_route
from tests.modelserver.conftest import ServeFn
from tests.modelserver.support import post, request, scenario_of

CHAT = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def listening(port: int) -> bool:
    return any(
        c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN
        for c in psutil.Process().net_connections(kind="inet")
    )


def server_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "modelserver"]


# -- binding ------------------------------------------------------------------------------------
@pytest.mark.rule("MODEL-BIND-001")
@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "192.168.1.10", "10.0.0.1", "8.8.8.8", "example.com", ""]
)
def test_a_non_loopback_host_is_refused_before_binding(host: str) -> None:
    before = len(psutil.Process().net_connections(kind="inet"))
    with pytest.raises(NonLoopbackHostError) as info:
        ModelServer("text", host=host)
    assert info.value.rule == "MODEL-BIND-001"
    assert repr(host) in str(info.value)
    assert len(psutil.Process().net_connections(kind="inet")) == before


@pytest.mark.rule("MODEL-BIND-001")
def test_loopback_spellings_are_accepted() -> None:
    assert check_loopback("127.0.0.1") == "127.0.0.1"
    assert check_loopback("127.0.0.2") == "127.0.0.2"
    assert check_loopback("localhost") == "127.0.0.1"
    assert check_loopback("::1") == "::1"
    assert check_loopback("[::1]") == "::1"
    with ModelServer("text", host="localhost") as server:
        assert server.url == f"http://127.0.0.1:{server.port}"
        addresses = {
            c.laddr.ip
            for c in psutil.Process().net_connections(kind="inet")
            if c.laddr and c.laddr.port == server.port and c.status == psutil.CONN_LISTEN
        }
        assert addresses == {"127.0.0.1"}


# -- lifecycle ------------------------------------------------------------------------------------
@pytest.mark.rule("MODEL-BIND-002")
def test_start_stop_leaves_no_thread_or_socket_behind() -> None:
    proc = psutil.Process()
    fds_before = proc.num_fds() if hasattr(proc, "num_fds") else None
    threads_before = {t.ident for t in threading.enumerate()}
    server = ModelServer("text").start()
    port = server.port
    assert listening(port)
    assert len(server_threads()) == 1
    assert post(server, "/v1/chat/completions", CHAT).status == 200
    with pytest.raises(ServerStateError):
        server.start()
    server.stop()
    assert not listening(port)
    assert server_threads() == []
    assert {t.ident for t in threading.enumerate()} <= threads_before
    assert not server.running
    with pytest.raises(ServerStateError):
        _ = server.port
    if fds_before is not None:
        assert proc.num_fds() == fds_before
    server.stop()  # a second stop is a no-op
    # the port is free again, and the same object can serve again
    with ModelServer("text", port=port) as again:
        assert again.port == port
        assert post(again, "/v1/chat/completions", CHAT).status == 200
    assert not listening(port)
    server.start()
    try:
        assert post(server, "/v1/chat/completions", CHAT).status == 200
    finally:
        server.stop()


@pytest.mark.rule("MODEL-BIND-002")
def test_async_mode_runs_on_the_callers_loop_and_cleans_up() -> None:
    async def scenario() -> tuple[int, str, int]:
        before = set(asyncio.all_tasks())
        async with ModelServer("text") as server:
            assert server_threads() == []  # no thread in async mode
            port = server.port
            async with (
                aiohttp.ClientSession() as session,
                session.post(server.base_url() + "/chat/completions", json=CHAT) as resp,
            ):
                text = await resp.text()
                status = resp.status
            with pytest.raises(ServerStateError):
                server.stop()  # started on this loop: astop() is the way
        assert set(asyncio.all_tasks()) <= before | {asyncio.current_task()}
        return status, text, port

    status, text, port = asyncio.run(scenario())
    assert status == 200 and "Hello from " in text
    assert not listening(port)


# -- routing -------------------------------------------------------------------------------------
@pytest.mark.rule("MODEL-ROUTE-001")
@pytest.mark.parametrize(
    ("method", "path", "kind"),
    [
        ("POST", "/v1/messages", "messages"),
        ("POST", "/messages", "messages"),
        ("POST", "/api/anthropic/v1/messages", "messages"),
        ("POST", "/v1/messages/count_tokens", "count_tokens"),
        ("POST", "/v1/responses", "responses"),
        ("POST", "/openai/v1/responses/", "responses"),
        ("POST", "/v1/chat/completions", "chat"),
        ("POST", "/custom/base/chat/completions", "chat"),
        ("POST", "/v1beta/models/gemini-3.8-flash:streamGenerateContent", "generate"),
        ("POST", "/v1beta/models/gemini-3.8-flash:generateContent", "generate"),
        ("POST", "/v1beta/models/gemini-3.8-flash:countTokens", "gemini_count"),
        ("GET", "/v1/models", "models"),
        ("GET", "/v1beta/models", "models"),
        ("GET", "/v1/models/gpt-5.5", "model"),
        ("HEAD", "/", "probe"),
        ("HEAD", "/api/hello", "probe"),
        ("GET", "/api/hello", "probe"),
        ("POST", "/v1/completions", "not_found"),
        ("GET", "/v1/messages", "not_found"),
        ("DELETE", "/v1/responses", "not_found"),
    ],
)
def test_routes_match_by_suffix_under_any_prefix(method: str, path: str, kind: str) -> None:
    assert resolve_route(method, path).kind == kind


@pytest.mark.rule("MODEL-ROUTE-001")
def test_prefixed_paths_and_queries_are_served_and_unknown_paths_get_404(serve: ServeFn) -> None:
    server = serve("text")
    for path in ("/v1/chat/completions?foo=1", "/openai/chat/completions", "/chat/completions"):
        reply = post(server, path, CHAT)
        assert reply.status == 200, path
        assert b"PONG" in reply.body
    gemini = post(
        server,
        "/proxy/v1beta/models/x:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    )
    assert gemini.status == 200 and b"PONG" in gemini.body
    missing = post(server, "/v1/embeddings", {"input": "x"})
    assert missing.status == 404
    assert "no route" in missing.json()["error"]["message"]
    assert server.requests[-1].reply_kind == "not_found"
    assert server.requests[-1].status == 404


@pytest.mark.rule("MODEL-ROUTE-001")
def test_a_body_that_is_not_a_json_object_gets_the_apis_400(serve: ServeFn) -> None:
    server = serve("text")
    anth = post(server, "/v1/messages", b"{not json")
    assert anth.status == 400
    assert anth.json()["type"] == "error"
    assert anth.json()["error"]["type"] == "invalid_request_error"
    chat = post(server, "/v1/chat/completions", b"[1, 2]")
    assert chat.status == 400 and chat.json()["error"]["type"] == "invalid_request_error"
    assert [r.reply_kind for r in server.requests] == ["bad_request", "bad_request"]


@pytest.mark.rule("MODEL-ROUTE-002")
def test_probes_and_model_listings(serve: ServeFn) -> None:
    server = serve("text", models=("mock-model", "gpt-5.5"))
    for path in ("/", "/api/hello"):
        head = request(server, "HEAD", path)
        assert head.status == 200 and head.body == b""
    assert request(server, "GET", "/api/hello").status == 200
    listing = request(server, "GET", "/v1/models").json()
    assert [m["id"] for m in listing["data"]] == ["mock-model", "gpt-5.5"]  # OpenAI/Anthropic
    assert listing["object"] == "list" and listing["has_more"] is False
    assert [m["name"] for m in listing["models"]] == ["models/mock-model", "models/gpt-5.5"]
    assert all(m["type"] == "model" for m in listing["data"])
    one = request(server, "GET", "/v1/models/claude-opus-5-5").json()
    assert one["id"] == "claude-opus-5-5" and one["object"] == "model"
    gem = request(server, "GET", "/v1beta/models").json()
    assert "generateContent" in gem["models"][0]["supportedGenerationMethods"]
    assert {r.reply_kind for r in server.requests} == {"probe", "models"}


# -- pauses and hangs ------------------------------------------------------------------------------
def _timed_lines(
    server: ModelServer, body: dict[str, Any]
) -> tuple[float, list[tuple[float, bytes]]]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    start = time.monotonic()
    conn.request(
        "POST",
        "/v1/chat/completions",
        body=json.dumps(body),
        headers={"content-type": "application/json"},
    )
    resp = conn.getresponse()
    headers_at = time.monotonic() - start
    lines: list[tuple[float, bytes]] = []
    while True:
        line = resp.readline()
        if not line:
            break
        if line.startswith(b"data:"):
            lines.append((time.monotonic() - start, line))
    conn.close()
    return headers_at, lines


@pytest.mark.rule("MODEL-SCRIPT-006")
def test_sleep_steps_pause_between_deltas(serve: ServeFn) -> None:
    server = serve("slow")  # a, sleep 50 ms, b, sleep 50 ms, c
    _, lines = _timed_lines(server, CHAT)
    texts = [
        json.loads(line[5:])["choices"][0]["delta"].get("content")
        for _, line in lines
        if line.strip() != b"data: [DONE]"
    ]
    assert [t for t in texts if t] == ["a", "b", "c"]
    # The gaps as the server wrote them (its own clock, around its own sleeps): when the
    # client reads is up to the machine's load, so it proves nothing about the pauses.
    server.stop()  # the handler records its timing after the last byte: let it finish
    (timing,) = [t for t in server.timings if t.reply_kind == "text"]
    first, second, third = timing.writes_ms
    slack = time.get_clock_info("monotonic").resolution * 1000 + 1  # a timer may fire early
    assert second - first >= 50 - slack and third - second >= 50 - slack, timing.writes_ms


@pytest.mark.rule("MODEL-SCRIPT-006")
def test_stall_delays_the_reply_before_any_byte(serve: ServeFn) -> None:
    server = serve(
        scenario_of(
            "stall",
            [
                {"kind": "tool", "tool": "shell", "id": "s1", "command": "true"},
                {"kind": "text", "text": "after"},
            ],
            stall_ms=300,
        )
    )
    tools = [
        {
            "type": "function",
            "function": {
                "name": "bash",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
            },
        }
    ]
    headers_at, _ = _timed_lines(server, dict(CHAT, tools=tools))
    assert headers_at >= 0.28
    after_tool = dict(
        CHAT,
        tools=tools,
        messages=[
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "s1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "s1", "content": ""},
        ],
    )
    _, lines = _timed_lines(server, after_tool)  # segment 1 (not stalled: test_script.py)
    assert any(b"after" in line for _, line in lines)
    assert [r.segment for r in server.requests] == [0, 1]


@pytest.mark.rule("MODEL-SCRIPT-006")
def test_hang_holds_the_stream_open_until_the_server_stops() -> None:
    server = ModelServer("hang").start()
    got: list[bytes] = []
    finished = threading.Event()

    def read() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
        conn.request(
            "POST",
            "/v1/chat/completions",
            body=json.dumps(CHAT),
            headers={"content-type": "application/json"},
        )
        resp = conn.getresponse()
        try:
            while True:
                line = resp.readline()
                if not line:
                    break
                got.append(line)
        except (http.client.HTTPException, OSError):
            pass
        conn.close()
        finished.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 5
    while not any(b"Thinking about it" in line for line in got) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert any(b"Thinking about it" in line for line in got)
    assert not finished.wait(0.3)  # text sent, then nothing: no finish_reason, no [DONE]
    assert not any(b'finish_reason":"stop' in line or b"[DONE]" in line for line in got)
    started = time.monotonic()
    server.stop()
    # the hang ends on the stop signal, not by cancellation after the shutdown grace
    assert time.monotonic() - started < SHUTDOWN_GRACE_S
    assert finished.wait(5)
    reader.join(5)
    assert not any(b"[DONE]" in line for line in got)


@pytest.mark.rule("MODEL-SCRIPT-006")
@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("stderr", "Hello."),
        ("crash_mid_line", "Starting."),
        ("noise", "Hello."),
        ("oversize", "Before.After."),
    ],
)
def test_cli_side_steps_are_not_played(serve: ServeFn, name: str, text: str) -> None:
    server = serve(name)
    reply = post(server, "/v1/chat/completions", dict(CHAT, stream=False))
    choice = reply.json()["choices"][0]
    assert choice["message"]["content"] == text
    assert choice["finish_reason"] == "stop"


@pytest.mark.rule("MODEL-STRUCT-001", "MODEL-LOG-001")
def test_an_unsatisfiable_schema_gets_a_400_and_a_failure_a_500(
    serve: ServeFn, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve("text")
    bad = {
        "model": "m",
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
        "output_config": {"format": {"type": "json_schema", "schema": {"$ref": "#/$defs/missing"}}},
    }
    reply = post(server, "/v1/messages", bad)
    assert reply.status == 400
    assert reply.json()["error"]["type"] == "invalid_request_error"
    assert "$defs/missing" in reply.json()["error"]["message"]

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("planner bug")

    monkeypatch.setattr("harness.modelserver.app.plan_reply", broken)
    failed = post(server, "/v1/chat/completions", CHAT)
    assert failed.status == 500
    assert "planner bug" in failed.json()["error"]["message"]
    assert [(r.reply_kind, r.status) for r in server.requests] == [
        ("bad_request", 400),
        ("server_error", 500),
    ]
