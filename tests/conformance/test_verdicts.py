"""The verdict model: priority, dispositions, exit codes, flaky re-runs.

CONFORM-VERDICT-001, CONFORM-EXIT-001, CONFORM-BASELINE-001,
CONFORM-BASELINE-STALE-001, CONFORM-FLAKY-001, CONFORM-EVIDENCE-001.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.evidence import Direction, Evidence, Frame
from conformance.rules import Tier
from conformance.verdicts import (
    EXIT_NOT_CONFORMANT,
    EXIT_OK,
    STATUS_PRIORITY,
    Disposition,
    Outcome,
    Status,
    fails_run,
    fold_attempts,
    judge,
    should_rerun,
    worst,
)
from tests.conformance import (
    DEFS,
    RULE_IDS,
    RULES,
    evidence,
    outcome,
    sample_verdict,
    verdict_of,
)

RULE_OF_TIER = {
    Tier.MANDATORY: "DEMO-STREAM-001",
    Tier.CAPABILITY: "DEMO-RESUME-001",
    Tier.ADVISORY: "DEMO-USAGE-001",
}
P, F, S, N = Status.PASS, Status.FAIL, Status.SKIPPED, Status.NOT_TESTED

# --- priority (CONFORM-VERDICT-001) -------------------------------------------------------


@pytest.mark.rule("CONFORM-VERDICT-001")
def test_status_priority_is_explicit_and_total() -> None:
    assert sorted(Status, key=STATUS_PRIORITY.__getitem__) == [F, N, P, S]


@pytest.mark.rule("CONFORM-VERDICT-001")
@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ((P,), P),
        ((P, F), F),
        ((F, P, S, N), F),
        ((N, P), N),
        ((P, S), P),
        ((S, S), S),
        ((S, N), N),
        ((S, F), F),
    ],
)
def test_a_cell_takes_the_worst_status_of_its_scenarios(
    statuses: Sequence[Status], expected: Status
) -> None:
    outcomes = [
        outcome("alpha", "DEMO-STREAM-001", s, scenario=f"s{i}") for i, s in enumerate(statuses)
    ]
    cell = verdict_of(outcomes).cell("alpha", "DEMO-STREAM-001")
    assert cell is not None
    assert cell.status is expected
    assert cell.disposition.value == expected.value
    assert len(cell.outcomes) == len(statuses)


@pytest.mark.rule("CONFORM-VERDICT-001")
@given(st.lists(st.sampled_from(list(Status)), min_size=1, max_size=8), st.randoms())
def test_worst_is_order_independent(statuses: list[Status], rnd: random.Random) -> None:
    shuffled = list(statuses)
    rnd.shuffle(shuffled)
    assert worst(shuffled) is worst(statuses)
    assert all(STATUS_PRIORITY[worst(statuses)] <= STATUS_PRIORITY[s] for s in statuses)
    outcomes = [
        outcome("alpha", "DEMO-STREAM-001", s, scenario=f"s{i}") for i, s in enumerate(statuses)
    ]
    forward = verdict_of(outcomes).cell("alpha", "DEMO-STREAM-001")
    backward = verdict_of(reversed(outcomes)).cell("alpha", "DEMO-STREAM-001")
    assert forward is not None and backward is not None
    assert forward.status is backward.status is worst(statuses)


@pytest.mark.rule("CONFORM-VERDICT-001")
def test_an_applicable_rule_without_outcomes_is_not_tested() -> None:
    verdict = verdict_of(
        [outcome("alpha", "DEMO-STREAM-001", P)],
        applicable={"alpha": ["DEMO-STREAM-001", "DEMO-STREAM-002"], "beta-cli": []},
    )
    missing = verdict.cell("alpha", "DEMO-STREAM-002")
    assert missing is not None
    assert missing.status is N
    assert missing.outcomes == ()
    assert "no check ran" in missing.reason
    assert verdict.defs == ("alpha", "beta-cli")
    assert verdict.cell("beta-cli", "DEMO-STREAM-001") is None  # not applicable: no cell
    assert verdict.exit_code == EXIT_NOT_CONFORMANT


@pytest.mark.rule("CONFORM-VERDICT-001")
def test_unknown_rule_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="DEMO-NOPE-001"):
        verdict_of([outcome("alpha", "DEMO-NOPE-001", P)])
    with pytest.raises(ValueError, match="DEMO-NOPE-002"):
        verdict_of([], applicable={"alpha": ["DEMO-NOPE-002"]})


@pytest.mark.rule("CONFORM-VERDICT-001")
@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"rule_id": "bad"}, "rule id"),
        ({"def_id": "has space"}, "def id"),
        ({"status": "maybe"}, "not one of"),
        ({"attempt": 0}, "attempt"),
        ({"duration_ms": -1.0}, "duration_ms"),
        ({"status": Status.SKIPPED, "reason": " "}, "must say why"),
        ({"status": Status.NOT_TESTED, "reason": ""}, "must say why"),
    ],
)
def test_outcome_rejects_malformed_fields(kwargs: dict[str, object], problem: str) -> None:
    base: dict[str, object] = {"rule_id": "DEMO-STREAM-001", "def_id": "alpha", "status": P}
    base.update(kwargs)
    with pytest.raises(ValueError, match=problem):
        Outcome(**base)  # type: ignore[arg-type]


# --- evidence (CONFORM-EVIDENCE-001) ------------------------------------------------------


@pytest.mark.rule("CONFORM-EVIDENCE-001")
def test_a_fail_outcome_must_carry_evidence() -> None:
    with pytest.raises(ValueError, match="must carry evidence"):
        Outcome("DEMO-STREAM-001", "alpha", F, reason="broken")
    ok = Outcome("DEMO-STREAM-001", "alpha", F, reason="broken", evidence=evidence())
    cell = verdict_of([ok]).cell("alpha", "DEMO-STREAM-001")
    assert cell is not None and cell.evidence is ok.evidence


@pytest.mark.rule("CONFORM-EVIDENCE-001")
def test_evidence_needs_a_summary_and_a_reproduce_command() -> None:
    with pytest.raises(ValueError, match="summary"):
        Evidence(summary=" ", repro_command="harness conform")
    with pytest.raises(ValueError, match="one line"):
        Evidence(summary="two\nlines", repro_command="harness conform")
    with pytest.raises(ValueError, match="repro_command"):
        Evidence(summary="broken", repro_command="")
    with pytest.raises(ValueError, match="frame dir"):
        Frame("sideways", "x")  # type: ignore[arg-type]


@pytest.mark.rule("CONFORM-EVIDENCE-001")
def test_bounded_evidence_keeps_the_tail_and_counts_what_it_cut() -> None:
    frames = [Frame(Direction.STDOUT, f"line {i}") for i in range(10)]
    frames.append(Frame(Direction.STDIN, "x" * 1000))
    ev = Evidence.bounded(
        summary="too much output",
        repro_command="harness conform --agent alpha",
        transcript=frames,
        stderr="a" * 50 + "TAIL",
        max_frames=4,
        max_frame_chars=100,
        max_stderr_chars=10,
    )
    assert [f.data for f in ev.transcript_slice[:3]] == ["line 7", "line 8", "line 9"]
    assert ev.omitted_frames == 7
    big = ev.transcript_slice[3]
    assert big.dir is Direction.STDIN
    assert big.elided_chars == 900
    assert big.data.startswith("x" * 50) and big.data.endswith("x" * 50)
    assert "[900 characters elided]" in big.data
    assert ev.stderr_tail == "a" * 6 + "TAIL"
    assert ev.stderr_omitted_chars == 44
    assert Evidence.from_json(ev.to_json()) == ev


@pytest.mark.rule("CONFORM-EVIDENCE-001")
def test_evidence_accepts_frames_as_mappings() -> None:
    ev = Evidence(
        summary="s",
        repro_command="r",
        transcript_slice=({"dir": "stdin", "data": "in"}, {"dir": "stdout", "data": "out"}),  # type: ignore[arg-type]
    )
    assert ev.transcript_slice == (Frame(Direction.STDIN, "in"), Frame(Direction.STDOUT, "out"))


# --- exit codes for every tier × result (CONFORM-EXIT-001 and the lists) -------------------

# (name, outcome statuses by attempt, listed in baseline, listed flaky, expected disposition)
CASES: list[tuple[str, Sequence[Status] | None, bool, bool, Disposition]] = [
    ("pass", [P], False, False, Disposition.PASS),
    ("fail", [F], False, False, Disposition.FAIL),
    ("skipped", [S], False, False, Disposition.SKIPPED),
    ("not tested", [N], False, False, Disposition.NOT_TESTED),
    ("no outcome at all", None, False, False, Disposition.NOT_TESTED),
    ("fail, baselined", [F], True, False, Disposition.EXPECTED_FAIL),
    ("not tested, baselined", [N], True, False, Disposition.EXPECTED_FAIL),
    ("pass, baselined", [P], True, False, Disposition.STALE),
    ("skipped, baselined", [S], True, False, Disposition.SKIPPED),
    ("flaky: fail then pass", [F, F, P], False, True, Disposition.FLAKY),
    ("flaky listed, fails every attempt", [F, F, F], False, True, Disposition.FAIL),
    ("flaky listed, passes first time", [P], False, True, Disposition.PASS),
    ("flaky listed and baselined, passes", [P], True, True, Disposition.PASS),
    ("flaky listed and baselined, fail then pass", [F, P], True, True, Disposition.FLAKY),
    ("flaky listed and baselined, fails", [F, F], True, True, Disposition.EXPECTED_FAIL),
    ("re-run of an unlisted check never hides a fail", [F, P], False, False, Disposition.FAIL),
]
# Which dispositions fail the run, per tier (design §Conformance model).
FAILS = {
    Tier.MANDATORY: {Disposition.FAIL, Disposition.NOT_TESTED, Disposition.STALE},
    Tier.CAPABILITY: {Disposition.FAIL, Disposition.STALE},
    Tier.ADVISORY: {Disposition.STALE},
}


@pytest.mark.rule(
    "CONFORM-EXIT-001",
    "CONFORM-BASELINE-001",
    "CONFORM-BASELINE-STALE-001",
    "CONFORM-FLAKY-001",
)
@pytest.mark.parametrize("tier", list(Tier), ids=lambda t: t.value)
@pytest.mark.parametrize(
    ("attempts", "baselined", "flaky", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_disposition_and_exit_code_for_every_tier(
    tier: Tier,
    attempts: Sequence[Status] | None,
    baselined: bool,
    flaky: bool,
    expected: Disposition,
) -> None:
    rule_id = RULE_OF_TIER[tier]
    outcomes = [
        outcome("alpha", rule_id, s, scenario="main", attempt=i)
        for i, s in enumerate(attempts or (), start=1)
    ]
    verdict = verdict_of(
        outcomes,
        applicable={"alpha": [rule_id]},
        baseline=f"alpha:{rule_id}\n" if baselined else "",
        flaky=f"alpha:{rule_id}\n" if flaky else "",
    )
    cell = verdict.cell("alpha", rule_id)
    assert cell is not None
    assert cell.disposition is expected
    should_fail = expected in FAILS[tier]
    assert cell.fails_run is should_fail
    assert verdict.exit_code == (EXIT_NOT_CONFORMANT if should_fail else EXIT_OK)
    assert verdict.conformant is not should_fail
    assert bool(verdict.stale_entries) is (expected is Disposition.STALE)
    assert bool(verdict.reasons()) is should_fail


@pytest.mark.rule("CONFORM-EXIT-001")
def test_fails_run_table_is_exhaustive() -> None:
    for tier, disposition in itertools.product(Tier, Disposition):
        assert fails_run(tier, disposition) is (disposition in FAILS[tier]), (tier, disposition)


def _with(outcomes: list[Outcome], def_id: str, rule_id: str, status: Status) -> list[Outcome]:
    """``outcomes`` with the one for (def_id, rule_id) replaced by ``status``."""
    return [
        outcome(def_id, rule_id, status) if (o.def_id, o.rule_id) == (def_id, rule_id) else o
        for o in outcomes
    ]


@pytest.mark.rule("CONFORM-EXIT-001")
def test_one_cell_decides_the_exit_code_of_the_whole_matrix() -> None:
    passing = [outcome(d, r, P) for d in DEFS for r in RULE_IDS]
    assert verdict_of(passing).exit_code == EXIT_OK
    assert verdict_of(_with(passing, "alpha", "DEMO-USAGE-002", F)).exit_code == EXIT_OK
    assert verdict_of(_with(passing, "beta-cli", "DEMO-MCP-001", N)).exit_code == EXIT_OK
    assert verdict_of(_with(passing, "gamma.v2", "DEMO-MCP-001", S)).exit_code == EXIT_OK
    failing = verdict_of(_with(passing, "gamma.v2", "DEMO-STREAM-002", F))
    assert failing.exit_code == EXIT_NOT_CONFORMANT
    assert [(c.def_id, c.rule_id) for c in failing.failing_cells] == [
        ("gamma.v2", "DEMO-STREAM-002")
    ]
    assert verdict_of(_with(passing, "beta-cli", "DEMO-MCP-001", F)).exit_code == 1
    assert verdict_of(_with(passing, "alpha", "DEMO-STREAM-001", N)).exit_code == 1


@pytest.mark.rule("CONFORM-EXIT-001", "CONFORM-BASELINE-STALE-001", "CONFORM-FLAKY-001")
def test_sample_verdict_has_every_disposition() -> None:
    verdict = sample_verdict()
    counts = verdict.counts()
    assert counts == {
        Disposition.FAIL: 3,
        Disposition.STALE: 1,
        Disposition.NOT_TESTED: 1,
        Disposition.FLAKY: 1,
        Disposition.EXPECTED_FAIL: 1,
        Disposition.PASS: 9,
        Disposition.SKIPPED: 2,
    }
    assert len(verdict.cells) == 18
    assert verdict.exit_code == EXIT_NOT_CONFORMANT
    assert verdict.reasons() == [
        "1 mandatory cell fails",
        "1 capability cell fails",
        "1 mandatory cell is not tested",
        "1 capability cell passes but is still listed in the baseline (stale)",
    ]
    stale = verdict.cell("beta-cli", "DEMO-RESUME-001")
    assert stale is not None
    assert "baseline.txt:3" in stale.reason and "remove the entry" in stale.reason
    by_tier = verdict.counts_by_tier()
    assert by_tier[Tier.ADVISORY][Disposition.FAIL] == 1
    assert sum(sum(c.values()) for c in verdict.counts_by_def().values()) == 18


# --- flaky re-runs (CONFORM-FLAKY-001) --------------------------------------------------


@pytest.mark.rule("CONFORM-FLAKY-001")
@pytest.mark.parametrize(
    ("attempts", "listed", "max_reruns", "rerun"),
    [
        ([F], True, 2, True),
        ([F, F], True, 2, True),
        ([F, F, F], True, 2, False),  # the first run + 2 re-runs: done
        ([F, P], True, 2, False),  # passed: no more
        ([P], True, 2, False),
        ([N], True, 2, False),  # only failures are re-run
        ([S], True, 2, False),
        ([F], False, 2, False),  # not listed flaky: never re-run
        ([F], True, 0, False),
        ([], True, 2, False),
    ],
)
def test_should_rerun(attempts: list[Status], listed: bool, max_reruns: int, rerun: bool) -> None:
    assert should_rerun(attempts, flaky_listed=listed, max_reruns=max_reruns) is rerun


@pytest.mark.rule("CONFORM-FLAKY-001")
def test_rerun_loop_driven_by_should_rerun_ends_flaky_or_fail() -> None:
    """Drive the decision function the way the runner does, with scripted attempt results."""

    def drive(script: list[Status], listed: bool) -> Disposition:
        attempts: list[Outcome] = []
        results = iter(script)
        while not attempts or should_rerun(
            [o.status for o in attempts], flaky_listed=listed, max_reruns=2
        ):
            attempts.append(
                outcome(
                    "gamma.v2",
                    "DEMO-MCP-001",
                    next(results),
                    scenario="mcp",
                    attempt=len(attempts) + 1,
                )
            )
        flaky = "gamma.v2:DEMO-MCP-001" if listed else ""
        cell = verdict_of(attempts, flaky=flaky).cell("gamma.v2", "DEMO-MCP-001")
        assert cell is not None
        return cell.disposition

    assert drive([F, P], listed=True) is Disposition.FLAKY
    assert drive([F, F, P], listed=True) is Disposition.FLAKY
    assert drive([F, F, F, P], listed=True) is Disposition.FAIL  # the pass would be a 4th run
    assert drive([F, P], listed=False) is Disposition.FAIL
    assert drive([P], listed=True) is Disposition.PASS


@pytest.mark.rule("CONFORM-FLAKY-001")
def test_flaky_cell_keeps_the_failed_attempts_evidence() -> None:
    failed = outcome("gamma.v2", "DEMO-MCP-001", F, scenario="mcp", attempt=1, reason="timeout")
    passed = outcome("gamma.v2", "DEMO-MCP-001", P, scenario="mcp", attempt=2)
    cell = verdict_of([passed, failed], flaky="gamma.v2:*").cell("gamma.v2", "DEMO-MCP-001")
    assert cell is not None
    assert cell.disposition is Disposition.FLAKY and cell.flaky
    assert cell.evidence is failed.evidence
    assert "re-run" in cell.reason and "timeout" in cell.reason
    assert [e.text for e in cell.flaky_entries] == ["gamma.v2:*"]


@pytest.mark.rule("CONFORM-FLAKY-001")
def test_a_real_failure_in_another_scenario_is_not_hidden_by_a_flaky_one() -> None:
    outcomes = [
        outcome("gamma.v2", "DEMO-MCP-001", F, scenario="a", attempt=1),
        outcome("gamma.v2", "DEMO-MCP-001", P, scenario="a", attempt=2),
        outcome("gamma.v2", "DEMO-MCP-001", F, scenario="b", attempt=1, reason="b broke"),
        outcome("gamma.v2", "DEMO-MCP-001", F, scenario="b", attempt=2, reason="b broke"),
    ]
    cell = verdict_of(outcomes, flaky="DEMO-MCP-001").cell("gamma.v2", "DEMO-MCP-001")
    assert cell is not None
    assert cell.disposition is Disposition.FAIL
    assert "failed all 2 attempts" in cell.reason


@pytest.mark.rule("CONFORM-FLAKY-001")
def test_fold_attempts_refuses_duplicate_attempt_numbers() -> None:
    twice = [outcome("alpha", "DEMO-STREAM-001", P), outcome("alpha", "DEMO-STREAM-001", F)]
    with pytest.raises(ValueError, match="duplicate attempt"):
        fold_attempts(twice, flaky_listed=True)
    with pytest.raises(ValueError, match="no attempts"):
        fold_attempts([], flaky_listed=False)
    with pytest.raises(ValueError, match="max_reruns"):
        should_rerun([F], flaky_listed=True, max_reruns=-1)


@pytest.mark.rule("CONFORM-VERDICT-001")
def test_judge_defaults_to_the_real_catalog() -> None:
    verdict = judge([outcome("alpha", "CONFORM-VERDICT-001", P)])
    cell = verdict.cell("alpha", "CONFORM-VERDICT-001")
    assert cell is not None and cell.tier is Tier.MANDATORY
    assert list(verdict.rules) == ["CONFORM-VERDICT-001"]
    assert RULES  # the synthetic catalog is separate from the real one
