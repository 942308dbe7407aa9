"""RUN-STATUS-001: the close-status verdict, a pure function (ref §10.1), no processes."""

from __future__ import annotations

import signal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.protocols.base import RunStatus
from harness.runner import CloseFacts, RunOutcome, classify_close_status
from harness.runner.status import ended_cleanly

SIGTERM = int(signal.SIGTERM)
SIGKILL = int(getattr(signal, "SIGKILL", 9))

S, F, C = RunOutcome.SUCCEEDED, RunOutcome.FAILED, RunOutcome.CANCELLED


@pytest.mark.rule("RUN-STATUS-001")
@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        # 1. cancel wins over everything, even exit 0 or an error.
        (CloseFacts(cancel_requested=True, exit_code=0), C),
        (CloseFacts(cancel_requested=True, stream_error=True, runner_failed=True), C),
        # 2. the runner's own failure (timeout, spawn) beats a clean exit.
        (CloseFacts(runner_failed=True, exit_code=0), F),
        # 3. session failure / in-stream error flips even exit 0 (ref §1.2, §10.1).
        (CloseFacts(exit_code=0, stream_error=True), F),
        (CloseFacts(exit_code=0, session_status=RunStatus.FAILED), F),
        (CloseFacts(exit_code=0, session_status=RunStatus.CANCELLED), C),
        # 4. exit 0.
        (CloseFacts(exit_code=0), S),
        # 5. clean two-way completion, then SIGTERM (or 130) from the shutdown.
        (CloseFacts(signal=SIGTERM, session_status=RunStatus.COMPLETED), S),
        (CloseFacts(exit_code=130, session_status=RunStatus.COMPLETED), S),
        # ... a SIGTERM without completion is a failure.
        (CloseFacts(signal=SIGTERM), F),
        (CloseFacts(exit_code=130), F),
        # 6./7. artifact salvage (#5528).
        (CloseFacts(signal=SIGTERM, artifact_produced=True), S),
        (CloseFacts(exit_code=2, artifact_produced=True), S),
        (CloseFacts(signal=SIGKILL, artifact_produced=True), F),
        # 8. a clean terminal turn.
        (CloseFacts(exit_code=1, turn_completed_cleanly=True), S),
        (CloseFacts(signal=SIGKILL, turn_completed_cleanly=True), S),
        # otherwise failed.
        (CloseFacts(exit_code=1), F),
        (CloseFacts(signal=SIGKILL), F),
        (CloseFacts(), F),
    ],
)
def test_close_status_follows_ref_10_1_order(facts: CloseFacts, expected: RunOutcome) -> None:
    assert classify_close_status(facts) is expected


_facts = st.builds(
    CloseFacts,
    cancel_requested=st.booleans(),
    runner_failed=st.booleans(),
    exit_code=st.one_of(st.none(), st.integers(min_value=0, max_value=255)),
    signal=st.one_of(st.none(), st.sampled_from([SIGTERM, SIGKILL, 2])),
    session_status=st.one_of(st.none(), st.sampled_from(list(RunStatus))),
    stream_error=st.booleans(),
    turn_completed_cleanly=st.booleans(),
    artifact_produced=st.booleans(),
)


@pytest.mark.rule("RUN-STATUS-001")
@given(_facts)
def test_cancel_and_failures_dominate(facts: CloseFacts) -> None:
    outcome = classify_close_status(facts)
    if facts.cancel_requested:
        assert outcome is C
    elif facts.runner_failed or facts.stream_error or facts.session_status is RunStatus.FAILED:
        assert outcome is F
    elif facts.exit_code == 0 and facts.session_status is not RunStatus.CANCELLED:
        assert outcome is S


@pytest.mark.rule("RUN-STATUS-001")
@given(_facts)
def test_never_succeeds_without_a_success_signal(facts: CloseFacts) -> None:
    """Success needs exit 0, a clean completion/turn, or salvaged artifacts."""
    if classify_close_status(facts) is S:
        assert (
            facts.exit_code == 0
            or facts.session_status is RunStatus.COMPLETED
            or facts.turn_completed_cleanly
            or facts.artifact_produced
        )


@pytest.mark.rule("FIDELITY-EMPTY-001", "RUN-STATUS-001")
@pytest.mark.parametrize(
    ("facts", "clean"),
    [
        (CloseFacts(exit_code=0), True),
        # ref §10.1 rule 3: the host stopped an agent whose session had completed.
        (CloseFacts(signal=SIGTERM, session_status=RunStatus.COMPLETED), True),
        (CloseFacts(exit_code=130, session_status=RunStatus.COMPLETED), True),
        # The same stop of a session that did not complete, a kill, or a real exit code.
        (CloseFacts(signal=SIGTERM), False),
        (CloseFacts(signal=SIGTERM, session_status=RunStatus.FAILED), False),
        (CloseFacts(signal=SIGKILL, session_status=RunStatus.COMPLETED), False),
        (CloseFacts(exit_code=1, session_status=RunStatus.COMPLETED), False),
    ],
)
def test_a_clean_end_is_exit_0_or_a_stop_after_a_completed_session(
    facts: CloseFacts, clean: bool
) -> None:
    # What decides whether an empty run is reported as empty or as its exit.
    assert ended_cleanly(facts) is clean
