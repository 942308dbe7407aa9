"""Generations of the POSIX argv prompt budget (FIDELITY-BUDGET-001; seed 002 §6.3, ref §4.1).

The numbers are written here by hand from the sources: ref §4.1 (100 000 off darwin,
262 144 on darwin), the code seed 002 §6.3 quotes (120 000 on every platform but win32),
and ref §10.2's legacy guard (the def's own number everywhere).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from conformance.checks import DefSubject
from conformance.checks.fidelity import budget_generation_applies
from conformance.verdicts import Status
from harness.cli import main
from harness.defs.registry import BUILTIN_DEFS, get_agent_def, validate_def
from harness.errors import AgentDefError
from harness.guards.budget import (
    argv_prompt_limit,
    check_prompt_argv_budget,
    check_prompt_budget,
    explain_argv_prompt_limit,
)
from harness.guards.budget_generations import (
    DARWIN_ARGV_PROMPT_BUDGET,
    GENERATIONS,
    POSIX_ARGV_PROMPT_BUDGET,
    SEED_002_POSIX_ARGV_PROMPT_BUDGET,
    BudgetGeneration,
    budgets_for,
)

pytestmark = pytest.mark.rule("FIDELITY-BUDGET-001")

DEEPSEEK = get_agent_def("deepseek", BUILTIN_DEFS)
M = 30_000  # deepseek's max_prompt_arg_bytes (seed 000 §5.11)


def test_each_generation_is_named_with_its_numbers_and_source() -> None:
    assert (POSIX_ARGV_PROMPT_BUDGET, DARWIN_ARGV_PROMPT_BUDGET) == (100_000, 262_144)
    assert SEED_002_POSIX_ARGV_PROMPT_BUDGET == 120_000
    assert set(GENERATIONS) == set(BudgetGeneration)
    assert GENERATIONS[BudgetGeneration.CURRENT].source.startswith("ref §4.1")
    assert GENERATIONS[BudgetGeneration.SEED_002].source.startswith("seed 002 §6.3")
    assert GENERATIONS[BudgetGeneration.LEGACY].source.startswith("ref §10.2")
    with pytest.raises(ValueError, match="known: current, seed-002, legacy"):
        budgets_for("newest")


@pytest.mark.parametrize(
    ("generation", "linux", "darwin", "win32"),
    [
        (BudgetGeneration.CURRENT, 100_000, 262_144, M),
        (BudgetGeneration.SEED_002, 120_000, 120_000, M),
        (BudgetGeneration.LEGACY, M, M, M),
    ],
)
def test_the_limit_per_platform_and_generation(
    generation: BudgetGeneration, linux: int, darwin: int, win32: int
) -> None:
    got = {p: argv_prompt_limit(M, p, generation) for p in ("linux", "darwin", "win32")}
    assert got == {"linux": linux, "darwin": darwin, "win32": win32}
    # A def number above the platform budget wins (the budget is a floor).
    assert argv_prompt_limit(500_000, "linux", generation) == 500_000
    assert explain_argv_prompt_limit(M, "linux", generation).bytes == linux


def test_the_def_names_its_generation_and_a_run_may_ask_for_another() -> None:
    prompt = "x" * 110_000
    assert DEEPSEEK.prompt_budget_generation is BudgetGeneration.CURRENT
    refused = check_prompt_argv_budget(DEEPSEEK, prompt, "linux")
    assert refused is not None and refused.limit == 100_000
    assert check_prompt_argv_budget(DEEPSEEK, prompt, "linux", BudgetGeneration.SEED_002) is None
    seed_def = dataclasses.replace(DEEPSEEK, prompt_budget_generation=BudgetGeneration.SEED_002)
    assert check_prompt_argv_budget(seed_def, prompt, "linux") is None
    legacy = check_prompt_argv_budget(seed_def, prompt, "linux", BudgetGeneration.LEGACY)
    assert legacy is not None and legacy.limit == M
    check_prompt_budget(
        seed_def, prompt, platform="darwin", resolved_bin="/usr/bin/deepseek", args=[prompt]
    )


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_harness_argv_checks_either_generation(capsys: pytest.CaptureFixture[str]) -> None:
    prompt = "x" * 110_000
    base: Sequence[str] = ("argv", "deepseek", "--platform", "linux", "--json", "--prompt", prompt)
    code, out, _ = _run(capsys, *base)
    report = json.loads(out)
    assert report["budget"]["ok"] is False and report["budget"]["limit"] == 100_000
    assert report["budget_generation"]["name"] == "current"
    code, out, _ = _run(capsys, *base, "--budget-generation", "seed-002")
    report = json.loads(out)
    assert code == 0 and report["budget"] == {"ok": True}
    assert report["prompt_limit"]["bytes"] == 120_000
    assert report["budget_generation"]["source"].startswith("seed 002 §6.3")
    code, _, err = _run(capsys, "argv", "deepseek", "--budget-generation", "newest")
    assert code == 2 and "--budget-generation: unknown prompt budget generation" in err


def test_the_conform_check_judges_the_defs_generation() -> None:
    for generation in BudgetGeneration:
        defn = dataclasses.replace(DEEPSEEK, prompt_budget_generation=generation)
        finding = budget_generation_applies(DefSubject(defn=defn))
        assert finding.status is Status.PASS, finding
        assert generation.value in finding.reason
    bogus = dataclasses.replace(DEEPSEEK, prompt_budget_generation="newest")  # type: ignore[arg-type]
    finding = budget_generation_applies(DefSubject(defn=bogus))
    assert finding.status is Status.FAIL and finding.evidence is not None
    assert "names no known generation" in finding.evidence.summary
    with pytest.raises(AgentDefError, match="prompt_budget_generation") as info:
        validate_def(bogus)
    assert info.value.rule == "FIDELITY-BUDGET-001"
    stdin_def = get_agent_def("claude", BUILTIN_DEFS)
    assert budget_generation_applies(DefSubject(defn=stdin_def)).status is Status.SKIPPED


def test_conform_judges_every_def_with_the_generation_asked_for(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    args = ["conform", "--agent", "deepseek", "--rule", "FIDELITY-BUDGET-001", "--report", "json"]
    code = main([*args, "--out", str(out), "--budget-generation", "seed-002"])
    report = json.loads((out / "conform.json").read_text(encoding="utf-8"))
    cells = {(c["def_id"], c["rule_id"]): c for c in report["cells"]}
    assert code == 0, report["reasons"]
    cell = cells[("deepseek", "FIDELITY-BUDGET-001")]
    assert cell["disposition"] == "pass" and "seed-002" in json.dumps(cell)
    capsys.readouterr()
    code = main([*args, "--out", str(out), "--budget-generation", "newest"])
    assert code == 2
    assert "--budget-generation 'newest': expected one of current" in capsys.readouterr().err
