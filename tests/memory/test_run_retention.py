"""``EventRetention``: a run keeps a bounded head and tail of its events (RUN-MEMORY-001).

``harness run`` prints every event through ``on_event`` and reads the result only for its
summary, so the run keeps the first and last events and counts the rest; a library run
(no retention) keeps every event. The runs are real: a fake plain CLI prints 4 MB.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.events import Event, Status, TextDelta
from harness.runner import run_agent
from harness.runner.engine import EventRetention, _Retained, _text_chars
from tests.runner.conftest import FakeWorld


def _jsons(events: tuple[Event, ...] | list[Event]) -> list[dict[str, object]]:
    return [e.to_json() for e in events]


def _is_head_and_tail(kept: list[dict[str, object]], seen: list[dict[str, object]]) -> bool:
    return any(
        kept[:k] == seen[:k] and kept[k:] == seen[len(seen) - (len(kept) - k) :]
        for k in range(len(kept) + 1)
    )


@pytest.mark.rule("RUN-MEMORY-001")
def test_a_run_with_a_retention_keeps_a_head_and_a_tail_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    world = FakeWorld(tmp_path)
    scenario = world.scenario_file("long", [{"kind": "oversize", "bytes": 4_000_000}])
    policy = EventRetention(head_events=4, tail_events=3, text_chars=100_000)
    seen: list[Event] = []
    bounded = run_agent(world.request("qwen", scenario), on_event=seen.append, retention=policy)
    everything = run_agent(world.request("qwen", scenario))
    assert bounded.succeeded and everything.succeeded
    # on_event sees every event, and a run without a retention keeps them all.
    assert _jsons(seen) == _jsons(everything.events)
    assert "events_dropped" not in everything.counters
    kept = _jsons(bounded.events)
    assert len(seen) > 60 and len(kept) <= 7
    assert _is_head_and_tail(kept, _jsons(seen))
    assert kept[-1] == seen[-1].to_json()
    assert sum(_text_chars(e) for e in bounded.events) <= 2 * policy.text_chars
    assert bounded.counters["events_dropped"] == len(seen) - len(kept)


def _event(kind: str, size: int) -> Event:
    return TextDelta(delta="x" * size) if kind == "text" else Status(label="s" * size)


@pytest.mark.rule("RUN-MEMORY-001")
@settings(max_examples=80, deadline=None)
@given(
    events=st.lists(
        st.tuples(st.sampled_from(["text", "status"]), st.integers(0, 50)), max_size=60
    ),
    head=st.integers(0, 6),
    tail=st.integers(0, 6),
    chars=st.integers(0, 120),
)
def test_retention_bounds_count_and_text_and_keeps_the_order(
    events: list[tuple[str, int]], head: int, tail: int, chars: int
) -> None:
    policy = EventRetention(head_events=head, tail_events=tail, text_chars=chars)
    retained = _Retained(policy)
    published = [_event(kind, size) for kind, size in events]
    for event in published:
        retained.add(event)
    kept = retained.events()
    assert len(kept) <= head + tail
    assert sum(_text_chars(e) for e in kept) <= 2 * chars
    assert _is_head_and_tail(_jsons(kept), _jsons(published))
    assert retained.dropped == len(published) - len(kept)
    everything = _Retained(None)
    for event in published:
        everything.add(event)
    assert everything.events() == tuple(published) and everything.dropped == 0


def test_a_retention_refuses_a_negative_or_non_integer_bound() -> None:
    with pytest.raises(ValueError, match="head_events"):
        EventRetention(head_events=-1)
    with pytest.raises(ValueError, match="text_chars"):
        EventRetention(text_chars=json.loads("1.5"))
