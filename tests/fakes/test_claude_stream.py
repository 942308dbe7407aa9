"""The claude-stream-json fakes (claude, codebuddy, amp) as real processes, read by the engine.

Rules: FAKE-CLAUDE-001..010, FAKE-CODEBUDDY-001, FAKE-AMP-001..002
(conformance/rules/fakes_stream.py). Each test starts ``python -m fake_clis AGENT ...`` and
feeds its stdout to ``harness.streams.claude``; stream-json input is driven live, writing
the user message and closing stdin when the engine says so (``harness.host.prompt``).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from harness.defs.registry import get_agent_def
from harness.defs.types import AgentDef, BuildOptions, RuntimeContext
from harness.events import (
    Error,
    Event,
    Raw,
    Status,
    TextDelta,
    ThinkingDelta,
    ThinkingStart,
    ToolInputDelta,
    ToolResult,
    ToolUse,
    TurnEnd,
    Usage,
)
from harness.host.launch import RealFileSystem
from harness.host.prompt import is_clean_terminal_turn, stream_json_user_message
from harness.protocols.base import Actions, SessionRequest
from harness.runtime.detect import AuthStatus, detect_agent
from tests.fakes.conftest import FakeCli, FakeResult, events_of, install_shim, parse_stream, text_of
from tests.support.drive import StreamJsonTurns, drive_session
from tests.support.processes import StdoutPump, kill_tree

FORMAT = "claude-stream-json"
CLAUDE = get_agent_def("claude")
CODEBUDDY = get_agent_def("codebuddy")
AMP = get_agent_def("amp")
HEAD = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
BYPASS = ["--permission-mode", "bypassPermissions"]
ALL_CAPS = {
    "partialMessages": True,
    "addDir": True,
    "effort": True,
    "forwardSubagentText": True,
    "customAgents": True,
}
HTML = "<!doctype html>\n<h1>Hello</h1>\n"


OTHER_STEPS: list[dict[str, Any]] = [
    {"kind": "thinking", "text": "Look first.", "chunks": ["Look ", "first."]},
    {
        "kind": "tool",
        "tool": "other",
        "id": "call_other_1",
        "name": "{name}",
        "input": {"path": "README.md"},
        "output": "# readme",
    },
    {"kind": "text", "text": "Read it."},
    {"kind": "usage", "input_tokens": 5, "output_tokens": 3, "cost_usd": 0.25},
]
COMMON_STEPS: list[dict[str, Any]] = [
    {"kind": "noise", "text": "debug: starting"},
    {"kind": "stderr", "text": "warning: noisy\n"},
    {"kind": "sleep", "ms": 10},
    {"kind": "text", "text": "Hello."},
]


def other_steps(name: str) -> list[dict[str, Any]]:
    """A read-only tool of another kind (``tool: other``) named ``name``."""
    steps: list[dict[str, Any]] = json.loads(json.dumps(OTHER_STEPS).replace("{name}", name))
    return steps


def build(defn: AgentDef, **kw: Any) -> list[str]:
    """The def's own argv (the prompt travels on stdin for every def here)."""
    ctx = kw.pop("ctx", RuntimeContext())
    dirs = kw.pop("dirs", ())
    return defn.build_args("the prompt", [], list(dirs), BuildOptions(**kw), ctx)


def user_line(prompt: str = "Create hello.html") -> bytes:
    return stream_json_user_message(prompt)


def run_claude(fake: FakeCli, args: list[str], scenario: str = "happy", **kw: Any) -> FakeResult:
    return fake.run("claude", args, scenario=scenario, input=user_line(), **kw)


def frames(result: FakeResult) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line in result.stdout.split(b"\n"):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def drive(
    fake: FakeCli,
    defn: AgentDef,
    args: list[str],
    prompts: list[str],
    *,
    agent: str = "claude",
    scenario: str = "happy",
    timeout: float = 30.0,
) -> tuple[list[Event], int | None, list[bool]]:
    """Drive one stream-json process as the engine does (:class:`StreamJsonTurns`).

    The first prompt is written at spawn; on each terminal ``usage`` the next prompt is
    written, and after the last one stdin is closed. Returns the events, the exit code and,
    per turn, whether the fake was still running when its turn had ended (it must wait for
    stdin instead of exiting on its own).
    """
    proc = fake.popen(agent, args, scenario=scenario)
    turns = StreamJsonTurns(defn, prompts)
    waiting: list[bool] = []

    def turn_over(actions: Actions, proc: subprocess.Popen[bytes]) -> None:
        # Called before the next prompt (or the close) this turn's end produced goes out.
        if turns.turns_ended > len(waiting):
            time.sleep(0.15)
            waiting.append(proc.poll() is None)

    run = drive_session(
        proc,
        turns,
        SessionRequest(prompt=prompts[0], cwd=str(fake.cwd)),
        on_actions=turn_over,
        timeout=timeout,
        exit_timeout=timeout,
    )
    return run.events, run.code, waiting


