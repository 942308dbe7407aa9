"""The runner's adapter layer, end to end through real fake CLIs.

MCP injection applied before the spawn and restored after it (also on failure, cancel and
refusal), run tool bundles, skills composed before the budget, secrets kept out of every
output, and ``harness run --conversation``. The fakes record what they were given
(``FAKE_CLI_RECORD``).

Rules: MCP-RUN-001..005, MCP-MANAGED-001, MCP-MANAGED-003, MCP-SECRET-002, SKILL-RUN-001,
SKILL-RUN-002, SKILL-LINK-001, SESSION-RUN-002, SELECT-NOFALLBACK-001.
"""

from __future__ import annotations

import io
import json
import os
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main as harness_main
from harness.mcp import build_opencode_config_content, injection_secrets, parse_mcp_config
from harness.recording.record import RunRecorder
from harness.runner import RunResult, run_agent
from harness.runner.status import RunOutcome
from tests.runner.conftest import FakeWorld

pytestmark = pytest.mark.posix

SECRET = "sk-mcp-conform-0123456789abcdefXYZ"
HEADER_SECRET = "header-secret-value-98765"
SERVERS = parse_mcp_config(
    {
        "servers": [
            {"id": "fs", "command": "mcp-fs", "args": ["--root", "."], "env": {"FS_KEY": SECRET}},
            {
                "id": "remote",
                "transport": "http",
                "url": "https://mcp.example.invalid/x",
                "headers": {"X-Api": HEADER_SECRET},
            },
        ]
    }
)
OLD = '{"mcpServers": {"mine": {"command": "keep"}}}\n'


def record_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def managed(world: FakeWorld) -> tuple[Path, Path]:
    root = world.root / "projects"
    root.mkdir(exist_ok=True)
    return root, world.project(str(Path("projects") / "p"))


# --------------------------------------------------------------------------- .mcp.json


@pytest.mark.rule("MCP-RUN-001", "MCP-MANAGED-001")
@pytest.mark.parametrize("scenario", ["text", "exit_code"])
def test_mcp_json_is_seen_by_the_cli_and_restored_after_success_and_failure(
    world: FakeWorld, scenario: str
) -> None:
    root, cwd = managed(world)
    (cwd / ".mcp.json").write_text(OLD, encoding="utf-8")
    rec = world.root / "rec.json"
    req = world.request(
        "claude",
        scenario,
        cwd=cwd,
        env_extra={"FAKE_CLI_RECORD": str(rec)},
        mcp_config=SERVERS,
        projects_root=str(root),
        new_session_id="3f0c6a52-1d7e-4c55-9a55-0d6a3e7b9c11",
    )
    result = run_agent(req)
    assert result.status is (RunOutcome.SUCCEEDED if scenario == "text" else RunOutcome.FAILED)
    seen = record_of(rec)["mcp_json"]
    assert sorted(seen["mcpServers"]) == ["fs", "remote"]
    assert seen["mcpServers"]["fs"]["env"] == {"FS_KEY": SECRET}
    # restored: the project's own file is back byte for byte, and it is not a "file written".
    assert (cwd / ".mcp.json").read_text(encoding="utf-8") == OLD
    assert ".mcp.json" not in result.files_written
    assert result.mcp_injection is not None
    assert result.mcp_injection["files_written"] == [str(cwd / ".mcp.json")]


@pytest.mark.rule("MCP-RUN-001")
def test_mcp_json_is_removed_after_a_cancelled_run(world: FakeWorld) -> None:
    root, cwd = managed(world)
    req = world.request(
        "claude",
        "hang",
        cwd=cwd,
        mcp_config=SERVERS,
        projects_root=str(root),
        new_session_id=str(uuid.uuid4()),
    )
    cancel = threading.Event()
    seen_during: list[bool] = []

    def later() -> None:
        seen_during.append((cwd / ".mcp.json").is_file())
        cancel.set()

    timer = threading.Timer(0.8, later)
    timer.start()
    result = run_agent(req, cancel=cancel)
    timer.join()
    assert result.status is RunOutcome.CANCELLED
    assert seen_during == [True]
    assert not (cwd / ".mcp.json").exists()


