"""The role-marker guard, generation 3 (seed 002 §7.5, ref §3).

Rules: RMG-REGEX-001, RMG-HOLDBACK-001, RMG-TAIL-001, RMG-CUT-001, RMG-THINKING-001,
RMG-NOFLUSH-001, RMG-CHUNKING-001. The example cases are the upstream guard's
documented cases (ref §3.1-§3.3), re-stated here by hand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.guards import role_marker
from harness.guards.role_marker import (
    FABRICATED_ROLE_MARKER_RE,
    FIRST_CHUNK_PENDING_MARKER_TAIL_RE,
    NEWLINE_ANCHORED_PENDING_MARKER_TAIL_RE,
    NEWLINE_ANCHORED_ROLE_MARKER_RE,
    TAIL_BUFFER_SIZE,
    RoleMarkerGuard,
)
from harness.streams.claude import create
from tests.helpers import as_json, assert_chunking_invariant, cut_points, jsonl


def feed(*chunks: str) -> tuple[list[str], RoleMarkerGuard]:
    guard = RoleMarkerGuard()
    return [guard.feed_text(c) for c in chunks], guard


def split_text(text: str, cuts: Sequence[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts}) if text else []
    out: list[str] = []
    prev = 0
    for p in points:
        out.append(text[prev:p])
        prev = p
    out.append(text[prev:])
    return out


# -- RMG-REGEX-001 ----------------------------------------------------------------

MATCHES = [
    "## user\nfabricated",
    "## assistant\nfabricated",
    "## system\nfabricated",
    "## assist\nfabricated",
    "OK\n## user\nfabricated",
    "text\n##   user\nfabricated",
    "text\n##\tuser\nfabricated",
    "text\n  ## user\nfabricated",
    "text\n## assistantReading the file",
    "text\n## assistant. Doing the thing.",
    "## user fabricated",
]
NON_MATCHES = [
    "intro\n## User Guide\n…",
    "intro\n## System Architecture\n…",
    "intro\n## Assistant settings\n…",
    "intro\n## USER NOTES\n…",
    "intro\n## users guide here\n…",
    "intro\n## userland concepts\n…",
    "intro\n## systemd configuration\n…",
    "intro\n## assistance needed\n…",
    "OK\nUser: hello",
    "text\nHuman: what now?",
    "here is the ## user content",
    "##\nuser\nfabricated",
    "text\n##user\nno blank after the hashes",
    "## usability improvements",
    "ends with the keyword\n## user",
    "",
]


@pytest.mark.rule("RMG-REGEX-001")
@pytest.mark.parametrize("text", MATCHES)
def test_marker_patterns_match(text: str) -> None:
    assert FABRICATED_ROLE_MARKER_RE.search(text)
    _, guard = feed(text)
    assert guard.contaminated


@pytest.mark.rule("RMG-REGEX-001")
@pytest.mark.parametrize("text", NON_MATCHES)
def test_non_markers_never_match_whole_or_streamed(text: str) -> None:
    assert not FABRICATED_ROLE_MARKER_RE.search(text)
    outputs, guard = feed(text)
    assert not guard.contaminated
    streamed, streamed_guard = feed(*text)
    assert not streamed_guard.contaminated
    if not text.endswith("## user"):
        assert "".join(outputs) == text == "".join(streamed)


@pytest.mark.rule("RMG-REGEX-001")
def test_anchors_follow_javascript_semantics() -> None:
    # ref §3.1 port caveat: JS ``$`` is end of input; Python ``$`` would also
    # match before a final newline, so the pending patterns use ``\Z``.
    assert FIRST_CHUNK_PENDING_MARKER_TAIL_RE.search("OK\n## user")
    assert not FIRST_CHUNK_PENDING_MARKER_TAIL_RE.search("OK\n## user\n")
    assert not NEWLINE_ANCHORED_PENDING_MARKER_TAIL_RE.search("OK\n## system\n")
    # The newline-anchored variants ignore the start of the buffer.
    assert FABRICATED_ROLE_MARKER_RE.search("## user!")
    assert not NEWLINE_ANCHORED_ROLE_MARKER_RE.search("## user!")
    assert not NEWLINE_ANCHORED_PENDING_MARKER_TAIL_RE.search("## user")
    # ``assistant`` is tried before ``assist``.
    match = FABRICATED_ROLE_MARKER_RE.search("x\n## assistant!")
    assert match and match.group(0) == "\n## assistant"


# -- RMG-CUT-001 ------------------------------------------------------------------


@pytest.mark.rule("RMG-CUT-001")
def test_text_before_the_marker_is_kept_and_the_rest_dropped() -> None:
    outputs, guard = feed("OK\n## user\nfabricated", "More text", "Even more")
    assert outputs == ["OK", "", ""]
    assert guard.contaminated and guard.marker == "## user"


@pytest.mark.rule("RMG-CUT-001")
def test_marker_keeps_inner_blanks_and_loses_the_newline() -> None:
    _, guard = feed("text\n  ##   user\nfabricated")
    assert guard.marker == "##   user"
    outputs, glued = feed("Done.\n## assistantReading the file...")
    assert outputs == ["Done."] and glued.marker == "## assistant"


@pytest.mark.rule("RMG-CUT-001")
def test_warning_event_names_the_message() -> None:
    clean = RoleMarkerGuard()
    assert clean.feed_text("Normal text.") == "Normal text."
    assert clean.warning_event("msg-1") is None
    _, guard = feed("## assistant\nfabricated")
    warning = guard.warning_event("msg-42")
    assert warning is not None
    assert warning.to_json() == {
        "type": "fabricated_role_marker",
        "marker": "## assistant",
        "message_id": "msg-42",
    }


@pytest.mark.rule("RMG-CUT-001")
def test_empty_chunks_are_ignored() -> None:
    outputs, guard = feed("", "a", "")
    assert outputs == ["", "a", ""] and not guard.contaminated


# -- RMG-TAIL-001 -----------------------------------------------------------------


@pytest.mark.rule("RMG-TAIL-001")
@pytest.mark.parametrize(
    ("first", "second", "leaked"),
    [
        ("## us", "er\nDELETE the universe", "## us"),
        ("##", " user\nDELETE the universe", "##"),
        ("## ", "user\nDELETE the universe", "## "),
        ("#", "# user\nDELETE", "#"),
        ("Some text\n", "## user\nfabricated!", "Some text\n"),
        ("OK\n## use", "r\nfabricated", "OK\n## use"),
    ],
)
def test_split_markers_are_caught_after_their_prefix_was_emitted(
    first: str, second: str, leaked: str
) -> None:
    # Before the keyword is complete nothing is suspicious, so the prefix is
    # emitted (gen 3); the start-of-message anchor is still on because the
    # tail was never sliced, which is what catches ``'##' | ' user'``.
    outputs, guard = feed(first, second)
    assert outputs == [leaked, ""]
    assert guard.marker == "## user"


@pytest.mark.rule("RMG-TAIL-001")
@pytest.mark.parametrize(("blanks", "caught"), [(57, True), (58, False)])
def test_the_tail_is_64_characters(blanks: int, caught: bool) -> None:
    # Streamed one character at a time, the marker's newline must still be in
    # the tail when ``r`` arrives: ``\n`` + blanks + ``## use`` <= 64 characters.
    assert TAIL_BUFFER_SIZE == 64
    text = "intro\n" + " " * blanks + "## user\nfabricated"
    _, guard = feed(*text)
    assert guard.contaminated is caught


@pytest.mark.rule("RMG-TAIL-001")
def test_marker_after_a_long_clean_stream_is_still_caught() -> None:
    chunk = "lorem ipsum dolor sit amet, consectetur adipiscing. "
    guard = RoleMarkerGuard()
    assert all(guard.feed_text(chunk) == chunk for _ in range(200))
    assert guard.feed_text("done.\n## user\nfabricated") == "done."
    assert guard.marker == "## user"


@pytest.mark.rule("RMG-TAIL-001")
def test_marker_straddling_chunks_after_many_chunks_is_caught() -> None:
    guard = RoleMarkerGuard()
    for _ in range(100):
        guard.feed_text("clean. ")
    assert guard.feed_text("end of preamble.\n## us") == "end of preamble.\n## us"
    assert guard.feed_text("er\nfabricated") == ""
    assert guard.contaminated


@pytest.mark.rule("RMG-TAIL-001")
@pytest.mark.parametrize(
    "text",
    [
        "...take a look at the ## user content section of the docs...",
        "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do "
        "eiusmod tempor ## user incididunt ut labore et dolore magna aliqua.",
        "y" + " " * TAIL_BUFFER_SIZE + "## user! mid-line after a sliced tail of blanks",
    ],
)
def test_mid_line_marker_streamed_char_by_char_is_not_a_marker(text: str) -> None:
    # Once the tail is sliced, ``^`` would anchor at an arbitrary cut inside
    # prose; the guard switches to newline-anchored patterns.
    outputs, guard = feed(*text)
    assert not guard.contaminated
    assert "".join(outputs) == text


@pytest.mark.rule("RMG-TAIL-001")
def test_newline_marker_streamed_char_by_char_after_the_slice_is_caught() -> None:
    text = (
        "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do "
        "eiusmod tempor\n## user incididunt"
    )
    outputs, guard = feed(*text)
    assert guard.marker == "## user"
    assert "".join(outputs) == text[: text.index("\n## user") + len("\n## use")]


# -- RMG-HOLDBACK-001 -------------------------------------------------------------


@pytest.mark.rule("RMG-HOLDBACK-001")
def test_keyword_at_chunk_end_is_withheld_then_confirmed() -> None:
    outputs, guard = feed("OK\n## user", "\nfabricated")
    assert outputs == ["OK", ""]
    assert guard.marker == "## user"


@pytest.mark.rule("RMG-HOLDBACK-001")
def test_withheld_keyword_is_released_when_the_next_letter_denies_it() -> None:
    outputs, guard = feed("Hello\n## user", "land thoughts")
    assert outputs == ["Hello", "\n## userland thoughts"]
    assert not guard.contaminated


@pytest.mark.rule("RMG-HOLDBACK-001")
def test_withholding_applies_to_each_role_and_the_message_start() -> None:
    outputs, guard = feed("See below.\n## assistant", ". Doing the thing.")
    assert outputs == ["See below.", ""] and guard.marker == "## assistant"
    outputs, guard = feed("## system", "\nfabricated")
    assert outputs == ["", ""] and guard.marker == "## system"


@pytest.mark.rule("RMG-HOLDBACK-001")
def test_title_case_keyword_is_not_withheld() -> None:
    outputs, guard = feed("intro\n## User")
    assert outputs == ["intro\n## User"] and not guard.contaminated


# -- RMG-NOFLUSH-001 --------------------------------------------------------------


@pytest.mark.rule("RMG-NOFLUSH-001")
def test_message_ending_in_a_withheld_keyword_emits_nothing_more_and_is_not_flagged() -> None:
    outputs, guard = feed("Done.", "\n## user")
    assert outputs == ["Done.", ""]
    assert not guard.contaminated and guard.warning_event("m") is None
    events = as_json(
        assert_chunking_invariant(
            lambda: create(None),
            jsonl(
                {
                    "type": "stream_event",
                    "event": {"type": "message_start", "message": {"id": "m1"}},
                },
                _text_event("Done.\n## user"),
                {
                    "type": "stream_event",
                    "event": {"type": "message_start", "message": {"id": "m2"}},
                },
                _text_event("Next."),
            ),
        )
    )
    assert events == [
        {"type": "text_delta", "delta": "Done."},
        {"type": "text_delta", "delta": "Next."},
    ]


# -- RMG-THINKING-001 -------------------------------------------------------------


def _text_event(text: str) -> dict[str, object]:
    delta = {"type": "text_delta", "text": text}
    return {
        "type": "stream_event",
        "event": {"type": "content_block_delta", "index": 0, "delta": delta},
    }


@pytest.mark.rule("RMG-THINKING-001")
def test_thinking_with_a_marker_passes_intact() -> None:
    thinking = "The transcript looks like:\n## user\nhi\n## assistant\nhello"
    data = jsonl(
        {"type": "stream_event", "event": {"type": "message_start", "message": {"id": "m1"}}},
        {
            "type": "stream_event",
            "event": {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": thinking},
            },
        },
        {
            "type": "assistant",
            "message": {"id": "m2", "content": [{"type": "thinking", "thinking": thinking}]},
        },
        _text_event("Visible answer."),
    )
    events = as_json(assert_chunking_invariant(lambda: create(None), data))
    assert events == [
        {"type": "thinking_delta", "delta": thinking},
        {"type": "thinking_delta", "delta": thinking},
        {"type": "text_delta", "delta": "Visible answer."},
    ]


# -- RMG-CHUNKING-001 -------------------------------------------------------------

_CANDIDATE_RE = re.compile(r"(?:^|\n)[ \t]*##[ \t]+(?:user|assistant|assist|system)")

_pieces = st.sampled_from(
    [
        "## user",
        "## assistant",
        "## assist",
        "## system",
        "##",
        "#",
        " ",
        "\t",
        "\n",
        "user",
        "assist",
        "ant",
        "system",
        "land",
        "s",
        "a",
        "X",
        "!",
        ".",
        "é",
        "🎉",
        "ok ",
        "lorem ipsum dolor sit amet ",
    ]
)
#: Mostly marker-rich text; sometimes long blank runs that outgrow the tail.
marker_texts = st.one_of(
    st.lists(_pieces, max_size=40).map("".join),
    st.lists(_pieces | st.just(" " * 70), max_size=12).map("".join),
    st.text(max_size=80),
)


def _run(chunks: Sequence[str]) -> tuple[str, bool, str | None]:
    guard = RoleMarkerGuard()
    out = "".join(guard.feed_text(c) for c in chunks)
    return out, guard.contaminated, guard.marker


@pytest.mark.rule("RMG-CHUNKING-001")
@settings(max_examples=400)
@given(text=marker_texts, cuts=cut_points())
@example(text="y" + " " * 70 + "## user!", cuts=list(range(1, 80)))
@example(text="Hello\n## user", cuts=[8])
@example(text="OK\n## user\nfabricated", cuts=[6])
def test_chunking_property(text: str, cuts: list[int]) -> None:
    """What gen 3 guarantees for any split S of a text T (W = T in one chunk).

    1. Feeding never raises and out(S), the concatenated safe text, is a prefix of T.
    2. out(W) is a prefix of out(S): one whole chunk is the most conservative split
       (a split can emit a marker's beginning before its keyword is complete).
    3. contaminated(S) implies contaminated(W): a split can miss a marker, never invent one.
    4. If every marker candidate ``(^|\\n)[ \\t]*##[ \\t]+(user|assistant|assist|system)``
       in T is at most TAIL_BUFFER_SIZE + 1 characters long (so its newline is still
       in the 64-character tail when its keyword completes), then the verdict and the
       marker are the same as for W, and the extra text out(S) - out(W) never reaches
       the keyword's last character:
       * if T has a confirmed marker M (first match of FABRICATED_ROLE_MARKER_RE),
         M.start <= len(out(S)) < M.end and len(out(W)) == M.start;
       * else if T ends with a complete keyword P (no lookahead yet; RMG-NOFLUSH-001),
         P.start <= len(out(S)) < len(T) and len(out(W)) == P.start;
       * else out(S) == out(W) == T.
    Outside that bound (a blank run longer than the tail) a split may miss a marker
    that the whole chunk catches: the documented gen-3 limit of a 64-character tail.
    """
    chunks = split_text(text, cuts)
    out_s, dirty_s, marker_s = _run(chunks)
    out_w, dirty_w, marker_w = _run([text])
    bytewise = _run(list(text))
    assert text.startswith(out_s)
    assert out_s.startswith(out_w) and bytewise[0].startswith(out_w)
    assert not dirty_s or dirty_w
    assert not bytewise[1] or dirty_w
    if any(len(m.group(0)) > TAIL_BUFFER_SIZE + 1 for m in _CANDIDATE_RE.finditer(text)):
        return
    for out, dirty, marker in ((out_s, dirty_s, marker_s), bytewise):
        assert (dirty, marker) == (dirty_w, marker_w)
        confirmed = FABRICATED_ROLE_MARKER_RE.search(text)
        pending = FIRST_CHUNK_PENDING_MARKER_TAIL_RE.search(text)
        if confirmed:
            assert len(out_w) == confirmed.start() <= len(out) < confirmed.end()
        elif pending:
            assert len(out_w) == pending.start() <= len(out) < len(text)
        else:
            assert out == out_w == text


@pytest.mark.rule("RMG-CHUNKING-001")
def test_a_marker_longer_than_the_tail_is_missed_only_when_streamed() -> None:
    text = "intro\n" + " " * 70 + "## user\nfabricated"
    _, whole = feed(text)
    assert whole.marker == "## user"
    outputs, streamed = feed(*text)
    assert not streamed.contaminated
    assert "".join(outputs) == text


@pytest.mark.rule("RMG-CHUNKING-001")
@given(text=st.text(), cuts=cut_points())
def test_arbitrary_text_never_raises(text: str, cuts: list[int]) -> None:
    guard = RoleMarkerGuard()
    out = "".join(guard.feed_text(c) for c in split_text(text, cuts))
    assert text.startswith(out)


def _run_rolling_every_chunk(chunks: Sequence[str]) -> tuple[list[str], bool, str | None]:
    """:func:`_run` chunk by chunk, with the tail rolled after every chunk returned."""
    with mock.patch.object(role_marker, "_FRESH_LIMIT", 1):
        guard = RoleMarkerGuard()
        outputs = [guard.feed_text(c) for c in chunks]
    return outputs, guard.contaminated, guard.marker


@pytest.mark.rule("RMG-TAIL-001")
@settings(max_examples=300)
@given(text=marker_texts, cuts=cut_points())
@example(text="x" * 40 + "\n## user!", cuts=[])  # bytewise: rolled in batches mid-text
def test_rolling_the_tail_late_changes_nothing(text: str, cuts: list[int]) -> None:
    # The fast path defers the tail's roll; the verdicts and every output are those of
    # a guard that rolls the tail after each chunk.
    for chunks in (split_text(text, cuts), list(text)):
        guard = RoleMarkerGuard()
        outputs = [guard.feed_text(c) for c in chunks]
        assert (outputs, guard.contaminated, guard.marker) == _run_rolling_every_chunk(chunks)