def assert_happy(events: list[Event], project: Path, *, partial: bool) -> None:
    """seed 000 §5.1: the happy scenario as the engine must see it."""
    assert not events_of(events, Raw), events_of(events, Raw)
    assert not events_of(events, Error)
    status = events_of(events, Status)[0]
    assert status.label == "initializing" and status.session_id
    assert [e.delta for e in events_of(events, ThinkingDelta)] == ["The user wants a page."]
    if partial:
        assert len(events_of(events, ThinkingStart)) == 1
        assert [e.delta for e in events_of(events, TextDelta)][:2] == ["I'll create ", "the page."]
        assert events_of(events, ToolInputDelta), "input_json_delta fragments are streamed"
        assert [t.stop_reason for t in events_of(events, TurnEnd)] == ["tool_use", "end_turn"]
    else:
        assert not events_of(events, TurnEnd), "without partials the stop reason is in result"
    assert text_of(events) == "I'll create the page.Done: hello.html is ready."
    (use,) = events_of(events, ToolUse)
    assert use.name == "Write" and use.id == "call_write_1"
    assert use.input == {"file_path": str((project / "hello.html").resolve()), "content": HTML}
    (result,) = events_of(events, ToolResult)
    assert result.tool_use_id == "call_write_1" and not result.is_error
    usage = events_of(events, Usage)[-1]
    assert usage.stop_reason == "end_turn" and usage.is_error is None
    assert usage.usage is not None and usage.usage["input_tokens"] == 120
    assert usage.usage["output_tokens"] == 45
    assert (project / "hello.html").read_text(encoding="utf-8") == HTML


# --------------------------------------------------------------------------- happy path


@pytest.mark.rule("FAKE-CLAUDE-001", "FAKE-CLAUDE-003")
def test_claude_happy_live_with_partial_messages(fake: FakeCli) -> None:
    args = build(CLAUDE, capabilities={"partialMessages": True})
    assert "--include-partial-messages" in args
    events, code, waiting = drive(fake, CLAUDE, args, ["Create hello.html"])
    assert code == 0
    assert waiting == [True], "the fake must keep running until stdin closes"
    assert_happy(events, fake.cwd, partial=True)
    record = fake.record()
    assert record["prompt"] == "Create hello.html"
    assert record["prompt_via"] == "stdin-stream-json"


@pytest.mark.rule("FAKE-CLAUDE-001", "FAKE-CLAUDE-004")
def test_claude_happy_without_partial_messages(fake: FakeCli) -> None:
    result = run_claude(fake, [*HEAD, *BYPASS])
    assert result.code == 0, result.err
    assert_happy(parse_stream(FORMAT, result.stdout), fake.cwd, partial=False)
    kinds = [f["type"] for f in frames(result)]
    assert "stream_event" not in kinds
    assert kinds[0] == "system" and kinds[-1] == "result"


@pytest.mark.rule("FAKE-CLAUDE-004")
def test_partial_frames_follow_the_2_1_332_order(fake: FakeCli) -> None:
    """wire §A.4 / ref §2.1.3 / the real claude (recordings/real/claude/happy-partial.jsonl):
    wrapper per block, stop reason only in deltas, the message ended before the tool's
    result."""
    result = run_claude(fake, [*HEAD, "--include-partial-messages", *BYPASS])
    assert result.code == 0, result.err
    seq = frames(result)
    init = seq[0]
    assert (init["type"], init["subtype"]) == ("system", "init")
    for key in ("session_id", "model", "cwd", "tools", "permissionMode", "claude_code_version"):
        assert key in init
    assert init["permissionMode"] == "bypassPermissions"
    wrappers = [f for f in seq if f["type"] == "assistant"]
    assert [len(w["message"]["content"]) for w in wrappers] == [1, 1, 1, 1]
    assert all(w["message"]["stop_reason"] is None for w in wrappers)
    inner = [
        f["event"]["type"] if f["type"] == "stream_event" else f["type"]
        for f in seq
        if f["type"] in ("stream_event", "user")
    ]
    tool_result_at = inner.index("user")
    before = inner[tool_result_at - 3 : tool_result_at]
    assert before == ["content_block_stop", "message_delta", "message_stop"]
    assert inner[tool_result_at + 1] == "message_start"
    kinds = [
        f["event"]["type"] if f["type"] == "stream_event" else f.get("subtype", f["type"])
        for f in seq
    ]
    # Each block's wrapper comes before its content_block_stop, each model call is
    # announced by system/status, thinking_tokens follows the thinking block's start.
    assert [kinds[i + 1] for i, k in enumerate(kinds) if k == "assistant"] == [
        "content_block_stop"
    ] * 4
    assert [kinds[i + 1] for i, k in enumerate(kinds) if k == "status"] == ["message_start"] * 2
    assert kinds[kinds.index("thinking_tokens") - 1] == "content_block_start"
    deltas = [f["event"] for f in seq if f.get("event", {}).get("type") == "message_delta"]
    assert [d["delta"]["stop_reason"] for d in deltas] == ["tool_use", "end_turn"]
    final = seq[-1]
    assert final["type"] == "result" and next(iter(final)) != "type"
    assert final["subtype"] == "success" and final["is_error"] is False
    assert final["stop_reason"] == "end_turn" and final["session_id"] == init["session_id"]
    assert final["result"] == "Done: hello.html is ready."


