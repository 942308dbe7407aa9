"""Framing rules shared by every JSONL stream (wire §A.0, seed 002 §7)."""

from __future__ import annotations

from conformance.rules import Rule, Tier
from harness.formats import jsonl_formats

#: Every format whose stdout is JSONL frames, in registry order.
_JSONL = jsonl_formats()

RULES = (
    Rule(
        "STREAM-FRAME-LF-001",
        Tier.MANDATORY,
        "Records are split on LF only; U+2028, U+2029 and U+0085 inside a record are kept.",
        "wire §A.0",
        _JSONL,
    ),
    Rule(
        "STREAM-FRAME-CRLF-001",
        Tier.MANDATORY,
        "Exactly one trailing CR is stripped from each record (CRLF producers).",
        "wire §A.0",
        _JSONL,
    ),
    Rule(
        "STREAM-FRAME-FLUSH-001",
        Tier.MANDATORY,
        "A final record without a trailing LF is flushed at end of output.",
        "wire §A.0",
        _JSONL,
    ),
    Rule(
        "STREAM-FRAME-UTF8-001",
        Tier.MANDATORY,
        "A read split inside a UTF-8 sequence decodes as if unsplit; invalid bytes never raise.",
        "wire §A.0",
        _JSONL,
    ),
    Rule(
        "STREAM-FRAME-OVERSIZE-001",
        Tier.MANDATORY,
        "A record over the size limit is reported with its byte count, never buffered unbounded.",
        "wire §A.0",
        _JSONL,
    ),
    Rule(
        "STREAM-FRAME-CHUNKING-001",
        Tier.MANDATORY,
        "Any split of the same bytes yields the same records.",
        "wire §A.0",
        _JSONL,
    ),
    Rule(
        "STREAM-FRAME-ROUNDTRIP-001",
        Tier.MANDATORY,
        "The decoder returns every JSON value of a JSON Lines stream unchanged.",
        "wire §A.0",
        _JSONL,
    ),
    Rule(
        "STREAM-RAW-BOUND-001",
        Tier.MANDATORY,
        "A line no parser claims becomes a raw event, bounded to 64 KiB with its true byte count.",
        "ref §2.0",
        _JSONL,
    ),
)
