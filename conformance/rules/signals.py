"""Rules of a run that ends by a signal: nothing of the user's is lost, nothing leaks.

Enforced by :mod:`harness.runner.engine` (the run loop and the signal wiring),
:mod:`harness.commands.run`, :mod:`harness.mcp.apply` and :mod:`harness.mcp.journal`;
tests in ``tests/runner/test_signals.py``, ``tests/mcp/test_journal.py`` and
``tests/recording/test_record_cli.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        id="SIG-RACE-001",
        tier=Tier.MANDATORY,
        statement=(
            "A cancellation of the task awaiting a run is never swallowed, even when it lands "
            "in the same loop turn as the CLI's output: the tree is reaped and it propagates."
        ),
        citation="design §Reliability",
    ),
)
