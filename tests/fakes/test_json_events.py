"""The json-event-stream fakes (``fake_clis/json_events/``) run as real processes.

Each test starts ``python -m fake_clis AGENT ...`` in a temporary cwd with a temporary
HOME, feeds its stdout to the engine's own parser for that def (``create_parser`` with
the def's ``stream_format`` / ``event_parser``) and asserts the events, the exit code,
the files written and the fake's record. argv comes from each def's ``build_args``
wherever a test is not about argv itself, so every run also proves the def's argv is
accepted. Expected wire facts are the documented ones (wire §A.3.1, §A.5; ref §2.2;
the real CLIs' captures in recordings/real/), not our own output.

Rules: FAKE-JSONEV-HAPPY-001, FAKE-JSONEV-PROMPT-001, FAKE-JSONEV-TOOLS-001,
FAKE-JSONEV-APIERR-001, FAKE-JSONEV-FAULTS-001, FAKE-JSONEV-FOREIGN-001,
FAKE-JSONEV-COMMON-001, FAKE-JSONEV-ARGV-001, FAKE-JSONEV-PROBE-001,
FAKE-JSONEV-OLDVER-001, FAKE-JSONEV-SESSION-001, FAKE-CODEXEXEC-ARGV-001,
FAKE-CODEXEXEC-EVENTS-001, FAKE-CODEXEXEC-SANDBOX-001, FAKE-CODEXEXEC-APPSERVER-001,
FAKE-CURSOR-STREAM-001, FAKE-CURSOR-ARGV-001, FAKE-OPENCODE-EVENTS-001,
FAKE-OPENCODE-CONFIG-001, FAKE-OPENCODE-ARGV-001, FAKE-GEMINI-ARGV-001.
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_clis.argv import parse_argv
from fake_clis.base import FakeRun
from fake_clis.json_events import SPECS, padded_line, truncated_line
from fake_clis.scenario import parse_scenario
from harness.defs.registry import get_agent_def
from harness.defs.types import AgentDef, BuildOptions, RuntimeContext
from harness.formats import create_parser
from harness.host.launch import RealFileSystem
from harness.runtime.detect import AuthStatus, classify_auth, probe_agent
from harness.runtime.probe import ProbeResult
from tests.helpers import as_json
from tests.support.processes import kill_tree

#: One agent per wire dialect, for the per-family tests.
FAMILIES = ("codex", "cursor-agent", "opencode", "gemini")
ALL_AGENTS = ("codex", "cursor-agent", "opencode", "byok-opencode", "mimo", "gemini")

#: Capabilities a current build's help advertises (what detection would find).
FULL_CAPS: dict[str, dict[str, bool]] = {
    "cursor-agent": {"trust": True},
    "opencode": {
        "skipPermissions": True,
        "autoApprove": True,
        "workspaceDir": True,
        "variantFlag": True,
        "pureMode": True,
    },
    "byok-opencode": {"skipPermissions": True, "autoApprove": True},
}

_RECORDS = itertools.count()


# --------------------------------------------------------------------------- helpers


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test runner's env without anything that steers a fake or a real CLI."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("FAKE_CLI_")
        and k not in ("OPENCODE_CONFIG_CONTENT", "MIMOCODE_CONFIG_CONTENT", "OD_CODEX_TRANSPORT")
        and not k.endswith("_BIN")
    }
    env.update(extra or {})
    return env


@dataclass
class Outcome:
    code: int
    stdout: bytes
    stderr: str
    events: list[dict[str, Any]]
    record: dict[str, Any]
    cwd: Path

    @property
    def lines(self) -> list[str]:
        return self.stdout.decode("utf-8", "replace").splitlines()

    def frames(self) -> list[dict[str, Any]]:
        """Every stdout line that is a JSON object."""
        out: list[dict[str, Any]] = []
        for line in self.lines:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                out.append(value)
        return out

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    @property
    def text(self) -> str:
        return "".join(e["delta"] for e in self.of("text_delta"))


def parse_stdout(agent: str, data: bytes) -> list[dict[str, Any]]:
    defn = get_agent_def(agent)
    parser = create_parser(defn.stream_format, defn.event_parser)
    return as_json([*parser.feed(data), *parser.finish()])


def run_fake(
    workdir: Path,
    agent: str,
    args: Sequence[str],
    *,
    scenario: str = "happy",
    stdin: bytes = b"Build hello.html please.",
    env: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> Outcome:
    """Run the fake to completion in ``workdir/work`` with ``HOME=workdir/home``."""
    cwd = workdir / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    record = workdir / f"record-{next(_RECORDS)}.json"
    full_env = clean_env(
        {
            "HOME": str(workdir / "home"),
            "FAKE_CLI_SCENARIO": scenario,
            "FAKE_CLI_RECORD": str(record),
            **(env or {}),
        }
    )
    proc = subprocess.run(
        [sys.executable, "-m", "fake_clis", agent, *args],
        cwd=cwd,
        env=full_env,
        input=stdin,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    recorded: dict[str, Any] = {}
    if record.is_file():
        recorded = json.loads(record.read_text(encoding="utf-8"))
    return Outcome(
        code=proc.returncode,
        stdout=proc.stdout,
        stderr=proc.stderr.decode("utf-8", "replace"),
        events=parse_stdout(agent, proc.stdout),
        record=recorded,
        cwd=cwd,
    )


def def_args(
    agent: str,
    cwd: Path,
    *,
    caps: Mapping[str, bool] | None = None,
    resume: str | None = None,
    model: str | None = None,
    platform: str = "linux",
    ctx_env: Mapping[str, str] | None = None,
    dirs: Sequence[str] = (),
    reasoning: str | None = None,
    service_tier: str | None = None,
) -> list[str]:
    """The def's own argv for one turn (the argv the harness throws at the fake)."""
    defn = get_agent_def(agent)
    options = BuildOptions(
        model=model,
        reasoning=reasoning,
        service_tier=service_tier,
        capabilities=dict(FULL_CAPS.get(agent, {}) if caps is None else caps),
    )
    ctx = RuntimeContext(
        cwd=str(cwd), platform=platform, env=dict(ctx_env or {}), resume_session_id=resume
    )
    return defn.build_args("Build hello.html please.", [], list(dirs), options, ctx)


def run_def(workdir: Path, agent: str, scenario: str = "happy", **kwargs: Any) -> Outcome:
    """Run the fake with the def's own argv; ``env`` is the process env, ``ctx_env`` the def's."""
    env = kwargs.pop("env", None)
    stdin = kwargs.pop("stdin", b"Build hello.html please.")
    args = def_args(agent, workdir / "work", **kwargs)
    return run_fake(workdir, agent, args, scenario=scenario, stdin=stdin, env=env)


def scenario_file(workdir: Path, name: str, steps: list[dict[str, Any]], **top: Any) -> str:
    """A custom scenario written next to the run (validated by the fake on load)."""
    path = workdir / f"{name}.json"
    path.write_text(json.dumps({"name": name, "steps": steps, **top}), encoding="utf-8")
    return str(path)


