"""The JSON and HTML reports stay small for many defs (CONFORM-REPORT-SIZE-001).

A run shaped like ``harness conform`` over the built-ins (37 rules, 18 scenarios per
rule) is rendered for 25 and for 100 defs. Measured when written: 100 defs gave 1.5 MB
of HTML and 2.4 MB of JSON; the real run of the 29 built-in defs gives 0.55 MB and
0.72 MB (1.5 MB and 3.2 MB before the outcomes were grouped and the page's texts said
once). The bounds leave some room and
grow only with the defs: no text is repeated per scenario.
"""

from __future__ import annotations

import pytest

from conformance.reports import html, json_report
from tests.conformance import META, large_verdict

#: Bytes per def at most (all 37 rules × 18 scenarios of one def).
MAX_HTML_PER_DEF = 18_000
MAX_JSON_PER_DEF = 26_000


@pytest.mark.rule("CONFORM-REPORT-SIZE-001")
def test_reports_of_100_defs_stay_within_a_bound_per_def() -> None:
    small, large = large_verdict(25), large_verdict(100)
    sizes = {}
    for name, render in (("html", html.render), ("json", json_report.render)):
        sizes[name] = [len(render(v, META).encode("utf-8")) for v in (small, large)]
    print(f"report sizes for 25 and 100 defs: {sizes}")
    assert sizes["html"][1] <= 100 * MAX_HTML_PER_DEF
    assert sizes["json"][1] <= 100 * MAX_JSON_PER_DEF
    for few, many in sizes.values():
        assert many <= 4.2 * few  # linear in the defs, nothing worse
