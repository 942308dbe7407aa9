"""``plain`` stream parser (seed 000 §5.13, ref §2.5).

Rules: PLAIN-TEXT-001, PLAIN-ARTIFACT-EVENT-001, PLAIN-ARTIFACT-COLLIDE-001,
PLAIN-ROBUST-001. The extraction rules themselves are tested in
``tests/test_artifacts.py``; here the parser's use of them.
"""

from __future__ import annotations

from collections.abc import Sequence

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.events import Artifact, Error, Event, TextDelta
from harness.formats import UnknownStreamFormatError, create_parser
from harness.host.artifacts import extract_artifacts
from harness.schemas import load_schema
from harness.streams.plain import PlainStreamParser, create
from tests.helpers import cut_points, run_chunks, split_at

VALIDATOR = jsonschema.Draft202012Validator(load_schema("events.schema.json"))

STDOUT = (
    "I'll build it.\n\n"
    '<artifact identifier="Landing Page" type="text/html" title="Landing">\n'
    "<!doctype html>\n<html><body>Héllo ✓ 🎉</body></html>\n"
    "</artifact>\n\n"
    'Example markup:\n```html\n<artifact type="css">not real</artifact>\n```\n'
    '<artifact title="Notes" type="md"># notes</artifact>\n'
    '<artifact identifier="data" type="application/json">{}</artifact>\n'
).encode()


def feed(chunks: Sequence[bytes], existing: Sequence[str] = ()) -> list[Event]:
    events = run_chunks(lambda: PlainStreamParser(existing), chunks)
    for event in events:
        VALIDATOR.validate(event.to_json())
    return events


def text_of(events: Sequence[Event]) -> str:
    return "".join(e.delta for e in events if isinstance(e, TextDelta))


def artifacts_of(events: Sequence[Event]) -> list[Artifact]:
    return [e for e in events if isinstance(e, Artifact)]


def test_factory_is_registered_for_the_format_and_takes_no_dialect() -> None:
    assert isinstance(create_parser("plain"), PlainStreamParser)
    with pytest.raises(UnknownStreamFormatError):
        create("aider")


@pytest.mark.rule("PLAIN-TEXT-001")
def test_each_chunk_is_one_text_delta() -> None:
    parser = PlainStreamParser()
    assert parser.feed(b"hello ") == [TextDelta(delta="hello ")]
    assert parser.feed(b"") == []
    assert parser.feed(b"world\n") == [TextDelta(delta="world\n")]
    assert parser.finish() == []
    assert parser.text == "hello world\n"


@pytest.mark.rule("PLAIN-TEXT-001")
def test_a_character_split_between_reads_is_never_mangled() -> None:
    data = "héllo ✓ 🎉".encode()
    for cut in range(len(data) + 1):
        events = feed([data[:cut], data[cut:]])
        assert text_of(events) == "héllo ✓ 🎉"
        assert all("\ufffd" not in e.delta for e in events if isinstance(e, TextDelta))
    # The held bytes of an incomplete character are not an empty delta.
    parser = PlainStreamParser()
    assert parser.feed(b"\xf0\x9f") == []
    assert parser.feed(b"\x8e\x89!") == [TextDelta(delta="🎉!")]


@pytest.mark.rule("PLAIN-TEXT-001")
def test_invalid_and_truncated_utf8_become_replacement_characters() -> None:
    assert text_of(feed([b"a\xffb", b"\xe2\x82"])) == "a\ufffdb\ufffd"


@pytest.mark.rule("PLAIN-ARTIFACT-EVENT-001")
def test_artifacts_are_emitted_once_at_finish_after_all_text() -> None:
    parser = PlainStreamParser()
    live = parser.feed(STDOUT)
    assert live == [TextDelta(delta=STDOUT.decode())]
    assert parser.finish() == [
        Artifact(name="landing-page.html", identifier="Landing Page", artifact_type="text/html"),
        Artifact(name="notes.md", identifier=None, artifact_type="md"),
    ]
    assert parser.finish() == []


@pytest.mark.rule("PLAIN-ARTIFACT-EVENT-001")
def test_artifact_events_match_the_extractor_on_the_whole_stdout() -> None:
    events = feed([STDOUT[:40], STDOUT[40:41], STDOUT[41:]])
    expected = extract_artifacts(STDOUT.decode())
    assert [(a.name, a.identifier or None, a.artifact_type) for a in expected] == [
        (a.name, a.identifier, a.artifact_type) for a in artifacts_of(events)
    ]
    assert all(a.source == "plain-stream" and a.path is None for a in artifacts_of(events))