@pytest.mark.rule("FAKE-CLAUDE-004")
@pytest.mark.parametrize("partial", [True, False])
def test_each_thinking_delta_is_announced_by_an_estimate(fake: FakeCli, partial: bool) -> None:
    """claude 2.1.332: system/thinking_tokens before each thinking_delta, ceil(chars / 4)
    tokens, the running total restarting with each block."""
    steps = [
        {
            "kind": "thinking",
            "text": "The user wants a page.",
            "chunks": ["The user ", "wants a page."],
        },
        {"kind": "text", "text": "Hi."},
        {"kind": "thinking", "text": "More.", "chunks": ["More."]},
    ]
    scenario = fake.scenario_file("think", steps)
    flags = ["--include-partial-messages"] if partial else []
    result = run_claude(fake, [*HEAD, *flags, *BYPASS], scenario=scenario)
    assert result.code == 0, result.err
    seq = frames(result)
    estimates = [
        (f["estimated_tokens"], f["estimated_tokens_delta"])
        for f in seq
        if f.get("subtype") == "thinking_tokens"
    ]
    assert estimates == [(3, 3), (7, 4), (2, 2)]
    if partial:
        after = [
            seq[i + 1]["event"]["delta"]["thinking"]
            for i, f in enumerate(seq)
            if f.get("subtype") == "thinking_tokens"
        ]
        assert after == ["The user ", "wants a page.", "More."]


@pytest.mark.rule("FAKE-CLAUDE-004")
def test_init_lists_mcp_servers_from_config_and_project(fake: FakeCli) -> None:
    """seed 002 §8.1: .mcp.json is auto-loaded unless --strict-mcp-config; wire §A.4."""
    server = {"command": "node", "args": ["server.js"]}
    (fake.cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {"project": server}}))
    inline = json.dumps({"mcpServers": {"od": server}})
    both = run_claude(fake, [*HEAD, "--mcp-config", inline, *BYPASS], scenario="text")
    assert [m["name"] for m in frames(both)[0]["mcp_servers"]] == ["od", "project"]
    strict = [*HEAD, "--mcp-config", inline, "--strict-mcp-config", *BYPASS]
    only = run_claude(fake, strict, scenario="text")
    assert [m["name"] for m in frames(only)[0]["mcp_servers"]] == ["od"]
    assert only.record["mcp_json"] == {"mcpServers": {"project": server}}


@pytest.mark.rule("FAKE-CLAUDE-003")
def test_replay_user_messages_echoes_each_turn(fake: FakeCli) -> None:
    result = run_claude(fake, [*HEAD, "--replay-user-messages", *BYPASS], scenario="text")
    replays = [f for f in frames(result) if f["type"] == "user" and f.get("isReplay")]
    assert len(replays) == 1
    assert replays[0]["message"]["content"] == [{"type": "text", "text": "Create hello.html"}]
    assert not events_of(parse_stream(FORMAT, result.stdout), Raw)


@pytest.mark.rule("FAKE-CLAUDE-003")
def test_two_turns_in_one_process(fake: FakeCli) -> None:
    args = [*HEAD, "--include-partial-messages", *BYPASS]
    events, code, waiting = drive(
        fake, CLAUDE, args, ["first turn", "second turn"], scenario="text"
    )
    assert code == 0
    assert waiting == [True, True]
    usages = events_of(events, Usage)
    assert [u.stop_reason for u in usages] == ["end_turn", "end_turn"]
    assert text_of(events) == "Hello from the fake model. PONG." * 2
    # Only the init status names the session (a "requesting" status names none).
    sessions = {s.session_id for s in events_of(events, Status) if s.label == "initializing"}
    assert len(sessions) == 1, "both turns belong to one session"
    assert fake.record()["prompts"] == ["first turn", "second turn"]
    assert fake.record()["turns"] == 2


