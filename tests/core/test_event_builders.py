"""The slot-filling event builders give exactly the events their constructors give.

``text_delta``, ``tool_use`` and ``tool_result`` in :mod:`harness.events` skip the
frozen ``__init__`` and fill the slots directly. These tests hold each one to its
class constructor (``==``, ``hash``, ``repr``, ``to_json``, ``astuple``, still
frozen), and fail when a builder's class gains a field the builder leaves empty.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import events as ev
from tests.helpers import small_json_values as json_values

optional_text = st.none() | st.text(max_size=8)


def _same_event(fast: ev.Event, slow: ev.Event) -> None:
    """``fast`` is ``slow`` in every way a reader of an event can tell."""
    assert type(fast) is type(slow)
    assert fast == slow
    assert repr(fast) == repr(slow)
    assert fast.to_json() == slow.to_json()
    assert ev.event_json_line(fast) == ev.event_json_line(slow)
    assert dataclasses.astuple(fast) == dataclasses.astuple(slow)
    try:
        expected = hash(slow)
    except TypeError:  # a ToolUse whose input is a list or a dict
        with pytest.raises(TypeError):
            hash(fast)
    else:
        assert hash(fast) == expected


def _still_frozen(event: ev.Event) -> None:
    for f in dataclasses.fields(event):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(event, f.name, "changed")


@given(delta=st.text())
def test_text_delta_equals_the_constructor(delta: str) -> None:
    fast = ev.text_delta(delta)
    _same_event(fast, ev.TextDelta(delta=delta))
    _still_frozen(fast)


@given(call_id=optional_text, name=optional_text, value=json_values)
def test_tool_use_equals_the_constructor(call_id: str | None, name: str | None, value: Any) -> None:
    fast = ev.tool_use(call_id, name, value)
    _same_event(fast, ev.ToolUse(id=call_id, name=name, input=value))
    assert fast.started_at_ms is None
    _still_frozen(fast)


@given(call_id=optional_text, content=st.text(), is_error=st.booleans())
def test_tool_result_equals_the_constructor(
    call_id: str | None, content: str, is_error: bool
) -> None:
    fast = ev.tool_result(call_id, content, is_error)
    _same_event(fast, ev.ToolResult(tool_use_id=call_id, content=content, is_error=is_error))
    _still_frozen(fast)


# -- every field filled ---------------------------------------------------------------


def _empty_slots(event: Any) -> list[str]:
    """The dataclass fields of ``event`` whose slot was never set.

    An unset slot raises ``AttributeError`` on read; a builder that does not know
    of a field its class gained leaves exactly that slot unset (a constructor would
    fill it with its default).
    """
    cls = type(event)
    names = [f.name for f in dataclasses.fields(cls)]
    assert names, f"{cls.__name__} has no fields to check"
    # Every slot is a field: nothing a constructor sets can hide outside the fields.
    assert set(cls.__slots__) == set(names), cls.__name__
    return [name for name in names if not hasattr(event, name)]


_BUILT: list[tuple[Callable[[], ev.Event], type]] = [
    (lambda: ev.text_delta("x"), ev.TextDelta),
    (lambda: ev.tool_use("call_1", "bash", {"command": "ls"}), ev.ToolUse),
    (lambda: ev.tool_result("call_1", "ok", False), ev.ToolResult),
]


@pytest.mark.parametrize(("build", "cls"), _BUILT, ids=["text_delta", "tool_use", "tool_result"])
def test_a_builder_fills_every_field_of_its_class(build: Callable[[], ev.Event], cls: type) -> None:
    event = build()
    assert type(event) is cls
    assert _empty_slots(event) == []


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Grown:
    """A class that gained ``more`` after its builder was written."""

    id: str
    more: int = 0


def test_the_empty_slot_check_catches_a_field_the_builder_misses() -> None:
    stale = object.__new__(_Grown)
    _Grown.__dict__["id"].__set__(stale, "a")
    assert _empty_slots(stale) == ["more"]
    assert _empty_slots(_Grown(id="a")) == []
