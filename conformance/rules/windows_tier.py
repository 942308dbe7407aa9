"""Windows observed: launches through a real CreateProcess, and the run's Windows process tree.

The command-line rules are proved by ``tests/windows_tier/``, which starts the exact lines
``harness/guards/windows_cmdline.py`` builds through a real ``CreateProcess`` (natively on
Windows, under Wine elsewhere) and reads back what the program received. RUN-WINJOB-001
covers the Windows branch of ``harness/runner/proctree.py`` (``harness/runner/winjob.py``;
seed 001 §10). Def-level (``formats=()``).
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]


def _mandatory(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(id=rule_id, tier=Tier.MANDATORY, statement=statement, citation=citation, formats=())


RULES: tuple[Rule, ...] = (
    _mandatory(
        "WIN-TIER-EXE-001",
        "Every direct-launch command line the guard accepts, started through a real "
        "CreateProcess, gives the program each argument byte for byte through msvcrt, "
        "ucrtbase and CommandLineToArgvW.",
        "seed 002 §6.3",
    ),
    _mandatory(
        "WIN-TIER-SHIM-001",
        "Every .cmd shim command line the guard accepts, run by a real cmd.exe whose shim "
        "forwards %*, gives the program each argument byte for byte, and no %NAME% in an "
        "argument is ever expanded from the environment.",
        "seed 002 §6.3",
    ),
    _mandatory(
        "WIN-TIER-MODEL-001",
        "The project's models of the C runtime and CommandLineToArgvW split any command "
        "line exactly as the real parsers do.",
        "seed 002 §6.3",
    ),
    _mandatory(
        "RUN-WINJOB-001",
        "On Windows the run's process tree is a Job Object that kills every member when "
        "closed; the forced stop terminates the job, and a CTRL_BREAK or a job that fails is "
        "reported as a note (the run's stderr), never ignored.",
        "wire §B.7",
    ),
)