@pytest.mark.rule("MCP-RUN-001", "MCP-MANAGED-001")
def test_no_mcp_json_outside_the_managed_root(world: FakeWorld) -> None:
    root = world.root / "projects"
    root.mkdir()
    cwd = world.project("users-repo")
    rec = world.root / "rec.json"
    result = run_agent(
        world.request(
            "claude",
            "text",
            cwd=cwd,
            env_extra={"FAKE_CLI_RECORD": str(rec)},
            mcp_config=SERVERS,
            projects_root=str(root),
            new_session_id=str(uuid.uuid4()),
        )
    )
    assert result.succeeded
    assert "mcp_json" not in record_of(rec)
    assert not (cwd / ".mcp.json").exists()
    assert result.mcp_injection is not None and result.mcp_injection["files_written"] == []


@pytest.mark.rule("MCP-MANAGED-003", "MCP-RUN-001")
def test_symlinked_cwd_inside_the_root_that_resolves_out_is_refused_before_spawn(
    world: FakeWorld,
) -> None:
    """Security: a .mcp.json is never written outside a managed project dir, also
    when the cwd is a link under the root pointing at a user's own repo."""
    root = world.root / "projects"
    root.mkdir()
    outside = world.project("users-repo")
    link = root / "linked"
    link.symlink_to(outside, target_is_directory=True)
    result = run_agent(
        world.request(
            "claude",
            "text",
            cwd=link,
            mcp_config=SERVERS,
            projects_root=str(root),
            new_session_id=str(uuid.uuid4()),
        )
    )
    assert result.status is RunOutcome.FAILED and result.pid is None
    assert result.error is not None and result.error.rule == "MCP-MANAGED-003"
    assert not (outside / ".mcp.json").exists()


# --------------------------------------------------------------------------- env, ACP, none


@pytest.mark.rule("MCP-RUN-002")
def test_env_content_equals_the_built_config_and_is_absent_without_servers(
    world: FakeWorld,
) -> None:
    rec = world.root / "rec.json"
    run = run_agent(
        world.request(
            "opencode", "text", env_extra={"FAKE_CLI_RECORD": str(rec)}, mcp_config=SERVERS
        )
    )
    assert run.succeeded
    assert record_of(rec)["env"]["OPENCODE_CONFIG_CONTENT"] == build_opencode_config_content(
        SERVERS
    )
    off = parse_mcp_config([{"id": "fs", "command": "x", "enabled": False}])
    run = run_agent(
        world.request("opencode", "text", env_extra={"FAKE_CLI_RECORD": str(rec)}, mcp_config=off)
    )
    assert run.succeeded
    assert "OPENCODE_CONFIG_CONTENT" not in record_of(rec)["env"]


@pytest.mark.rule("MCP-RUN-003")
def test_acp_session_new_carries_the_stdio_servers(world: FakeWorld) -> None:
    rec = world.root / "rec.json"
    run = run_agent(
        world.request("devin", "text", env_extra={"FAKE_CLI_RECORD": str(rec)}, mcp_config=SERVERS)
    )
    assert run.succeeded
    (call,) = record_of(rec)["session_new"]
    assert call["mcpServers"] == [
        {
            "type": "stdio",
            "name": "fs",
            "command": "mcp-fs",
            "args": ["--root", "."],
            "env": [{"name": "FS_KEY", "value": SECRET}],
        }
    ]
    assert run.mcp_injection is not None
    assert [s["id"] for s in run.mcp_injection["skipped"]] == ["remote"]


@pytest.mark.rule("MCP-RUN-004")
def test_none_strategy_is_reported_and_nothing_is_forwarded(world: FakeWorld) -> None:
    rec = world.root / "rec.json"
    run = run_agent(
        world.request("qwen", "text", env_extra={"FAKE_CLI_RECORD": str(rec)}, mcp_config=SERVERS)
    )
    assert run.succeeded
    assert run.mcp_injection is not None and run.mcp_injection["strategy"] == "none"
    assert sorted(s["id"] for s in run.mcp_injection["skipped"]) == ["fs", "remote"]
    assert "Qwen" in run.mcp_injection["reason"] or "qwen" in run.mcp_injection["reason"]
    assert record_of(rec)["env"] == {} and "mcp_json" not in record_of(rec)


# --------------------------------------------------------------------------- bundles


