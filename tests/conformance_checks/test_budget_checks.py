"""CONFORM-BUDGET-LINUX-001, CONFORM-BUDGET-DARWIN-001, CONFORM-BUDGET-WIN32-001.

``harness conform`` judges the argv each fake run spawned, prompt included, with the
prompt-budget guards of every platform (the same verdicts ``harness replay --platform``
gives a recording): the checks over synthetic observations, then a real conform run of
the ``aider`` def (argv delivery) as built in and with a budget too small for win32.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conformance.checks import all_checks
from conformance.checks.runs import RunObservation, evaluate_run
from conformance.conform.plan import ConformPlan, DefTarget, builtin_targets, plan_conform
from conformance.conform.run import run_conform
from conformance.rules import all_rules
from conformance.verdicts import Status
from fake_clis.scenario import list_scenarios
from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.defs.types import BuildOptions, RuntimeContext
from harness.recording.replay_budget import budget_verdicts

AIDER = get_agent_def("aider", BUILTIN_DEFS)
RULES = ("CONFORM-BUDGET-LINUX-001", "CONFORM-BUDGET-DARWIN-001", "CONFORM-BUDGET-WIN32-001")


def _observation(prompt: str) -> RunObservation:
    args = AIDER.build_args(prompt, [], [], BuildOptions(), RuntimeContext())
    budget = tuple(budget_verdicts(AIDER, ["/usr/bin/aider", *args]))
    return RunObservation(def_id="aider", stream_format=AIDER.stream_format, budget=budget)


@pytest.mark.rule(*RULES)
def test_each_platform_gets_its_own_verdict() -> None:
    findings = evaluate_run(_observation("x" * 40_000), rule_ids=RULES)
    assert findings["CONFORM-BUDGET-LINUX-001"].status is Status.PASS
    assert findings["CONFORM-BUDGET-DARWIN-001"].status is Status.PASS
    win32 = findings["CONFORM-BUDGET-WIN32-001"]
    assert win32.status is Status.FAIL
    assert "win32 would refuse this run" in win32.reason
    assert "BUDGET-ARGV-001" in win32.reason


@pytest.mark.rule(*RULES)
def test_nothing_spawned_is_skipped() -> None:
    obs = RunObservation(def_id="aider", stream_format=AIDER.stream_format)
    findings = evaluate_run(obs, rule_ids=RULES)
    assert {f.status for f in findings.values()} == {Status.SKIPPED}


def _plan(target: DefTarget) -> ConformPlan:
    return plan_conform(
        [target],
        def_checks=all_checks("def"),
        run_checks=all_checks("run"),
        catalog=all_rules(),
        scenarios=list_scenarios(),
        siblings=BUILTIN_DEFS,
        rule_filter=list(RULES),
        scenario_filter=["happy"],
    )


@pytest.mark.rule(*RULES)
def test_conform_shows_the_verdict_of_every_platform(tmp_path: Path) -> None:
    (target,) = builtin_targets(BUILTIN_DEFS, ["aider"])
    result = run_conform(_plan(target), work_dir=str(tmp_path))
    for rule in RULES:
        cell = result.verdict.cell("aider", rule)
        assert cell is not None and cell.status is Status.PASS, (rule, cell)
    win32 = result.verdict.cell("aider", "CONFORM-BUDGET-WIN32-001")
    assert win32 is not None and "cmd-shim" in win32.reason and "direct-exe" in win32.reason
    # The same def with a budget its own prompt does not fit: only win32 uses the def's
    # number (the POSIX floors are larger), so only win32 fails.
    small = dataclasses.replace(target.defn, max_prompt_arg_bytes=10)
    shrunk = run_conform(_plan(dataclasses.replace(target, defn=small)), work_dir=str(tmp_path))
    statuses = {rule: shrunk.verdict.cell("aider", rule) for rule in RULES}
    assert statuses["CONFORM-BUDGET-LINUX-001"].status is Status.PASS  # type: ignore[union-attr]
    failed = statuses["CONFORM-BUDGET-WIN32-001"]
    assert failed is not None and failed.status is Status.FAIL
    assert "BUDGET-ARGV-001" in failed.reason