@pytest.mark.rule("FAKE-CLAUDE-003", "FAKE-CLAUDE-004")
def test_results_of_one_process_add_up_its_turns(fake: FakeCli) -> None:
    """recordings/real/claude/text-two-turns.jsonl: init again per turn; the result counts
    the process's results, its cost and modelUsage add up the turns, usage and
    model_usage_since_last_result are the turn's own."""
    two = user_line("first turn") + user_line("second turn")
    result = fake.run("claude", [*HEAD, *BYPASS], scenario="text", input=two)
    assert result.code == 0, result.err
    seq = frames(result)
    assert [f.get("subtype", f["type"]) for f in seq if f["type"] != "assistant"] == [
        "init",
        "success",
        "init",
        "success",
    ]
    first, second = [f for f in seq if f["type"] == "result"]
    assert (first["result_index"], second["result_index"]) == (0, 1)
    turn = first["total_cost_usd"]
    assert turn > 0 and second["total_cost_usd"] == turn + turn
    model = first["modelUsage"]["claude-opus-5-5"]
    assert (model["inputTokens"], model["outputTokens"]) == (10, 8)
    both = second["modelUsage"]["claude-opus-5-5"]
    assert (both["inputTokens"], both["outputTokens"], both["costUSD"]) == (20, 16, turn + turn)
    since = second["model_usage_since_last_result"]["claude-opus-5-5"]
    assert (since["inputTokens"], since["outputTokens"], since["costUSD"]) == (10, 8, turn)
    assert second["usage"]["input_tokens"] == 10


@pytest.mark.rule("FAKE-CLAUDE-003")
def test_stream_json_input_must_be_json(fake: FakeCli) -> None:
    result = fake.run("claude", [*HEAD, *BYPASS], input=b"Reply with only: ok\n")
    assert result.code == 1
    assert result.err.startswith("Error parsing streaming input line: Reply with only: ok")


@pytest.mark.rule("FAKE-CLAUDE-003")
def test_text_input_reads_the_prompt_from_stdin_or_argv(fake: FakeCli) -> None:
    piped = fake.run("claude", ["-p", *BYPASS], scenario="text", input=b"say hi")
    assert piped.code == 0, piped.err
    assert piped.out == "Hello from the fake model. PONG.\n"
    assert (piped.record["prompt"], piped.record["prompt_via"]) == ("say hi", "stdin")
    argv = fake.run("claude", ["-p", "--output-format", "json", "say hi"], scenario="text")
    assert json.loads(argv.stdout)["result"] == "Hello from the fake model. PONG."
    assert argv.record["prompt_via"] == "argv"
    empty = fake.run("claude", ["-p"], scenario="text")
    assert empty.code == 1 and "Input must be provided" in empty.err


# --------------------------------------------------------------------------- argv


@pytest.mark.rule("FAKE-CLAUDE-002")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-p", "--output-format", "stream-json"],
            "Error: When using --print, --output-format=stream-json requires --verbose",
        ),
        (
            ["-p", "--input-format", "stream-json", "--verbose"],
            "Error: --input-format=stream-json requires output-format=stream-json.",
        ),
        (
            ["-p", "--include-partial-messages", "hi"],
            "Error: --include-partial-messages requires --print and --output-format=stream-json.",
        ),
        (["--bogus"], "error: unknown option '--bogus'"),
        (
            [*HEAD, "--permission-mode", "yolo"],
            "error: option '--permission-mode <mode>' argument 'yolo' is invalid.",
        ),
        (["--output-format", "stream-json", "--verbose", "hi"], "Error: Raw mode is not supported"),
    ],
)
def test_claude_rejects_what_claude_rejects(fake: FakeCli, args: list[str], message: str) -> None:
    result = fake.run("claude", args, scenario="text")
    assert result.code == 1
    assert result.err.startswith(message), result.err
    assert result.stdout == b""
    assert not (fake.cwd / "hello.html").exists()


@pytest.mark.rule("FAKE-CLAUDE-010")
def test_every_claude_family_argv_is_accepted(fake: FakeCli, tmp_path: Path) -> None:
    """Each def's build_args output runs, with and without capabilities (seed 002 §4.1)."""
    extra = tmp_path / "extra"
    extra.mkdir()
    sid = str(uuid.uuid4())
    cases: list[tuple[str, AgentDef, list[str], str]] = [
        ("claude", CLAUDE, build(CLAUDE), "stdin-stream-json"),
        (
            "claude",
            CLAUDE,
            build(
                CLAUDE,
                model="sonnet",
                reasoning="high",
                capabilities=ALL_CAPS,
                dirs=[str(extra)],
                ctx=RuntimeContext(new_session_id=sid),
            ),
            "stdin-stream-json",
        ),
        ("claude", CLAUDE, build(CLAUDE, ctx=RuntimeContext(resume_session_id=sid)), ""),
        ("codebuddy", CODEBUDDY, build(CODEBUDDY), "stdin-stream-json"),
        (
            "codebuddy",
            CODEBUDDY,
            build(CODEBUDDY, model="glm-4.6", capabilities=ALL_CAPS, dirs=[str(extra)]),
            "stdin-stream-json",
        ),
        ("amp", AMP, build(AMP, model="rush"), "stdin"),
        ("amp", AMP, build(AMP, permission_mode="restricted"), "stdin"),
    ]
    for agent, defn, args, via in cases:
        stdin = user_line() if defn.prompt_input_format.value == "stream-json" else b"Create it"
        result = fake.run(agent, args, scenario="text", input=stdin)
        assert result.code == 0, (agent, args, result.err)
        usage = events_of(parse_stream(FORMAT, result.stdout), Usage)
        assert usage and is_clean_terminal_turn(usage[-1]), (agent, args)
        if via:
            assert result.record["prompt_via"] == via
        if "--resume" in args:
            assert result.record["resumed"] is True, "the minted session was resumed"


