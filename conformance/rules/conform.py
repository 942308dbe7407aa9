"""Rules of the conformance model itself: verdicts, exit code, baselines, evidence, reports.

design §Conformance model; the verdict model follows acp-tck (wire §B.3), the baseline
semantics the MCP conformance suite (wire §B.2).
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        "CONFORM-BASELINE-BUILTIN-001",
        Tier.MANDATORY,
        "Without --baseline, harness conform judges the built-in defs against "
        "conformance/baselines/builtin.txt: the known gaps of real CLIs (each pinned by a "
        "recording of the real CLI), with the same stale-entry rule as any baseline.",
        "design §Conformance model",
        (),
    ),
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
        "CONFORM-REPORT-SIZE-001",
        Tier.MANDATORY,
        "The JSON and HTML reports grow only with the number of defs: text shared by a "
        "cell's scenarios is written once, and the HTML matrix shows every def column in a "
        "1400 px window, in stacked bands of defs.",
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
    Rule(
        "CONFORM-PLAN-001",
        Tier.MANDATORY,
        "harness conform judges every def on every registered def-level check and, on its fake, "
        "every scenario that applies to its format with every run-level check; a left-out "
        "scenario carries its reason.",
        "design §Conformance model",
        (),
    ),
    Rule(
        "CONFORM-RUN-NOFAKE-001",
        Tier.MANDATORY,
        "A def that no fake emulator can play is not_tested on every run-level rule, with the "
        "reason, never passed.",
        "design §Conformance model",
        (),
    ),
    Rule(
        "CONFORM-REAL-001",
        Tier.MANDATORY,
        "With --real, a def's real CLI is judged by the live rules; when the live machinery is "
        "absent or fails, every live rule is not_tested with the reason, never a silent pass.",
        "design §Conformance model",
        (),
    ),
    Rule(
        "CONFORM-CLI-001",
        Tier.MANDATORY,
        "harness conform exits with the verdict's code (2 for bad input, naming the file and "
        "field), writes each asked report kind into --out and prints the verdict table.",
        "design §Conformance model",
        (),
    ),
    Rule(
        "CONFORM-PROGRESS-001",
        Tier.MANDATORY,
        "harness conform shows progress per def: one updating line per def on a TTY (runs done "
        "of total, what it judges now), plain lines otherwise.",
        "design §Conformance model",
        (),
    ),
)