@pytest.mark.rule("MCP-RUN-005")
def test_bundles_are_refused_before_spawn_by_the_table(world: FakeWorld) -> None:
    stdio = parse_mcp_config([{"id": "extra", "command": "mcp-extra"}])
    http = parse_mcp_config([{"id": "web", "transport": "http", "url": "https://a.invalid/"}])
    none = run_agent(world.request("qwen", "text", run_tool_bundle=stdio))
    assert none.pid is None and none.error is not None
    assert none.error.rule == "MCP-BUNDLE-004" and "Qwen" in none.error.message
    acp = run_agent(world.request("devin", "text", run_tool_bundle=http))
    assert acp.pid is None and acp.error is not None and acp.error.rule == "MCP-BUNDLE-003"
    claude = run_agent(
        world.request("claude", "text", run_tool_bundle=stdio, new_session_id=str(uuid.uuid4()))
    )
    assert claude.pid is None and claude.error is not None
    assert claude.error.rule == "MCP-BUNDLE-001"


@pytest.mark.rule("MCP-RUN-005")
def test_bundle_overrides_persisted_servers_and_sandbox_drops_them(world: FakeWorld) -> None:
    rec = world.root / "rec.json"
    bundle = parse_mcp_config([{"id": "fs", "command": "from-bundle"}, {"id": "x", "command": "y"}])
    run = run_agent(
        world.request(
            "devin",
            "text",
            env_extra={"FAKE_CLI_RECORD": str(rec)},
            mcp_config=SERVERS,
            run_tool_bundle=bundle,
        )
    )
    assert run.succeeded
    names = [(s["name"], s["command"]) for s in record_of(rec)["mcp_servers"]]
    assert names == [("fs", "from-bundle"), ("x", "y")]
    run = run_agent(
        world.request(
            "devin",
            "text",
            env_extra={"FAKE_CLI_RECORD": str(rec)},
            mcp_config=parse_mcp_config([{"id": "persisted", "command": "p"}]),
            run_tool_bundle=bundle,
            sandbox=True,
        )
    )
    assert [s["name"] for s in record_of(rec)["mcp_servers"]] == ["fs", "x"]


# --------------------------------------------------------------------------- secrets


@pytest.mark.rule("MCP-SECRET-002")
def test_no_mcp_secret_in_stderr_argv_error_summary_or_recording(world: FakeWorld) -> None:
    scenario = world.scenario_file(
        "leaky",
        [
            {"kind": "stderr", "text": f"debug: FS_KEY={SECRET} header {HEADER_SECRET}\n"},
            {"kind": "text", "text": "partial"},
            {"kind": "crash", "exit_code": 3},
        ],
    )
    root, cwd = managed(world)
    out = io.StringIO()
    secrets = injection_secrets(SERVERS)
    assert SECRET in secrets and HEADER_SECRET in secrets
    recorder = RunRecorder(out, cwd=str(cwd), secrets=secrets)
    req = world.request(
        "claude",
        scenario,
        cwd=cwd,
        mcp_config=SERVERS,
        projects_root=str(root),
        new_session_id=str(uuid.uuid4()),
    )
    result: RunResult = run_agent(req, tap=recorder)
    assert result.status is RunOutcome.FAILED
    assert "debug:" in result.stderr_tail  # the line is there, its secrets are not
    blob = json.dumps(result.to_json()) + out.getvalue()
    for value in (SECRET, HEADER_SECRET):
        assert value not in blob
    assert out.getvalue()  # the recording was written


@pytest.mark.rule("MCP-SECRET-002")
def test_request_secrets_are_redacted_from_a_refusal_message(world: FakeWorld) -> None:
    secret = "literal-secret-abcdefgh-123"
    result = run_agent(world.request("qwen", "text", cwd=world.root / secret, secrets=(secret,)))
    assert result.error is not None and result.error.code == "RUN_CWD_INVALID"
    assert secret not in result.error.message and "[REDACTED:secret]" in result.error.message


# --------------------------------------------------------------------------- skills


def make_skill(base: Path, name: str = "tone") -> Path:
    skill = base / "skills" / name
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("# Tone\nRead references/voice.md.\n", encoding="utf-8")
    (skill / "references" / "voice.md").write_text("Be kind.\n", encoding="utf-8")
    return skill


