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

from harness.events import Event
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
