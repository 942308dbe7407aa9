"""The per-strategy builders (seed 002 §8.1; ref §7, §2.6; wire §A.6).

Expected documents are written by hand from ref §7 ("Input", ``buildClaudeMcpJson``,
``buildAcpMcpServers``, ``buildOpenCodeMcpConfigContent``) and wire §A.6 (Claude ``.mcp.json``,
OpenCode ``mcp`` v1, ACP ``McpServer``).
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.defs.types import AcpEnvFormat
from harness.mcp.builders import (
    McpBuildError,
    build_acp_mcp_servers,
    build_claude_mcp_json,
    build_opencode_config,
    build_opencode_config_content,
    merge_auth_header,
    opencode_config_problems,
)
from harness.mcp.servers import McpAuthMode, McpServerConfig, McpTransport
from harness.protocols.acp.session import AcpSession
from harness.protocols.base import SessionRequest
from harness.schemas import load_schema
from tests.mcp._support import (
    ENV_SECRET,
    HEADER_SECRET,
    HTTP_ENTRY,
    SSE_ENTRY,
    STDIO_ENTRY,
    TOKEN_SECRET,
    TOKENS,
    all_servers,
    assert_no_secret,
    servers,
)

GITHUB_ARGS = ["-y", "@modelcontextprotocol/server-github"]

# -- claude-mcp-json -------------------------------------------------------------------------


@pytest.mark.rule("MCP-CLAUDE-001")
def test_claude_mcp_json_shape() -> None:
    assert build_claude_mcp_json(all_servers(), TOKENS) == {
        "mcpServers": {
            "github": {"command": "npx", "args": GITHUB_ARGS, "env": {"GITHUB_TOKEN": ENV_SECRET}},
            "higgsfield": {
                "type": "http",
                "url": "https://mcp.higgsfield.example/mcp",
                "headers": {"Authorization": f"Bearer {TOKEN_SECRET}"},
            },
            "pinned": {
                "type": "sse",
                "url": SSE_ENTRY["url"],
                "headers": {"Authorization": HEADER_SECRET, "X-Team": "design"},
            },
        }
    }


@pytest.mark.rule("MCP-CLAUDE-001")
def test_claude_mcp_json_omits_empty_parts_and_disabled_servers() -> None:
    minimal = servers(
        {"id": "fs", "command": "mcp-fs"},
        {"id": "loop", "transport": "http", "url": "http://127.0.0.1:7/mcp"},
        {"id": "off", "command": "never", "enabled": False},
    )
    assert build_claude_mcp_json(minimal, {"loop": TOKEN_SECRET}) == {
        "mcpServers": {
            "fs": {"command": "mcp-fs"},
            "loop": {"type": "http", "url": "http://127.0.0.1:7/mcp"},
        }
    }


@pytest.mark.rule("MCP-CLAUDE-001")
def test_claude_mcp_json_is_none_without_an_enabled_server() -> None:
    assert build_claude_mcp_json([]) is None
    assert build_claude_mcp_json(servers({**STDIO_ENTRY, "enabled": False})) is None


# -- OAuth header merge ------------------------------------------------------------------------


@pytest.mark.rule("MCP-AUTH-001")
@pytest.mark.parametrize(
    ("headers", "token", "expected"),
    [
        (None, "t", {"Authorization": "Bearer t"}),
        ({}, None, None),
        ({}, "", None),
        ({"X-A": "1"}, None, {"X-A": "1"}),
        ({"X-A": "1"}, "t", {"X-A": "1", "Authorization": "Bearer t"}),
        ({"Authorization": "Bearer mine"}, "t", {"Authorization": "Bearer mine"}),
        ({"authorization": "token mine"}, "t", {"authorization": "token mine"}),
        ({"AUTHORIZATION": "Basic abc"}, "t", {"AUTHORIZATION": "Basic abc"}),
        ({"Authorization": ""}, "t", {"Authorization": "Bearer t"}),
        ({"authorization": "  \t"}, "t", {"Authorization": "Bearer t"}),
        ({"authorization": " "}, None, None),
        ({"Authorization": "", "X-B": "2"}, None, {"X-B": "2"}),
    ],
)
def test_merge_auth_header(
    headers: dict[str, str] | None, token: str | None, expected: dict[str, str] | None
) -> None:
    assert merge_auth_header(headers, token) == expected


@pytest.mark.rule("MCP-AUTH-001")
@given(
    name=st.sampled_from(["Authorization", "authorization", "AUTHORIZATION", "AuThOrIzAtIoN"]),
    value=st.text(min_size=1, max_size=30),
    token=st.text(alphabet="abcXYZ0123456789-_.", min_size=1, max_size=30),
)
def test_a_non_blank_user_authorization_always_wins(name: str, value: str, token: str) -> None:
    merged = merge_auth_header({name: value}, token)
    if value.strip():
        assert merged == {name: value}
    else:
        assert merged == {"Authorization": f"Bearer {token}"}


@pytest.mark.rule("MCP-AUTH-001", "MCP-SECRET-001")
def test_a_token_with_a_line_break_is_refused_without_quoting_it() -> None:
    with pytest.raises(McpBuildError) as info:
        build_claude_mcp_json(servers(HTTP_ENTRY), {"higgsfield": TOKEN_SECRET + "\r\nX-Evil: 1"})
    assert "higgsfield" in str(info.value)
    assert_no_secret(str(info.value))


@pytest.mark.rule("MCP-AUTH-002")
def test_only_oauth_mode_servers_receive_the_token() -> None:
    chosen = servers(
        STDIO_ENTRY,
        {"id": "none-mode", "transport": "http", "url": "https://a.example/m", "authMode": "none"},
        {"id": "loopback", "transport": "sse", "url": "http://127.0.0.1:3/sse"},
        {"id": "inferred", "transport": "http", "url": "https://b.example/m"},
        {"id": "explicit", "transport": "sse", "url": "http://localhost/s", "authMode": "oauth"},
    )
    tokens = {s.id: TOKEN_SECRET for s in chosen}
    claude = build_claude_mcp_json(chosen, tokens)
    assert claude is not None
    with_token = {k for k, e in claude["mcpServers"].items() if TOKEN_SECRET in json.dumps(e)}
    assert with_token == {"inferred", "explicit"}
    assert claude["mcpServers"]["inferred"]["headers"] == {
        "Authorization": f"Bearer {TOKEN_SECRET}"
    }
    opencode = build_opencode_config(chosen, tokens)
    assert opencode is not None
    assert {k for k, e in opencode["mcp"].items() if "headers" in e} == {"inferred", "explicit"}
    assert "environment" in opencode["mcp"]["github"]
    assert TOKEN_SECRET not in json.dumps(opencode["mcp"]["github"])


# -- acp-merge -------------------------------------------------------------------------------


@pytest.mark.rule("MCP-ACP-001")
def test_acp_servers_array_env_and_stdio_only() -> None:
    assert build_acp_mcp_servers(all_servers(), AcpEnvFormat.ARRAY) == [
        {
            "type": "stdio",
            "name": "github",
            "command": "npx",
            "args": GITHUB_ARGS,
            "env": [{"name": "GITHUB_TOKEN", "value": ENV_SECRET}],
        }
    ]


@pytest.mark.rule("MCP-ACP-001")
def test_acp_servers_map_env_and_empty_parts() -> None:
    chosen = servers(STDIO_ENTRY, {"id": "bare", "command": "/usr/bin/mcp"})
    assert build_acp_mcp_servers(chosen, AcpEnvFormat.MAP) == [
        {
            "type": "stdio",
            "name": "github",
            "command": "npx",
            "args": GITHUB_ARGS,
            "env": {"GITHUB_TOKEN": ENV_SECRET},
        },
        {"type": "stdio", "name": "bare", "command": "/usr/bin/mcp", "args": [], "env": {}},
    ]
    assert build_acp_mcp_servers(chosen, AcpEnvFormat.ARRAY)[1]["env"] == []


def _session_new_servers(entries: list[dict[str, Any]], fmt: AcpEnvFormat) -> Any:
    """Drive the real ACP session to its session/new frame with ``entries``."""
    session = AcpSession(env_format=fmt)
    request = SessionRequest(prompt="hi", cwd="/work/project", mcp_servers=entries)
    init = json.loads(session.start(request, 0).frames[0])
    reply = {
        "jsonrpc": "2.0",
        "id": init["id"],
        "result": {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": False},
            "authMethods": [],
            "agentInfo": {"name": "agent", "version": "1.0.0"},
        },
    }
    frames = session.receive((json.dumps(reply) + "\n").encode(), 1).frames
    new = json.loads(frames[0])
    assert new["method"] == "session/new"
    return new["params"]["mcpServers"]


@pytest.mark.rule("MCP-ACP-001")
@pytest.mark.parametrize("fmt", list(AcpEnvFormat))
def test_the_acp_session_accepts_and_sends_the_builder_output_unchanged(fmt: AcpEnvFormat) -> None:
    built = build_acp_mcp_servers(all_servers(), fmt)
    assert _session_new_servers(built, fmt) == built


@pytest.mark.rule("MCP-ACP-001")
def test_array_output_validates_against_the_acp_mcp_server_schema() -> None:
    schema = load_schema("acp/v1/schema.json")
    validator = jsonschema.Draft202012Validator(
        {"$schema": schema["$schema"], "$ref": "#/$defs/McpServer", "$defs": schema["$defs"]}
    )
    for entry in build_acp_mcp_servers(all_servers(), AcpEnvFormat.ARRAY):
        assert not list(validator.iter_errors(entry))


@pytest.mark.rule("MCP-ACP-002")
@pytest.mark.parametrize(
    ("version", "cutoff", "withheld"),
    [
        ("0.37.0", "0.37.0", True),
        ("0.100.0", "0.37.0", True),
        ("1.0", "0.37.0", True),
        ("0.36.9", "0.37.0", False),
        ("0.9.0", "0.37.0", False),
        ("0.4.0", "0.37.0", False),  # lexically "0.4" > "0.37"; numerically older
        (None, "0.37.0", False),
        ("99.0.0", None, False),
        ("not-a-version", "0.37.0", False),
    ],
)
def test_stdio_servers_are_suppressed_from_the_cutoff_version(
    version: str | None, cutoff: str | None, withheld: bool
) -> None:
    built = build_acp_mcp_servers(all_servers(), AcpEnvFormat.ARRAY, version, cutoff)
    assert (built == []) is withheld
    assert withheld or [e["name"] for e in built] == ["github"]


# -- opencode / mimo env content --------------------------------------------------------------


@pytest.mark.rule("MCP-OPENCODE-001", "MCP-ENV-001")
def test_opencode_config_content_shape() -> None:
    content = build_opencode_config_content(all_servers(), TOKENS)
    assert isinstance(content, str)
    assert json.loads(content) == {
        "mcp": {
            "github": {
                "type": "local",
                "command": ["npx", *GITHUB_ARGS],
                "environment": {"GITHUB_TOKEN": ENV_SECRET},
                "enabled": True,
            },
            "higgsfield": {
                "type": "remote",
                "url": "https://mcp.higgsfield.example/mcp",
                "headers": {"Authorization": f"Bearer {TOKEN_SECRET}"},
                "enabled": True,
            },
            "pinned": {
                "type": "remote",
                "url": SSE_ENTRY["url"],
                "headers": {"Authorization": HEADER_SECRET, "X-Team": "design"},
                "enabled": True,
            },
        }
    }


@pytest.mark.rule("MCP-ENV-001")
def test_opencode_content_is_none_never_an_empty_object() -> None:
    assert build_opencode_config_content([]) is None
    assert build_opencode_config_content(servers({**HTTP_ENTRY, "enabled": False})) is None
    assert build_opencode_config([]) is None


@pytest.mark.rule("MCP-ENV-001", "MCP-OPENCODE-001")
def test_project_dir_adds_the_external_directory_allow_list() -> None:
    only_dir = build_opencode_config_content([], project_dir="/srv/projects/p1/")
    assert only_dir is not None
    assert json.loads(only_dir) == {
        "permission": {
            "external_directory": {
                "/srv/projects/p1": "allow",
                "/srv/projects/p1/*": "allow",
                "/srv/projects/p1/**": "allow",
            }
        }
    }
    with pytest.raises(ValueError, match="absolute"):
        build_opencode_config([], project_dir="relative/dir")


@pytest.mark.rule("MCP-OPENCODE-001")
@pytest.mark.parametrize(
    ("config", "path"),
    [
        ({}, "$"),
        ({"mcp": {"a": {"type": "local", "command": "npx"}}}, "$.mcp.a"),
        ({"mcp": {"a": {"type": "local", "command": ["npx"], "args": ["-y"]}}}, "$.mcp.a"),
        ({"mcp": {"a": {"type": "local", "command": []}}}, "$.mcp.a"),
        ({"mcp": {"a": {"type": "local", "command": [""]}}}, "$.mcp.a"),
        ({"mcp": {"a": {"type": "remote", "url": "https://x", "env": {}}}}, "$.mcp.a"),
        ({"mcp": {"a": {"type": "remote", "url": "https://x", "oauth": True}}}, "$.mcp.a"),
        ({"mcp": {"a": {"type": "local", "command": ["x"], "timeout": 0}}}, "$.mcp.a"),
        ({"mcp": {}}, "$.mcp"),
        ({"mcp": {"a": {"type": "local", "command": ["x"]}}, "provider": {}}, "$"),
    ],
)
def test_the_schema_rejects_what_opencode_rejects(config: dict[str, Any], path: str) -> None:
    problems = opencode_config_problems(config)
    assert problems and any(p.startswith(f"{path}:") for p in problems), problems


@pytest.mark.rule("MCP-OPENCODE-001")
def test_the_schema_accepts_the_published_optional_fields() -> None:
    config = {
        "mcp": {
            "a": {"type": "local", "command": ["x"], "environment": {}, "timeout": 5000},
            "b": {"type": "remote", "url": "https://x", "oauth": False, "enabled": False},
            "c": {"type": "remote", "url": "https://y", "oauth": {"clientId": "id", "scope": "s"}},
        }
    }
    assert opencode_config_problems(config) == []


@pytest.mark.rule("MCP-OPENCODE-001", "MCP-SECRET-001")
def test_schema_problems_never_quote_values() -> None:
    bad = {"mcp": {"a": {"type": "local", "command": ENV_SECRET, "environment": {"K": 1}}}}
    problems = opencode_config_problems(bad)
    assert problems
    assert_no_secret("; ".join(problems))


_ids = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_-]{0,10}\Z")
_text = st.text(min_size=1, max_size=12).filter(lambda t: t.strip() and "\x00" not in t)
_names = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,8}\Z")


@st.composite
def _server(draw: st.DrawFn) -> McpServerConfig:
    server_id = draw(_ids)
    if draw(st.booleans()):
        return McpServerConfig(
            id=server_id,
            transport=McpTransport.STDIO,
            command=draw(_text).strip(),
            args=tuple(draw(st.lists(st.text(max_size=6), max_size=3))),
            env=draw(st.dictionaries(_names, st.text(max_size=6), max_size=3)),
            enabled=draw(st.booleans()),
        )
    return McpServerConfig(
        id=server_id,
        transport=draw(st.sampled_from([McpTransport.HTTP, McpTransport.SSE])),
        url="https://" + draw(st.from_regex(r"\A[a-z]{1,8}\Z")) + ".example/mcp",
        headers=draw(st.dictionaries(_names, st.text(max_size=6), max_size=2)),
        auth_mode=draw(st.sampled_from([None, McpAuthMode.NONE, McpAuthMode.OAUTH])),
        enabled=draw(st.booleans()),
    )


@pytest.mark.rule("MCP-OPENCODE-001", "MCP-ENV-001")
@given(
    chosen=st.lists(_server(), max_size=5, unique_by=lambda s: s.id),
    token=st.text(alphabet="abcdef0123456789", max_size=10),
)
def test_every_generated_opencode_config_is_valid_or_none(
    chosen: list[McpServerConfig], token: str
) -> None:
    content = build_opencode_config_content(chosen, {s.id: token for s in chosen})
    enabled = [s for s in chosen if s.enabled]
    if not enabled:
        assert content is None
        return
    assert content is not None and content != "{}"
    config = json.loads(content)
    assert opencode_config_problems(config) == []
    for server in enabled:
        entry = config["mcp"][server.id]
        assert "args" not in entry
        if server.transport is McpTransport.STDIO:
            assert entry["command"] == [server.command, *server.args]


@pytest.mark.rule("MCP-OPENCODE-001")
def test_the_shipped_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = load_schema("opencode-mcp.schema.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    local = schema["$defs"]["McpLocalConfig"]
    assert local["additionalProperties"] is False and "args" not in local["properties"]
    assert local["properties"]["command"]["type"] == "array"
