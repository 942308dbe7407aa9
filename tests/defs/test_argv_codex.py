"""argv of the codex def, create vs resume, on every platform that matters.

Rules: ARGV-CODEX-001..007 (conformance/rules/argv.py). Includes the upstream
arg tests listed at the end of ref §8.3 (``tests/runtimes/agent-args.test.ts``),
re-expressed with explicit platform/env instead of process globals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.defs import codex
from harness.defs.shared import UnsupportedOptionError, clamp_codex_reasoning
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    BuildOptions,
    EnvStripRule,
    McpInjection,
    ModelOption,
    NodeWrapperNative,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
)

CODEX = codex.AGENT_DEF
needs_danger = codex.codex_needs_danger_full_access

CREATE_HEAD = ["exec", "--json", "--skip-git-repo-check"]
WORKSPACE_WRITE = [
    "--sandbox",
    "workspace-write",
    "-c",
    "sandbox_workspace_write.network_access=true",
]
DEFAULT_PERMISSIONS = ["-c", 'default_permissions=":workspace"']
RESUME_HEAD = ["exec", "resume", "--json", "--skip-git-repo-check"]
RESUME_WORKSPACE_WRITE = [
    "-c",
    'sandbox_mode="workspace-write"',
    "-c",
    "sandbox_workspace_write.network_access=true",
]


def argv(
    *,
    platform: str = "linux",
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    dirs: Sequence[str] = (),
    resume: str | None = None,
    model: str | None = None,
    reasoning: str | None = None,
    service_tier: str | None = None,
) -> list[str]:
    ctx = RuntimeContext(cwd=cwd, platform=platform, env=dict(env or {}), resume_session_id=resume)
    options = BuildOptions(model=model, reasoning=reasoning, service_tier=service_tier)
    return CODEX.build_args("prompt text", [], list(dirs), options, ctx)


# --- create turn --------------------------------------------------------------


@pytest.mark.rule("ARGV-CODEX-001", "ARGV-MODEL-001")
@pytest.mark.parametrize("platform", ["darwin", "linux"])
def test_create_minimal_is_workspace_write(platform: str) -> None:
    assert argv(platform=platform) == [*CREATE_HEAD, *WORKSPACE_WRITE, *DEFAULT_PERMISSIONS]
    assert argv(platform=platform, model="default") == argv(platform=platform)


@pytest.mark.rule("ARGV-CODEX-001")
def test_create_full_order() -> None:
    got = argv(
        platform="darwin",
        cwd="/tmp/od-project",
        dirs=["/skills", "/ds"],
        model="gpt-5.5",
        reasoning="high",
        service_tier="fast",
    )
    assert got == [
        *CREATE_HEAD,
        *WORKSPACE_WRITE,
        *DEFAULT_PERMISSIONS,
        "-C",
        "/tmp/od-project",
        "--add-dir",
        "/skills",
        "--add-dir",
        "/ds",
        "--model",
        "gpt-5.5",
        "-c",
        'model_reasoning_effort="high"',
        "-c",
        'service_tier="fast"',
    ]
    # seed 000 §5.3: the prompt is on stdin and a bare "-" is never passed.
    assert "-" not in got and "prompt text" not in got


@pytest.mark.rule("ARGV-CODEX-001")
def test_create_add_dir_skips_empty_entries() -> None:
    # upstream: ['/repo/skills', '', null, '/tmp/codex/generated_images', undefined]
    got = argv(dirs=["/repo/skills", "", "/tmp/codex/generated_images", ""])
    pairs = [a for i, a in enumerate(got) if a == "--add-dir" or got[i - 1] == "--add-dir"]
    assert pairs == ["--add-dir", "/repo/skills", "--add-dir", "/tmp/codex/generated_images"]


@pytest.mark.rule("ARGV-CODEX-001", "ARGV-CODEX-004")
def test_upstream_disable_plugins_first_eleven_args() -> None:
    # ref §8.3: darwin + OD_CODEX_DISABLE_PLUGINS=1, cwd /tmp/od-project -> first 11 args.
    got = argv(platform="darwin", env={"OD_CODEX_DISABLE_PLUGINS": "1"}, cwd="/tmp/od-project")
    assert got[:11] == [
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--sandbox",
        "workspace-write",
        "-c",
        "sandbox_workspace_write.network_access=true",
        "-c",
        'default_permissions=":workspace"',
        "--disable",
        "plugins",
    ]
    assert got[11:] == ["-C", "/tmp/od-project"]


@pytest.mark.rule("ARGV-CODEX-004")
@pytest.mark.parametrize("value", [None, "true", "0", "", " 1"])
def test_disable_plugins_only_for_exactly_one(value: str | None) -> None:
    env = {} if value is None else {"OD_CODEX_DISABLE_PLUGINS": value}
    assert "--disable" not in argv(platform="darwin", env=env)
    assert "--disable" not in argv(platform="darwin", env=env, resume="t-1")


@pytest.mark.rule("ARGV-CODEX-004", "ARGV-CODEX-002")
def test_disable_plugins_also_on_resume() -> None:
    got = argv(env={"OD_CODEX_DISABLE_PLUGINS": "1"}, resume="t-1")
    assert got[-3:] == ["--disable", "plugins", "t-1"]


# --- sandbox predicate and platforms --------------------------------------------


@pytest.mark.rule("ARGV-CODEX-003")
@pytest.mark.parametrize(
    ("platform", "env", "expected"),
    [
        ("darwin", {}, False),
        ("linux", {}, False),
        ("linux", {"WSL_DISTRO_NAME": "Ubuntu"}, True),
        ("linux", {"WSL_DISTRO_NAME": "   "}, False),
        ("linux", {"WSL_DISTRO_NAME": ""}, False),
        ("win32", {}, True),
        ("darwin", {"OD_CODEX_SANDBOX": "danger-full-access"}, True),
        ("linux", {"OD_CODEX_SANDBOX": " danger-full-access "}, True),
        ("linux", {"OD_CODEX_SANDBOX": "read-only"}, False),
        ("linux", {"OD_CODEX_SANDBOX": "workspace-write"}, False),
        # Windows env keys are case-insensitive.
        ("win32", {"od_codex_sandbox": "danger-full-access"}, True),
        # POSIX env keys are not.
        ("linux", {"od_codex_sandbox": "danger-full-access"}, False),
    ],
)
def test_danger_full_access_predicate(platform: str, env: dict[str, str], expected: bool) -> None:
    assert needs_danger(platform, env) is expected


@pytest.mark.rule("ARGV-CODEX-003")
@pytest.mark.parametrize(
    ("platform", "env"),
    [
        ("linux", {"WSL_DISTRO_NAME": "Ubuntu"}),
        ("win32", {}),
        ("darwin", {"OD_CODEX_SANDBOX": "danger-full-access"}),
    ],
)
def test_create_danger_full_access(platform: str, env: dict[str, str]) -> None:
    # ref §8.3: --sandbox danger-full-access, no workspace-write, no network override,
    # still default_permissions.
    got = argv(platform=platform, env=env, cwd="/w")
    assert got == [
        *CREATE_HEAD,
        "--sandbox",
        "danger-full-access",
        *DEFAULT_PERMISSIONS,
        "-C",
        "/w",
    ]
    assert "workspace-write" not in got
    assert "sandbox_workspace_write.network_access=true" not in got


@pytest.mark.rule("ARGV-CODEX-003", "ARGV-CODEX-002")
def test_resume_danger_full_access_uses_config_override() -> None:
    got = argv(platform="win32", resume="thread-9")
    assert got == [
        *RESUME_HEAD,
        "-c",
        'sandbox_mode="danger-full-access"',
        *DEFAULT_PERMISSIONS,
        "thread-9",
    ]


# --- resume turn -------------------------------------------------------------------


@pytest.mark.rule("ARGV-CODEX-002")
@pytest.mark.parametrize("platform", ["darwin", "linux"])
def test_resume_minimal(platform: str) -> None:
    assert argv(platform=platform, resume="th-1") == [
        *RESUME_HEAD,
        *RESUME_WORKSPACE_WRITE,
        *DEFAULT_PERMISSIONS,
        "th-1",
    ]


@pytest.mark.rule("ARGV-CODEX-002")
def test_resume_drops_create_only_flags_and_ends_with_thread_id() -> None:
    got = argv(
        cwd="/proj",
        dirs=["/a", "/b"],
        resume="019a-thread",
        model="gpt-5.4",
        reasoning="low",
        service_tier="fast",
    )
    assert got == [
        *RESUME_HEAD,
        *RESUME_WORKSPACE_WRITE,
        *DEFAULT_PERMISSIONS,
        "--model",
        "gpt-5.4",
        "-c",
        'model_reasoning_effort="low"',
        "-c",
        'service_tier="fast"',
        "019a-thread",
    ]
    for forbidden in ("-C", "--add-dir", "--sandbox", "/proj", "/a", "/b"):
        assert forbidden not in got
    assert got[-1] == "019a-thread"


@pytest.mark.rule("ARGV-CODEX-002")
def test_empty_resume_id_is_a_create_turn() -> None:
    assert argv(resume="")[:2] == ["exec", "--json"]


@pytest.mark.rule("ARGV-CODEX-002")
def test_resume_mirrors_create_sandbox_policy() -> None:
    # seed 002 §4.2: the resume turn passes the same effective policy as -c overrides.
    create = argv(platform="darwin")
    resume = argv(platform="darwin", resume="t")
    assert (
        'default_permissions=":workspace"' in create
        and 'default_permissions=":workspace"' in resume
    )
    assert "sandbox_workspace_write.network_access=true" in create
    assert "sandbox_workspace_write.network_access=true" in resume
    assert create[create.index("--sandbox") + 1] == "workspace-write"
    assert 'sandbox_mode="workspace-write"' in resume


# --- reasoning / service tier ----------------------------------------------------


@pytest.mark.rule("ARGV-CODEX-005")
def test_upstream_model_and_xhigh_reasoning() -> None:
    got = argv(model="gpt-5.5", reasoning="xhigh")
    assert got[got.index("--model") + 1] == "gpt-5.5"
    assert 'model_reasoning_effort="xhigh"' in got


@pytest.mark.rule("ARGV-CODEX-005")
def test_default_reasoning_and_tier_omitted() -> None:
    got = argv(reasoning="default", service_tier="default")
    assert not any(a.startswith(("model_reasoning_effort", "service_tier")) for a in got)


@pytest.mark.rule("ARGV-CODEX-005")
@pytest.mark.parametrize(
    ("model", "effort", "expected"),
    [
        ("gpt-5.1-codex-mini", "low", "medium"),
        ("gpt-5.1-codex-mini", "minimal", "medium"),
        ("gpt-5.1-codex-mini", "xhigh", "high"),
        ("gpt-5.1-codex-mini", "high", "high"),
        ("gpt-5.1", "xhigh", "high"),
        ("gpt-5.1", "minimal", "minimal"),
        ("gpt-5.5", "minimal", "low"),
        ("openai/gpt-5.2-codex", "minimal", "low"),
        (None, "minimal", "low"),
        ("default", "minimal", "low"),
        ("o3", "minimal", "minimal"),
        ("gpt-5.4", "none", "none"),
    ],
)
def test_reasoning_is_clamped_per_model_family(
    model: str | None, effort: str, expected: str
) -> None:
    assert clamp_codex_reasoning(model, effort) == expected
    assert f'model_reasoning_effort="{expected}"' in argv(model=model, reasoning=effort)


@pytest.mark.rule("ARGV-CODEX-005")
def test_unknown_reasoning_is_a_typed_error() -> None:
    with pytest.raises(UnsupportedOptionError) as err:
        argv(reasoning="ludicrous")
    assert err.value.rule == "ARGV-CODEX-005"


# --- models ------------------------------------------------------------------------


@pytest.mark.rule("ARGV-CODEX-006")
def test_upstream_debug_models_parse() -> None:
    stdout = (
        '{"models":[{"slug":"gpt-6-codex","display_name":"GPT-6 Codex","visibility":"list"},'
        '{"slug":"gpt-6-codex-mini","display_name":"GPT-6 Codex Mini","visibility":"list"},'
        '{"slug":"gpt-hidden-internal","display_name":"Hidden","visibility":"hidden"}]}'
    )
    assert CODEX.list_models is not None
    assert CODEX.list_models.args == ("debug", "models")
    assert CODEX.list_models.parse(stdout) == [
        ModelOption("default", "Default (CLI config)"),
        ModelOption("gpt-6-codex", "GPT-6 Codex"),
        ModelOption("gpt-6-codex-mini", "GPT-6 Codex Mini"),
    ]


@pytest.mark.rule("ARGV-CODEX-006")
@pytest.mark.parametrize(
    ("stdout", "expected_ids"),
    [
        ("not json", None),
        ("", None),
        ('{"models": []}', None),
        ('{"models": "x"}', None),
        ("42", None),
        ('{"models":[{"visibility":"hidden","slug":"a"}]}', None),
        ('[{"slug":"a"},{"id":"b"},{"slug":"a"},{"slug":"  "},7]', ["default", "a", "b"]),
        ('{"models":[{"slug":"default"},{"slug":"c","name":"C!"}]}', ["default", "c"]),
    ],
)
def test_debug_models_edge_cases(stdout: str, expected_ids: list[str] | None) -> None:
    got = codex.parse_codex_debug_models(stdout)
    assert (None if got is None else [m.id for m in got]) == expected_ids


@pytest.mark.rule("ARGV-CODEX-006")
@given(st.text(max_size=200))
def test_debug_models_parse_never_raises(stdout: str) -> None:
    got = codex.parse_codex_debug_models(stdout)
    assert got is None or got[0] == DEFAULT_MODEL_OPTION


# --- def-level fields ------------------------------------------------------------------


@pytest.mark.rule("ARGV-CODEX-007")
def test_codex_def_fields() -> None:
    assert CODEX.bin == "codex"
    assert CODEX.bin_env_key == "CODEX_BIN"
    assert CODEX.stream_format == "json-event-stream"
    assert CODEX.event_parser == "codex"
    assert CODEX.prompt_delivery is PromptDelivery.STDIN
    assert CODEX.resume_style is ResumeStyle.CAPTURE
    assert CODEX.external_mcp_injection is McpInjection.NONE
    assert CODEX.auth_probe is not None and CODEX.auth_probe.args == ("login", "status")
    assert CODEX.strip_env == (
        EnvStripRule(keys=("OPENAI_API_KEY", "CODEX_API_KEY"), unless_set=("OPENAI_BASE_URL",)),
    )
    assert CODEX.node_wrapper_native == NodeWrapperNative("@openai/codex-", "codex", "codex")
    assert CODEX.app_bundle_paths == (
        "/Applications/Codex.app/Contents/Resources/codex",
        "~/Applications/Codex.app/Contents/Resources/codex",
    )
    # ref §8.3 upstream test: fallback and reasoning ids.
    assert [m.id for m in CODEX.fallback_models] == [
        "default",
        "gpt-5.5",
        "gpt-5.4",
        "gpt-5.4-mini",
        "gpt-5.3-codex",
        "gpt-5.1",
        "gpt-5.1-codex-mini",
        "gpt-5-codex",
        "gpt-5",
        "o3",
        "o4-mini",
    ]
    assert [m.id for m in CODEX.reasoning_options] == [
        "default",
        "none",
        "minimal",
        "low",
        "medium",
        "high",
        "xhigh",
    ]
