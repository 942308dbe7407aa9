"""Baselines and flaky lists: the file format and what entries mean.

CONFORM-BASELINE-FILE-001 (syntax, errors with file and line), CONFORM-BASELINE-001
(expected failures, wildcards), CONFORM-BASELINE-STALE-001 (stale entries),
CONFORM-FLAKY-001 (a flaky pass never makes the baseline stale).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.baseline import (
    BaselineError,
    Scope,
    load_baseline,
    load_flaky,
    parse_entries,
)
from conformance.verdicts import EXIT_NOT_CONFORMANT, EXIT_OK, Disposition, Status, judge
from tests.conformance import RULES, entries, outcome, verdict_of

P, F, S, N = Status.PASS, Status.FAIL, Status.SKIPPED, Status.NOT_TESTED

# --- the file format (CONFORM-BASELINE-FILE-001) -------------------------------------


@pytest.mark.rule("CONFORM-BASELINE-FILE-001")
def test_parses_entries_comments_and_notes(tmp_path: Path) -> None:
    path = tmp_path / "baseline.txt"
    path.write_text(
        "\ufeff# known gaps of alpha\n"
        "\n"
        "alpha:DEMO-STREAM-002   # upstream bug 42\n"
        "   DEMO-USAGE-001\n"
        "beta-cli:*#whole def\n"
        "gamma.v2:DEMO-MCP-001 # note with # inside\n",
        encoding="utf-8",
    )
    baseline = load_baseline(path, known_rules=RULES)
    assert baseline.kind == "baseline"
    assert [(e.text, e.scope, e.line, e.note) for e in baseline.entries] == [
        ("alpha:DEMO-STREAM-002", Scope.CELL, 3, "upstream bug 42"),
        ("DEMO-USAGE-001", Scope.RULE, 4, ""),
        ("beta-cli:*", Scope.DEF, 5, "whole def"),
        ("gamma.v2:DEMO-MCP-001", Scope.CELL, 6, "note with # inside"),
    ]
    assert baseline.entries[0].where == f"{path}:3"
    assert len(baseline) == 4
    assert load_flaky(path).kind == "flaky"


@pytest.mark.rule("CONFORM-BASELINE-FILE-001")
def test_empty_and_comment_only_files_are_empty_lists() -> None:
    assert entries("").entries == ()
    assert entries("# nothing yet\n\n   \n").entries == ()


@pytest.mark.rule("CONFORM-BASELINE-FILE-001")
@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("alpha:DEMO-STREAM-001\nalpha\n", 2, "write 'alpha:\\*'"),
        ("*\n", 1, "every rule of every def"),
        ("*:*\n", 1, "every rule of every def"),
        ("*:DEMO-STREAM-001\n", 1, "a bare rule id"),
        ("alpha:\n", 1, "no rule id after ':'"),
        ("al pha:DEMO-STREAM-001\n", 1, "one entry per line"),
        ("alpha:DEMO-STREAM-001 beta-cli:*\n", 1, "one entry per line"),
        ("-alpha:DEMO-STREAM-001\n", 1, "def id '-alpha'"),
        ("alpha:demo-stream-001\n", 1, "is not a rule id"),
        ("alpha:DEMO-STREAM-009\n", 1, "unknown rule id 'DEMO-STREAM-009'; did you mean"),
        ("# c\nDEMO-USAGE-001\n\nDEMO-USAGE-001  # again\n", 4, "duplicate .* line 2"),
        ("a/b\n", 1, "neither a rule id"),
    ],
)
def test_bad_entries_name_the_file_and_line(text: str, line: int, problem: str) -> None:
    with pytest.raises(BaselineError, match=problem) as info:
        parse_entries(text, source="gaps.txt", known_rules=RULES)
    err = info.value
    assert err.source == "gaps.txt"
    assert err.line == line
    assert str(err).startswith(f"[CONFORM-BASELINE-FILE-001] gaps.txt:{line}: ")
    assert err.code == "CONFORM_BASELINE_INVALID"


@pytest.mark.rule("CONFORM-BASELINE-FILE-001")
def test_rule_ids_are_only_checked_against_a_catalog_when_one_is_given() -> None:
    assert parse_entries("alpha:DEMO-STREAM-009\n", source="x").entries[0].rule_id == (
        "DEMO-STREAM-009"
    )


@pytest.mark.rule("CONFORM-BASELINE-FILE-001")
def test_unreadable_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="cannot read baseline file") as info:
        load_baseline(tmp_path / "missing.txt")
    assert info.value.line is None
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"alpha:DEMO-STREAM-001\n# caf\xe9\n")
    with pytest.raises(BaselineError, match="not UTF-8") as info:
        load_flaky(bad)
    assert info.value.line == 2
    assert str(bad) in str(info.value)


# --- what entries mean (CONFORM-BASELINE-001, CONFORM-BASELINE-STALE-001) ------------


@pytest.mark.rule("CONFORM-BASELINE-001")
def test_a_def_wildcard_expects_every_failure_of_that_def_only() -> None:
    outcomes = [
        outcome("alpha", "DEMO-STREAM-001", F),
        outcome("alpha", "DEMO-STREAM-002", N),
        outcome("alpha", "DEMO-USAGE-001", P),
        outcome("beta-cli", "DEMO-STREAM-001", F),
    ]
    verdict = verdict_of(outcomes, baseline="alpha:*  # porting in progress\n")
    dispositions = {(c.def_id, c.rule_id): c.disposition for c in verdict.cells}
    assert dispositions == {
        ("alpha", "DEMO-STREAM-001"): Disposition.EXPECTED_FAIL,
        ("alpha", "DEMO-STREAM-002"): Disposition.EXPECTED_FAIL,
        # The entry still covers failures, so a pass under it is not stale.
        ("alpha", "DEMO-USAGE-001"): Disposition.PASS,
        ("beta-cli", "DEMO-STREAM-001"): Disposition.FAIL,
    }
    assert verdict.stale_entries == ()
    assert verdict.exit_code == EXIT_NOT_CONFORMANT  # beta-cli's failure is not listed
    alpha = verdict.cell("alpha", "DEMO-STREAM-001")
    assert alpha is not None
    assert [(e.text, e.note) for e in alpha.baseline_entries] == [
        ("alpha:*", "porting in progress")
    ]


@pytest.mark.rule("CONFORM-BASELINE-001")
def test_a_bare_rule_entry_covers_every_def() -> None:
    outcomes = [outcome(d, "DEMO-STREAM-001", F) for d in ("alpha", "beta-cli", "gamma.v2")]
    verdict = verdict_of(outcomes, baseline="DEMO-STREAM-001\n")
    assert {c.disposition for c in verdict.cells} == {Disposition.EXPECTED_FAIL}
    assert verdict.exit_code == EXIT_OK


@pytest.mark.rule("CONFORM-BASELINE-STALE-001")
@pytest.mark.parametrize(
    ("baseline", "stale"),
    [
        ("alpha:DEMO-STREAM-001\n", ["alpha:DEMO-STREAM-001"]),
        ("alpha:*\n", []),  # alpha:DEMO-STREAM-002 still fails
        ("beta-cli:*\n", ["beta-cli:*"]),  # everything of beta-cli passes or is skipped
        ("DEMO-STREAM-001\n", ["DEMO-STREAM-001"]),  # passes for every def now
        ("DEMO-STREAM-002\n", []),  # still fails for alpha
        ("beta-cli:DEMO-MCP-001\n", []),  # skipped: tolerated, not stale
    ],
)
def test_an_entry_is_stale_when_no_cell_it_covers_still_fails(
    baseline: str, stale: list[str]
) -> None:
    outcomes = [
        outcome("alpha", "DEMO-STREAM-001", P),
        outcome("alpha", "DEMO-STREAM-002", F),
        outcome("beta-cli", "DEMO-STREAM-001", P),
        outcome("beta-cli", "DEMO-STREAM-002", P),
        outcome("beta-cli", "DEMO-MCP-001", S),
    ]
    verdict = verdict_of(outcomes, baseline=baseline)
    assert [e.text for e in verdict.stale_entries] == stale
    stale_cells = [c for c in verdict.cells if c.disposition is Disposition.STALE]
    assert bool(stale_cells) is bool(stale)
    for cell in stale_cells:
        assert cell.status is P
        assert "baseline.txt:1" in cell.reason
    unlisted_fail = any(c.disposition is Disposition.FAIL for c in verdict.cells)
    assert verdict.exit_code == (EXIT_NOT_CONFORMANT if stale or unlisted_fail else EXIT_OK)


@pytest.mark.rule("CONFORM-BASELINE-STALE-001")
def test_entries_matching_nothing_are_reported_not_failed() -> None:
    verdict = verdict_of(
        [outcome("alpha", "DEMO-STREAM-001", P)],
        baseline="zeta:DEMO-STREAM-001\nDEMO-USAGE-002\n",
    )
    assert [e.text for e in verdict.unmatched_entries] == ["zeta:DEMO-STREAM-001", "DEMO-USAGE-002"]
    assert verdict.stale_entries == ()
    assert verdict.exit_code == EXIT_OK


@pytest.mark.rule("CONFORM-BASELINE-STALE-001")
def test_entries_about_defs_this_run_did_not_judge_are_not_noted() -> None:
    """``--agent alpha``: beta-cli exists but was not judged, so its entry is no news; a
    def id nothing knows (a typo) and a rule-wide entry still are."""
    verdict = judge(
        [outcome("alpha", "DEMO-STREAM-001", P)],
        rules=RULES,
        baseline=entries("beta-cli:DEMO-STREAM-001\nzeta:DEMO-STREAM-001\nDEMO-USAGE-002\n"),
        known_defs=("alpha", "beta-cli"),
    )
    assert [e.text for e in verdict.unmatched_entries] == ["zeta:DEMO-STREAM-001", "DEMO-USAGE-002"]


@pytest.mark.rule("CONFORM-FLAKY-001", "CONFORM-BASELINE-STALE-001")
@pytest.mark.parametrize(
    "statuses",
    [[P], [F, P]],
    ids=["passes first time", "fails then passes"],
)
def test_a_flaky_pass_never_makes_the_baseline_stale(statuses: list[Status]) -> None:
    outcomes = [
        outcome("gamma.v2", "DEMO-MCP-001", s, scenario="mcp", attempt=i)
        for i, s in enumerate(statuses, start=1)
    ]
    flaky_listed = verdict_of(outcomes, baseline="gamma.v2:DEMO-MCP-001\n", flaky="DEMO-MCP-001\n")
    assert flaky_listed.stale_entries == ()
    assert flaky_listed.exit_code == EXIT_OK
    # The same pass without the flaky entry makes the baseline stale.
    not_listed = verdict_of(outcomes[-1:], baseline="gamma.v2:DEMO-MCP-001\n")
    assert [e.text for e in not_listed.stale_entries] == ["gamma.v2:DEMO-MCP-001"]
    assert not_listed.exit_code == EXIT_NOT_CONFORMANT


@pytest.mark.rule("CONFORM-FLAKY-001")
def test_flaky_lists_use_the_baseline_syntax_and_wildcards() -> None:
    flaky = entries("gamma.v2:*\nDEMO-USAGE-001\n", kind="flaky")
    assert flaky.lists("gamma.v2", "DEMO-STREAM-001")
    assert flaky.lists("alpha", "DEMO-USAGE-001")
    assert not flaky.lists("alpha", "DEMO-STREAM-001")
    assert [e.text for e in flaky.matching("gamma.v2", "DEMO-USAGE-001")] == [
        "gamma.v2:*",
        "DEMO-USAGE-001",
    ]
