"""Agent selection (seed 000 §7-§8).

Rules: SELECT-EXPLICIT-001, SELECT-DEFAULT-001, SELECT-NONE-001, SELECT-NOFALLBACK-001
(conformance/rules/selection.py).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.defs.types import AgentDef
from harness.errors import UnknownAgentError
from harness.host.selection import (
    AgentUnavailableError,
    NoAgentAvailableError,
    next_agent_after_failure,
    select_agent,
)
from harness.runner import RunRequest, run_agent
from harness.runtime.detect import DetectionResult, Diagnostic, DiagnosticCode

DEFS: tuple[AgentDef, ...] = tuple(get_agent_def(i) for i in ("claude", "codex", "qwen", "aider"))


def detected(agent_id: str, available: bool, why: str = "") -> DetectionResult:
    defn = get_agent_def(agent_id)
    diagnostics = () if available else (Diagnostic(DiagnosticCode.NOT_ON_PATH, why or "no bin"),)
    return DetectionResult(
        id=agent_id,
        name=defn.name,
        available=available,
        path=f"/usr/bin/{defn.bin}" if available else None,
        launch_path=f"/usr/bin/{defn.bin}" if available else None,
        version="1.0.0" if available else None,
        diagnostics=diagnostics,
    )


def detection(**available: bool) -> list[DetectionResult]:
    return [detected(d.id, available.get(d.id.replace("-", "_"), False)) for d in DEFS]


# --------------------------------------------------------------------------- explicit


@pytest.mark.rule("SELECT-EXPLICIT-001")
def test_explicit_agent_wins_over_configured_and_order() -> None:
    found = detection(claude=True, codex=True, qwen=True)
    assert select_agent("qwen", "claude", found, DEFS).id == "qwen"
    assert select_agent("  codex ", None, found, DEFS).id == "codex"


@pytest.mark.rule("SELECT-EXPLICIT-001")
def test_unavailable_explicit_agent_fails_without_substitution() -> None:
    found = [
        detected("claude", True),
        detected("codex", False, "codex was not found on PATH"),
        detected("qwen", True),
        detected("aider", True),
    ]
    with pytest.raises(AgentUnavailableError) as info:
        select_agent("codex", "claude", found, DEFS)
    assert info.value.agent_id == "codex"
    assert "codex was not found on PATH" in str(info.value)
    assert info.value.rule == "SELECT-EXPLICIT-001"
    assert info.value.code == "AGENT_UNAVAILABLE"


@pytest.mark.rule("SELECT-EXPLICIT-001")
def test_explicit_agent_without_detection_is_unavailable() -> None:
    found = [detected("claude", True)]
    with pytest.raises(AgentUnavailableError, match="not detected"):
        select_agent("qwen", None, found, DEFS)


@pytest.mark.rule("SELECT-EXPLICIT-001")
def test_unknown_explicit_agent_lists_known_ids() -> None:
    with pytest.raises(UnknownAgentError) as info:
        select_agent("nope", None, detection(claude=True), DEFS)
    assert info.value.known == [d.id for d in DEFS]


# --------------------------------------------------------------------------- default


@pytest.mark.rule("SELECT-DEFAULT-001")
def test_configured_agent_when_available() -> None:
    found = detection(claude=True, codex=True, aider=True)
    assert select_agent(None, "aider", found, DEFS).id == "aider"
    assert select_agent("", "aider", found, DEFS).id == "aider"


@pytest.mark.rule("SELECT-DEFAULT-001")
@pytest.mark.parametrize("configured", ["claude", "no-such-agent", None, ""])
def test_first_available_in_registry_order_otherwise(configured: str | None) -> None:
    found = detection(qwen=True, aider=True)
    found.reverse()  # completion order must not matter: registry order does
    assert select_agent(None, configured, found, DEFS).id == "qwen"


@pytest.mark.rule("SELECT-DEFAULT-001")
@settings(max_examples=60)
@given(
    flags=st.lists(st.booleans(), min_size=len(BUILTIN_DEFS), max_size=len(BUILTIN_DEFS)),
    configured=st.none() | st.sampled_from([d.id for d in BUILTIN_DEFS]),
    order=st.randoms(use_true_random=False),
)
def test_default_rule_over_the_whole_registry(
    flags: list[bool], configured: str | None, order: random.Random
) -> None:
    found = [
        DetectionResult(
            id=d.id, name=d.name, available=f, path=None, launch_path=None, version=None
        )
        for d, f in zip(BUILTIN_DEFS, flags, strict=True)
    ]
    order.shuffle(found)
    # FIDELITY-RETIRED-001: a retired def is never the default.
    available = [d.id for d, f in zip(BUILTIN_DEFS, flags, strict=True) if f and not d.retired]
    if not available:
        with pytest.raises(NoAgentAvailableError):
            select_agent(None, configured, found, BUILTIN_DEFS)
        return
    expected = configured if configured in available else available[0]
    assert select_agent(None, configured, found, BUILTIN_DEFS).id == expected


@pytest.mark.rule("SELECT-DEFAULT-001")
def test_duplicate_detection_results_are_rejected() -> None:
    found = [detected("claude", True), detected("claude", False)]
    with pytest.raises(ValueError, match="claude"):
        select_agent(None, None, found, DEFS)


# --------------------------------------------------------------------------- retired


def _all_available() -> list[DetectionResult]:
    return [
        DetectionResult(
            id=d.id, name=d.name, available=True, path=None, launch_path=None, version=None
        )
        for d in BUILTIN_DEFS
    ]


@pytest.mark.rule("FIDELITY-RETIRED-001")
def test_a_retired_def_runs_only_when_asked_for_by_id() -> None:
    """seed 000 §3: Gemini's local runtime is retired and is not an adapter id; it is kept,
    so an explicit request still reaches it, but no default choice ever does."""
    gemini = get_agent_def("gemini")
    assert gemini.retired and "retired" in gemini.retired
    assert [d.id for d in BUILTIN_DEFS if d.retired] == ["gemini"]
    gemini_only = [gemini]
    found = [detected("gemini", True)]
    assert select_agent("gemini", None, found, gemini_only) is gemini
    with pytest.raises(NoAgentAvailableError) as info:
        select_agent(None, "gemini", found, gemini_only)
    assert info.value.reasons["gemini"].startswith("retired (")
    everything = _all_available()
    assert select_agent(None, "gemini", everything, BUILTIN_DEFS).id == BUILTIN_DEFS[0].id
    assert select_agent(None, "claude", everything, BUILTIN_DEFS).id == "claude"


# --------------------------------------------------------------------------- none


@pytest.mark.rule("SELECT-NONE-001")
def test_nothing_available_lists_every_agent_and_why() -> None:
    found = [
        detected("claude", False, "claude: version probe exited 127"),
        detected("codex", False, "codex was not found on PATH"),
        detected("qwen", False, "qwen needs a readable version"),
    ]
    with pytest.raises(NoAgentAvailableError) as info:
        select_agent(None, "claude", found, DEFS)
    reasons = info.value.reasons
    assert list(reasons) == ["claude", "codex", "qwen", "aider"]
    assert "exited 127" in reasons["claude"]
    assert "not found on PATH" in reasons["codex"]
    assert reasons["aider"] == "not detected"
    assert "qwen needs a readable version" in str(info.value)
    assert info.value.code == "AGENT_NONE_AVAILABLE"


# --------------------------------------------------------------------------- no fallback


@pytest.mark.rule("SELECT-NOFALLBACK-001")
def test_retry_after_failure_uses_the_same_agent() -> None:
    found = detection(claude=True, codex=True, qwen=True, aider=True)
    failed = get_agent_def("qwen")
    assert next_agent_after_failure(failed, found, DEFS) is failed


@pytest.mark.rule("SELECT-NOFALLBACK-001")
def test_retry_fails_when_the_failed_agent_went_away() -> None:
    found = detection(claude=True, codex=True)
    with pytest.raises(AgentUnavailableError) as info:
        next_agent_after_failure(get_agent_def("qwen"), found, DEFS)
    assert info.value.agent_id == "qwen"


def _failing_cli(tmp_path: Path) -> Path:
    script = tmp_path / "qwen"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "sys.stdin.read()\n"
        "sys.stderr.write('auth failed: invalid api key\\n')\n"
        "sys.exit(3)\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def _select_sequence(found: Sequence[DetectionResult], configured: str | None) -> AgentDef:
    return select_agent(None, configured, found, DEFS)


@pytest.mark.posix
@pytest.mark.rule("SELECT-NOFALLBACK-001")
def test_a_real_failed_run_does_not_move_to_another_agent(tmp_path: Path) -> None:
    found = detection(claude=True, codex=True, qwen=True, aider=True)
    chosen = _select_sequence(found, "qwen")
    assert chosen.id == "qwen"
    project = tmp_path / "project"
    project.mkdir()
    result = run_agent(
        RunRequest(
            defn=chosen,
            prompt="hello",
            cwd=str(project),
            bin_override=str(_failing_cli(tmp_path)),
            inactivity_timeout_ms=30_000,
        )
    )
    assert not result.succeeded and result.agent_id == "qwen"
    # The failure stays a failure for that run: selecting again with the same inputs, or asking
    # for the retry agent, gives the same agent while others are available.
    assert _select_sequence(found, "qwen").id == "qwen"
    assert next_agent_after_failure(chosen, found, DEFS).id == "qwen"
