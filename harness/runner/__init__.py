"""The agent runner: one turn of one CLI, from spawn to a reaped process tree.

Modules: :mod:`~harness.runner.engine` (the run loop), :mod:`~harness.runner.proctree`
(owning and stopping the process tree), :mod:`~harness.runner.sessions` (two-way session
setup), :mod:`~harness.runner.conversation` (a conversation turn: plan, run, store),
:mod:`~harness.runner.snapshot` (files written), :mod:`~harness.runner.status` (the
close-status verdict, pure) and :mod:`~harness.runner.types` (request and result).
"""

from __future__ import annotations

from harness.runner.engine import OnEvent, WireTap, is_substantive, run_agent, run_agent_async
from harness.runner.status import CloseFacts, RunOutcome, classify_close_status
from harness.runner.types import RunError, RunErrorCode, RunRequest, RunResult

__all__ = [
    "CloseFacts",
    "OnEvent",
    "RunError",
    "RunErrorCode",
    "RunOutcome",
    "RunRequest",
    "RunResult",
    "WireTap",
    "classify_close_status",
    "is_substantive",
    "run_agent",
    "run_agent_async",
]
