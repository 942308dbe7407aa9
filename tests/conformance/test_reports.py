"""The four reports: JSON (schema'd), JUnit XML, HTML (static checks), terminal.

CONFORM-REPORT-JSON-001, CONFORM-REPORT-JUNIT-001, CONFORM-REPORT-HTML-001,
CONFORM-REPORT-ESCAPE-001, CONFORM-REPORT-TERM-001. The HTML page in a real
browser is ``test_html_browser.py``.
"""

from __future__ import annotations

import copy
import datetime as dt
import html as html_lib
import io
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from conformance.evidence import Direction, Frame
from conformance.reports import (
    FILE_NAMES,
    LABELS,
    SYMBOLS,
    ReportMeta,
    cell_text,
    json_report,
    junit,
    terminal,
)
from conformance.reports import html as html_report
from conformance.reports.files import write_reports
from conformance.verdicts import Disposition, Status
from tests.conformance import (
    DEFS,
    HOSTILE,
    META,
    RULE_IDS,
    evidence,
    outcome,
    sample_verdict,
    verdict_of,
)

# --- JSON (CONFORM-REPORT-JSON-001) --------------------------------------------------


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = json_report.load_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@pytest.mark.rule("CONFORM-REPORT-JSON-001")
def test_json_report_validates_and_holds_every_outcome(validator: Draft202012Validator) -> None:
    verdict = sample_verdict()
    report = json.loads(json_report.render(verdict, META))
    errors = sorted(validator.iter_errors(report), key=str)
    assert not errors, "\n".join(str(e.message) for e in errors)
    assert report["tool"] == {"name": "adapter-harness", "version": "9.8.7"}
    assert report["generated_at"] == "2026-08-20T12:30:05Z"
    assert report["command"] == ["harness", "conform", "--agent", "alpha"]
    assert report["exit_code"] == 1 and report["conformant"] is False
    assert report["defs"] == list(DEFS)
    assert [r["id"] for r in report["rules"]] == sorted(RULE_IDS)
    assert len(report["cells"]) == 18
    outcomes = [s for c in report["cells"] for o in c["outcomes"] for s in o["scenarios"]]
    assert (
        len(outcomes)
        == report["summary"]["outcomes"]
        == sum(len(c.outcomes) for c in verdict.cells)
    )
    assert report["summary"]["by_disposition"] == {
        "fail": 3,
        "stale": 1,
        "not_tested": 1,
        "flaky": 1,
        "expected_fail": 1,
        "pass": 9,
        "skipped": 2,
    }
    assert report["baseline"]["stale"] == ["beta-cli:DEMO-RESUME-001"]
    assert report["flaky_list"]["entries"][0]["entry"] == "gamma.v2:DEMO-MCP-001"
    # The failing cell points at the outcome whose evidence decides it, verbatim.
    cell = next(
        c for c in report["cells"] if (c["def_id"], c["rule_id"]) == ("alpha", "DEMO-STREAM-001")
    )
    decisive = cell["outcomes"][cell["evidence_from"]]
    assert decisive["status"] == "fail"
    assert decisive["evidence"]["actual"] == HOSTILE
    assert decisive["evidence"]["transcript_slice"][1] == {"dir": "stdout", "data": HOSTILE}
    assert cell["fails_run"] is True and cell["tier"] == "mandatory"


@pytest.mark.rule("CONFORM-REPORT-JSON-001")
@pytest.mark.parametrize(
    "breakage",
    [
        lambda r: r.pop("exit_code"),
        lambda r: r["tool"].pop("version"),
        lambda r: r.update(generated_at="yesterday"),
        lambda r: r["cells"][0].update(disposition="mostly_fine"),
        lambda r: r["cells"][0]["outcomes"][0].update(status="ok"),
        lambda r: r["summary"]["by_disposition"].pop("stale"),
        lambda r: r.update(surprise=True),
        # A fail outcome without evidence breaks CONFORM-EVIDENCE-001 in the file too.
        lambda r: next(o for c in r["cells"] for o in c["outcomes"] if o["status"] == "fail").pop(
            "evidence"
        ),
        # A failure's evidence belongs to one scenario.
        lambda r: next(
            o for c in r["cells"] for o in c["outcomes"] if o["status"] == "fail"
        ).update(scenarios=["a", "b"]),
    ],
)
def test_json_schema_rejects_broken_reports(validator: Draft202012Validator, breakage: Any) -> None:
    report = json_report.build(sample_verdict(), META)
    assert validator.is_valid(report)
    broken = copy.deepcopy(report)
    breakage(broken)
    assert not validator.is_valid(broken)


