"""Live mode rules: recipes, installs, isolation and the real-vs-fake differential."""

from __future__ import annotations

from conformance.rules import Rule, Tier

_LIVE = "design §Live mode"

RULES = (
    Rule(
        id="LIVE-RECIPE-001",
        tier=Tier.MANDATORY,
        statement="A live recipe validates against live-recipe-v1 and the semantic checks; "
        "every error names the file and the field.",
        citation=_LIVE,
        formats=(),
    ),
    Rule(
        id="LIVE-SKIP-001",
        tier=Tier.MANDATORY,
        statement="A def without a runnable recipe (none, skip, not installed) gets skipped "
        "verdicts with the reason, and a skip recipe's CLI is never launched.",
        citation=_LIVE,
        formats=(),
    ),
    Rule(
        id="LIVE-INSTALL-001",
        tier=Tier.MANDATORY,
        statement="live install puts the pinned package under the cache dir and is idempotent "
        "through a marker written only after a successful install.",
        citation=_LIVE,
        formats=(),
    ),
    Rule(
        id="LIVE-ISOLATION-001",
        tier=Tier.MANDATORY,
        statement="A live run gets a fresh HOME, TMPDIR and PWD, the recipe's files and env, "
        "and no inherited secret or proxy variable.",
        citation=_LIVE,
        formats=(),
    ),
    Rule(
        id="LIVE-LOOPBACK-001",
        tier=Tier.MANDATORY,
        statement="A live CLI run succeeds with loopback as the only network and every "
        "request the model server logs is addressed to 127.0.0.1.",
        citation=_LIVE,
        formats=(),
    ),
    Rule(
        id="LIVE-REQUESTS-001",
        tier=Tier.MANDATORY,
        statement="A real run's model requests use the recipe's provider API and are all "
        "addressed to 127.0.0.1.",
        citation=_LIVE,
    ),
    Rule(
        id="LIVE-DIFF-KINDS-001",
        tier=Tier.MANDATORY,
        statement="Real CLI and fake give the same event-kind sequence after dropping status "
        "events and merging consecutive deltas.",
        citation=_LIVE,
    ),
    Rule(
        id="LIVE-DIFF-TEXT-001",
        tier=Tier.MANDATORY,
        statement="Real CLI and fake give the same assistant text per turn.",
        citation=_LIVE,
    ),
    Rule(
        id="LIVE-DIFF-TOOLS-001",
        tier=Tier.MANDATORY,
        statement="Real CLI and fake give the same tool names and normalized inputs in order.",
        citation=_LIVE,
    ),
    Rule(
        id="LIVE-DIFF-RESULTS-001",
        tier=Tier.MANDATORY,
        statement="Real CLI and fake give the same tool results (count, is_error, linkage) "
        "and leave the same files in the work dir.",
        citation=_LIVE,
    ),
    Rule(
        id="LIVE-DIFF-SESSION-001",
        tier=Tier.MANDATORY,
        statement="The session id is captured on both sides or on neither.",
        citation=_LIVE,
    ),
    Rule(
        id="LIVE-DIFF-STATUS-001",
        tier=Tier.MANDATORY,
        statement="Real CLI and fake end with the same run outcome and exit-code class.",
        citation=_LIVE,
    ),
)
