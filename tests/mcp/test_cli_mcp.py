"""``harness mcp plan``: the plan a person can read, without secrets (MCP-NONE-001,
MCP-MANAGED-001, MCP-SECRET-001)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.defs.types import McpInjection
from tests.mcp._support import HTTP_ENTRY, SSE_ENTRY, STDIO_ENTRY, assert_no_secret, builtin_with


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": [STDIO_ENTRY, HTTP_ENTRY, SSE_ENTRY]}), "utf-8")
    return path


@pytest.mark.rule("MCP-MANAGED-001", "MCP-SECRET-001")
def test_plan_for_a_managed_project(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    defn = builtin_with(McpInjection.CLAUDE_MCP_JSON)
    root, project = tmp_path / "projects", tmp_path / "projects" / "p"
    argv = ["mcp", "plan", defn.id, "--mcp-config", str(config)]
    code = main([*argv, "--cwd", str(project), "--projects-root", str(root)])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("strategy: claude-mcp-json\n")
    assert f"write {project / '.mcp.json'}" in out
    assert not project.exists()  # the plan writes nothing
    assert_no_secret(out)
    assert main([*argv, "--cwd", str(root), "--projects-root", str(root), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["writes"] == [] and "never written" in summary["reason"]


@pytest.mark.rule("MCP-NONE-001", "MCP-SECRET-001")
def test_plan_for_an_agent_without_a_strategy(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    defn = builtin_with(McpInjection.NONE)
    assert main(["mcp", "plan", defn.id, "--mcp-config", str(config), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["strategy"] == "none" and defn.name in summary["reason"]
    assert [s["id"] for s in summary["skipped"]] == ["github", "higgsfield", "pinned"]


@pytest.mark.rule("MCP-ENV-001", "MCP-SECRET-001")
def test_plan_for_env_content_hides_the_value(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    defn = builtin_with(McpInjection.OPENCODE_ENV_CONTENT)
    assert main(["mcp", "plan", defn.id, "--mcp-config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "set env OPENCODE_CONFIG_CONTENT (value hidden)" in out
    assert_no_secret(out)


@pytest.mark.rule("MCP-CONFIG-001", "MCP-SECRET-001")
def test_a_bad_config_exits_2_naming_the_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{**STDIO_ENTRY, "env": {"GITHUB_TOKEN": 7}}]), "utf-8")
    defn = builtin_with(McpInjection.ACP_MERGE)
    assert main(["mcp", "plan", defn.id, "--mcp-config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: servers[0].env.GITHUB_TOKEN: must be a string" in err