@pytest.mark.rule("PLAIN-ARTIFACT-EVENT-001")
def test_output_without_blocks_yields_only_text() -> None:
    events = feed([b"just an answer\n"])
    assert events == [TextDelta(delta="just an answer\n")]


@pytest.mark.rule("PLAIN-ARTIFACT-EVENT-001")
def test_parser_writes_nothing(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.chdir(str(tmp_path))
    feed([STDOUT])
    assert os.listdir(".") == []


@pytest.mark.rule("PLAIN-ARTIFACT-COLLIDE-001")
def test_existing_names_give_collision_suffixes() -> None:
    events = feed([STDOUT], existing=["landing-page.html", "notes.md", "notes-2.md"])
    assert [a.name for a in artifacts_of(events)] == ["landing-page-2.html", "notes-3.md"]


@pytest.mark.rule("PLAIN-ARTIFACT-COLLIDE-001", "PLAIN-ROBUST-001")
def test_exhausted_names_end_with_an_error_event_not_an_exception() -> None:
    taken = ["notes.md", *(f"notes-{n}.md" for n in range(2, 10_000))]
    events = feed([STDOUT], existing=taken)
    assert events[-2:] == [
        Artifact(name="landing-page.html", identifier="Landing Page", artifact_type="text/html"),
        Error(
            message=events[-1].message if isinstance(events[-1], Error) else "",
            code="ARTIFACT_NAME_EXHAUSTED",
        ),
    ]
    assert isinstance(events[-1], Error) and "notes.md" in events[-1].message


def test_feed_after_finish_is_a_programming_error() -> None:
    parser = PlainStreamParser()
    parser.finish()
    with pytest.raises(RuntimeError):
        parser.feed(b"x")


def test_existing_names_must_be_a_collection_of_names() -> None:
    with pytest.raises(TypeError):
        PlainStreamParser("page.html")


@pytest.mark.rule("PLAIN-TEXT-001", "PLAIN-ARTIFACT-EVENT-001")
@given(cuts=cut_points())
def test_any_chunking_gives_the_same_text_and_artifacts(cuts: list[int]) -> None:
    whole = feed([STDOUT])
    chunked = feed(split_at(STDOUT, cuts))
    assert text_of(chunked) == text_of(whole) == STDOUT.decode()
    assert artifacts_of(chunked) == artifacts_of(whole)
    assert len(artifacts_of(whole)) == 2


@pytest.mark.rule("PLAIN-ROBUST-001", "PLAIN-TEXT-001")
@given(data=st.binary(max_size=600), cuts=cut_points())
def test_arbitrary_bytes_never_raise_and_chunking_never_matters(
    data: bytes, cuts: list[int]
) -> None:
    whole = feed([data])
    bytewise = feed([data[i : i + 1] for i in range(len(data))])
    chunked = feed(split_at(data, cuts))
    expected = data.decode("utf-8", "replace")
    assert text_of(whole) == text_of(bytewise) == text_of(chunked) == expected
    assert artifacts_of(whole) == artifacts_of(bytewise) == artifacts_of(chunked)


_PIECES = st.sampled_from(
    [
        '<artifact type="css">',
        "<artifact identifier='Ünï Page'>",
        "<!doctype html>",
        "</artifact>",
        "```\n",
        "`",
        "\n\n",
        "é✓🎉",
        "text ",
    ]
)


@pytest.mark.rule("PLAIN-ROBUST-001", "PLAIN-ARTIFACT-EVENT-001")
@given(pieces=st.lists(_PIECES, max_size=30), cuts=cut_points())
def test_artifacts_do_not_depend_on_chunk_boundaries(pieces: list[str], cuts: list[int]) -> None:
    data = "".join(pieces).encode()
    whole = feed([data])
    chunked = feed(split_at(data, cuts))
    assert text_of(chunked) == text_of(whole)
    assert artifacts_of(chunked) == artifacts_of(whole)
    assert [(a.name, a.artifact_type) for a in artifacts_of(whole)] == [
        (a.name, a.artifact_type) for a in extract_artifacts(data.decode())
    ]
