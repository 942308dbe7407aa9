"""The pure injection plan (seed 002 §8.1, §9 ①; ref §7).

MCP-DISPATCH-001 is proved with defs whose id no module could know (``zz-custom-agent``): the
plan must follow ``external_mcp_injection`` and the ACP fields alone. The managed-dir check is
compared with an independent oracle over generated path shapes.
"""

from __future__ import annotations

import json
import posixpath
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.defs.registry import BUILTIN_DEFS
from harness.defs.types import AcpEnvFormat, AgentDef, McpInjection
from harness.mcp.builders import build_acp_mcp_servers, build_claude_mcp_json
from harness.mcp.inject import (
    ENV_CONTENT_VARS,
    InjectionPlan,
    McpInjectionError,
    is_managed_project_cwd,
    plan_injection,
)
from harness.mcp.servers import McpServerConfig
from tests.mcp._support import (
    ENV_SECRET,
    HEADER_SECRET,
    STDIO_ENTRY,
    TOKEN_SECRET,
    TOKENS,
    all_servers,
    assert_no_secret,
    builtin_with,
    custom_def,
    servers,
)
from tests.test_no_agent_ids_in_engine import string_literals

ROOT = "/srv/od/projects"
PROJECT = "/srv/od/projects/p-42"


def _plan(
    defn: AgentDef,
    chosen: tuple[McpServerConfig, ...] | list[McpServerConfig] = (),
    *,
    cwd: str = PROJECT,
    root: str | None = ROOT,
    version: str | None = None,
) -> InjectionPlan:
    return plan_injection(
        defn, chosen, TOKENS, cwd=cwd, managed_projects_root=root, agent_version=version
    )


# -- dispatch by field -------------------------------------------------------------------------


@pytest.mark.rule("MCP-DISPATCH-001")
@pytest.mark.parametrize("strategy", list(McpInjection))
def test_a_def_unknown_to_the_engine_is_planned_from_its_fields(strategy: McpInjection) -> None:
    builtin = builtin_with(strategy)
    custom = custom_def(strategy, env_format=builtin.acp.mcp_env_format)
    mine, theirs = _plan(custom, all_servers()), _plan(builtin, all_servers())
    assert mine.strategy is theirs.strategy is strategy
    assert dict(mine.env) == dict(theirs.env)
    assert [w.content for w in mine.writes] == [w.content for w in theirs.writes]
    assert mine.acp_mcp_servers == theirs.acp_mcp_servers
    assert "Zeta Custom" in mine.reason


@pytest.mark.rule("MCP-DISPATCH-001")
def test_acp_fields_of_the_def_drive_env_format_and_cutoff() -> None:
    as_map = _plan(custom_def(McpInjection.ACP_MERGE, env_format=AcpEnvFormat.MAP), all_servers())
    assert as_map.acp_mcp_servers[0]["env"] == {"GITHUB_TOKEN": STDIO_ENTRY["env"]["GITHUB_TOKEN"]}
    cut = custom_def(McpInjection.ACP_MERGE, removed_in="2.0.0")
    assert _plan(cut, all_servers(), version="2.0.1").acp_mcp_servers == ()
    assert len(_plan(cut, all_servers(), version="1.9.9").acp_mcp_servers) == 1


@pytest.mark.rule("MCP-DISPATCH-001")
def test_the_mcp_modules_name_no_agent_id() -> None:
    agent_ids = {d.id for d in BUILTIN_DEFS}
    package = Path(__file__).resolve().parents[2] / "harness" / "mcp"
    modules = sorted(package.glob("*.py"))
    assert len(modules) == 7  # __init__, apply, builders, bundles, inject, journal, servers
    for module in modules:
        hits = [(line, t) for line, t in string_literals(module) if t in agent_ids]
        assert not hits, f"{module.name} names agent ids: {hits}"


# -- none ---------------------------------------------------------------------------------------


@pytest.mark.rule("MCP-NONE-001")
@pytest.mark.parametrize(
    "defn",
    [d for d in BUILTIN_DEFS if d.external_mcp_injection is McpInjection.NONE],
    ids=lambda d: d.id,
)
def test_none_is_an_explicit_plan_naming_the_agent(defn: AgentDef) -> None:
    plan = _plan(defn, all_servers())
    assert plan.is_none and plan.strategy is McpInjection.NONE
    assert defn.name in plan.reason and defn.id in plan.reason
    assert "not forwarded" in plan.reason
    assert [s.id for s in plan.skipped] == ["github", "higgsfield", "pinned"]
    assert not (plan.env or plan.writes or plan.removals or plan.acp_mcp_servers or plan.delivered)
    summary = plan.to_json()
    assert summary["strategy"] == "none" and defn.name in summary["reason"]


