"""The request log: one JSON line per request, no credential anywhere (MODEL-LOG-*)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.modelserver.log import RequestLog, RequestRecord
from harness.secrets.redact import SECRET_MARK
from tests.modelserver.conftest import ServeFn
from tests.modelserver.support import (
    CHAT_BASH,
    CHAT_WRITE,
    CLAUDE_WRITE,
    GEMINI_TOOLS,
    post,
    request,
)

FIELDS = {
    "t",
    "method",
    "path",
    "model",
    "stream",
    "tool_names",
    "message_roles",
    "structured",
    "reply_kind",
}


@pytest.mark.rule("MODEL-LOG-001")
def test_every_request_is_one_json_line_and_kept_in_memory(serve: ServeFn, tmp_path: Path) -> None:
    log_path = tmp_path / "log" / "requests.jsonl"
    server = serve("happy", log_path=log_path)
    post(
        server,
        "/v1/messages?beta=true",
        {
            "model": "claude-opus-5-5",
            "stream": True,
            "tools": [CLAUDE_WRITE],
            "messages": [{"role": "user", "content": "go"}, {"role": "system", "content": "s"}],
        },
    )
    post(
        server,
        "/v1/chat/completions",
        {
            "model": "mock-model",
            "stream": False,
            "tools": [CHAT_BASH, CHAT_WRITE],
            "messages": [
                {"role": "system", "content": "x"},
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "write", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c", "content": "ok"},
            ],
            "response_format": {"type": "json_object"},
        },
    )
    post(
        server,
        "/v1beta/models/g:streamGenerateContent?alt=sse",
        {"contents": [{"role": "user", "parts": [{"text": "go"}]}], "tools": GEMINI_TOOLS},
    )
    request(server, "HEAD", "/api/hello")
    request(server, "GET", "/nowhere")

    lines = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert len(lines) == 5
    assert len(server.requests) == 5
    assert all(set(line) >= FIELDS for line in lines)
    assert [line["method"] for line in lines] == ["POST", "POST", "POST", "HEAD", "GET"]
    first, second, third, probe, missing = lines
    assert first["path"] == "/v1/messages" and first["query"] == "beta=true"
    assert (first["model"], first["stream"]) == ("claude-opus-5-5", True)
    assert first["tool_names"] == ["Write"]
    assert first["message_roles"] == ["user", "system"]
    assert (first["structured"], first["reply_kind"], first["segment"]) == (False, "tool_call", 0)
    assert second["tool_names"] == ["bash", "write"]
    assert second["message_roles"] == ["system", "user", "assistant", "tool"]
    assert (second["structured"], second["reply_kind"]) == (True, "structured")
    assert third["tool_names"] == ["write_file", "run_shell_command", "save_memory"]
    assert third["message_roles"] == ["user"] and third["model"] == "g"
    assert (probe["reply_kind"], probe["status"]) == ("probe", 200)
    assert (missing["reply_kind"], missing["status"]) == ("not_found", 404)
    assert [r.to_json() for r in server.requests] == lines
    assert lines == sorted(lines, key=lambda line: line["t"])


@pytest.mark.rule("MODEL-LOG-001")
def test_the_log_appends_across_servers(serve: ServeFn, tmp_path: Path) -> None:
    log_path = tmp_path / "shared.jsonl"
    for _ in range(2):
        server = serve("text", log_path=log_path)
        request(server, "HEAD", "/")
        server.stop()
    assert len(log_path.read_text().splitlines()) == 2


@pytest.mark.rule("MODEL-LOG-002")
def test_credentials_never_reach_the_log(serve: ServeFn, tmp_path: Path) -> None:
    log_path = tmp_path / "requests.jsonl"
    server = serve("text", log_path=log_path)
    bearer = "sk-proj-LiveLookingKey0123456789abcdef"
    anthropic_key = "sk-ant-fake"  # short: not key-shaped, but it is the x-api-key value
    google_key = "AIzaSyA1234567890abcdefghijklmnopqrstuv"
    post(
        server,
        "/v1/chat/completions",
        {"model": "m", "messages": []},
        headers={"Authorization": f"Bearer {bearer}", "user-agent": f"cli/1 key={bearer}"},
    )
    post(
        server,
        "/v1/messages",
        {"model": f"m-{anthropic_key}", "messages": []},
        headers={"x-api-key": anthropic_key, "x-trace": f"echo {anthropic_key}"},
    )
    post(
        server,
        f"/v1beta/models/g:generateContent?key={google_key}&alt=sse",
        {"contents": []},
        headers={"x-goog-api-key": google_key},
    )
    post(
        server,
        "/v1/responses?token=abc12345678",
        {"model": "m", "input": "hi"},
        headers={"cookie": "session=s3cr3t-cookie-value", "x-other": "ghp_" + "a" * 36},
    )
    text = log_path.read_text()
    for secret in (
        bearer,
        anthropic_key,
        google_key,
        "abc12345678",
        "s3cr3t-cookie-value",
        "ghp_" + "a" * 36,
    ):
        assert secret not in text, secret
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["headers"]["authorization"] == SECRET_MARK
    assert SECRET_MARK in lines[0]["headers"]["user-agent"]
    assert lines[1]["headers"]["x-api-key"] == SECRET_MARK
    assert lines[1]["headers"]["x-trace"] == f"echo {SECRET_MARK}"
    assert lines[1]["model"] == f"m-{SECRET_MARK}"
    assert "alt=sse" in lines[2]["query"] and "key=" in lines[2]["query"]
    assert lines[2]["headers"]["x-goog-api-key"] == SECRET_MARK
    assert lines[3]["headers"]["cookie"] == SECRET_MARK
    assert SECRET_MARK in lines[3]["headers"]["x-other"]
    assert all(bearer not in json.dumps(r.to_json()) for r in server.requests)


@pytest.mark.rule("MODEL-LOG-001")
def test_request_log_without_a_path_keeps_records_in_memory() -> None:
    log = RequestLog()
    log.open()
    log.append(RequestRecord(t=1.0, method="GET", path="/v1/models", reply_kind="models"))
    copy = log.records
    copy.clear()
    assert [r.path for r in log.records] == ["/v1/models"]
    log.close()
