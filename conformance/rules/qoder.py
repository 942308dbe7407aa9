"""Rules of the ``qoder-stream-json`` parser (seed 000 §5.8, ref §2.4)."""

from __future__ import annotations

from conformance.rules import Rule, Tier

_FORMAT = ("qoder-stream-json",)

RULES = (
    Rule(
        "QODER-INIT-001",
        Tier.MANDATORY,
        "system/init becomes status initializing with model, session_id and cli_version "
        "(qodercli_version), each only when it is a string.",
        "seed 000 §5.8; ref §2.4",
        _FORMAT,
    ),
    Rule(
        "QODER-MAP-001",
        Tier.MANDATORY,
        "Assistant blocks with non-empty text become text_delta; thinking blocks become "
        "thinking_delta after one thinking_start per run; a string content is text.",
        "seed 000 §5.8; ref §2.4",
        _FORMAT,
    ),
    Rule(
        "QODER-ERROR-001",
        Tier.MANDATORY,
        "An assistant record with a truthy error and no text becomes an error event with the "
        "error message and the raw line.",
        "seed 000 §5.8; ref §2.4",
        _FORMAT,
    ),
    Rule(
        "QODER-RESULT-001",
        Tier.MANDATORY,
        "result becomes usage carrying usage, model usage, cost, duration, stop reason and "
        "is_error.",
        "seed 000 §5.8; ref §2.4",
        _FORMAT,
    ),
    Rule(
        "QODER-RESULT-ERROR-001",
        Tier.MANDATORY,
        "A result with is_error also yields an error event after usage, its message taken from "
        "error, error.message, message, then the stop reason.",
        "ref §2.4",
        _FORMAT,
    ),
    Rule(
        "QODER-RAW-001",
        Tier.MANDATORY,
        "Unknown records, non-JSON lines and records that map to no event become raw events.",
        "seed 000 §5.8; ref §2.4",
        _FORMAT,
    ),
    Rule(
        "QODER-ROBUST-001",
        Tier.MANDATORY,
        "The qoder parser never raises on any bytes, and any split of a stream yields the "
        "same events.",
        "ref §2.0",
        _FORMAT,
    ),
)
