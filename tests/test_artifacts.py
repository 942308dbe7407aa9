"""Plain-stream artifact extraction and the confined writer (seed 000 §5.13, ref §2.5).

Rules: PLAIN-ARTIFACT-OPENER-001, PLAIN-ARTIFACT-FENCE-001, PLAIN-ARTIFACT-RESYNC-001,
PLAIN-ARTIFACT-TYPES-001, PLAIN-ARTIFACT-SLUG-001, PLAIN-ARTIFACT-COLLIDE-001,
PLAIN-ARTIFACT-MAX-001, PLAIN-ROBUST-001, ARTIFACT-WRITE-CONFINE-001,
ARTIFACT-WRITE-NOCLOBBER-001, WIN-ARTIFACT-DEVICE-001.

The stdout samples are written by hand. ``_oracle`` below is a deliberately
naive, line-by-line reading of the ref §2.5 algorithm (linear rescans, no
indexes); a hypothesis property checks the engine's indexed scan against it.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness.events import Artifact, Error
from harness.host.artifacts import (
    ArtifactExistsError,
    ArtifactNameError,
    ArtifactNamesExhaustedError,
    ExtractedArtifact,
    artifact_slug,
    check_artifact_name,
    extract_artifacts,
    markdown_skip_ranges,
    write_artifacts,
)
from harness.runner.plain import write_held_artifacts
from tests.support.examples import fuzz_sized


def names(stdout: str, existing: tuple[str, ...] = ()) -> list[str]:
    return [a.name for a in extract_artifacts(stdout, existing)]


def contents(stdout: str) -> list[str]:
    return [a.content for a in extract_artifacts(stdout)]


def css(identifier: str, body: str = "a{}") -> str:
    return f'<artifact identifier="{identifier}" type="css">{body}</artifact>'


# -- the documented example ---------------------------------------------------


@pytest.mark.rule("PLAIN-ARTIFACT-TYPES-001", "PLAIN-ARTIFACT-SLUG-001")
def test_seed_example_block_is_extracted() -> None:
    stdout = (
        "Here is the page.\n"
        '<artifact identifier="landing-page" type="text/html" title="Landing page">\n'
        "<!doctype html>\n<html>...</html>\n"
        "</artifact>\nDone.\n"
    )
    assert extract_artifacts(stdout) == [
        ExtractedArtifact(
            name="landing-page.html",
            identifier="landing-page",
            artifact_type="text/html",
            title="Landing page",
            content="\n<!doctype html>\n<html>...</html>\n",
            extension=".html",
        )
    ]


# -- openers and attributes ---------------------------------------------------------


@pytest.mark.rule("PLAIN-ARTIFACT-OPENER-001")
@pytest.mark.parametrize(
    "opener",
    [
        '<artifact type="css">',
        '<artifact\ttype="css">',
        '<artifact\ntype="css">',
        "<artifact\u00a0type='css'>",
    ],
)
def test_opener_is_artifact_then_whitespace_or_gt(opener: str) -> None:
    assert contents(f"{opener}x</artifact>") == ["x"]


@pytest.mark.rule("PLAIN-ARTIFACT-OPENER-001")
@pytest.mark.parametrize(
    "text",
    [
        '<artifacts type="css">x</artifact>',
        '<artifact-x type="css">x</artifact>',
        '<ARTIFACT type="css">x</artifact>',
    ],
)
def test_lookalike_openers_are_not_openers(text: str) -> None:
    assert extract_artifacts(text) == []


@pytest.mark.rule("PLAIN-ARTIFACT-OPENER-001")
def test_tag_end_honours_quotes_and_attributes_use_the_regex() -> None:
    stdout = (
        '<artifact title="a > b" identifier=\'it\'\'s\' type = "svg" type="css" '
        'TYPE="html" bare=value>body</artifact>'
    )
    [art] = extract_artifacts(stdout)
    assert (art.title, art.identifier, art.artifact_type, art.content) == (
        "a > b",
        "it",
        "css",
        "body",
    )


@pytest.mark.rule("PLAIN-ARTIFACT-OPENER-001", "PLAIN-ARTIFACT-TYPES-001")
def test_unquoted_type_is_not_an_attribute() -> None:
    assert extract_artifacts("<artifact type=css>a{}</artifact>") == []


@pytest.mark.rule("PLAIN-ARTIFACT-OPENER-001", "PLAIN-ARTIFACT-RESYNC-001")
def test_unterminated_quote_means_no_tag_end() -> None:
    assert extract_artifacts('<artifact type="css>a{}</artifact>') == []


# -- markdown skip ranges -----------------------------------------------------------


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
def test_artifact_inside_a_fenced_block_is_ignored() -> None:
    stdout = "Example:\n```html\n" + css("quoted") + "\n```\n" + css("real") + "\n"
    assert names(stdout) == ["real.css"]


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
def test_artifact_inside_inline_code_is_ignored() -> None:
    stdout = "Write `" + css("quoted") + "` to emit one.\n\n" + css("real")
    assert names(stdout) == ["real.css"]


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
def test_tilde_fence_is_not_a_fence() -> None:
    assert names("~~~\n" + css("inside-tilde") + "\n~~~\n") == ["inside-tilde.css"]


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
@pytest.mark.parametrize("fence", ["  ```\n", "``` html\n", "````\n", "x```\n"])
def test_indented_or_malformed_fences_are_not_fences(fence: str) -> None:
    assert names(fence + css("kept") + "\n```\n") == ["kept.css"]


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
def test_unclosed_fence_runs_to_end_of_output() -> None:
    stdout = css("before") + "\n```js\n" + css("a") + "\n\n" + css("b") + "\n"
    assert names(stdout) == ["before.css"]
    assert markdown_skip_ranges(stdout)[-1] == (len(css("before")) + 1, len(stdout))


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
def test_fence_lines_must_be_newline_terminated() -> None:
    # A final "```" with no newline neither opens nor closes a fence.
    assert names(css("x") + "\n```") == ["x.css"]
    assert markdown_skip_ranges("```\nabc\n```") == [(0, 11)]
    assert markdown_skip_ranges("```\nabc\n```\n") == [(0, 12)]


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
def test_fence_close_allows_trailing_whitespace_and_crlf() -> None:
    stdout = "```html\r\n" + css("in") + "\r\n```  \r\n" + css("out")
    assert names(stdout) == ["out.css"]


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
def test_unmatched_backtick_does_not_leak_across_a_blank_line() -> None:
    assert names("a stray ` here\n\n" + css("kept") + " and ` later\n") == ["kept.css"]


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
def test_code_span_spans_lines_within_one_paragraph() -> None:
    assert names("a stray ` here\n" + css("hidden") + " and ` later\n") == []


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
def test_backtick_runs_pair_only_with_equal_length() -> None:
    assert names("`` code ` " + css("hidden") + " ``") == []
    assert names("`` " + css("kept") + " `") == ["kept.css"]


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
@pytest.mark.parametrize("block_line", ["# Heading `", "- item `", "12. item `"])
def test_headings_and_list_items_are_their_own_blocks(block_line: str) -> None:
    assert names(block_line + "\n" + css("kept") + " `") == ["kept.css"]


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
@pytest.mark.parametrize("prefix", ["## Title ", "* item ", "3. item "])
def test_code_spans_on_heading_and_list_lines_are_skipped(prefix: str) -> None:
    assert names(prefix + "`" + css("hidden") + "`\n" + css("kept")) == ["kept.css"]


@pytest.mark.rule("PLAIN-ARTIFACT-FENCE-001")
def test_five_hashes_is_not_a_heading() -> None:
    assert names("##### not heading `\n" + css("hidden") + " `") == []


# -- resync and unclosed --------------------------------------------------------------------


@pytest.mark.rule("PLAIN-ARTIFACT-RESYNC-001")
def test_two_openers_resync_to_the_later_one() -> None:
    stdout = '<artifact identifier="first" type="css">\nstart\n' + css("second", "body")
    arts = extract_artifacts(stdout)
    assert [(a.name, a.content) for a in arts] == [("second.css", "body")]


@pytest.mark.rule("PLAIN-ARTIFACT-RESYNC-001")
def test_opener_inside_an_unfinished_tag_resyncs() -> None:
    stdout = '<artifact title="x" ' + css("inner", "y")
    assert [(a.name, a.content) for a in extract_artifacts(stdout)] == [("inner.css", "y")]


@pytest.mark.rule("PLAIN-ARTIFACT-RESYNC-001")
def test_quoted_opener_does_not_cause_a_resync() -> None:
    stdout = '<artifact identifier="a" type="css">see `<artifact >` here</artifact>'
    assert contents(stdout) == ["see `<artifact >` here"]


@pytest.mark.rule("PLAIN-ARTIFACT-RESYNC-001")
def test_unclosed_artifact_is_skipped() -> None:
    assert extract_artifacts('<artifact identifier="a" type="css">never closed\n') == []
    assert names(css("ok") + '\n<artifact type="css">dangling') == ["ok.css"]


# -- types --------------------------------------------------------------------------------


@pytest.mark.rule("PLAIN-ARTIFACT-TYPES-001")
@pytest.mark.parametrize(
    ("type_", "normalized", "ext"),
    [
        ("html", "html", ".html"),
        ("text/html", "text/html", ".html"),
        (" Text/HTML ", "text/html", ".html"),
        ("css", "css", ".css"),
        ("text/css", "text/css", ".css"),
        ("svg", "svg", ".svg"),
        ("image/svg+xml", "image/svg+xml", ".svg"),
        ("markdown", "markdown", ".md"),
        ("md", "md", ".md"),
        ("text/markdown", "text/markdown", ".md"),
        ("TEXT/X-MARKDOWN", "text/x-markdown", ".md"),
    ],
)
def test_type_map(type_: str, normalized: str, ext: str) -> None:
    [art] = extract_artifacts(f'<artifact identifier="f" type="{type_}">c</artifact>')
    assert (art.artifact_type, art.extension, art.name) == (normalized, ext, f"f{ext}")


@pytest.mark.rule("PLAIN-ARTIFACT-TYPES-001")
@pytest.mark.parametrize("type_", ["application/json", "text/plain", "js", "htm"])
def test_unsupported_types_are_skipped(type_: str) -> None:
    assert extract_artifacts(f'<artifact type="{type_}"><!doctype html></artifact>') == []


@pytest.mark.rule("PLAIN-ARTIFACT-TYPES-001")
@pytest.mark.parametrize(
    ("attrs", "body", "inferred"),
    [
        ("", "\n  <!DOCTYPE html><html></html>", True),
        ("", "<!doctype\u00a0HTML>", True),
        ("", "<html lang=en>", True),
        (' type="  "', "<html>", True),
        ("", "<htmlx>", False),
        ("", "<!doctype htmlx>", False),
        ("", "text <html>", False),
        ("", "<body>", False),
    ],
)
def test_missing_type_is_inferred_only_for_html_documents(
    attrs: str, body: str, inferred: bool
) -> None:
    arts = extract_artifacts(f'<artifact identifier="p"{attrs}>{body}</artifact>')
    assert [(a.artifact_type, a.name) for a in arts] == (
        [("text/html", "p.html")] if inferred else []
    )


# -- slug -------------------------------------------------------------------------------


@pytest.mark.rule("PLAIN-ARTIFACT-SLUG-001")
@pytest.mark.parametrize(
    ("identifier", "title", "slug"),
    [
        ("Landing Page!", "", "landing-page"),
        ("UPPER_case-ok", "", "upper_case-ok"),
        ("--Ünïcode--", "", "n-code"),
        ("../../etc/passwd", "", "etc-passwd"),
        ("C:\\Windows\\x", "", "c-windows-x"),
        ("a.b.c", "", "a-b-c"),
        ("", "My Title", "my-title"),
        ("", "", "artifact"),
        ("!!!", "ignored title", "artifact"),
        ("x" * 70, "", "x" * 60),
        ("a" * 59 + " b", "", "a" * 59 + "-"),
        ("日本語", "", "artifact"),
    ],
)
def test_slug(identifier: str, title: str, slug: str) -> None:
    assert artifact_slug(identifier, title) == slug
    stdout = f'<artifact identifier="{identifier}" title="{title}" type="md">x</artifact>'
    assert names(stdout) == [f"{slug}.md"]


# -- collisions --------------------------------------------------------------------------


@pytest.mark.rule("PLAIN-ARTIFACT-COLLIDE-001")
def test_collision_with_an_existing_file_then_with_an_earlier_artifact() -> None:
    stdout = css("page") + "\n" + css("page") + "\n" + css("other")
    assert names(stdout, ("page.css",)) == ["page-2.css", "page-3.css", "other.css"]
    assert names(stdout) == ["page.css", "page-2.css", "other.css"]


@pytest.mark.rule("PLAIN-ARTIFACT-COLLIDE-001")
def test_suffixes_skip_taken_names_and_extensions_are_separate() -> None:
    stdout = css("page") + '<artifact identifier="page" type="md">x</artifact>'
    assert names(stdout, ("page.css", "page-2.css", "page-4.css")) == ["page-3.css", "page.md"]


@pytest.mark.rule("PLAIN-ARTIFACT-COLLIDE-001")
def test_exhausted_suffixes_raise_a_typed_error_carrying_earlier_artifacts() -> None:
    taken = ("a.css", *(f"a-{n}.css" for n in range(2, 10_000)))
    assert names(css("b"), taken) == ["b.css"]
    with pytest.raises(ArtifactNamesExhaustedError) as info:
        extract_artifacts(css("b") + css("a"), taken)
    err = info.value
    assert isinstance(err, HarnessError)
    assert err.code == "ARTIFACT_NAME_EXHAUSTED" and err.rule == "PLAIN-ARTIFACT-COLLIDE-001"
    assert "a.css" in err.message and [a.name for a in err.allocated] == ["b.css"]
    # a-9999.css is the last suffix tried: freeing it is enough.
    assert names(css("a"), taken[:-1]) == ["a-9999.css"]


# -- limits -----------------------------------------------------------------------------


@pytest.mark.rule("PLAIN-ARTIFACT-MAX-001")
def test_51_artifacts_give_50() -> None:
    stdout = "\n".join(css(f"f{i}") for i in range(51))
    assert names(stdout) == [f"f{i}.css" for i in range(50)]


@pytest.mark.rule("PLAIN-ARTIFACT-MAX-001")
def test_skipped_blocks_do_not_count_toward_the_limit() -> None:
    junk = "".join('<artifact type="json">{}</artifact>' for _ in range(10))
    stdout = junk + "".join(css(f"f{i}") for i in range(55))
    assert len(names(stdout)) == 50


@pytest.mark.rule("PLAIN-ARTIFACT-MAX-001")
def test_output_without_an_opener_has_no_artifacts() -> None:
    assert extract_artifacts("plain answer, no blocks </artifact>") == []
    assert extract_artifacts("") == []


# -- robustness, and agreement with the naive reading of ref §2.5 ---------------------------------

_WS = r"[\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
_JS_WS = "\t\n\x0b\x0c\r \xa0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(
    chr(c) for c in range(0x2000, 0x200B)
)
_TYPES = {
    "html": ".html",
    "text/html": ".html",
    "css": ".css",
    "text/css": ".css",
    "svg": ".svg",
    "image/svg+xml": ".svg",
    "markdown": ".md",
    "md": ".md",
    "text/markdown": ".md",
    "text/x-markdown": ".md",
}


def _oracle(s: str) -> list[tuple[str, str, str, str, str]]:
    """ref §2.5 read literally: every lookup rescans the text."""
    if "<artifact" not in s:
        return []
    skips: list[tuple[int, int]] = []
    fences: list[tuple[int, int]] = []
    pos, start = 0, -1
    while pos < len(s):
        eol = s.find("\n", pos)
        line = s[pos : len(s) if eol == -1 else eol]
        if eol != -1:
            if start == -1 and re.fullmatch(rf"```(\w[\w+-]*)?{_WS}*", line, re.ASCII):
                start = pos
            elif start != -1 and re.fullmatch(rf"```{_WS}*", line):
                fences.append((start, eol + 1))
                start = -1
        if eol == -1:
            break
        pos = eol + 1
    if start != -1:
        fences.append((start, len(s)))
    skips += fences

    def inside(ranges: list[tuple[int, int]], i: int) -> bool:
        return any(a <= i < b for a, b in ranges)

    blocks: list[tuple[int, int]] = []
    pos, start = 0, -1
    while pos < len(s):
        fence = next((r for r in fences if r[0] <= pos < r[1]), None)
        if fence:
            if start != -1 and pos > start:
                blocks.append((start, pos))
            start, pos = -1, fence[1]
            continue
        eol = s.find("\n", pos)
        end = len(s) if eol == -1 else eol
        line = s[pos:end]
        if line.strip(_JS_WS) == "":
            if start != -1 and pos > start:
                blocks.append((start, pos))
            start = -1
        elif re.match(rf"#{{1,4}}{_WS}+|{_WS}*[-*+]{_WS}+|{_WS}*\d+\.{_WS}+", line, re.ASCII):
            if start != -1 and pos > start:
                blocks.append((start, pos))
            start = -1
            blocks.append((pos, end))
        elif start == -1:
            start = pos
        pos = len(s) if eol == -1 else eol + 1
    if start != -1 and len(s) > start:
        blocks.append((start, len(s)))

    def run(i: int) -> int:
        return len(s[i:]) - len(s[i:].lstrip("`"))

    for a, b in blocks:
        i = a
        while True:
            idx = s.find("`", i)
            if idx == -1 or idx >= b:
                break
            n, j, close = run(idx), idx + run(idx), -1
            while j < b:
                k = s.find("`", j)
                if k == -1 or k >= b:
                    break
                if run(k) == n:
                    close = k
                    break
                j = k + run(k)
            if close == -1:
                i = idx + n
            else:
                skips.append((idx, close + n))
                i = close + n

    def next_open(frm: int) -> int:
        while True:
            idx = s.find("<artifact", frm)
            if idx == -1:
                return -1
            nxt = s[idx + 9 : idx + 10]
            if (nxt == ">" or (nxt != "" and nxt in _JS_WS)) and not inside(skips, idx):
                return idx
            frm = idx + 9

    def tag_end(frm: int) -> int:
        quote = None
        for i in range(frm, len(s)):
            if quote:
                quote = None if s[i] == quote else quote
            elif s[i] in "\"'":
                quote = s[i]
            elif s[i] == ">":
                return i + 1
        return -1

    out: list[tuple[str, str, str, str, str]] = []
    frm = 0
    while frm < len(s) and len(out) < 50:
        o = next_open(frm)
        if o == -1:
            break
        nxt, end = next_open(o + 9), tag_end(o + 9)
        if end == -1:
            frm = o + 9
            continue
        if nxt != -1 and nxt < end:
            frm = nxt
            continue
        close = s.find("</artifact>", end)
        if close == -1:
            frm = o + 9
            continue
        if nxt != -1 and nxt < close:
            frm = nxt
            continue
        attrs = {}
        for m in re.finditer(
            rf"([A-Za-z_:][\w:.-]*){_WS}*={_WS}*(?:\"([^\"]*)\"|'([^']*)')",
            s[o + 9 : end - 1],
            re.ASCII,
        ):
            attrs[m.group(1)] = m.group(2) if m.group(2) is not None else (m.group(3) or "")
        body = s[end:close]
        t = attrs.get("type", "").strip(_JS_WS).lower()
        if not t and re.match(rf"{_WS}*(<!doctype{_WS}+html\b|<html\b)", body, re.I | re.ASCII):
            t = "text/html"
        if t in _TYPES:
            stem = (
                re.sub(
                    "[^a-z0-9_-]+",
                    "-",
                    (attrs.get("identifier") or attrs.get("title") or "artifact").lower(),
                ).strip("-")[:60]
                or "artifact"
            )
            out.append(
                (stem + _TYPES[t], t, attrs.get("identifier", ""), attrs.get("title", ""), body)
            )
        frm = close + 11
    return out


_TOKENS = st.sampled_from(
    [
        "<artifact",
        "<artifact ",
        "<artifact>",
        "</artifact>",
        ">",
        '"',
        "'",
        " ",
        "\n",
        "\n\n",
        "\r\n",
        "```",
        "```html\n",
        "~~~\n",
        "`",
        "``",
        "# h ",
        "- ",
        "1. ",
        "  ",
        "\u00a0",
        ' type="css"',
        " type='html'",
        ' type="svg"',
        ' type=" MD "',
        ' type="json"',
        ' identifier="Page One"',
        " identifier='x'",
        ' title="T"',
        "<!doctype html>",
        "<html>",
        "body",
        "é",
        "\ufffd",
    ]
)
_ATTRS = st.lists(
    st.sampled_from(
        [
            ' type="css"',
            " type='html'",
            ' type="image/svg+xml"',
            ' type="json"',
            ' type=" MD "',
            ' identifier="Page One"',
            " identifier='x'",
            ' title="a > b"',
            ' title="T"',
            " x=y",
        ]
    ),
    max_size=3,
).map("".join)
_BLOCK = st.builds(
    lambda opener, attrs, body, close: f"{opener}{attrs}>{body}{close}",
    st.sampled_from(["<artifact", "<artifact\n", "<artifacts"]),
    _ATTRS,
    st.lists(_TOKENS, max_size=4).map("".join),
    st.sampled_from(["</artifact>", "</artifact>", "</artifact>", ""]),
)
SOUP = st.lists(st.one_of(_BLOCK, _BLOCK, _TOKENS), max_size=25).map("".join)


def _shape(arts: list[ExtractedArtifact]) -> list[tuple[str, str, str, str, str]]:
    return [(a.name, a.artifact_type, a.identifier, a.title, a.content) for a in arts]


@pytest.mark.rule(
    "PLAIN-ARTIFACT-OPENER-001", "PLAIN-ARTIFACT-FENCE-001", "PLAIN-ARTIFACT-RESYNC-001"
)
@fuzz_sized(400)
@given(stdout=SOUP)
def test_indexed_scan_agrees_with_the_naive_reading_of_the_algorithm(stdout: str) -> None:
    expected = _oracle(stdout)
    got = extract_artifacts(stdout)
    # The oracle does not de-duplicate names; compare stems of unique names separately.
    assert [e[1:] for e in expected] == [g[1:] for g in _shape(got)]
    assert len({a.name for a in got}) == len(got)
    for exp, art in zip(expected, got, strict=True):
        stem, ext = exp[0].rsplit(".", 1)
        assert art.name == exp[0] or re.fullmatch(rf"{re.escape(stem)}-\d+\.{ext}", art.name)


@pytest.mark.rule("PLAIN-ROBUST-001")
@given(stdout=st.text(max_size=400) | SOUP, existing=st.lists(st.text(max_size=12), max_size=5))
def test_extraction_never_raises_and_names_are_unique_and_fresh(
    stdout: str, existing: list[str]
) -> None:
    arts = extract_artifacts(stdout, existing)
    assert len(arts) <= 50
    taken = set(existing)
    for art in arts:
        assert art.name not in taken
        taken.add(art.name)
        assert art.name.endswith(art.extension)
        check_artifact_name(art.name)


@pytest.mark.rule("PLAIN-ROBUST-001")
def test_hostile_output_is_scanned_in_near_linear_time() -> None:
    # Every opener has an unterminated quote and no close: a rescan per opener
    # would be quadratic; the indexed scan finishes instantly.
    stdout = '<artifact "' * 20_000 + "`" * 3 + "<artifact " * 20_000
    assert extract_artifacts(stdout) == []


# -- the writer -------------------------------------------------------------------------


def art(name: str, content: str = "<p>hi</p>\n") -> ExtractedArtifact:
    return ExtractedArtifact(name, "id", "html", "", content, ".html")


@pytest.mark.rule("ARTIFACT-WRITE-CONFINE-001")
def test_writes_normal_names_byte_for_byte(tmp_path: Path) -> None:
    arts = [art("page.html", "é\r\n✓\n"), art("page-2.html", "")]
    report = write_artifacts(tmp_path, arts)
    assert report.paths == (tmp_path / "page.html", tmp_path / "page-2.html")
    assert report.written == tuple(arts) and report.refused == ()
    assert (tmp_path / "page.html").read_bytes() == "é\r\n✓\n".encode()
    assert (tmp_path / "page-2.html").read_bytes() == b""


@pytest.mark.rule("ARTIFACT-WRITE-CONFINE-001")
@pytest.mark.parametrize(
    "name",
    [
        "../x.html",
        "/etc/x",
        "a/b.html",
        "C:\\x",
        "C:x.html",
        "..",
        ".",
        "",
        "a\\..\\..\\x.html",
        "x.html:stream",
        "nul\x00.html",
        "con.html",
        "LPT1",
        "x.html.",
    ],
)
def test_writer_refuses_names_that_could_leave_the_project(tmp_path: Path, name: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    report = write_artifacts(project, [art("ok.html"), art(name)])
    (refusal,) = report.refused
    assert refusal.artifact.name == name
    assert isinstance(refusal.error, ArtifactNameError)
    assert refusal.error.rule == "ARTIFACT-WRITE-CONFINE-001"
    assert refusal.error.code == "ARTIFACT_NAME_UNSAFE"
    # The unsafe one is refused alone: the other is written, nothing lands outside.
    assert [a.name for a in report.written] == ["ok.html"]
    assert [p.name for p in project.iterdir()] == ["ok.html"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]


@pytest.mark.rule("ARTIFACT-WRITE-CONFINE-001")
def test_writer_refuses_a_symlink_pointing_outside(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    outside = tmp_path / "outside.html"
    outside.write_text("secret")
    try:
        os.symlink(outside, project / "page.html")
        os.symlink(tmp_path / "missing.html", project / "dangling.html")
    except (OSError, NotImplementedError):
        pytest.skip("this platform cannot create symlinks here")
    for name in ("page.html", "dangling.html"):
        report = write_artifacts(project, [art(name, "pwned")])
        (refusal,) = report.refused
        assert isinstance(refusal.error, ArtifactNameError)
        assert "symbolic link" in refusal.error.message
        assert report.written == ()
    assert outside.read_text() == "secret"
    assert not (tmp_path / "missing.html").exists()


@pytest.mark.rule("ARTIFACT-WRITE-NOCLOBBER-001")
def test_writer_never_replaces_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text("user's file")
    report = write_artifacts(tmp_path, [art("new.html"), art("page.html")])
    (refusal,) = report.refused
    assert isinstance(refusal.error, ArtifactExistsError)
    assert refusal.error.rule == "ARTIFACT-WRITE-NOCLOBBER-001"
    assert (tmp_path / "page.html").read_text() == "user's file"
    assert (tmp_path / "new.html").read_text() == "<p>hi</p>\n"


@pytest.mark.rule("ARTIFACT-WRITE-NOCLOBBER-001")
def test_writer_refuses_the_same_name_twice(tmp_path: Path) -> None:
    report = write_artifacts(tmp_path, [art("a.html", "first"), art("a.html", "second")])
    assert [a.content for a in report.written] == ["first"]
    (refusal,) = report.refused
    assert refusal.artifact.content == "second"
    assert isinstance(refusal.error, ArtifactExistsError)
    assert (tmp_path / "a.html").read_text() == "first"


@pytest.mark.rule("ARTIFACT-WRITE-NOCLOBBER-001", "PLAIN-ARTIFACT-COLLIDE-001")
def test_extract_with_the_directory_listing_then_write(tmp_path: Path) -> None:
    (tmp_path / "page.css").write_text("old")
    stdout = css("page", "new") + css("page", "newer")
    arts = extract_artifacts(stdout, os.listdir(tmp_path))
    write_artifacts(tmp_path, arts)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page-2.css", "page-3.css", "page.css"]
    assert (tmp_path / "page.css").read_text() == "old"
    assert (tmp_path / "page-3.css").read_text() == "newer"


# -- Windows device names (WIN-ARTIFACT-DEVICE-001) -------------------------------------

_DEVICE_NAMES = [
    "aux.html",
    "AUX.HTML",
    "Aux.tar.gz",
    "aux .html",
    "aux. .html",
    "nul",
    "con.md",
    "prn.css",
    "com0.svg",
    "COM9.html",
    "lpt1.md",
    "LPT0.html",
    "com\u00b9.html",
    "LPT\u00b2.css",
    "com\u00b3",
    "conin$.html",
    "CONOUT$.md",
]


@pytest.mark.rule("WIN-ARTIFACT-DEVICE-001", "ARTIFACT-WRITE-CONFINE-001")
@pytest.mark.parametrize("name", _DEVICE_NAMES)
@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_device_names_are_refused_on_every_platform(
    name: str, platform: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A project written on Linux is opened on Windows too: the platform never matters.
    monkeypatch.setattr(sys, "platform", platform)
    with pytest.raises(ArtifactNameError) as info:
        check_artifact_name(name)
    device = name.split(".", 1)[0].rstrip(" ").upper()
    assert f"{device!r} is a reserved Windows device name" in info.value.message
    assert name in info.value.message


@pytest.mark.rule("WIN-ARTIFACT-DEVICE-001")
@pytest.mark.parametrize(
    "name",
    ["auxiliary.html", "com10.html", "lpt.html", "aux-2.html", "xaux.html", "con_tent.md", "nuls"],
)
def test_names_that_only_look_like_devices_are_fine(name: str) -> None:
    check_artifact_name(name)


@pytest.mark.rule("WIN-ARTIFACT-DEVICE-001")
def test_a_device_named_artifact_costs_itself_only(tmp_path: Path) -> None:
    arts = [art("intro.html", "one"), art("aux.html", "two"), art("style.css", "three")]
    report = write_artifacts(tmp_path, arts)
    assert [a.name for a in report.written] == ["intro.html", "style.css"]
    assert report.paths == (tmp_path / "intro.html", tmp_path / "style.css")
    (refusal,) = report.refused
    assert refusal.artifact.name == "aux.html"
    assert refusal.message.startswith("artifact 'id' (aux.html) was not written: ")
    assert "reserved Windows device name" in refusal.message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["intro.html", "style.css"]
    assert (tmp_path / "style.css").read_text() == "three"


@pytest.mark.rule("WIN-ARTIFACT-DEVICE-001")
def test_the_runner_writes_the_rest_and_reports_the_refused_one(tmp_path: Path) -> None:
    stdout = (
        "Here are the files.\n"
        + css("site")
        + '<artifact identifier="AUX" type="text/html"><p>aux</p></artifact>'
        + css("print", "p{}")
    )
    held = [Artifact(name=a.name) for a in extract_artifacts(stdout)]
    events, written = write_held_artifacts(held, stdout, str(tmp_path), cancelled=False)
    assert written == ["site.css", "print.css"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["print.css", "site.css"]
    artifacts = [e for e in events if isinstance(e, Artifact)]
    assert [(a.name, a.path) for a in artifacts] == [
        ("site.css", "site.css"),
        ("print.css", "print.css"),
    ]
    (error,) = [e for e in events if isinstance(e, Error)]
    assert error.code == "ARTIFACT_NAME_UNSAFE"
    assert error.terminal is False
    assert error.message.startswith("artifact 'AUX' (aux.html) was not written: ")
    assert "'AUX' is a reserved Windows device name" in error.message


@pytest.mark.rule("WIN-ARTIFACT-DEVICE-001")
def test_a_missing_project_directory_still_fails_the_whole_write(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="does not exist"):
        write_artifacts(tmp_path / "gone", [art("a.html")])
