"""Rules of the conformance model itself: verdicts, exit code, baselines, evidence, reports.

design §Conformance model; the verdict model follows acp-tck (wire §B.3), the baseline
semantics the MCP conformance suite (wire §B.2).
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        "CONFORM-VERDICT-001",
        Tier.MANDATORY,
        "A (def, rule) takes the worst status of its checks (fail > not_tested > pass > "
        "skipped); an applicable rule with no outcome is not_tested.",
        "wire §B.3",
        (),
    ),
    Rule(
        "CONFORM-EXIT-001",
        Tier.MANDATORY,
        "The exit code is non-zero iff a mandatory rule fails or is not tested, a capability "
        "rule fails, or a baseline entry is stale; advisory results never fail the run.",
        "design §Conformance model",
        (),
    ),
    Rule(
        "CONFORM-BASELINE-001",
        Tier.MANDATORY,
        "A failure listed in the baseline (def:rule, rule, or def:*) is an expected failure "
        "and does not fail the run.",
        "wire §B.2",
        (),
    ),
    Rule(
        "CONFORM-BASELINE-STALE-001",
        Tier.MANDATORY,
        "A baseline entry whose rules now all pass is stale and fails the run.",
        "wire §B.2",
        (),
    ),
    Rule(
        "CONFORM-BASELINE-FILE-001",
        Tier.MANDATORY,
        "A malformed baseline or flaky-list entry is refused with its file and line.",
        "design §Conformance model",
        (),
    ),
    Rule(
        "CONFORM-FLAKY-001",
        Tier.MANDATORY,
        "A flaky-listed check that fails is re-run solo; a later pass is flaky, all attempts "
        "failing is a fail, and a flaky pass never makes the baseline stale.",
        "wire §B.2",
        (),
    ),
    Rule(
        "CONFORM-EVIDENCE-001",
        Tier.MANDATORY,
        "Every failed verdict carries its evidence: summary, transcript slice, stderr tail and "
        "the command to reproduce it, within stated bounds.",
        "design §Conformance model",
        (),
    ),
    Rule(
        "CONFORM-REPORT-JSON-001",
        Tier.MANDATORY,
        "The JSON report holds every outcome, the summary, the exit code, the tool version and "
        "the timestamp, and validates against report.schema.json.",
        "design §Conformance model",
        (),
    ),
    Rule(
        "CONFORM-REPORT-JUNIT-001",
        Tier.MANDATORY,
        "The JUnit XML report has one testsuite per def and one testcase per rule, counts "
        "that match the verdict, and parses as XML whatever the evidence holds.",
        "design §Conformance model",
        (),
    ),
    Rule(
        "CONFORM-REPORT-HTML-001",
        Tier.MANDATORY,
        "The HTML report is one self-contained page: a defs x rules matrix with a labelled "
        "verdict per cell, filters, and each cell's evidence on click.",
        "design §Conformance model",
        (),
    ),
    Rule(
        "CONFORM-REPORT-ESCAPE-001",
        Tier.MANDATORY,
        "Reports render every recorded string as text: markup or </script> in a transcript "
        "never becomes markup.",
        "design §Conformance model",
        (),
    ),
    Rule(
        "CONFORM-REPORT-TERM-001",
        Tier.MANDATORY,
        "The terminal report is a compact verdict table, coloured only on a TTY without NO_COLOR.",
        "design §Conformance model",
        (),
    ),
)