@pytest.mark.rule("CONFORM-REPORT-JSON-001")
def test_json_report_of_a_conformant_run(validator: Draft202012Validator) -> None:
    verdict = verdict_of([outcome("alpha", r, Status.PASS) for r in RULE_IDS])
    report = json_report.build(verdict, META)
    assert validator.is_valid(report)
    assert report["exit_code"] == 0 and report["reasons"] == []
    assert report["baseline"] is None and report["flaky_list"] is None


@pytest.mark.rule("CONFORM-REPORT-JSON-001")
def test_report_meta_needs_an_aware_timestamp() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        ReportMeta(tool_version="1", generated_at=dt.datetime(2026, 1, 1))
    paris = dt.timezone(dt.timedelta(hours=2))
    meta = ReportMeta(tool_version="1", generated_at=dt.datetime(2026, 1, 1, 2, 0, tzinfo=paris))
    assert meta.timestamp == "2026-01-01T00:00:00Z"


@pytest.mark.rule("CONFORM-REPORT-JSON-001", "CONFORM-REPORT-JUNIT-001", "CONFORM-REPORT-HTML-001")
def test_write_reports_writes_each_file_kind(tmp_path: Path) -> None:
    written = write_reports(sample_verdict(), META, ["json", "junit", "html", "json"], tmp_path)
    assert written == {k: tmp_path / FILE_NAMES[k] for k in ("json", "junit", "html")}
    json.loads(written["json"].read_text(encoding="utf-8"))
    ET.parse(written["junit"])
    assert written["html"].read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    with pytest.raises(ValueError, match="unknown report kind"):
        write_reports(sample_verdict(), META, ["pdf"], tmp_path)


# --- JUnit (CONFORM-REPORT-JUNIT-001) ------------------------------------------------


def _junit(verdict: Any = None) -> ET.Element:
    return ET.fromstring(junit.render(verdict or sample_verdict(), META).encode("utf-8"))


@pytest.mark.rule("CONFORM-REPORT-JUNIT-001")
def test_junit_has_one_suite_per_def_and_one_case_per_rule() -> None:
    root = _junit()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == list(DEFS)
    for suite in suites:
        cases = suite.findall("testcase")
        assert sorted(c.get("name", "") for c in cases) == sorted(RULE_IDS)
        assert {c.get("classname") for c in cases} == {f"conform.{suite.get('name')}"}
        assert suite.get("tests") == str(len(cases))
        assert suite.get("failures") == str(sum(1 for c in cases if c.find("failure") is not None))
        assert suite.get("skipped") == str(sum(1 for c in cases if c.find("skipped") is not None))
        assert suite.get("errors") == "0"
        assert suite.get("timestamp") == "2026-08-20T12:30:05"
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert props == {"tool_version": "9.8.7", "exit_code": "1"}
        float(suite.get("time") or "x")
    assert root.get("tests") == "18"
    assert root.get("failures") == "4"  # the cells that fail the run, no more
    assert root.get("skipped") == "4"  # advisory fail, expected fail, 2 skipped


@pytest.mark.rule("CONFORM-REPORT-JUNIT-001")
@pytest.mark.parametrize(
    ("def_id", "rule_id", "element", "type_"),
    [
        ("alpha", "DEMO-STREAM-001", "failure", "fail"),
        ("beta-cli", "DEMO-RESUME-001", "failure", "stale_baseline"),
        ("beta-cli", "DEMO-STREAM-002", "failure", "not_tested"),
        ("gamma.v2", "DEMO-RESUME-001", "failure", "fail"),
        ("beta-cli", "DEMO-USAGE-001", "skipped", "advisory_fail"),
        ("alpha", "DEMO-STREAM-002", "skipped", "expected_failure"),
        ("alpha", "DEMO-MCP-001", "skipped", "skipped"),
        ("gamma.v2", "DEMO-MCP-001", None, None),
        ("alpha", "DEMO-USAGE-001", None, None),
    ],
)
def test_junit_maps_each_disposition(
    def_id: str, rule_id: str, element: str | None, type_: str | None
) -> None:
    suite = next(s for s in _junit().findall("testsuite") if s.get("name") == def_id)
    case = next(c for c in suite.findall("testcase") if c.get("name") == rule_id)
    children = [c for c in case if c.tag in ("failure", "skipped", "error")]
    if element is None:
        assert children == []
    else:
        assert [(c.tag, c.get("type")) for c in children] == [(element, type_)]
        assert children[0].get("message")
    out = case.find("system-out")
    passed_clean = element is None and rule_id != "DEMO-MCP-001"
    assert (out is None) is passed_clean
    if out is not None:
        assert f"{def_id} × {rule_id}" in (out.text or "")


