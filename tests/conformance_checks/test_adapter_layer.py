"""The adapter-layer def checks (conformance/checks/adapter_layer.py): they pass on the
built-in defs, each fails with evidence when the engine or the def breaks its rule, and
their rules show up as rows of the HTML report.

Rules: MCP-RUN-001..005, SKILL-RUN-001, SESSION-RUN-001.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from conformance.checks import Finding, evaluate_def, to_outcomes
from conformance.reports import ReportMeta
from conformance.reports import html as html_report
from conformance.verdicts import Status, judge
from harness.defs.registry import BUILTIN_REGISTRY
from harness.defs.types import AgentDef, BuildOptions, RuntimeContext
from harness.runner import prepare as prepare_module

pytestmark = pytest.mark.posix

ADAPTER_RULES = (
    "MCP-RUN-001",
    "MCP-RUN-002",
    "MCP-RUN-003",
    "MCP-RUN-004",
    "MCP-RUN-005",
    "SKILL-RUN-001",
    "SESSION-RUN-001",
)


def fresh(agent_id: str) -> AgentDef:
    """A copy of a built-in def: a new object, so the checks' per-def cache runs it anew."""
    return dataclasses.replace(BUILTIN_REGISTRY[agent_id])


def judge_one(defn: AgentDef, rule: str) -> Finding:
    return evaluate_def(defn, rule_ids=[rule])[rule]


def assert_fails(finding: Finding, rule: str, needle: str) -> None:
    assert finding.status is Status.FAIL, finding.reason
    assert finding.evidence is not None
    assert finding.evidence.summary.startswith(f"{rule}: "), finding.evidence.summary
    assert needle in finding.evidence.summary, finding.evidence.summary
    assert finding.evidence.repro_command.startswith("harness conform ")


@pytest.mark.rule(*ADAPTER_RULES)
@pytest.mark.parametrize(
    ("agent_id", "applies"),
    [
        ("claude", {"MCP-RUN-001", "MCP-RUN-005", "SKILL-RUN-001", "SESSION-RUN-001"}),
        ("devin", {"MCP-RUN-003", "MCP-RUN-005", "SKILL-RUN-001", "SESSION-RUN-001"}),
        ("mimo", {"MCP-RUN-002", "MCP-RUN-005", "SKILL-RUN-001"}),
        ("deepseek-harness", {"MCP-RUN-004", "MCP-RUN-005", "SKILL-RUN-001", "SESSION-RUN-001"}),
    ],
)
def test_checks_pass_where_they_apply_and_skip_with_a_reason(
    agent_id: str, applies: set[str]
) -> None:
    findings = evaluate_def(fresh(agent_id), rule_ids=ADAPTER_RULES)
    for rule, finding in findings.items():
        if rule in applies:
            assert finding.status is Status.PASS, f"{rule}: {finding.reason}"
        else:
            assert finding.status is Status.SKIPPED, f"{rule}: {finding.reason}"
            assert finding.reason.startswith("not applicable: ")


@pytest.mark.rule(*ADAPTER_RULES)
def test_a_def_derived_from_a_builtin_is_judged_like_it_by_the_builtins_fake() -> None:
    """The README's derived def (own id and bin) keeps every rule claude's fake judges."""
    derived = dataclasses.replace(
        BUILTIN_REGISTRY["claude"], id="my-claude", name="My Claude wrapper", bin="my-claude"
    )
    mine = evaluate_def(derived, rule_ids=ADAPTER_RULES)
    theirs = evaluate_def(fresh("claude"), rule_ids=ADAPTER_RULES)
    assert {r: f.status for r, f in mine.items()} == {r: f.status for r, f in theirs.items()}
    assert sum(f.status is Status.PASS for f in mine.values()) == 4


@pytest.mark.rule("MCP-RUN-001", "PLUGIN-FAKE-001")
def test_the_fake_named_for_a_def_is_the_one_its_checks_run() -> None:
    """The pytest plugin's --adapter-fake-as: codebuddy's fake also speaks claude's stream."""
    from conformance.checks.adapter_layer import observe_adapter_layer

    derived = dataclasses.replace(BUILTIN_REGISTRY["claude"], id="my-claude", bin="my-claude")
    chosen = observe_adapter_layer(derived, "codebuddy")
    default = observe_adapter_layer(derived)
    assert chosen.mcp_turn is not None and default.mcp_turn is not None
    assert chosen.mcp_turn.record["agent"] == "codebuddy"
    assert default.mcp_turn.record["agent"] == "claude"
    finding = evaluate_def(derived, rule_ids=["MCP-RUN-001"], emulator="codebuddy")
    assert finding["MCP-RUN-001"].status is Status.PASS, finding["MCP-RUN-001"].reason


