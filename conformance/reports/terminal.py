"""The terminal report: a compact verdict table (CONFORM-REPORT-TERM-001).

One row per def with a count per disposition, then the cells that need attention, as
pytest and ruff show a failure: the rule, a one-line reason (cut at a word, never
mid-word), the CLI's first stderr error line and the command that reproduces it, never
cut. Failures of one def with the same stderr error line share a cause: the first is
shown in full and the others are listed under it. Then the skipped cells, each rule with
its reason, and the verdict line. Every disposition has its own glyph and word, so colour
is an aid, not the message. Colour (plain ANSI SGR, no dependency) is used only when the stream is
a TTY and ``NO_COLOR`` is unset or empty (no-color.org); ``FORCE_COLOR``
forces it on.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TextIO

from conformance.reports import LABELS, SYMBOLS, ReportMeta
from conformance.verdicts import DISPOSITION_ORDER, Cell, Disposition, Verdict

__all__ = ["print_report", "render", "use_color"]

_SGR: dict[Disposition, str] = {
    Disposition.FAIL: "1;31",
    Disposition.STALE: "1;35",
    Disposition.NOT_TESTED: "1;33",
    Disposition.FLAKY: "36",
    Disposition.EXPECTED_FAIL: "34",
    Disposition.PASS: "32",
    Disposition.SKIPPED: "2",
}
#: Column headings of the table, short enough for 80 columns.
_SHORT: dict[Disposition, str] = {
    Disposition.FAIL: "fail",
    Disposition.STALE: "stale",
    Disposition.NOT_TESTED: "n/t",
    Disposition.FLAKY: "flaky",
    Disposition.EXPECTED_FAIL: "xfail",
    Disposition.PASS: "pass",
    Disposition.SKIPPED: "skip",
}
#: Dispositions listed cell by cell under "needs attention".
_ATTENTION = (Disposition.FAIL, Disposition.STALE, Disposition.NOT_TESTED, Disposition.FLAKY)


def use_color(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """Colour iff ``stream`` is a TTY and ``NO_COLOR`` is unset or empty; ``FORCE_COLOR`` wins."""
    environ = os.environ if env is None else env
    if environ.get("FORCE_COLOR"):
        return True
    if environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class _Painter:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, sgr: str) -> str:
        return f"\x1b[{sgr}m{text}\x1b[0m" if self.color and text.strip() else text


def _clip(text: str, width: int) -> str:
    """``text`` on one line, at most ``width`` characters, cut at a word boundary."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[: max(1, width - 1)]
    if " " in cut and text[len(cut)] != " ":
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:") + "…"


def _reason(cell: Cell) -> str:
    """The cell's reason without the rule id and def id the line shows already."""
    text = cell.reason
    for prefix in (f"{cell.rule_id}: ", f"def {cell.def_id!r}: ", f"{cell.def_id}: "):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    return text


def render(
    verdict: Verdict,
    meta: ReportMeta,
    *,
    color: bool = False,
    width: int = 100,
    max_items: int = 50,
) -> str:
    """The report as text, ``width`` columns wide at most (reasons are clipped)."""
    paint = _Painter(color)
    lines = [
        f"{meta.title} — adapter-harness {meta.tool_version} — {meta.timestamp}",
        f"{len(verdict.defs)} defs × {len(verdict.rules)} rules · {len(verdict.cells)} cells · "
        f"{sum(len(c.outcomes) for c in verdict.cells)} outcomes",
        "",
    ]
    name_w = max([len("def"), len("total"), *(len(d) for d in verdict.defs)])
    heads = [f"{SYMBOLS[d]} {_SHORT[d]}" for d in DISPOSITION_ORDER]
    col_w = [max(len(h), 5) for h in heads]
    lines.append(
        "def".ljust(name_w) + "".join("  " + h.rjust(w) for h, w in zip(heads, col_w, strict=True))
    )

    def row(name: str, counts: Mapping[Disposition, int]) -> str:
        out = name.ljust(name_w)
        for d, w in zip(DISPOSITION_ORDER, col_w, strict=True):
            n = counts[d]
            out += "  " + (paint(str(n).rjust(w), _SGR[d]) if n else "·".rjust(w))
        return out

    for def_id, counts in verdict.counts_by_def().items():
        lines.append(row(def_id, counts))
    if len(verdict.defs) > 1:
        lines.append(row("total", verdict.counts()))

    attention = [c for c in verdict.cells if c.disposition in _ATTENTION]
    attention.sort(key=lambda c: (not c.fails_run, DISPOSITION_ORDER.index(c.disposition)))
    if attention:
        lines += ["", "Needs attention:"]
        groups = _by_cause(attention)
        for head, rest in groups[:max_items]:
            lines.extend(_attention_lines(head, rest, paint, width=width))
        if len(groups) > max_items:
            more = sum(1 + len(rest) for _, rest in groups[max_items:])
            lines.append(f"  … and {more} more (see the JSON or HTML report)")
    lines.extend(_skipped_lines(verdict, width=width, max_items=max_items))
    expected = verdict.counts()[Disposition.EXPECTED_FAIL]
    if expected:
        noun = "failure" if expected == 1 else "failures"
        lines += ["", f"{expected} expected {noun} (listed in the baseline)."]
    for entry in verdict.unmatched_entries:
        lines.append(f"note: baseline entry {entry.text!r} ({entry.where}) matched no cell")
    lines.append("")
    if verdict.conformant:
        lines.append(paint(f"Verdict: CONFORMANT (exit {verdict.exit_code})", "1;32"))
    else:
        lines.append(paint(f"Verdict: NOT CONFORMANT (exit {verdict.exit_code})", "1;31"))
        lines.extend(f"  - {reason}" for reason in verdict.reasons())
    return "\n".join(lines) + "\n"


