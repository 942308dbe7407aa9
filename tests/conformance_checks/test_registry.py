"""The checks registry (CHECKS-REGISTRY-001) and the finding -> outcome plumbing."""

from __future__ import annotations

import pytest

from conformance.checks import (
    Check,
    DefSubject,
    Finding,
    all_checks,
    check,
    evaluate_def,
    failed,
    not_tested,
    passed,
    registry_problems,
    skipped,
    to_outcomes,
)
from conformance.rules import Rule, Tier, all_rules
from conformance.verdicts import Status
from harness.defs.registry import BUILTIN_REGISTRY

CLAUDE = BUILTIN_REGISTRY["claude"]


def _finding(_: object) -> Finding:
    return passed()


@pytest.mark.rule("CHECKS-REGISTRY-001")
def test_every_check_names_a_known_rule_at_its_level() -> None:
    assert registry_problems() == []
    checks = all_checks()
    rules = all_rules()
    assert checks, "no check registered"
    for rule_id, chk in checks.items():
        assert chk.rule_id == rule_id
        assert (rules[rule_id].formats == ()) == (chk.level == "def"), rule_id


@pytest.mark.rule("CHECKS-REGISTRY-001")
def test_every_rule_declared_for_the_checks_has_a_check() -> None:
    from conformance.rules.checks import RULES

    checks = all_checks()
    missing = [r.id for r in RULES if r.id not in checks and r.id != "CHECKS-REGISTRY-001"]
    # DEFCHECK-LOAD-001 is enforced by the loader itself, not by a registered check.
    assert missing == ["DEFCHECK-LOAD-001"]


@pytest.mark.rule("CHECKS-REGISTRY-001")
def test_registry_problems_catch_unknown_rules_and_wrong_levels() -> None:
    rules = {
        "A-DEF-001": Rule("A-DEF-001", Tier.MANDATORY, "A def rule.", "seed 000 §1", ()),
        "A-RUN-001": Rule("A-RUN-001", Tier.MANDATORY, "A run rule.", "seed 000 §1"),
    }
    good = {
        "A-DEF-001": Check("A-DEF-001", "def", _finding),
        "A-RUN-001": Check("A-RUN-001", "run", _finding),
    }
    assert registry_problems(good, rules) == []
    unknown = {"NOPE-X-001": Check("NOPE-X-001", "run", _finding)}
    assert "names unknown rule NOPE-X-001" in registry_problems(unknown, rules)[0]
    wrong_level = {"A-DEF-001": Check("A-DEF-001", "run", _finding)}
    assert (
        "run-level check, but A-DEF-001 is a def-level rule"
        in (registry_problems(wrong_level, rules)[0])
    )
    misfiled = {"A-RUN-001": Check("A-DEF-001", "def", _finding)}
    assert (
        "registered under A-RUN-001 but names A-DEF-001" in (registry_problems(misfiled, rules)[0])
    )


@pytest.mark.rule("CHECKS-REGISTRY-001")
def test_a_rule_gets_one_check_and_levels_are_validated() -> None:
    with pytest.raises(ValueError, match="already has a check"):
        check("DEF-ID-001", level="def")(_finding)
    with pytest.raises(ValueError, match="level must be"):
        check("DEF-ID-001", level="both")  # type: ignore[arg-type]


@pytest.mark.rule("CHECKS-REGISTRY-001", "CONFORM-EVIDENCE-001")
def test_a_crashing_check_is_not_tested_and_failures_name_their_rule() -> None:
    def boom(_: object) -> Finding:
        raise RuntimeError("the check has a bug")

    crashed = Check("DEF-ID-001", "def", boom).run(DefSubject(CLAUDE))
    assert crashed.status is Status.NOT_TESTED
    assert "RuntimeError: the check has a bug" in crashed.reason

    def fails(subject: DefSubject) -> Finding:
        return failed("it broke", repro_command=subject.repro_command, expected="x", actual="y")

    finding = Check("DEF-ID-001", "def", fails).run(DefSubject(CLAUDE, source="mydef.py"))
    assert finding.status is Status.FAIL
    assert finding.evidence is not None
    assert finding.evidence.summary == "DEF-ID-001: it broke"
    assert finding.evidence.repro_command == "harness conform --def mydef.py"


@pytest.mark.rule("CHECKS-REGISTRY-001")
def test_findings_state_why_and_become_outcomes() -> None:
    assert skipped("no file delivery").reason == "not applicable: no file delivery"
    with pytest.raises(ValueError, match="says why"):
        Finding(Status.SKIPPED, "")
    with pytest.raises(ValueError, match="carries evidence"):
        Finding(Status.FAIL, "broken")
    findings = evaluate_def(CLAUDE, rule_ids=["DEF-ID-001", "DEF-BUDGET-001"])
    findings["X-NT-001"] = not_tested("could not run")
    outcomes = to_outcomes("claude", findings, scenario="def")
    by_rule = {o.rule_id: o for o in outcomes}
    assert by_rule["DEF-ID-001"].status is Status.PASS
    assert by_rule["DEF-BUDGET-001"].status is Status.SKIPPED
    assert by_rule["DEF-BUDGET-001"].reason.startswith("not applicable: ")
    assert by_rule["X-NT-001"].status is Status.NOT_TESTED
    assert {o.scenario for o in outcomes} == {"def"}


@pytest.mark.rule("CHECKS-REGISTRY-001")
def test_selecting_an_unknown_rule_is_an_error() -> None:
    with pytest.raises(KeyError, match="no def-level check"):
        evaluate_def(CLAUDE, rule_ids=["RUN-TOOL-PAIR-001"])
