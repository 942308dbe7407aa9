"""The four reports of a :class:`~conformance.verdicts.Verdict` (design §Conformance model).

* :mod:`.json_report` — every outcome, machine-readable, schema'd (``report.schema.json``).
* :mod:`.junit` — JUnit XML for CI: one testsuite per def, one testcase per rule.
* :mod:`.html` — one self-contained page: the defs × rules matrix, evidence on click.
* :mod:`.terminal` — a compact verdict table, coloured on a TTY.

Each module has ``render(verdict, meta) -> str``; :func:`.files.write_reports` writes
the file kinds into a directory. The time and tool version come in through
:class:`ReportMeta`: the writers never read a clock. Every report that shows a
rule's citation also shows where it points in ``docs/spec/`` (:func:`rule_links`).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace

from conformance.evidence import Direction, Evidence
from conformance.rules import Rule
from conformance.rules.spec import CitationError
from conformance.verdicts import Cell, Disposition, Status, Verdict

__all__ = [
    "ARROWS",
    "FILE_KINDS",
    "FILE_NAMES",
    "LABELS",
    "MEANINGS",
    "SYMBOLS",
    "OutcomeGroup",
    "ReportMeta",
    "cell_text",
    "evidence_text",
    "outcome_groups",
    "rule_links",
    "spec_href",
]

#: What each disposition is called in every report.
LABELS: dict[Disposition, str] = {
    Disposition.FAIL: "FAIL",
    Disposition.STALE: "STALE BASELINE",
    Disposition.NOT_TESTED: "NOT TESTED",
    Disposition.FLAKY: "FLAKY",
    Disposition.EXPECTED_FAIL: "EXPECTED FAIL",
    Disposition.PASS: "PASS",
    Disposition.SKIPPED: "SKIPPED",
}

#: One glyph per disposition, so no report tells them apart by colour alone.
SYMBOLS: dict[Disposition, str] = {
    Disposition.FAIL: "✗",
    Disposition.STALE: "⟳",
    Disposition.NOT_TESTED: "?",
    Disposition.FLAKY: "≈",
    Disposition.EXPECTED_FAIL: "⊘",
    Disposition.PASS: "✓",
    Disposition.SKIPPED: "–",
}

#: What a disposition means, for legends.
MEANINGS: dict[Disposition, str] = {
    Disposition.FAIL: "the rule is broken",
    Disposition.STALE: "passes, but the baseline still lists it: remove the entry",
    Disposition.NOT_TESTED: "applies, but no check could run",
    Disposition.FLAKY: "failed, then passed on a solo re-run (listed flaky)",
    Disposition.EXPECTED_FAIL: "fails, and the baseline lists it as a known gap",
    Disposition.PASS: "the rule holds",
    Disposition.SKIPPED: "does not apply here",
}

#: Arrows for transcript frames: what the host sent, what the CLI wrote.
ARROWS: dict[Direction, str] = {
    Direction.STDIN: "→",
    Direction.STDOUT: "←",
    Direction.STDERR: "⚠",
}

#: File name per file report kind.
FILE_NAMES: dict[str, str] = {
    "json": "conformance.json",
    "junit": "conformance.junit.xml",
    "html": "conformance.html",
}
FILE_KINDS: tuple[str, ...] = tuple(FILE_NAMES)


@dataclass(frozen=True)
class ReportMeta:
    """What a report says about the run besides the verdict."""

    tool_version: str
    #: When the run finished; must be timezone-aware.
    generated_at: _dt.datetime
    title: str = "Conformance report"
    #: The command that produced the run, e.g. ``("harness", "conform", "--agent", "claude")``.
    command: tuple[str, ...] = ()
    #: Prefix that turns a repository-relative spec link into an address the
    #: HTML report can open: the repository's web address ending in ``/``, or
    #: the relative path from the report's directory to the repository root.
    #: Empty leaves the links repository-relative.
    spec_base: str = ""

    def __post_init__(self) -> None:
        if self.generated_at.tzinfo is None:
            raise ValueError("ReportMeta.generated_at must be timezone-aware")
        if not self.tool_version:
            raise ValueError("ReportMeta.tool_version must not be empty")

    @property
    def timestamp(self) -> str:
        """ISO 8601 in UTC, e.g. ``2026-08-20T12:00:00Z``."""
        utc = self.generated_at.astimezone(_dt.timezone.utc)
        return utc.isoformat(timespec="seconds").replace("+00:00", "Z")


def rule_links(rule: Rule) -> tuple[str, ...]:
    """Where ``rule``'s citation points (``docs/spec/<file>.md#<anchor>``, one per part).

    A citation that does not resolve gives no links rather than breaking the
    report; the rule catalog's own test is where such a citation fails.
    """
    try:
        return rule.links
    except CitationError:
        return ()


def spec_href(meta: ReportMeta, link: str) -> str:
    """The address of a spec ``link`` as the HTML report should open it."""
    return meta.spec_base + link


@dataclass(frozen=True)
class OutcomeGroup:
    """The outcomes of one cell that say the same thing: one attempt, status and reason
    over several scenarios. An outcome with evidence is a group of its own."""

    scenarios: tuple[str | None, ...]
    attempt: int
    status: Status
    reason: str
    duration_ms: float
    evidence: Evidence | None = None


def outcome_groups(cell: Cell) -> tuple[list[OutcomeGroup], int | None]:
    """``cell``'s outcomes with repeated text said once (the JSON and HTML reports stay
    small for many defs: most of a run cell's scenarios share a status and a reason),
    in first-seen order; and the index of the group holding the cell's evidence."""
    groups: list[OutcomeGroup] = []
    at: dict[tuple[int, Status, str], int] = {}
    decisive: int | None = None
    for o in cell.outcomes:
        key = (o.attempt, o.status, o.reason)
        if o.evidence is None and key in at:
            g = groups[at[key]]
            groups[at[key]] = replace(
                g, scenarios=(*g.scenarios, o.scenario), duration_ms=g.duration_ms + o.duration_ms
            )
            continue
        if o.evidence is None:
            at[key] = len(groups)
        elif o.evidence is cell.evidence and decisive is None:
            decisive = len(groups)
        groups.append(
            OutcomeGroup((o.scenario,), o.attempt, o.status, o.reason, o.duration_ms, o.evidence)
        )
    return groups, decisive


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines()) if text else prefix


