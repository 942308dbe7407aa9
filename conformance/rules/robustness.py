"""Hostile input: every parser and session keeps its "never raises" promise.

Cited as design §Reliability: bad input gets the documented outcome, nothing else.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        "ROBUST-SURROGATE-001",
        Tier.MANDATORY,
        "A lone surrogate escape in a JSON string or key reads as U+FFFD, so every event, id "
        "and frame built from the wire can be written as UTF-8.",
        "design §Reliability",
    ),
    Rule(
        "ROBUST-JSONOUT-001",
        Tier.MANDATORY,
        "An event written as JSON is always valid JSON: a number that is not finite (1e999 "
        "on the wire) is written as null, as JSON.stringify writes it.",
        "design §Reliability",
    ),
    Rule(
        "ROBUST-WRONGTYPE-001",
        Tier.MANDATORY,
        "A field of the wrong type (list, object, number, string, null or bool) ends as the "
        "format's documented outcome (a raw event, a protocol error or a failed session), "
        "never as an unexpected exception.",
        "design §Reliability",
    ),
    Rule(
        "ROBUST-DEPTH-001",
        Tier.MANDATORY,
        "A JSON value nested deeper than 256 levels is not read as JSON (its line is raw or a "
        "protocol error), the same on every stack, so no event carries a value too deep to write.",
        "design §Reliability",
    ),
    Rule(
        "ROBUST-FUZZ-001",
        Tier.MANDATORY,
        "Every one-way parser and two-way session, fed directly, through capture replay and "
        "through a recording, raises nothing but its documented errors on any mutation of the "
        "recorded corpus.",
        "design §Reliability",
    ),
)
