"""JUnit XML for CI: one ``testsuite`` per def, one ``testcase`` per rule.

Rules: CONFORM-EXIT-001, CONFORM-REPORT-JUNIT-001.
Design: docs/design/conformance.md#conformance.reports.junit
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from conformance.reports import LABELS, ReportMeta, cell_text
from conformance.rules import Tier
from conformance.verdicts import Cell, Disposition, Verdict

__all__ = ["render", "xml_safe"]

# XML 1.0, section 2.2, Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
_NOT_XML_CHAR = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold written as a visible escape."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _NOT_XML_CHAR.sub(escape, text)


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"


def _element(cell: Cell) -> tuple[str, str] | None:
    """(element, type) of the failure/skipped child, or ``None`` for a passed testcase."""
    d = cell.disposition
    if d is Disposition.STALE:
        return "failure", "stale_baseline"
    if d is Disposition.FAIL:
        return ("failure", "fail") if cell.fails_run else ("skipped", "advisory_fail")
    if d is Disposition.NOT_TESTED:
        element = "failure" if cell.tier is Tier.MANDATORY else "skipped"
        return element, "not_tested"
    if d is Disposition.EXPECTED_FAIL:
        return "skipped", "expected_failure"
    if d is Disposition.SKIPPED:
        return "skipped", "skipped"
    return None


def _message(cell: Cell) -> str:
    label = LABELS[cell.disposition]
    if cell.disposition is Disposition.FAIL and not cell.fails_run:
        label = "ADVISORY FAIL (does not fail the run)"
    return f"{label}: {cell.reason}" if cell.reason else label


def _testcase(parent: ET.Element, verdict: Verdict, cell: Cell) -> None:
    case = ET.SubElement(
        parent,
        "testcase",
        {
            "classname": f"conform.{cell.def_id}",
            "name": cell.rule_id,
            "time": _seconds(cell.duration_ms),
        },
    )
    kind = _element(cell)
    if kind is not None:
        element, type_ = kind
        child = ET.SubElement(case, element, {"type": type_, "message": xml_safe(_message(cell))})
        if element == "failure":
            child.text = xml_safe(cell.evidence.summary if cell.evidence else cell.reason)
    if kind is not None or cell.flaky:
        ET.SubElement(case, "system-out").text = xml_safe(cell_text(verdict, cell))


def render(verdict: Verdict, meta: ReportMeta) -> str:
    """The JUnit XML document (UTF-8, with an XML declaration)."""
    # The Ant JUnit schema's timestamp has no zone designator; it is UTC here.
    stamp = meta.timestamp.removesuffix("Z")
    root = ET.Element("testsuites", {"name": meta.title})
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    total_ms = 0.0
    for index, def_id in enumerate(verdict.defs):
        cells = [c for c in verdict.cells if c.def_id == def_id]
        kinds = [_element(c) for c in cells]
        failures = sum(1 for k in kinds if k is not None and k[0] == "failure")
        skipped = sum(1 for k in kinds if k is not None and k[0] == "skipped")
        ms = sum(c.duration_ms for c in cells)
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": def_id,
                "id": str(index),
                "tests": str(len(cells)),
                "failures": str(failures),
                "errors": "0",
                "skipped": str(skipped),
                "time": _seconds(ms),
                "timestamp": stamp,
            },
        )
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", {"name": "tool_version", "value": meta.tool_version})
        ET.SubElement(props, "property", {"name": "exit_code", "value": str(verdict.exit_code)})
        for cell in cells:
            _testcase(suite, verdict, cell)
        totals["tests"] += len(cells)
        totals["failures"] += failures
        totals["skipped"] += skipped
        total_ms += ms
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", "0")
    root.set("skipped", str(totals["skipped"]))
    root.set("time", _seconds(total_ms))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
