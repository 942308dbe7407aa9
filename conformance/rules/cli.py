"""The ``harness`` command-line interface."""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        "CLI-VERSION-001",
        Tier.MANDATORY,
        "harness --version prints the package version.",
        "design §Layout",
        (),
    ),
    Rule(
        "CLI-AGENTS-001",
        Tier.MANDATORY,
        "harness agents lists every def (built-in and local profile) with bin, format, "
        "delivery, resume and MCP.",
        "seed 000 §3",
        (),
    ),
    Rule(
        "CLI-DETECT-001",
        Tier.MANDATORY,
        "harness detect prints each def's detection result as its probe settles.",
        "seed 000 §9",
        (),
    ),
    Rule(
        "CLI-ARGV-001",
        Tier.MANDATORY,
        "harness argv prints the exact argv a def builds and how the prompt is delivered.",
        "seed 000 §1",
        (),
    ),
    Rule(
        "CLI-ARGV-002",
        Tier.MANDATORY,
        "A prompt over budget, or bad usage, exits non-zero with the error on stderr.",
        "seed 002 §6.3",
        (),
    ),
    Rule(
        "CLI-DEF-001",
        Tier.MANDATORY,
        "harness argv, run and parse take an author's def file with --def PATH.py, loaded "
        "and validated as harness conform loads it; run --fake plays it with the fake that "
        "conform chooses.",
        "design §Who uses it",
        (),
    ),
    Rule(
        "CLI-PARSE-001",
        Tier.MANDATORY,
        "harness parse turns a raw stdout capture into events, one JSON object per line "
        "with --json.",
        "seed 002 §7.1",
        (),
    ),
    Rule(
        "CLI-PARSE-002",
        Tier.MANDATORY,
        "harness parse reports an unreadable file or unknown format as a usage error.",
        "seed 002 §7.1",
        (),
    ),
)
