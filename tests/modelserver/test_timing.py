"""The server's own time per request (MODEL-TIMING-001): held time vs scripted pauses.

benchmarks/live.py reports ``added_ms`` (held minus scripted) over real CLI runs; these
tests pin the accounting, never a speed (speed lives in benchmarks/, as design says).
"""

from __future__ import annotations

import http.client
import json
import threading

import pytest

from harness.modelserver import RequestTiming
from tests.modelserver.conftest import ServeFn
from tests.modelserver.support import post, request, scenario_of

BODY = {
    "model": "m",
    "stream": True,
    "max_tokens": 10,
    "messages": [{"role": "user", "content": "hi"}],
}


@pytest.mark.rule("MODEL-TIMING-001")
def test_scripted_pauses_are_counted_apart_from_the_servers_own_time(serve: ServeFn) -> None:
    server = serve(
        scenario_of(
            "paced",
            [
                {"kind": "text", "text": "a"},
                {"kind": "sleep", "ms": 120},
                {"kind": "text", "text": "b"},
                {"kind": "sleep", "ms": 80},
                {"kind": "text", "text": "c"},
            ],
        )
    )
    reply = post(server, "/v1/messages", BODY)
    assert reply.status == 200
    request(server, "GET", "/")  # a probe: no pause at all
    streamed, probe = server.timings
    assert (streamed.seq, streamed.path, streamed.reply_kind) == (1, "/v1/messages", "text")
    # asyncio may wake up to a clock tick early; the pauses were slept, not skipped.
    assert streamed.scripted_ms >= 200 - 2 * 16
    assert streamed.total_ms >= streamed.scripted_ms + streamed.upload_ms
    assert 0 < streamed.upload_ms < streamed.total_ms  # the body was read before the reply
    assert streamed.added_ms == pytest.approx(
        streamed.total_ms - streamed.scripted_ms - streamed.upload_ms
    )
    assert not streamed.hung
    # CPU time is work, not waiting: far less than the 200 ms the pauses slept.
    assert 0 < streamed.cpu_ms < streamed.scripted_ms
    assert (probe.reply_kind, probe.scripted_ms, probe.hung) == ("probe", 0.0, False)
    assert probe.upload_ms == 0.0  # no body to wait for
    assert probe.added_ms == probe.total_ms


@pytest.mark.rule("MODEL-TIMING-001")
def test_a_hung_request_is_marked_and_timed_when_it_ends(serve: ServeFn) -> None:
    server = serve("hang")
    got: list[int] = []

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        try:
            conn.request(
                "POST",
                "/v1/messages",
                body=json.dumps(BODY),
                headers={"content-type": "application/json"},
            )
            response = conn.getresponse()
            got.append(response.status)
            response.read()
        except (OSError, http.client.HTTPException):
            pass
        finally:
            conn.close()

    thread = threading.Thread(target=client)
    thread.start()
    for _ in range(500):
        if server.requests:
            break
        threading.Event().wait(0.01)
    assert server.timings == []  # still held open
    server.stop()
    thread.join(10)
    (timing,) = server.timings
    assert isinstance(timing, RequestTiming) and timing.hung and got == [200]


@pytest.mark.rule("MODEL-TIMING-001")
def test_added_time_is_never_negative() -> None:
    assert RequestTiming(1, "/", "text", total_ms=5.0, scripted_ms=5.2).added_ms == 0.0
    assert RequestTiming(1, "/", "text", total_ms=7.5, scripted_ms=5.0).added_ms == 2.5
    late_body = RequestTiming(1, "/", "text", total_ms=9.0, scripted_ms=5.0, upload_ms=3.0)
    assert late_body.added_ms == 1.0


@pytest.mark.rule("MODEL-TIMING-001")
def test_a_running_server_keeps_full_collections_off_the_harness_objects() -> None:
    """While a thread-mode server runs, what the process held before it started is in the
    permanent generation (a full collection in the server's thread skips it); the last
    server to stop gives it back. (Counted relative to servers other tests of this worker
    may still run.)"""
    import gc

    from harness.modelserver import ModelServer
    from harness.modelserver.app import _GC_FREEZE

    others = _GC_FREEZE.users
    first = ModelServer("text").start()
    try:
        assert _GC_FREEZE.users == others + 1 and gc.get_freeze_count() > 0
        second = ModelServer("text").start()
        second.stop()
        assert _GC_FREEZE.users == others + 1 and gc.get_freeze_count() > 0
    finally:
        first.stop()
    assert _GC_FREEZE.users == others
    assert (gc.get_freeze_count() == 0) == (others == 0)
    # A server that cannot start (its port is taken) leaves no count behind.
    with ModelServer("text") as holder:
        clash = ModelServer("text", port=holder.port)
        with pytest.raises(OSError):
            clash.start()
        assert _GC_FREEZE.users == others + 1
    assert _GC_FREEZE.users == others
