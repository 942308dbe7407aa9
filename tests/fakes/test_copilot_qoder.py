"""The copilot and qoder fakes as real processes, read by the engine's parsers.

Rules: FAKE-COPILOT-001..006, FAKE-QODER-001..004 (conformance/rules/fakes_stream.py).
Both CLIs take the prompt on stdin and print one JSONL stream that stdout parsers read:
``harness.streams.copilot`` and ``harness.streams.qoder``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
    ToolResult,
    ToolUse,
    Usage,
)
from harness.host.prompt import stream_json_user_message
from tests.fakes.conftest import FakeCli, FakeResult, events_of, parse_stream, text_of
from tests.support.processes import StdoutPump, kill_tree

COPILOT = get_agent_def("copilot")
QODER = get_agent_def("qoder")
HTML = "<!doctype html>\n<h1>Hello</h1>\n"
DENIED = "Permission denied and could not request permission from user"


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


def build(defn: AgentDef, *, images: tuple[str, ...] = (), **kw: Any) -> list[str]:
    ctx = kw.pop("ctx", RuntimeContext())
    dirs = kw.pop("dirs", ())
    return defn.build_args("the prompt", list(images), list(dirs), BuildOptions(**kw), ctx)


def frames(result: FakeResult) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line in result.stdout.split(b"\n"):
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def raw_types(events: list[Event]) -> list[str]:
    """The ``type`` of each raw line that is JSON (unclaimed records)."""
    types: list[str] = []
    for raw in events_of(events, Raw):
        try:
            types.append(str(json.loads(raw.line).get("type")))
        except ValueError:
            types.append("<not json>")
    return types


# =========================================================================== copilot


def line_types(stdout: str) -> list[str]:
    """The ``type`` of each line, a run of one type counted once (how many deltas or partial
    results a step streams is the model's and the tool's), without the
    ``session.background_tasks_changed`` lines (their number varies from run to run)."""
    shape: list[str] = []
    for line in stdout.splitlines():
        kind = json.loads(line)["type"]
        if kind != "session.background_tasks_changed" and shape[-1:] != [kind]:
            shape.append(kind)
    return shape


def real_types(name: str) -> list[str]:
    """:func:`line_types` of a real copilot 1.0.102 run (recordings/real/copilot/<name>)."""
    path = Path(__file__).parents[2] / "recordings" / "real" / "copilot" / f"{name}.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return line_types("".join(r["data"] for r in records if r.get("dir") == "stdout"))


def copilot(fake: FakeCli, args: list[str], scenario: str = "happy", **kw: Any) -> FakeResult:
    kw.setdefault("input", b"Create hello.html")
    return fake.run("copilot", args, scenario=scenario, **kw)


def copilot_events(result: FakeResult) -> list[Event]:
    return parse_stream(COPILOT.stream_format, result.stdout)


@pytest.mark.rule("FAKE-COPILOT-001", "FAKE-COPILOT-002")
def test_copilot_happy_run(fake: FakeCli) -> None:
    result = copilot(fake, build(COPILOT))
    assert result.code == 0, result.err
    assert (result.record["prompt"], result.record["prompt_via"]) == ("Create hello.html", "stdin")
    events = copilot_events(result)
    statuses = events_of(events, Status)
    assert statuses[0].label == "initializing" and statuses[0].model == "claude-sonnet-4.6"
    assert [s.label for s in statuses[1:]] == ["streaming", "streaming", "session"]
    assert statuses[-1].session_id  # the result names the session (COPILOT-SESSION-001)
    assert [e.delta for e in events_of(events, ThinkingDelta)] == ["The user wants a page."]
    assert [e.delta for e in events_of(events, TextDelta)] == [
        "I'll create ",
        "the page.",
        "Done: hello.html is ready.",
    ]
    (use,) = events_of(events, ToolUse)
    target = str((fake.cwd / "hello.html").resolve())
    assert (use.id, use.name, use.input) == (
        "call_write_1",
        "create",
        {"path": target, "file_text": HTML},
    )
    (done,) = events_of(events, ToolResult)
    assert (done.tool_use_id, done.content, done.is_error) == (
        "call_write_1",
        "Wrote hello.html",
        False,
    )
    (usage,) = events_of(events, Usage)
    assert usage.stop_reason == "completed" and usage.duration_ms is not None
    assert usage.usage is not None and usage.usage["premiumRequests"] == 2
    assert not events_of(events, Error)
    # Unclaimed records are kept raw by the parser (COPILOT-RAW-001): all are copilot events.
    assert "session.start" not in raw_types(events)
    assert (fake.cwd / "hello.html").read_text(encoding="utf-8") == HTML
    seq = frames(result)
    # The line types and their order are copilot 1.0.102's for this scenario
    # (recordings/real/copilot/happy.jsonl; the real run's line types, ids aside).
    assert line_types(result.out) == real_types("happy")
    for name in ("text", "shell"):
        other = copilot(fake, build(COPILOT), name)
        assert line_types(other.out) == real_types(name), name
    deltas = [f for f in seq if f["type"].endswith("_delta")]
    assert deltas and all(f["ephemeral"] is True and "data" in f for f in deltas)
    final = seq[-1]
    assert final["type"] == "result" and "data" not in final
    assert set(final) == {"type", "timestamp", "sessionId", "exitCode", "usage"}
    assert final["exitCode"] == 0
    assert {"premiumRequests", "totalApiDurationMs", "sessionDurationMs"} <= set(final["usage"])
    message = next(f["data"] for f in seq if f["type"] == "assistant.message")
    assert message["reasoningText"] == "The user wants a page."
    assert [r["name"] for r in message["toolRequests"]] == ["create"]


@pytest.mark.rule("FAKE-COPILOT-002")
def test_copilot_dash_p_dash_is_a_literal_prompt(fake: FakeCli) -> None:
    dash = copilot(fake, ["-p", "-", "--allow-all-tools", "--output-format", "json"], "text")
    assert dash.code == 0, dash.err
    assert (dash.record["prompt"], dash.record["prompt_via"]) == ("-", "argv")
    user = next(f for f in frames(dash) if f["type"] == "user.message")
    assert user["data"]["content"] == "-"
    text = copilot(fake, ["-p", "hello there", "--allow-all-tools"], "text", input=b"")
    assert text.record["prompt"] == "hello there"
    assert text.out == "Hello from the fake model. PONG.\n"
    empty = copilot(fake, ["--output-format", "json"], "text", input=b"")
    assert empty.code == 1 and "no prompt" in empty.err


@pytest.mark.rule("FAKE-COPILOT-003")
def test_copilot_tools_need_permission(fake: FakeCli) -> None:
    denied = copilot(fake, ["--output-format", "json"])
    assert denied.code == 0
    (result,) = events_of(copilot_events(denied), ToolResult)
    assert (result.is_error, result.content) == (True, DENIED)
    assert not (fake.cwd / "hello.html").exists()
    write_only = ["--output-format", "json", "--allow-tool", "write"]
    assert not events_of(copilot_events(copilot(fake, write_only)), ToolResult)[0].is_error
    assert (fake.cwd / "hello.html").exists()
    shell = copilot(fake, write_only, "shell")
    assert events_of(copilot_events(shell), ToolResult)[0].content == DENIED
    echo = copilot(fake, ["--output-format", "json", "--allow-tool", "shell(echo)"], "shell")
    assert events_of(copilot_events(echo), ToolResult)[0].content == "hi\n"
    veto = copilot(fake, [*build(COPILOT), "--deny-tool", "shell"], "shell")
    assert events_of(copilot_events(veto), ToolResult)[0].is_error


@pytest.mark.rule("FAKE-COPILOT-004")
def test_copilot_argv(fake: FakeCli, tmp_path: Path) -> None:
    extra = [str(tmp_path / "a"), str(tmp_path / "b")]
    for args in (build(COPILOT), build(COPILOT, model="gpt-5.2", dirs=extra)):
        result = copilot(fake, args, "text")
        assert result.code == 0, (args, result.err)
        assert events_of(copilot_events(result), Usage)[0].stop_reason == "completed"
    old = fake.env("text", FAKE_CLI_OLD_VERSION="1")
    assert copilot(fake, build(COPILOT), env=old).code == 0
    yolo = copilot(fake, [*build(COPILOT), "--yolo"], env=old)
    assert (yolo.code, yolo.err) == (1, "error: unknown option '--yolo'\n")
    assert copilot(fake, [*build(COPILOT), "--yolo"], "text").code == 0
    unknown = copilot(fake, ["--allow-all-tools", "--print"])
    assert (unknown.code, unknown.err) == (1, "error: unknown option '--print'\n")
    bad = copilot(fake, ["--output-format", "stream-json"])
    assert bad.code == 1 and "argument 'stream-json' is invalid" in bad.err
    assert bad.stdout == b""


@pytest.mark.rule("FAKE-COPILOT-005")
def test_copilot_api_error_and_faults(fake: FakeCli) -> None:
    args = build(COPILOT)
    failed = copilot(fake, args, "api_error")
    assert failed.code == 1
    events = copilot_events(failed)
    (usage,) = events_of(events, Usage)
    assert usage.stop_reason == "error"
    (error,) = events_of(events, Error)  # COPILOT-ERROR-001
    assert error.terminal is False and "Internal server error" in error.message
    assert error.message.startswith("Failed to get response from the AI model; retried 5 times")
    final = frames(failed)[-1]
    assert final["exitCode"] == 1 and "success" not in final
    # recordings/real/copilot/api_error.jsonl: 6 attempts (5 retries), then the error.
    assert line_types(failed.out) == real_types("api_error")
    failures = [f["data"] for f in frames(failed) if f["type"] == "model.call_failure"]
    attempts = [failure["retryAttempt"] for failure in failures]
    assert attempts == [0, 1, 2, 3, 4, 5]

    malformed = copilot_events(copilot(fake, args, "malformed"))
    assert raw_types(malformed).count("<not json>") == 1
    assert text_of(malformed) == "Before.After."

    foreign_run = copilot(fake, args, "foreign")
    foreign = copilot_events(foreign_run)
    assert text_of(foreign) == "Mine. Still mine."
    # The run's own session prints no `session.start` (recordings/real/copilot/*.jsonl); the
    # one there is the foreign session's.
    starts = [f["data"]["sessionId"] for f in frames(foreign_run) if f["type"] == "session.start"]
    assert len(starts) == 1 and starts[0] != foreign_run.record["session_id"]

    oversize = copilot_events(copilot(fake, args, "oversize"))
    assert [r.truncated_bytes for r in events_of(oversize, Raw) if r.truncated_bytes] == [
        2 * 1024 * 1024
    ]
    crashed = copilot(fake, args, "crash_mid_line")
    assert crashed.code == 3 and not crashed.stdout.endswith(b"\n")
    events = copilot_events(crashed)
    assert isinstance(events[-1], Raw) and not events_of(events, Usage)


@pytest.mark.rule("FAKE-COPILOT-006")
def test_copilot_sessions_and_probes(fake: FakeCli) -> None:
    first = copilot(fake, build(COPILOT), "text")
    sid = first.record["session_id"]
    assert first.record["resumed"] is False
    again = copilot(fake, [*build(COPILOT), "--resume", sid], "text")
    assert again.record["resumed"] is True and again.record["prior_turns"] == 1
    assert frames(again)[-1]["sessionId"] == sid
    latest = copilot(fake, [*build(COPILOT), "--continue"], "text")
    assert latest.record["session_id"] == sid and latest.record["prior_turns"] == 2
    unknown = copilot(fake, [*build(COPILOT), "--resume", "nope"], "text")
    assert unknown.code == 1 and "nope" in unknown.err and unknown.stdout == b""
    assert fake.run("copilot", ["--version"]).out.splitlines()[0] == "1.0.102"
    help_text = fake.run("copilot", ["--help"]).out
    assert "--allow-all-tools" in help_text and "--yolo" in help_text
    old_help = fake.run("copilot", ["--help"], env=fake.env(FAKE_CLI_OLD_VERSION="1")).out
    assert "--allow-all-tools" in old_help and "--yolo" not in old_help


@pytest.mark.rule("FAKE-COPILOT-003", "FAKE-COPILOT-005")
def test_copilot_other_tools_and_common_steps(fake: FakeCli) -> None:
    view = copilot(fake, ["--output-format", "json"], fake.scenario_file("v", other_steps("view")))
    events = copilot_events(view)
    (use,) = events_of(events, ToolUse)
    assert (use.name, use.input) == ("view", {"path": "README.md"})
    (done,) = events_of(events, ToolResult)
    assert (done.content, done.is_error) == ("# readme", False), "read-only tools just run"
    assert [e.delta for e in events_of(events, ThinkingDelta)] == ["Look ", "first."]
    common = copilot(fake, build(COPILOT), fake.scenario_file("c", COMMON_STEPS))
    events = copilot_events(common)
    assert "<not json>" in raw_types(events) and text_of(events) == "Hello."
    assert common.err == "warning: noisy\n"
    proc = fake.popen("copilot", build(COPILOT), scenario="hang")
    assert proc.stdin is not None
    pump = StdoutPump(proc)
    proc.stdin.write(b"hi")
    proc.stdin.close()
    pump.until(b"Thinking about it...", timeout=30)
    assert proc.poll() is None
    kill_tree(proc)


# =========================================================================== qoder


def qoder(fake: FakeCli, args: list[str], scenario: str = "happy", **kw: Any) -> FakeResult:
    kw.setdefault("input", b"Create hello.html")
    return fake.run("qoder", args, scenario=scenario, **kw)


def qoder_events(result: FakeResult) -> list[Event]:
    return parse_stream(QODER.stream_format, result.stdout)


def qoder_args(fake: FakeCli, **kw: Any) -> list[str]:
    return build(QODER, ctx=RuntimeContext(cwd=str(fake.cwd)), **kw)


@pytest.mark.rule("FAKE-QODER-001")
def test_qoder_happy_run(fake: FakeCli) -> None:
    result = qoder(fake, qoder_args(fake))
    assert result.code == 0, result.err
    assert result.record["prompt_via"] == "stdin"
    events = qoder_events(result)
    (status,) = events_of(events, Status)
    assert (status.label, status.model, status.cli_version) == ("initializing", "auto", "1.1.52")
    assert status.session_id == result.record["session_id"]
    assert len(events_of(events, ThinkingStart)) == 1
    assert [e.delta for e in events_of(events, ThinkingDelta)] == ["The user wants a page."]
    assert [e.delta for e in events_of(events, TextDelta)] == [
        "I'll create the page.",
        "Done: hello.html is ready.",
    ]
    (usage,) = events_of(events, Usage)
    assert usage.stop_reason == "end_turn" and usage.is_error is False
    assert usage.usage is not None and usage.usage["output_tokens"] == 45
    assert usage.cost_usd is not None and usage.model_usage is not None
    # ref §2.4: the qoder parser maps no tool records; the tool_use block and its result
    # are kept as raw lines (QODER-RAW-001), one record each.
    raws = [json.loads(r.line) for r in events_of(events, Raw)]
    assert [r["type"] for r in raws] == ["assistant", "user"]
    assert raws[0]["message"]["content"][0]["name"] == "Write"
    assert raws[1]["message"]["content"][0]["tool_use_id"] == "call_write_1"
    assert (fake.cwd / "hello.html").read_text(encoding="utf-8") == HTML


@pytest.mark.rule("FAKE-QODER-002")
def test_qoder_argv(fake: FakeCli, tmp_path: Path) -> None:
    image = tmp_path / "shot.png"
    image.write_bytes(b"\x89PNG\r\n")
    extra = str(tmp_path)
    full = qoder_args(fake, model="performance", dirs=[extra, "relative/dir"], images=(str(image),))
    assert full.count("--add-dir") == 1 and "--attachment" in full
    for args in (qoder_args(fake), full, build(QODER)):
        result = qoder(fake, args, "text")
        assert result.code == 0, (args, result.err)
        assert events_of(qoder_events(result), Usage)[0].stop_reason == "end_turn"
    assert fake.record()["attachments"] == []
    missing_dir = qoder(fake, build(QODER, ctx=RuntimeContext(cwd=str(tmp_path / "nope"))))
    assert missing_dir.code == 1 and "workspace directory does not exist" in missing_dir.err
    missing_image = qoder(fake, [*qoder_args(fake), "--attachment", str(tmp_path / "x.png")])
    assert missing_image.code == 1 and "attachment not found" in missing_image.err
    unknown = qoder(fake, [*qoder_args(fake), "--verbose"])
    assert (unknown.code, unknown.err) == (1, "error: unknown option '--verbose'\n")
    old = fake.env("text", FAKE_CLI_OLD_VERSION="1")
    partial = qoder(fake, [*qoder_args(fake), "--include-partial-messages"], env=old)
    assert partial.code == 1 and "unknown option '--include-partial-messages'" in partial.err
    assert fake.run("qoder", ["--version"]).out == "1.1.52\n"
    assert "--include-partial-messages" not in fake.run("qoder", ["--help"], env=old).out


@pytest.mark.rule("FAKE-QODER-003")
def test_qoder_errors_and_posture(fake: FakeCli) -> None:
    failed = qoder(fake, qoder_args(fake), "api_error")
    assert failed.code == 1
    events = qoder_events(failed)
    errors = events_of(events, Error)
    assert len(errors) == 2 and all("API Error: 500" in e.message for e in errors)
    (usage,) = events_of(events, Usage)
    assert usage.is_error is True
    no_login = qoder(fake, qoder_args(fake), env=fake.env("happy", FAKE_CLI_AUTH="missing"))
    assert no_login.code == 1
    final = frames(no_login)[-1]
    assert (final["result"], final["error_code"]) == (
        "Not logged in · Please run /login",
        "authentication_failed",
    )
    assert not (fake.cwd / "hello.html").exists()
    no_yolo = qoder(fake, ["-p", "--output-format", "stream-json", "-w", str(fake.cwd)])
    assert no_yolo.code == 0
    tool_result = json.loads(events_of(qoder_events(no_yolo), Raw)[1].line)
    assert tool_result["message"]["content"][0]["is_error"] is True
    assert not (fake.cwd / "hello.html").exists()


@pytest.mark.rule("FAKE-QODER-004")
def test_qoder_other_tools_and_common_steps(fake: FakeCli) -> None:
    read = qoder(fake, qoder_args(fake), fake.scenario_file("r", other_steps("Read")))
    events = qoder_events(read)
    # Without --include-partial-messages qoder prints whole blocks, not the model's chunks.
    assert [e.delta for e in events_of(events, ThinkingDelta)] == ["Look first."]
    assert text_of(events) == "Read it."
    assert [r["message"]["content"][0]["type"] for r in map(json.loads, raw_lines(events))] == [
        "tool_use",
        "tool_result",
    ]
    assert events_of(events, Usage)[0].cost_usd == 0.25
    common = qoder(fake, qoder_args(fake), fake.scenario_file("c", COMMON_STEPS))
    events = qoder_events(common)
    assert raw_lines(events) == ["debug: starting"] and text_of(events) == "Hello."
    assert common.err == "warning: noisy\n"
    proc = fake.popen("qoder", qoder_args(fake), scenario="ignore_stdin")
    assert proc.stdin is not None
    pump = StdoutPump(proc)
    proc.stdin.write(b"hi")
    proc.stdin.close()
    pump.until(b'"type":"result"', timeout=30)
    assert proc.poll() is None, "ignore_stdin: the fake lingers until killed"
    kill_tree(proc)


def raw_lines(events: list[Event]) -> list[str]:
    return [r.line for r in events_of(events, Raw)]


@pytest.mark.rule("FAKE-QODER-004")
def test_qoder_faults_partials_and_sessions(fake: FakeCli) -> None:
    args = qoder_args(fake)
    malformed = qoder_events(qoder(fake, args, "malformed"))
    assert text_of(malformed) == "Before.After." and len(events_of(malformed, Raw)) == 1
    foreign = qoder_events(qoder(fake, args, "foreign"))
    assert text_of(foreign) == "Mine. Still mine."
    assert raw_types(foreign) == ["system"]
    oversize = qoder_events(qoder(fake, args, "oversize"))
    assert [r.truncated_bytes for r in events_of(oversize, Raw)] == [2 * 1024 * 1024]
    crashed = qoder(fake, args, "crash_mid_line")
    assert crashed.code == 3 and isinstance(qoder_events(crashed)[-1], Raw)
    partial = qoder(fake, [*args, "--include-partial-messages"], "text")
    events = qoder_events(partial)
    assert text_of(events) == "Hello from the fake model. PONG."
    assert set(raw_types(events)) == {"stream_event"}
    sid = partial.record["session_id"]
    resumed = qoder(fake, [*args, "--resume", sid], "text")
    assert resumed.record["resumed"] is True and resumed.record["prior_turns"] == 1
    assert events_of(qoder_events(resumed), Status)[0].session_id == sid
    unknown = qoder(fake, [*args, "-r", "nope"], "text")
    assert unknown.code == 1 and "nope" in unknown.err
    lines = b"".join(stream_json_user_message(p) for p in ("one", "two"))
    two = qoder(fake, [*args, "--input-format", "stream-json"], "text", input=lines)
    assert two.code == 0, two.err
    assert two.record["turns"] == 2 and two.record["prompt_via"] == "stdin-stream-json"
    assert [u.stop_reason for u in events_of(qoder_events(two), Usage)] == ["end_turn"] * 2
    text_in = qoder(fake, [*args, "--output-format", "text", "--input-format", "stream-json"])
    assert text_in.code == 1 and "requires --output-format=stream-json" in text_in.err
