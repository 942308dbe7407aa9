"""The claude parser's text-delta fast path gives exactly the general path's events.

``ClaudeStreamParser._read`` handles a text delta in place (no ``handle`` dispatch)
and sends everything else to the base loop. Held against a parser that reads every
line through the base loop alone, on drawn streams with role markers, artifact tags
and file writes in their text (so the guards' slow cases and the fallbacks are hit),
fed whole and cut anywhere.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.events import Event, TextDelta
from harness.streams.base import JsonlStreamParser
from harness.streams.claude import ClaudeStreamParser
from tests.helpers import as_json, cut_points, jsonl, run_chunked, run_whole
from tests.streams.test_claude import (
    _frames,
    assistant,
    block_start,
    block_stop,
    claude_streams,
    message_delta,
    message_start,
    text_delta,
    tool_use,
)
from tests.support.examples import fuzz_sized


class _GeneralPathOnly(ClaudeStreamParser):
    """Every line through the base loop and ``handle``: the reference."""

    _read = JsonlStreamParser._read


#: Pieces of text that reach each guard's slow case: role markers (whole, split, with
#: and without their lookahead), artifact tags (whole and split) around a written body.
_PIECES = st.sampled_from(
    [
        "plain ",
        "\n## user ",
        "\n## assistant",
        "## system\n",
        "\n",
        "#",
        " ",
        "x",
        "<",
        "<artifact",
        ' type="text/html">',
        "<p>x</p>",
        "</artifact>",
        "</arti",
        "fact>",
    ]
)


@st.composite
def guarded_streams(draw: st.DrawFn) -> bytes:
    """Messages of text deltas built from :data:`_PIECES`, some after a file write,
    some with a wrapper (with or without an id) before or after their deltas."""
    frames: list[Any] = []
    for n in range(draw(st.integers(1, 3))):
        message_id = f"msg_{draw(st.integers(0, 1))}"  # an id may come again
        if draw(st.booleans()):
            write = {"file_path": "/p/a.html", "content": "<p>x</p>"}
            frames.append(assistant([tool_use(f"toolu_{n}", "Write", write)], message_id=None))
        message = [message_start(message_id), block_start(0, {"type": "text", "text": ""})]
        texts = draw(st.lists(st.lists(_PIECES, max_size=4).map("".join), max_size=8))
        message += [text_delta(0, text) for text in texts]
        message.append(block_stop(0))
        if draw(st.booleans()):
            wrapper_id = draw(st.sampled_from([message_id, None]))
            wrapper = assistant([{"type": "text", "text": "".join(texts)}], wrapper_id)
            message.insert(draw(st.integers(1, len(message))), wrapper)
        frames += message
        frames.append(message_delta(draw(st.sampled_from(["end_turn", "tool_use"]))))
    return jsonl(*frames)


#: What may surround a line: JSON's own whitespace (orjson reads through it), other
#: characters JavaScript's trim removes (orjson refuses them), a CR before the LF.
_AROUND = st.sampled_from(["", " ", "\t", "\r", "\u00a0", "\ufeff", "\u2028", " \t"])
#: Lines no handler claims, between the frames: the fast path must start over after one.
_STRAY = st.sampled_from(
    ["", "not json", "[1, 2]", "12345678901234567890123", '{"type":"rate_limit_event"}']
)


@st.composite
def decorated_streams(draw: st.DrawFn) -> bytes:
    """:func:`guarded_streams` with each line's surroundings and stray lines drawn."""
    lines = draw(guarded_streams()).decode().split("\n")[:-1]
    out: list[str] = []
    for line in lines:
        if draw(st.integers(0, 5)) == 0:
            out.append(draw(_STRAY))
        out.append(draw(_AROUND) + line + draw(_AROUND))
    return ("\n".join(out) + "\n").encode()


def _both(data: bytes, cuts: list[int]) -> tuple[list[Event], list[Event]]:
    fast = run_whole(ClaudeStreamParser, data)
    assert as_json(run_chunked(ClaudeStreamParser, data, cuts)) == as_json(fast)
    return fast, run_whole(_GeneralPathOnly, data)


