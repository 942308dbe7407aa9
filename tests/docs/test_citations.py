"""Citations outside the rule catalog resolve into docs/spec/, and the notes link them.

Comments and docstrings (harness/, conformance/, fake_clis/, tests/, benchmarks/,
scripts/) and the Markdown notes (docs/design/, CONTRIBUTING.md, README.md) cite the spec
as the rules do (``seed 002 §6.3``); :mod:`conformance.rules.prose` finds each one with
:func:`conformance.rules.citations.find_citations` and names the file and line of any
that points nowhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.rules.citations import find_citations
from conformance.rules.prose import (
    check,
    link_markdown,
    markdown_problems,
    python_problems,
    spec_anchors,
)

ROOT = Path(__file__).resolve().parents[2]
ANCHORS = spec_anchors(ROOT)


def test_every_citation_in_code_and_notes_resolves() -> None:
    """Run ``python -m conformance.rules.prose --check`` for the same list; ``--link``
    links a note's plain citations."""
    problems = [str(p) for p in check(ROOT)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("text", "links"),
    [
        pytest.param("see seed 002 §6.3.", ["adapter-layer.md#seed-002-6.3"], id="numbered"),
        pytest.param(
            "seed 001 §11 / §14",
            ["dsh-profile.md#seed-001-11", "dsh-profile.md#seed-001-14"],
            id="continued",
        ),
        pytest.param(
            "(seed 000 §4, 002 §8.1)",
            ["adapters.md#seed-000-4", "adapter-layer.md#seed-002-8.1"],
            id="seed-number-alone",
        ),
        pytest.param(
            "# as in seed 002\n# §7.4 says", ["adapter-layer.md#seed-002-7.4"], id="across-lines"
        ),
        pytest.param(
            "Design §Live mode (MODEL-BIND-001)", ["design.md#design-live-mode"], id="named"
        ),
        pytest.param(
            "wire §A.1.2 / ref §2.6",
            ["wire-formats.md#wire-a.1.2", "upstream-behaviour.md#ref-2.6"],
            id="two-documents",
        ),
        pytest.param("a lone ``§`` cites nothing", [], id="sign-alone"),
    ],
)
def test_citations_are_found_and_resolved(text: str, links: list[str]) -> None:
    found = find_citations(text, ANCHORS)
    assert [c.problem for c in found] == [None] * len(links)
    assert [c.link for c in found] == [f"docs/spec/{link}" for link in links]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("real-clis §2 claude", "unknown document 'real-clis'", id="unknown-doc"),
        pytest.param("as §5 says", "unknown document 'as'", id="word-before"),
        pytest.param("(§5)", "a bare § with no document", id="no-document"),
        pytest.param("ref §99.9", "has no anchor 'ref-99.9'", id="no-section"),
        pytest.param("seed 001 §6\n\nand §99", "no document named", id="paragraph-ends"),
    ],
)
def test_a_citation_that_points_nowhere_says_why(text: str, problem: str) -> None:
    problems = [c.problem or "" for c in find_citations(text, ANCHORS)]
    assert any(problem in p for p in problems), problems


def test_python_problems_name_the_file_and_line() -> None:
    source = '"""Module.\n\nFine: seed 002 §6.3.\n"""\n\nx = 1\n# broken: ref §99.9\n'
    problems = [str(p) for p in python_problems("pkg/mod.py", source, ANCHORS)]
    assert problems == [
        "pkg/mod.py:7: 'ref §99.9': docs/spec/upstream-behaviour.md has no anchor 'ref-99.9'"
    ]


def test_a_string_that_is_not_a_docstring_is_not_read() -> None:
    """Test data may hold a broken citation on purpose; only prose is held to the spec."""
    assert python_problems("t.py", 'CASE = "ref §99.9"\n', ANCHORS) == []


def test_a_note_citation_must_link_to_its_section() -> None:
    note = "docs/design/x.md"
    plain = "Intro.\n\nThe prompt budget (seed 002 §6.3).\n"
    problems = [str(p) for p in markdown_problems(note, plain, ANCHORS)]
    assert problems == [
        "docs/design/x.md:3: 'seed 002 §6.3' is not a link "
        "(to ../spec/adapter-layer.md#seed-002-6.3)"
    ]
    linked = link_markdown(note, plain, ANCHORS)
    assert "[seed 002 §6.3](../spec/adapter-layer.md#seed-002-6.3)" in linked
    assert markdown_problems(note, linked, ANCHORS) == []


def test_a_wrong_or_dangling_link_is_reported() -> None:
    note = "README.md"
    wrong = "[ref §2.8](docs/spec/upstream-behaviour.md#ref-2.6)\n"
    dangling = "[the budget](docs/spec/adapter-layer.md#seed-002-99)\n"
    assert "links to docs/spec/upstream-behaviour.md#ref-2.6, not" in str(
        markdown_problems(note, wrong, ANCHORS)[0]
    )
    assert [str(p) for p in markdown_problems(note, dangling, ANCHORS)] == [
        "README.md:1: link docs/spec/adapter-layer.md#seed-002-99 names no anchor"
    ]


def test_code_is_left_as_written() -> None:
    """A fenced block or a code span shows a citation; neither is linked nor reported."""
    note = "docs/design/x.md"
    text = "```\nciting seed 002 §6.3\n```\n\nWrite `seed 002 §6.3` in a rule.\n"
    assert link_markdown(note, text, ANCHORS) == text
    assert markdown_problems(note, text, ANCHORS) == []
