"""RUN-SPAWN-001, RUN-BUDGET-001: what is spawned, and everything that stops a spawn."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.defs.types import BuildOptions, RuntimeContext
from harness.host.launch import path_env_key
from harness.runner import RunErrorCode, RunOutcome, run_agent
from tests.runner.conftest import FakeWorld, text_of


def _record(path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.mark.rule("RUN-SPAWN-001")
def test_spawns_the_resolved_executable_with_the_defs_argv_env_and_cwd(
    world: FakeWorld, tmp_path: Path
) -> None:
    record = tmp_path / "record.json"
    project = world.project()
    request = world.request(
        "gemini", "text", cwd=project, env_extra={"FAKE_CLI_RECORD": str(record)}
    )
    result = run_agent(request)
    assert result.succeeded, result.error
    # seed 002 §5: the PATH walk found the fake installed under the real name.
    assert result.argv[0] == str(world.bin / "gemini")
    seen = _record(record)
    assert seen["argv"] == list(result.argv[1:])
    assert Path(str(seen["cwd"])).resolve() == project.resolve()
    # The def's own env reaches the child (launch env, seed 002 §5.3).
    assert seen["env"] == {"GEMINI_CLI_TRUST_WORKSPACE": "true"}
    assert result.pid is not None and result.exit_code == 0
    assert "Hello from the fake model. PONG." in text_of(result.events)


@pytest.mark.rule("RUN-SPAWN-001")
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shim")
def test_the_bin_override_env_var_wins_over_path(world: FakeWorld, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere" / "my-claude"
    other.parent.mkdir()
    shutil.copy(world.bin / "claude", other)
    other.chmod(0o755)
    result = run_agent(world.request("claude", "text", env_extra={"CLAUDE_BIN": str(other)}))
    assert result.succeeded, result.error
    assert result.argv[0] == str(other)


@pytest.mark.rule("RUN-SPAWN-001")
def test_no_executable_is_a_typed_failure_without_a_process(world: FakeWorld) -> None:
    env = world.env()
    env[path_env_key(env, sys.platform)] = str(world.root / "empty")
    result = run_agent(dataclasses.replace(world.request("claude"), env=env))
    assert result.status is RunOutcome.FAILED
    assert result.error is not None
    assert result.error.code == RunErrorCode.EXECUTABLE_NOT_FOUND
    assert "claude, openclaude" in result.error.message
    assert result.pid is None and result.events == () and result.argv == ()


@pytest.mark.rule("RUN-SPAWN-001")
def test_a_missing_cwd_is_a_typed_failure(world: FakeWorld) -> None:
    result = run_agent(world.request("claude", cwd=world.root / "does-not-exist"))
    assert result.error is not None and result.error.code == RunErrorCode.CWD_INVALID
    assert result.pid is None


@pytest.mark.rule("RUN-SPAWN-001")
def test_an_unknown_transport_is_a_typed_failure(world: FakeWorld) -> None:
    result = run_agent(world.request("codex", transport="carrier-pigeon"))
    assert result.error is not None and result.error.code == RunErrorCode.DEF_INVALID
    assert "carrier-pigeon" in result.error.message and "app-server" in result.error.message
    assert result.pid is None


@pytest.mark.rule("RUN-SPAWN-001")
def test_a_raising_build_args_is_reported_without_the_prompt(world: FakeWorld) -> None:
    def broken(
        prompt: str,
        images: object,
        dirs: object,
        options: BuildOptions,
        context: RuntimeContext,
    ) -> list[str]:
        raise ValueError(f"cannot handle {prompt}")

    defn = dataclasses.replace(get_agent_def("qwen", BUILTIN_DEFS), build_args=broken)
    request = dataclasses.replace(world.request("qwen", prompt="top secret plan"), defn=defn)
    result = run_agent(request)
    assert result.error is not None and result.error.code == RunErrorCode.BUILD_ARGS_FAILED
    assert "ValueError" in result.error.message
    assert "top secret plan" not in result.error.message
    assert result.pid is None


@pytest.mark.rule("RUN-SPAWN-001", "RUN-SESSION-001")
def test_a_request_the_session_refuses_never_spawns(world: FakeWorld) -> None:
    result = run_agent(world.request("deepseek-harness", model="no-provider-here"))
    assert result.status is RunOutcome.FAILED
    assert result.error is not None
    assert result.error.code == "DSH_PROFILE_INVALID_REQUEST"
    assert result.error.source == "session"
    assert result.pid is None


@pytest.mark.rule("RUN-SPAWN-001")
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_an_unstartable_executable_is_a_spawn_failure(world: FakeWorld, tmp_path: Path) -> None:
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    script.chmod(0o644)
    result = run_agent(world.request("qwen", bin_override=str(script)))
    assert result.error is not None and result.error.code == RunErrorCode.SPAWN_FAILED
    assert "EACCES" in result.error.message
    assert result.pid is None


@pytest.mark.rule("RUN-BUDGET-001")
def test_an_argv_prompt_over_budget_fails_before_spawn(world: FakeWorld) -> None:
    prompt = "é" * 60_000  # 120 000 UTF-8 bytes: over the 100 000 POSIX budget
    result = run_agent(world.request("aider", "text", prompt=prompt))
    assert result.status is RunOutcome.FAILED
    assert result.error is not None
    assert result.error.code == "AGENT_PROMPT_TOO_LARGE"
    assert result.error.rule == "BUDGET-ARGV-001"
    assert result.error.source == "budget"
    assert result.pid is None and result.argv == ()
    assert prompt[:50] not in result.error.message


@pytest.mark.rule("RUN-BUDGET-001")
@pytest.mark.skipif(sys.platform == "win32", reason="the POSIX budget")
def test_an_argv_prompt_within_budget_is_delivered_in_argv(
    world: FakeWorld, tmp_path: Path
) -> None:
    record = tmp_path / "record.json"
    prompt = "a" * 90_000
    result = run_agent(
        world.request("aider", "text", prompt=prompt, env_extra={"FAKE_CLI_RECORD": str(record)})
    )
    assert result.succeeded, result.error
    seen = _record(record)
    assert seen["prompt"] == prompt and seen["prompt_via"] == "argv"


def test_world_env_scrubs_bin_overrides(world: FakeWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture itself: a developer's CLAUDE_BIN must not bypass the fakes."""
    monkeypatch.setenv("CLAUDE_BIN", "/usr/bin/false")
    env = world.env()
    assert "CLAUDE_BIN" not in env
    key = path_env_key(env, sys.platform)
    assert env[key].split(os.pathsep)[0] == str(world.bin)