@pytest.mark.rule("CLAUDE-CHUNKING-001", "CLAUDE-GUARD-001", "CLAUDE-DEDUPE-TEXT-001")
@fuzz_sized(200)
@given(data=claude_streams(), cuts=cut_points())
def test_documented_streams_give_the_general_paths_events(data: bytes, cuts: list[int]) -> None:
    fast, general = _both(data, cuts)
    assert fast == general


@pytest.mark.rule("CLAUDE-GUARD-001", "ECHO-SUPPRESS-001", "CLAUDE-DEDUPE-TEXT-001")
@fuzz_sized(400)
@given(data=guarded_streams(), cuts=cut_points())
def test_guarded_text_gives_the_general_paths_events(data: bytes, cuts: list[int]) -> None:
    fast, general = _both(data, cuts)
    assert fast == general


@pytest.mark.rule("CLAUDE-CHUNKING-001", "CLAUDE-GUARD-001", "CLAUDE-RAW-001")
@fuzz_sized(300)
@given(data=decorated_streams(), cuts=cut_points())
def test_spaced_and_stray_lines_give_the_general_paths_events(data: bytes, cuts: list[int]) -> None:
    fast, general = _both(data, cuts)
    assert as_json(fast) == as_json(general)


@pytest.mark.rule("CLAUDE-CHUNKING-001")
@fuzz_sized(200)
@given(objects=st.lists(_frames, max_size=16), cuts=cut_points())
def test_any_field_values_give_the_general_paths_events(
    objects: list[Any], cuts: list[int]
) -> None:
    fast, general = _both(jsonl(*objects), cuts)
    assert as_json(fast) == as_json(general)


def test_the_fast_path_takes_the_text_deltas() -> None:
    """The reference differs from the parser under test only in ``_read``."""
    assert ClaudeStreamParser._read is not JsonlStreamParser._read
    assert _GeneralPathOnly._read is JsonlStreamParser._read


class _CountingGeneral(ClaudeStreamParser):
    """The parser under test, counting the text deltas the general path reads."""

    def __init__(self) -> None:
        super().__init__()
        self.handled = 0

    def _on_text_delta(self, text: Any) -> bool:
        self.handled += 1
        return super()._on_text_delta(text)


def test_a_clean_messages_text_deltas_take_the_fast_path() -> None:
    # The point of the fast path: no text delta of a clean message is read generally.
    deltas = [text_delta(0, f"part {n} ") for n in range(50)]
    data = jsonl(message_start("msg_1"), block_start(0, {"type": "text", "text": ""}), *deltas)
    parser = _CountingGeneral()
    events = parser.feed(data) + parser.finish()
    assert "".join(e.delta for e in events if isinstance(e, TextDelta)) == "".join(
        f"part {n} " for n in range(50)
    )
    assert parser.handled == 0


#: Ways a frame reaches the general path between two deltas: as itself, and spelled
#: with a character JavaScript's trim removes and orjson refuses.
_SPELLINGS = ["", "\u00a0", "\ufeff"]


@pytest.mark.rule("ECHO-ARM-001", "ECHO-SUPPRESS-001", "CLAUDE-DEDUPE-TEXT-001")
@pytest.mark.parametrize("spelling", _SPELLINGS, ids=["plain", "nbsp", "bom"])
def test_a_frame_read_between_deltas_is_seen_by_the_next_delta(spelling: str) -> None:
    write = {"file_path": "/p/a.html", "content": "<p>x</p>"}
    lines = [
        jsonl(message_start("msg_1"), text_delta(0, "before ")),
        # A file write arms the echo guard; another message's start moves the text on.
        spelling.encode() + jsonl(assistant([tool_use("toolu_1", "Write", write)], None)),
        jsonl(text_delta(0, '<artifact type="text/html"><p>x</p></artifact> after ')),
        spelling.encode() + jsonl(message_start("msg_2")),
        jsonl(text_delta(0, "second"), assistant([{"type": "text", "text": "second"}], "msg_2")),
    ]
    data = b"".join(lines)
    fast, general = run_whole(ClaudeStreamParser, data), run_whole(_GeneralPathOnly, data)
    assert as_json(fast) == as_json(general)
    assert "".join(e.delta for e in fast if isinstance(e, TextDelta)) == "before  after second"
