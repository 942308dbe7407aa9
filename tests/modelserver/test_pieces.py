"""Streamed tool arguments: how they are cut (MODEL-TOOL-ARGS-001)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.modelserver.sse import PIECE_CHARS, WHOLE_STRING_CHARS, json_pieces, pieces
from tests.modelserver.conftest import ServeFn
from tests.modelserver.support import CLAUDE_WRITE, post, scenario_of

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=700),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=20), inner, max_size=4)
    ),
    max_leaves=12,
)


def _cut_points(parts: list[str]) -> set[int]:
    at, cuts = 0, set()
    for part in parts[:-1]:
        at += len(part)
        cuts.add(at)
    return cuts


@pytest.mark.rule("MODEL-TOOL-ARGS-001")
@given(json_values, st.booleans())
def test_pieces_join_and_never_cut_a_short_string(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    parts = json_pieces(text)
    assert "".join(parts) == text
    assert all(parts) and all(len(p) >= PIECE_CHARS for p in parts[:-1])
    cuts = _cut_points(parts)
    for m in _STRING.finditer(text):
        if m.end() - m.start() <= WHOLE_STRING_CHARS:
            assert not any(m.start() < c < m.end() for c in cuts), m.group()


@pytest.mark.rule("MODEL-TOOL-ARGS-001")
def test_a_long_string_is_still_cut_and_plain_text_too() -> None:
    content = "<p>" + "x" * 2000 + "</p>"
    text = json.dumps({"path": "/tmp/live-x-real-abc123/work/hello.html", "content": content})
    parts = json_pieces(text)
    assert parts[0] == '{"path": "/tmp/live-x-real-abc123/work/hello.html"'
    assert len(parts) > 2000 // PIECE_CHARS
    assert pieces("abc" * 20) == ["abc" * 10 + "ab", "cabcabcabcabcabcabcabcabcabc"]


@pytest.mark.rule("MODEL-TOOL-ARGS-001")
def test_a_streamed_write_carries_its_path_in_one_delta(serve: ServeFn) -> None:
    path = "/tmp/live-claude-real-q1w2e3r4/work/pages/hello.html"
    server = serve(
        scenario_of(
            "w",
            [
                {"kind": "tool", "tool": "write", "path": path, "content": "<h1>Hi</h1>\n"},
            ],
        )
    )
    reply = post(
        server,
        "/v1/messages",
        {
            "model": "m",
            "stream": True,
            "max_tokens": 100,
            "tools": [CLAUDE_WRITE],
            "messages": [{"role": "user", "content": "go"}],
        },
    )
    deltas = [
        data["delta"]["partial_json"]
        for event, data in reply.events()
        if event == "content_block_delta" and data["delta"]["type"] == "input_json_delta"
    ]
    assert len(deltas) > 1 and json.loads("".join(deltas))["file_path"].endswith("hello.html")
    assert sum(path in d or json.dumps(path) in d for d in deltas) == 1
