"""Rules about the rule catalog itself (DESIGN.md "Conformance model")."""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        "CATALOG-BINDING-001",
        Tier.MANDATORY,
        "Every rule has a test, and every test names only known rules.",
        "design §Conformance model",
        (),
    ),
    Rule(
        "CATALOG-FORMAT-001",
        Tier.MANDATORY,
        "Rule ids match <AREA>-<TOPIC>-<NNN> and carry a tier, statement and seed citation.",
        "design §Conformance model",
        (),
    ),
)
