"""The MCP server input model and its file parser (MCP-CONFIG-001, MCP-SECRET-001, MCP-AUTH-002).

Entries are written by hand from ref §7's input shape
``{id, transport, command?, args?, env?, url?, headers?, authMode?}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness.mcp.servers import (
    McpAuthMode,
    McpConfigError,
    McpServerConfig,
    McpTransport,
    load_mcp_config,
    parse_mcp_config,
    redact_url,
)
from tests.mcp._support import (
    ENV_SECRET,
    HEADER_SECRET,
    HTTP_ENTRY,
    SSE_ENTRY,
    STDIO_ENTRY,
    all_servers,
    assert_no_secret,
    servers,
)


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "mcp-config.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.rule("MCP-CONFIG-001")
def test_a_valid_file_parses_every_field(tmp_path: Path) -> None:
    path = _write(tmp_path, {"servers": [STDIO_ENTRY, HTTP_ENTRY, SSE_ENTRY]})
    stdio, http, sse = load_mcp_config(path)
    assert stdio == McpServerConfig(
        id="github",
        transport=McpTransport.STDIO,
        command="npx",
        args=("-y", "@modelcontextprotocol/server-github"),
        env={"GITHUB_TOKEN": ENV_SECRET},
    )
    assert (http.transport, http.url, http.auth_mode) == (
        McpTransport.HTTP,
        "https://mcp.higgsfield.example/mcp",
        McpAuthMode.OAUTH,
    )
    assert sse.transport is McpTransport.SSE and dict(sse.headers)["X-Team"] == "design"
    assert all(s.enabled for s in (stdio, http, sse))


@pytest.mark.rule("MCP-CONFIG-001")
def test_a_bare_array_and_defaults_are_accepted() -> None:
    (server,) = parse_mcp_config([{"id": "fs", "command": "mcp-fs", "enabled": False}])
    assert server.transport is McpTransport.STDIO  # upstream default transport
    assert server.enabled is False and server.args == () and dict(server.env) == {}


@pytest.mark.rule("MCP-CONFIG-001")
@pytest.mark.parametrize(
    ("entry", "field", "problem"),
    [
        ({"transport": "stdio", "command": "x"}, "id", "is required"),
        ({"id": "bad id", "command": "x"}, "id", "must match"),
        ({"id": "-lead", "command": "x"}, "id", "must match"),
        ({"id": "a" * 65, "command": "x"}, "id", "must match"),
        ({"id": "s", "transport": "ws", "url": "https://x.example"}, "transport", "one of"),
        ({"id": "s"}, "command", "is required"),
        ({"id": "s", "command": "  "}, "command", "blank"),
        ({"id": "s", "command": 5}, "command", "must be a string"),
        ({"id": "s", "command": "x", "args": "-y"}, "args", "array of strings"),
        ({"id": "s", "command": "x", "args": ["-y", 3]}, "args[1]", "must be a string"),
        ({"id": "s", "command": "x", "env": ["A=b"]}, "env", "object of strings"),
        ({"id": "s", "command": "x", "env": {"A": 1}}, "env.A", "must be a string"),
        ({"id": "s", "command": "x", "env": {"A=B": "v"}}, "env[key #1]", "without '='"),
        ({"id": "s", "command": "x", "enabled": "yes"}, "enabled", "true or false"),
        ({"id": "s", "command": "x", "url": "https://a.example"}, "url", "http/sse"),
        ({"id": "s", "command": "x", "authMode": "oauth"}, "authMode", "http/sse"),
        ({"id": "h", "transport": "http"}, "url", "is required"),
        ({"id": "h", "transport": "http", "url": "file:///etc/passwd"}, "url", "http://"),
        ({"id": "h", "transport": "sse", "url": "javascript:alert(1)"}, "url", "http://"),
        ({"id": "h", "transport": "http", "url": "https://"}, "url", "http://"),
        (
            {"id": "h", "transport": "http", "url": "https://a.example", "command": "x"},
            "command",
            "stdio servers only",
        ),
        (
            {"id": "h", "transport": "http", "url": "https://a.example", "authMode": "basic"},
            "authMode",
            "'none' or 'oauth'",
        ),
        (
            {
                "id": "h",
                "transport": "http",
                "url": "https://a.example",
                "headers": {"Bad Name": "v"},
            },
            "headers[key #1]",
            "header name",
        ),
        (
            {
                "id": "h",
                "transport": "http",
                "url": "https://a.example",
                "headers": {"X-A": "v\r\nX-Injected: 1"},
            },
            "headers.X-A",
            "line break",
        ),
        ({"id": "s", "command": "x\x00y"}, "command", "NUL"),
    ],
)
def test_each_bad_entry_names_file_index_and_field(
    tmp_path: Path, entry: dict[str, Any], field: str, problem: str
) -> None:
    path = _write(tmp_path, {"servers": [STDIO_ENTRY, entry]})
    with pytest.raises(McpConfigError) as info:
        load_mcp_config(path)
    error = info.value
    assert (error.source, error.index, error.field) == (str(path), 1, field)
    assert str(error).startswith(f"[MCP-CONFIG-001] {path}: servers[1].{field}: ")
    assert problem in str(error)
    assert error.code == "MCP_CONFIG_INVALID" and isinstance(error, HarnessError)


@pytest.mark.rule("MCP-CONFIG-001")
def test_an_unknown_key_and_a_repeated_id_are_errors_not_drops() -> None:
    with pytest.raises(
        McpConfigError, match=r"servers\[0\]: unknown key #3 \(did you mean 'label'\?\)"
    ):
        parse_mcp_config([{"id": "a", "command": "x", "lable": "typo"}])
    with pytest.raises(McpConfigError, match=r"servers\[2\]\.id: duplicates server id 'a'"):
        parse_mcp_config(
            [{"id": "a", "command": "x"}, {"id": "b", "command": "y"}, {"id": "a", "command": "z"}]
        )


@pytest.mark.rule("MCP-CONFIG-001")
@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "is not JSON"),
        (b"\xff\xfe{}", "is not UTF-8"),
        (b"42", "must be a JSON object or array"),
        (b'{"servers": 3}', "servers: must be an array or object"),
        (b'{"servers": [], "mcpServers": {}}', "give 'mcpServers' or 'servers', not both"),
        (b'{"mcpServers": {"a": {"type": "ws", "url": "http://x/"}}}', "mcpServers[0].type"),
        (b'{"mcpServers": {"a": {"command": "x", "id": "b"}}}', "mcpServers[0]: unknown key"),
        (b'{"servers": [], "extra": 1}', "unknown key #2 at top level"),
        (b'{"servers": ["x"]}', "servers[0]: must be a JSON object"),
    ],
)
def test_a_malformed_file_is_one_typed_error(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(McpConfigError) as info:
        load_mcp_config(path)
    assert str(path) in str(info.value) and problem in str(info.value)


@pytest.mark.rule("MCP-CONFIG-001")
def test_a_missing_file_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(McpConfigError, match="cannot read"):
        load_mcp_config(tmp_path / "absent.json")


@pytest.mark.rule("MCP-AUTH-002")
@pytest.mark.parametrize(
    ("entry", "mode"),
    [
        (STDIO_ENTRY, McpAuthMode.NONE),
        ({"id": "r", "transport": "http", "url": "https://mcp.example/x"}, McpAuthMode.OAUTH),
        ({"id": "r", "transport": "http", "url": "http://127.0.0.1:8080/x"}, McpAuthMode.NONE),
        ({"id": "r", "transport": "http", "url": "http://localhost/x"}, McpAuthMode.NONE),
        ({"id": "r", "transport": "sse", "url": "http://[::1]:9/x"}, McpAuthMode.NONE),
        ({"id": "r", "transport": "sse", "url": "http://[::ffff:127.0.0.1]/x"}, McpAuthMode.NONE),
        (
            {"id": "r", "transport": "http", "url": "http://127.0.0.1/x", "authMode": "oauth"},
            McpAuthMode.OAUTH,
        ),
        (
            {"id": "r", "transport": "http", "url": "https://a.example/x", "authMode": "none"},
            McpAuthMode.NONE,
        ),
    ],
)
def test_effective_auth_mode(entry: dict[str, Any], mode: McpAuthMode) -> None:
    """upstream effectiveMcpAuthMode: stdio none; explicit mode; else loopback -> none."""
    (server,) = servers(entry)
    assert server.effective_auth_mode is mode


@pytest.mark.rule("MCP-SECRET-001")
def test_repr_names_but_never_shows_values() -> None:
    text = repr(all_servers())
    assert_no_secret(text)
    assert "GITHUB_TOKEN" in text and "Authorization" in text and "sse.example" in text


@pytest.mark.rule("MCP-SECRET-001")
def test_redact_url_keeps_scheme_and_host_only() -> None:
    assert redact_url(SSE_ENTRY["url"]) == "https://sse.example/…"
    assert redact_url("http://127.0.0.1:8080") == "http://127.0.0.1:8080"


def _secret_bearing_entries(secret: str) -> list[dict[str, Any]]:
    return [
        {"id": "s", "command": "x", "env": {"TOKEN": secret, "N": 1}},
        {"id": "s", "command": "x", "env": {secret: secret}, "args": 1},
        {"id": "s", "command": 3, "env": {"T": secret}},
        {"id": "h", "transport": "http", "url": f"ftp://u:{secret}@h/x"},
        {"id": "h", "transport": "http", "url": f"https://h.example/?k={secret} x"},
        {
            "id": "h",
            "transport": "http",
            "url": "https://h.example",
            "headers": {"A": 1, "B": secret},
        },
        {
            "id": "h",
            "transport": "http",
            "url": "https://h.example",
            "headers": {"Authorization": secret + "\n"},
        },
        {
            "id": "h",
            "transport": "http",
            "url": "https://h.example",
            "headers": {f"Bad {secret}": "v"},
        },
        {"id": "s", "command": "x", secret: "v"},
        {"id": secret + " !", "command": "x"},
        {"id": "s", "transport": secret, "command": "x"},
        {"id": "h", "transport": "http", "url": "https://h.example", "authMode": secret},
    ]


@pytest.mark.rule("MCP-SECRET-001", "MCP-CONFIG-001")
@given(secret=st.from_regex(r"\A[A-Za-z0-9]{12,24}\Z"))
def test_no_error_message_quotes_a_value_from_the_file(secret: str) -> None:
    for entry in _secret_bearing_entries(secret):
        with pytest.raises(McpConfigError) as info:
            parse_mcp_config({"servers": [entry]}, source="cfg.json")
        assert secret not in str(info.value), (entry, str(info.value))
        assert "cfg.json: servers[0]" in str(info.value)


@pytest.mark.rule("MCP-SECRET-001")
def test_json_syntax_errors_do_not_quote_the_document(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"servers": [{"id": "s", "env": {"T": "' + HEADER_SECRET + '" oops', "utf-8")
    with pytest.raises(McpConfigError) as info:
        load_mcp_config(path)
    assert_no_secret(str(info.value))


@pytest.mark.rule("MCP-CONFIG-001")
def test_the_model_refuses_inconsistent_construction() -> None:
    with pytest.raises(ValueError, match="needs a command"):
        McpServerConfig(id="s", transport=McpTransport.STDIO)
    with pytest.raises(ValueError, match="needs a url"):
        McpServerConfig(id="h", transport=McpTransport.HTTP)
    with pytest.raises(ValueError, match="for stdio"):
        McpServerConfig(id="h", transport=McpTransport.SSE, url="https://x", args=("a",))
    with pytest.raises(ValueError, match="id does not match"):
        McpServerConfig(id="../x", transport=McpTransport.STDIO, command="c")
    server = McpServerConfig(id="s", transport=McpTransport.STDIO, command="c", env={"A": "b"})
    with pytest.raises(TypeError):
        server.env["A"] = "changed"  # type: ignore[index]


def _map_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """An array entry as the ``{"mcpServers": {id: entry}}`` object holds it."""
    out = {k: v for k, v in entry.items() if k not in ("id", "transport")}
    return {**out, "type": entry["transport"]}


@pytest.mark.rule("MCP-CONFIG-002")
def test_every_accepted_shape_gives_the_same_servers(tmp_path: Path) -> None:
    entries = [STDIO_ENTRY, HTTP_ENTRY, SSE_ENTRY]
    as_map = {e["id"]: _map_entry(e) for e in entries}
    expected = all_servers()
    for document in (
        {"mcpServers": as_map},
        {"mcpServers": entries},
        {"servers": as_map},
        {"servers": entries},
        entries,
    ):
        assert load_mcp_config(_write(tmp_path, document)) == expected, document


@pytest.mark.rule("MCP-CONFIG-002", "MCP-CLAUDE-001")
def test_a_claude_mcp_json_without_type_loads_back_as_its_servers(tmp_path: Path) -> None:
    """What MCP clients write: ``type`` left out means stdio with a command, http with a url."""
    from harness.mcp.builders import build_claude_mcp_json

    document = {
        "mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "server-fs", "."]},
            "remote": {"url": "https://mcp.example/mcp", "headers": {"X-Team": "design"}},
        }
    }
    fs, remote = load_mcp_config(_write(tmp_path, document))
    assert (fs.transport, fs.command, fs.args) == (
        McpTransport.STDIO,
        "npx",
        ("-y", "server-fs", "."),
    )
    assert (remote.transport, remote.url) == (McpTransport.HTTP, "https://mcp.example/mcp")
    written = build_claude_mcp_json((fs, remote))
    assert written is not None
    assert load_mcp_config(_write(tmp_path, written)) == (fs, remote)


@pytest.mark.rule("MCP-CONFIG-002")
def test_the_accepted_shapes_are_stated_alike_in_help_and_readme(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from harness.cli import main
    from harness.mcp.servers import ACCEPTED_SHAPES

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert ACCEPTED_SHAPES in " ".join(readme.split())
    for command in (["run"], ["argv"], ["mcp", "plan"]):
        with pytest.raises(SystemExit):
            main([*command, "--help"])
        shown = " ".join(capsys.readouterr().out.split())
        assert ACCEPTED_SHAPES in shown, command
