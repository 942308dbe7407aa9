"""argv of copilot, qoder and gemini, plus the cross-def rules of part A.

Rules: ARGV-COPILOT-001, ARGV-QODER-001, ARGV-GEMINI-001, ARGV-MODELS-001 and, over
every def of part A, ARGV-PURE-001, ARGV-HEADLESS-001, ARGV-STDIN-001, ARGV-CAPS-001,
ARGV-MODEL-001.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Iterator, Mapping, MutableMapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.defs import (
    amp,
    byok_opencode,
    claude,
    codebuddy,
    codex,
    copilot,
    cursor_agent,
    gemini,
    mimo,
    opencode,
    qoder,
)
from harness.defs.shared import UnsupportedOptionError, parse_line_separated_models
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    McpInjection,
    ModelOption,
    PromptDelivery,
    RuntimeContext,
)

COPILOT = copilot.AGENT_DEF
QODER = qoder.AGENT_DEF
GEMINI = gemini.AGENT_DEF

PART_A: tuple[AgentDef, ...] = (
    claude.AGENT_DEF,
    codebuddy.AGENT_DEF,
    amp.AGENT_DEF,
    codex.AGENT_DEF,
    cursor_agent.AGENT_DEF,
    opencode.AGENT_DEF,
    byok_opencode.AGENT_DEF,
    mimo.AGENT_DEF,
    copilot.AGENT_DEF,
    qoder.AGENT_DEF,
    gemini.AGENT_DEF,
)
BY_ID = {d.id: d for d in PART_A}

#: Capabilities whose flag stays on when the probe failed (seed 002 §4.1: `!== false`).
DEFAULT_ON: Mapping[str, frozenset[str]] = {
    "claude": frozenset({"addDir"}),
    "codebuddy": frozenset({"addDir"}),
}


def argv(
    defn: AgentDef,
    *,
    dirs: Sequence[str] = (),
    images: Sequence[str] = (),
    model: str | None = None,
    ctx: RuntimeContext | None = None,
    caps: Mapping[str, bool] | None = None,
) -> list[str]:
    options = BuildOptions(model=model, capabilities=dict(caps or {}))
    return defn.build_args("the prompt", list(images), list(dirs), options, ctx or RuntimeContext())


# --- copilot --------------------------------------------------------------------


@pytest.mark.rule("ARGV-COPILOT-001", "ARGV-MODEL-001")
def test_copilot_argv_cases() -> None:
    head = ["--allow-all-tools", "--output-format", "json"]
    assert argv(COPILOT) == head
    assert argv(COPILOT, model="default") == head
    assert argv(COPILOT, model="gpt-5.2") == [*head, "--model", "gpt-5.2"]
    got = argv(COPILOT, model="claude-sonnet-4.6", dirs=["/skills", "", "/ds"])
    assert got == [
        *head,
        "--model",
        "claude-sonnet-4.6",
        "--add-dir",
        "/skills",
        "--add-dir",
        "/ds",
    ]
    # seed 000 §5.7: no -p at all (not even "-p -"); the prompt goes to stdin.
    assert "-p" not in got and "-" not in got and "the prompt" not in got


@pytest.mark.rule("ARGV-COPILOT-001")
def test_copilot_def_fields() -> None:
    assert COPILOT.stream_format == "copilot-stream-json"
    assert COPILOT.prompt_delivery is PromptDelivery.STDIN
    assert COPILOT.auth_probe is None
    assert COPILOT.inactivity_timeout_ms == 30 * 60 * 1000
    assert [m.id for m in COPILOT.fallback_models] == ["default", "claude-sonnet-4.6", "gpt-5.2"]
    assert COPILOT.bin_env_key == "COPILOT_BIN"
    assert COPILOT.external_mcp_injection is McpInjection.NONE


# --- qoder -------------------------------------------------------------------------


@pytest.mark.rule("ARGV-QODER-001", "ARGV-MODEL-001")
def test_qoder_argv_cases() -> None:
    head = ["-p", "--output-format", "stream-json", "--yolo"]
    assert argv(QODER) == head
    assert argv(QODER, model="default") == head
    got = argv(
        QODER,
        model="performance",
        dirs=["/abs/skills", "relative/dir", "", "./also-relative", "/abs/ds"],
        images=["/tmp/a.png", "/tmp/b.jpg"],
        ctx=RuntimeContext(cwd="/proj"),
    )
    assert got == [
        *head,
        "-w",
        "/proj",
        "--model",
        "performance",
        "--add-dir",
        "/abs/skills",
        "--add-dir",
        "/abs/ds",
        "--attachment",
        "/tmp/a.png",
        "--attachment",
        "/tmp/b.jpg",
    ]


@pytest.mark.rule("ARGV-QODER-001")
def test_qoder_absolute_dirs_follow_the_target_platform() -> None:
    win = RuntimeContext(platform="win32")
    got = argv(QODER, dirs=["C:\\skills", "\\\\srv\\share\\ds", "rel\\dir"], ctx=win)
    assert got[4:] == ["--add-dir", "C:\\skills", "--add-dir", "\\\\srv\\share\\ds"]
    # a drive path is not absolute on POSIX.
    assert "--add-dir" not in argv(QODER, dirs=["C:\\skills"], ctx=RuntimeContext())


@pytest.mark.rule("ARGV-QODER-001")
def test_qoder_def_fields() -> None:
    assert QODER.bin == "qodercli"
    assert QODER.bin_env_key == "QODER_BIN"
    assert QODER.stream_format == "qoder-stream-json"
    assert QODER.supports_image_paths is True
    assert QODER.prompt_delivery is PromptDelivery.STDIN
    assert [m.id for m in QODER.fallback_models] == [
        "default",
        "lite",
        "efficient",
        "auto",
        "performance",
        "ultimate",
    ]
    assert QODER.external_mcp_injection is McpInjection.NONE


# --- gemini ------------------------------------------------------------------------


@pytest.mark.rule("ARGV-GEMINI-001", "ARGV-MODEL-001")
def test_gemini_argv_and_env() -> None:
    head = ["--output-format", "stream-json", "--yolo"]
    assert argv(GEMINI) == head
    assert argv(GEMINI, model="default") == head
    assert argv(GEMINI, model="gemini-2.5-pro") == [*head, "--model", "gemini-2.5-pro"]
    assert dict(GEMINI.env) == {"GEMINI_CLI_TRUST_WORKSPACE": "true"}
    assert (GEMINI.stream_format, GEMINI.event_parser) == ("json-event-stream", "gemini")
    assert GEMINI.prompt_delivery is PromptDelivery.STDIN
    assert GEMINI.bin_env_key == "GEMINI_BIN"


# --- shared model parser -------------------------------------------------------------


@pytest.mark.rule("ARGV-MODELS-001")
def test_line_separated_models() -> None:
    text = "  model-a  \n\n# a comment\nmodel-b\r\nmodel-a\ndefault\n"
    assert parse_line_separated_models(text) == [
        DEFAULT_MODEL_OPTION,
        ModelOption("model-a", "model-a"),
        ModelOption("model-b", "model-b"),
    ]
    assert parse_line_separated_models("") is None
    assert parse_line_separated_models("\n  \n# only comments\n") is None
    assert parse_line_separated_models("default\n") is None


@pytest.mark.rule("ARGV-MODELS-001")
@given(st.lists(st.text(alphabet="ab-#/ \t", max_size=8), max_size=12))
def test_line_separated_models_properties(lines: list[str]) -> None:
    got = parse_line_separated_models("\n".join(lines))
    expected: list[str] = []
    for line in (raw.strip() for raw in lines):
        if line and not line.startswith("#") and line != "default" and line not in expected:
            expected.append(line)
    if not expected:
        assert got is None
    else:
        assert got is not None and got[0] == DEFAULT_MODEL_OPTION
        assert [m.id for m in got[1:]] == expected


# --- every def of part A -----------------------------------------------------------------


def _all_caps(defn: AgentDef) -> dict[str, bool]:
    return dict.fromkeys(defn.capability_flags.values(), True)


@pytest.mark.rule("ARGV-MODEL-001")
@pytest.mark.parametrize("defn", PART_A, ids=lambda d: d.id)
def test_fallback_models_start_with_default(defn: AgentDef) -> None:
    assert defn.fallback_models[0] == DEFAULT_MODEL_OPTION
    ids = [m.id for m in defn.fallback_models]
    assert len(ids) == len(set(ids))
    # 'default' (and None) never produce a model flag.
    ctx = RuntimeContext(cwd="/p")
    assert argv(defn, model="default", ctx=ctx) == argv(defn, model=None, ctx=ctx)


@pytest.mark.rule("ARGV-HEADLESS-001")
@pytest.mark.parametrize("defn", PART_A, ids=lambda d: d.id)
def test_headless_flags_present_contiguously(defn: AgentDef) -> None:
    got = argv(defn, caps=_all_caps(defn), ctx=RuntimeContext(platform="linux", cwd="/p"))
    flags = list(defn.headless_flags)
    windows = [got[i : i + len(flags)] for i in range(len(got) - len(flags) + 1)]
    assert flags in windows, f"{defn.id}: {flags} not contiguous in {got}"


@pytest.mark.rule("ARGV-HEADLESS-001")
def test_headless_flags_declared() -> None:
    # seed 000 §10: every def with a known posture declares it; mimo has none in the seeds.
    declared = {d.id: d.headless_flags for d in PART_A}
    assert declared["claude"] == ("--permission-mode", "bypassPermissions")
    assert declared["cursor-agent"] == ("--force", "--trust")
    assert declared["qoder"] == ("--yolo",)
    assert declared["copilot"] == ("--allow-all-tools",)
    assert declared["amp"] == ("--dangerously-allow-all",)
    assert declared["opencode"] == ("--dangerously-skip-permissions",)
    assert declared["codex"] == ("--sandbox", "workspace-write")
    assert declared["mimo"] == ()


@pytest.mark.rule("ARGV-CAPS-001")
@pytest.mark.parametrize("defn", PART_A, ids=lambda d: d.id)
def test_failed_probe_turns_off_gated_flags(defn: AgentDef) -> None:
    ctx = RuntimeContext(cwd="/p", resume_session_id="s")
    failed = argv(defn, caps={}, dirs=["/extra"], ctx=ctx)
    all_missing = dict.fromkeys(defn.capability_flags.values(), False)
    keep = DEFAULT_ON.get(defn.id, frozenset())
    for key in keep:
        all_missing.pop(key)
    # probe failed == every (non default-on) flag reported missing.
    assert failed == argv(defn, caps=all_missing, dirs=["/extra"], ctx=ctx)
    for flag, key in defn.capability_flags.items():
        if key not in keep:
            assert flag not in failed, f"{defn.id}: {flag} passed after a failed probe"
    for key in keep:
        flag = next(f for f, k in defn.capability_flags.items() if k == key)
        assert flag in failed


class _TrapEnviron(MutableMapping[str, str]):
    """An os.environ stand-in that fails the test on any access."""

    def _trap(self) -> AssertionError:
        return AssertionError("build_args read os.environ")

    def __getitem__(self, key: str) -> str:
        raise self._trap()

    def __setitem__(self, key: str, value: str) -> None:
        raise self._trap()

    def __delitem__(self, key: str) -> None:
        raise self._trap()

    def __iter__(self) -> Iterator[str]:
        raise self._trap()

    def __len__(self) -> int:
        raise self._trap()

    def __contains__(self, key: object) -> bool:
        raise self._trap()


_JUNK_ENV = {
    "OD_CODEX_DISABLE_PLUGINS": "1",
    "OD_CODEX_SANDBOX": "danger-full-access",
    "WSL_DISTRO_NAME": "Junk",
    "CLAUDE_BIN": "/junk/claude",
}

_CASES: tuple[tuple[BuildOptions, RuntimeContext], ...] = (
    (BuildOptions(), RuntimeContext()),
    (
        BuildOptions(model="m-1", capabilities={"partialMessages": True, "trust": True}),
        RuntimeContext(cwd="/p", platform="darwin", new_session_id="n"),
    ),
    (
        BuildOptions(model="gpt-5.5", reasoning="high", service_tier="fast"),
        RuntimeContext(cwd="/p", platform="win32", env={"Path": "C:\\x"}, resume_session_id="r"),
    ),
)


@pytest.mark.rule("ARGV-PURE-001")
@pytest.mark.parametrize("defn", PART_A, ids=lambda d: d.id)
def test_build_args_is_pure(defn: AgentDef, monkeypatch: pytest.MonkeyPatch) -> None:
    for options, ctx in _CASES:
        images, dirs = ["/i.png"], ["/d1", "rel"]
        frozen = (copy.deepcopy(options), copy.deepcopy(ctx), list(images), list(dirs))
        first = defn.build_args("p", images, dirs, options, ctx)
        assert defn.build_args("p", images, dirs, options, ctx) == first
        assert (options, ctx, images, dirs) == frozen, "build_args mutated its inputs"
        with monkeypatch.context() as m:
            for key, value in _JUNK_ENV.items():
                m.setenv(key, value)
            m.setattr(sys, "platform", "win32" if ctx.platform != "win32" else "linux")
            assert defn.build_args("p", images, dirs, options, ctx) == first
        with monkeypatch.context() as m:
            m.setattr(os, "environ", _TrapEnviron())
            assert defn.build_args("p", images, dirs, options, ctx) == first
        assert all(isinstance(a, str) for a in first)


_SAFE = st.text(alphabet="abcxyz019-./_:", min_size=1, max_size=12)
_CAP_KEYS = sorted({k for d in PART_A for k in d.capability_flags.values()})
_ENV_KEYS = ["OD_CODEX_DISABLE_PLUGINS", "OD_CODEX_SANDBOX", "WSL_DISTRO_NAME", "PATH"]
_REASONING = [None, "default", "none", "minimal", "low", "medium", "high", "xhigh", "max"]


@st.composite
def _inputs(draw: st.DrawFn) -> tuple[AgentDef, BuildOptions, RuntimeContext, list[str], list[str]]:
    defn = draw(st.sampled_from(PART_A))
    options = BuildOptions(
        model=draw(st.one_of(st.none(), st.just("default"), st.sampled_from(["smart"]), _SAFE)),
        reasoning=draw(st.sampled_from(_REASONING)),
        service_tier=draw(st.one_of(st.none(), st.just("default"), _SAFE)),
        permission_mode=draw(st.sampled_from([None, "restricted", "default"])),
        capabilities=draw(st.dictionaries(st.sampled_from(_CAP_KEYS), st.booleans())),
    )
    ctx = RuntimeContext(
        cwd=draw(st.one_of(st.none(), _SAFE)),
        platform=draw(st.sampled_from(["linux", "darwin", "win32"])),
        env=draw(
            st.dictionaries(
                st.sampled_from(_ENV_KEYS),
                st.sampled_from(["1", "true", "", " ", "danger-full-access", "Ubuntu"]),
            )
        ),
        resume_session_id=draw(st.one_of(st.none(), st.just(""), _SAFE)),
        new_session_id=draw(st.one_of(st.none(), _SAFE)),
    )
    images = draw(st.lists(_SAFE, max_size=3))
    dirs = draw(st.lists(st.one_of(st.just(""), _SAFE), max_size=3))
    return defn, options, ctx, images, dirs


_PROMPT = "PROMPT SENTINEL: Write the landing page"


@pytest.mark.rule("ARGV-PURE-001", "ARGV-STDIN-001")
@settings(max_examples=200)
@given(_inputs())
def test_build_args_properties(
    inputs: tuple[AgentDef, BuildOptions, RuntimeContext, list[str], list[str]],
) -> None:
    defn, options, ctx, images, dirs = inputs
    try:
        first = defn.build_args(_PROMPT, images, dirs, options, ctx)
    except UnsupportedOptionError as err:
        # the only failure a def may raise is typed and names what was wrong.
        assert err.agent_id == defn.id and err.option == "reasoning"
        with pytest.raises(UnsupportedOptionError):
            defn.build_args(_PROMPT, images, dirs, options, ctx)
        return
    assert first == defn.build_args(_PROMPT, images, dirs, options, ctx)
    assert all(isinstance(a, str) and a for a in first)
    # seed 002 §6.2 (ARGV-STDIN-001): stdin delivery keeps the prompt out of argv.
    assert defn.prompt_delivery is PromptDelivery.STDIN
    assert not any(_PROMPT in a for a in first)


@pytest.mark.rule("ARGV-STDIN-001")
@pytest.mark.parametrize("defn", PART_A, ids=lambda d: d.id)
def test_stdin_defs_never_carry_the_prompt(defn: AgentDef) -> None:
    assert defn.prompt_delivery is PromptDelivery.STDIN
    assert defn.max_prompt_arg_bytes is None
    prompt = "## user\nbuild a page with --model evil and -p -"
    ctx = RuntimeContext(cwd="/p", resume_session_id="r")
    got = defn.build_args(prompt, [], ["/d"], BuildOptions(), ctx)
    assert prompt not in got and "-" not in got


def test_part_a_ids_are_unique_and_modules_export_one_def() -> None:
    assert len(BY_ID) == len(PART_A)
    modules = (amp, byok_opencode, claude, codebuddy, codex, copilot, cursor_agent)
    for module in (*modules, gemini, mimo, opencode, qoder):
        defs = [v for v in vars(module).values() if isinstance(v, AgentDef)]
        assert defs == [module.AGENT_DEF]
