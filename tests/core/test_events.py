"""The normalized event vocabulary and its JSON Schema (EVENT-SCHEMA-001)."""

from __future__ import annotations

import dataclasses
import json
import typing

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import events as ev
from harness.schemas import load_schema

VALIDATOR = jsonschema.Draft202012Validator(load_schema("events.schema.json"))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


def strategy_for(cls: type) -> st.SearchStrategy[object]:
    hints = typing.get_type_hints(cls)
    fields = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        args = set(typing.get_args(hint)) or {hint}
        options: list[st.SearchStrategy[object]] = []
        if type(None) in args:
            options.append(st.none())
        if str in args:
            options.append(st.text(max_size=10))
        if bool in args:
            options.append(st.booleans())
        if int in args:
            options.append(st.integers(min_value=0))
        if float in args:
            options.append(st.floats(allow_nan=False, allow_infinity=False))
        if dict in {typing.get_origin(a) for a in args}:
            options.append(st.dictionaries(st.text(max_size=5), json_values, max_size=3))
        if hint is typing.Any or not options:
            options.append(json_values)
        fields[f.name] = st.one_of(options)
    return st.builds(cls, **fields)


ALL = st.one_of([strategy_for(cls) for cls in ev.EVENT_TYPES.values()])


@pytest.mark.rule("EVENT-SCHEMA-001")
@given(event=ALL)
def test_every_event_validates_against_the_schema_and_round_trips(event: ev.Event) -> None:
    data = event.to_json()
    VALIDATOR.validate(data)
    assert next(iter(data)) == "type"
    assert ev.event_from_json(data) == event


@pytest.mark.rule("EVENT-SCHEMA-001")
def test_schema_covers_exactly_the_event_types() -> None:
    assert set(load_schema("events.schema.json")["$defs"]) == set(ev.EVENT_TYPES)


@pytest.mark.rule("EVENT-SCHEMA-001")
def test_schema_rejects_unknown_fields_and_types() -> None:
    assert not VALIDATOR.is_valid({"type": "text_delta", "delta": "x", "extra": 1})
    assert not VALIDATOR.is_valid({"type": "nope"})
    assert not VALIDATOR.is_valid({"type": "tool_result", "content": "x"})


def test_event_from_json_names_the_problem() -> None:
    with pytest.raises(ValueError, match="unknown event type"):
        ev.event_from_json({"type": "bogus"})
    with pytest.raises(ValueError, match="bad fields"):
        ev.event_from_json({"type": "text_delta", "nope": 1})


#: Leaves no JSON writer takes as they are: lone surrogates, NaN and the infinities.
_hostile_chars = st.sampled_from(["a", "é", "\ud800", "\udc00", '"', "\n"])
_hostile_text = st.lists(_hostile_chars, max_size=5).map("".join)
_hostile_values = st.recursive(
    st.none() | st.integers() | st.floats() | _hostile_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_hostile_text, inner, max_size=3),
    max_leaves=8,
)


@pytest.mark.rule("EVENT-SCHEMA-001")
@given(text=_hostile_text, number=st.floats(), value=_hostile_values)
def test_an_event_line_is_the_encoding_of_its_safe_json(
    text: str, number: float, value: object
) -> None:
    """``event_json_line``'s fast path writes what encoding ``to_json`` writes."""
    events: list[ev.Event] = [
        ev.TextDelta(delta=text),
        ev.Status(label=text, ttft_ms=number),
        ev.Usage(usage={text: number}, cost_usd=number, model_usage=value),
        ev.ToolUse(id=text, name=None, input=value),
    ]
    for event in events:
        line = ev.event_json_line(event)
        assert line == json.dumps(event.to_json(), ensure_ascii=False, allow_nan=False)
        line.encode("utf-8")
