"""The shared line decoder: framing rules of wire §A.0 (STREAM-FRAME-*)."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.streams.decoder import Line, LineDecoder, OversizeLine, item_size
from tests.helpers import cut_points, split_at


def decode(chunks: list[bytes], **kwargs: int) -> list[Line | OversizeLine]:
    decoder = LineDecoder(**kwargs)
    out: list[Line | OversizeLine] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    out.extend(decoder.finish())
    return out


def texts(items: list[Line | OversizeLine]) -> list[str]:
    return [i.text if isinstance(i, Line) else f"<oversize {i.size}>" for i in items]


@pytest.mark.rule("STREAM-FRAME-LF-001")
def test_splits_on_lf_only_and_keeps_unicode_separators_inside_lines() -> None:
    record = json.dumps({"t": "a\u2028b\x85c\u2029d"}, ensure_ascii=False)
    items = decode([(record + "\n" + record + "\n").encode()])
    assert texts(items) == [record, record]
    assert json.loads(items[0].text)["t"] == "a\u2028b\x85c\u2029d"


@pytest.mark.rule("STREAM-FRAME-CRLF-001")
def test_strips_exactly_one_trailing_cr() -> None:
    assert texts(decode([b"a\r\nb\r\r\nc\n"])) == ["a", "b\r", "c"]


@pytest.mark.rule("STREAM-FRAME-FLUSH-001")
def test_final_unterminated_line_is_flushed_at_finish() -> None:
    items = decode([b'{"a":1}\n{"b":', b"2}"])
    assert texts(items) == ['{"a":1}', '{"b":2}']
    assert items[-1].unterminated and not items[0].unterminated


@pytest.mark.rule("STREAM-FRAME-UTF8-001")
def test_split_inside_a_utf8_sequence_is_decoded_whole() -> None:
    data = "héllo ✓ 🎉\n".encode()
    for cut in range(1, len(data)):
        assert texts(decode([data[:cut], data[cut:]])) == ["héllo ✓ 🎉"]


@pytest.mark.rule("STREAM-FRAME-UTF8-001")
def test_invalid_utf8_becomes_replacement_characters() -> None:
    assert texts(decode([b"a\xffb\n"])) == ["a\ufffdb"]


@pytest.mark.rule("STREAM-FRAME-OVERSIZE-001")
def test_oversize_line_is_reported_with_its_byte_count_and_not_buffered() -> None:
    decoder = LineDecoder(max_line_bytes=100, head_bytes=10)
    out: list[Line | OversizeLine] = []
    for _ in range(1000):
        out.extend(decoder.feed(b"x" * 50))
        assert decoder.buffered_bytes <= 100
    out.extend(decoder.feed(b"\nnext\n"))
    out.extend(decoder.finish())
    assert isinstance(out[0], OversizeLine)
    assert out[0].size == 50_000 and out[0].head == "x" * 10
    assert texts(out[1:]) == ["next"]


@pytest.mark.rule("STREAM-FRAME-OVERSIZE-001")
def test_oversize_line_in_one_chunk_and_unterminated_at_end() -> None:
    items = decode([b"y" * 300 + b"\n" + b"z" * 250], max_line_bytes=200, head_bytes=4)
    assert [(type(i).__name__, i.size) for i in items] == [
        ("OversizeLine", 300),
        ("OversizeLine", 250),
    ]
    assert items[1].unterminated


@pytest.mark.rule("STREAM-FRAME-LF-001")
def test_empty_lines_are_kept_for_the_parser_to_skip() -> None:
    assert texts(decode([b"\n\na\n"])) == ["", "", "a"]


def test_feed_after_finish_is_a_caller_error() -> None:
    decoder = LineDecoder()
    decoder.finish()
    with pytest.raises(RuntimeError):
        decoder.feed(b"x")


@pytest.mark.rule("STREAM-FRAME-CHUNKING-001")
@given(data=st.binary(max_size=2000), cuts=cut_points(), limit=st.integers(1, 64))
@settings(max_examples=300)
def test_any_chunking_gives_the_same_items(data: bytes, cuts: list[int], limit: int) -> None:
    whole = decode([data], max_line_bytes=limit)
    assert decode(split_at(data, cuts), max_line_bytes=limit) == whole
    assert decode([data[i : i + 1] for i in range(len(data))], max_line_bytes=limit) == whole


def reference_items(data: bytes, limit: int) -> list[Line | OversizeLine]:
    """wire §A.0 framing spelled out: split on LF, one CR dropped, oversize kept as a head."""
    parts = data.split(b"\n")
    items: list[Line | OversizeLine] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if last and not part:
            break
        if len(part) > limit:
            items.append(OversizeLine(part[:limit].decode("utf-8", "replace"), len(part), last))
            continue
        raw = part[:-1] if part.endswith(b"\r") else part
        items.append(Line(raw.decode("utf-8", "replace"), len(part), last))
    return items


#: ASCII lines, some ending in CR, some longer than the smallest limits.
ascii_lines = st.lists(
    st.tuples(st.text(st.sampled_from("ab{}"), max_size=12), st.sampled_from(["", "\r", "\r\r"])),
    max_size=12,
).map(lambda lines: "\n".join(text + end for text, end in lines).encode())


@pytest.mark.rule("STREAM-FRAME-CHUNKING-001")
@given(
    data=st.binary(max_size=400) | ascii_lines | ascii_lines.map(lambda d: d + b"\n"),
    cuts=cut_points(),
    limit=st.integers(1, 64),
)
@settings(max_examples=300)
# A whole ASCII chunk with no CR whose middle line is over the limit.
@example(data=b"a\nabcdefgh\nb\n", cuts=[], limit=4)
def test_ascii_and_other_chunks_frame_as_the_reference(
    data: bytes, cuts: list[int], limit: int
) -> None:
    # An ASCII chunk is decoded whole and split as text; any other, line by line.
    assert decode(split_at(data, cuts), max_line_bytes=limit) == reference_items(data, limit)


def iter_decode(chunks: list[bytes], limit: int) -> list[Line | OversizeLine]:
    """:func:`decode` through ``iter_feed``, a plain line's text read back as its Line."""
    decoder = LineDecoder(limit)
    out: list[Line | OversizeLine] = []
    for chunk in chunks:
        for item in decoder.iter_feed(chunk):
            if isinstance(item, str):
                assert item.isascii() and "\r" not in item and len(item) <= limit
                out.append(Line(item, item_size(item)))
            else:
                out.append(item)
    out.extend(decoder.finish())
    return out


