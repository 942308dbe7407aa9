"""argv of the claude-stream-json defs: claude, codebuddy, amp.

Rules: ARGV-CLAUDE-001..006, ARGV-CODEBUDDY-001, ARGV-AMP-001 (conformance/rules/argv.py).
Expected argv lists are written from seed 000 §5.1 / §10, seed 002 §4.1 and ref §8.3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from harness.defs import amp, claude, codebuddy
from harness.defs.shared import UnsupportedOptionError
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    EnvStripRule,
    McpInjection,
    PromptDelivery,
    PromptInputFormat,
    ResumeStyle,
    RuntimeContext,
)

CLAUDE = claude.AGENT_DEF
CODEBUDDY = codebuddy.AGENT_DEF
AMP = amp.AGENT_DEF

CLAUDE_HEAD = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
BYPASS = ["--permission-mode", "bypassPermissions"]


def argv(
    defn: AgentDef,
    *,
    dirs: Sequence[str] = (),
    images: Sequence[str] = (),
    caps: Mapping[str, bool] | None = None,
    model: str | None = None,
    reasoning: str | None = None,
    permission_mode: str | None = None,
    ctx: RuntimeContext | None = None,
) -> list[str]:
    options = BuildOptions(
        model=model,
        reasoning=reasoning,
        permission_mode=permission_mode,
        capabilities=dict(caps or {}),
    )
    return defn.build_args("the prompt", list(images), list(dirs), options, ctx or RuntimeContext())


# --- claude ----------------------------------------------------------------


@pytest.mark.rule("ARGV-CLAUDE-001")
def test_claude_partial_messages_only_when_probed() -> None:
    found = argv(CLAUDE, caps={"partialMessages": True})
    assert found[: len(CLAUDE_HEAD) + 1] == [*CLAUDE_HEAD, "--include-partial-messages"]
    assert "--include-partial-messages" not in argv(CLAUDE, caps={"partialMessages": False})
    assert "--include-partial-messages" not in argv(CLAUDE, caps={})


@pytest.mark.rule("ARGV-CLAUDE-002", "ARGV-MODEL-001")
def test_claude_minimal_argv_exact() -> None:
    assert argv(CLAUDE) == [*CLAUDE_HEAD, *BYPASS]


@pytest.mark.rule("ARGV-CLAUDE-002", "ARGV-MODEL-001")
def test_claude_model_flag_and_default_omission() -> None:
    assert argv(CLAUDE, model="opus") == [*CLAUDE_HEAD, "--model", "opus", *BYPASS]
    assert argv(CLAUDE, model="default") == [*CLAUDE_HEAD, *BYPASS]
    assert argv(CLAUDE, model=None) == [*CLAUDE_HEAD, *BYPASS]


@pytest.mark.rule("ARGV-CLAUDE-002")
def test_claude_full_argv_order() -> None:
    ctx = RuntimeContext(cwd="/proj", resume_session_id="sess-1", new_session_id="new-1")
    caps = {"partialMessages": True, "effort": True, "addDir": True}
    got = argv(
        CLAUDE, dirs=["/skills", "/ds"], caps=caps, model="sonnet", reasoning="high", ctx=ctx
    )
    assert got == [
        *CLAUDE_HEAD,
        "--include-partial-messages",
        "--model",
        "sonnet",
        "--effort",
        "high",
        "--add-dir",
        "/skills",
        "/ds",
        "--resume",
        "sess-1",
        *BYPASS,
    ]
    # seed 000 §5.1: the process is spawned in the cwd; no --cwd flag exists.
    assert "--cwd" not in got and "/proj" not in got


@pytest.mark.rule("ARGV-CLAUDE-003", "ARGV-CAPS-001")
def test_claude_add_dir_default_on_unless_denied() -> None:
    expected_tail = ["--add-dir", "/a", "/b", *BYPASS]
    # probe failed ({}) -> still passed: old flag, default on (seed 002 §4.1).
    assert argv(CLAUDE, dirs=["/a", "/b"], caps={})[-5:] == expected_tail
    assert argv(CLAUDE, dirs=["/a", "/b"], caps={"addDir": True})[-5:] == expected_tail
    assert "--add-dir" not in argv(CLAUDE, dirs=["/a", "/b"], caps={"addDir": False})


@pytest.mark.rule("ARGV-CLAUDE-003")
def test_claude_add_dir_drops_empty_and_absent() -> None:
    assert argv(CLAUDE, dirs=["", "/a", ""]) == [*CLAUDE_HEAD, "--add-dir", "/a", *BYPASS]
    assert "--add-dir" not in argv(CLAUDE, dirs=[""])
    assert "--add-dir" not in argv(CLAUDE, dirs=[])


@pytest.mark.rule("ARGV-CLAUDE-004")
def test_claude_session_specify_style() -> None:
    resume = argv(CLAUDE, ctx=RuntimeContext(resume_session_id="r-1", new_session_id="n-1"))
    assert resume[-4:] == ["--resume", "r-1", *BYPASS]
    assert "--session-id" not in resume
    minted = argv(CLAUDE, ctx=RuntimeContext(new_session_id="n-1"))
    assert minted[-4:] == ["--session-id", "n-1", *BYPASS]
    assert "--resume" not in minted
    empty = argv(CLAUDE, ctx=RuntimeContext(resume_session_id="", new_session_id=""))
    assert "--resume" not in empty and "--session-id" not in empty


@pytest.mark.rule("ARGV-CLAUDE-005", "ARGV-CAPS-001")
def test_claude_effort_gated_by_probe() -> None:
    assert argv(CLAUDE, reasoning="max", caps={"effort": True})[-4:] == [
        "--effort",
        "max",
        *BYPASS,
    ]
    # probe failed -> safe baseline, no optional flag.
    assert "--effort" not in argv(CLAUDE, reasoning="max", caps={})
    # default reasoning never passes the flag.
    assert "--effort" not in argv(CLAUDE, reasoning="default", caps={"effort": True})


@pytest.mark.rule("ARGV-CLAUDE-005")
def test_claude_effort_errors_are_typed() -> None:
    with pytest.raises(UnsupportedOptionError) as missing:
        argv(CLAUDE, reasoning="high", caps={"effort": False})
    assert missing.value.rule == "ARGV-CLAUDE-005"
    assert missing.value.option == "reasoning"
    with pytest.raises(UnsupportedOptionError) as unknown:
        argv(CLAUDE, reasoning="turbo", caps={"effort": True})
    assert "turbo" in str(unknown.value)


@pytest.mark.rule("ARGV-CLAUDE-006")
def test_claude_def_fields() -> None:
    assert CLAUDE.bin == "claude"
    assert CLAUDE.fallback_bins == ("openclaude",)
    assert CLAUDE.bin_env_key == "CLAUDE_BIN"
    assert CLAUDE.stream_format == "claude-stream-json"
    assert CLAUDE.prompt_delivery is PromptDelivery.STDIN
    assert CLAUDE.prompt_input_format is PromptInputFormat.STREAM_JSON
    assert CLAUDE.resume_style is ResumeStyle.SPECIFY
    assert CLAUDE.external_mcp_injection is McpInjection.CLAUDE_MCP_JSON
    assert CLAUDE.auth_probe is not None and CLAUDE.auth_probe.args == ("auth", "status")
    assert CLAUDE.help_args == ("-p", "--help")
    assert CLAUDE.capability_flags == {
        "--include-partial-messages": "partialMessages",
        "--forward-subagent-text": "forwardSubagentText",
        "--agents": "customAgents",
        "--add-dir": "addDir",
        "--effort": "effort",
    }
    assert CLAUDE.strip_env == (
        EnvStripRule(keys=("ANTHROPIC_API_KEY",), unless_set=("ANTHROPIC_BASE_URL",)),
    )
    assert CLAUDE.headless_flags == ("--permission-mode", "bypassPermissions")
    assert CLAUDE.fallback_models[0] == DEFAULT_MODEL_OPTION
    assert [o.id for o in CLAUDE.reasoning_options] == [
        "default",
        "low",
        "medium",
        "high",
        "xhigh",
        "max",
    ]


# --- codebuddy ---------------------------------------------------------------


@pytest.mark.rule("ARGV-CODEBUDDY-001", "ARGV-CAPS-001")
def test_codebuddy_argv_cases() -> None:
    tail = ["--permission-mode", "bypassPermissions", "-y"]
    assert argv(CODEBUDDY) == [*CLAUDE_HEAD, *tail]
    full = argv(
        CODEBUDDY,
        dirs=["/a", "/b"],
        caps={"partialMessages": True, "addDir": True},
        model="hunyuan",
    )
    assert full == [
        *CLAUDE_HEAD,
        "--include-partial-messages",
        "--model",
        "hunyuan",
        "--add-dir",
        "/a",
        "/b",
        *tail,
    ]
    # probe failed: partial messages off, --add-dir still on.
    assert argv(CODEBUDDY, dirs=["/a"], caps={}) == [*CLAUDE_HEAD, "--add-dir", "/a", *tail]
    assert "--add-dir" not in argv(CODEBUDDY, dirs=["/a"], caps={"addDir": False})
    assert "--model" not in argv(CODEBUDDY, model="default")
    # codebuddy has no native resume: session ids never reach argv.
    ctx = RuntimeContext(resume_session_id="r", new_session_id="n")
    assert argv(CODEBUDDY, ctx=ctx) == [*CLAUDE_HEAD, *tail]


@pytest.mark.rule("ARGV-CODEBUDDY-001")
def test_codebuddy_def_fields() -> None:
    assert CODEBUDDY.bin_env_key == "CODEBUDDY_BIN"
    assert CODEBUDDY.stream_format == "claude-stream-json"
    assert CODEBUDDY.prompt_input_format is PromptInputFormat.STREAM_JSON
    assert CODEBUDDY.help_args == ("-p", "--help")
    assert set(CODEBUDDY.capability_flags.values()) == {"partialMessages", "addDir"}
    assert CODEBUDDY.external_mcp_injection is McpInjection.CLAUDE_MCP_JSON
    assert CODEBUDDY.resume_style is ResumeStyle.NONE


# --- amp -----------------------------------------------------------------------


@pytest.mark.rule("ARGV-AMP-001", "ARGV-MODEL-001")
def test_amp_argv_cases() -> None:
    assert argv(AMP) == ["-x", "--stream-json", "--dangerously-allow-all"]
    assert argv(AMP, model="default") == ["-x", "--stream-json", "--dangerously-allow-all"]
    for mode in ("smart", "deep", "rush"):
        assert argv(AMP, model=mode) == [
            "-x",
            "--stream-json",
            "--dangerously-allow-all",
            "--mode",
            mode,
        ]
    # not an Amp mode: never passed as a bogus --mode (supports_custom_model False).
    assert "--mode" not in argv(AMP, model="gpt-5")


@pytest.mark.rule("ARGV-AMP-001")
def test_amp_restricted_permission_mode_drops_allow_all() -> None:
    assert argv(AMP, permission_mode="restricted") == ["-x", "--stream-json"]
    assert argv(AMP, permission_mode="restricted", model="rush") == [
        "-x",
        "--stream-json",
        "--mode",
        "rush",
    ]
    assert "--dangerously-allow-all" in argv(AMP, permission_mode="default")


@pytest.mark.rule("ARGV-AMP-001")
def test_amp_def_fields() -> None:
    assert AMP.stream_format == "claude-stream-json"
    assert AMP.prompt_delivery is PromptDelivery.STDIN
    # plain text on stdin, closed after the prompt (not the claude stream-json input).
    assert AMP.prompt_input_format is PromptInputFormat.TEXT
    assert AMP.supports_custom_model is False
    assert [m.id for m in AMP.fallback_models] == ["default", "smart", "deep", "rush"]
    assert AMP.bin_env_key is None
    # dirs, images and session ids are not amp argv.
    ctx = RuntimeContext(cwd="/p", resume_session_id="r")
    assert argv(AMP, dirs=["/a"], images=["/i.png"], ctx=ctx) == [
        "-x",
        "--stream-json",
        "--dangerously-allow-all",
    ]
