"""Rules of a run that ends by a signal: nothing of the user's is lost, nothing leaks.

Enforced by :mod:`harness.runner.engine` (the run loop and the signal wiring),
:mod:`harness.commands.run`, :mod:`harness.mcp.apply`, :mod:`harness.mcp.journal` and
:mod:`harness.runtime.watchdog`; tests in ``tests/runner/test_signals.py``,
``tests/runner/test_watchdog.py``, ``tests/mcp/test_journal.py`` and
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
    Rule(
        id="SIG-CANCEL-001",
        tier=Tier.MANDATORY,
        statement=(
            "SIGINT, SIGTERM or SIGHUP to 'harness run' cancels the run by the --cancel-after "
            "ladder: the tree is reaped, injected files and temp dirs are removed or restored, "
            "the events and summary are printed, no traceback, and it exits 128 + signum."
        ),
        citation="design §Reliability",
    ),
    Rule(
        id="SIG-JOURNAL-001",
        tier=Tier.MANDATORY,
        statement=(
            "Before injection changes a file, the file's original bytes (or absence) and mode "
            "and the owning run (pid and start time) are in the directory's restore journal, "
            "written atomically and fsync'd; a run that ends restores the file with its mode."
        ),
        citation="design §Reliability",
    ),
    Rule(
        id="SIG-JOURNAL-002",
        tier=Tier.MANDATORY,
        statement=(
            "Journal entries of a run that is gone (kill -9) are applied by the next harness "
            "run in that directory and by 'harness mcp restore DIR'; a journal that cannot "
            "be read is a typed error naming it, and nothing is changed."
        ),
        citation="design §Reliability",
    ),
    Rule(
        id="SIG-JOURNAL-003",
        tier=Tier.MANDATORY,
        statement=(
            "Entries of a run whose harness is alive (same pid and start time) are never "
            "applied by another run; overlapping runs inherit the first original, so the "
            "user's file comes back when the last of them ends."
        ),
        citation="design §Reliability",
    ),
    Rule(
        id="SIG-WATCHDOG-001",
        tier=Tier.MANDATORY,
        statement=(
            "On Linux and macOS a harness that dies without running any code (SIGKILL) "
            "leaves no CLI process group it started running: its watchdog sends each "
            "guarded group SIGTERM, then SIGKILL after the grace, and exits; the watchdog "
            "runs only while a group is guarded and never outlives the harness."
        ),
        citation="design §Reliability",
    ),
)