@pytest.mark.rule("FAKE-CLAUDE-009", "FAKE-CLAUDE-010")
def test_old_build_rejects_new_flags_but_takes_the_probed_argv(fake: FakeCli) -> None:
    old = fake.env("text", FAKE_CLI_OLD_VERSION="1")
    help_text = fake.run("claude", ["-p", "--help"], env=old).out
    caps = {key: flag in help_text for flag, key in CLAUDE.capability_flags.items()}
    assert caps == {
        "partialMessages": False,
        "forwardSubagentText": False,
        "customAgents": False,
        "addDir": True,
        "effort": False,
    }
    probed = fake.run("claude", build(CLAUDE, capabilities=caps), env=old, input=user_line())
    assert probed.code == 0, probed.err
    rejected = fake.run("claude", build(CLAUDE, capabilities=ALL_CAPS), env=old, input=user_line())
    assert rejected.code == 1
    assert rejected.err.startswith("error: unknown option '--include-partial-messages'")
    scenario_old = fake.run("claude", [*HEAD, "--effort", "high"], scenario="old_version")
    assert scenario_old.code == 1 and "unknown option '--effort'" in scenario_old.err


# --------------------------------------------------------------------------- sessions


@pytest.mark.rule("FAKE-CLAUDE-005")
def test_session_id_creates_and_resume_continues(fake: FakeCli) -> None:
    sid = str(uuid.uuid4())
    created = run_claude(fake, [*HEAD, "--session-id", sid, *BYPASS], scenario="text")
    assert created.code == 0, created.err
    (status,) = events_of(parse_stream(FORMAT, created.stdout), Status)
    assert status.session_id == sid
    assert created.record["resumed"] is False
    in_use = run_claude(fake, [*HEAD, "--session-id", sid], scenario="text")
    assert (in_use.code, in_use.err) == (1, f"Error: Session ID {sid} is already in use.\n")
    resumed = run_claude(fake, [*HEAD, "--resume", sid, *BYPASS], scenario="text")
    assert resumed.code == 0, resumed.err
    assert resumed.record["resumed"] is True and resumed.record["prior_turns"] == 1
    assert events_of(parse_stream(FORMAT, resumed.stdout), Status)[0].session_id == sid
    again = run_claude(fake, [*HEAD, "--continue", *BYPASS], scenario="text")
    assert again.record["prior_turns"] == 2 and again.record["session_id"] == sid


@pytest.mark.rule("FAKE-CLAUDE-005")
def test_unknown_or_malformed_session_ids_fail_like_claude(fake: FakeCli) -> None:
    unknown = str(uuid.uuid4())
    missing = run_claude(fake, [*HEAD, "--resume", unknown], scenario="text")
    assert missing.code == 1
    assert missing.err == f"No conversation found with session ID: {unknown}\n"
    assert missing.stdout == b""
    bad = run_claude(fake, [*HEAD, "--session-id", "not-a-uuid"], scenario="text")
    assert (bad.code, bad.err) == (1, "Error: Invalid session ID. Must be a valid UUID.\n")
    both = run_claude(fake, [*HEAD, "--session-id", unknown, "--resume", unknown], scenario="text")
    assert both.code == 1 and "--fork-session" in both.err


# --------------------------------------------------------------------------- permissions


@pytest.mark.rule("FAKE-CLAUDE-006")
def test_write_without_permission_posture_is_denied(fake: FakeCli) -> None:
    result = run_claude(fake, HEAD)
    assert result.code == 0, result.err
    events = parse_stream(FORMAT, result.stdout)
    (denied,) = events_of(events, ToolResult)
    target = (fake.cwd / "hello.html").resolve()
    assert denied.is_error
    assert denied.content == (
        f"Claude requested permissions to write to {target}, but you haven't granted it yet."
    )
    assert not (fake.cwd / "hello.html").exists()
    assert frames(result)[-1]["permission_denials"][0]["tool_name"] == "Write"


@pytest.mark.rule("FAKE-CLAUDE-006")
def test_accept_edits_writes_but_shell_needs_an_allowed_tool(fake: FakeCli) -> None:
    edits = run_claude(fake, [*HEAD, "--permission-mode", "acceptEdits"])
    assert (fake.cwd / "hello.html").read_text(encoding="utf-8") == HTML
    assert not events_of(parse_stream(FORMAT, edits.stdout), ToolResult)[0].is_error
    shell = run_claude(fake, [*HEAD, "--permission-mode", "acceptEdits"], scenario="shell")
    (denied,) = events_of(parse_stream(FORMAT, shell.stdout), ToolResult)
    assert denied.is_error and "use Bash" in denied.content
    allowed = run_claude(fake, [*HEAD, "--allowedTools", "Bash(echo:*)"], scenario="shell")
    (ran,) = events_of(parse_stream(FORMAT, allowed.stdout), ToolResult)
    assert (ran.is_error, ran.content) == (False, "hi\n")
    vetoed = run_claude(fake, [*HEAD, *BYPASS, "--disallowedTools", "Bash"], scenario="shell")
    assert events_of(parse_stream(FORMAT, vetoed.stdout), ToolResult)[0].is_error


