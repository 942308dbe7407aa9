"""Generations of the POSIX argv prompt budget, each with its numbers and their source.

Rules: FIDELITY-BUDGET-001.
Design: docs/design/guards.md#harness.guards.budget_generations
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "DARWIN_ARGV_PROMPT_BUDGET",
    "GENERATIONS",
    "POSIX_ARGV_PROMPT_BUDGET",
    "SEED_002_POSIX_ARGV_PROMPT_BUDGET",
    "BudgetGeneration",
    "PlatformBudgets",
    "budgets_for",
]

#: ref §4.1, current generation: the budget on Linux and every other non-darwin POSIX.
POSIX_ARGV_PROMPT_BUDGET = 100_000
#: ref §4.1, current generation: darwin's budget (256 KiB, under macOS ``ARG_MAX``).
DARWIN_ARGV_PROMPT_BUDGET = 262_144
#: seed 002 §6.3 (the code it quotes): one budget for every platform but win32.
SEED_002_POSIX_ARGV_PROMPT_BUDGET = 120_000


class BudgetGeneration(str, enum.Enum):
    """Which upstream generation of the argv budget applies (values are CLI spellings)."""

    #: ref §4.1: 100 000 off darwin, 262 144 on darwin (the project's default).
    CURRENT = "current"
    #: seed 002 §6.3 code: 120 000 on every platform but win32.
    SEED_002 = "seed-002"
    #: ref §10.2 ``budget.legacy_unconditional``: the def's number everywhere.
    LEGACY = "legacy"


@dataclass(frozen=True)
class PlatformBudgets:
    """One generation's floors: ``None`` means the def's own number is the limit there."""

    posix: int | None
    darwin: int | None
    #: Where the numbers come from, for a reader of a report.
    source: str

    def floor(self, platform: str) -> int | None:
        """The platform's budget (``sys.platform`` names); win32 never has one."""
        if platform == "win32":
            return None
        return self.darwin if platform == "darwin" else self.posix


GENERATIONS: dict[BudgetGeneration, PlatformBudgets] = {
    BudgetGeneration.CURRENT: PlatformBudgets(
        POSIX_ARGV_PROMPT_BUDGET,
        DARWIN_ARGV_PROMPT_BUDGET,
        "ref §4.1: prompt-budget.ts @1001d6db, POSIX_ and DARWIN_ARGV_PROMPT_BUDGET",
    ),
    BudgetGeneration.SEED_002: PlatformBudgets(
        SEED_002_POSIX_ARGV_PROMPT_BUDGET,
        SEED_002_POSIX_ARGV_PROMPT_BUDGET,
        "seed 002 §6.3: prompt-budget.ts:31-38 at b084ab075ba2 (its prose says 100 KB)",
    ),
    BudgetGeneration.LEGACY: PlatformBudgets(
        None, None, "ref §10.2: budget.legacy_unconditional (the def's number everywhere)"
    ),
}


def budgets_for(generation: BudgetGeneration | str) -> PlatformBudgets:
    """The floors of ``generation`` (an enum member or its value); a typed ``ValueError``
    naming the known generations otherwise."""
    try:
        return GENERATIONS[BudgetGeneration(generation)]
    except ValueError:
        known = ", ".join(g.value for g in BudgetGeneration)
        raise ValueError(
            f"unknown prompt budget generation {generation!r}; known: {known}"
        ) from None
