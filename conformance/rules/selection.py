"""Rules for agent selection.

Enforced by ``harness/host/selection.py``; tested in ``tests/selection/``. Def-level
(``formats=()``).
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]

RULES: tuple[Rule, ...] = (
    Rule(
        id="SELECT-EXPLICIT-001",
        tier=Tier.MANDATORY,
        statement=(
            "An explicitly requested agent is used; when it is unknown or unavailable the run "
            "fails with a typed error and no other agent is substituted."
        ),
        citation="seed 000 §7",
        formats=(),
    ),
    Rule(
        id="SELECT-DEFAULT-001",
        tier=Tier.MANDATORY,
        statement=(
            "With no explicit agent, the configured agent is used when available, else the "
            "first available definition in registry order."
        ),
        citation="seed 000 §8",
        formats=(),
    ),
    Rule(
        id="SELECT-NONE-001",
        tier=Tier.MANDATORY,
        statement=(
            "When no definition is available, selection fails with a typed error listing every "
            "agent and why it is unavailable."
        ),
        citation="seed 000 §8",
        formats=(),
    ),
    Rule(
        id="SELECT-NOFALLBACK-001",
        tier=Tier.MANDATORY,
        statement=(
            "A failed run never moves to another agent: the retry of a failed run uses the same "
            "agent or fails."
        ),
        citation="seed 000 §8",
        formats=(),
    ),
)