def _cause(cell: Cell) -> str | None:
    return cell.evidence.stderr_error_line() if cell.evidence is not None else None


def _by_cause(cells: list[Cell]) -> list[tuple[Cell, list[Cell]]]:
    """Cells grouped under the first of their def that shows the same stderr error line
    (its symptoms); a cell without one is a group of its own. Order is kept."""
    groups: list[tuple[Cell, list[Cell]]] = []
    heads: dict[tuple[str, str, Disposition], int] = {}
    for cell in cells:
        cause = _cause(cell)
        key = (cell.def_id, cause or "", cell.disposition)
        if cause is not None and key in heads:
            groups[heads[key]][1].append(cell)
            continue
        if cause is not None:
            heads[key] = len(groups)
        groups.append((cell, []))
    return groups


def _attention_lines(head: Cell, rest: list[Cell], paint: _Painter, *, width: int) -> list[str]:
    label = f"{SYMBOLS[head.disposition]} {LABELS[head.disposition]}"
    tier = head.tier.value + ("" if head.fails_run else ", does not fail the run")
    out = [f"  {paint(label, _SGR[head.disposition])}  {head.def_id}  {head.rule_id} ({tier})"]
    pad = "      "
    out.append(pad + _clip(_reason(head), width - len(pad)))
    cause = _cause(head)
    if cause is not None:
        out.append(pad + _clip(f"CLI stderr: {cause}", width - len(pad)))
    if head.evidence is not None:
        out.append(f"{pad}reproduce: {head.evidence.repro_command}")
    if rest:
        noun = "failure" if len(rest) == 1 else "failures"
        out.append(f"{pad}{len(rest)} more {noun} from the same CLI error:")
        rule_w = max(len(c.rule_id) for c in rest)
        for cell in rest:
            lead = f"{pad}  {cell.rule_id.ljust(rule_w)}  "
            out.append(lead + _clip(_reason(cell), width - len(lead)))
    return out


def _skipped_lines(verdict: Verdict, *, width: int, max_items: int) -> list[str]:
    """Every skipped rule with why: with one def, each rule and its reason; with several,
    each rule once, with how many defs skip it, its most common reason and those defs."""
    by_rule: dict[str, dict[str, list[str]]] = {}
    for cell in verdict.cells:
        if cell.disposition is Disposition.SKIPPED:
            why = _reason(cell)
            while why.startswith("not applicable: "):  # a check may have said it already
                why = why.removeprefix("not applicable: ")
            by_rule.setdefault(cell.rule_id, {}).setdefault(why, []).append(cell.def_id)
    if not by_rule:
        return []
    count = sum(len(d) for reasons in by_rule.values() for d in reasons.values())
    out = ["", f"Skipped ({count} cell{'' if count == 1 else 's'}):"]
    rule_w = max(len(rule) for rule in by_rule)
    rows: list[tuple[str, str]] = []
    for rule, reasons in sorted(by_rule.items()):
        if len(verdict.defs) == 1:
            rows += [(rule, why) for why in reasons]
            continue
        ranked = sorted(reasons.items(), key=lambda item: -len(item[1]))
        defs = [d for _, ds in ranked for d in ds]
        text = f"{len(defs)} def{'' if len(defs) == 1 else 's'}: {ranked[0][0]}"
        if len(ranked) > 1:
            text += f" (+{len(ranked) - 1} other reason{'' if len(ranked) == 2 else 's'})"
        rows.append((rule, f"{text} [{', '.join(defs)}]"))
    for rule, text in rows[:max_items]:
        lead = f"  {SYMBOLS[Disposition.SKIPPED]} {rule.ljust(rule_w)}  "
        out.append(lead + _clip(text, width - len(lead)))
    if len(rows) > max_items:
        out.append(f"  … and {len(rows) - max_items} more (see the JSON or HTML report)")
    return out


def print_report(
    verdict: Verdict,
    meta: ReportMeta,
    stream: TextIO | None = None,
    *,
    env: Mapping[str, str] | None = None,
    width: int | None = None,
) -> None:
    """Write :func:`render` to ``stream`` (default stdout), coloured per :func:`use_color`."""
    out = sys.stdout if stream is None else stream
    if width is None:
        import shutil

        width = shutil.get_terminal_size((100, 24)).columns
    out.write(render(verdict, meta, color=use_color(out, env), width=width))
