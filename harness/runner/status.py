"""How a finished run is judged: succeeded, failed or cancelled (ref §10.1).

Rules: RUN-STATUS-001.
Design: docs/design/runner.md#harness.runner.status
"""

from __future__ import annotations

import enum
import signal as _signal
from dataclasses import dataclass

from harness.protocols.base import RunStatus

__all__ = ["CloseFacts", "RunOutcome", "classify_close_status", "ended_cleanly"]

#: ref §10.1 rule 3: ``code === 130 && signal === null`` (128 + SIGINT, a shell's exit).
_EXIT_SIGINT = 130
_SIGTERM = int(getattr(_signal, "SIGTERM", 15))


class RunOutcome(str, enum.Enum):
    """The run's verdict (upstream ``'succeeded' | 'failed' | 'canceled'``)."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class CloseFacts:
    """What the runner knows when the process tree is gone."""

    cancel_requested: bool = False
    #: The runner itself failed the run (spawn, budget, timeout, write failure).
    runner_failed: bool = False
    exit_code: int | None = None
    #: The signal that ended the process (POSIX), as a number.
    signal: int | None = None
    #: How the two-way session finished (``None`` for one-way formats or no Finished).
    session_status: RunStatus | None = None
    #: At least one ``error`` event was published.
    stream_error: bool = False
    #: A terminal turn that did not fail was seen (ref §2.1.8 ``turnCompletedCleanly``).
    turn_completed_cleanly: bool = False
    #: Plain-stream artifacts were written into the project this run.
    artifact_produced: bool = False
    #: Nothing a person can use came out: no text, thinking, tool call, artifact or written
    #: file (seed 000 §5.10, seed 002 §4.4; FIDELITY-EMPTY-001).
    empty_output: bool = False


def _ended_by_sigterm_or_130(facts: CloseFacts) -> bool:
    if facts.exit_code is None and facts.signal == _SIGTERM:
        return True
    return facts.exit_code == _EXIT_SIGINT and facts.signal is None


def ended_cleanly(facts: CloseFacts) -> bool:
    """The CLI ended as a finished run ends: exit 0, or a two-way session that completed
    and whose process was then stopped (SIGTERM, or 130: ref §10.1 rule 3). Its exit is
    then no failure of its own, whatever else the run lacks."""
    if facts.exit_code == 0:
        return True
    return facts.session_status is RunStatus.COMPLETED and _ended_by_sigterm_or_130(facts)


def classify_close_status(facts: CloseFacts) -> RunOutcome:
    """ref §10.1 ``classifyChatRunCloseStatus`` plus the failure paths of ref §1.2."""
    if facts.cancel_requested:
        return RunOutcome.CANCELLED  # ref §10.1 rule 1
    if facts.runner_failed:
        return RunOutcome.FAILED
    if facts.session_status is RunStatus.FAILED or facts.stream_error:
        return RunOutcome.FAILED  # ref §1.2 paths 1 and 2; ref §10.1 "flips the run to failed"
    if facts.session_status is RunStatus.CANCELLED:
        return RunOutcome.CANCELLED
    if facts.empty_output:
        return RunOutcome.FAILED  # FIDELITY-EMPTY-001: exit 0 with no output is a failure
    if facts.exit_code == 0:
        return RunOutcome.SUCCEEDED  # ref §10.1 rule 2
    clean_completion = facts.session_status is RunStatus.COMPLETED
    if clean_completion and _ended_by_sigterm_or_130(facts):
        return RunOutcome.SUCCEEDED  # ref §10.1 rule 3 (acpCleanCompletion)
    if facts.artifact_produced and (facts.exit_code == 0 or _ended_by_sigterm_or_130(facts)):
        return RunOutcome.SUCCEEDED  # ref §10.1 rule 5 (#5528 salvage)
    if facts.exit_code is not None and facts.exit_code != 0 and facts.artifact_produced:
        return RunOutcome.SUCCEEDED  # ref §10.1 rule 6
    if facts.turn_completed_cleanly or clean_completion:
        return RunOutcome.SUCCEEDED  # ref §10.1 rule 7
    return RunOutcome.FAILED