def session_of(out: Outcome) -> str | None:
    """The session id the parser reported (status.session_id), last one wins."""
    ids = [e["session_id"] for e in out.of("status") if e.get("session_id")]
    return ids[0] if ids else None


def raw_types(out: Outcome) -> list[str]:
    kinds: list[str] = []
    for event in out.of("raw"):
        try:
            kinds.append(str(json.loads(event["line"]).get("type")))
        except ValueError:
            kinds.append("<not json>")
    return kinds


# --------------------------------------------------------------------------- happy


@dataclass(frozen=True)
class HappyShape:
    #: (tool name, input key holding the path) of the parsed write tool; None = raw.
    tool: tuple[str, str] | None
    thinking: bool
    #: ``type`` of every stdout frame the dialect leaves raw.
    raw: tuple[str, ...] = ()
    session_on_status: bool = True


HAPPY: dict[str, HappyShape] = {
    "codex": HappyShape(("Write", "file_path"), thinking=True),
    # ref §2.2: the user echo, thinking and tool_call frames are not mapped by the dialect.
    "cursor-agent": HappyShape(
        None,
        thinking=False,
        raw=("user", "thinking", "thinking", "tool_call", "tool_call"),
    ),
    "opencode": HappyShape(("write", "filePath"), thinking=False),
    "byok-opencode": HappyShape(("write", "filePath"), thinking=False),
    "mimo": HappyShape(("write", "filePath"), thinking=False),
    "gemini": HappyShape(("write_file", "file_path"), thinking=False, session_on_status=False),
}


@pytest.mark.rule("FAKE-JSONEV-HAPPY-001")
@pytest.mark.parametrize("agent", ALL_AGENTS)
def test_happy_scenario_parses_into_text_tool_usage_and_writes_the_file(
    tmp_path: Path, agent: str
) -> None:
    out = run_def(tmp_path, agent)
    shape = HAPPY[agent]
    assert out.code == 0, out.stderr
    assert (out.cwd / "hello.html").read_text(
        encoding="utf-8"
    ) == "<!doctype html>\n<h1>Hello</h1>\n"
    assert out.text == "I'll create the page.Done: hello.html is ready."
    assert raw_types(out) == list(shape.raw)
    thinking = [e["delta"] for e in out.of("thinking_delta")]
    assert thinking == (["The user wants a page."] if shape.thinking else [])
    usage = out.of("usage")[-1]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (120, 45)
    assert not out.of("error")
    if shape.session_on_status:
        assert session_of(out) == out.record["session_id"]
    if shape.tool is None:
        assert not out.of("tool_use")
        written = [json.loads(e["line"]) for e in out.of("raw") if '"tool_call"' in e["line"]]
        assert {f["subtype"] for f in written} == {"started", "completed"}
        assert all("writeToolCall" in f["tool_call"] for f in written)
        return
    name, path_key = shape.tool
    (use,) = out.of("tool_use")
    (result,) = out.of("tool_result")
    assert use["name"] == name
    assert Path(use["input"][path_key]) == (out.cwd / "hello.html").resolve()
    assert result["tool_use_id"] == use["id"]
    assert result["is_error"] is False


