"""Artifact-echo suppression (seed 002 §7.2, ref §2.1.6).

Rules: ECHO-ARM-001, ECHO-SUPPRESS-001, ECHO-HOLD-001, ECHO-NORMALIZE-001,
ECHO-RESET-001, ECHO-CHUNKING-001. Guard-level cases feed text directly;
parser-level cases use hand-written claude-stream-json frames (ref §2.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from harness.guards.artifact_echo import (
    MAX_RECENT_WRITES,
    ArtifactEchoGuard,
    is_file_write_tool_use,
    normalize_artifact_echo_content,
)
from harness.streams.claude import create
from tests.helpers import as_json, assert_chunking_invariant, cut_points, jsonl

PAGE = "<!doctype html>\n<html><body>Hi</body></html>"


def armed(*contents: str, html_option: bool = False) -> ArtifactEchoGuard:
    guard = ArtifactEchoGuard(suppress_html_after_write=html_option)
    for n, content in enumerate(contents):
        guard.observe_tool_use("Write", {"file_path": f"/p/f{n}.html", "content": content})
    return guard


def run(guard: ArtifactEchoGuard, *chunks: str) -> str:
    return "".join(guard.feed_text(c) for c in chunks) + guard.flush()


# -- ECHO-ARM-001 -----------------------------------------------------------------


@pytest.mark.rule("ECHO-ARM-001")
@pytest.mark.parametrize(
    ("name", "tool_input", "expected"),
    [
        ("Write", {"file_path": "/p/index.html"}, True),
        ("Write", {"file_path": "/p/INDEX.HTM"}, True),
        ("Edit", {"path": "src/app.tsx"}, True),
        ("write_file", {"file_path": "notes.MD"}, True),
        ("Write", {"file_path": "/p/main.py", "content": "print()"}, True),
        ("replace", {"file_path": "/p/main.py", "new_string": "x"}, True),
        ("Write", {"file_path": "/p/main.py"}, False),
        ("Write", {"file_path": 3, "path": "a.css"}, True),
        ("Read", {"file_path": "/p/index.html", "content": "x"}, False),
        ("write", {"file_path": "/p/index.html"}, False),
        ("Write", "not an object", False),
        (None, {"file_path": "/p/index.html"}, False),
        ("Write", {"file_path": "/p/index.html.bak"}, False),
    ],
)
def test_file_write_detection(name: Any, tool_input: Any, expected: bool) -> None:
    assert is_file_write_tool_use(name, tool_input) is expected


@pytest.mark.rule("ECHO-ARM-001")
def test_recent_writes_keep_the_last_five_normalized() -> None:
    guard = armed(*(f" body {n}\r\n" for n in range(MAX_RECENT_WRITES + 2)))
    assert guard.recent_writes == tuple(f"body {n}" for n in range(2, MAX_RECENT_WRITES + 2))
    empty = ArtifactEchoGuard()
    empty.observe_tool_use("Write", {"file_path": "/p/a.html", "content": ""})
    assert empty.armed and empty.recent_writes == ()


@pytest.mark.rule("ECHO-ARM-001")
def test_unarmed_guard_passes_text_through() -> None:
    guard = ArtifactEchoGuard()
    guard.observe_tool_use("Bash", {"command": "cat x.html", "content": "x"})
    text = f"<artifact identifier='p'>{PAGE}</artifact> and <art"
    assert guard.feed_text(text) == text
    assert guard.flush() == ""


# -- ECHO-SUPPRESS-001 -------------------------------------------------------------


@pytest.mark.rule("ECHO-SUPPRESS-001")
def test_block_equal_to_a_recent_write_is_dropped() -> None:
    guard = armed(PAGE)
    out = run(
        guard, f'Wrote it.\n<artifact identifier="p" type="text/html">\n{PAGE}\n</artifact>\nBye'
    )
    assert out == "Wrote it.\n\nBye"


@pytest.mark.rule("ECHO-SUPPRESS-001")
def test_block_different_from_the_writes_is_kept() -> None:
    guard = armed(PAGE)
    text = '<artifact identifier="p" type="text/html"><p>other</p></artifact>!'
    assert run(guard, text) == text


@pytest.mark.rule("ECHO-SUPPRESS-001")
def test_writes_are_forgotten_after_the_first_block_without_the_html_option() -> None:
    guard = armed(PAGE)
    first = f"<artifact>{PAGE}</artifact>"
    assert run(guard, "a", first, "b", first, "c") == f"ab{first}c"


@pytest.mark.rule("ECHO-SUPPRESS-001")
def test_html_option_drops_any_html_artifact_after_an_html_write() -> None:
    guard = armed(PAGE, html_option=True)
    html = "<artifact type='text/html'><p>a different page</p></artifact>"
    markdown = "<artifact type='text/markdown'># notes</artifact>"
    assert run(guard, html, "|", markdown, "|", f"<artifact>{PAGE}</artifact>") == f"|{markdown}|"
    without_html_write = ArtifactEchoGuard(suppress_html_after_write=True)
    without_html_write.observe_tool_use("Write", {"file_path": "/p/a.md", "content": "# x"})
    assert run(without_html_write, html) == html


@pytest.mark.rule("ECHO-SUPPRESS-001")
def test_block_without_a_closing_gt_in_its_open_tag_is_kept() -> None:
    guard = armed("x")
    text = "<artifact</artifact>"
    assert run(guard, text) == text


# -- ECHO-HOLD-001 ----------------------------------------------------------------


@pytest.mark.rule("ECHO-HOLD-001")
def test_open_tag_split_across_chunks_is_recognised() -> None:
    guard = armed(PAGE)
    assert guard.feed_text("Done. <art") == "Done. "
    assert guard.feed_text(f'ifact identifier="p">{PAGE}</arti') == ""
    assert guard.feed_text("fact> Next.") == " Next."
    assert guard.flush() == ""


@pytest.mark.rule("ECHO-HOLD-001")
def test_held_prefix_is_released_when_the_tag_does_not_follow() -> None:
    guard = armed(PAGE)
    assert guard.feed_text("1 <") == "1 "
    assert guard.feed_text(" 2") == "< 2"
    assert guard.feed_text("<artifac") == ""
    assert guard.feed_text("e") == "<artiface"


@pytest.mark.rule("ECHO-HOLD-001")
def test_flush_returns_held_text_and_forgets_the_writes() -> None:
    guard = armed(PAGE)
    assert guard.feed_text("<artifact>" + PAGE) == ""
    assert guard.flush() == "<artifact>" + PAGE
    assert not guard.armed and guard.flush() == ""
    assert guard.feed_text(f"<artifact>{PAGE}</artifact>") == f"<artifact>{PAGE}</artifact>"


def _frames_write_then_text(*texts: str, message_id: str = "msg_2") -> list[dict[str, Any]]:
    write = {"file_path": "/p/index.html", "content": PAGE}
    frames: list[dict[str, Any]] = [
        {
            "type": "assistant",
            "message": {
                "id": "msg_1",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "Write", "input": write}],
            },
            "parent_tool_use_id": None,
        },
        {"type": "stream_event", "event": {"type": "message_start", "message": {"id": message_id}}},
    ]
    for text in texts:
        delta = {"type": "text_delta", "text": text}
        frames.append(
            {
                "type": "stream_event",
                "event": {"type": "content_block_delta", "index": 0, "delta": delta},
            }
        )
    return frames


def parse(*frames: dict[str, Any]) -> list[dict[str, Any]]:
    return as_json(assert_chunking_invariant(lambda: create(None), jsonl(*frames)))


@pytest.mark.rule("ECHO-HOLD-001", "ECHO-SUPPRESS-001")
def test_parser_drops_the_echo_of_a_written_file_split_at_art() -> None:
    events = parse(
        *_frames_write_then_text("Saved. <art", 'ifact identifier="p">', PAGE, "</artifact>")
    )
    assert [e["type"] for e in events] == ["tool_use", "text_delta"]
    assert events[1] == {"type": "text_delta", "delta": "Saved. "}


@pytest.mark.rule("ECHO-HOLD-001")
def test_parser_flushes_held_text_at_the_next_message_start_and_at_the_end() -> None:
    frames = [
        *_frames_write_then_text("see <art"),
        {
            "type": "stream_event",
            "event": {"type": "message_start", "message": {"id": "msg_3"}, "ttft_ms": 5},
        },
    ]
    events = parse(*frames)
    assert events[1:] == [
        {"type": "text_delta", "delta": "see "},
        {"type": "text_delta", "delta": "<art"},
        {"type": "status", "label": "streaming", "ttft_ms": 5},
    ]
    tail = parse(*_frames_write_then_text("see <artifact>unfinished"))
    assert tail[1:] == [
        {"type": "text_delta", "delta": "see "},
        {"type": "text_delta", "delta": "<artifact>unfinished"},
    ]


# -- ECHO-NORMALIZE-001 -----------------------------------------------------------


@pytest.mark.rule("ECHO-NORMALIZE-001")
@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("\ufeffa\r\nb\rc", "a\nb\nc"),
        ("  \n\ta b\t\n ", "a b"),
        ("\\n\\r\\n  body \\n", "body"),
        ("\\nx\\y\\n", "x\\y"),
        ("a\\\\n", "a\\"),
        ("\u00a0\u3000text\u2028", "text"),
        ("\ufeff\ufeffz", "z"),
        (" \\n ", ""),
        ("\\t", "\\t"),
    ],
)
def test_normalization(raw: str, normalized: str) -> None:
    assert normalize_artifact_echo_content(raw) == normalized


@pytest.mark.rule("ECHO-NORMALIZE-001")
def test_bodies_are_compared_normalized() -> None:
    guard = armed("line one\nline two")
    assert run(guard, "<artifact>\\n  line one\r\nline two \r\n</artifact>") == ""


# -- ECHO-RESET-001 ---------------------------------------------------------------


@pytest.mark.rule("ECHO-RESET-001")
def test_reset_turn_forgets_the_writes() -> None:
    guard = armed(PAGE)
    guard.reset_turn()
    assert guard.recent_writes == ()
    # Still armed by the write, but nothing left to match.
    assert run(guard, f"<artifact>{PAGE}</artifact>") == f"<artifact>{PAGE}</artifact>"


def _turn_boundary(stop_reason: str) -> dict[str, Any]:
    event = {"type": "message_delta", "delta": {"stop_reason": stop_reason}}
    return {"type": "stream_event", "event": event, "parent_tool_use_id": None}


@pytest.mark.rule("ECHO-RESET-001")
@pytest.mark.parametrize(
    ("boundary", "kept"),
    [
        (_turn_boundary("end_turn"), True),
        (_turn_boundary("tool_use"), False),
        (
            {"type": "result", "subtype": "success", "is_error": False, "stop_reason": "end_turn"},
            True,
        ),
        (
            {"type": "result", "subtype": "success", "is_error": False, "stop_reason": "tool_use"},
            False,
        ),
    ],
)
def test_parser_resets_at_a_turn_boundary_that_is_not_mid_tool(
    boundary: dict[str, Any], kept: bool
) -> None:
    frames = _frames_write_then_text("Ok.")
    frames.append(boundary)
    frames.append(
        {"type": "stream_event", "event": {"type": "message_start", "message": {"id": "msg_9"}}}
    )
    echo = f"<artifact>{PAGE}</artifact>"
    frames.append(
        {
            "type": "stream_event",
            "event": {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": echo},
            },
        }
    )
    texts = [e["delta"] for e in parse(*frames) if e["type"] == "text_delta"]
    assert texts == (["Ok.", echo] if kept else ["Ok."])


# -- ECHO-CHUNKING-001 ------------------------------------------------------------


def split_text(text: str, cuts: Sequence[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts}) if text else []
    out: list[str] = []
    prev = 0
    for p in points:
        out.append(text[prev:p])
        prev = p
    out.append(text[prev:])
    return out


_pieces = st.sampled_from(
    [
        "<artifact",
        "<artifact>",
        "</artifact>",
        "<",
        "<art",
        ">",
        "body",
        " body ",
        "\\n",
        "\r\n",
        "x",
        "type='text/html'",
        "</arti",
        "fact>",
        PAGE,
    ]
)
echo_texts = st.one_of(st.lists(_pieces, max_size=25).map("".join), st.text(max_size=60))
writes = st.lists(st.sampled_from(["body", " body\r\n", PAGE, "x", ""]), max_size=7)


@pytest.mark.rule("ECHO-CHUNKING-001")
@given(text=echo_texts, contents=writes, html_option=st.booleans(), cuts=cut_points())
@example(text=f"a <artifact>{PAGE}</artifact> b", contents=[PAGE], html_option=False, cuts=[4, 7])
def test_any_split_gives_the_same_output(
    text: str, contents: list[str], html_option: bool, cuts: list[int]
) -> None:
    """Concatenated feed output + flush is split-invariant, and only ever removes whole blocks.

    Per-call outputs differ (held text comes later), but the total does not; and
    with nothing armed the guard is the identity.
    """
    whole = run(armed(*contents, html_option=html_option), text)
    assert run(armed(*contents, html_option=html_option), *split_text(text, cuts)) == whole
    assert run(armed(*contents, html_option=html_option), *text) == whole
    assert run(ArtifactEchoGuard(), *split_text(text, cuts)) == text
    if not contents:
        assert whole == text


def _echo_state(guard: ArtifactEchoGuard) -> tuple[Any, ...]:
    return tuple(
        list(value) if isinstance(value, list) else value
        for value in (getattr(guard, name) for name in ArtifactEchoGuard.__slots__)
    )


@pytest.mark.rule("ECHO-HOLD-001", "ECHO-SUPPRESS-001")
@given(
    writes=st.lists(st.sampled_from(["<p>x</p>", "abc", ""]), max_size=2),
    chunks=st.lists(st.text(alphabet="ab<>/artifc \n", max_size=14), max_size=8),
)
def test_passes_through_only_when_feeding_would_return_the_text_unchanged(
    writes: list[str], chunks: list[str]
) -> None:
    """The parser's cheap check: True means feed_text returns the text, state unchanged."""
    guard = ArtifactEchoGuard()
    for content in writes:
        guard.observe_tool_use("Write", {"file_path": "/p/a.md", "content": content})
    for chunk in chunks:
        before = _echo_state(guard)
        passes = guard.passes_through(chunk)
        out = guard.feed_text(chunk)
        if passes:
            assert out == chunk
            assert _echo_state(guard) == before