@pytest.mark.rule("CONFORM-REPORT-JUNIT-001", "CONFORM-REPORT-ESCAPE-001")
def test_junit_carries_the_evidence_and_survives_any_characters() -> None:
    nasty = "\x00\x1b[31mred\x1b[0m \ud800 ]]></system-out><x> \ufffe & ok"
    ev = evidence(
        "broke",
        actual=nasty,
        transcript_slice=(Frame(Direction.STDOUT, nasty), Frame(Direction.STDIN, HOSTILE)),
        stderr_tail=nasty,
    )
    verdict = verdict_of([outcome("alpha", "DEMO-STREAM-001", "fail", reason=nasty, ev=ev)])
    text = junit.render(verdict, META)
    root = ET.fromstring(text.encode("utf-8"))  # parses: nothing XML 1.0 forbids is left
    case = root.find("testsuite/testcase")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None
    assert failure.text == "broke"
    assert "\\x00\\x1b[31mred\\x1b[0m \\ud800 ]]></system-out><x> \\ufffe & ok" in (
        failure.get("message") or ""
    )
    out = case.find("system-out")
    assert out is not None and out.text is not None
    assert "← stdout | \\x00\\x1b[31mred" in out.text
    assert f"→ stdin  | {HOSTILE}" in out.text
    assert "reproduce:\n    harness conform --agent alpha --rule DEMO-STREAM-001" in out.text
    assert junit.xml_safe("tab\tnl\ncr\r ok") == "tab\tnl\ncr\r ok"


# --- HTML, statically (CONFORM-REPORT-HTML-001, CONFORM-REPORT-ESCAPE-001) -----------


