"""The HTML report: one self-contained page a person can read at a glance.

Rules: CONFORM-REPORT-ESCAPE-001.
Design: docs/design/conformance.md#conformance.reports.html
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from typing import Any

from conformance.reports import (
    ARROWS,
    LABELS,
    MEANINGS,
    SYMBOLS,
    ReportMeta,
    outcome_groups,
    rule_links,
    spec_href,
)
from conformance.rules import Rule, Tier
from conformance.verdicts import DISPOSITION_ORDER, Cell, Disposition, Verdict

__all__ = ["BAND_DEFS", "bands", "json_island", "render"]

_TIER_LETTER = {Tier.MANDATORY: "M", Tier.CAPABILITY: "C", Tier.ADVISORY: "A"}
#: Dispositions listed under "needs attention" and counted in the def headers.
_PROBLEMS = (Disposition.FAIL, Disposition.STALE, Disposition.NOT_TESTED, Disposition.FLAKY)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def json_island(data: object) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&``."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, esc in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, esc)
    return text


def _area(rule_id: str) -> str:
    return rule_id.split("-", 1)[0]


class _Texts:
    """Strings said once in the page's data: an outcome names its scenarios and reason by
    index into ``DATA.texts`` (CONFORM-REPORT-SIZE-001; they repeat across defs)."""

    def __init__(self) -> None:
        self.index: dict[str | None, int] = {}

    def __call__(self, text: str | None) -> int:
        return self.index.setdefault(text, len(self.index))

    @property
    def table(self) -> list[str | None]:
        return list(self.index)


def _cell_data(verdict: Verdict, cell: Cell, texts: _Texts) -> dict[str, Any]:
    entries = [
        {"entry": e.text, "where": e.where, "note": e.note, "list": "baseline"}
        for e in cell.baseline_entries
    ] + [
        {"entry": e.text, "where": e.where, "note": e.note, "list": "flaky"}
        for e in cell.flaky_entries
    ]
    # Empty fields are left out (the page has thousands of cells); the script defaults them.
    data: dict[str, Any] = {
        "def": cell.def_id,
        "rule": cell.rule_id,
        "disp": cell.disposition.value,
        "failsRun": cell.fails_run,
        "reason": cell.reason,
        "entries": entries,
        # CONFORM-REPORT-SIZE-001: outcomes saying the same thing are one row.
        "outcomes": [
            # [scenario text indexes, attempt, status, ms, reason text index]
            [
                [texts(n) for n in g.scenarios],
                g.attempt,
                g.status.value,
                round(g.duration_ms, 1),
                texts(g.reason),
            ]
            for g in outcome_groups(cell)[0]
        ],
        "evidence": None if cell.evidence is None else cell.evidence.to_json(),
    }
    return {k: v for k, v in data.items() if v or k in ("def", "rule", "disp")}


def _rule_data(rule: Rule, meta: ReportMeta) -> dict[str, Any]:
    return {
        "tier": rule.tier.value,
        "statement": rule.statement,
        "citation": rule.citation,
        "links": [{"href": spec_href(meta, link), "text": link} for link in rule_links(rule)],
        "capability": rule.capability,
    }


def _cell_label(cell: Cell) -> str:
    label = f"{cell.def_id} × {cell.rule_id}: {LABELS[cell.disposition]}"
    if cell.disposition is Disposition.PASS:
        return label
    run = "fails the run" if cell.fails_run else "does not fail the run"
    return f"{label}, {cell.tier.value} rule, {run}"


#: Def columns per band of the matrix: one band fits a 1400 px wide window with room to
#: spare (the rule column takes at most 420 px, a def column 38 px): no column is cut off.
BAND_DEFS = 20


def bands(defs: tuple[str, ...], size: int = BAND_DEFS) -> list[tuple[str, ...]]:
    """``defs`` in consecutive bands of at most ``size``, as even as can be (29 defs: 15
    and 14, not 24 and 5)."""
    if not defs:
        return [()]
    count = -(-len(defs) // size)
    per = -(-len(defs) // count)
    return [defs[k : k + per] for k in range(0, len(defs), per)]


def _matrix(verdict: Verdict, index: dict[tuple[str, str], int]) -> Iterator[str]:
    """The defs × rules matrix: one table per band of defs, stacked (CONFORM-REPORT-HTML-001)."""
    groups = bands(verdict.defs)
    yield '<div class="matrix-bands" id="matrix">'
    for number, band in enumerate(groups):
        yield from _band(verdict, index, band, number, len(groups))
    yield "</div>"


def _band(
    verdict: Verdict,
    index: dict[tuple[str, str], int],
    defs: tuple[str, ...],
    number: int,
    count: int,
) -> Iterator[str]:
    by_def = verdict.counts_by_def()
    first = verdict.defs.index(defs[0]) + 1 if defs else 0
    which = f" ({first}–{first + len(defs) - 1} of {len(verdict.defs)})" if count > 1 else ""
    yield f'<table class="matrix" data-band="{number}"><thead><tr>'
    yield (
        '<th class="corner" scope="col">Rule <span class="muted">↓</span> / def →'
        f'<span class="muted">{which}</span></th>'
    )
    for def_id in defs:
        bad = sum(n for d, n in by_def[def_id].items() if d in _PROBLEMS)
        badge = (
            f'<span class="dbad" title="{bad} cells need attention">{bad}</span>'
            if bad
            else '<span class="dok" title="nothing needs attention">✓</span>'
        )
        yield (
            f'<th scope="col" class="def" data-def="{_e(def_id)}">'
            f'<span class="dname">{_e(def_id)}</span>{badge}</th>'
        )
    yield "</tr></thead><tbody>"
    ncols = len(defs) + 1
    current_area = None
    for rule in verdict.rules.values():
        area = _area(rule.id)
        if area != current_area:
            current_area = area
            n = sum(1 for r in verdict.rules if _area(r) == area)
            yield (
                f'<tr class="area" data-area="{_e(area)}"><th colspan="{ncols}" scope="colgroup">'
                f'{_e(area)} <span class="muted">· {n} rule{"s" if n != 1 else ""}</span></th></tr>'
            )
        text = f"{rule.id} {rule.statement}".lower()
        yield (
            f'<tr class="r" data-rule="{_e(rule.id)}" data-tier="{rule.tier.value}" '
            f'data-area="{_e(area)}" data-text="{_e(text)}">'
            f'<th scope="row" class="rule" title="{_e(rule.statement)}">'
            f'<span class="rid">{_e(rule.id)}</span>'
            f'<span class="tier t-{rule.tier.value}" title="{rule.tier.value} rule">'
            f'{_TIER_LETTER[rule.tier]}<span class="sr"> ({rule.tier.value})</span></span>'
            f'<span class="stmt">{_e(rule.statement)}</span></th>'
        )
        for def_id in defs:
            cell = verdict.cell(def_id, rule.id)
            if cell is None:
                yield f'<td class="c na" data-def="{_e(def_id)}" data-disp="na"></td>'
                continue
            d = cell.disposition
            # The hover text (verdict and reason) is set by the script from the data, so
            # each reason is in the page once (CONFORM-REPORT-SIZE-001).
            yield (
                f'<td class="c d-{d.value}" data-def="{_e(def_id)}" data-disp="{d.value}">'
                f'<button type="button" class="cell" data-cell="{index[(def_id, rule.id)]}" '
                f'aria-label="{_e(_cell_label(cell))}">'
                f'<span aria-hidden="true">{SYMBOLS[d]}</span></button></td>'
            )
        yield "</tr>"
    yield "</tbody></table>"


def _header(verdict: Verdict, meta: ReportMeta) -> Iterator[str]:
    ok = verdict.conformant
    verdict_text = "CONFORMANT" if ok else "NOT CONFORMANT"
    yield '<header class="top">'
    yield f'<div class="ttl"><h1>{_e(meta.title)}</h1><p class="meta">'
    yield (
        f"adapter-harness {_e(meta.tool_version)} · generated "
        f'<time datetime="{_e(meta.timestamp)}">{_e(meta.timestamp)}</time> · '
        f"{len(verdict.defs)} defs × {len(verdict.rules)} rules · {len(verdict.cells)} cells"
    )
    if meta.command:
        yield f' · <code class="cmd">{_e(" ".join(meta.command))}</code>'
    yield "</p></div>"
    yield (
        f'<div class="verdict {"ok" if ok else "bad"}" role="status" id="verdict">'
        f'<span aria-hidden="true">{"✓" if ok else "✗"}</span> {verdict_text}'
        f"<small>exit {verdict.exit_code}</small></div>"
    )
    yield "</header>"
    reasons = verdict.reasons()
    if reasons or verdict.unmatched_entries:
        yield '<ul class="reasons">'
        for reason in reasons:
            yield f"<li>{_e(reason)}</li>"
        for entry in verdict.unmatched_entries:
            yield (
                f'<li class="note">baseline entry <code>{_e(entry.text)}</code> '
                f"({_e(entry.where)}) matched no cell</li>"
            )
        yield "</ul>"


def _summary(verdict: Verdict) -> Iterator[str]:
    counts = verdict.counts()
    yield '<section class="chips" aria-label="Verdict counts">'
    for d in DISPOSITION_ORDER:
        yield (
            f'<button type="button" class="chip d-{d.value}" data-only="{d.value}" '
            f'title="Show only {_e(LABELS[d])} cells" aria-label="{counts[d]} {_e(LABELS[d])} '
            f'cells; show only these"><span class="g" aria-hidden="true">{SYMBOLS[d]}</span>'
            f'<span class="n">{counts[d]}</span><span class="l">{_e(LABELS[d])}</span></button>'
        )
    yield "</section>"


def _attention(verdict: Verdict, index: dict[tuple[str, str], int]) -> Iterator[str]:
    cells = [c for c in verdict.cells if c.disposition in _PROBLEMS]
    if not cells:
        return
    cells.sort(key=lambda c: (not c.fails_run, DISPOSITION_ORDER.index(c.disposition)))
    yield '<section class="attention" aria-label="Needs attention"><h2>Needs attention</h2><ul>'
    for c in cells:
        yield (
            f'<li><button type="button" class="att d-{c.disposition.value}" '
            f'data-cell="{index[(c.def_id, c.rule_id)]}" aria-label="{_e(_cell_label(c))}">'
            f'<span class="g" aria-hidden="true">{SYMBOLS[c.disposition]}</span>'
            f"<b>{_e(LABELS[c.disposition])}</b> <code>{_e(c.def_id)}</code> × "
            f'<code>{_e(c.rule_id)}</code><span class="tier t-{c.tier.value}">'
            f"{c.tier.value}</span>"
            + ("" if c.fails_run else '<span class="soft">does not fail the run</span>')
            + f'<span class="why">{_e(c.reason)}</span></button></li>'
        )
    yield "</ul></section>"


def _controls(verdict: Verdict) -> Iterator[str]:
    yield '<section class="controls" aria-label="Filters">'
    yield '<fieldset class="f-status"><legend>Verdict</legend>'
    for d in DISPOSITION_ORDER:
        yield (
            f'<label class="fs d-{d.value}"><input type="checkbox" name="disp" '
            f'value="{d.value}" checked><span class="g" aria-hidden="true">{SYMBOLS[d]}</span>'
            f"{_e(LABELS[d])}</label>"
        )
    yield "</fieldset>"
    yield '<label>Tier <select id="f-tier"><option value="">all tiers</option>'
    for t in Tier:
        yield f'<option value="{t.value}">{t.value}</option>'
    yield '</select></label><label>Def <select id="f-def"><option value="">all defs</option>'
    for def_id in verdict.defs:
        yield f'<option value="{_e(def_id)}">{_e(def_id)}</option>'
    yield "</select></label>"
    yield (
        '<label>Rule <input type="search" id="f-text" placeholder="id or words" '
        'autocomplete="off"></label>'
        '<button type="button" id="f-problems">Problems only</button>'
        '<button type="button" id="f-reset">Show all</button>'
        '<output id="f-count" aria-live="polite"></output>'
    )
    yield "</section>"


def _legend() -> Iterator[str]:
    yield '<details class="legend" open><summary>Legend</summary><ul>'
    for d in DISPOSITION_ORDER:
        yield (
            f'<li><span class="sw d-{d.value}" aria-hidden="true">{SYMBOLS[d]}</span>'
            f"<b>{_e(LABELS[d])}</b> — {_e(MEANINGS[d])}</li>"
        )
    yield (
        '<li><span class="sw na" aria-hidden="true">·</span><b>n/a</b> — '
        "the rule does not apply to this def's stream format</li>"
        '<li><span class="tier t-mandatory">M</span> mandatory · '
        '<span class="tier t-capability">C</span> capability · '
        '<span class="tier t-advisory">A</span> advisory</li>'
    )
    yield "</ul></details>"


_PANEL = """<aside id="panel" class="panel" role="dialog" aria-labelledby="p-title" hidden>
<div class="p-head"><h2 id="p-title"></h2>
<button type="button" id="p-close" aria-label="Close evidence">✕</button></div>
<div id="p-body"></div></aside>"""


def render(verdict: Verdict, meta: ReportMeta) -> str:
    """The whole page as one string."""
    index = {(c.def_id, c.rule_id): i for i, c in enumerate(verdict.cells)}
    texts = _Texts()
    data = {
        "cells": [_cell_data(verdict, c, texts) for c in verdict.cells],
        "texts": texts.table,
        "rules": {r.id: _rule_data(r, meta) for r in verdict.rules.values()},
        "labels": {d.value: LABELS[d] for d in Disposition},
        "symbols": {d.value: SYMBOLS[d] for d in Disposition},
        "arrows": {k.value: v for k, v in ARROWS.items()},
    }
    parts: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
        f"<title>{_e(meta.title)} — {'conformant' if verdict.conformant else 'not conformant'}"
        "</title>",
        f"<style>{_CSS}</style></head><body>",
    ]
    parts.extend(_header(verdict, meta))
    parts.extend(_summary(verdict))
    parts.extend(_attention(verdict, index))
    parts.extend(_controls(verdict))
    parts.extend(_legend())
    parts.append('<main class="wrap" id="wrap">')
    parts.extend(_matrix(verdict, index))
    parts.append('<p id="empty" class="empty" hidden>No cell matches these filters.</p>')
    parts.append("</main>")
    parts.append(_PANEL)
    parts.append(f'<script type="application/json" id="report-data">{json_island(data)}</script>')
    parts.append(f"<script>{_JS}</script></body></html>")
    return "\n".join(parts) + "\n"


_CSS = """
:root{--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--bg:#f6f8fa;--card:#fff;
--pass-bg:#dafbe1;--pass-fg:#116329;--fail-bg:#cf222e;--fail-fg:#fff;--stale-bg:#8250df;
--stale-fg:#fff;--nt-bg:#fff1b3;--nt-fg:#7d4e00;--flaky-bg:#ffe2cc;--flaky-fg:#a0410d;
--xf-bg:#ddf4ff;--xf-fg:#0550ae;--skip-bg:#eef1f4;--skip-fg:#6e7781}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI","DejaVu Sans",sans-serif;
color:var(--fg);background:var(--bg)}
code,pre,.rid{font-family:ui-monospace,"SFMono-Regular","DejaVu Sans Mono",Menlo,monospace}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.muted{color:var(--muted);font-weight:400}
.top{display:flex;gap:16px;align-items:center;justify-content:space-between;
padding:14px 20px;background:var(--card);border-bottom:1px solid var(--line)}
.top h1{font-size:20px;margin:0}.meta{margin:2px 0 0;color:var(--muted);font-size:12.5px}
.cmd{background:var(--bg);padding:1px 5px;border-radius:4px}
.verdict{font-weight:700;font-size:16px;padding:8px 14px;border-radius:8px;white-space:nowrap;
display:flex;gap:8px;align-items:center}
.verdict small{font-weight:500;opacity:.85;font-size:12px}
.verdict.ok{background:var(--pass-bg);color:var(--pass-fg);border:1px solid #4ac26b}
.verdict.bad{background:var(--fail-bg);color:#fff}
.reasons{margin:0;padding:8px 20px 8px 40px;background:#fff5f5;border-bottom:1px solid #ffcecb;
color:#82071e;font-size:13px}.reasons .note{color:var(--muted)}
.chips{display:flex;flex-wrap:wrap;gap:8px;padding:12px 20px 4px}
.chip{display:flex;align-items:center;gap:6px;border:1px solid var(--line);border-radius:999px;
padding:4px 12px 4px 6px;cursor:pointer;font:inherit;background:var(--card);color:var(--fg)}
.chip .g{display:inline-grid;place-items:center;width:22px;height:22px;border-radius:50%;
font-weight:700}
.chip .n{font-weight:700;font-variant-numeric:tabular-nums}
.chip .l{color:var(--muted);font-size:12px}
.chip:hover{border-color:#8c959f}
.attention{margin:8px 20px;padding:8px 12px;background:var(--card);border:1px solid var(--line);
border-radius:8px;max-height:180px;overflow:hidden auto}
.attention h2{font-size:13px;margin:0 0 6px;text-transform:uppercase;letter-spacing:.04em;
color:var(--muted)}
.attention ul{list-style:none;margin:0;padding:0;display:grid;gap:3px}
.att{display:flex;gap:8px;align-items:baseline;width:100%;text-align:left;border:0;
background:none;font:inherit;color:inherit;cursor:pointer;padding:3px 6px;border-radius:6px}
.att:hover,.att:focus-visible{background:var(--bg)}
.att .g{display:inline-grid;place-items:center;min-width:20px;height:20px;border-radius:4px;
font-weight:700}
.att .soft{color:var(--muted);font-size:11.5px;font-style:italic}
.att .why{color:var(--muted);overflow:hidden;text-overflow:ellipsis;white-space:nowrap;flex:1;
min-width:0}
.controls{display:flex;flex-wrap:wrap;gap:10px 16px;align-items:center;padding:8px 20px;
font-size:13px}
.controls fieldset{border:0;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:6px;
align-items:center}
.controls legend{float:left;margin-right:4px;color:var(--muted)}
.fs{display:flex;align-items:center;gap:4px;border:1px solid var(--line);border-radius:6px;
padding:2px 8px 2px 4px;background:var(--card);cursor:pointer}
.fs .g{display:inline-grid;place-items:center;width:18px;height:18px;border-radius:4px;
font-weight:700;font-size:12px}
.controls select,.controls input[type=search],.controls button{font:inherit;padding:3px 8px;
border:1px solid var(--line);border-radius:6px;background:var(--card);color:inherit}
.controls button{cursor:pointer}#f-count{color:var(--muted)}
.legend{margin:0 20px 8px;font-size:12.5px;color:var(--muted)}
.legend summary{cursor:pointer}
.legend ul{list-style:none;display:flex;flex-wrap:wrap;gap:4px 18px;padding:6px 0 0;margin:0}
.legend li{display:flex;align-items:center;gap:6px}.legend b{color:var(--fg)}
.sw{display:inline-grid;place-items:center;width:20px;height:20px;border-radius:4px;
font-weight:700}
.wrap{margin:0 20px 20px;max-height:calc(100vh - 40px);max-width:calc(100% - 40px);
width:fit-content;overflow:auto;background:var(--card);border:1px solid var(--line);
border-radius:8px}
.matrix{border-collapse:separate;border-spacing:0;width:max-content}
.matrix+.matrix{border-top:3px solid var(--line)}
.matrix thead th{position:sticky;top:0;z-index:2;background:var(--card);
border-bottom:2px solid var(--line);vertical-align:bottom;padding:6px 2px}
.matrix th.corner{left:0;z-index:3;text-align:left;padding:6px 10px;font-size:12px;
color:var(--muted);min-width:340px}
.matrix th.def{width:38px;min-width:38px;max-width:38px}
.dname{display:block;writing-mode:vertical-rl;transform:rotate(180deg);margin:0 auto;
max-height:150px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;font-weight:600;
font-size:12.5px}
.dbad,.dok{display:block;margin:4px auto 0;width:22px;border-radius:9px;font-size:11px;
font-weight:700;text-align:center}.dbad{background:var(--fail-bg);color:#fff}
.dok{color:var(--pass-fg)}
.matrix th.rule{position:sticky;left:0;z-index:1;background:var(--card);text-align:left;
padding:3px 10px;border-right:1px solid var(--line);max-width:420px;font-weight:400;
border-bottom:1px solid #eaeef2}
.rid{font-size:12.5px;font-weight:600}
.stmt{display:block;color:var(--muted);font-size:11.5px;white-space:nowrap;overflow:hidden;
text-overflow:ellipsis;max-width:400px}
.tier{display:inline-block;margin-left:6px;font-size:10px;font-weight:700;border-radius:3px;
padding:0 4px;line-height:15px;vertical-align:1px}
.t-mandatory{background:#24292f;color:#fff}.t-capability{background:#0969da;color:#fff}
.t-advisory{background:#eaeef2;color:#57606a;border:1px solid #d0d7de}
.area th{position:sticky;left:0;text-align:left;background:#f6f8fa;font-size:12px;
letter-spacing:.05em;padding:5px 10px;border-bottom:1px solid var(--line);
border-top:1px solid var(--line)}
td.c{padding:2px;text-align:center;border-bottom:1px solid #eaeef2}
td.na::after{content:"·";color:#c9d1d9}
.cell{width:32px;height:24px;border-radius:5px;border:1px solid transparent;cursor:pointer;
font:700 14px/1 system-ui,"DejaVu Sans",sans-serif;padding:0}
.cell:hover{filter:brightness(.93);outline:2px solid #8c959f}
.cell:focus-visible,.cell.sel{outline:3px solid #0969da;outline-offset:1px}
.d-pass .cell,.chip.d-pass .g,.att.d-pass .g,.sw.d-pass,.fs.d-pass .g{background:var(--pass-bg);
color:var(--pass-fg)}
.d-fail .cell,.chip.d-fail .g,.att.d-fail .g,.sw.d-fail,.fs.d-fail .g{background:var(--fail-bg);
color:var(--fail-fg)}
.d-stale .cell,.chip.d-stale .g,.att.d-stale .g,.sw.d-stale,.fs.d-stale .g{
background:var(--stale-bg);color:var(--stale-fg)}
.d-not_tested .cell,.chip.d-not_tested .g,.att.d-not_tested .g,.sw.d-not_tested,
.fs.d-not_tested .g{background:var(--nt-bg);color:var(--nt-fg);border-color:#d4a72c}
.d-flaky .cell,.chip.d-flaky .g,.att.d-flaky .g,.sw.d-flaky,.fs.d-flaky .g{
background:var(--flaky-bg);color:var(--flaky-fg);border:1px dashed #bc4c00}
.d-expected_fail .cell,.chip.d-expected_fail .g,.att.d-expected_fail .g,.sw.d-expected_fail,
.fs.d-expected_fail .g{color:var(--xf-fg);background:repeating-linear-gradient(135deg,
var(--xf-bg) 0 5px,#c8e6ff 5px 7px)}
.d-skipped .cell,.chip.d-skipped .g,.att.d-skipped .g,.sw.d-skipped,.fs.d-skipped .g{
background:var(--skip-bg);color:var(--skip-fg)}
td.dim .cell{opacity:.18}
.hide{display:none!important}
.empty{padding:20px;color:var(--muted)}
.panel{position:fixed;top:0;right:0;bottom:0;width:min(720px,56vw);background:var(--card);
border-left:1px solid var(--line);box-shadow:-10px 0 28px rgba(31,35,40,.16);overflow:auto;
z-index:10;padding:0 20px 28px}
.p-head{position:sticky;top:0;background:var(--card);display:flex;justify-content:space-between;
align-items:center;gap:10px;padding:14px 0 10px;border-bottom:1px solid var(--line);z-index:1}
.p-head h2{font-size:16px;margin:0;font-family:ui-monospace,"DejaVu Sans Mono",monospace}
#p-close{font:inherit;font-size:16px;border:1px solid var(--line);background:var(--card);
border-radius:6px;width:32px;height:32px;cursor:pointer}
.badge{display:inline-flex;align-items:center;gap:6px;padding:3px 10px;border-radius:6px;
font-weight:700;font-size:13px}
.p-sec{margin-top:14px}.p-sec h3{font-size:12px;text-transform:uppercase;letter-spacing:.05em;
color:var(--muted);margin:0 0 6px}
.p-stmt{margin:10px 0 2px}.p-cite{color:var(--muted);font-size:12px}
.p-run{font-size:12px;margin-left:8px}.p-run.bad{color:#cf222e}.p-run.ok{color:var(--muted)}
.p-summary{font-weight:600}
pre{margin:0;padding:8px 10px;background:#f6f8fa;border:1px solid #eaeef2;border-radius:6px;
white-space:pre-wrap;word-break:break-word;font-size:12px;max-height:320px;overflow:auto}
.ea{display:grid;grid-template-columns:1fr 1fr;gap:10px}
.ea h4{margin:0 0 4px;font-size:12px}.ea .exp h4{color:#116329}.ea .act h4{color:#cf222e}
.ea .exp pre{border-left:3px solid #4ac26b}.ea .act pre{border-left:3px solid #cf222e}
.tx{list-style:none;margin:0;padding:0;display:grid;gap:4px}
.tx li{display:grid;grid-template-columns:86px 1fr;gap:6px;align-items:start}
.dir{font:600 11.5px ui-monospace,"DejaVu Sans Mono",monospace;padding:5px 6px;border-radius:5px;
text-align:left;white-space:nowrap}
.dir-stdin{background:#ddf4ff;color:#0550ae}.dir-stdout{background:#dafbe1;color:#116329}
.dir-stderr{background:#fff1e5;color:#953800}
.tx pre{max-height:180px}
.repro{display:flex;gap:8px;align-items:stretch}.repro pre{flex:1;background:#24292f;color:#f6f8fa;
border-color:#24292f}
.copy{font:inherit;font-size:12px;border:1px solid var(--line);border-radius:6px;
background:var(--card);cursor:pointer;padding:0 12px}
.oc{border-collapse:collapse;width:100%;font-size:12.5px}
.oc th,.oc td{border-bottom:1px solid #eaeef2;padding:4px 6px;text-align:left;vertical-align:top}
.ctl{color:#8250df;background:#fbefff;border-radius:3px;padding:0 1px}
.entries{margin:0;padding-left:18px}.none{color:var(--muted);font-style:italic}
body.panel-open{padding-right:min(720px,56vw)}
@media (max-width:900px){.panel{width:100vw}.ea{grid-template-columns:1fr}
body.panel-open{padding-right:0}}
"""

_JS = r"""
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("report-data").textContent);
  var $ = function (s, r) { return (r || document).querySelector(s); };
  var $$ = function (s, r) {
    return Array.prototype.slice.call((r || document).querySelectorAll(s));
  };
  var PROBLEMS = ["fail", "stale", "not_tested", "flaky"];
  var rows = $$("#matrix tbody tr.r");
  var areas = $$("#matrix tbody tr.area");
  var panel = $("#panel"), body = $("#p-body"), selected = null;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) { Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); }); }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function section(title) {
    var s = el("section", {"class": "p-sec"});
    s.appendChild(el("h3", null, title));
    body.appendChild(s);
    return s;
  }
  // Control characters (an ANSI colour in a stderr tail) show as marked \xNN escapes.
  var CONTROL = /([\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f])/;
  function pre(text, cls) {
    var node = el("pre", cls ? {"class": cls} : null);
    String(text).split(CONTROL).forEach(function (part, i) {
      if (i % 2 === 1) {
        var hex = ("0" + part.charCodeAt(0).toString(16)).slice(-2);
        node.appendChild(el("span", {"class": "ctl", "title": "control character"}, "\\x" + hex));
      } else if (part) {
        node.appendChild(document.createTextNode(part));
      }
    });
    return node;
  }

  function copyText(text, button) {
    function done(ok) {
      button.textContent = ok ? "Copied ✓" : "Select & copy";
      setTimeout(function () { button.textContent = "Copy"; }, 1600);
    }
    function fallback() {
      var ta = el("textarea");
      ta.value = text; ta.setAttribute("readonly", ""); ta.style.position = "fixed";
      ta.style.opacity = "0"; document.body.appendChild(ta); ta.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      document.body.removeChild(ta); done(ok);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
    } else { fallback(); }
  }

  function openCell(i, focusPanel) {
    var c = DATA.cells[i], rule = DATA.rules[c.rule];
    c.entries = c.entries || []; c.outcomes = c.outcomes || []; c.reason = c.reason || "";
    if (selected) { selected.classList.remove("sel"); }
    selected = $('#matrix .cell[data-cell="' + i + '"]');
    if (selected) { selected.classList.add("sel"); }
    $("#p-title").textContent = c.def + " × " + c.rule;
    body.textContent = "";
    var head = el("div", {"class": "p-sec"});
    var badge = el("span", {"class": "badge d-" + c.disp + " sw", "id": "p-badge"});
    badge.style.width = "auto";
    badge.appendChild(el("span", {"aria-hidden": "true"}, DATA.symbols[c.disp]));
    badge.appendChild(el("span", null, DATA.labels[c.disp]));
    head.appendChild(badge);
    head.appendChild(el("span", {"class": "tier t-" + rule.tier}, rule.tier));
    head.appendChild(el("span", {"class": "p-run " + (c.failsRun ? "bad" : "ok")},
      c.failsRun ? "fails the run" : "does not fail the run"));
    head.appendChild(el("p", {"class": "p-stmt"}, rule.statement));
    var cite = el("div", {"class": "p-cite"}, "cites " + rule.citation);
    (rule.links || []).forEach(function (l, k) {
      cite.appendChild(document.createTextNode(k ? ", " : " · spec: "));
      cite.appendChild(el("a", {"class": "p-spec", "href": l.href}, l.text));
    });
    if (rule.capability) {
      cite.appendChild(document.createTextNode(" · capability: " + rule.capability));
    }
    head.appendChild(cite);
    body.appendChild(head);
    if (c.reason) { section("Reason").appendChild(el("p", {"id": "p-reason"}, c.reason)); }
    if (c.entries.length) {
      var ul = el("ul", {"class": "entries"});
      c.entries.forEach(function (e) {
        ul.appendChild(el("li", null, e.list + ": " + e.entry + " (" + e.where + ")" +
          (e.note ? " — " + e.note : "")));
      });
      section("Listed in").appendChild(ul);
    }
    var ev = c.evidence;
    if (ev) {
      var s = section("Evidence");
      s.appendChild(el("p", {"class": "p-summary", "id": "p-summary"}, ev.summary));
      if (ev.expected || ev.actual) {
        var grid = el("div", {"class": "ea"});
        var ex = el("div", {"class": "exp"}); ex.appendChild(el("h4", null, "Expected"));
        ex.appendChild(pre(ev.expected || "—")); grid.appendChild(ex);
        var ac = el("div", {"class": "act"}); ac.appendChild(el("h4", null, "Actual"));
        ac.appendChild(pre(ev.actual || "—")); grid.appendChild(ac);
        s.appendChild(grid);
      }
      if (ev.transcript_slice.length) {
        var t = section("Transcript slice (" + ev.transcript_slice.length + " frames" +
          (ev.omitted_frames ? ", " + ev.omitted_frames + " earlier omitted" : "") + ")");
        var ol = el("ol", {"class": "tx", "id": "p-transcript"});
        ev.transcript_slice.forEach(function (f) {
          var li = el("li");
          var who = f.dir === "stdin" ? "host → CLI" : f.dir === "stdout" ? "CLI → host (stdout)"
            : "CLI → host (stderr)";
          li.appendChild(el("span", {"class": "dir dir-" + f.dir, "title": who},
            DATA.arrows[f.dir] + " " + f.dir));
          li.appendChild(pre(f.data));
          ol.appendChild(li);
        });
        t.appendChild(ol);
      }
      if (ev.stderr_tail) {
        section("stderr tail" + (ev.stderr_omitted_chars ?
          " (" + ev.stderr_omitted_chars + " earlier characters omitted)" : ""))
          .appendChild(pre(ev.stderr_tail, "stderr"));
      }
      var r = section("Reproduce");
      var box = el("div", {"class": "repro"});
      box.appendChild(pre(ev.repro_command));
      var btn = el("button", {"type": "button", "class": "copy", "id": "p-copy"}, "Copy");
      btn.addEventListener("click", function () { copyText(ev.repro_command, btn); });
      box.appendChild(btn); r.appendChild(box);
    } else {
      var why = {
        pass: "Passed: no evidence needed.",
        stale: "It passes: remove the baseline entry listed above.",
        skipped: "Skipped: the reason above says why."
      }[c.disp] || "No evidence recorded.";
      section("Evidence").appendChild(el("p", {"class": "none"}, why));
    }
    if (c.outcomes.length) {
      var tbl = el("table", {"class": "oc"});
      var hr = el("tr");
      ["scenarios", "attempt", "status", "ms", "reason"].forEach(function (h) {
        hr.appendChild(el("th", {"scope": "col"}, h));
      });
      tbl.appendChild(hr);
      var count = 0;
      c.outcomes.forEach(function (o) {
        var tr = el("tr");
        // o = [scenario text indexes, attempt, status, ms, reason text index]
        var names = o[0].map(function (n) { return DATA.texts[n] || "—"; }).join(", ");
        count += o[0].length;
        [names, o[1], o[2], o[3], DATA.texts[o[4]]].forEach(function (v) {
          tr.appendChild(el("td", null, v));
        });
        tbl.appendChild(tr);
      });
      section("Outcomes (" + count + ")").appendChild(tbl);
    }
    panel.hidden = false;
    document.body.classList.add("panel-open");
    if (selected) { selected.scrollIntoView({block: "nearest", inline: "nearest"}); }
    history.replaceState(null, "", "#cell=" + encodeURIComponent(c.def + ":" + c.rule));
    if (focusPanel) { $("#p-close").focus(); }
  }
  function closePanel() {
    panel.hidden = true;
    document.body.classList.remove("panel-open");
    history.replaceState(null, "", location.pathname + location.search);
    if (selected) { selected.classList.remove("sel"); selected.focus(); }
  }

  // Hover text of a cell: its verdict and reason, from the data (not repeated in the page).
  function tip(ev) {
    var b = ev.target.closest && ev.target.closest("[data-cell]");
    if (b && !b.title) {
      var c = DATA.cells[Number(b.getAttribute("data-cell"))];
      b.title = DATA.labels[c.disp] + (c.reason ? ": " + c.reason : "");
    }
  }
  document.addEventListener("mouseover", tip);
  document.addEventListener("focusin", tip);

  document.addEventListener("click", function (ev) {
    var b = ev.target.closest && ev.target.closest("[data-cell]");
    if (b) { openCell(Number(b.getAttribute("data-cell")), ev.detail === 0); }
  });
  $("#p-close").addEventListener("click", closePanel);
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape" && !panel.hidden) { closePanel(); }
  });

  // Filters.
  var boxes = $$('input[name="disp"]');
  function apply() {
    var on = {}; boxes.forEach(function (b) { on[b.value] = b.checked; });
    var tier = $("#f-tier").value, def = $("#f-def").value;
    var text = $("#f-text").value.trim().toLowerCase();
    $$("#matrix [data-def]").forEach(function (n) {
      n.classList.toggle("hide", !!def && n.getAttribute("data-def") !== def);
    });
    var shown = 0, total = 0, liveAreas = {};
    function bandOf(tr) { return tr.closest("table").getAttribute("data-band"); }
    $$("#matrix table.matrix").forEach(function (t) {
      var has = !def || $$("th.def", t).some(function (th) {
        return th.getAttribute("data-def") === def;
      });
      t.classList.toggle("hide", !has);
    });
    rows.forEach(function (tr) {
      var ok = (!tier || tr.getAttribute("data-tier") === tier) &&
        (!text || tr.getAttribute("data-text").indexOf(text) >= 0);
      var any = false;
      $$("td.c", tr).forEach(function (td) {
        var d = td.getAttribute("data-disp");
        if (d === "na") { return; }
        var visibleCol = !def || td.getAttribute("data-def") === def;
        if (ok && visibleCol) { total += 1; }
        var match = !!on[d];
        td.classList.toggle("dim", !match);
        if (match && visibleCol && ok) { any = true; shown += 1; }
      });
      tr.classList.toggle("hide", !(ok && any));
      if (ok && any) { liveAreas[bandOf(tr) + ":" + tr.getAttribute("data-area")] = true; }
    });
    areas.forEach(function (a) {
      a.classList.toggle("hide", !liveAreas[bandOf(a) + ":" + a.getAttribute("data-area")]);
    });
    $("#f-count").textContent = shown + " of " + total + " cells shown";
    $("#empty").hidden = shown > 0;
  }
  boxes.forEach(function (b) { b.addEventListener("change", apply); });
  ["#f-tier", "#f-def"].forEach(function (s) { $(s).addEventListener("change", apply); });
  $("#f-text").addEventListener("input", apply);
  function only(list) {
    boxes.forEach(function (b) { b.checked = list.indexOf(b.value) >= 0; });
    apply();
  }
  $("#f-problems").addEventListener("click", function () { only(PROBLEMS); });
  $("#f-reset").addEventListener("click", function () {
    boxes.forEach(function (b) { b.checked = true; });
    $("#f-tier").value = ""; $("#f-def").value = ""; $("#f-text").value = ""; apply();
  });
  $$(".chip[data-only]").forEach(function (c) {
    c.addEventListener("click", function () { only([c.getAttribute("data-only")]); });
  });
  apply();

  var m = /^#cell=(.+)$/.exec(location.hash);
  if (m) {
    var key = decodeURIComponent(m[1]);
    DATA.cells.forEach(function (c, i) {
      if (c.def + ":" + c.rule === key) { openCell(i, false); }
    });
  }
})();
"""