@pytest.mark.rule("SKILL-RUN-001")
def test_skill_is_staged_and_named_in_the_prompt_the_cli_receives(world: FakeWorld) -> None:
    skill = make_skill(world.root)
    rec = world.root / "rec.json"
    cwd = world.project("skills")
    run = run_agent(
        world.request(
            "codex",
            "text",
            cwd=cwd,
            transport="exec-json",
            env_extra={"FAKE_CLI_RECORD": str(rec)},
            skill_dirs=(str(skill),),
        )
    )
    assert run.succeeded
    (staged,) = run.skills_staged
    record = record_of(rec)
    assert record["skills"] == [
        {
            "path": staged,
            "is_dir": True,
            "is_link": False,
            "files": ["SKILL.md", "references/voice.md"],
            "links": [],
        }
    ]
    assert str(skill) in record["prompt"] and "Create hello.html" in record["prompt"]
    assert (cwd / staged / "references" / "voice.md").read_text(encoding="utf-8") == "Be kind.\n"
    assert ".od-skills" not in " ".join(run.files_written)


@pytest.mark.rule("SKILL-RUN-002")
def test_skills_are_composed_before_the_budget_check(world: FakeWorld) -> None:
    skill = make_skill(world.root, "huge")
    (skill / "SKILL.md").write_text("# Huge\n" + "x" * 300_000 + "\n", encoding="utf-8")
    run = run_agent(world.request("aider", "text", skill_dirs=(str(skill),)))
    assert run.pid is None and run.error is not None
    assert run.error.code == "AGENT_PROMPT_TOO_LARGE"


@pytest.mark.rule("SKILL-RUN-002", "SKILL-LINK-001")
def test_a_skill_linking_out_of_its_source_refuses_the_run(world: FakeWorld) -> None:
    """Security: a skill copy never follows a link out of its source."""
    skill = make_skill(world.root, "leaky")
    private = world.root / "private.txt"
    private.write_text("not the skill's", encoding="utf-8")
    (skill / "references" / "stolen.txt").symlink_to(private)
    cwd = world.project("skills")
    run = run_agent(world.request("qwen", "text", cwd=cwd, skill_dirs=(str(skill),)))
    assert run.pid is None and run.error is not None and run.error.rule == "SKILL-LINK-001"
    staged = list((cwd / ".od-skills").rglob("stolen.txt")) if (cwd / ".od-skills").exists() else []
    assert staged == []


# --------------------------------------------------------------------------- harness run


def cli(
    world: FakeWorld, monkeypatch: pytest.MonkeyPatch, *args: str, **extra: str
) -> tuple[int, str]:
    env = world.env("text", **extra)
    for key in list(os.environ):
        if key not in env:
            monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    code = harness_main(list(args))
    return code, out.getvalue()


@pytest.mark.rule("SESSION-RUN-002", "SELECT-NOFALLBACK-001")
def test_harness_run_conversation_resumes_and_reseeds_an_expired_session_on_the_same_agent(
    world: FakeWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = world.project("conv")
    store = world.root / "state"
    rec = world.root / "rec.json"
    base = ("run", "claude", "--cwd", str(cwd), "--conversation", "c1")
    base += ("--session-store", str(store), "--json")

    def turn(text: str) -> tuple[int, dict[str, Any]]:
        code, out = cli(world, monkeypatch, *base, "--prompt", text, FAKE_CLI_RECORD=str(rec))
        lines = [json.loads(line) for line in out.splitlines()]
        summary = next(x["summary"] for x in lines if "summary" in x)
        notes = next(x["conversation"] for x in lines if "conversation" in x)
        return code, {"summary": summary, "notes": notes}

    code, one = turn("first question")
    assert code == 0 and one["notes"][0].startswith("turn:     fresh")
    first_id = one["summary"]["session_id"]
    sessions = json.loads((store / "sessions.json").read_text(encoding="utf-8"))["sessions"]
    assert sessions["c1"]["native_id"] == first_id

    code, two = turn("second question")
    assert code == 0 and two["notes"][0] == "turn:     resume"
    assert record_of(rec)["prompt"] == "second question"
    assert two["summary"]["session_id"] == first_id

    # The fake forgets the session: the resume fails as claude's does, the handle is
    # cleared and the turn is reseeded with the transcript ON THE SAME AGENT.
    for path in (world.home / ".fake-cli" / "claude" / "sessions").glob("*.json"):
        path.unlink()
    code, three = turn("third question")
    assert code == 0
    assert three["notes"][:2] == ["turn:     resume", "turn:     fresh (expired)"]
    assert three["summary"]["agent"] == "claude"
    prompt = record_of(rec)["prompt"]
    assert "first question" in prompt and "third question" in prompt
    assert three["summary"]["session_id"] != first_id
