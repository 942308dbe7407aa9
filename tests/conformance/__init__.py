"""Tests of the conformance verdict model, baselines and reports (CONFORM-*).

Shared synthetic data: a small catalog of made-up rules (so each tier is
controlled), outcome and evidence builders, and a 3 defs × 6 rules verdict that
holds every disposition.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from conformance.baseline import EntryList, parse_entries
from conformance.evidence import Direction, Evidence, Frame
from conformance.reports import ReportMeta
from conformance.rules import Rule, Tier
from conformance.verdicts import Outcome, Status, Verdict, judge

#: A made-up catalog: two rules per tier.
RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("DEMO-STREAM-001", Tier.MANDATORY, "Every turn ends with turn_end.", "seed 002 §7.2"),
        Rule("DEMO-STREAM-002", Tier.MANDATORY, "Text deltas keep their order.", "seed 002 §7.2"),
        Rule(
            "DEMO-RESUME-001",
            Tier.CAPABILITY,
            "A resumed run reuses the session id.",
            "seed 000 §5.3",
            capability="resume_style",
        ),
        Rule(
            "DEMO-MCP-001",
            Tier.CAPABILITY,
            "Injected MCP servers reach the CLI.",
            "seed 002 §8.1",
            capability="mcp_injection",
        ),
        Rule("DEMO-USAGE-001", Tier.ADVISORY, "Usage carries the cost.", "seed 000 §12"),
        Rule("DEMO-USAGE-002", Tier.ADVISORY, "Usage carries durations.", "seed 000 §12"),
    )
}
RULE_IDS = tuple(RULES)
DEFS = ("alpha", "beta-cli", "gamma.v2")

META = ReportMeta(
    tool_version="9.8.7",
    generated_at=dt.datetime(2026, 8, 20, 12, 30, 5, tzinfo=dt.timezone.utc),
    command=("harness", "conform", "--agent", "alpha"),
)

#: Transcript text that must never become markup in a report (CONFORM-REPORT-ESCAPE-001).
HOSTILE = '</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">&amp;'


def evidence(summary: str = "turn_end missing after result", **kw: object) -> Evidence:
    fields: dict[str, object] = {
        "repro_command": "harness conform --agent alpha --rule DEMO-STREAM-001",
        "expected": "one turn_end event",
        "actual": "no turn_end; stream ended after usage",
        "transcript_slice": (
            Frame(Direction.STDIN, '{"type":"user","text":"hi"}'),
            Frame(Direction.STDOUT, '{"type":"result","subtype":"success"}'),
            Frame(Direction.STDERR, "warning: slow disk"),
        ),
        "stderr_tail": "warning: slow disk\n",
    }
    fields.update(kw)
    return Evidence(summary=summary, **fields)  # type: ignore[arg-type]


def outcome(
    def_id: str,
    rule_id: str,
    status: Status | str,
    *,
    scenario: str | None = None,
    attempt: int = 1,
    reason: str | None = None,
    ev: Evidence | None = None,
    duration_ms: float = 12.0,
) -> Outcome:
    """An outcome with the evidence / reason its status requires filled in."""
    status = Status(status)
    if reason is None:
        reason = {
            Status.PASS: "",
            Status.FAIL: f"{rule_id} broken in {def_id}",
            Status.SKIPPED: "the def does not declare the capability",
            Status.NOT_TESTED: "the CLI exited before the check could run",
        }[status]
    if ev is None and status is Status.FAIL:
        ev = evidence(f"{rule_id} broken in {def_id}")
    return Outcome(
        rule_id=rule_id,
        def_id=def_id,
        status=status,
        reason=reason,
        evidence=ev,
        duration_ms=duration_ms,
        scenario=scenario,
        attempt=attempt,
    )


def entries(text: str, kind: str = "baseline") -> EntryList:
    return parse_entries(text, source=f"{kind}.txt", kind=kind, known_rules=RULES)


def verdict_of(
    outcomes: Iterable[Outcome],
    *,
    baseline: str | None = None,
    flaky: str | None = None,
    applicable: dict[str, Iterable[str]] | None = None,
) -> Verdict:
    return judge(
        outcomes,
        rules=RULES,
        applicable=applicable,
        baseline=None if baseline is None else entries(baseline),
        flaky=None if flaky is None else entries(flaky, "flaky"),
    )


#: The sample's baseline and flaky list.
SAMPLE_BASELINE = """\
# known gaps
alpha:DEMO-STREAM-002     # upstream bug 42
beta-cli:DEMO-RESUME-001  # fixed since 1.2; entry left behind
"""
SAMPLE_FLAKY = "gamma.v2:DEMO-MCP-001  # slow MCP handshake under load\n"


def sample_outcomes() -> list[Outcome]:
    """3 defs × 6 rules holding every disposition (see :func:`sample_verdict`)."""
    hostile = evidence(
        "stream broke the turn order",
        actual=HOSTILE,
        transcript_slice=(
            Frame(Direction.STDIN, '{"prompt":"write <b>bold</b>"}'),
            Frame(Direction.STDOUT, HOSTILE),
            Frame(Direction.STDERR, "panic: </pre><h1>boom</h1>"),
        ),
        stderr_tail="panic: </pre><h1>boom</h1>\n\x1b[31mred\x1b[0m",
    )
    out: list[Outcome] = []
    for d in DEFS:
        for r in RULE_IDS:
            out.append(outcome(d, r, Status.PASS, scenario="basic"))
    replace = {
        # alpha: a mandatory fail with hostile evidence, a baselined fail, a skip.
        ("alpha", "DEMO-STREAM-001"): [
            outcome("alpha", "DEMO-STREAM-001", Status.PASS, scenario="basic"),
            outcome(
                "alpha",
                "DEMO-STREAM-001",
                Status.FAIL,
                scenario="tool-call",
                reason="turn_end missing <after> tool_result",
                ev=hostile,
            ),
        ],
        ("alpha", "DEMO-STREAM-002"): [outcome("alpha", "DEMO-STREAM-002", Status.FAIL)],
        ("alpha", "DEMO-MCP-001"): [outcome("alpha", "DEMO-MCP-001", Status.SKIPPED)],
        # beta-cli: a stale baseline entry, a mandatory not-tested, an advisory fail.
        ("beta-cli", "DEMO-STREAM-002"): [
            outcome("beta-cli", "DEMO-STREAM-002", Status.NOT_TESTED)
        ],
        ("beta-cli", "DEMO-USAGE-001"): [outcome("beta-cli", "DEMO-USAGE-001", Status.FAIL)],
        # gamma.v2: flaky (failed, then passed on a re-run), a capability fail.
        ("gamma.v2", "DEMO-MCP-001"): [
            outcome("gamma.v2", "DEMO-MCP-001", Status.FAIL, scenario="mcp", attempt=1),
            outcome("gamma.v2", "DEMO-MCP-001", Status.PASS, scenario="mcp", attempt=2),
        ],
        ("gamma.v2", "DEMO-RESUME-001"): [outcome("gamma.v2", "DEMO-RESUME-001", Status.FAIL)],
        ("gamma.v2", "DEMO-USAGE-002"): [
            outcome("gamma.v2", "DEMO-USAGE-002", Status.SKIPPED, reason="no usage <frames>")
        ],
    }
    out = [o for o in out if (o.def_id, o.rule_id) not in replace]
    for group in replace.values():
        out.extend(group)
    return out


def sample_verdict() -> Verdict:
    return verdict_of(
        sample_outcomes(),
        baseline=SAMPLE_BASELINE,
        flaky=SAMPLE_FLAKY,
        applicable={d: RULE_IDS for d in DEFS},
    )


#: The fake scenarios of a large synthetic run (as many as ``harness conform`` plays).
LARGE_SCENARIOS = tuple(f"scenario-{n:02d}" for n in range(18))


def large_verdict(defs: int, rules: Iterable[Rule] | None = None) -> Verdict:
    """A run of ``defs`` defs shaped like ``harness conform`` over the built-ins: of 37
    rules, every other one def-level (one outcome) and the rest judged on 18 scenarios;
    a quarter of those are skipped on a third of the scenarios, each with the scenario's
    own reason; one failure with evidence per ten defs. (A real run of 29 defs has 2.3
    outcome groups and 7.9 outcomes per cell; this one 2.5 and 9.3.)"""
    from conformance.rules import all_rules

    catalog = {r.id: r for r in (rules or list(all_rules().values())[:37])}
    out: list[Outcome] = []
    for d in range(defs):
        def_id = f"agent-{d:03d}"
        for n, rule_id in enumerate(catalog):
            if n % 2 == 0:
                out.append(outcome(def_id, rule_id, Status.PASS))
                continue
            for k, scenario in enumerate(LARGE_SCENARIOS):
                if d % 10 == 0 and n == 5 and k == 0:
                    ev = evidence(
                        f"{rule_id}: {def_id}: the run's text differs from the scenario's",
                        stderr_tail="error: unknown option '--approval-mode'\n" * 3,
                    )
                    out.append(outcome(def_id, rule_id, Status.FAIL, scenario=scenario, ev=ev))
                elif n % 4 == 1 and k % 3 == 0:
                    why = f"not applicable: the scenario has no {scenario} step"
                    skip = outcome(def_id, rule_id, Status.SKIPPED, scenario=scenario, reason=why)
                    out.append(skip)
                else:
                    out.append(outcome(def_id, rule_id, Status.PASS, scenario=scenario))
    return judge(out, rules=catalog)