# --------------------------------------------------------------------------- errors and faults


@pytest.mark.rule("FAKE-CLAUDE-007")
def test_api_error_is_reported_claude_style(fake: FakeCli) -> None:
    result = run_claude(fake, [*HEAD, "--include-partial-messages", *BYPASS], scenario="api_error")
    assert result.code == 1
    events = parse_stream(FORMAT, result.stdout)
    errors = events_of(events, Error)
    body = '{"type":"error","error":{"type":"api_error","message":"Internal server error"}}'
    text = f"API Error: 500 {body}"
    assert errors[0].code == "server_error" and errors[0].message == text
    assert errors[-1].terminal is True and errors[-1].message == text
    (usage,) = events_of(events, Usage)
    assert usage.is_error is True
    final = frames(result)[-1]
    assert (final["subtype"], final["is_error"], final["terminal_reason"]) == (
        "success",
        True,
        "api_error",
    )
    assert final["api_error_status"] == 500


def _check_malformed(result: FakeResult, events: list[Event]) -> None:
    (raw,) = events_of(events, Raw)
    assert raw.line.startswith('{"type":"assistant"') and raw.truncated_bytes is None
    assert text_of(events) == "Before.After."


def _check_foreign(result: FakeResult, events: list[Event]) -> None:
    # ref §2.1.3 G2: a sub-agent frame of another session ends nothing and fails nothing.
    assert text_of(events) == "Mine. Still mine."
    assert [t.stop_reason for t in events_of(events, TurnEnd)] == ["end_turn"]
    assert not events_of(events, Error)
    foreign = [f for f in frames(result) if f.get("parent_tool_use_id")]
    assert len(foreign) == 1 and foreign[0]["session_id"] != frames(result)[0]["session_id"]


def _check_oversize(result: FakeResult, events: list[Event]) -> None:
    (raw,) = events_of(events, Raw)
    assert raw.truncated_bytes == 2 * 1024 * 1024
    assert text_of(events) == "Before.After."


def _check_crash(result: FakeResult, events: list[Event]) -> None:
    assert result.code == 3
    assert not result.stdout.endswith(b"\n")
    assert isinstance(events[-1], Raw) and events[-1].line.startswith('{"type":"assistant"')
    assert not events_of(events, Usage)


def _check_exit_code(result: FakeResult, events: list[Event]) -> None:
    assert result.code == 7 and text_of(events) == "Partial."
    assert not events_of(events, Usage)


def _check_tool_error(result: FakeResult, events: list[Event]) -> None:
    (use,) = events_of(events, ToolUse)
    assert (use.name, use.input["command"]) == ("Bash", "false")
    (failed,) = events_of(events, ToolResult)
    assert failed.is_error and failed.content == "command failed with exit code 1"


def _check_noise(result: FakeResult, events: list[Event]) -> None:
    assert [r.line for r in events_of(events, Raw)] == ["[SandboxDebug] starting", "debug: done"]
    assert text_of(events) == "Hello."


def _check_stderr(result: FakeResult, events: list[Event]) -> None:
    assert result.err == "warning: something noisy\nwarning: more noise\n"
    assert text_of(events) == "Hello."


def _check_slow(result: FakeResult, events: list[Event]) -> None:
    assert [e.delta for e in events_of(events, TextDelta)] == ["a", "b", "c"]


@pytest.mark.rule("FAKE-CLAUDE-008")
@pytest.mark.parametrize(
    ("scenario", "check"),
    [
        ("malformed", _check_malformed),
        ("foreign", _check_foreign),
        ("oversize", _check_oversize),
        ("crash_mid_line", _check_crash),
        ("exit_code", _check_exit_code),
        ("tool_error", _check_tool_error),
        ("noise", _check_noise),
        ("stderr", _check_stderr),
        ("slow", _check_slow),
    ],
)
def test_every_step_kind_in_claude_frames(
    fake: FakeCli, scenario: str, check: Callable[[FakeResult, list[Event]], None]
) -> None:
    result = run_claude(fake, [*HEAD, "--include-partial-messages", *BYPASS], scenario=scenario)
    check(result, parse_stream(FORMAT, result.stdout))


