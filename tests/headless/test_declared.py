"""Every def whose CLI can stop at an approval prompt declares its headless flags.

Rule: HEADLESS-DECLARED-001 (seed 000 §10). The CLIs that ask, and the argv each takes as
"do not ask", come from ``fake_clis/approval.py``, written from each CLI's documentation and
not from the defs; so a def that drops or misspells its flags is caught here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from fake_clis.approval import GATES, NO_TERMINAL_PROMPT, PROTOCOL_APPROVAL_FORMATS, ApprovalGate
from harness.defs.registry import BUILTIN_DEFS
from harness.defs.types import AgentDef, BuildOptions, RuntimeContext

DEFS = {d.id: d for d in BUILTIN_DEFS}
CONTEXT = RuntimeContext(cwd="/p", platform="linux", prompt_file_path="/tmp/od-prompt.txt")


def first_turn_argv(defn: AgentDef) -> list[str]:
    """A first turn with default options and every probe-gated capability found."""
    caps = {key: True for key in defn.capability_flags.values()}
    return defn.build_args("Build a page", [], [], BuildOptions(capabilities=caps), CONTEXT)


def without_run(argv: Sequence[str], run: Sequence[str]) -> list[str]:
    """``argv`` with the first contiguous occurrence of ``run`` taken out."""
    items, size = list(argv), len(run)
    for i in range(len(items) - size + 1):
        if items[i : i + size] == list(run):
            return items[:i] + items[i + size :]
    return items


def problems(defn: AgentDef, gate: ApprovalGate) -> list[str]:
    """Why ``defn`` would leave its CLI at ``gate``'s prompt (empty: it would not)."""
    flags = list(defn.headless_flags)
    if not flags:
        return [f"{defn.id}: declares no headless_flags but its CLI can ask ({gate.citation})"]
    argv = first_turn_argv(defn)
    found: list[str] = []
    if without_run(argv, flags) == argv:
        found.append(f"{defn.id}: build_args does not pass {flags} contiguously: {argv}")
    if not gate.bypassed(argv):
        found.append(f"{defn.id}: {argv} is not the CLI's do-not-ask posture ({gate.citation})")
    if gate.bypassed(without_run(argv, flags)):
        found.append(f"{defn.id}: the posture does not depend on headless_flags {flags}")
    return found


@pytest.mark.rule("HEADLESS-DECLARED-001")
@pytest.mark.parametrize("agent_id", sorted(set(GATES) & set(DEFS)))
def test_a_def_that_can_be_asked_declares_and_passes_its_flags(agent_id: str) -> None:
    assert problems(DEFS[agent_id], GATES[agent_id]) == []


@pytest.mark.rule("HEADLESS-DECLARED-001")
def test_every_def_is_classified() -> None:
    # A new def must say whether its CLI can ask on a terminal; none may be in two lists.
    unclassified = sorted(
        d.id
        for d in BUILTIN_DEFS
        if d.id not in GATES
        and d.id not in NO_TERMINAL_PROMPT
        and d.stream_format not in PROTOCOL_APPROVAL_FORMATS
    )
    assert unclassified == []
    assert not set(GATES) & set(NO_TERMINAL_PROMPT)
    assert set(GATES) <= set(DEFS) and set(NO_TERMINAL_PROMPT) <= set(DEFS)
    for agent_id in (*GATES, *NO_TERMINAL_PROMPT):
        assert DEFS[agent_id].stream_format not in PROTOCOL_APPROVAL_FORMATS, agent_id


@pytest.mark.rule("HEADLESS-DECLARED-001")
@pytest.mark.parametrize("agent_id", ["claude", "copilot", "qwen", "deepseek"])
def test_the_check_catches_a_def_that_drops_its_flags(agent_id: str) -> None:
    defn = DEFS[agent_id]
    flags = defn.headless_flags
    real = defn.build_args

    def dropped(*args: object) -> list[str]:
        return without_run(real(*args), flags)  # type: ignore[arg-type]

    silent = dataclasses.replace(defn, build_args=dropped)
    assert any("does not pass" in p for p in problems(silent, GATES[agent_id]))
    undeclared = dataclasses.replace(defn, headless_flags=())
    assert any("declares no headless_flags" in p for p in problems(undeclared, GATES[agent_id]))


@pytest.mark.rule("HEADLESS-DECLARED-001")
def test_the_check_catches_flags_that_are_not_the_posture() -> None:
    # A def that passes some other flag (claude's acceptEdits asks before shell commands).
    claude = DEFS["claude"]

    def accept_edits(*args: object) -> list[str]:
        argv = claude.build_args(*args)  # type: ignore[arg-type]
        return [a if a != "bypassPermissions" else "acceptEdits" for a in argv]

    wrong = dataclasses.replace(
        claude,
        build_args=accept_edits,
        headless_flags=("--permission-mode", "acceptEdits"),
    )
    assert any("not the CLI's do-not-ask posture" in p for p in problems(wrong, GATES["claude"]))