@pytest.mark.rule("STREAM-FRAME-CHUNKING-001")
@given(
    data=st.binary(max_size=400) | ascii_lines | ascii_lines.map(lambda d: d + b"\n"),
    cuts=cut_points(),
    limit=st.integers(1, 64) | st.just(1024 * 1024),
)
@settings(max_examples=300)
@example(data=b"a\nabcdefgh\nb\n", cuts=[], limit=4)
def test_iter_feed_plain_lines_are_the_lines_feed_gives(
    data: bytes, cuts: list[int], limit: int
) -> None:
    # A plain line may come as its text; its size is its length, as for its Line.
    chunks = split_at(data, cuts)
    assert iter_decode(chunks, limit) == reference_items(data, limit)


def test_iter_feed_gives_plain_lines_as_text() -> None:
    decoder = LineDecoder()
    assert list(decoder.iter_feed(b'{"a":1}\n{"b":2}\n{"c"')) == [
        Line('{"a":1}', 7),
        '{"b":2}',
    ]
    assert decoder.finish() == [Line('{"c"', 4, unterminated=True)]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.rule("STREAM-FRAME-ROUNDTRIP-001")
@given(values=st.lists(json_values, max_size=8), cuts=cut_points(), ascii_=st.booleans())
def test_decoder_round_trips_any_list_of_json_values(
    values: list[object], cuts: list[int], ascii_: bool
) -> None:
    data = "".join(json.dumps(v, ensure_ascii=ascii_) + "\n" for v in values).encode()
    items = decode(split_at(data, cuts))
    assert [json.loads(i.text) for i in items if isinstance(i, Line)] == values


@pytest.mark.rule("STREAM-RAW-BOUND-001")
def test_unclaimed_lines_become_raw_bounded_to_64_kib() -> None:
    from harness.events import Raw
    from harness.streams.base import JsonlStreamParser

    parser = JsonlStreamParser()
    long_line = "x" * 70_000
    events = parser.feed(b"not json\n" + long_line.encode() + b"\n[1]\n" + b"[" * 5000 + b"\nNaN\n")
    events += parser.finish()
    assert events[0] == Raw(line="not json")
    assert isinstance(events[1], Raw) and events[1].truncated_bytes == 70_000
    assert events[1].line == "x" * 65_536
    assert events[2] == Raw(line="[1]")
    assert isinstance(events[3], Raw) and events[4] == Raw(line="NaN")
