"""Argv and field tests for the ACP, pi-rpc, dsh-profile and plain runtime definitions.

Rules: DEF-MODEL-001, DEF-PURE-002, DEF-HEADLESS-001, DEF-PROMPT-001, DEF-ACP-ARGV-001,
DEF-ACP-TRANSPORT-001, DEF-ACP-RESUME-001, DEF-ACP-MCP-001, DEF-ACP-FIELDS-001,
DEF-AMR-MODELS-001, DEF-KILO-VERSION-001, DEF-PI-ARGV-001, DEF-PI-MODELS-001,
DEF-PI-FIELDS-001, DEF-PRIME-ARGV-001, DEF-PRIME-MODELS-001, DEF-DSH-ARGV-001,
DEF-DSH-VERSION-001, DEF-DSH-PROBE-001, DEF-DSH-MODELS-001, DEF-AIDER-ARGV-001,
DEF-ANTIGRAVITY-ARGV-001, DEF-ATOMCODE-ARGV-001, DEF-DEEPSEEK-ARGV-001, DEF-GROK-ARGV-001,
DEF-QWEN-ARGV-001, DEF-FILE-001.

Expected argv are written from the seeds and ref §8.3, never from our own output.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.defs import (
    aider,
    amr,
    antigravity,
    atomcode,
    deepseek,
    deepseek_harness,
    devin,
    grok_build,
    hermes,
    kilo,
    kimi,
    kiro,
    pi,
    prime_agent,
    qwen,
    reasonix,
    trae_cli,
    vibe,
)
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AcpEnvFormat,
    AgentDef,
    BuildOptions,
    McpInjection,
    ModelOption,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
)
from harness.errors import AgentDefError

PROMPT = "PROMPT-7f3a: make a landing page"
PROMPT_FILE = "/tmp/od-run/prompt.md"

ACP_DEFS: dict[str, AgentDef] = {
    d.id: d
    for d in (
        amr.AGENT_DEF,
        devin.AGENT_DEF,
        hermes.AGENT_DEF,
        kimi.AGENT_DEF,
        kiro.AGENT_DEF,
        kilo.AGENT_DEF,
        reasonix.AGENT_DEF,
        trae_cli.AGENT_DEF,
        vibe.AGENT_DEF,
    )
}
PLAIN_DEFS: dict[str, AgentDef] = {
    d.id: d
    for d in (
        aider.AGENT_DEF,
        antigravity.AGENT_DEF,
        atomcode.AGENT_DEF,
        deepseek.AGENT_DEF,
        grok_build.AGENT_DEF,
        qwen.AGENT_DEF,
    )
}
OTHER_DEFS: dict[str, AgentDef] = {
    d.id: d for d in (pi.AGENT_DEF, prime_agent.AGENT_DEF, deepseek_harness.AGENT_DEF)
}
ALL_DEFS: dict[str, AgentDef] = {**ACP_DEFS, **OTHER_DEFS, **PLAIN_DEFS}


def ctx(**kwargs: Any) -> RuntimeContext:
    """A first-turn Linux context with a prompt file (what the engine gives FILE defs)."""
    kwargs.setdefault("prompt_file_path", PROMPT_FILE)
    kwargs.setdefault("cwd", "/home/u/project")
    return RuntimeContext(**kwargs)


def argv(
    defn: AgentDef,
    *,
    prompt: str = PROMPT,
    dirs: Sequence[str] = (),
    images: Sequence[str] = (),
    options: BuildOptions | None = None,
    context: RuntimeContext | None = None,
) -> list[str]:
    return defn.build_args(
        prompt, list(images), list(dirs), options or BuildOptions(), context or ctx()
    )


def contains_run(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return any(list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1))


# --- every def of this area -----------------------------------------------------------

#: Defs whose argv can carry a model flag, and the flag pair a chosen model gives.
MODEL_FLAG = {
    "aider": ["--model", "m-1"],
    "atomcode": ["--model", "m-1"],
    "deepseek": ["--model", "m-1"],
    "grok-build": ["--model", "m-1"],
    "qwen": ["--model", "m-1"],
    "pi": ["--model", "m-1"],
    "prime-agent": ["--model", "m-1"],
}


@pytest.mark.rule("DEF-MODEL-001")
@pytest.mark.parametrize("agent_id", sorted(ALL_DEFS))
def test_model_none_or_default_omits_the_model_flag(agent_id: str) -> None:
    defn = ALL_DEFS[agent_id]
    for model in (None, "default"):
        args = argv(defn, options=BuildOptions(model=model))
        assert "--model" not in args and "--provider" not in args
        assert "default" not in args
    assert defn.fallback_models[0] == DEFAULT_MODEL_OPTION
    chosen = argv(defn, options=BuildOptions(model="m-1"))
    if agent_id in MODEL_FLAG:
        assert contains_run(chosen, MODEL_FLAG[agent_id])
    else:
        # ACP / dsh choose the model inside the protocol, never in argv.
        assert "m-1" not in chosen


class _NoEnv(Mapping[str, str]):
    """Stands in for os.environ while build_args runs; any read fails the test."""

    def __getitem__(self, key: str) -> str:
        raise AssertionError(f"build_args read os.environ[{key!r}]")

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("build_args iterated os.environ")

    def __len__(self) -> int:
        raise AssertionError("build_args measured os.environ")


@pytest.mark.rule("DEF-PURE-002")
@pytest.mark.parametrize("agent_id", sorted(ALL_DEFS))
def test_build_args_is_pure(agent_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    defn = ALL_DEFS[agent_id]
    dirs = ["/opt/skills/a", "rel/dir", "/opt/ds"]
    images = ["/tmp/a.png"]
    options = BuildOptions(model="p/m", reasoning="high", capabilities={"x": True})
    context = ctx(
        resume_session_id="s-1",
        skill_dirs=("/opt/skills/a",),
        agent_log_file_path="/tmp/agy.log",
        env={"OD_X": "1"},
    )
    before = (copy.deepcopy(dirs), copy.deepcopy(images), options, context)
    monkeypatch.setattr(os, "environ", _NoEnv())
    try:
        first = defn.build_args(PROMPT, images, dirs, options, context)
        second = defn.build_args(PROMPT, images, dirs, options, context)
    finally:
        monkeypatch.undo()  # restore before pytest itself touches os.environ
    assert first == second
    assert first is not second
    assert (dirs, images, options, context) == before


#: seed 000 §10 (and each def's own section): the non-interactive permission flags.
HEADLESS = {
    "devin": ("--permission-mode", "dangerous", "--respect-workspace-trust", "false"),
    "trae-cli": ("--yolo",),
    "hermes": ("--accept-hooks",),
    "aider": ("--yes-always",),
    "atomcode": ("-y",),
    "deepseek": ("--auto",),
    "qwen": ("--yolo",),
    "grok-build": ("--always-approve",),
}


@pytest.mark.rule("DEF-HEADLESS-001")
@pytest.mark.parametrize("agent_id", sorted(ALL_DEFS))
def test_headless_flags_are_declared_and_passed(agent_id: str) -> None:
    defn = ALL_DEFS[agent_id]
    assert defn.headless_flags == HEADLESS.get(agent_id, ())
    if defn.headless_flags:
        assert contains_run(argv(defn), defn.headless_flags)


@pytest.mark.rule("DEF-PROMPT-001")
@pytest.mark.parametrize(
    "agent_id",
    sorted(i for i, d in ALL_DEFS.items() if d.prompt_delivery is not PromptDelivery.ARGV),
)
def test_non_argv_defs_never_put_the_prompt_in_argv(agent_id: str) -> None:
    args = argv(ALL_DEFS[agent_id], options=BuildOptions(model="m", reasoning="high"))
    assert all(PROMPT not in a for a in args)


# --- ACP ---------------------------------------------------------------------------------

#: ref §8.3 argv column; seed 000 §5.4 (devin) and §5.9 (trae-cli); seed 002 §4.3 (vibe).
ACP_ARGV = {
    "amr": ("vela", ["agent", "run", "--runtime", "opencode"]),
    "devin": (
        "devin",
        ["--permission-mode", "dangerous", "--respect-workspace-trust", "false", "acp"],
    ),
    "hermes": ("hermes", ["acp", "--accept-hooks"]),
    "kimi": ("kimi", ["acp"]),
    "kiro": ("kiro-cli", ["acp"]),
    "kilo": ("kilo", ["acp"]),
    "reasonix": ("reasonix", ["acp"]),
    "trae-cli": ("traecli", ["acp", "serve", "--yolo"]),
    "vibe": ("vibe-acp", []),
}


@pytest.mark.rule("DEF-ACP-ARGV-001")
@pytest.mark.parametrize("agent_id", sorted(ACP_ARGV))
def test_acp_fixed_argv(agent_id: str) -> None:
    defn = ACP_DEFS[agent_id]
    expected_bin, expected_args = ACP_ARGV[agent_id]
    assert defn.bin == expected_bin
    assert argv(defn) == expected_args
    # Model, reasoning, resume id, dirs and images travel inside the protocol.
    assert (
        argv(
            defn,
            dirs=["/opt/x"],
            images=["/tmp/i.png"],
            options=BuildOptions(model="m", reasoning="high"),
            context=ctx(resume_session_id="sess-1", skill_dirs=("/opt/s",), platform="win32"),
        )
        == expected_args
    )
    assert set(ACP_ARGV) == set(ACP_DEFS)


@pytest.mark.rule("DEF-ACP-ARGV-001")
def test_acp_alternate_binaries() -> None:
    assert ACP_DEFS["kilo"].fallback_bins == ("kilocode",)
    assert ACP_DEFS["reasonix"].fallback_bins == ("dsnix",)
    assert {i: d.bin_env_key for i, d in ACP_DEFS.items()} == {
        "amr": "VELA_BIN",
        "devin": "DEVIN_BIN",
        "hermes": "HERMES_BIN",
        "kimi": "KIMI_BIN",
        "kiro": "KIRO_BIN",
        "kilo": "KILO_BIN",
        "reasonix": "REASONIX_BIN",
        "trae-cli": "TRAE_CLI_BIN",
        "vibe": "VIBE_BIN",
    }


@pytest.mark.rule("DEF-ACP-TRANSPORT-001")
@pytest.mark.parametrize("agent_id", sorted(ACP_ARGV))
def test_acp_transport(agent_id: str) -> None:
    defn = ACP_DEFS[agent_id]
    assert defn.stream_format == "acp-json-rpc"
    assert defn.prompt_delivery is PromptDelivery.PROTOCOL
    assert defn.max_prompt_arg_bytes is None


@pytest.mark.rule("DEF-ACP-RESUME-001")
def test_acp_resume_styles() -> None:
    assert {i: d.resume_style for i, d in ACP_DEFS.items()} == {
        "amr": ResumeStyle.ACP_LOAD,
        "devin": ResumeStyle.ACP_LOAD,
        "kilo": ResumeStyle.ACP_LOAD,
        "kiro": ResumeStyle.ACP_LOAD,
        "trae-cli": ResumeStyle.ACP_LOAD,
        "vibe": ResumeStyle.ACP_LOAD,
        "hermes": ResumeStyle.NONE,
        "kimi": ResumeStyle.NONE,
        "reasonix": ResumeStyle.NONE,
    }


@pytest.mark.rule("DEF-ACP-MCP-001")
def test_acp_mcp_injection() -> None:
    injection = {i: d.external_mcp_injection for i, d in ACP_DEFS.items()}
    assert injection.pop("amr") is McpInjection.NONE
    assert set(injection.values()) == {McpInjection.ACP_MERGE}
    assert ACP_DEFS["reasonix"].acp.mcp_env_format is AcpEnvFormat.MAP
    assert ACP_DEFS["kilo"].acp.mcp_env_format is AcpEnvFormat.ARRAY
    assert ACP_DEFS["kimi"].acp.stdio_mcp_removed_in_version == "0.37.0"
    others = [d for i, d in ACP_DEFS.items() if i != "kimi"]
    assert all(d.acp.stdio_mcp_removed_in_version is None for d in others)
    assert ACP_DEFS["reasonix"].env == {}  # no value documented for REASONIX_ACP_SYSTEM_APPEND


@pytest.mark.rule("DEF-ACP-FIELDS-001")
def test_acp_per_runtime_fields() -> None:
    assert [i for i, d in ACP_DEFS.items() if d.acp.turn_end_completes_prompt] == ["kiro"]
    assert ACP_DEFS["trae-cli"].version_probe_timeout_ms == 10_000
    assert ACP_DEFS["amr"].inactivity_timeout_ms == 30 * 60 * 1000
    assert ACP_DEFS["amr"].default_model_env_var == "VELA_DEFAULT_MODEL"
    assert sorted(i for i, d in ACP_DEFS.items() if not d.supports_custom_model) == ["amr", "kilo"]
    assert ACP_DEFS["amr"].list_models is not None
    assert ACP_DEFS["amr"].list_models.args == ("model", "list", "--format", "json")
    assert ACP_DEFS["amr"].list_models.timeout_ms == 10_000


@pytest.mark.rule("DEF-AMR-MODELS-001")
def test_amr_model_list_parse() -> None:
    stdout = json.dumps(
        {"source": "remote", "data": [{"id": "deepseek-v3.2"}, {"id": " glm-5.1 "}, {"id": ""}]}
    )
    parsed = amr.parse_vela_model_list(stdout)
    assert parsed == [
        DEFAULT_MODEL_OPTION,
        ModelOption("deepseek-v3.2", "deepseek-v3.2"),
        ModelOption("glm-5.1", "glm-5.1"),
    ]
    assert (
        amr.parse_vela_model_list(json.dumps({"source": "preset", "data": [{"id": "x"}]})) is None
    )
    assert amr.parse_vela_model_list(json.dumps({"source": "remote", "data": []})) is None
    assert amr.parse_vela_model_list("not json") is None
    assert amr.parse_vela_model_list(json.dumps({"source": "remote", "data": {}})) is None


@pytest.mark.rule("DEF-KILO-VERSION-001")
def test_kilo_version_policy() -> None:
    policy = ACP_DEFS["kilo"].version_policy
    assert policy is not None and policy.parse is not None and policy.require_version
    assert policy.supported_version_pattern is not None
    assert policy.parse("kilo 7.4.23") == "7.4.23"
    assert policy.parse("v8.0.1") == "8.0.1"
    assert policy.parse("unknown") is None
    pattern = re.compile(policy.supported_version_pattern)
    for ok in ("7.4.23", "7.4.30", "7.5.0", "7.10.2", "8.0.0", "12.3.4", "7.4.23+build.5"):
        assert pattern.match(ok), ok
    for bad in ("7.4.22", "7.3.99", "6.9.9", "7.4.23-beta.1"):
        assert not pattern.match(bad), bad


# --- pi / prime-agent -------------------------------------------------------------------

PI = pi.AGENT_DEF
PRIME = prime_agent.AGENT_DEF


#: seed 000 §5.10: pi keeps its session files where the run snapshots them.
PI_SESSION_DIR = ["--session-dir", "/home/u/project/.pi/sessions"]


@pytest.mark.rule("DEF-PI-ARGV-001")
def test_pi_argv_cases() -> None:
    assert argv(PI, context=ctx(cwd=None)) == ["--mode", "rpc"]
    assert argv(PI) == ["--mode", "rpc", *PI_SESSION_DIR]
    assert argv(PI, options=BuildOptions(model="anthropic/claude-sonnet-4-5")) == [
        "--mode",
        "rpc",
        "--model",
        "anthropic/claude-sonnet-4-5",
        *PI_SESSION_DIR,
    ]
    assert argv(PI, options=BuildOptions(reasoning="xhigh")) == [
        "--mode",
        "rpc",
        "--thinking",
        "xhigh",
        *PI_SESSION_DIR,
    ]
    assert argv(PI, options=BuildOptions(reasoning="default")) == [
        "--mode",
        "rpc",
        *PI_SESSION_DIR,
    ]
    assert argv(
        PI,
        options=BuildOptions(model="openai/gpt-5", reasoning="low"),
        dirs=[
            "/opt/skills/deck",
            "/opt/design-systems/acme",
            "relative/dir",
            "/opt/design-systems/acme",
        ],
        context=ctx(skill_dirs=("/opt/skills/deck", "skills/relative")),
    ) == [
        "--mode",
        "rpc",
        "--model",
        "openai/gpt-5",
        "--thinking",
        "low",
        "--skill",
        "/opt/skills/deck",
        "--append-system-prompt",
        "/opt/design-systems/acme",
        *PI_SESSION_DIR,
    ]


@pytest.mark.rule("DEF-PI-ARGV-001")
def test_pi_judges_absolute_dirs_for_the_context_platform() -> None:
    dirs = ["C:\\skills\\ds", "/opt/ds"]
    assert argv(PI, dirs=dirs, context=ctx(platform="win32")) == [
        "--mode",
        "rpc",
        "--append-system-prompt",
        "C:\\skills\\ds",
        "--append-system-prompt",
        "/opt/ds",
        "--session-dir",
        "/home/u/project\\.pi\\sessions",
    ]
    assert argv(PI, dirs=dirs, context=ctx(platform="linux")) == [
        "--mode",
        "rpc",
        "--append-system-prompt",
        "/opt/ds",
        *PI_SESSION_DIR,
    ]


PI_TABLE = """\
provider   model                       context  max-out  thinking  images
anthropic  claude-sonnet-4-5           200K     64K      yes       yes
openai     gpt-5                       400K     128K     yes       yes
anthropic  claude-sonnet-4-5           200K     64K      yes       yes

