"""Run tool bundles: the seed 002 §8.4 table row by row, the merge by id, sandbox mode."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.defs.registry import BUILTIN_DEFS
from harness.defs.types import AgentDef, McpInjection
from harness.mcp.bundles import (
    BundleRefusedError,
    DeliveryTarget,
    parse_run_tool_bundle,
    resolve_servers_for_run,
    validate_run_tool_bundle,
)
from harness.mcp.servers import McpConfigError, McpServerConfig, McpTransport
from tests.mcp._support import (
    HTTP_ENTRY,
    SSE_ENTRY,
    STDIO_ENTRY,
    all_servers,
    assert_no_secret,
    custom_def,
    servers,
)


def _defs(strategy: McpInjection) -> list[AgentDef]:
    found = [d for d in BUILTIN_DEFS if d.external_mcp_injection is strategy]
    return [*found, custom_def(strategy)]


def _ids(defn: AgentDef) -> str:
    return defn.id


# -- claude-mcp-json ---------------------------------------------------------------------------


@pytest.mark.rule("MCP-BUNDLE-001")
@pytest.mark.parametrize("defn", _defs(McpInjection.CLAUDE_MCP_JSON), ids=_ids)
def test_mcp_json_agents_take_bundles_only_for_managed_projects(defn: AgentDef) -> None:
    validate_run_tool_bundle(defn, all_servers(), DeliveryTarget.MANAGED_PROJECT)
    validate_run_tool_bundle(defn, all_servers(), "managed-project")
    for target in (DeliveryTarget.EXTERNAL_PROJECT, DeliveryTarget.NONE, None):
        with pytest.raises(BundleRefusedError) as info:
            validate_run_tool_bundle(defn, all_servers(), target)
        assert info.value.rule == "MCP-BUNDLE-001"
        assert defn.name in str(info.value) and "managed project" in str(info.value)


# -- env content -------------------------------------------------------------------------------


@pytest.mark.rule("MCP-BUNDLE-002")
@pytest.mark.parametrize(
    "defn",
    _defs(McpInjection.OPENCODE_ENV_CONTENT) + _defs(McpInjection.MIMO_ENV_CONTENT),
    ids=_ids,
)
@pytest.mark.parametrize("target", [*DeliveryTarget, None])
def test_env_content_agents_take_any_bundle(defn: AgentDef, target: DeliveryTarget | None) -> None:
    validate_run_tool_bundle(defn, all_servers(), target)


# -- acp-merge ---------------------------------------------------------------------------------


@pytest.mark.rule("MCP-BUNDLE-003")
@pytest.mark.parametrize("defn", _defs(McpInjection.ACP_MERGE), ids=_ids)
def test_acp_agents_take_stdio_only_and_name_the_first_bad_entry(defn: AgentDef) -> None:
    validate_run_tool_bundle(defn, servers(STDIO_ENTRY), DeliveryTarget.EXTERNAL_PROJECT)
    bundle = servers(
        STDIO_ENTRY,
        {**HTTP_ENTRY, "enabled": False},  # disabled: not counted
        SSE_ENTRY,
        {**HTTP_ENTRY, "id": "second-bad"},
    )
    with pytest.raises(BundleRefusedError) as info:
        validate_run_tool_bundle(defn, bundle, DeliveryTarget.MANAGED_PROJECT)
    error = info.value
    assert error.rule == "MCP-BUNDLE-003" and error.index == 2
    assert str(error).startswith("[MCP-BUNDLE-003] toolBundle.mcpServers[2] uses sse transport")
    assert defn.name in str(error) and "only supports stdio" in str(error)
    assert_no_secret(str(error))


@pytest.mark.rule("MCP-BUNDLE-003")
@given(
    transports=st.lists(
        st.tuples(st.sampled_from(list(McpTransport)), st.booleans()), min_size=1, max_size=8
    )
)
def test_acp_refusal_index_is_the_first_enabled_non_stdio(
    transports: list[tuple[McpTransport, bool]],
) -> None:
    bundle = [
        McpServerConfig(id=f"s{i}", transport=t, command="c", enabled=on)
        if t is McpTransport.STDIO
        else McpServerConfig(id=f"s{i}", transport=t, url="https://x.example", enabled=on)
        for i, (t, on) in enumerate(transports)
    ]
    expected = next(
        (i for i, (t, on) in enumerate(transports) if on and t is not McpTransport.STDIO), None
    )
    defn = custom_def(McpInjection.ACP_MERGE)
    if expected is None:
        validate_run_tool_bundle(defn, bundle, DeliveryTarget.NONE)
        return
    with pytest.raises(BundleRefusedError) as info:
        validate_run_tool_bundle(defn, bundle, DeliveryTarget.NONE)
    assert info.value.index == expected
    assert f"[{expected}] uses {transports[expected][0].value} transport" in str(info.value)


# -- none --------------------------------------------------------------------------------------


@pytest.mark.rule("MCP-BUNDLE-004")
@pytest.mark.parametrize("defn", _defs(McpInjection.NONE), ids=_ids)
def test_agents_without_a_strategy_refuse_bundles_by_name(defn: AgentDef) -> None:
    with pytest.raises(BundleRefusedError) as info:
        validate_run_tool_bundle(defn, servers(STDIO_ENTRY), DeliveryTarget.MANAGED_PROJECT)
    assert info.value.rule == "MCP-BUNDLE-004" and info.value.agent_id == defn.id
    assert defn.name in str(info.value)
    assert "does not support run-scoped MCP tool bundles" in str(info.value)


@pytest.mark.rule("MCP-BUNDLE-004", "MCP-BUNDLE-001")
@pytest.mark.parametrize("strategy", list(McpInjection))
def test_a_bundle_without_enabled_servers_is_always_accepted(strategy: McpInjection) -> None:
    off = servers({**STDIO_ENTRY, "enabled": False}, {**HTTP_ENTRY, "enabled": False})
    for bundle in ((), off):
        validate_run_tool_bundle(custom_def(strategy), bundle, None)


# -- merge and sandbox --------------------------------------------------------------------------


def _server(server_id: str, command: str = "c", *, enabled: bool = True) -> McpServerConfig:
    return McpServerConfig(
        id=server_id, transport=McpTransport.STDIO, command=command, enabled=enabled
    )


@pytest.mark.rule("MCP-BUNDLE-005")
def test_run_servers_override_persisted_ones_by_id() -> None:
    persisted = [
        _server("a", "persisted-a"),
        _server("b"),
        _server("c", enabled=False),
        _server("d"),
    ]
    bundle = [_server("d", "run-d"), _server("a", "run-a"), _server("e", "run-e")]
    selection = resolve_servers_for_run(persisted, bundle, sandbox=False)
    assert [(s.id, s.command) for s in selection.enabled_servers] == [
        ("a", "run-a"),  # overridden in place
        ("b", "c"),
        ("d", "run-d"),
        ("e", "run-e"),
    ]
    # Only enabled persisted servers the run did not override need a stored token.
    assert selection.persisted_token_server_ids == frozenset({"b"})


@pytest.mark.rule("MCP-BUNDLE-005")
def test_a_disabled_run_entry_switches_a_persisted_server_off() -> None:
    selection = resolve_servers_for_run([_server("a")], [_server("a", enabled=False)], False)
    assert selection.enabled_servers == ()
    assert selection.persisted_token_server_ids == frozenset()


@pytest.mark.rule("MCP-BUNDLE-006")
def test_sandbox_mode_leaves_persisted_servers_out() -> None:
    persisted = [_server("a", "persisted-a"), _server("b")]
    selection = resolve_servers_for_run(persisted, [_server("e", "run-e")], sandbox=True)
    assert [s.id for s in selection.enabled_servers] == ["e"]
    assert selection.persisted_token_server_ids == frozenset()
    assert resolve_servers_for_run(persisted, [], sandbox=True).enabled_servers == ()


_ids_st = st.sampled_from(["a", "b", "c", "d", "e"])


@pytest.mark.rule("MCP-BUNDLE-005", "MCP-BUNDLE-006")
@given(
    persisted=st.lists(st.tuples(_ids_st, st.booleans()), unique_by=lambda t: t[0]),
    bundle=st.lists(st.tuples(_ids_st, st.booleans()), unique_by=lambda t: t[0]),
    sandbox=st.booleans(),
)
def test_merge_properties(
    persisted: list[tuple[str, bool]], bundle: list[tuple[str, bool]], sandbox: bool
) -> None:
    p = [_server(i, "persisted", enabled=on) for i, on in persisted]
    b = [_server(i, "run", enabled=on) for i, on in bundle]
    selection = resolve_servers_for_run(p, b, sandbox)
    chosen = {s.id: s for s in selection.enabled_servers}
    assert len(chosen) == len(selection.enabled_servers)  # one entry per id
    run_ids = {i for i, _ in bundle}
    for i, on in bundle:
        assert (i in chosen) is on and (not on or chosen[i].command == "run")
    for i, on in persisted:
        if i not in run_ids:
            assert (i in chosen) is (on and not sandbox)
    assert selection.persisted_token_server_ids == (
        frozenset() if sandbox else frozenset(i for i, on in persisted if on and i not in run_ids)
    )


# -- request parsing ------------------------------------------------------------------------------


@pytest.mark.rule("MCP-CONFIG-001", "MCP-CONFIG-002")
def test_parse_run_tool_bundle() -> None:
    assert parse_run_tool_bundle(None) == ()
    assert parse_run_tool_bundle({}) == ()
    assert [s.id for s in parse_run_tool_bundle({"mcpServers": [STDIO_ENTRY, HTTP_ENTRY]})] == [
        "github",
        "higgsfield",
    ]
    # MCP-CONFIG-002: the object MCP clients write, keyed by id.
    keyed = {"mcpServers": {"github": {"command": "npx"}, "h": {"url": "https://h.example/"}}}
    assert [s.id for s in parse_run_tool_bundle(keyed)] == ["github", "h"]
    bad: list[tuple[Any, str]] = [
        ([], "toolBundle: must be an object"),
        ({"servers": []}, "only 'mcpServers'"),
        ({"mcpServers": 3}, "toolBundle.mcpServers: must be an array or object"),
        ({"mcpServers": [STDIO_ENTRY, STDIO_ENTRY]}, "toolBundle.mcpServers[1].id: duplicates"),
        ({"mcpServers": [{"id": "x"}]}, "toolBundle.mcpServers[0].command: is required"),
    ]
    for raw, problem in bad:
        with pytest.raises(McpConfigError) as info:
            parse_run_tool_bundle(raw, source="POST /runs")
        assert problem in str(info.value) and "POST /runs" in str(info.value)
