"""Scripted API errors say "retry now": the real CLIs' backoff must not stall a live run.

Live runs (real-clis.md second batch; tests/live/test_recipes_more.py) showed opencode
1.18.33 spending 93 s in exponential backoff on the ``api_error`` scenario's HTTP 500
and copilot and kimi several seconds each; with ``retry-after-ms: 1`` / ``retry-after:
0`` every retry still happens (the request log keeps them) but without the waits.
``retry-after-ms`` must not be ``0``: the OpenAI and Anthropic SDKs treat a zero as
absent and fall back to their own backoff.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.modelserver.app import RETRY_HEADERS
from tests.modelserver.conftest import ServeFn
from tests.modelserver.support import post, scenario_of

#: One request per API, each written from the documented request shape.
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    (
        "/v1/chat/completions",
        {
            "model": "mock-model",
            "stream": True,
            "messages": [{"role": "user", "content": "Say hello please."}],
        },
    ),
    (
        "/v1/responses",
        {
            "model": "gpt-5.5",
            "stream": True,
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}],
        },
    ),
    (
        "/v1/messages",
        {
            "model": "claude-opus-5-5",
            "stream": True,
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "Say hello please."}],
        },
    ),
    (
        "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": "Say hello please."}]}]},
    ),
]


def _error_scenario(status: int) -> Any:
    return scenario_of(
        "err", [{"kind": "api_error", "message": "Internal server error", "status": status}]
    )


@pytest.mark.rule("MODEL-ERR-001")
@pytest.mark.parametrize(("path", "body"), REQUESTS, ids=[p for p, _ in REQUESTS])
@pytest.mark.parametrize("status", [500, 429, 400])
def test_an_api_error_reply_asks_for_an_immediate_retry(
    serve: ServeFn, path: str, body: dict[str, Any], status: int
) -> None:
    server = serve(_error_scenario(status))
    reply = post(server, path, body)
    assert reply.status == status
    assert reply.headers["retry-after-ms"] == "1"
    assert reply.headers["retry-after"] == "0"
    # the body is still the API's own error shape
    assert "error" in reply.json()


@pytest.mark.rule("MODEL-ERR-001")
def test_retry_after_ms_is_positive_so_sdks_do_not_treat_it_as_absent() -> None:
    # openai-node / anthropic-sdk: `if (retryAfterMs && 0 <= ms < 60_000)`: 0 is falsy.
    assert float(RETRY_HEADERS["retry-after-ms"]) > 0
    assert int(RETRY_HEADERS["retry-after"]) == 0


@pytest.mark.rule("MODEL-ERR-001")
@pytest.mark.parametrize(("path", "body"), REQUESTS[:1])
def test_a_successful_reply_carries_no_retry_headers(
    serve: ServeFn, path: str, body: dict[str, Any]
) -> None:
    server = serve(scenario_of("ok", [{"kind": "text", "text": "Hello"}]))
    reply = post(server, path, body)
    assert reply.status == 200
    assert "retry-after-ms" not in reply.headers
    assert "retry-after" not in reply.headers


@pytest.mark.rule("MODEL-ERR-001")
def test_every_retry_is_still_logged(serve: ServeFn) -> None:
    server = serve(_error_scenario(500))
    for _ in range(3):
        assert post(server, *REQUESTS[0]).status == 500
    assert [r.status for r in server.requests] == [500, 500, 500]
    assert {r.reply_kind for r in server.requests} == {"error"}