@st.composite
def text_steps(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Text steps (with arbitrary chunking) and write tools between some of them."""
    alphabet = st.characters(exclude_categories=["Cs"])
    steps: list[dict[str, Any]] = []
    for index in range(draw(st.integers(1, 4))):
        chunks = draw(st.lists(st.text(alphabet, min_size=1, max_size=8), min_size=1, max_size=4))
        steps.append({"kind": "text", "text": "".join(chunks), "chunks": chunks})
        if draw(st.booleans()):
            steps.append({"kind": "tool", "tool": "write", "path": f"f{index}.txt", "content": "x"})
    return steps


def codex_paragraphs(steps: Sequence[Mapping[str, Any]]) -> str:
    """ref §2.2 codex paragraph rule over consecutive agent_message items."""
    text = ""
    previous_message = False
    for step in steps:
        if step["kind"] != "text":
            previous_message = False
            continue
        piece = str(step["text"])
        if previous_message and not text.endswith("\n") and not piece.startswith("\n"):
            text += "\n"
        text += piece
        previous_message = True
    return text


def run_in_process(agent: str, args: Sequence[str], steps: list[dict[str, Any]]) -> bytes:
    """Render a scenario with the emulator in this process (no exit steps allowed)."""
    spec = SPECS[agent]
    parsed = parse_argv(spec.grammar(False), list(args), style=spec.style, prog=spec.prog)
    scenario = parse_scenario({"name": "generated", "steps": steps})
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "work").mkdir()
        stdout = io.BytesIO()
        run = FakeRun(
            spec=spec,
            parsed=parsed,
            argv=list(args),
            scenario=scenario,
            cwd=root / "work",
            home=root / "home",
            env={"HOME": str(root / "home")},
            stdin=io.BytesIO(b"prompt"),
            stdout=stdout,
            stderr=io.BytesIO(),
        )
        assert spec.run(run) == 0
        return stdout.getvalue()


@pytest.mark.rule("FAKE-JSONEV-HAPPY-001", "FAKE-CURSOR-STREAM-001")
@pytest.mark.parametrize("agent", FAMILIES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=text_steps())
def test_any_chunked_text_reaches_the_parser_exactly_once(
    agent: str, steps: list[dict[str, Any]]
) -> None:
    args = {
        "codex": ["exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write"],
        "cursor-agent": ["-p", "--output-format", "stream-json", "--stream-partial-output"],
        "opencode": ["run", "--format", "json"],
        "gemini": ["--output-format", "stream-json", "--yolo"],
    }[agent]
    events = parse_stdout(agent, run_in_process(agent, args, steps))
    text = "".join(e["delta"] for e in events if e["type"] == "text_delta")
    expected = (
        codex_paragraphs(steps)
        if agent == "codex"
        else "".join(str(s["text"]) for s in steps if s["kind"] == "text")
    )
    assert text == expected


# --------------------------------------------------------------------------- prompt


@pytest.mark.rule("FAKE-JSONEV-PROMPT-001")
@pytest.mark.parametrize("agent", ALL_AGENTS)
def test_prompt_is_read_from_stdin_to_eof_and_recorded(tmp_path: Path, agent: str) -> None:
    prompt = "Line one\nLine two — ünïcødé \u2028 end\n"
    out = run_def(tmp_path, agent, "text", stdin=prompt.encode("utf-8"))
    assert out.code == 0, out.stderr
    assert out.record["prompt"] == prompt
    assert out.record["prompt_via"] == "stdin"


@pytest.mark.rule("FAKE-JSONEV-PROMPT-001")
@pytest.mark.parametrize(
    ("agent", "args", "via"),
    [
        ("codex", ["exec", "--json", "--skip-git-repo-check", "Say hi"], "argv"),
        ("cursor-agent", ["-p", "--output-format", "stream-json", "Say hi"], "argv"),
        ("opencode", ["run", "--format", "json", "Say hi"], "argv"),
        ("gemini", ["-o", "stream-json", "-p", "Say hi"], "argv"),
    ],
)
def test_prompt_in_argv_is_used_without_stdin(
    tmp_path: Path, agent: str, args: list[str], via: str
) -> None:
    out = run_fake(tmp_path, agent, args, scenario="text", stdin=b"")
    assert out.code == 0, out.stderr
    assert (out.record["prompt"], out.record["prompt_via"]) == ("Say hi", via)


@pytest.mark.rule("FAKE-JSONEV-PROMPT-001")
def test_gemini_appends_the_prompt_flag_to_stdin(tmp_path: Path) -> None:
    out = run_fake(tmp_path, "gemini", ["-o", "stream-json", "-p", "Q"], stdin=b"context")
    assert out.code == 0, out.stderr
    assert (out.record["prompt"], out.record["prompt_via"]) == ("context\n\nQ", "stdin+argv")
    user = [f for f in out.frames() if f.get("type") == "message" and f.get("role") == "user"]
    assert [u["content"] for u in user] == ["context\n\nQ"]


@pytest.mark.rule("FAKE-JSONEV-PROMPT-001")
def test_codex_without_any_prompt_fails_like_codex(tmp_path: Path) -> None:
    out = run_def(tmp_path, "codex", "text", stdin=b"")
    assert out.code == 1
    assert "No prompt provided via stdin." in out.stderr
    assert "Reading prompt from stdin..." in out.stderr
    assert out.stdout == b""


# --------------------------------------------------------------------------- tools


@pytest.mark.rule("FAKE-JSONEV-TOOLS-001")
@pytest.mark.parametrize(
    ("agent", "name", "command_key"),
    [
        ("codex", "Bash", "command"),
        ("opencode", "bash", "command"),
        ("gemini", "run_shell_command", "command"),
    ],
)
@pytest.mark.parametrize("scenario", ["shell", "tool_error"])
def test_shell_tools_and_failed_results(
    tmp_path: Path, agent: str, name: str, command_key: str, scenario: str
) -> None:
    out = run_def(tmp_path, agent, scenario)
    assert out.code == 0, out.stderr
    (use,) = out.of("tool_use")
    (result,) = out.of("tool_result")
    assert use["name"] == name
    command = "echo hi" if scenario == "shell" else "false"
    assert command in use["input"][command_key]
    assert result["tool_use_id"] == use["id"]
    if scenario == "shell":
        assert (result["content"], result["is_error"]) == ("hi\n", False)
    else:
        assert result["is_error"] is True
        assert result["content"] == "command failed with exit code 1"


@pytest.mark.rule("FAKE-JSONEV-TOOLS-001")
@pytest.mark.parametrize("is_error", [False, True])
def test_cursor_shell_tool_frames(tmp_path: Path, is_error: bool) -> None:
    out = run_def(tmp_path, "cursor-agent", "tool_error" if is_error else "shell")
    assert out.code == 0, out.stderr
    calls = [json.loads(e["line"]) for e in out.of("raw") if '"tool_call"' in e["line"]]
    assert [c["subtype"] for c in calls] == ["started", "completed"]
    assert calls[0]["call_id"] == calls[1]["call_id"]
    result = calls[1]["tool_call"]["shellToolCall"]["result"]
    if is_error:
        assert result["failure"]["exitCode"] == 1
    else:
        assert (result["success"]["exitCode"], result["success"]["stdout"]) == (0, "hi\n")


@pytest.mark.rule("FAKE-JSONEV-TOOLS-001")
@pytest.mark.parametrize(
    ("agent", "expected_name"),
    [
        ("codex", "mcp__docs__search"),
        ("opencode", "mcp__docs__search"),
        ("gemini", "mcp__docs__search"),
    ],
)
def test_other_tools_and_failed_writes(tmp_path: Path, agent: str, expected_name: str) -> None:
    steps: list[dict[str, Any]] = [
        {
            "kind": "tool",
            "tool": "other",
            "id": "t1",
            "name": "mcp__docs__search",
            "input": {"q": "hooks"},
            "output": "3 results",
        },
        {
            "kind": "tool",
            "tool": "write",
            "path": "nope.txt",
            "content": "never",
            "output": "disk full",
            "is_error": True,
        },
        {"kind": "text", "text": "ok"},
    ]
    out = run_def(tmp_path, agent, scenario_file(tmp_path, "tools", steps))
    assert out.code == 0, out.stderr
    uses = out.of("tool_use")
    results = out.of("tool_result")
    assert uses[0]["name"] == expected_name
    assert uses[0]["input"] == {"q": "hooks"}
    assert results[0]["tool_use_id"] == uses[0]["id"]
    assert results[0]["is_error"] is False
    assert "3 results" in results[0]["content"]
    assert [r["is_error"] for r in results[1:]] == [True]
    assert not (out.cwd / "nope.txt").exists()


# --------------------------------------------------------------------------- api error


@pytest.mark.rule("FAKE-JSONEV-APIERR-001")
@pytest.mark.parametrize("agent", FAMILIES)
def test_api_error_is_reported_the_clis_own_way_and_exits_1(tmp_path: Path, agent: str) -> None:
    out = run_def(tmp_path, agent, "api_error")
    assert out.code == 1
    assert not out.of("usage")
    frames = out.frames()
    if agent == "cursor-agent":
        # wire §A.5: the stream ends without a result; the error is on stderr.
        assert "Internal server error" in out.stderr
        assert not [f for f in frames if f.get("type") == "result"]
        assert not out.of("error")
        return
    (error,) = out.of("error")
    assert "Internal server error" in error["message"]
    if agent == "codex":
        assert [f["type"] for f in frames[-2:]] == ["error", "turn.failed"]
    elif agent == "opencode":
        assert frames[-1]["error"]["name"] == "APIError"
        assert frames[-1]["error"]["data"]["statusCode"] == 500
    else:
        assert (frames[-1]["type"], frames[-1]["status"]) == ("result", "error")


# --------------------------------------------------------------------------- faults


@pytest.mark.rule("FAKE-JSONEV-FAULTS-001")
@pytest.mark.parametrize("agent", FAMILIES)
def test_malformed_frame_is_a_truncated_line_between_intact_frames(
    tmp_path: Path, agent: str
) -> None:
    out = run_def(tmp_path, agent, "malformed")
    assert out.code == 0, out.stderr
    broken = [e["line"] for e in out.of("raw") if e["line"].startswith("{")]
    broken = [line for line in broken if not _is_json(line)]
    assert len(broken) == 1
    assert "Before." in out.text
    assert "After." in out.text
    assert out.text.index("Before.") < out.text.index("After.")


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


@pytest.mark.rule("FAKE-JSONEV-FAULTS-001")
@pytest.mark.parametrize("agent", FAMILIES)
def test_oversize_is_one_valid_frame_of_exactly_the_asked_size(tmp_path: Path, agent: str) -> None:
    out = run_def(tmp_path, agent, "oversize")
    assert out.code == 0, out.stderr
    big = [line for line in out.stdout.split(b"\n") if len(line) > 100_000]
    assert [len(line) for line in big] == [2_097_152]
    assert isinstance(json.loads(big[0]), dict)
    (raw,) = [e for e in out.of("raw") if e.get("truncated_bytes")]
    assert raw["truncated_bytes"] == 2_097_152
    assert "Before." in out.text
    assert "After." in out.text


@pytest.mark.rule("FAKE-JSONEV-FAULTS-001")
@pytest.mark.parametrize("agent", FAMILIES)
def test_crash_mid_line_leaves_half_a_frame_and_the_exit_code(tmp_path: Path, agent: str) -> None:
    out = run_def(tmp_path, agent, "crash_mid_line")
    assert out.code == 3
    assert not out.stdout.endswith(b"\n")
    tail = out.stdout.rsplit(b"\n", 1)[-1].decode("utf-8")
    assert tail.startswith("{")
    assert not _is_json(tail)
    assert out.events[-1] == {"type": "raw", "line": tail}
    assert "Starting." in out.text


@pytest.mark.rule("FAKE-JSONEV-FAULTS-001")
@settings(max_examples=60, deadline=None)
@given(nbytes=st.integers(min_value=1, max_value=5000), text=st.text(max_size=20))
def test_padded_line_is_exact_and_truncated_line_is_not_json(nbytes: int, text: str) -> None:
    item: dict[str, Any] = {"id": "item_1", "type": "x", "text": text}
    frame: dict[str, Any] = {"type": "item.completed", "item": item}
    line = padded_line(frame, ("item", "text"), nbytes)
    skeleton = json.dumps({**frame, "item": {**item, "text": ""}}, separators=(",", ":"))
    assert len(line.encode("utf-8")) == max(nbytes, len(skeleton.encode("utf-8")))
    assert json.loads(line)["type"] == "item.completed"
    assert not _is_json(truncated_line(frame))


# --------------------------------------------------------------------------- foreign


@pytest.mark.rule("FAKE-JSONEV-FOREIGN-001")
@pytest.mark.parametrize("agent", FAMILIES)
def test_foreign_frame_names_another_session(tmp_path: Path, agent: str) -> None:
    out = run_def(tmp_path, agent, "foreign")
    assert out.code == 0, out.stderr
    own = out.record["session_id"]
    frames = out.frames()
    if agent == "codex":
        foreign = [f for f in frames if f.get("item", {}).get("type") == "collab_tool_call"]
        assert len(foreign) == 1
        assert own not in json.dumps(foreign[0])
        # No dialect claims a sub-agent item: it stays raw, never mixed into our text.
        assert raw_types(out) == ["item.started"]
    else:
        key = "sessionID" if agent == "opencode" else "session_id"
        ids = [f[key] for f in frames if key in f]
        assert own in ids
        assert len([i for i in ids if i != own]) == 1
    assert out.text.index("Mine.") < out.text.index(" Still mine.")


# --------------------------------------------------------------------------- common steps


@pytest.mark.rule("FAKE-JSONEV-COMMON-001")
@pytest.mark.parametrize("agent", FAMILIES)
def test_noise_stderr_and_plain_exit_codes(tmp_path: Path, agent: str) -> None:
    noise = run_def(tmp_path / "noise", agent, "noise")
    assert noise.code == 0
    assert [e["line"] for e in noise.of("raw") if not e["line"].startswith("{")] == [
        "[SandboxDebug] starting",
        "debug: done",
    ]
    noisy = run_def(tmp_path / "stderr", agent, "stderr")
    assert "warning: something noisy" in noisy.stderr
    assert "warning: more noise" in noisy.stderr
    assert "Hello." in noisy.text
    crashed = run_def(tmp_path / "exit", agent, "exit_code")
    assert crashed.code == 7
    assert "Partial." in crashed.text
    assert not crashed.of("usage")


@pytest.mark.rule("FAKE-JSONEV-COMMON-001")
def test_slow_output_arrives_in_order(tmp_path: Path) -> None:
    out = run_def(tmp_path, "opencode", "slow")
    assert out.code == 0
    assert [e["delta"] for e in out.of("text_delta")] == ["a", "b", "c"]


def _start(
    workdir: Path, agent: str, scenario: str, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    cwd = workdir / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "fake_clis", agent, *def_args(agent, cwd)],
        cwd=cwd,
        env=clean_env(
            {"HOME": str(workdir / "home"), "FAKE_CLI_SCENARIO": scenario, **(env or {})}
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _read_until(proc: subprocess.Popen[bytes], needle: bytes) -> bytes:
    assert proc.stdout is not None
    seen = b""
    while needle not in seen:
        line = proc.stdout.readline()
        assert line, f"stdout closed before {needle!r}; got {seen!r}"
        seen += line
    return seen


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        kill_tree(proc)


@pytest.mark.rule("FAKE-JSONEV-COMMON-001")
@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_hang_keeps_running_after_its_text(
    tmp_path: Path, agent: str, started: list[subprocess.Popen[bytes]]
) -> None:
    proc = _start(tmp_path, agent, "hang")
    started.append(proc)
    assert proc.stdin is not None
    proc.stdin.write(b"hi")
    proc.stdin.close()
    seen = _read_until(proc, b"Thinking about it...")
    time.sleep(0.2)
    assert proc.poll() is None
    assert b"turn.completed" not in seen
    assert b'"result"' not in seen


@pytest.mark.rule("FAKE-JSONEV-COMMON-001")
def test_ignore_stdin_close_lingers_after_the_terminal_frame(
    tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    proc = _start(tmp_path, "cursor-agent", "ignore_stdin")
    started.append(proc)
    assert proc.stdin is not None
    proc.stdin.write(b"hi")
    proc.stdin.close()
    _read_until(proc, b'"type":"result"')
    time.sleep(0.2)
    assert proc.poll() is None


@pytest.mark.rule("FAKE-JSONEV-COMMON-001")
def test_spawn_tree_starts_a_child_and_a_grandchild(
    tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    proc = _start(tmp_path, "opencode", "spawn_tree")
    started.append(proc)
    assert proc.stdin is not None
    proc.stdin.write(b"hi")
    proc.stdin.close()
    _read_until(proc, b"Spawned helpers.")
    deadline = time.monotonic() + 10
    while len(psutil.Process(proc.pid).children(recursive=True)) < 2:
        assert time.monotonic() < deadline, "child and grandchild never appeared"
        time.sleep(0.05)


# --------------------------------------------------------------------------- def argv


def _argv_cases() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("codex", {}),
        ("codex", {"platform": "win32"}),
        ("codex", {"ctx_env": {"WSL_DISTRO_NAME": "Ubuntu", "OD_CODEX_DISABLE_PLUGINS": "1"}}),
        ("codex", {"model": "gpt-5.5", "reasoning": "high", "service_tier": "fast"}),
        ("codex", {"dirs": ["/tmp/extra-a", "/tmp/extra-b"]}),
        ("cursor-agent", {}),
        ("cursor-agent", {"caps": {}}),
        ("cursor-agent", {"model": "sonnet-4.5"}),
        ("opencode", {}),
        ("opencode", {"caps": {}}),
        ("opencode", {"caps": {"autoApprove": True}}),
        ("opencode", {"model": "anthropic/claude-sonnet-4-5"}),
        ("byok-opencode", {}),
        ("byok-opencode", {"caps": {}, "model": "openai/gpt-5"}),
        ("mimo", {}),
        ("mimo", {"model": "xiaomi/mimo-v2.5"}),
        ("gemini", {}),
        ("gemini", {"model": "gemini-2.5-pro"}),
    ]


@pytest.mark.rule("FAKE-JSONEV-ARGV-001")
@pytest.mark.parametrize(("agent", "kwargs"), _argv_cases())
def test_every_defs_own_argv_is_accepted(
    tmp_path: Path, agent: str, kwargs: dict[str, Any]
) -> None:
    out = run_def(tmp_path, agent, "text", **kwargs)
    assert out.code == 0, (out.stderr, def_args(agent, tmp_path / "work", **kwargs))
    assert out.text.startswith("Hello from")
    assert out.record["argv"] == def_args(agent, tmp_path / "work", **kwargs)


@pytest.mark.rule("FAKE-JSONEV-ARGV-001", "FAKE-JSONEV-SESSION-001")
@pytest.mark.parametrize("agent", ["codex", "cursor-agent", "opencode"])
def test_resume_argv_of_the_def_continues_the_session(tmp_path: Path, agent: str) -> None:
    first = run_def(tmp_path, agent, "text")
    assert first.code == 0, first.stderr
    captured = session_of(first)
    assert captured is not None
    second = run_def(tmp_path, agent, "happy", resume=captured)
    assert second.code == 0, second.stderr
    assert "--sandbox" not in second.record["argv"]
    assert (second.record["resumed"], second.record["prior_turns"]) == (True, 1)
    assert session_of(second) == captured
    assert (second.cwd / "hello.html").is_file()


# --------------------------------------------------------------------------- sessions


@pytest.mark.rule("FAKE-JSONEV-SESSION-001")
def test_first_turn_is_a_new_session(tmp_path: Path) -> None:
    out = run_def(tmp_path, "gemini", "text")
    assert (out.record["resumed"], out.record["prior_turns"]) == (False, 0)
    saved = tmp_path / "home" / ".fake-cli" / "gemini" / "sessions"
    assert [p.stem for p in saved.glob("*.json")] == [out.record["session_id"]]
    init = [f for f in out.frames() if f.get("type") == "init"]
    assert [i["session_id"] for i in init] == [out.record["session_id"]]
    again = run_fake(
        tmp_path, "gemini", ["-o", "stream-json", "--resume", out.record["session_id"]]
    )
    assert again.code == 0, again.stderr
    assert (again.record["resumed"], again.record["prior_turns"]) == (True, 1)


@pytest.mark.rule("FAKE-JSONEV-SESSION-001")
def test_cursor_create_chat_gives_an_id_a_turn_can_resume(tmp_path: Path) -> None:
    chat = run_fake(tmp_path, "cursor-agent", ["create-chat"], stdin=b"")
    assert chat.code == 0
    chat_id = chat.stdout.decode().strip()
    out = run_def(tmp_path, "cursor-agent", "text", resume=chat_id)
    assert out.code == 0, out.stderr
    assert (out.record["resumed"], out.record["prior_turns"]) == (True, 0)
    assert session_of(out) == chat_id


@pytest.mark.rule("FAKE-JSONEV-SESSION-001")
def test_gemini_lists_resumes_by_index_and_deletes_sessions(tmp_path: Path) -> None:
    first = run_def(tmp_path, "gemini", "text")
    own = first.record["session_id"]
    listing = run_fake(tmp_path, "gemini", ["--list-sessions"], stdin=b"")
    assert listing.code == 0
    assert f"1. [{own}]" in listing.stdout.decode()
    again = run_fake(tmp_path, "gemini", ["-o", "stream-json", "--resume", "1"], scenario="text")
    assert again.code == 0, again.stderr
    assert (again.record["session_id"], again.record["resumed"]) == (own, True)
    deleted = run_fake(tmp_path, "gemini", ["--delete-session", "1"], stdin=b"")
    assert deleted.code == 0
    gone = run_fake(tmp_path, "gemini", ["-o", "stream-json", "--resume", own], scenario="text")
    assert gone.code == 1
    assert own in gone.stderr


@pytest.mark.rule("FAKE-JSONEV-SESSION-001")
@pytest.mark.parametrize(
    ("agent", "args", "stream_error"),
    [
        ("codex", ["exec", "resume", "--json", "--skip-git-repo-check"], True),
        ("cursor-agent", ["-p", "--output-format", "stream-json", "--resume"], False),
        ("opencode", ["run", "--format", "json", "-s"], False),
        ("gemini", ["-o", "stream-json", "--resume"], False),
    ],
)
def test_an_unknown_session_id_fails_as_the_cli_does(
    tmp_path: Path, agent: str, args: list[str], stream_error: bool
) -> None:
    unknown = "0199a213-81c0-7800-8aa1-bbab2a035a53"
    out = run_fake(tmp_path, agent, [*args, unknown])
    assert out.code == 1
    assert not (out.cwd / "hello.html").exists()
    if stream_error:
        # codex exec resume: an error event on the JSON stream.
        (error,) = out.of("error")
        assert unknown in error["message"]
        assert not out.of("text_delta")
    else:
        assert unknown in out.stderr
        assert out.stdout == b""


# --------------------------------------------------------------------------- probes


@pytest.mark.rule("FAKE-JSONEV-PROBE-001")
@pytest.mark.parametrize(
    ("agent", "version"),
    [
        ("codex", "codex-cli 0.171.0"),
        ("cursor-agent", "2025.11.25-d5b3271"),
        ("opencode", "1.18.33"),
        ("byok-opencode", "1.18.33"),
        ("mimo", "0.4.2"),
        ("gemini", "0.61.0"),
    ],
)
def test_version_probe(tmp_path: Path, agent: str, version: str) -> None:
    defn = get_agent_def(agent)
    out = run_fake(tmp_path, agent, list(defn.version_args), stdin=b"")
    assert (out.code, out.stdout.decode().strip()) == (0, version)


def _probe_result(out: Outcome) -> ProbeResult:
    return ProbeResult(
        argv=(),
        stdout=out.stdout.decode(),
        stderr=out.stderr,
        exit_code=out.code,
        signal=None,
        timed_out=False,
        os_error=None,
        output_overflow=False,
        duration_s=0.1,
    )


@pytest.mark.rule("FAKE-JSONEV-PROBE-001")
@pytest.mark.parametrize("agent", ["codex", "cursor-agent"])
@pytest.mark.parametrize("auth", ["ok", "missing"])
def test_auth_probe_is_classified_by_the_engine(tmp_path: Path, agent: str, auth: str) -> None:
    defn = get_agent_def(agent)
    assert defn.auth_probe is not None
    env = {"FAKE_CLI_AUTH": "missing"} if auth == "missing" else {}
    out = run_fake(tmp_path, agent, list(defn.auth_probe.args), stdin=b"", env=env)
    status, _ = classify_auth(defn, _probe_result(out))
    assert status is (AuthStatus.OK if auth == "ok" else AuthStatus.MISSING)
    assert (out.code == 0) is (auth == "ok")


@pytest.mark.rule("FAKE-JSONEV-PROBE-001")
@pytest.mark.parametrize(
    ("agent", "args", "expected"),
    [
        ("codex", ("debug", "models"), ["default", "gpt-5.5", "gpt-5.4"]),
        ("cursor-agent", ("models",), ["default", "auto", "composer-1"]),
        ("opencode", ("models", "--verbose"), ["default", "opencode/big-pickle"]),
        ("opencode", ("models",), ["default", "opencode/big-pickle"]),
        ("mimo", ("models", "--verbose"), ["default", "xiaomi/mimo-v2.5-pro"]),
    ],
)
def test_model_listing_is_read_by_the_defs_parser(
    tmp_path: Path, agent: str, args: tuple[str, ...], expected: list[str]
) -> None:
    defn = get_agent_def(agent)
    out = run_fake(tmp_path, agent, list(args), stdin=b"")
    assert out.code == 0, out.stderr
    parse = defn.list_models or get_agent_def("opencode").list_models
    assert parse is not None
    models = parse.parse(out.stdout.decode())
    assert models is not None
    ids = [m.id for m in models]
    assert ids[: len(expected)] == expected
    assert "codex-auto-review" not in ids  # hidden in `codex debug models`


@pytest.mark.rule("FAKE-JSONEV-PROBE-001", "FAKE-JSONEV-OLDVER-001")
@pytest.mark.parametrize("old", [False, True])
@pytest.mark.parametrize("agent", ["cursor-agent", "opencode", "byok-opencode"])
def test_help_probe_capabilities_drive_an_argv_the_fake_accepts(
    tmp_path: Path, agent: str, old: bool
) -> None:
    defn = get_agent_def(agent)
    assert defn.help_args is not None
    env = {"FAKE_CLI_OLD_VERSION": "1"} if old else {}
    help_out = run_fake(tmp_path, agent, list(defn.help_args), stdin=b"", env=env)
    assert help_out.code == 0
    caps = {key: flag in help_out.stdout.decode() for flag, key in defn.capability_flags.items()}
    assert any(caps.values()) is not old
    out = run_def(tmp_path, agent, "text", caps=caps, env=env)
    assert out.code == 0, out.stderr
    assert out.text.startswith("Hello from")


@pytest.mark.rule("FAKE-JSONEV-PROBE-001")
@pytest.mark.posix
@pytest.mark.parametrize("agent", ["codex", "cursor-agent", "opencode", "gemini"])
def test_detection_through_a_shim_finds_everything(tmp_path: Path, agent: str) -> None:
    defn = get_agent_def(agent)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / defn.bin
    shim.write_text(
        f"#!/bin/sh\nexec '{sys.executable}' -m fake_clis {agent} \"$@\"\n", encoding="utf-8"
    )
    shim.chmod(0o755)
    home = tmp_path / "home"
    env = clean_env({"HOME": str(home), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"})
    result = asyncio.run(
        probe_agent(defn, env=env, platform=sys.platform, home=str(home), fs=RealFileSystem())
    )
    assert result.available, result.diagnostics
    assert result.path == str(shim)
    assert result.version == SPECS[agent].version_output
    assert not result.diagnostics
    if defn.list_models is not None:
        assert result.models_source == "live"
    if defn.auth_probe is not None:
        assert result.auth_status is AuthStatus.OK
    if defn.capability_flags:
        assert result.capabilities and all(result.capabilities.values())


# --------------------------------------------------------------------------- old versions


@pytest.mark.rule("FAKE-JSONEV-OLDVER-001")
@pytest.mark.parametrize(
    ("agent", "args", "message"),
    [
        ("cursor-agent", ["-p", "--trust"], "error: unknown option '--trust'"),
        (
            "opencode",
            ["run", "--format", "json", "--dangerously-skip-permissions"],
            "Unknown argument: dangerously-skip-permissions",
        ),
        ("opencode", ["run", "--format", "json", "--dir", "."], "Unknown argument: dir"),
        ("gemini", ["-o", "stream-json", "--skip-trust"], "Unknown argument: skip-trust"),
    ],
)
@pytest.mark.parametrize("how", ["env", "scenario"])
def test_old_builds_reject_optional_flags(
    tmp_path: Path, agent: str, args: list[str], message: str, how: str
) -> None:
    if how == "env":
        current = run_fake(tmp_path / "new", agent, args, scenario="text")
        assert current.code == 0, current.stderr
        old = run_fake(tmp_path / "old", agent, args, env={"FAKE_CLI_OLD_VERSION": "1"})
    else:
        old = run_fake(tmp_path / "old", agent, args, scenario="old_version")
    assert old.code == 1
    assert message in old.stderr


@pytest.mark.rule("FAKE-JSONEV-OLDVER-001")
@pytest.mark.parametrize("agent", ["cursor-agent", "opencode", "gemini"])
def test_old_help_omits_optional_flags(tmp_path: Path, agent: str) -> None:
    spec = SPECS[agent]
    help_args = list(spec.help_args[0])
    new = run_fake(tmp_path, agent, help_args, stdin=b"").stdout.decode()
    old = run_fake(
        tmp_path, agent, help_args, stdin=b"", env={"FAKE_CLI_OLD_VERSION": "1"}
    ).stdout.decode()
    assert spec.optional_flags
    for flag in spec.optional_flags:
        assert flag in new
        assert flag not in old


# --------------------------------------------------------------------------- codex


CODEX_EXEC = ["exec", "--json", "--skip-git-repo-check"]


@pytest.mark.rule("FAKE-CODEXEXEC-ARGV-001")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([*CODEX_EXEC, "--bogus"], "error: unexpected argument '--bogus' found"),
        (["exec", "resume", "--json", "--sandbox", "workspace-write", "x"], "'--sandbox'"),
        (["exec", "resume", "--json", "-C", "/tmp", "x"], "'-C'"),
        (["exec", "resume", "--json", "--add-dir", "/tmp", "x"], "'--add-dir'"),
        ([*CODEX_EXEC, "--model"], "a value is required for '--model'"),
        ([*CODEX_EXEC, "--sandbox", "everything"], "invalid value 'everything' for '--sandbox"),
        (["app-server", "--bogus"], "error: unexpected argument '--bogus' found"),
    ],
)
def test_codex_argv_errors_are_clap_errors(tmp_path: Path, args: list[str], message: str) -> None:
    out = run_fake(tmp_path, "codex", args)
    assert out.code == 2
    assert message in out.stderr
    assert out.stdout == b""


@pytest.mark.rule("FAKE-CODEXEXEC-ARGV-001")
def test_codex_config_override_without_equals_stops_codex(tmp_path: Path) -> None:
    out = run_fake(tmp_path, "codex", [*CODEX_EXEC, "-c", "sandbox_mode"])
    assert out.code == 1
    assert "Invalid override (missing '='): sandbox_mode" in out.stderr


@pytest.mark.rule("FAKE-CODEXEXEC-EVENTS-001")
def test_codex_exec_frame_sequence(tmp_path: Path) -> None:
    out = run_def(tmp_path, "codex", "happy")
    frames = out.frames()
    assert [f["type"] for f in frames[:2]] == ["thread.started", "turn.started"]
    assert frames[-1]["type"] == "turn.completed"
    assert set(frames[-1]["usage"]) == {"input_tokens", "cached_input_tokens", "output_tokens"}
    items = [(f["type"], f["item"]["type"]) for f in frames if f["type"].startswith("item.")]
    assert items == [
        ("item.completed", "reasoning"),
        ("item.completed", "agent_message"),
        ("item.completed", "file_change"),
        ("item.completed", "agent_message"),
    ]
    change = frames[4]["item"]
    assert change["status"] == "completed"
    assert change["changes"] == [{"path": str((out.cwd / "hello.html").resolve()), "kind": "add"}]
    # Text chunks are not streamed in exec mode: one whole message.
    assert out.of("text_delta")[0]["delta"] == "I'll create the page."


@pytest.mark.rule("FAKE-CODEXEXEC-EVENTS-001")
def test_codex_reports_an_existing_file_as_an_update_and_an_unknown_model(
    tmp_path: Path,
) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "hello.html").write_text("old", encoding="utf-8")
    out = run_def(tmp_path, "codex", "happy", model="my-local-model")
    assert out.code == 0, out.stderr
    assert [u["name"] for u in out.of("tool_use")] == ["Edit"]
    warnings = [e for e in out.of("status") if e["label"] == "warning"]
    assert len(warnings) == 1
    assert "my-local-model" in warnings[0]["detail"]


@pytest.mark.rule("FAKE-CODEXEXEC-SANDBOX-001")
def test_codex_read_only_default_rejects_the_write(tmp_path: Path) -> None:
    out = run_fake(tmp_path, "codex", CODEX_EXEC)
    assert out.code == 0, out.stderr
    assert out.record["sandbox"] == "read-only"
    assert out.record["rejected_writes"] == ["hello.html"]
    assert not (out.cwd / "hello.html").exists()
    assert not out.of("tool_use")
    assert "patch rejected" in out.stderr


@pytest.mark.rule("FAKE-CODEXEXEC-SANDBOX-001")
@pytest.mark.parametrize(
    ("extra", "sandbox"),
    [
        (["--sandbox", "workspace-write"], "workspace-write"),
        (["-c", 'sandbox_mode="danger-full-access"'], "danger-full-access"),
        (["--full-auto"], "workspace-write"),
    ],
)
def test_codex_sandbox_flags_allow_the_write(
    tmp_path: Path, extra: list[str], sandbox: str
) -> None:
    out = run_fake(tmp_path, "codex", [*CODEX_EXEC, *extra])
    assert out.code == 0, out.stderr
    assert out.record["sandbox"] == sandbox
    assert (out.cwd / "hello.html").is_file()


@pytest.mark.rule("FAKE-CODEXEXEC-APPSERVER-001")
@pytest.mark.parametrize("present", [True, False])
def test_codex_app_server_is_dispatched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, present: bool
) -> None:
    seen: list[FakeRun] = []

    def run_app_server(run: FakeRun) -> int:
        seen.append(run)
        return 42

    name = "fake_clis.codex_app_server"
    if present:
        stub = types.ModuleType(name)
        stub.run_app_server = run_app_server  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, name, stub)
    else:
        # None in sys.modules makes the import fail as ModuleNotFoundError(name=...).
        monkeypatch.setitem(sys.modules, name, None)
    spec = SPECS["codex"]
    parsed = parse_argv(spec.grammar(False), ["app-server"], style="clap", prog="codex")
    stderr = io.BytesIO()
    run = FakeRun(
        spec=spec,
        parsed=parsed,
        argv=["app-server"],
        scenario=parse_scenario({"name": "x", "steps": []}),
        cwd=tmp_path,
        home=tmp_path,
        env={},
        stdin=io.BytesIO(),
        stdout=io.BytesIO(),
        stderr=stderr,
    )
    code = spec.run(run)
    if present:
        assert (code, seen) == (42, [run])
    else:
        assert code == 2
        assert stderr.getvalue() == b"app-server not emulated\n"


@pytest.mark.rule("FAKE-CODEXEXEC-APPSERVER-001")
@pytest.mark.skipif(
    importlib.util.find_spec("fake_clis.codex_app_server") is None,
    reason="fake_clis.codex_app_server is not in this checkout",
)
def test_codex_app_server_subprocess_answers_initialize(tmp_path: Path) -> None:
    """Through the real entry point: argv ``app-server`` reaches the app-server emulator."""
    frame = {
        "id": 0,
        "method": "initialize",
        "params": {"clientInfo": {"name": "t", "version": "1"}},
    }
    out = run_fake(
        tmp_path, "codex", ["-c", "analytics.enabled=false", "app-server"], stdin=_line(frame)
    )
    assert out.code == 0, out.stderr
    replies = [f for f in out.frames() if f.get("id") == 0]
    assert len(replies) == 1
    assert "result" in replies[0]
    assert "jsonrpc" not in replies[0]


def _line(frame: dict[str, Any]) -> bytes:
    return (json.dumps(frame) + "\n").encode("utf-8")


# --------------------------------------------------------------------------- cursor


CURSOR_PRINT = ["-p", "--output-format", "stream-json", "--force"]


@pytest.mark.rule("FAKE-CURSOR-STREAM-001")
def test_cursor_streams_deltas_then_replays_each_message(tmp_path: Path) -> None:
    out = run_def(tmp_path, "cursor-agent", "happy")
    assistant = [f for f in out.frames() if f["type"] == "assistant"]
    shape = [
        ("replay" if "model_call_id" in f else "delta" if "timestamp_ms" in f else "final")
        + ":"
        + f["message"]["content"][0]["text"]
        for f in assistant
    ]
    assert shape == [
        "delta:I'll create ",
        "delta:the page.",
        "replay:I'll create the page.",
        "delta:Done: hello.html is ready.",
        "final:Done: hello.html is ready.",
    ]
    # The tool calls belong to the model call whose message preceded them.
    calls = [f for f in out.frames() if f["type"] == "tool_call"]
    assert {c["model_call_id"] for c in calls} == {assistant[2]["model_call_id"]}
    assert out.text == "I'll create the page.Done: hello.html is ready."
    result = out.frames()[-1]
    assert result["type"] == "result"
    assert result["result"] == "I'll create the page.Done: hello.html is ready."
    assert result["usage"]["inputTokens"] == 120
    assert isinstance(result["duration_ms"], int)


@pytest.mark.rule("FAKE-CURSOR-STREAM-001")
def test_cursor_without_partial_output_prints_whole_messages(tmp_path: Path) -> None:
    out = run_fake(tmp_path, "cursor-agent", CURSOR_PRINT)
    assert out.code == 0, out.stderr
    assistant = [f for f in out.frames() if f["type"] == "assistant"]
    assert [f["message"]["content"][0]["text"] for f in assistant] == [
        "I'll create the page.",
        "Done: hello.html is ready.",
    ]
    # No deltas: the message before the tool carries its model call, the last one nothing.
    assert "model_call_id" in assistant[0]
    assert "model_call_id" not in assistant[1]
    assert "timestamp_ms" not in assistant[1]
    assert out.text == "I'll create the page.Done: hello.html is ready."


@pytest.mark.rule("FAKE-CURSOR-ARGV-001")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([*CURSOR_PRINT, "--bogus"], "error: unknown option '--bogus'"),
        (["--output-format", "stream-json"], "Raw mode is not supported"),
        (["-p", "--output-format", "xml"], "argument 'xml' is invalid"),
        ([*CURSOR_PRINT, "--workspace", "/nonexistent/dir"], "/nonexistent/dir"),
        ([*CURSOR_PRINT, "--model"], "error: option '--model' argument missing"),
    ],
)
def test_cursor_argv_errors(tmp_path: Path, args: list[str], message: str) -> None:
    out = run_fake(tmp_path, "cursor-agent", args)
    assert out.code == 1
    assert message in out.stderr
    assert out.stdout == b""


# --------------------------------------------------------------------------- opencode


@pytest.mark.rule("FAKE-OPENCODE-EVENTS-001")
@pytest.mark.parametrize("agent", ["opencode", "byok-opencode", "mimo"])
def test_opencode_lines_have_the_documented_envelope(tmp_path: Path, agent: str) -> None:
    out = run_def(tmp_path, agent, "happy")
    frames = out.frames()
    own = out.record["session_id"]
    for frame in frames:
        assert list(frame)[:3] == ["type", "timestamp", "sessionID"]
        assert isinstance(frame["timestamp"], int)
        assert frame["sessionID"] == own
        assert frame["part"]["sessionID"] == own
    assert [f["type"] for f in frames] == [
        "step_start",
        "text",
        "tool_use",
        "step_finish",
        "step_start",
        "text",
        "step_finish",
    ]
    # Whole parts: the two chunks of the first text step arrive as one part.
    assert frames[1]["part"]["text"] == "I'll create the page."
    assert [f["part"]["reason"] for f in frames if f["type"] == "step_finish"] == [
        "tool-calls",
        "stop",
    ]
    assert frames[-1]["part"]["tokens"]["input"] == 120
    assert frames[2]["part"]["state"]["status"] == "completed"


@pytest.mark.rule("FAKE-OPENCODE-EVENTS-001")
def test_opencode_prints_reasoning_only_with_thinking(tmp_path: Path) -> None:
    plain = run_fake(tmp_path / "a", "opencode", ["run", "--format", "json"])
    shown = run_fake(tmp_path / "b", "opencode", ["run", "--format", "json", "--thinking"])
    assert "reasoning" not in [f["type"] for f in plain.frames()]
    (reasoning,) = [f for f in shown.frames() if f["type"] == "reasoning"]
    assert reasoning["part"]["text"] == "The user wants a page."


@pytest.mark.rule("FAKE-OPENCODE-CONFIG-001")
@pytest.mark.parametrize(
    ("agent", "key", "value", "code"),
    [
        ("opencode", "OPENCODE_CONFIG_CONTENT", '{"mcp": {"od": {"type": "local"}}}', 0),
        ("opencode", "OPENCODE_CONFIG_CONTENT", '{"mcp": ', 1),
        ("byok-opencode", "OPENCODE_CONFIG_CONTENT", "[1, 2]", 1),
        ("mimo", "MIMOCODE_CONFIG_CONTENT", "not json", 1),
        ("mimo", "MIMOCODE_CONFIG_CONTENT", '{"model": "xiaomi/mimo-v2.5"}', 0),
        # MiMo reads its own variable; OpenCode's is not its business.
        ("mimo", "OPENCODE_CONFIG_CONTENT", "not json", 0),
    ],
)
def test_config_content_must_be_a_json_object(
    tmp_path: Path, agent: str, key: str, value: str, code: int
) -> None:
    out = run_def(tmp_path, agent, "text", env={key: value})
    assert out.code == code
    if code == 0:
        assert out.record["env"][key] == value
        if key.startswith("MIMO") or agent != "mimo":
            assert out.record["config_content"] == json.loads(value)
    else:
        assert key in out.stderr
        assert out.stdout == b""


@pytest.mark.rule("FAKE-OPENCODE-ARGV-001")
@pytest.mark.parametrize(
    ("agent", "args", "message"),
    [
        ("opencode", ["run", "--format", "json", "--bogus"], "Unknown argument: bogus"),
        ("opencode", ["run", "--format", "xml"], 'Given: "xml"'),
        ("opencode", ["run", "--format", "json", "--dir", "/nonexistent/x"], "/nonexistent/x"),
        ("opencode", ["run", "--format", "json", "-m"], "Not enough arguments following: m"),
        ("mimo", ["run", "--format", "json", "--auto"], "Unknown argument: auto"),
    ],
)
def test_opencode_argv_errors(tmp_path: Path, agent: str, args: list[str], message: str) -> None:
    out = run_fake(tmp_path, agent, args)
    assert out.code == 1
    assert message in out.stderr
    assert out.stdout == b""


# --------------------------------------------------------------------------- gemini


@pytest.mark.rule("FAKE-GEMINI-ARGV-001")
@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["-o", "stream-json", "--bogus"], b"hi", "Unknown argument: bogus"),
        (
            ["-o", "stream-json", "--yolo", "--approval-mode", "yolo"],
            b"hi",
            "Arguments yolo and approval-mode are mutually exclusive",
        ),
        (["-o", "yaml"], b"hi", 'Given: "yaml"'),
        (["-o", "stream-json", "--yolo"], b"", "No input provided via stdin."),
    ],
)
def test_gemini_argv_errors(tmp_path: Path, args: list[str], stdin: bytes, message: str) -> None:
    out = run_fake(tmp_path, "gemini", args, stdin=stdin)
    assert out.code == 1
    assert message in out.stderr
    assert out.stdout == b""


@pytest.mark.rule("FAKE-JSONEV-HAPPY-001")
def test_gemini_stream_shape(tmp_path: Path) -> None:
    out = run_def(tmp_path, "gemini", "happy")
    frames = out.frames()
    assert [f["type"] for f in frames] == [
        "init",
        "message",
        "message",
        "message",
        "tool_use",
        "tool_result",
        "message",
        "result",
    ]
    assert all(isinstance(f["timestamp"], str) and f["timestamp"].endswith("Z") for f in frames)
    assert [f.get("delta") for f in frames if f.get("role") == "assistant"] == [True] * 3
    stats = frames[-1]["stats"]
    assert (stats["input_tokens"], stats["output_tokens"], stats["tool_calls"]) == (120, 45, 1)


def _defs_under_test() -> list[AgentDef]:
    return [get_agent_def(agent) for agent in ALL_AGENTS]


@pytest.mark.rule("FAKE-JSONEV-ARGV-001")
def test_every_json_event_stream_def_has_a_fake_here() -> None:
    """Each built-in json-event-stream def (seed 000 §3) has an emulator in this module."""
    from harness.defs.registry import BUILTIN_REGISTRY

    ids = {d.id for d in BUILTIN_REGISTRY.values() if d.stream_format == "json-event-stream"}
    assert ids == set(SPECS)
    assert {d.id for d in _defs_under_test()} == set(SPECS)