@pytest.mark.rule("MCP-NONE-001")
def test_none_is_reported_even_without_servers() -> None:
    plan = _plan(custom_def(McpInjection.NONE), [])
    assert plan.is_none and "Zeta Custom" in plan.describe() and "0 enabled" in plan.reason


# -- claude-mcp-json ---------------------------------------------------------------------------


@pytest.mark.rule("MCP-MANAGED-001", "MCP-CLAUDE-001")
def test_mcp_json_is_planned_in_a_managed_project() -> None:
    plan = _plan(builtin_with(McpInjection.CLAUDE_MCP_JSON), all_servers())
    (write,) = plan.writes
    assert write.path == posixpath.join(PROJECT, ".mcp.json")
    assert json.loads(write.content) == build_claude_mcp_json(all_servers(), TOKENS)
    assert plan.managed_root == ROOT and plan.delivered == ("github", "higgsfield", "pinned")
    assert not plan.removals and not plan.env


@pytest.mark.rule("MCP-MANAGED-001")
@pytest.mark.parametrize(
    ("cwd", "root"),
    [
        (ROOT, ROOT),  # equal to the root is NOT managed
        (ROOT + "/", ROOT),
        ("/srv/od/projects-evil/p", ROOT),  # a sibling sharing the prefix
        ("/srv/od/projects/p/../..", ROOT),
        ("/srv/od/projects/..", ROOT),
        ("/home/me/my-repo", ROOT),  # a git-linked user repo
        ("projects/p-42", ROOT),  # relative
        (PROJECT, None),  # no managed root configured
        (PROJECT, "relative/root"),
    ],
)
def test_mcp_json_is_never_planned_outside_a_managed_project(cwd: str, root: str | None) -> None:
    plan = _plan(builtin_with(McpInjection.CLAUDE_MCP_JSON), all_servers(), cwd=cwd, root=root)
    assert not plan.writes and not plan.removals
    assert [s.id for s in plan.skipped] == ["github", "higgsfield", "pinned"]
    assert "never written" in plan.reason


@pytest.mark.rule("MCP-MANAGED-002")
def test_a_stale_mcp_json_is_removed_when_no_server_is_enabled() -> None:
    defn = builtin_with(McpInjection.CLAUDE_MCP_JSON)
    disabled = servers({**STDIO_ENTRY, "enabled": False})
    for chosen in ((), disabled):
        plan = _plan(defn, chosen)
        assert plan.removals == (posixpath.join(PROJECT, ".mcp.json"),) and not plan.writes
    outside = _plan(defn, disabled, cwd="/home/me/repo")
    assert not outside.removals and not outside.writes


def _lexical_parts(path: str) -> tuple[str, ...] | None:
    """Independent oracle: resolve '.' and '..' by hand on '/'-separated absolute paths."""
    if not path.startswith("/"):
        return None
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
        else:
            parts.append(part)
    return tuple(parts)


_segment = st.sampled_from(["projects", "p1", "p2", "..", ".", "", "projects-x", "od"])


@pytest.mark.rule("MCP-MANAGED-001")
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX path shapes")
@given(
    root=st.lists(_segment, min_size=0, max_size=4).map(lambda s: "/" + "/".join(s)),
    cwd=st.lists(_segment, min_size=0, max_size=6).map("/".join),
    absolute=st.booleans(),
)
def test_managed_check_matches_a_lexical_oracle(root: str, cwd: str, absolute: bool) -> None:
    cwd = "/" + cwd if absolute else cwd
    mine = is_managed_project_cwd(cwd, root)
    here, base = _lexical_parts(cwd), _lexical_parts(root)
    expected = (
        here is not None
        and base is not None
        and len(here) > len(base)
        and here[: len(base)] == base
    )
    assert mine is expected, (cwd, root)
    plan = _plan(builtin_with(McpInjection.CLAUDE_MCP_JSON), all_servers(), cwd=cwd, root=root)
    assert bool(plan.writes) is expected
    for write in plan.writes:
        written = _lexical_parts(write.path)
        assert written is not None and base is not None
        assert written[: len(base)] == base and len(written) >= len(base) + 2


# -- acp-merge ---------------------------------------------------------------------------------


