"""The normalized event vocabulary (DESIGN.md "Normalized events", ref §1)."""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        "EVENT-SCHEMA-001",
        Tier.MANDATORY,
        "Every emitted event is a JSON object with a type that validates against "
        "events.schema.json.",
        "ref §1.1",
    ),
)
