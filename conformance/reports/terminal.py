"""The terminal report: a compact verdict table (CONFORM-REPORT-TERM-001).

One row per def with a count per disposition, then the cells that need
attention (each with its reason and reproduce command), then the verdict line.
Every disposition has its own glyph and word, so colour is an aid, not the
message. Colour (plain ANSI SGR, no dependency) is used only when the stream is
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
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


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
        label_w = max(len(LABELS[c.disposition]) for c in attention) + 2
        def_w = max(len(c.def_id) for c in attention)
        rule_w = max(len(c.rule_id) for c in attention)
        for cell in attention[:max_items]:
            lines.extend(
                _attention_lines(
                    cell, paint, label_w=label_w, def_w=def_w, rule_w=rule_w, width=width
                )
            )
        if len(attention) > max_items:
            lines.append(f"  … and {len(attention) - max_items} more (see the JSON or HTML report)")
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


def _attention_lines(
    cell: Cell, paint: _Painter, *, label_w: int, def_w: int, rule_w: int, width: int
) -> list[str]:
    label = f"{SYMBOLS[cell.disposition]} {LABELS[cell.disposition]}"
    tier = cell.tier.value + ("" if cell.fails_run else ", does not fail the run")
    lead = f"  {label.ljust(label_w)} {cell.def_id.ljust(def_w)}  {cell.rule_id.ljust(rule_w)}  "
    reason = _clip(f"({tier}) {cell.reason}", max(20, width - len(lead)))
    out = [f"  {paint(label.ljust(label_w), _SGR[cell.disposition])}{lead[2 + label_w :]}{reason}"]
    if cell.evidence is not None:
        pad = " " * (2 + label_w + 1)
        out.append(pad + _clip(f"reproduce: {cell.evidence.repro_command}", width - len(pad)))
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