@pytest.mark.rule(*ADAPTER_RULES)
def test_a_def_no_fake_speaks_for_is_skipped_naming_why() -> None:
    alien = dataclasses.replace(
        BUILTIN_REGISTRY["claude"],
        id="alien",
        bin="alien",
        stream_format="json-event-stream",
        event_parser="kimi",
    )
    finding = judge_one(alien, "SKILL-RUN-001")
    assert finding.status is Status.SKIPPED
    assert "no fake emulator reads stream_format 'json-event-stream' with event_parser 'kimi'" in (
        finding.reason
    )


@pytest.mark.rule("MCP-RUN-001")
def test_a_runner_that_does_not_restore_the_mcp_json_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(prepare_module, "_restore_quietly", lambda *a: None)
    assert_fails(judge_one(fresh("claude"), "MCP-RUN-001"), "MCP-RUN-001", "not put back")


def _plan_without(monkeypatch: pytest.MonkeyPatch, **changes: Any) -> None:
    original = prepare_module.plan_injection

    def broken(*args: Any, **kwargs: Any) -> Any:
        return dataclasses.replace(original(*args, **kwargs), **changes)

    monkeypatch.setattr(prepare_module, "plan_injection", broken)


@pytest.mark.rule("MCP-RUN-002", "MCP-RUN-005")
def test_a_runner_that_drops_the_env_content_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    _plan_without(monkeypatch, env={})
    defn = fresh("opencode")
    assert_fails(judge_one(defn, "MCP-RUN-002"), "MCP-RUN-002", "not the built config")
    assert_fails(judge_one(defn, "MCP-RUN-005"), "MCP-RUN-005", "bundle")


@pytest.mark.rule("MCP-RUN-003")
def test_a_runner_that_drops_the_acp_servers_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    _plan_without(monkeypatch, acp_mcp_servers=())
    assert_fails(judge_one(fresh("kilo"), "MCP-RUN-003"), "MCP-RUN-003", "session/new")


@pytest.mark.rule("MCP-RUN-004")
def test_a_silent_none_plan_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    _plan_without(monkeypatch, skipped=())
    assert_fails(judge_one(fresh("qwen"), "MCP-RUN-004"), "MCP-RUN-004", "none plan")


@pytest.mark.rule("SKILL-RUN-001")
def test_a_runner_that_does_not_name_the_staged_root_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(prepare_module, "compose_skill_prompt", lambda skills, staged: "skills")
    assert_fails(judge_one(fresh("qwen"), "SKILL-RUN-001"), "SKILL-RUN-001", "staged skill root")


Argv = list[str]


def _dropping_resume(base: AgentDef) -> AgentDef:
    """``base`` whose argv forgets the resume id (a broken def)."""

    def build_args(
        prompt: str,
        images: Sequence[str],
        dirs: Sequence[str],
        options: BuildOptions,
        ctx: RuntimeContext,
    ) -> Argv:
        ctx = dataclasses.replace(ctx, resume_session_id=None)
        return base.build_args(prompt, images, dirs, options, ctx)

    built: Callable[..., Argv] = build_args
    return dataclasses.replace(base, build_args=built)


@pytest.mark.rule("SESSION-RUN-001")
def test_a_def_that_forgets_the_resume_id_fails() -> None:
    finding = judge_one(_dropping_resume(BUILTIN_REGISTRY["cursor-agent"]), "SESSION-RUN-001")
    assert_fails(finding, "SESSION-RUN-001", "did not resume")


@pytest.mark.rule(*ADAPTER_RULES)
def test_the_rules_are_rows_of_the_html_report() -> None:
    defn = fresh("claude")
    findings = evaluate_def(defn, rule_ids=ADAPTER_RULES)
    verdict = judge(to_outcomes(defn.id, findings))
    meta = ReportMeta(
        tool_version="test",
        generated_at=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
        command=("harness", "conform", "--agent", "claude"),
    )
    page = html_report.render(verdict, meta)
    for rule in ADAPTER_RULES:
        assert f'data-rule="{rule}"' in page, rule
    assert verdict.cell("claude", "MCP-RUN-001") is not None