class _Collector(HTMLParser):
    """Tags, attributes and script bodies of a page, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append((dict(attrs), ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            attrs, body = self.scripts[-1]
            self.scripts[-1] = (attrs, body + data)


def _page() -> tuple[str, _Collector]:
    page = html_report.render(sample_verdict(), META)
    collector = _Collector()
    collector.feed(page)
    collector.close()
    return page, collector


@pytest.mark.rule("CONFORM-REPORT-ESCAPE-001")
def test_html_escapes_everything_recorded() -> None:
    page, parsed = _page()
    # The hostile strings never appear raw, so they cannot open or close an element.
    for raw in ("<script>window.__pwned", "<img src=x", "</pre><h1>boom", "<b>bold</b>", "<after>"):
        assert raw not in page, raw
    # Exactly our two scripts: the JSON data island and the page script; no <img>, no <h1>
    # but ours, no event-handler attributes anywhere.
    assert [a.get("type") for a, _ in parsed.scripts] == ["application/json", None]
    assert not [t for t, _ in parsed.tags if t in ("img", "iframe", "object", "embed")]
    assert [t for t, _ in parsed.tags].count("h1") == 1
    assert not [(t, k) for t, attrs in parsed.tags for k in attrs if k.lower().startswith("on")]
    # The data island round-trips to the exact recorded strings.
    data = json.loads(parsed.scripts[0][1])
    cell = next(c for c in data["cells"] if (c["def"], c["rule"]) == ("alpha", "DEMO-STREAM-001"))
    assert cell["evidence"]["actual"] == HOSTILE
    assert cell["evidence"]["transcript_slice"][1]["data"] == HOSTILE
    assert cell["reason"] == "turn_end missing <after> tool_result"
    # Reasons rendered into the page (needs-attention list, tooltips) are escaped text.
    assert html_lib.escape("turn_end missing <after> tool_result") in page


@pytest.mark.rule("CONFORM-REPORT-ESCAPE-001")
def test_json_island_neutralises_script_breakouts() -> None:
    text = html_report.json_island({"a": "</script><!-- & \u2028 \u2029 >"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028 \u2029 >"}


@pytest.mark.rule("CONFORM-REPORT-HTML-001")
def test_html_is_one_self_contained_page() -> None:
    page, parsed = _page()
    csp = next(a["content"] for t, a in parsed.tags if t == "meta" and a.get("http-equiv"))
    assert csp is not None and "default-src 'none'" in csp
    # Nothing is loaded from anywhere: no src/href to a resource, no @import or url().
    for tag, attrs in parsed.tags:
        assert "src" not in attrs, tag
        assert tag != "link", attrs
    assert not re.search(r"@import|url\(|https?://", page)


@pytest.mark.rule("CONFORM-REPORT-HTML-001")
def test_html_matrix_cells_are_labelled_not_only_coloured() -> None:
    verdict = sample_verdict()
    _, parsed = _page()
    buttons = [a for t, a in parsed.tags if t == "button" and "cell" in (a.get("class") or "")]
    assert len(buttons) == 18
    cells = {(c.def_id, c.rule_id): c for c in verdict.cells}
    tds = [a for t, a in parsed.tags if t == "td"]
    assert len(tds) == 18
    for attrs in buttons:
        label = attrs["aria-label"] or ""
        key = tuple(label.split(":", 1)[0].split(" × "))
        cell = cells[key]  # type: ignore[index]
        assert LABELS[cell.disposition] in label
        # The hover text comes from the page's data, once per cell (the browser test).
        assert "title" not in attrs
    # The legend names every disposition with its glyph.
    legend_glyphs = {SYMBOLS[d] for d in Disposition}
    assert len(legend_glyphs) == len(Disposition)
    page, _ = _page()
    for d in Disposition:
        assert f'<span class="sw d-{d.value}" aria-hidden="true">{SYMBOLS[d]}</span>' in page
        assert f"<b>{LABELS[d]}</b>" in page


@pytest.mark.rule("CONFORM-REPORT-HTML-001")
def test_html_marks_rules_that_do_not_apply() -> None:
    verdict = verdict_of(
        [outcome("alpha", "DEMO-STREAM-001", "pass"), outcome("beta-cli", "DEMO-USAGE-001", "pass")]
    )
    page = html_report.render(verdict, META)
    assert page.count('<td class="c na" data-def=') == 2
    assert "<b>n/a</b> — the rule does not apply" in page  # the legend explains the blank


# --- terminal (CONFORM-REPORT-TERM-001) ----------------------------------------------


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.rule("CONFORM-REPORT-TERM-001")
def test_terminal_table_without_colour() -> None:
    text = terminal.render(sample_verdict(), META, color=False, width=100)
    assert "\x1b[" not in text
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("def "))
    assert all(f"{SYMBOLS[d]} " in header for d in Disposition)
    rows = {
        line.split()[0]: line.split()[1:]
        for line in lines
        if line.split()[:1] in (["alpha"], ["beta-cli"], ["gamma.v2"], ["total"])
    }
    assert rows["alpha"] == ["1", "·", "·", "·", "1", "3", "1"]
    assert rows["total"] == ["3", "1", "1", "1", "1", "9", "2"]
    assert "Needs attention:" in text
    assert "STALE BASELINE  beta-cli  DEMO-RESUME-001 (capability)" in text
    assert "reproduce: harness conform --agent alpha" in text
    assert "Verdict: NOT CONFORMANT (exit 1)" in text
    assert "  - 1 mandatory cell fails" in text
    assert all(len(line) <= 100 for line in lines), max(lines, key=len)


@pytest.mark.rule("CONFORM-REPORT-TERM-001")
def test_terminal_colour_only_on_a_tty() -> None:
    verdict = sample_verdict()
    plain = io.StringIO()
    terminal.print_report(verdict, META, plain, env={}, width=100)
    assert "\x1b[" not in plain.getvalue()
    tty = _Tty()
    terminal.print_report(verdict, META, tty, env={}, width=100)
    assert "\x1b[1;31m" in tty.getvalue()
    no_color = _Tty()
    terminal.print_report(verdict, META, no_color, env={"NO_COLOR": "1"}, width=100)
    assert "\x1b[" not in no_color.getvalue()
    assert terminal.use_color(_Tty(), {"NO_COLOR": ""}) is True  # empty NO_COLOR is unset
    assert terminal.use_color(io.StringIO(), {"FORCE_COLOR": "1"}) is True
    # Colour only wraps text: stripping it gives the plain rendering back.
    coloured = terminal.render(verdict, META, color=True, width=100)
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == terminal.render(
        verdict, META, color=False, width=100
    )


@pytest.mark.rule("CONFORM-REPORT-TERM-001")
def test_terminal_report_of_a_conformant_run_and_long_lists() -> None:
    ok = verdict_of([outcome("alpha", r, "pass") for r in RULE_IDS])
    text = terminal.render(ok, META)
    assert "Verdict: CONFORMANT (exit 0)" in text and "Needs attention" not in text
    many = verdict_of([outcome(d, r, "fail") for d in DEFS for r in RULE_IDS])
    text = terminal.render(many, META, max_items=5)
    assert "… and 13 more (see the JSON or HTML report)" in text


#: What a CLI rejecting its argv writes (with a warning line first and colour codes).
_ARGV_STDERR = (
    "warning: config file not found, using defaults\n"
    "\x1b[31merror: unknown option '--approval-mode'\x1b[0m\n(run with --help)\n"
)
_REPRO = (
    "harness conform --def " + "/very/long/path/to/the/author/" * 4 + "my_def.py --scenario happy"
)


def _argv_failure(rule_id: str, reason: str) -> Any:
    ev = evidence(f"{rule_id}: alpha: {reason}", stderr_tail=_ARGV_STDERR, repro_command=_REPRO)
    return outcome("alpha", rule_id, "fail", reason=f"{rule_id}: alpha: {reason}", ev=ev)


@pytest.mark.rule("CONFORM-REPORT-TERM-001", "CONFORM-EVIDENCE-001")
def test_terminal_shows_the_cause_inline_and_groups_its_symptoms() -> None:
    """Like pytest and ruff: rule, a one-line reason cut at a word, the CLI's stderr error
    line, the whole reproduce command; the failures that share the error sit under it."""
    long = "the run's text differs from the scenario's text: " + "expected words " * 12
    verdict = verdict_of(
        [
            _argv_failure("DEMO-STREAM-001", long),
            _argv_failure("DEMO-STREAM-002", "the run published no turn_end"),
            _argv_failure("DEMO-USAGE-001", "the run published no usage event"),
            outcome("beta-cli", "DEMO-STREAM-001", "fail"),
            outcome("alpha", "DEMO-MCP-001", "skipped", reason="not applicable: no MCP here"),
            outcome("beta-cli", "DEMO-MCP-001", "skipped", reason="not applicable: MCP off"),
        ]
    )
    text = terminal.render(verdict, META, width=80)
    lines = text.splitlines()
    at = lines.index("  ✗ FAIL  alpha  DEMO-STREAM-001 (mandatory)")
    reason, cause, repro, more, first, second = lines[at + 1 : at + 7]
    assert reason.endswith("…") and len(reason) <= 80
    shown = reason.strip()[:-1]
    assert long.startswith(shown) and long[len(shown)] == " "  # cut between words
    assert cause == "      CLI stderr: error: unknown option '--approval-mode'"
    assert repro == f"      reproduce: {_REPRO}"  # longer than the width: never cut
    assert more == "      2 more failures from the same CLI error:"
    assert first.split() == ["DEMO-STREAM-002", "the", "run", "published", "no", "turn_end"]
    assert second.split()[0] == "DEMO-USAGE-001"
    assert "  ✗ FAIL  beta-cli  DEMO-STREAM-001 (mandatory)" in lines  # no stderr: alone
    assert text.count("CLI stderr:") == 1
    (skip,) = [line for line in lines if "DEMO-MCP-001" in line]
    assert skip.split()[1:] == [
        *("DEMO-MCP-001", "2", "defs:", "no", "MCP", "here", "(+1", "other", "reason)"),
        *("[alpha,", "beta-cli]"),
    ]
    assert "Skipped (2 cells):" in lines
    one = verdict_of([outcome("alpha", "DEMO-MCP-001", "skipped", reason="not applicable: off")])
    assert "  – DEMO-MCP-001  off" in terminal.render(one, META).splitlines()


@pytest.mark.rule("CONFORM-EVIDENCE-001")
def test_the_stderr_error_line_is_the_first_that_reads_as_an_error() -> None:
    assert evidence(stderr_tail=_ARGV_STDERR).stderr_error_line() == (
        "error: unknown option '--approval-mode'"
    )
    assert evidence(stderr_tail="warning: slow disk\nloading…\n").stderr_error_line() is None


@pytest.mark.rule("CONFORM-EVIDENCE-001")
def test_cell_text_names_everything_a_reader_needs() -> None:
    verdict = sample_verdict()
    cell = verdict.cell("alpha", "DEMO-STREAM-002")
    assert cell is not None
    text = cell_text(verdict, cell)
    assert "alpha × DEMO-STREAM-002 (mandatory): Text deltas keep their order." in text
    assert "verdict: EXPECTED FAIL (does not fail the run)" in text
    assert "baseline: alpha:DEMO-STREAM-002 (baseline.txt:2) — upstream bug 42" in text
    assert "evidence: DEMO-STREAM-002 broken in alpha" in text
    assert "⚠ stderr | warning: slow disk" in text


# --- spec links (design §Conformance model "Reports") ---------------------------------

#: Where DEMO-STREAM-001's citation (seed 002 §7.2) points.
_SPEC_7_2 = "docs/spec/adapter-layer.md#seed-002-7.2"


@pytest.mark.rule("CONFORM-REPORT-JSON-001")
def test_json_report_links_each_rule_to_the_spec(validator: Draft202012Validator) -> None:
    report = json.loads(json_report.render(sample_verdict(), META))
    assert not list(validator.iter_errors(report))
    links = {r["id"]: r["links"] for r in report["rules"]}
    assert links["DEMO-STREAM-001"] == [_SPEC_7_2]
    assert links["DEMO-USAGE-001"] == ["docs/spec/adapters.md#seed-000-12"]
    broken = copy.deepcopy(report)
    del broken["rules"][0]["links"]
    assert list(validator.iter_errors(broken)), "a rule without links must not validate"


@pytest.mark.rule("CONFORM-REPORT-JUNIT-001")
def test_junit_system_out_names_the_spec_section() -> None:
    root = _junit()
    case = next(
        c
        for c in root.iter("testcase")
        if c.get("name") == "DEMO-STREAM-001" and c.get("classname") == "conform.alpha"
    )
    out = case.findtext("system-out") or ""
    assert "citation: seed 002 §7.2\n" in out
    assert f"spec: {_SPEC_7_2}\n" in out


@pytest.mark.rule("CONFORM-REPORT-HTML-001")
@pytest.mark.parametrize(
    ("base", "href"),
    [
        pytest.param("", _SPEC_7_2, id="repository-relative"),
        pytest.param(
            "https://example.invalid/repo/blob/main/",
            "https://example.invalid/repo/blob/main/" + _SPEC_7_2,
            id="with-base",
        ),
    ],
)
def test_html_evidence_links_the_cited_section(base: str, href: str) -> None:
    meta = ReportMeta(
        tool_version=META.tool_version, generated_at=META.generated_at, spec_base=base
    )
    collector = _Collector()
    collector.feed(html_report.render(sample_verdict(), meta))
    collector.close()
    data = json.loads(collector.scripts[0][1])
    assert data["rules"]["DEMO-STREAM-001"]["links"] == [{"href": href, "text": _SPEC_7_2}]
    # The panel script turns each link into an anchor built with setAttribute/textContent.
    script = collector.scripts[1][1]
    assert 'el("a", {"class": "p-spec", "href": l.href}, l.text)' in script


@pytest.mark.rule("CONFORM-REPORT-JSON-001")
def test_a_citation_that_does_not_resolve_gives_no_links_not_a_crash() -> None:
    from conformance.reports import rule_links
    from conformance.rules import Rule, Tier

    odd = Rule("X-ODD-001", Tier.MANDATORY, "A statement.", "ref §2.6; not a section")
    assert rule_links(odd) == ()
    assert rule_links(Rule("X-OK-001", Tier.MANDATORY, "A statement.", "ref §2.6")) == (
        "docs/spec/upstream-behaviour.md#ref-2.6",
    )
