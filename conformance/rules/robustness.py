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
)