@pytest.mark.rule("FAKE-CLAUDE-006", "FAKE-CLAUDE-008")
def test_other_tools_and_common_steps(fake: FakeCli) -> None:
    read = fake.scenario_file("read", other_steps("Read"))
    result = run_claude(fake, [*HEAD, "--include-partial-messages"], scenario=read)
    events = parse_stream(FORMAT, result.stdout)
    assert [e.delta for e in events_of(events, ThinkingDelta)] == ["Look ", "first."]
    (use,) = events_of(events, ToolUse)
    assert (use.name, use.input) == ("Read", {"path": "README.md"})
    (done,) = events_of(events, ToolResult)
    assert (done.content, done.is_error) == ("# readme", False), "read-only tools just run"
    assert events_of(events, Usage)[-1].cost_usd == 0.25
    mcp = fake.scenario_file("mcp", other_steps("mcp__od__create_artifact"))
    denied = run_claude(fake, HEAD, scenario=mcp)
    assert events_of(parse_stream(FORMAT, denied.stdout), ToolResult)[0].is_error
    common = run_claude(fake, [*HEAD, *BYPASS], scenario=fake.scenario_file("c", COMMON_STEPS))
    events = parse_stream(FORMAT, common.stdout)
    assert [r.line for r in events_of(events, Raw)] == ["debug: starting"]
    assert text_of(events) == "Hello." and common.err == "warning: noisy\n"


@pytest.mark.rule("FAKE-CLAUDE-008")
def test_hang_stall_and_linger_need_a_kill(fake: FakeCli) -> None:
    for scenario, needle in (("hang", b"Thinking about it..."), ("ignore_stdin", b'"result"')):
        proc = fake.popen("claude", [*HEAD, *BYPASS], scenario=scenario)
        assert proc.stdin is not None
        pump = StdoutPump(proc)
        proc.stdin.write(user_line())
        proc.stdin.close()
        pump.until(needle, timeout=30)
        time.sleep(0.2)
        assert proc.poll() is None, f"{scenario}: the fake must still be running"
        kill_tree(proc)
    stalled = fake.popen("claude", [*HEAD, *BYPASS], scenario="stall")
    pump = StdoutPump(stalled)
    with pytest.raises(TimeoutError):
        pump.next(timeout=0.2)
    kill_tree(stalled)


@pytest.mark.rule("FAKE-CLAUDE-008")
@pytest.mark.posix
def test_spawn_tree_leaves_a_child_and_grandchild(fake: FakeCli) -> None:
    proc = fake.popen("claude", [*HEAD, *BYPASS], scenario="spawn_tree")
    assert proc.stdin is not None
    pump = StdoutPump(proc)
    proc.stdin.write(user_line())
    proc.stdin.flush()
    pump.until(b"Spawned helpers.", timeout=30)
    deadline = time.monotonic() + 20
    tree: list[psutil.Process] = []
    while time.monotonic() < deadline:
        tree = psutil.Process(proc.pid).children(recursive=True)
        if len(tree) >= 2:
            break
        time.sleep(0.05)
    assert len(tree) == 2, "child and grandchild"
    killed = kill_tree(proc)
    assert {p.pid for p in tree} <= set(killed)


# --------------------------------------------------------------------------- probes


def _detect(fake: FakeCli, defn: AgentDef, **env: str) -> Any:
    bin_dir = fake.root / "bin"
    install_shim(bin_dir, defn.bin, defn.id)
    environment = fake.env("happy", PATH=f"{bin_dir}:/usr/bin:/bin", **env)
    return asyncio.run(
        detect_agent(
            defn,
            env=environment,
            platform=sys.platform,
            home=str(fake.home),
            fs=RealFileSystem(),
        )
    )


@pytest.mark.rule("FAKE-CLAUDE-009")
@pytest.mark.posix
def test_claude_detection_probes_the_fake(fake: FakeCli) -> None:
    """Version, `claude -p --help` capabilities and `claude auth status`, via detect_agent."""
    found = _detect(fake, CLAUDE)
    assert found.available and found.version == "2.1.332 (Claude Code)"
    assert found.capabilities == {key: True for key in CLAUDE.capability_flags.values()}
    assert found.auth_status is AuthStatus.OK
    old = _detect(fake, CLAUDE, FAKE_CLI_OLD_VERSION="1", FAKE_CLI_AUTH="missing")
    assert old.capabilities["partialMessages"] is False and old.capabilities["addDir"] is True
    assert old.auth_status is AuthStatus.MISSING


@pytest.mark.rule("FAKE-CLAUDE-009")
def test_claude_auth_status_json(fake: FakeCli) -> None:
    ok = fake.run("claude", ["auth", "status"])
    assert ok.code == 0 and json.loads(ok.stdout)["loggedIn"] is True
    missing = fake.run(
        "claude", ["auth", "status", "--json"], env=fake.env(FAKE_CLI_AUTH="missing")
    )
    assert missing.code == 1 and json.loads(missing.stdout)["loggedIn"] is False


# --------------------------------------------------------------------------- codebuddy and amp


