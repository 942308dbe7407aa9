"""Test helpers shared by parser, guard and session tests (h11's ``tr`` idea).

``run_whole`` / ``run_bytewise`` / ``run_chunked`` feed the same bytes three
ways; ``assert_chunking_invariant`` checks they give the same events.
``chunkings()`` is a hypothesis strategy of split points.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

from harness.events import Event
from harness.streams.base import StreamParser

ParserFactory = Callable[[], StreamParser]


def run_chunks(factory: ParserFactory, chunks: Sequence[bytes]) -> list[Event]:
    parser = factory()
    events: list[Event] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.finish())
    return events


def run_whole(factory: ParserFactory, data: bytes) -> list[Event]:
    return run_chunks(factory, [data])


def run_bytewise(factory: ParserFactory, data: bytes) -> list[Event]:
    return run_chunks(factory, [data[i : i + 1] for i in range(len(data))])


def split_at(data: bytes, cuts: Sequence[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts}) if data else []
    out: list[bytes] = []
    prev = 0
    for p in points:
        out.append(data[prev:p])
        prev = p
    out.append(data[prev:])
    return out


def run_chunked(factory: ParserFactory, data: bytes, cuts: Sequence[int]) -> list[Event]:
    return run_chunks(factory, split_at(data, cuts))


def as_json(events: Sequence[Event]) -> list[dict[str, Any]]:
    return [e.to_json() for e in events]


def assert_chunking_invariant(
    factory: ParserFactory, data: bytes, cuts: Sequence[int] = ()
) -> list[Event]:
    """Whole, byte-by-byte and cut at ``cuts`` must give identical events."""
    whole = as_json(run_whole(factory, data))
    assert as_json(run_bytewise(factory, data)) == whole, "byte-by-byte feed differs"
    if cuts:
        assert as_json(run_chunked(factory, data, cuts)) == whole, f"split at {cuts} differs"
    return run_whole(factory, data)


#: Small JSON values (finite numbers, short strings, shallow containers) for builder and
#: handler properties.
small_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


def cut_points() -> st.SearchStrategy[list[int]]:
    """Arbitrary split offsets (taken modulo the input length)."""
    return st.lists(st.integers(min_value=0, max_value=10_000_000), max_size=12)


def jsonl(*objects: Any) -> bytes:
    """Encode objects as JSON Lines (compact separators, UTF-8, trailing newline)."""
    import json

    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects).encode()