def evidence_text(evidence: Evidence) -> str:
    """Evidence as plain text (JUnit ``system-out``, terminal detail)."""
    parts = [f"evidence: {evidence.summary}"]
    if evidence.expected:
        parts += ["expected:", _indent(evidence.expected)]
    if evidence.actual:
        parts += ["actual:", _indent(evidence.actual)]
    if evidence.transcript_slice:
        head = f"transcript ({len(evidence.transcript_slice)} frames"
        if evidence.omitted_frames:
            head += f"; {evidence.omitted_frames} earlier frames omitted"
        parts.append(head + "):")
        for frame in evidence.transcript_slice:
            lines = frame.data.splitlines() or [""]
            lead = f"  {ARROWS[frame.dir]} {frame.dir.value:<6} | "
            parts.append(lead + lines[0])
            parts += [" " * len(lead) + line for line in lines[1:]]
    if evidence.stderr_tail:
        head = "stderr tail"
        if evidence.stderr_omitted_chars:
            head += f" ({evidence.stderr_omitted_chars} earlier characters omitted)"
        parts += [head + ":", _indent(evidence.stderr_tail)]
    parts += ["reproduce:", _indent(evidence.repro_command)]
    return "\n".join(parts)


def cell_text(verdict: Verdict, cell: Cell) -> str:
    """Everything known about one cell as plain text."""
    rule = verdict.rules[cell.rule_id]
    run = "fails the run" if cell.fails_run else "does not fail the run"
    parts = [
        f"{cell.def_id} × {cell.rule_id} ({rule.tier.value}): {rule.statement}",
        f"citation: {rule.citation}",
        *([f"spec: {', '.join(links)}"] if (links := rule_links(rule)) else []),
        f"verdict: {LABELS[cell.disposition]} ({run})"
        + (f" — {cell.reason}" if cell.reason else ""),
    ]
    for entry in cell.baseline_entries:
        note = f" — {entry.note}" if entry.note else ""
        parts.append(f"baseline: {entry.text} ({entry.where}){note}")
    for entry in cell.flaky_entries:
        parts.append(f"flaky list: {entry.text} ({entry.where})")
    if cell.outcomes:
        parts.append("outcomes:")
        for o in cell.outcomes:
            name = o.scenario or "(check)"
            reason = f" — {o.reason}" if o.reason else ""
            parts.append(
                f"  {name} attempt {o.attempt}: {o.status.value} ({o.duration_ms:.0f} ms){reason}"
            )
    if cell.evidence is not None:
        parts.append(evidence_text(cell.evidence))
    return "\n".join(parts)
