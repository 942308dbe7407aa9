"""Rules of the ``copilot-stream-json`` parser (seed 000 §5.7, ref §2.3)."""

from __future__ import annotations

from conformance.rules import Rule, Tier

_FORMAT = ("copilot-stream-json",)

RULES = (
    Rule(
        id="COPILOT-ERROR-001",
        tier=Tier.MANDATORY,
        statement=(
            "session.error with a non-empty data.message gives one error event (code: "
            "data.errorType, not terminal: the stream still ends at result); the run fails "
            "on the stream error, not only on the exit code."
        ),
        citation="design §Principles 3; seed 000 §5.7",
        formats=_FORMAT,
    ),
    Rule(
        "COPILOT-STATUS-001",
        Tier.MANDATORY,
        "session.tools_updated with a data.model becomes status initializing with that model; "
        "assistant.turn_start becomes status streaming.",
        "ref §2.3",
        _FORMAT,
    ),
    Rule(
        "COPILOT-MAP-001",
        Tier.MANDATORY,
        "assistant.reasoning_delta and assistant.message_delta become thinking_delta and "
        "text_delta carrying data.deltaContent.",
        "seed 000 §5.7; ref §2.3",
        _FORMAT,
    ),
    Rule(
        "COPILOT-TOOL-001",
        Tier.MANDATORY,
        "tool.execution_start/complete become tool_use/tool_result; the result is stringified "
        "(string, content, detailedContent, else JSON) and is_error only for success false.",
        "seed 000 §5.7; ref §2.3",
        _FORMAT,
    ),
    Rule(
        "COPILOT-RESULT-001",
        Tier.MANDATORY,
        "A top-level result becomes usage: stop_reason completed when success is true or "
        "exitCode is 0, else error; duration from usage.sessionDurationMs.",
        "ref §2.3",
        _FORMAT,
    ),
    Rule(
        "COPILOT-SESSION-001",
        Tier.MANDATORY,
        "A result's sessionId string becomes status 'session' with that session_id, before "
        "its usage.",
        "design §Normalized events",
        _FORMAT,
    ),
    Rule(
        "COPILOT-RAW-001",
        Tier.MANDATORY,
        "A line that yields no normalized event (unknown type, non-JSON, empty payload) "
        "becomes a raw event instead of being dropped.",
        "ref §2.3",
        _FORMAT,
    ),
    Rule(
        "COPILOT-ROBUST-001",
        Tier.MANDATORY,
        "The copilot parser never raises on any bytes, and any split of a stream yields the "
        "same events.",
        "ref §2.0",
        _FORMAT,
    ),
)
