"""The JSON report: every cell with all its outcomes, the summary, the exit code.

The shape is ``report.schema.json`` (draft 2020-12) beside this module; a
consumer can validate it (CONFORM-REPORT-JSON-001). ``report_version`` is bumped
whenever the shape changes incompatibly. Version 2 keeps it small for many defs
(CONFORM-REPORT-SIZE-001): a cell's outcomes that share attempt, status and reason
are one entry listing their scenarios (:func:`~conformance.reports.outcome_groups`),
and the document is written without indentation, one cell per line.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from conformance.baseline import EntryList
from conformance.reports import OutcomeGroup, ReportMeta, outcome_groups, rule_links
from conformance.verdicts import Cell, Disposition, Verdict

__all__ = ["REPORT_VERSION", "SCHEMA_PATH", "build", "load_schema", "render"]

REPORT_VERSION = 2
SCHEMA_PATH = Path(__file__).with_name("report.schema.json")
TOOL_NAME = "adapter-harness"


@cache
def load_schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return data


def _counts(counts: dict[Disposition, int]) -> dict[str, int]:
    return {d.value: n for d, n in counts.items()}


def _group(group: OutcomeGroup) -> dict[str, Any]:
    out: dict[str, Any] = {
        "scenarios": list(group.scenarios),
        "attempt": group.attempt,
        "status": group.status.value,
        "reason": group.reason,
        "duration_ms": round(group.duration_ms, 1),
    }
    if group.evidence is not None:
        out["evidence"] = group.evidence.to_json()
    return out


def _cell(cell: Cell) -> dict[str, Any]:
    groups, evidence_from = outcome_groups(cell)
    return {
        "def_id": cell.def_id,
        "rule_id": cell.rule_id,
        "tier": cell.tier.value,
        "status": cell.status.value,
        "disposition": cell.disposition.value,
        "fails_run": cell.fails_run,
        "flaky": cell.flaky,
        "reason": cell.reason,
        "duration_ms": round(cell.duration_ms, 1),
        "baseline_entries": [e.text for e in cell.baseline_entries],
        "flaky_entries": [e.text for e in cell.flaky_entries],
        "evidence_from": evidence_from,
        "outcomes": [_group(g) for g in groups],
    }


def _entries(entries: EntryList | None, verdict: Verdict) -> dict[str, Any] | None:
    if entries is None:
        return None
    out = entries.to_json()
    if entries is verdict.baseline:
        out["stale"] = [e.text for e in verdict.stale_entries]
        out["unmatched"] = [e.text for e in verdict.unmatched_entries]
    return out


def build(verdict: Verdict, meta: ReportMeta) -> dict[str, Any]:
    """The report as a JSON-serializable dict."""
    return {
        "report_version": REPORT_VERSION,
        "tool": {"name": TOOL_NAME, "version": meta.tool_version},
        "generated_at": meta.timestamp,
        "title": meta.title,
        "command": list(meta.command),
        "exit_code": verdict.exit_code,
        "conformant": verdict.conformant,
        "reasons": verdict.reasons(),
        "summary": {
            "defs": len(verdict.defs),
            "rules": len(verdict.rules),
            "cells": len(verdict.cells),
            "outcomes": sum(len(c.outcomes) for c in verdict.cells),
            "by_disposition": _counts(verdict.counts()),
            "by_tier": {t.value: _counts(c) for t, c in verdict.counts_by_tier().items()},
            "by_def": {d: _counts(c) for d, c in verdict.counts_by_def().items()},
        },
        "defs": list(verdict.defs),
        "rules": [
            {
                "id": r.id,
                "tier": r.tier.value,
                "statement": r.statement,
                "citation": r.citation,
                "links": list(rule_links(r)),
                "formats": list(r.formats),
                "capability": r.capability,
            }
            for r in verdict.rules.values()
        ],
        "cells": [_cell(c) for c in verdict.cells],
        "baseline": _entries(verdict.baseline, verdict),
        "flaky_list": _entries(verdict.flaky_list, verdict),
    }


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render(verdict: Verdict, meta: ReportMeta) -> str:
    """:func:`build` as compact JSON, the cells last, one per line (greppable, diffable)."""
    report = build(verdict, meta)
    cells = report.pop("cells")
    body = ",\n".join(_dumps(c) for c in cells)
    return _dumps(report)[:-1] + f',"cells":[\n{body}\n]}}\n'
