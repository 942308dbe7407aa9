"""The plain-text fakes (aider, agy, atomcode, deepseek, grok, qwen) as real processes.

Rules: FAKE-PLAIN-001..006 (conformance/rules/fakes_stream.py). stdout is fed to the
engine's ``plain`` parser; prompts travel the way each def says (seed 002 §6.2): argv,
stdin, or a private prompt file made by ``harness.host.prompt.PromptFile``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fake_clis.plain import _rich_lines
from harness.defs.registry import get_agent_def
from harness.defs.types import AgentDef, BuildOptions, PromptDelivery, RuntimeContext
from harness.events import Artifact, Event
from harness.host.prompt import PromptFile, stdin_payload
from harness.live.recipes import load_recipe
from tests.fakes.conftest import FakeCli, FakeResult, events_of, parse_stream, text_of
from tests.support.processes import StdoutPump, kill_tree

PROMPT = "Create hello.html please"
HTML = "<!doctype html>\n<h1>Hello</h1>\n"
RECIPES = Path(__file__).resolve().parents[2] / "harness" / "live" / "recipes"
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
    elif agent == "grok-build":
        # grok 0.2.111 runs the model's messages together and ends the answer with one
        # newline (recordings/real/grok-build/happy.jsonl).
        assert result.out == "I'll create the page.Done: hello.html is ready.\n"
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


# -- aider 0.86.2 (recordings/real/aider/; harness live diff aider --scenario S) ----------------

AIDER_HEADER = (
    "\nAider v0.86.2\nModel: openai/mock-model with whole edit format\n"
    "Git repo: none\nRepo-map: disabled\n\n"
)
AIDER_NOT_CONFORMING = (
    "The LLM did not conform to the edit format.\n"
    "https://aider.chat/docs/troubleshooting/edit-errors.html\n\n"
    "No filename provided before ``` in file listing\n"
)
AIDER_ARGS = ["--no-pretty", "--no-git", "--model", "openai/mock-model", "--message", PROMPT]


def run_aider(
    fake: FakeCli, scenario: str = "happy", *, yes: bool = True, stdin: bytes = b"", **env: str
) -> FakeResult:
    """aider as the def runs it (``--yes-always``) or without it, at a known width."""
    args = ["--yes-always", *AIDER_ARGS] if yes else AIDER_ARGS
    settings = {"COLUMNS": "80", "TERM": "xterm", **env}
    return fake.run(
        "aider", args, scenario=scenario, input=stdin, env=fake.env(scenario, **settings)
    )


@pytest.mark.rule("FAKE-PLAIN-002")
def test_aider_prints_its_whole_edit_format(fake: FakeCli) -> None:
    """The happy run byte for byte as aider 0.86.2 prints it: a blank line before the banner
    and after it, reasoning in aider's frame, the reply, a blank line, the token report (no
    cost: the scenario gives none), then the new-file confirmation's blank line and subject
    and the edit (real stdout of `harness live run aider --scenario happy`)."""
    result = run_aider(fake)
    assert result.code == 0, result.err
    assert result.out == (
        AIDER_HEADER
        + "\n--------------\n► **THINKING**\n\nThe user wants a page.\n\n"
        + "------------\n► **ANSWER**\n\nI'll create the page.\n"
        + f"hello.html\n```\n{HTML}```\nDone: hello.html is ready.\n"
        + "Tokens: 120 sent, 45 received.\n"
        + "\nhello.html\nApplied edit to hello.html\n"
    )
    assert (fake.cwd / "hello.html").read_text(encoding="utf-8") == HTML
    # prompt_toolkit's warning (stdin is a pipe here); a dumb TERM is reported on stdout.
    assert result.err == "Warning: Input is not a terminal (fd=0).\n"
    dumb = run_aider(fake, TERM="dumb")
    assert dumb.out.startswith(
        "Detected dumb terminal, disabling fancy input and pretty output.\n" + AIDER_HEADER
    )
    assert dumb.err == ""
    text = run_aider(fake, "text")
    assert (text.code, text.out) == (
        0,
        AIDER_HEADER + "Hello from the fake model. PONG.\nTokens: 10 sent, 8 received.\n",
    )


@pytest.mark.rule("FAKE-PLAIN-002", "FAKE-PLAIN-006")
def test_aider_reflects_a_reply_with_no_file_name_three_times(fake: FakeCli) -> None:
    """A shell step reaches aider as a ```bash block; the whole format finds no file name
    before it, so aider sends the error back, gets the same reply, and stops after three
    reflections. Nothing runs and nothing is written."""
    result = run_aider(fake, "shell")
    assert result.code == 0, result.err
    reply = "\n```bash\necho hi\n```\nThe command printed hi.\nTokens: 30 sent, 12 received.\n"
    assert result.out == (
        AIDER_HEADER
        + (reply + AIDER_NOT_CONFORMING) * 4
        + "Only 3 reflections allowed, stopping.\n"
    )
    assert "Running" not in result.out
    assert list(fake.cwd.iterdir()) == []
    # One listing and one bash block in the same reply: the reply does not parse, so not
    # even the listing is applied.
    steps: list[dict[str, Any]] = [
        {"kind": "tool", "tool": "write", "id": "w", "path": "a.txt", "content": "A"},
        {"kind": "tool", "tool": "shell", "id": "s", "command": "ls"},
    ]
    mixed = run_aider(fake, fake.scenario_file("mixed", steps))
    assert mixed.out.count(AIDER_NOT_CONFORMING) == 4
    assert "\na.txt\n```\nA\n```\n\n```bash\nls\n```\n" in mixed.out
    assert not (fake.cwd / "a.txt").exists()


@pytest.mark.rule("FAKE-PLAIN-006")
def test_aider_prints_a_cost_only_when_the_scenario_gives_one(fake: FakeCli) -> None:
    priced: list[dict[str, Any]] = [
        {"kind": "text", "text": "```bash\nls\n```"},
        {"kind": "usage", "input_tokens": 1500, "output_tokens": 12000, "cost_usd": 0.0042},
    ]
    result = run_aider(fake, fake.scenario_file("priced", priced))
    reports = [line for line in result.out.splitlines() if line.startswith("Tokens:")]
    # aider's format_tokens and format_cost; the message cost adds up over the reflections.
    assert reports == [
        "Tokens: 1.5k sent, 12k received. Cost: $0.0042 message, $0.0042 session.",
        "Tokens: 1.5k sent, 12k received. Cost: $0.0084 message, $0.0084 session.",
        "Tokens: 1.5k sent, 12k received. Cost: $0.01 message, $0.01 session.",
        "Tokens: 1.5k sent, 12k received. Cost: $0.02 message, $0.02 session.",
    ]
    unpriced = run_aider(fake, "text")
    assert "Cost" not in unpriced.out
    # No usage step: aider still reports tokens (its own count; the fake estimates).
    bare = run_aider(fake, fake.scenario_file("bare", [{"kind": "text", "text": "Hi there."}]))
    assert bare.out.startswith(AIDER_HEADER + "Hi there.\nTokens: ")
    last = bare.out.splitlines()[-1]
    assert last.startswith("Tokens: ") and last.endswith(" received.") and "Cost" not in last
    # The live recipe masks the counts on both sides (LIVE-DIFF-TEXT-001).
    recipe = load_recipe(RECIPES / "aider.json")
    masked = {v.apply(line) for v in recipe.volatile_text for line in (*reports[:1], last)}
    assert masked == {
        "Tokens: N sent, N received. Cost: $0.0042 message, $0.0042 session.",
        "Tokens: N sent, N received.",
    }


@pytest.mark.rule("FAKE-PLAIN-005")
def test_aider_without_yes_always_asks_on_stdout_and_reads_stdin(fake: FakeCli) -> None:
    ask = "\nhello.html\nCreate new file? (Y)es/(N)o [Yes]: "
    refused = run_aider(fake, yes=False, stdin=b"n\n")
    assert refused.code == 0, refused.err
    assert refused.out.endswith(ask + "Skipping edits to hello.html\n")
    assert not (fake.cwd / "hello.html").exists()
    retried = run_aider(fake, yes=False, stdin=b"maybe\nno\n")
    assert retried.out.endswith(
        ask + "Please answer with one of: yes, no, skip, all\n"
        "Create new file? (Y)es/(N)o [Yes]: Skipping edits to hello.html\n"
    )
    assert not (fake.cwd / "hello.html").exists()
    # EOF is the default answer, Yes.
    accepted = run_aider(fake, yes=False)
    assert accepted.out.endswith(ask + "Applied edit to hello.html\n")
    assert (fake.cwd / "hello.html").read_text(encoding="utf-8") == HTML
    # A file that exists but is not in the chat is asked about differently.
    (fake.cwd / "hello.html").write_text("old\n", encoding="utf-8")
    kept = run_aider(fake, yes=False, stdin=b"n\n")
    assert kept.out.endswith(
        "\nhello.html\nAllow edits to file that has not been added to the chat? "
        "(Y)es/(N)o [Yes]: Skipping edits to hello.html\n"
    )
    assert (fake.cwd / "hello.html").read_text(encoding="utf-8") == "old\n"


@pytest.mark.rule("FAKE-PLAIN-006")
def test_aider_retries_an_api_error_and_exits_zero(fake: FakeCli) -> None:
    """A 500 is retried on aider's schedule (0.25 s doubling while <= 60 s), each failure
    printed as litellm's error (wrapped at 80 columns, as Rich does) and aider's
    description; after the last one aider exits 0 (real stdout of the api_error run)."""
    error = (
        "litellm.InternalServerError: InternalServerError: OpenAIException - Internal \n"
        "server error\nThe API provider's servers are down or overloaded.\n"
    )
    delays = ("0.2", "0.5", "1.0", "2.0", "4.0", "8.0", "16.0", "32.0")
    result = run_aider(fake, "api_error")
    assert result.code == 0, result.err
    assert result.out == (
        AIDER_HEADER
        + "".join(f"{error}Retrying in {d} seconds...\n" for d in delays)
        + error
        + "\n"
    )
    wide = run_aider(fake, "api_error", COLUMNS="200")
    assert (
        wide.out.count(
            "litellm.InternalServerError: InternalServerError: OpenAIException - "
            "Internal server error\n"
        )
        == len(delays) + 1
    )
    # A 401 is not retried.
    steps = [{"kind": "api_error", "status": 401, "message": "bad key"}]
    denied = run_aider(fake, fake.scenario_file("auth", steps))
    assert denied.code == 0
    assert denied.out == (
        AIDER_HEADER
        + "litellm.AuthenticationError: AuthenticationError: OpenAIException - bad key\n"
        + "The API provider is not able to authenticate you. Check your API key.\n\n"
    )


@pytest.mark.rule("FAKE-PLAIN-006")
def test_aider_process_faults_break_the_streamed_line_and_play_once(fake: FakeCli) -> None:
    """A fault of the process lands on a line of its own after text streamed without a
    newline, and is not replayed when aider sends a reply back."""
    crashed = run_aider(fake, "crash_mid_line")
    assert crashed.code == 3
    assert crashed.out == AIDER_HEADER + "Starting.\nthis line never ends"
    noisy = run_aider(fake, "noise")
    assert noisy.out.startswith(AIDER_HEADER + "[SandboxDebug] starting\nHello.\ndebug: done\n")
    steps: list[dict[str, Any]] = [
        {"kind": "noise", "text": "debug: once"},
        {"kind": "tool", "tool": "shell", "id": "s", "command": "ls"},
    ]
    reflected = run_aider(fake, fake.scenario_file("once", steps))
    assert reflected.out.count("debug: once") == 1
    assert reflected.out.count("```bash\nls\n```") == 4


@pytest.mark.rule("FAKE-PLAIN-006")
def test_aider_lines_wrap_as_rich_wraps_them() -> None:
    """aider's own lines go through a Rich console: words wrap at the width, a trailing
    space stays when it fits, a word longer than the width is folded, wide characters take
    two cells (checked against rich 14 on 3000 random strings when this was written)."""
    assert _rich_lines("aaa bbb ccc", 8) == ["aaa bbb ", "ccc"]
    assert _rich_lines("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]
    assert _rich_lines("ab " + "y" * 12, 5) == ["ab ", "yyyyy", "yyyyy", "yy"]
    assert _rich_lines("中中中", 4) == ["中中", "中"]
    assert _rich_lines("a\n\nb", 80) == ["a", "", "b"]
    assert _rich_lines("", 80) == [""]


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
    ("agent", "stream", "message", "code"),
    [
        # aider 0.86.2 prints the failure as text and exits 0 (recordings/real/aider/).
        ("aider", "out", "OpenAIException - Internal \nserver error", 0),
        ("deepseek", "err", "Error: API request failed (500): Internal server error", 1),
        ("qwen", "err", "[API Error: Internal server error (Status: 500)]", 1),
        ("grok-build", "err", "Error: request failed with status 500: Internal server error", 1),
        ("atomcode", "err", "Error: API error 500: Internal server error", 1),
    ],
)
def test_api_errors_each_cli_its_own_way(
    fake: FakeCli, agent: str, stream: str, message: str, code: int
) -> None:
    result = run_def(fake, agent, scenario="api_error", env=fake.env("api_error", COLUMNS="80"))
    assert result.code == code
    assert message in (result.out if stream == "out" else result.err)


@pytest.mark.rule("FAKE-PLAIN-006")
def test_plain_fault_steps(fake: FakeCli) -> None:
    crashed = run_def(fake, "qwen", scenario="crash_mid_line")
    assert crashed.code == 3
    assert crashed.out == "Starting.\nthis line never ends"
    assert text_of(events(crashed)) == crashed.out
    exited = run_def(fake, "grok-build", scenario="exit_code")
    # grok ends its answer with a newline only when the turn completes
    assert (exited.code, exited.out) == (7, "Partial.")
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


@pytest.mark.rule("FAKE-PLAIN-001")
def test_grok_without_always_approve_drops_the_tool_call_and_ends_the_turn(
    fake: FakeCli, tmp_path: Path
) -> None:
    """As grok 0.2.111 does in --prompt-file mode: no question, no tool, the text so far,
    exit 0; with the def's --always-approve the file is written."""
    prompt = tmp_path / "prompt.md"
    prompt.write_text(PROMPT, encoding="utf-8")
    dropped = fake.run("grok-build", ["--prompt-file", str(prompt)], scenario="happy")
    assert dropped.code == 0, dropped.err
    assert not (fake.cwd / "hello.html").exists()
    assert dropped.out.strip() == "I'll create the page."
    approved = fake.run(
        "grok-build", ["--prompt-file", str(prompt), "--always-approve"], scenario="happy"
    )
    assert approved.code == 0, approved.err
    assert (fake.cwd / "hello.html").is_file()
    assert approved.out == "I'll create the page.Done: hello.html is ready.\n"