@pytest.mark.rule("FAKE-CODEBUDDY-001")
def test_codebuddy_happy_with_its_own_argv(fake: FakeCli) -> None:
    args = build(CODEBUDDY, capabilities={"partialMessages": True})
    assert "-y" in args
    events, code, waiting = drive(fake, CODEBUDDY, args, ["Create hello.html"], agent="codebuddy")
    assert code == 0 and waiting == [True]
    # recordings/real/codebuddy/happy.jsonl: a write is framed by two snapshot lines
    snapshots = [e for e in events_of(events, Raw) if '"file-history-snapshot"' in e.line]
    assert len(snapshots) == 2
    assert_happy([e for e in events if all(e is not s for s in snapshots)], fake.cwd, partial=True)
    # codebuddy-headless 2.163.0 prints the snapshots only after the tool call's message
    # has streamed, around its tool_use wrapper.
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("Raw") > kinds.index("ToolUse")
    assert fake.run("codebuddy", ["--version"]).out == "2.163.0\n"
    unknown = fake.run("codebuddy", [*HEAD, "--yolo"], input=user_line())
    assert (unknown.code, unknown.err) == (1, "error: unknown option '--yolo'\n")
    skip = fake.run("codebuddy", [*HEAD, "-y"], input=user_line())
    assert not events_of(parse_stream(FORMAT, skip.stdout), ToolResult)[0].is_error
    # A flag codebuddy-headless 2.163.0 takes without listing it in its help.
    quiet = fake.run("codebuddy", [*HEAD, "--no-plugin-management"], input=user_line())
    assert quiet.code == 0, quiet.err
    assert "--no-plugin-management" not in fake.run("codebuddy", ["--help"]).out


@pytest.mark.rule("FAKE-AMP-001")
def test_amp_happy_reads_a_text_prompt_from_stdin(fake: FakeCli) -> None:
    result = fake.run("amp", build(AMP), input=b"Create hello.html")
    assert result.code == 0, result.err
    assert result.record["prompt"] == "Create hello.html"
    assert result.record["prompt_via"] == "stdin"
    events = parse_stream(FORMAT, result.stdout)
    assert [e.delta for e in events_of(events, ThinkingDelta)] == ["The user wants a page."]
    assert text_of(events) == "I'll create the page.Done: hello.html is ready."
    (use,) = events_of(events, ToolUse)
    assert use.name == "create_file" and use.input["content"] == HTML
    (done,) = events_of(events, ToolResult)
    assert done.tool_use_id == use.id and not done.is_error
    assert [t.stop_reason for t in events_of(events, TurnEnd)] == ["tool_use", "end_turn"]
    assert events_of(events, Usage)[-1].usage == {"input_tokens": 120, "output_tokens": 45}
    assert (fake.cwd / "hello.html").read_text(encoding="utf-8") == HTML
    assert frames(result)[0]["session_id"].startswith("T-")
    # The prompt echo is a user frame with string-free blocks: nothing unparsed.
    assert not events_of(events, Raw) and not events_of(events, Error)


@pytest.mark.rule("FAKE-AMP-002")
def test_amp_argv_modes_and_posture(fake: FakeCli) -> None:
    no_execute = fake.run("amp", ["--stream-json"], input=b"hi")
    assert no_execute.code == 1 and "--stream-json requires --execute" in no_execute.err
    bad_mode = fake.run("amp", ["-x", "--stream-json", "--mode", "turbo"], input=b"hi")
    assert bad_mode.code == 1 and "argument 'turbo' is invalid" in bad_mode.err
    unknown = fake.run("amp", ["-x", "--stream-json", "--yolo"], input=b"hi")
    assert (unknown.code, unknown.err) == (1, "error: unknown option '--yolo'\n")
    restricted = fake.run(
        "amp", build(AMP, permission_mode="restricted"), scenario="shell", input=b"run it"
    )
    (rejected,) = events_of(parse_stream(FORMAT, restricted.stdout), ToolResult)
    assert rejected.is_error and "--dangerously-allow-all" in rejected.content
    allowed = fake.run("amp", build(AMP), scenario="shell", input=b"run it")
    assert events_of(parse_stream(FORMAT, allowed.stdout), ToolResult)[0].content == "hi\n"


@pytest.mark.rule("FAKE-AMP-001")
def test_amp_api_error_and_faults(fake: FakeCli) -> None:
    failed = fake.run("amp", build(AMP), scenario="api_error", input=b"hi")
    assert failed.code == 1
    events = parse_stream(FORMAT, failed.stdout)
    assert events_of(events, Usage)[0].is_error is True
    assert events_of(events, Error)[-1].terminal is True
    foreign = fake.run("amp", build(AMP), scenario="foreign", input=b"hi")
    events = parse_stream(FORMAT, foreign.stdout)
    assert text_of(events) == "Mine. Still mine."
    assert [t.stop_reason for t in events_of(events, TurnEnd)] == ["end_turn"]
    crashed = fake.run("amp", build(AMP), scenario="crash_mid_line", input=b"hi")
    assert crashed.code == 3 and isinstance(parse_stream(FORMAT, crashed.stdout)[-1], Raw)