@pytest.mark.rule("MCP-ACP-001")
@pytest.mark.parametrize(
    "defn",
    [d for d in BUILTIN_DEFS if d.external_mcp_injection is McpInjection.ACP_MERGE],
    ids=lambda d: d.id,
)
def test_acp_plan_uses_the_def_env_format(defn: AgentDef) -> None:
    plan = _plan(defn, all_servers())
    assert list(plan.acp_mcp_servers) == build_acp_mcp_servers(
        all_servers(), defn.acp.mcp_env_format
    )
    assert plan.delivered == ("github",)
    assert {s.id for s in plan.skipped} == {"higgsfield", "pinned"}
    assert all("stdio servers only" in s.reason for s in plan.skipped)
    assert not plan.env and not plan.writes


@pytest.mark.rule("MCP-ACP-002")
def test_acp_plan_withholds_stdio_from_the_cutoff_and_says_why() -> None:
    defn = next(d for d in BUILTIN_DEFS if d.acp.stdio_mcp_removed_in_version)
    cutoff = defn.acp.stdio_mcp_removed_in_version
    assert cutoff is not None
    major, minor, _ = (int(p) for p in cutoff.split("."))
    newer = f"{major}.{minor + 63}.0"  # numerically newer, lexically "smaller" for minor < 37
    plan = _plan(defn, all_servers(), version=newer)
    assert plan.acp_mcp_servers == () and plan.delivered == ()
    assert any(s.id == "github" and cutoff in s.reason for s in plan.skipped)
    older = _plan(defn, all_servers(), version=f"{major}.{max(minor - 1, 0)}.9")
    assert [s["name"] for s in older.acp_mcp_servers] == ["github"]
    unknown = _plan(defn, all_servers(), version=None)
    assert len(unknown.acp_mcp_servers) == 1 and cutoff in unknown.reason


# -- env content -------------------------------------------------------------------------------


@pytest.mark.rule("MCP-ENV-001")
@pytest.mark.parametrize(
    ("strategy", "variable"),
    [
        (McpInjection.OPENCODE_ENV_CONTENT, "OPENCODE_CONFIG_CONTENT"),
        (McpInjection.MIMO_ENV_CONTENT, "MIMOCODE_CONFIG_CONTENT"),
    ],
)
def test_env_content_is_a_json_string_or_not_set(strategy: McpInjection, variable: str) -> None:
    assert ENV_CONTENT_VARS[strategy] == variable
    defn = builtin_with(strategy)
    plan = _plan(defn, all_servers())
    assert list(plan.env) == [variable]
    assert set(json.loads(plan.env[variable])["mcp"]) == {"github", "higgsfield", "pinned"}
    for chosen in ((), servers({**STDIO_ENTRY, "enabled": False})):
        empty = _plan(defn, chosen)
        assert dict(empty.env) == {}  # not "{}", not "": not set at all
        assert empty.env_untouched == (variable,)
        assert variable in empty.describe() and "never an empty object" in empty.reason


# -- input checks and secrets -------------------------------------------------------------------


@pytest.mark.rule("MCP-CONFIG-001")
def test_repeated_ids_are_refused_by_the_planner() -> None:
    twice = [*servers(STDIO_ENTRY), *servers(STDIO_ENTRY)]
    with pytest.raises(McpInjectionError, match=r"servers\[1\] repeats MCP server id 'github'"):
        _plan(builtin_with(McpInjection.OPENCODE_ENV_CONTENT), twice)


@pytest.mark.rule("MCP-SECRET-001")
@pytest.mark.parametrize("strategy", list(McpInjection))
@pytest.mark.parametrize("cwd", [PROJECT, "/home/me/repo"])
def test_no_secret_in_repr_description_or_json(strategy: McpInjection, cwd: str) -> None:
    defn = custom_def(strategy)
    plan = _plan(defn, all_servers(), cwd=cwd, version="0.1.0")
    assert_no_secret(repr(plan))
    assert_no_secret(plan.describe())
    assert_no_secret(json.dumps(plan.to_json()))
    for write in plan.writes:
        assert_no_secret(repr(write))


@pytest.mark.rule("MCP-SECRET-001")
def test_the_plan_lists_its_secrets_for_the_runner_redactor() -> None:
    from harness.secrets.redact import Redactor

    plan = _plan(builtin_with(McpInjection.OPENCODE_ENV_CONTENT), all_servers())
    assert {ENV_SECRET, HEADER_SECRET, TOKEN_SECRET} <= set(plan.secrets)
    assert "design" in plan.secrets  # every header value, not only Authorization
    stderr = f"mcp child failed: env={ENV_SECRET} auth=Bearer {TOKEN_SECRET} h={HEADER_SECRET}"
    assert_no_secret(Redactor(secrets=plan.secrets).redact(stderr))
    # A plan never invents secrets for servers it does not know.
    assert _plan(custom_def(McpInjection.NONE), []).secrets == ()
