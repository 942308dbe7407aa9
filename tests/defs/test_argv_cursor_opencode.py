"""argv of cursor-agent and the OpenCode family: opencode, byok-opencode, mimo.

Rules: ARGV-CURSOR-001/002, ARGV-OPENCODE-001/002/003, ARGV-BYOK-001, ARGV-MIMO-001.
Expected argv from seed 000 §5.2 / §5.5 / §5.6 / §10, seed 002 §8.1 and ref §8.3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.defs import byok_opencode, cursor_agent, mimo, opencode
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    McpInjection,
    ModelOption,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
)

CURSOR = cursor_agent.AGENT_DEF
OPENCODE = opencode.AGENT_DEF
BYOK = byok_opencode.AGENT_DEF
MIMO = mimo.AGENT_DEF

CURSOR_HEAD = ["--print", "--output-format", "stream-json", "--stream-partial-output", "--force"]
RUN_JSON = ["run", "--format", "json"]
ALL_OPENCODE_CAPS = {
    "skipPermissions": True,
    "autoApprove": True,
    "workspaceDir": True,
    "variantFlag": True,
    "pureMode": True,
}


def argv(
    defn: AgentDef,
    *,
    dirs: Sequence[str] = (),
    caps: Mapping[str, bool] | None = None,
    model: str | None = None,
    ctx: RuntimeContext | None = None,
) -> list[str]:
    options = BuildOptions(model=model, capabilities=dict(caps or {}))
    return defn.build_args("the prompt", [], list(dirs), options, ctx or RuntimeContext())


# --- cursor-agent ----------------------------------------------------------------


@pytest.mark.rule("ARGV-CURSOR-001", "ARGV-CAPS-001", "ARGV-MODEL-001")
def test_cursor_minimal_and_trust_gate() -> None:
    assert argv(CURSOR) == CURSOR_HEAD
    assert argv(CURSOR, caps={}) == CURSOR_HEAD
    assert argv(CURSOR, caps={"trust": False}) == CURSOR_HEAD
    assert argv(CURSOR, caps={"trust": True}) == [*CURSOR_HEAD, "--trust"]
    assert argv(CURSOR, model="default") == CURSOR_HEAD


@pytest.mark.rule("ARGV-CURSOR-001")
def test_cursor_full_argv() -> None:
    ctx = RuntimeContext(cwd="/proj", resume_session_id="chat-7", new_session_id="minted")
    got = argv(CURSOR, caps={"trust": True}, model="gpt-5", ctx=ctx, dirs=["/x"])
    assert got == [
        *CURSOR_HEAD,
        "--trust",
        "--workspace",
        "/proj",
        "--model",
        "gpt-5",
        "--resume",
        "chat-7",
    ]
    # capture-style: a host-minted id is never passed (the CLI would start a new chat).
    assert "minted" not in argv(CURSOR, ctx=RuntimeContext(new_session_id="minted"))
    # the prompt is on stdin: no "-" sentinel, no prompt text.
    assert "-" not in got and "the prompt" not in got


@pytest.mark.rule("ARGV-CURSOR-001")
def test_cursor_def_fields() -> None:
    assert CURSOR.bin_env_key == "CURSOR_AGENT_BIN"
    assert CURSOR.stream_format == "json-event-stream"
    assert CURSOR.event_parser == "cursor-agent"
    assert CURSOR.help_args == ("--help",)
    assert CURSOR.capability_flags == {"--trust": "trust"}
    assert CURSOR.auth_probe is not None and CURSOR.auth_probe.args == ("status",)
    assert CURSOR.resume_style is ResumeStyle.CAPTURE
    assert CURSOR.external_mcp_injection is McpInjection.NONE
    assert CURSOR.list_models is not None and CURSOR.list_models.args == ("models",)


@pytest.mark.rule("ARGV-CURSOR-002")
@pytest.mark.parametrize(
    "stdout",
    [
        "No models available for this account.",
        "no models available\n",
        "",
        "   \n\n",
        "Available models\n",
        "# nothing here\n",
        "!!! bad line\n",
    ],
)
def test_cursor_models_none(stdout: str) -> None:
    assert cursor_agent.parse_cursor_models(stdout) is None


@pytest.mark.rule("ARGV-CURSOR-002")
def test_cursor_models_lines() -> None:
    stdout = "Available models\n\nauto - Auto\ngpt-5\n  sonnet-4 - Claude 4 Sonnet  \ngpt-5\n"
    assert cursor_agent.parse_cursor_models(stdout) == [
        DEFAULT_MODEL_OPTION,
        ModelOption("auto", "Auto"),
        ModelOption("gpt-5", "gpt-5"),
        ModelOption("sonnet-4", "Claude 4 Sonnet"),
    ]


# --- opencode -----------------------------------------------------------------------


@pytest.mark.rule("ARGV-OPENCODE-001", "ARGV-CAPS-001")
@pytest.mark.parametrize(
    ("caps", "expected"),
    [
        ({}, []),
        ({"skipPermissions": False, "autoApprove": False}, []),
        ({"skipPermissions": True}, ["--dangerously-skip-permissions"]),
        ({"skipPermissions": True, "autoApprove": True}, ["--dangerously-skip-permissions"]),
        ({"skipPermissions": False, "autoApprove": True}, ["--auto"]),
        ({"autoApprove": True}, ["--auto"]),
    ],
)
def test_opencode_family_permission_bypass(caps: dict[str, bool], expected: list[str]) -> None:
    assert argv(OPENCODE, caps=caps) == [*RUN_JSON, *expected]
    assert argv(BYOK, caps=caps) == [*RUN_JSON, *expected]


@pytest.mark.rule("ARGV-OPENCODE-002", "ARGV-MODEL-001")
def test_opencode_full_argv() -> None:
    ctx = RuntimeContext(cwd="/proj", resume_session_id="ses_abc")
    got = argv(OPENCODE, caps=ALL_OPENCODE_CAPS, model="anthropic/claude-sonnet-4-5", ctx=ctx)
    assert got == [
        *RUN_JSON,
        "--dangerously-skip-permissions",
        "--dir",
        "/proj",
        "-s",
        "ses_abc",
        "-m",
        "anthropic/claude-sonnet-4-5",
    ]
    assert argv(OPENCODE, model="default") == RUN_JSON


@pytest.mark.rule("ARGV-OPENCODE-002", "ARGV-CAPS-001")
def test_opencode_dir_only_when_probed() -> None:
    ctx = RuntimeContext(cwd="/proj")
    assert argv(OPENCODE, ctx=ctx, caps={}) == RUN_JSON
    assert argv(OPENCODE, ctx=ctx, caps={"workspaceDir": False}) == RUN_JSON
    assert argv(OPENCODE, ctx=ctx, caps={"workspaceDir": True}) == [*RUN_JSON, "--dir", "/proj"]
    # no cwd: nothing to pin.
    assert argv(OPENCODE, caps={"workspaceDir": True}) == RUN_JSON


@pytest.mark.rule("ARGV-OPENCODE-002")
def test_opencode_resume_and_dirs() -> None:
    assert argv(OPENCODE, ctx=RuntimeContext(resume_session_id="ses_1")) == [
        *RUN_JSON,
        "-s",
        "ses_1",
    ]
    # capture-style: a host-minted id never reaches argv; extra dirs are not opencode flags.
    assert argv(OPENCODE, dirs=["/x"], ctx=RuntimeContext(new_session_id="n")) == RUN_JSON


@pytest.mark.rule("ARGV-OPENCODE-002")
def test_opencode_def_fields() -> None:
    assert OPENCODE.bin == "opencode-cli"
    assert OPENCODE.fallback_bins == ("opencode",)
    assert OPENCODE.bin_env_key == "OPENCODE_BIN"
    assert OPENCODE.stream_format == "json-event-stream"
    assert OPENCODE.event_parser == "opencode"
    assert OPENCODE.prompt_delivery is PromptDelivery.STDIN
    assert OPENCODE.help_args == ("run", "--help")
    assert OPENCODE.capability_flags["--dangerously-skip-permissions"] == "skipPermissions"
    assert OPENCODE.capability_flags["--auto"] == "autoApprove"
    assert OPENCODE.capability_flags["--dir"] == "workspaceDir"
    assert OPENCODE.resume_style is ResumeStyle.CAPTURE
    assert OPENCODE.external_mcp_injection is McpInjection.OPENCODE_ENV_CONTENT
    assert OPENCODE.list_models is not None
    assert OPENCODE.list_models.args == ("models", "--verbose")
    assert OPENCODE.list_models.timeout_ms == 15_000


VERBOSE = """anthropic/claude-sonnet-4-5
{
  "id": "claude-sonnet-4-5",
  "name": "Claude Sonnet 4.5",
  "limit": {
    "context": 200000,
    "output": 64000
  },
  "variants": {
    "high": {},
    "max": {}
  }
}
openai/gpt-5
{
  "id": "gpt-5",
  "note": "a/b is not an id inside metadata"
}
anthropic/claude-sonnet-4-5
"""


@pytest.mark.rule("ARGV-OPENCODE-003")
def test_opencode_models_verbose() -> None:
    assert opencode.parse_opencode_models(VERBOSE) == [
        DEFAULT_MODEL_OPTION,
        ModelOption("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
        ModelOption("openai/gpt-5", "openai/gpt-5"),
    ]


@pytest.mark.rule("ARGV-OPENCODE-003")
def test_opencode_models_plain_and_none() -> None:
    plain = "openai/gpt-5\n\ngoogle/gemini-2.5-pro\r\nnot-a-provider-id\n"
    assert [m.id for m in opencode.parse_opencode_models(plain) or []] == [
        "default",
        "openai/gpt-5",
        "google/gemini-2.5-pro",
    ]
    assert opencode.parse_opencode_models("") is None
    assert opencode.parse_opencode_models("Error: unknown option --verbose") is None
    # a metadata block that never closes does not swallow the ids after it.
    broken = 'openai/gpt-5\n{\n  "x": \nopenai/o3\n'
    assert [m.id for m in opencode.parse_opencode_models(broken) or []] == [
        "default",
        "openai/gpt-5",
        "openai/o3",
    ]


@pytest.mark.rule("ARGV-OPENCODE-003")
@given(st.text(max_size=300))
def test_opencode_models_never_raise(stdout: str) -> None:
    got = opencode.parse_opencode_models(stdout)
    assert got is None or (got[0] == DEFAULT_MODEL_OPTION and len(got) > 1)


# --- byok-opencode ---------------------------------------------------------------------


@pytest.mark.rule("ARGV-BYOK-001")
def test_byok_argv() -> None:
    caps = {"skipPermissions": True, "workspaceDir": True}
    ctx = RuntimeContext(cwd="/proj", resume_session_id="ses_1")
    assert argv(BYOK, caps=caps, model="anthropic/claude-sonnet-4-5", ctx=ctx) == [
        *RUN_JSON,
        "--dangerously-skip-permissions",
        "-m",
        "anthropic/claude-sonnet-4-5",
    ]
    assert argv(BYOK, model="default") == RUN_JSON


@pytest.mark.rule("ARGV-BYOK-001")
def test_byok_def_fields() -> None:
    assert BYOK.bin == "opencode2"
    assert BYOK.fallback_bins == ("opencode-cli", "opencode")
    assert BYOK.bin_env_key == "OPENCODE_BIN"
    assert (BYOK.stream_format, BYOK.event_parser) == ("json-event-stream", "opencode")
    assert BYOK.external_mcp_injection is McpInjection.OPENCODE_ENV_CONTENT
    assert BYOK.help_args == OPENCODE.help_args
    assert BYOK.capability_flags == OPENCODE.capability_flags
    assert BYOK.prompt_delivery is PromptDelivery.STDIN


# --- mimo --------------------------------------------------------------------------------


@pytest.mark.rule("ARGV-MIMO-001")
def test_mimo_argv() -> None:
    assert argv(MIMO) == RUN_JSON
    assert argv(MIMO, model="default") == RUN_JSON
    assert argv(MIMO, model="xiaomi/mimo-v2.5-pro") == [*RUN_JSON, "-m", "xiaomi/mimo-v2.5-pro"]
    # no OpenCode capability probe: probe-shaped capabilities change nothing.
    assert argv(MIMO, caps=ALL_OPENCODE_CAPS, ctx=RuntimeContext(cwd="/p")) == RUN_JSON


@pytest.mark.rule("ARGV-MIMO-001")
def test_mimo_def_fields_follow_the_seeds() -> None:
    # seed 000 §3 / seed 002 §3.4: json-event-stream; seed 002 §8.1: mimo-env-content.
    assert MIMO.stream_format == "json-event-stream"
    assert MIMO.event_parser == "opencode"
    assert MIMO.external_mcp_injection is McpInjection.MIMO_ENV_CONTENT
    assert MIMO.bin == "mimo"
    assert MIMO.bin_env_key == "MIMO_BIN"
    assert MIMO.prompt_delivery is PromptDelivery.STDIN
