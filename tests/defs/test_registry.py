"""Registry invariants: ids, order, budgets, one AGENT_DEF per runtime module.

Rules: DEF-REGISTRY-001, DEF-REGISTRY-002, DEF-REGISTRY-003, DEF-ID-001, DEF-BUDGET-001,
DEF-BUDGET-002, DEF-MODULE-001 (whether a def names a known format: tests/formats).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

import harness.defs
from harness.defs import registry
from harness.defs.registry import (
    BUILTIN_DEFS,
    BUILTIN_REGISTRY,
    build_registry,
    get_agent_def,
    validate_def,
)
from harness.defs.types import (
    AcpOptions,
    AgentDef,
    BuildOptions,
    PiOptions,
    PromptDelivery,
    RuntimeContext,
    Transport,
)
from harness.errors import AgentDefError, DuplicateAgentError, UnknownAgentError

REPO_ROOT = Path(__file__).resolve().parents[2]

#: ref §8.2 SHIPPED_AGENT_DEFS order, then the retired gemini (written out by hand).
SHIPPED_ORDER = [
    "amr",
    "claude",
    "codex",
    "devin",
    "opencode",
    "byok-opencode",
    "hermes",
    "trae-cli",
    "grok-build",
    "kimi",
    "cursor-agent",
    "qwen",
    "qoder",
    "copilot",
    "amp",
    "pi",
    "kiro",
    "kilo",
    "vibe",
    "deepseek",
    "deepseek-harness",
    "aider",
    "antigravity",
    "reasonix",
    "prime-agent",
    "codebuddy",
    "mimo",
    "atomcode",
    "gemini",
]

#: seed 000 §3 catalog, by stream format (gemini: the retired json-event-stream def).
CATALOG = {
    "claude-stream-json": {"claude", "amp", "codebuddy"},
    "json-event-stream": {"codex", "cursor-agent", "opencode", "mimo", "byok-opencode", "gemini"},
    "copilot-stream-json": {"copilot"},
    "qoder-stream-json": {"qoder"},
    "acp-json-rpc": {
        "amr",
        "devin",
        "hermes",
        "kimi",
        "kiro",
        "kilo",
        "reasonix",
        "trae-cli",
        "vibe",
    },
    "pi-rpc": {"pi", "prime-agent"},
    "dsh-profile-jsonl": {"deepseek-harness"},
    "plain": {"aider", "antigravity", "atomcode", "deepseek", "grok-build", "qwen"},
}

NOT_RUNTIME_MODULES = {
    "registry",
    "local_profiles",
    "shared",
    "types",
    "transport",
    "format_options",
}


def _args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    return ["--print"]


def make_def(**overrides: object) -> AgentDef:
    fields: dict[str, object] = {
        "id": "synthetic",
        "name": "Synthetic",
        "bin": "synthetic-cli",
        "build_args": _args,
        "stream_format": "acp-json-rpc",
        "prompt_delivery": PromptDelivery.PROTOCOL,
    }
    fields.update(overrides)
    return AgentDef(**fields)  # type: ignore[arg-type]


# --- ids and order ------------------------------------------------------------------


@pytest.mark.rule("DEF-REGISTRY-002")
def test_builtin_ids_in_shipped_order() -> None:
    assert [d.id for d in BUILTIN_DEFS] == SHIPPED_ORDER
    assert len(BUILTIN_DEFS) == 29
    assert list(BUILTIN_REGISTRY) == SHIPPED_ORDER
    assert all(BUILTIN_REGISTRY[d.id] is d for d in BUILTIN_DEFS)


@pytest.mark.rule("DEF-REGISTRY-002")
def test_builtins_match_the_catalog_by_stream_format() -> None:
    by_format: dict[str, set[str]] = {}
    for defn in BUILTIN_DEFS:
        by_format.setdefault(defn.stream_format, set()).add(defn.id)
    assert by_format == CATALOG


@pytest.mark.rule("DEF-REGISTRY-001")
def test_builtin_ids_are_unique() -> None:
    ids = [d.id for d in BUILTIN_DEFS]
    assert len(set(ids)) == len(ids)


@pytest.mark.rule("DEF-REGISTRY-001")
def test_duplicate_id_is_refused() -> None:
    first = make_def()
    second = make_def(name="Another", bin="another")
    with pytest.raises(DuplicateAgentError, match="'synthetic'") as info:
        build_registry([first, second])
    assert info.value.rule == "DEF-REGISTRY-001"
    with pytest.raises(DuplicateAgentError):
        build_registry([*BUILTIN_DEFS, dataclasses.replace(BUILTIN_DEFS[3])])
    assert list(build_registry([first])) == ["synthetic"]


def _import_registry_with(patch: str) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(
        f"""
        import dataclasses
        {patch}
        try:
            import harness.defs.registry
        except Exception as exc:
            print(type(exc).__name__, getattr(exc, "rule", None))
        else:
            print("imported")
        """
    )
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


@pytest.mark.rule("DEF-REGISTRY-001")
def test_a_duplicate_builtin_fails_import() -> None:
    patch = (
        "import harness.defs.qwen as m; m.AGENT_DEF = dataclasses.replace(m.AGENT_DEF, id='aider')"
    )
    result = _import_registry_with(patch)
    assert result.stdout.split() == ["DuplicateAgentError", "DEF-REGISTRY-001"], result.stderr


@pytest.mark.rule("DEF-BUDGET-001")
def test_an_argv_builtin_without_budget_fails_import() -> None:
    patch = (
        "import harness.defs.aider as m; "
        "m.AGENT_DEF = dataclasses.replace(m.AGENT_DEF, max_prompt_arg_bytes=None)"
    )
    result = _import_registry_with(patch)
    assert result.stdout.split() == ["AgentDefError", "DEF-BUDGET-001"], result.stderr


# --- lookup -----------------------------------------------------------------------------


@pytest.mark.rule("DEF-REGISTRY-003")
def test_unknown_agent_names_known_ids() -> None:
    with pytest.raises(UnknownAgentError) as info:
        get_agent_def("no-such-agent")
    message = str(info.value)
    assert "'no-such-agent'" in message
    for agent_id in SHIPPED_ORDER:
        assert agent_id in message
    assert info.value.known == SHIPPED_ORDER
    assert isinstance(info.value, LookupError)


@pytest.mark.rule("DEF-REGISTRY-003")
def test_get_agent_def_over_given_defs() -> None:
    synthetic = make_def()
    assert get_agent_def("pi") is BUILTIN_REGISTRY["pi"]
    assert get_agent_def("synthetic", [synthetic]) is synthetic
    assert get_agent_def("synthetic", {"synthetic": synthetic}) is synthetic
    with pytest.raises(UnknownAgentError) as info:
        get_agent_def("pi", [synthetic])
    assert info.value.known == ["synthetic"]


# --- per-def checks ------------------------------------------------------------------------


@pytest.mark.rule("DEF-ID-001")
@pytest.mark.parametrize("bad_id", ["", "bad id", "-leading", "x" * 81, "café", "a/b"])
def test_bad_id_is_refused(bad_id: str) -> None:
    with pytest.raises(AgentDefError) as info:
        build_registry([make_def(id=bad_id)])
    assert info.value.field == "id"
    assert info.value.rule == "DEF-ID-001"


@pytest.mark.rule("DEF-ID-001")
@pytest.mark.parametrize("field", ["name", "bin"])
def test_blank_name_or_bin_is_refused(field: str) -> None:
    with pytest.raises(AgentDefError) as info:
        validate_def(make_def(**{field: "  "}))
    assert info.value.field == field


@pytest.mark.rule("DEF-ID-001")
@pytest.mark.parametrize("defn", BUILTIN_DEFS, ids=lambda d: d.id)
def test_every_builtin_is_valid(defn: AgentDef) -> None:
    validate_def(defn)


@pytest.mark.rule("DEF-BUDGET-001")
@pytest.mark.parametrize("budget", [None, 0, -5, True])
def test_argv_delivery_without_a_positive_budget_is_refused(budget: object) -> None:
    defn = make_def(
        stream_format="plain", prompt_delivery=PromptDelivery.ARGV, max_prompt_arg_bytes=budget
    )
    with pytest.raises(AgentDefError) as info:
        build_registry([defn])
    assert info.value.field == "max_prompt_arg_bytes"
    assert info.value.rule == "DEF-BUDGET-001"


@pytest.mark.rule("DEF-BUDGET-001")
def test_every_argv_builtin_declares_a_budget() -> None:
    argv_defs = [d for d in BUILTIN_DEFS if d.prompt_delivery is PromptDelivery.ARGV]
    assert {d.id for d in argv_defs} >= {"aider", "deepseek"}
    assert all(isinstance(d.max_prompt_arg_bytes, int) for d in argv_defs)
    validate_def(
        make_def(
            stream_format="plain", prompt_delivery=PromptDelivery.ARGV, max_prompt_arg_bytes=30_000
        )
    )


@pytest.mark.rule("DEF-BUDGET-002")
@pytest.mark.parametrize(
    "delivery", [PromptDelivery.STDIN, PromptDelivery.FILE, PromptDelivery.PROTOCOL]
)
def test_budget_without_argv_delivery_is_refused(delivery: PromptDelivery) -> None:
    with pytest.raises(AgentDefError) as info:
        validate_def(make_def(prompt_delivery=delivery, max_prompt_arg_bytes=30_000))
    assert info.value.rule == "DEF-BUDGET-002"
    assert all(
        d.max_prompt_arg_bytes is None
        for d in BUILTIN_DEFS
        if d.prompt_delivery is not PromptDelivery.ARGV
    )


@pytest.mark.rule("DEF-OPTIONS-001")
@pytest.mark.parametrize(
    ("overrides", "field", "speaks"),
    [
        pytest.param(
            {
                "stream_format": "claude-stream-json",
                "prompt_delivery": PromptDelivery.STDIN,
                "acp": AcpOptions(turn_end_completes_prompt=True),
            },
            "acp.turn_end_completes_prompt",
            "'claude-stream-json'",
            id="acp-option-on-a-stream-json-def",
        ),
        pytest.param(
            {"pi": PiOptions(session_dir=".pi/sessions")},
            "pi.session_dir",
            "'acp-json-rpc'",
            id="pi-option-on-an-acp-def",
        ),
    ],
)
def test_a_format_option_no_transport_reads_is_refused(
    overrides: dict[str, object], field: str, speaks: str
) -> None:
    with pytest.raises(AgentDefError) as info:
        build_registry([make_def(**overrides)])
    assert info.value.rule == "DEF-OPTIONS-001"
    assert info.value.field == field
    text = str(info.value)
    assert "'synthetic'" in text and field in text and speaks in text


@pytest.mark.rule("DEF-OPTIONS-001")
def test_a_format_option_is_accepted_where_a_transport_reads_it() -> None:
    validate_def(make_def(acp=AcpOptions(stage_timeout_ms=1000)))
    pi_alt = Transport("rpc", "pi-rpc", _args)
    validate_def(make_def(pi=PiOptions(resume_via_process_args=True), alt_transports=(pi_alt,)))
    # The defaults are no choice at all: any def may hold them.
    validate_def(make_def(stream_format="plain", prompt_delivery=PromptDelivery.STDIN))
    grouped = {d.id for d in BUILTIN_DEFS if d.acp != AcpOptions() or d.pi != PiOptions()}
    assert grouped >= {"amr", "kimi", "kiro", "reasonix", "pi", "prime-agent"}


# --- modules ----------------------------------------------------------------------------------


def runtime_module_names() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.iter_modules(harness.defs.__path__)
        if info.name not in NOT_RUNTIME_MODULES and not info.name.startswith("_")
    )


@pytest.mark.rule("DEF-MODULE-001")
def test_each_runtime_module_exports_exactly_one_agent_def() -> None:
    exported: list[AgentDef] = []
    for name in runtime_module_names():
        module = importlib.import_module(f"harness.defs.{name}")
        public_defs = {
            attr: value
            for attr, value in vars(module).items()
            if not attr.startswith("_") and isinstance(value, AgentDef)
        }
        assert list(public_defs) == ["AGENT_DEF"], f"harness.defs.{name}: {sorted(public_defs)}"
        exported.append(public_defs["AGENT_DEF"])
    assert len(exported) == len(BUILTIN_DEFS)
    assert {id(d) for d in exported} == {id(d) for d in BUILTIN_DEFS}


@pytest.mark.rule("DEF-MODULE-001")
def test_module_names_follow_the_ids() -> None:
    assert runtime_module_names() == sorted(i.replace("-", "_") for i in SHIPPED_ORDER)


@pytest.mark.rule("DEF-MODULE-001")
def test_package_reexports_the_registry() -> None:
    assert harness.defs.BUILTIN_DEFS is registry.BUILTIN_DEFS
    assert harness.defs.get_agent_def is registry.get_agent_def
    assert harness.defs.AgentDef is AgentDef
    with pytest.raises(AttributeError):
        _ = harness.defs.no_such_name
