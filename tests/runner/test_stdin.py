"""RUN-STDIN-001: the prompt reaches the CLI the def's way (seed 002 §6.2, ref §2.1.8)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from harness.events import TextDelta, ToolUse, TurnEnd
from harness.host.prompt import stream_json_user_message
from harness.runner import run_agent
from tests.runner.conftest import FakeWorld, text_of

PROMPT = "Build a page.\nLine two with ünïcödé."

posix_only = pytest.mark.skipif(
    sys.platform == "win32", reason="select() on a pipe and #! scripts are POSIX"
)


def _record(path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body), encoding="utf-8")
    path.chmod(0o755)
    return str(path)


@pytest.mark.rule("RUN-STDIN-001")
def test_text_stdin_gets_the_prompt_then_eof(world: FakeWorld, tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    result = run_agent(
        world.request(
            "codex",
            "text",
            transport="exec-json",
            prompt=PROMPT,
            env_extra={"FAKE_CLI_RECORD": str(record)},
        )
    )
    assert result.succeeded, result.error
    seen = _record(record)
    assert seen["prompt"] == PROMPT and seen["prompt_via"] == "stdin"


@pytest.mark.rule("RUN-STDIN-001")
def test_stream_json_prompt_is_one_user_message_line(world: FakeWorld, tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    result = run_agent(
        world.request("claude", "happy", prompt=PROMPT, env_extra={"FAKE_CLI_RECORD": str(record)})
    )
    assert result.succeeded, result.error
    seen = _record(record)
    assert seen["prompt_via"] == "stdin-stream-json"
    assert seen["stdin_frames"] == [json.loads(stream_json_user_message(PROMPT))]
    assert result.counters["frames_written"] == 1


@pytest.mark.rule("RUN-STDIN-001")
@posix_only
def test_stream_json_stdin_stays_open_at_tool_use_and_closes_at_the_terminal_turn(
    world: FakeWorld, tmp_path: Path
) -> None:
    """A scripted claude-stream-json CLI reports whether stdin was closed, and when."""
    script = _script(
        tmp_path,
        "claude-like",
        """
        import json, select, sys

        def out(obj):
            sys.stdout.write(json.dumps(obj) + "\\n")
            sys.stdout.flush()

        def text(t):
            out({"type": "assistant", "message": {"content": [{"type": "text", "text": t}]}})

        def stdin_at_eof(wait):
            ready, _, _ = select.select([sys.stdin], [], [], wait)
            return bool(ready) and sys.stdin.buffer.read1(1) == b""

        sys.stdin.buffer.readline()  # the user message
        out({"type": "assistant", "message": {"id": "m1", "stop_reason": "tool_use",
             "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}})
        text("closed-at-tool-use " if stdin_at_eof(0.7) else "open-at-tool-use ")
        out({"type": "result", "subtype": "success", "is_error": False,
             "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}})
        text("eof-after-terminal" if stdin_at_eof(10) else "never-closed")
        """,
    )
    result = run_agent(world.request("claude", bin_override=script))
    assert result.succeeded, result.error
    assert [e.stop_reason for e in result.events if isinstance(e, TurnEnd)] == ["tool_use"]
    assert any(isinstance(e, ToolUse) for e in result.events)
    assert text_of(result.events) == "open-at-tool-use eof-after-terminal"


@pytest.mark.rule("RUN-STDIN-001")
def test_file_delivery_uses_a_private_file_removed_after_the_run(
    world: FakeWorld, tmp_path: Path
) -> None:
    record = tmp_path / "record.json"
    result = run_agent(
        world.request(
            "grok-build", "text", prompt=PROMPT, env_extra={"FAKE_CLI_RECORD": str(record)}
        )
    )
    assert result.succeeded, result.error
    seen = _record(record)
    assert seen["prompt"] == PROMPT and seen["prompt_via"] == "file"
    argv = list(result.argv)
    prompt_file = Path(argv[argv.index("--prompt-file") + 1])
    assert prompt_file.name == "prompt.md"
    assert not prompt_file.exists() and not prompt_file.parent.exists()
    # The file lives outside the project, so it is not reported as written there.
    assert result.files_written == ()


@pytest.mark.rule("RUN-STDIN-001")
@posix_only
def test_argv_delivery_closes_stdin_at_once(world: FakeWorld, tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        "aider-like",
        """
        import select, sys
        ready, _, _ = select.select([sys.stdin], [], [], 10)
        eof = bool(ready) and sys.stdin.buffer.read() == b""
        print("stdin-eof" if eof else "stdin-open", flush=True)
        """,
    )
    result = run_agent(world.request("aider", prompt=PROMPT, bin_override=script))
    assert result.succeeded, result.error
    assert text_of(result.events).strip() == "stdin-eof"
    assert PROMPT not in result.argv  # redacted in the report


@pytest.mark.rule("RUN-STDIN-001", "RUN-SESSION-001")
def test_protocol_delivery_writes_the_sessions_frames(world: FakeWorld, tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    result = run_agent(
        world.request(
            "deepseek-harness",
            "text",
            prompt=PROMPT,
            request_id="run-abc",
            env_extra={"FAKE_CLI_RECORD": str(record)},
        )
    )
    assert result.succeeded, result.error
    frames = _record(record)["stdin_frames"]
    assert isinstance(frames, list)
    execute = frames[0]
    assert execute["type"] == "execute" and execute["request_id"] == "run-abc"
    assert execute["prompt"] == PROMPT
    assert Path(execute["cwd"]).is_absolute()
    assert any(isinstance(e, TextDelta) for e in result.events)