\x1b[2mgoogle\x1b[0m     gemini-2.5-flash            1M       65K      yes       yes
"""


@pytest.mark.rule("DEF-PI-MODELS-001")
def test_pi_list_models_table() -> None:
    assert PI.list_models is not None
    assert PI.list_models.args == ("--list-models",)
    assert PI.list_models.timeout_ms == 60_000
    parsed = PI.list_models.parse(PI_TABLE)
    assert parsed is not None
    assert [m.id for m in parsed] == [
        "default",
        "anthropic/claude-sonnet-4-5",
        "openai/gpt-5",
        "google/gemini-2.5-flash",
    ]
    tab_separated = "provider\tmodel\tcontext\nxai\tgrok-4\t256K\n"
    assert [m.id for m in pi.parse_pi_model_table(tab_separated) or []] == ["default", "xai/grok-4"]
    assert pi.parse_pi_model_table("provider  model  context\n") is None
    assert pi.parse_pi_model_table("") is None
    # Text before the header (or without one) is not a table row.
    assert pi.parse_pi_model_table("error: no providers configured\n") is None
    assert [m.id for m in pi.parse_pi_model_table("warn: slow disk\n" + PI_TABLE) or []][1] == (
        "anthropic/claude-sonnet-4-5"
    )


@pytest.mark.rule("DEF-PI-MODELS-001")
def test_pi_list_models_header_only_or_noise_is_none() -> None:
    assert pi.parse_pi_model_table("provider model\n---------- ------\n") is None
    assert pi.parse_pi_model_table("\n\n   \n") is None


@pytest.mark.rule("DEF-PI-FIELDS-001")
def test_pi_fields() -> None:
    assert PI.stream_format == "pi-rpc"
    assert PI.prompt_delivery is PromptDelivery.PROTOCOL
    assert PI.resume_style is ResumeStyle.PI_SESSION
    assert PI.pi.session_dir == ".pi/sessions"
    assert PI.version_probe_timeout_ms == 15_000
    assert [o.id for o in PI.reasoning_options] == [
        "default",
        "off",
        "minimal",
        "low",
        "medium",
        "high",
        "xhigh",
    ]
    assert PI.external_mcp_injection is McpInjection.NONE
    assert PI.supports_image_paths


@pytest.mark.rule("DEF-PRIME-ARGV-001")
def test_prime_agent_argv_cases() -> None:
    bare = RuntimeContext()
    assert argv(PRIME, context=bare) == ["--mode", "rpc"]
    assert argv(
        PRIME,
        options=BuildOptions(model="openai/gpt-5", reasoning="high"),
        context=RuntimeContext(cwd="/p", resume_session_id="sess-9"),
    ) == [
        "--mode",
        "rpc",
        "--cwd",
        "/p",
        "--resume",
        "sess-9",
        "--provider",
        "openai",
        "--model",
        "gpt-5",
        "--thinking",
        "high",
    ]
    assert argv(PRIME, options=BuildOptions(model="sonnet"), context=bare) == [
        "--mode",
        "rpc",
        "--model",
        "sonnet",
    ]
    # A slash at either end does not make a provider/model pair.
    assert argv(PRIME, options=BuildOptions(model="/gpt-5"), context=bare)[-2:] == [
        "--model",
        "/gpt-5",
    ]
    assert argv(PRIME, options=BuildOptions(reasoning="default"), context=bare) == ["--mode", "rpc"]


@pytest.mark.rule("DEF-PRIME-MODELS-001")
def test_prime_agent_models_and_session_dir() -> None:
    assert PRIME.list_models is not None
    assert PRIME.list_models.args == ("model", "list")
    assert PRIME.list_models.timeout_ms == 15_000
    table = "PROVIDER  MODEL\n--------  -----\nopenai    gpt-5\nopenai    gpt-5\nxai  grok-4 x\n"
    parsed = PRIME.list_models.parse(table)
    assert [m.id for m in parsed or []] == ["default", "openai/gpt-5", "xai/grok-4"]
    assert prime_agent.parse_prime_model_list("provider model\n") is None
    assert PRIME.pi.session_dir == "~/.prime/agent/sessions"
    assert PRIME.resume_style is ResumeStyle.PI_SESSION
    assert PRIME.stream_format == "pi-rpc"


# --- deepseek-harness ------------------------------------------------------------------

DSH = deepseek_harness.AGENT_DEF


@pytest.mark.rule("DEF-DSH-ARGV-001")
def test_dsh_argv_and_transport() -> None:
    expected = ["--profile", "open-design", "--stdio"]
    assert argv(DSH) == expected
    assert (
        argv(
            DSH,
            options=BuildOptions(model="deepseek-official/deepseek-v4", reasoning="high"),
            context=ctx(resume_session_id="s-1"),
        )
        == expected
    )
    assert (DSH.id, DSH.bin, DSH.bin_env_key) == ("deepseek-harness", "dsh", "DSH_BIN")
    assert DSH.stream_format == "dsh-profile-jsonl"
    assert DSH.prompt_delivery is PromptDelivery.PROTOCOL
    assert DSH.resume_style is ResumeStyle.PROFILE_STDIO
    assert DSH.inactivity_timeout_ms == 30 * 60 * 1000
    assert DSH.supports_custom_model is False
    assert DSH.list_models is not None
    assert DSH.list_models.args == ("--profile", "open-design", "--models")


@pytest.mark.rule("DEF-DSH-VERSION-001")
def test_dsh_version_policy() -> None:
    policy = DSH.version_policy
    assert policy is not None and policy.parse is not None
    assert policy.require_version is True
    assert policy.supported_versions == ("0.1.0-rc.8", "0.1.1-rc.2", "0.1.2-rc.1", "0.2.1-rc.2")
    assert policy.parse("0.1.2-rc.1") == "0.1.2-rc.1"
    assert policy.parse("v0.1.0-rc.8") == "0.1.0-rc.8"
    assert policy.parse("dsh 0.1.1-rc.2") == "0.1.1-rc.2"
    assert policy.parse("  1.2.3+build.7  ") == "1.2.3+build.7"
    for bad in ("", "dsh", "unknown version", "0.1", "x0.1.2", "0.1.2x"):
        assert policy.parse(bad) is None, bad
    assert policy.supported_version_pattern is not None
    pattern = re.compile(policy.supported_version_pattern)
    for version in policy.supported_versions:
        assert pattern.match(version)
    assert pattern.match("0.1.4")
    assert not pattern.match("0.2.0")
    assert not pattern.match("0.2.1-rc.3")  # only the build tested live
    assert not pattern.match("0.1.0-rc.5")


def probe_frame(**overrides: Any) -> dict[str, Any]:
    frame: dict[str, Any] = {
        "v": 1,
        "type": "probe",
        "runtime": "open-design",
        "protocol_version": 1,
        "plugin_version": "0.1.0",
        "capabilities": {"session_resume": True, "session_cancel": True, "structured_events": True},
    }
    frame.update(overrides)
    return frame


@pytest.mark.rule("DEF-DSH-PROBE-001")
def test_dsh_probe_accepts_the_documented_frame() -> None:
    probe = DSH.compatibility_probe
    assert probe is not None
    assert probe.args == ("--profile", "open-design", "--probe")
    assert probe.timeout_ms == 10_000
    assert probe.parse(json.dumps(probe_frame()) + "\n") == "0.1.0"
    assert probe.parse("\n" + json.dumps(probe_frame()) + "\r\n\n") == "0.1.0"
    assert probe.parse(json.dumps(probe_frame(compatibility_generation="g1:2"))) == "0.1.0"
    assert probe.parse(json.dumps(probe_frame(extra_field=[1, 2]))) == "0.1.0"


SECRET = "SECRETVALUE-91"


@pytest.mark.rule("DEF-DSH-PROBE-001")
@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"v": 2}, "'v'"),
        ({"v": True}, "'v'"),
        ({"v": SECRET}, "'v'"),
        ({"type": SECRET}, "'type'"),
        ({"type": "ready"}, "'type'"),
        ({"runtime": SECRET}, "'runtime'"),
        ({"protocol_version": 2}, "'protocol_version'"),
        ({"protocol_version": SECRET}, "'protocol_version'"),
        ({"plugin_version": ""}, "'plugin_version'"),
        ({"plugin_version": 7}, "'plugin_version'"),
        ({"compatibility_generation": SECRET + " bad"}, "'compatibility_generation'"),
        ({"capabilities": SECRET}, "'capabilities'"),
        (
            {
                "capabilities": {
                    "session_resume": False,
                    "session_cancel": True,
                    "structured_events": True,
                }
            },
            "'capabilities.session_resume'",
        ),
        (
            {"capabilities": {"session_resume": True, "session_cancel": SECRET}},
            "'capabilities.session_cancel'",
        ),
        (
            {"capabilities": {"session_resume": True, "session_cancel": True}},
            "'capabilities.structured_events'",
        ),
    ],
)
def test_dsh_probe_errors_name_the_field_not_the_value(
    overrides: dict[str, Any], field: str
) -> None:
    frame = probe_frame(**overrides)
    with pytest.raises(ValueError, match=re.escape(field.strip("'"))) as info:
        deepseek_harness.parse_probe_output(json.dumps(frame))
    assert SECRET not in str(info.value)


@pytest.mark.rule("DEF-DSH-PROBE-001")
def test_dsh_probe_missing_field_and_framing_errors() -> None:
    frame = probe_frame()
    del frame["plugin_version"]
    with pytest.raises(ValueError, match="plugin_version"):
        deepseek_harness.parse_probe_output(json.dumps(frame))
    line = json.dumps(probe_frame())
    with pytest.raises(ValueError, match="exactly one JSON line"):
        deepseek_harness.parse_probe_output(line + "\n" + line)
    with pytest.raises(ValueError, match="exactly one JSON line"):
        deepseek_harness.parse_probe_output("  \n")
    with pytest.raises(ValueError, match="not valid JSON") as info:
        deepseek_harness.parse_probe_output("{" + SECRET)
    assert SECRET not in str(info.value)
    with pytest.raises(ValueError, match=r"JSON object|probe frame") as info:
        deepseek_harness.parse_probe_output(json.dumps([SECRET]))
    assert SECRET not in str(info.value)


@settings(max_examples=200)
@given(st.text())
@pytest.mark.rule("DEF-DSH-PROBE-001")
def test_dsh_probe_parse_raises_only_value_error(text: str) -> None:
    try:
        version = deepseek_harness.parse_probe_output(text)
    except ValueError:
        return
    assert isinstance(version, str) and version.strip()


def models_frame(models: list[Any]) -> str:
    return json.dumps({"v": 1, "type": "models", "runtime": "open-design", "models": models})


@pytest.mark.rule("DEF-DSH-MODELS-001")
def test_dsh_models_catalog() -> None:
    entry = {
        "provider": "deepseek-official",
        "provider_name": "DeepSeek",
        "id": "deepseek-v4-pro",
        "name": "DeepSeek V4 Pro",
        "reasoning_options": [{"id": "high", "name": "High", "default": True}],
    }
    flash = {**entry, "id": "deepseek-v4-flash", "name": "DeepSeek V4 Flash"}
    del flash["reasoning_options"]
    parsed = deepseek_harness.parse_models_output(models_frame([entry, flash, entry]) + "\n")
    assert parsed == [
        DEFAULT_MODEL_OPTION,
        ModelOption("deepseek-official/deepseek-v4-pro", "DeepSeek V4 Pro · DeepSeek"),
        ModelOption("deepseek-official/deepseek-v4-flash", "DeepSeek V4 Flash · DeepSeek"),
    ]
    bad_effort = {**entry, "reasoning_options": [{"id": "high"}]}
    for bad in (
        models_frame([{**entry, "provider": ""}]),
        models_frame([bad_effort]),
        models_frame([]),
        models_frame(["x"]),
        json.dumps({"v": 1, "type": "probe", "runtime": "open-design", "models": [entry]}),
        models_frame([entry]) + "\n" + models_frame([entry]),
        "garbage",
    ):
        assert deepseek_harness.parse_models_output(bad) is None, bad


# --- plain ------------------------------------------------------------------------------

AIDER_FIXED = [
    "--yes-always",
    "--no-pretty",
    "--no-git",
    "--no-auto-commits",
    "--no-suggest-shell-commands",
    "--no-show-model-warnings",
]


@pytest.mark.rule("DEF-AIDER-ARGV-001")
def test_aider_argv() -> None:
    defn = PLAIN_DEFS["aider"]
    assert argv(defn) == [*AIDER_FIXED, "--message", PROMPT]
    assert argv(defn, options=BuildOptions(model="openai/gpt-5")) == [
        *AIDER_FIXED,
        "--model",
        "openai/gpt-5",
        "--message",
        PROMPT,
    ]
    assert defn.prompt_delivery is PromptDelivery.ARGV
    assert defn.max_prompt_arg_bytes == 30_000
    assert defn.stream_format == "plain"


@pytest.mark.rule("DEF-ANTIGRAVITY-ARGV-001")
def test_antigravity_argv() -> None:
    defn = PLAIN_DEFS["antigravity"]
    assert defn.bin == "agy"
    assert argv(defn) == ["-p", "-"]
    with_log = argv(defn, context=ctx(agent_log_file_path="/tmp/od/agy.log"))
    assert with_log == ["--log-file", "/tmp/od/agy.log", "-p", "-"]
    assert with_log.index("--log-file") < with_log.index("-p")  # seed 002 §4.4: order matters
    # No --model flag exists; the model is never selected through argv.
    assert argv(defn, options=BuildOptions(model="gemini-3-pro")) == ["-p", "-"]
    assert defn.supports_custom_model is False
    assert [m.id for m in defn.fallback_models] == ["default"]
    assert defn.prompt_delivery is PromptDelivery.STDIN


@pytest.mark.rule("DEF-ATOMCODE-ARGV-001")
def test_atomcode_argv() -> None:
    defn = PLAIN_DEFS["atomcode"]
    assert argv(defn) == ["--prompt-file", PROMPT_FILE, "-y"]
    assert argv(defn, options=BuildOptions(model="atom-1")) == [
        "--prompt-file",
        PROMPT_FILE,
        "-y",
        "--model",
        "atom-1",
    ]
    assert defn.prompt_delivery is PromptDelivery.FILE


@pytest.mark.rule("DEF-DEEPSEEK-ARGV-001")
def test_deepseek_argv() -> None:
    defn = PLAIN_DEFS["deepseek"]
    assert argv(defn) == ["exec", "--auto", PROMPT]
    assert argv(defn, options=BuildOptions(model="deepseek-v4-pro")) == [
        "exec",
        "--auto",
        "--model",
        "deepseek-v4-pro",
        PROMPT,
    ]
    # A prompt that looks like a flag is still the last positional.
    assert argv(defn, prompt="--help")[-1] == "--help"
    assert defn.fallback_bins == ("codewhale",)
    assert defn.max_prompt_arg_bytes == 30_000
    assert defn.prompt_too_large_hint is not None
    assert defn.prompt_too_large_hint.startswith(
        "Reduce the selected skills/design-system context or conversation length, or use DeepSeek"
    )
    assert [m.id for m in defn.fallback_models] == [
        "default",
        "deepseek-v4-pro",
        "deepseek-v4-flash",
    ]


@pytest.mark.rule("DEF-GROK-ARGV-001")
def test_grok_build_argv_and_models() -> None:
    defn = PLAIN_DEFS["grok-build"]
    assert defn.bin == "grok"
    assert argv(defn) == ["--prompt-file", PROMPT_FILE, "--always-approve"]
    assert argv(defn, options=BuildOptions(model="grok-4.3", reasoning="high")) == [
        "--prompt-file",
        PROMPT_FILE,
        "--always-approve",
        "--model",
        "grok-4.3",
        "--effort",
        "high",
    ]
    assert argv(defn, options=BuildOptions(reasoning="default")) == [
        "--prompt-file",
        PROMPT_FILE,
        "--always-approve",
    ]
    assert defn.prompt_delivery is PromptDelivery.FILE
    assert defn.list_models is not None and defn.list_models.args == ("models",)
    listing = "Default model: grok-build\nAvailable models:\ngrok-build\ngrok-4.3\n\ngrok-4.3\n"
    assert [m.id for m in defn.list_models.parse(listing) or []] == [
        "default",
        "grok-build",
        "grok-4.3",
    ]
    assert grok_build.parse_grok_models("Default model: grok-build\n") is None


@pytest.mark.rule("DEF-QWEN-ARGV-001")
def test_qwen_argv() -> None:
    defn = PLAIN_DEFS["qwen"]
    assert argv(defn) == ["--yolo"]
    assert argv(defn, options=BuildOptions(model="qwen3-coder")) == [
        "--yolo",
        "--model",
        "qwen3-coder",
    ]
    assert defn.prompt_delivery is PromptDelivery.STDIN


@pytest.mark.rule("DEF-FILE-001")
@pytest.mark.parametrize("agent_id", ["atomcode", "grok-build"])
def test_file_delivery_without_a_path_raises(agent_id: str) -> None:
    defn = PLAIN_DEFS[agent_id]
    for missing in (None, ""):
        with pytest.raises(AgentDefError) as info:
            argv(defn, context=RuntimeContext(prompt_file_path=missing))
        assert info.value.rule == "DEF-FILE-001"
        assert info.value.field == "RuntimeContext.prompt_file_path"
        assert info.value.agent_id == agent_id


@pytest.mark.rule("DEF-FILE-001")
def test_every_file_delivery_def_here_is_covered() -> None:
    file_defs = sorted(i for i, d in ALL_DEFS.items() if d.prompt_delivery is PromptDelivery.FILE)
    assert file_defs == ["atomcode", "grok-build"]


@settings(max_examples=100)
@given(st.text())
@pytest.mark.rule("DEF-PI-MODELS-001", "DEF-PRIME-MODELS-001", "DEF-DSH-MODELS-001")
def test_model_parsers_never_raise(text: str) -> None:
    for parse in (
        pi.parse_pi_model_table,
        prime_agent.parse_prime_model_list,
        deepseek_harness.parse_models_output,
        amr.parse_vela_model_list,
        grok_build.parse_grok_models,
    ):
        result = parse(text)
        assert result is None or (len(result) > 1 and result[0] == DEFAULT_MODEL_OPTION)
