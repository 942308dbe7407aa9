"""The codebuddy fake speaks what codebuddy-headless 2.163.0 printed against the scripted
model server (recordings/real/codebuddy/*.jsonl), where it differs from Claude Code."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from harness.events import Error, ToolResult, ToolUse, TurnEnd
from tests.fakes.conftest import FakeCli, events_of, parse_stream

FORMAT = "claude-stream-json"
ARGS = [
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    "bypassPermissions",
    "-y",
]
PROMPT = b'{"type":"user","message":{"role":"user","content":"go"}}\n'


def _frames(stdout: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


@pytest.mark.rule("FAKE-CODEBUDDY-001")
def test_an_api_error_is_an_assistant_text_an_errored_result_and_exit_zero(
    fake: FakeCli,
) -> None:
    result = fake.run("codebuddy", ARGS, scenario="api_error", input=PROMPT)
    assert result.code == 0, result.err  # the real CLI exits 0; the result says it failed
    frames = _frames(result.stdout)
    final = frames[-1]
    assert final["type"] == "result" and final["subtype"] == "error_during_execution"
    assert final["is_error"] is True and "result" not in final
    (text,) = final["errors"]
    assert re.fullmatch(r"500 Internal server error \([0-9a-f]{32}/[0-9a-f-]{36}\)", text)
    said = [f for f in frames if f["type"] == "assistant"]
    assert [b["text"] for f in said for b in f["message"]["content"]] == [text]
    (error,) = events_of(parse_stream(FORMAT, result.stdout), Error)
    assert error.message == text


@pytest.mark.rule("FAKE-CODEBUDDY-001")
def test_a_write_is_framed_by_snapshots_and_its_tool_use_ends_the_message(
    fake: FakeCli,
) -> None:
    result = fake.run("codebuddy", ARGS, scenario="happy", input=PROMPT)
    assert result.code == 0, result.err
    frames = _frames(result.stdout)
    kinds = [f["type"] for f in frames]
    assert kinds.count("file-history-snapshot") == 2
    first = kinds.index("file-history-snapshot")
    assert kinds[first + 1] == "assistant" and kinds[first + 2] == "file-history-snapshot"
    use = frames[first + 1]["message"]
    assert use["content"][0]["type"] == "tool_use" and use["stop_reason"] == "tool_use"
    # system/init opens the turn and is printed again just before the result
    inits = [i for i, f in enumerate(frames) if f.get("subtype") == "init"]
    assert inits[0] == 0 and inits[-1] == len(frames) - 2 and len(inits) == 2
    events = parse_stream(FORMAT, result.stdout)
    assert [t.stop_reason for t in events_of(events, TurnEnd)] == ["tool_use"]
    (done,) = events_of(events, ToolResult)
    (call,) = events_of(events, ToolUse)
    assert done.tool_use_id == call.id and not done.is_error


@pytest.mark.rule("FAKE-CODEBUDDY-001")
def test_a_shell_result_is_codebuddys_command_report(fake: FakeCli) -> None:
    result = fake.run("codebuddy", ARGS, scenario="shell", input=PROMPT)
    assert result.code == 0, result.err
    (user,) = [f for f in _frames(result.stdout) if f["type"] == "user"]
    (block,) = user["message"]["content"]
    assert block["content"] == [
        {
            "type": "text",
            "text": "Command: echo hi\nStdout: hi\n\nStderr: (empty)\nExit Code: 0\nSignal: (none)",
        }
    ]
