"""The plain-text fakes (aider, agy, atomcode, deepseek, grok, qwen) as real processes.

Rules: FAKE-PLAIN-001..006 (conformance/rules/fakes_stream.py). stdout is fed to the
engine's ``plain`` parser; prompts travel the way each def says (seed 002 §6.2): argv,
stdin, or a private prompt file made by ``harness.prompt.PromptFile``.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.defs.registry import get_agent_def
from harness.defs.types import AgentDef, BuildOptions, PromptDelivery, RuntimeContext
from harness.events import Artifact, Event
from harness.prompt import PromptFile, stdin_payload
from tests.fakes.conftest import (
    FakeCli,
    FakeResult,
    StdoutPump,
    events_of,
    kill_tree,
    parse_stream,
    text_of,
)

PROMPT = "Create hello.html please"
HTML = "<!doctype html>\n<h1>Hello</h1>\n"
PLAIN_IDS = ("aider", "antigravity", "atomcode", "deepseek", "grok-build", "qwen")


def run_def(
    fake: FakeCli,
    agent: str,
    *,
    scenario: str = "happy",
    model: str | None = None,
    reasoning: str | None = None,
    extra: tuple[str, ...] = (),
    log_file: str | None = None,
    **kw: Any,
) -> FakeResult:
    """Run the fake with exactly the argv and prompt route the def uses."""
    defn = get_agent_def(agent)
    options = BuildOptions(model=model, reasoning=reasoning)
    with PromptFile(PROMPT, parent=str(fake.root)) as prompt_path:
        ctx = RuntimeContext(
            cwd=str(fake.cwd), prompt_file_path=prompt_path, agent_log_file_path=log_file
        )
        args = [*defn.build_args(PROMPT, [], [], options, ctx), *extra]
        stdin = stdin_payload(defn, PROMPT) or b""
        return fake.run(agent, args, scenario=scenario, input=stdin, **kw)


def events(result: FakeResult) -> list[Event]:
    return parse_stream("plain", result.stdout)


VIA = {
    PromptDelivery.ARGV: "argv",
    PromptDelivery.STDIN: "stdin",
    PromptDelivery.FILE: "file",
}


@pytest.mark.rule("FAKE-PLAIN-001", "FAKE-PLAIN-002", "FAKE-PLAIN-003")
@pytest.mark.parametrize("agent", PLAIN_IDS)
def test_happy_run_of_each_plain_cli(fake: FakeCli, agent: str) -> None:
    defn: AgentDef = get_agent_def(agent)
    model = None if agent == "antigravity" else "some-model"
    reasoning = "high" if defn.reasoning_options else None
    result = run_def(fake, agent, model=model, reasoning=reasoning)
    assert result.code == 0, result.err
    assert result.record["prompt"] == PROMPT
    assert result.record["prompt_via"] == VIA[defn.prompt_delivery]
    parsed = events(result)
    assert text_of(parsed) == result.out, "plain stdout is all text"
    if agent == "qwen":
        # qwen 0.24.4 prints the final answer only: not the text before the write, and no
        # echo of the written file (recordings/real/qwen/happy.jsonl).
        assert result.out == "Done: hello.html is ready.\n"
    else:
        assert "I'll create the page.\n" in result.out
        assert "Done: hello.html is ready.\n" in result.out
    assert (fake.cwd / "hello.html").read_text(encoding="utf-8") == HTML
    assert events_of(parsed, Artifact) == []


@pytest.mark.rule("FAKE-PLAIN-002")
def test_qwen_prints_scenario_artifact_text_as_its_answer(fake: FakeCli) -> None:
    """An artifact block reaches qwen's stdout as the model's own final text, and the plain
    parser extracts it end to end (seed 000 §5.13)."""
    block = f'<artifact identifier="hello" type="text/html" title="hello.html">\n{HTML}</artifact>'
    steps = [
        {"kind": "text", "text": "Writing it."},
        {"kind": "tool", "tool": "write", "id": "w1", "path": "hello.html", "content": HTML},
        {"kind": "text", "text": block},
    ]
    result = run_def(fake, "qwen", scenario=fake.scenario_file("echo", steps))
    assert result.code == 0, result.err
    assert result.out == block + "\n"
    artifacts = events_of(events(result), Artifact)
    assert [(a.name, a.identifier, a.artifact_type) for a in artifacts] == [
        ("hello.html", "hello", "text/html")
    ]


@pytest.mark.rule("FAKE-PLAIN-002")
def test_aider_prints_its_whole_edit_format(fake: FakeCli) -> None:
    result = run_def(fake, "aider", model="openai/mock-model")
    lines = result.out.splitlines()
    assert lines[:4] == [
        "Aider v0.86.2",
        "Model: openai/mock-model with whole edit format",
        "Git repo: none",
        "Repo-map: disabled",
    ]
    assert "► **THINKING**" in result.out and "► **ANSWER**" in result.out
    assert f"hello.html\n```\n{HTML}```\n" in result.out
    assert "Applied edit to hello.html" in lines
    assert lines[-1] == "Tokens: 120 sent, 45 received. Cost: $0.0008 message, $0.0008 session."


@pytest.mark.rule("FAKE-PLAIN-003")
@pytest.mark.parametrize(
    ("agent", "args", "code", "message"),
    [
        (
            "aider",
            ["--message", "hi", "--bogus"],
            2,
            "aider: error: unrecognized arguments: --bogus",
        ),
        (
            "deepseek",
            ["exec", "--auto", "--bogus", "hi"],
            2,
            "error: unexpected argument '--bogus'",
        ),
        ("deepseek", ["--auto", "exec", "hi"], 2, "error: unexpected argument '--auto'"),
        ("deepseek", ["exec", "--auto"], 2, "error: missing required argument"),
        ("grok-build", ["--bogus"], 2, "error: unexpected argument '--bogus'"),
        ("grok-build", ["-p", "hi", "--effort", "turbo"], 2, "error: invalid value 'turbo'"),
        ("atomcode", ["-y", "--bogus"], 2, "error: unexpected argument '--bogus'"),
        ("antigravity", ["--model", "x", "-p", "-"], 1, "error: unknown option '--model'"),
        ("antigravity", ["-"], 1, "Error: agy needs an interactive terminal"),
        ("qwen", ["--yolo", "--output-format", "json"], 1, "Unknown argument: output-format"),
        (
            "qwen",
            ["--yolo", "--approval-mode", "yolo"],
            1,
            "Cannot use both --yolo (-y) and --approval-mode together.",
        ),
    ],
)
def test_plain_clis_refuse_bad_argv(
    fake: FakeCli, agent: str, args: list[str], code: int, message: str
) -> None:
    result = fake.run(agent, args, input=b"hi")
    assert result.code == code, result.err
    assert message in result.err
    assert result.stdout == b""
    assert not (fake.cwd / "hello.html").exists()


@pytest.mark.rule("FAKE-PLAIN-004")
def test_agy_fails_silently_except_in_its_log(fake: FakeCli) -> None:
    log = fake.root / "logs" / "agy.log"
    failed = run_def(fake, "antigravity", scenario="api_error", log_file=str(log))
    assert (failed.code, failed.stdout, failed.stderr) == (1, b"", b"")
    assert "model request failed: status 500: Internal server error" in log.read_text()
    no_login = run_def(
        fake, "antigravity", log_file=str(log), env=fake.env(FAKE_CLI_AUTH="missing")
    )
    assert (no_login.code, no_login.stdout, no_login.stderr) == (0, b"", b"")
    assert "authentication required" in log.read_text()
    # seed 002 §4.4: --log-file after -p runs, but the log stays empty.
    late_args = ["-p", "--log-file", str(log), "-"]
    late = fake.run("antigravity", late_args, scenario="api_error", input=b"x")
    assert (late.code, late.stdout, late.stderr) == (1, b"", b"")
    assert log.read_text() == "" and late.record["log_ignored"] is True


@pytest.mark.rule("FAKE-PLAIN-005")
def test_deepseek_streams_text_and_notifies_on_stderr(fake: FakeCli) -> None:
    result = run_def(fake, "deepseek")
    assert result.out == "I'll create the page.\nDone: hello.html is ready.\n"
    assert "→ write_file hello.html\n" in result.err
    assert "✓ write_file: Wrote hello.html\n" in result.err
    assert "[thinking] The user wants a page." in result.err
    batched = fake.run("deepseek", ["exec", "--auto", "--json", PROMPT])
    assert batched.out.count("\n") == 1 and '"response"' in batched.out


@pytest.mark.rule("FAKE-PLAIN-005")
@pytest.mark.parametrize(
    ("agent", "args", "stderr"),
    [
        ("deepseek", ["exec", PROMPT], "Approve write hello.html? [y/N] "),
        ("qwen", ["--model", "m"], 'Error executing tool write_file: Tool "write_file" not found'),
        ("atomcode", ["--prompt-file", "{prompt_file}"], "Allow write hello.html? [y/N] "),
    ],
)
def test_without_the_headless_flag_no_tool_runs(
    fake: FakeCli, agent: str, args: list[str], stderr: str
) -> None:
    prompt_file = fake.root / "prompt.md"
    prompt_file.write_text(PROMPT, encoding="utf-8")
    args = [a.format(prompt_file=prompt_file) for a in args]
    result = fake.run(agent, args, input=PROMPT.encode() if agent == "qwen" else b"")
    assert result.code == 0, result.err
    assert stderr in result.err
    assert not (fake.cwd / "hello.html").exists()
    assert events_of(events(result), Artifact) == []


@pytest.mark.rule("FAKE-PLAIN-006")
@pytest.mark.parametrize(
    ("agent", "stream", "message"),
    [
        ("aider", "out", "litellm.InternalServerError: OpenAIException - Internal server error"),
        ("deepseek", "err", "Error: API request failed (500): Internal server error"),
        ("qwen", "err", "[API Error: Internal server error (Status: 500)]"),
        ("grok-build", "err", "Error: request failed with status 500: Internal server error"),
        ("atomcode", "err", "Error: API error 500: Internal server error"),
    ],
)
def test_api_errors_each_cli_its_own_way(
    fake: FakeCli, agent: str, stream: str, message: str
) -> None:
    result = run_def(fake, agent, scenario="api_error")
    assert result.code == 1
    assert message in (result.out if stream == "out" else result.err)


@pytest.mark.rule("FAKE-PLAIN-006")
def test_plain_fault_steps(fake: FakeCli) -> None:
    crashed = run_def(fake, "qwen", scenario="crash_mid_line")
    assert crashed.code == 3
    assert crashed.out == "Starting.\nthis line never ends"
    assert text_of(events(crashed)) == crashed.out
    exited = run_def(fake, "grok-build", scenario="exit_code")
    assert (exited.code, exited.out) == (7, "Partial.\n")
    oversize = run_def(fake, "deepseek", scenario="oversize")
    lines = oversize.out.split("\n")
    assert lines[0] == "Before." and len(lines[1]) == 2 * 1024 * 1024 and lines[2] == "After."
    malformed = run_def(fake, "aider", scenario="malformed")
    assert '\n{"type":"text","text":"a frame cut short\n' in malformed.out
    foreign = run_def(fake, "antigravity", scenario="foreign")
    assert "output of another session" in text_of(events(foreign))
    noisy = run_def(fake, "atomcode", scenario="stderr")
    assert noisy.err == "warning: something noisy\nwarning: more noise\n"
    tool_error = run_def(fake, "atomcode", scenario="tool_error")
    assert "⏺ Bash(false)\n  ⎿  Error: command failed with exit code 1\n" in tool_error.out


@pytest.mark.rule("FAKE-PLAIN-006")
def test_plain_other_tools_and_common_steps(fake: FakeCli) -> None:
    steps: list[dict[str, Any]] = [
        {"kind": "thinking", "text": "Look first."},
        {
            "kind": "tool",
            "tool": "other",
            "name": "Read",
            "input": {"path": "README.md"},
            "output": "# readme",
        },
        {"kind": "text", "text": "Read it."},
    ]
    other = run_def(fake, "atomcode", scenario=fake.scenario_file("o", steps))
    assert other.out == '⏺ Read({"path":"README.md"})\n  ⎿  # readme\nRead it.\n'
    notified = run_def(fake, "deepseek", scenario=fake.scenario_file("o", steps))
    assert notified.out == "Read it.\n"
    assert '→ Read {"path":"README.md"}\n✓ Read: # readme\n' in notified.err
    common: list[dict[str, Any]] = [
        {"kind": "noise", "text": "debug: starting"},
        {"kind": "stderr", "text": "warning: noisy\n"},
        {"kind": "sleep", "ms": 10},
        {"kind": "text", "text": "Hello."},
    ]
    noisy = run_def(fake, "grok-build", scenario=fake.scenario_file("c", common))
    assert (noisy.out, noisy.err) == ("debug: starting\nHello.\n", "warning: noisy\n")
    proc = fake.popen("qwen", ["--yolo"], scenario="hang")
    assert proc.stdin is not None
    pump = StdoutPump(proc)
    proc.stdin.write(b"hi")
    proc.stdin.close()
    pump.until(b"Thinking about it...", timeout=30)
    assert proc.poll() is None
    kill_tree(proc)


@pytest.mark.rule("FAKE-PLAIN-006")
def test_plain_probes(fake: FakeCli) -> None:
    versions = {
        "aider": "aider 0.86.2",
        "antigravity": "1.0.3",
        "atomcode": "atomcode 0.9.4",
        "deepseek": "deepseek 0.8.31",
        "grok-build": "grok 0.6.2",
        "qwen": "0.24.4",
    }
    for agent, version in versions.items():
        defn = get_agent_def(agent)
        probe = fake.run(agent, list(defn.version_args))
        assert (probe.code, probe.out) == (0, version + "\n")
        assert fake.run(agent, ["--help"]).out.splitlines()[0].lower().startswith("usage:")
    grok = get_agent_def("grok-build")
    assert grok.list_models is not None
    listing = fake.run("grok-build", list(grok.list_models.args))
    parsed = grok.list_models.parse(listing.out)
    assert parsed is not None
    assert [m.id for m in parsed] == [
        "default",
        "grok-build",
        "grok-4.3",
        "grok-4.20-reasoning",
        "grok-4.20-non-reasoning",
    ]


@pytest.mark.rule("FAKE-PLAIN-006")
def test_plain_sessions(fake: FakeCli) -> None:
    first = run_def(fake, "qwen", scenario="text")
    sid = first.record["session_id"]
    assert first.record["resumed"] is False
    resumed = run_def(fake, "qwen", scenario="text", extra=("--resume", sid))
    assert resumed.record["resumed"] is True and resumed.record["prior_turns"] == 1
    latest = run_def(fake, "qwen", scenario="text", extra=("--continue",))
    assert latest.record["session_id"] == sid and latest.record["prior_turns"] == 2
    unknown = run_def(fake, "qwen", scenario="text", extra=("--resume", "nope"))
    assert (unknown.code, unknown.err) == (1, "No saved session found with ID nope.\n")
    run_def(fake, "aider", scenario="text")
    restored = run_def(fake, "aider", scenario="text", extra=("--restore-chat-history",))
    assert restored.record["resumed"] is True and restored.record["prior_turns"] == 1
