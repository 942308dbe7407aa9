"""The tag-dispatching ``oneOf`` gives plain jsonschema's verdict and errors, always.

Rules: ACP-SCHEMA-001 and ACP-SCHEMA-002 (every ACP frame validated against its $def):
``harness.protocols.schema_dispatch`` only changes how fast a tagged ``oneOf`` is
decided. Checked on every ``$def`` of the vendored schemas that holds a ``oneOf``, with
every recorded ACP frame's params and results and with generated look-alikes.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.protocols.acp.schema import def_for
from harness.protocols.schema_dispatch import DispatchingValidator, discriminator
from harness.recording.corpus import corpus_files
from harness.recording.record import Direction, load_recording
from harness.schemas import load_schema

SOURCES = ("acp/v1/schema.json", "acp/v1/schema.unstable.json")


def _defs(source: str) -> dict[str, Any]:
    defs: dict[str, Any] = load_schema(source)["$defs"]
    return defs


@cache
def _pair(source: str, name: str) -> tuple[Any, Any]:
    full = load_schema(source)
    wrapper = {"$schema": full["$schema"], "$ref": f"#/$defs/{name}", "$defs": full["$defs"]}
    return jsonschema.Draft202012Validator(wrapper), DispatchingValidator(wrapper)


def _report(validator: Any, value: Any) -> list[tuple[str, str, list[Any], list[Any]]]:
    return sorted(
        (e.validator, e.message, list(e.absolute_path), list(e.absolute_schema_path))
        for e in validator.iter_errors(value)
    )


def assert_same(source: str, name: str, value: Any) -> None:
    plain, fast = _pair(source, name)
    assert _report(fast, value) == _report(plain, value), (name, value)


def _with_one_of(source: str) -> list[str]:
    """Every ``$def`` whose own body holds a ``oneOf`` (the unions ACP frames carry)."""
    return [n for n, body in _defs(source).items() if isinstance(body, dict) and "oneOf" in body]


def test_the_acp_unions_are_dispatched() -> None:
    """The fast path is taken for the unions ACP traffic is made of (else nothing is gained)."""
    defs = _defs("acp/v1/schema.json")
    tags = {name: discriminator(defs[name]["oneOf"]) for name in _with_one_of(SOURCES[0])}
    assert tags["SessionUpdate"] is not None and tags["SessionUpdate"][0] == "sessionUpdate"
    assert tags["ContentBlock"] is not None and tags["ContentBlock"][0] == "type"
    assert tags["ToolKind"] is not None and tags["ToolKind"][0] is None


def test_no_table_when_two_branches_share_a_tag_or_one_has_none() -> None:
    same = [{"properties": {"t": {"const": "a"}}}, {"properties": {"t": {"const": "a"}}}]
    untagged = [{"properties": {"t": {"const": "a"}}}, {"type": "object"}]
    mixed = [{"properties": {"t": {"const": "a"}}}, {"properties": {"u": {"const": "b"}}}]
    assert discriminator(same) is None
    assert discriminator(untagged) is None
    assert discriminator(mixed) is None


def test_a_value_valid_under_two_tagged_branches_is_still_an_error() -> None:
    """Distinct tags make a second valid branch impossible; an untagged union stays plain."""
    schema = {"oneOf": [{"type": "object"}, {"properties": {"t": {"const": "a"}}}]}
    errors = list(DispatchingValidator(schema).iter_errors({"t": "a"}))
    assert [e.validator for e in errors] == ["oneOf"]


def _recorded_values() -> list[tuple[str, str, Any]]:
    """``(method, kind, params or result)`` of every frame in the ACP recordings."""
    out: list[tuple[str, str, Any]] = []
    for path in corpus_files():
        if path.parent.name != "acp-json-rpc":
            continue
        recording = load_recording(path)
        methods: dict[Any, str] = {}
        for direction in (Direction.STDIN, Direction.STDOUT):
            for line in recording.stream(direction).splitlines():
                try:
                    frame = json.loads(line)
                except ValueError:
                    continue
                if isinstance(frame, dict) and isinstance(frame.get("method"), str):
                    methods[frame.get("id")] = frame["method"]
                    kind = "request" if "id" in frame else "notification"
                    out.append((frame["method"], kind, frame.get("params")))
                elif isinstance(frame, dict) and "result" in frame:
                    method = methods.get(frame.get("id"), "")
                    out.append((method, "response", frame["result"]))
    return out


RECORDED = _recorded_values()


def test_the_corpus_holds_session_updates() -> None:
    assert sum(1 for method, _, _ in RECORDED if method == "session/update") >= 20


def _unique(values: list[Any]) -> list[Any]:
    seen = {json.dumps(v, sort_keys=True): v for v in values}
    return list(seen.values())


@pytest.mark.parametrize("source", SOURCES)
def test_every_recorded_value_gets_the_plain_verdict(source: str) -> None:
    """Each params/result against its method's $def, and each part of it against every union."""
    for method, kind, value in RECORDED:
        found = def_for(method, kind)
        if found is not None and found.name is not None and found.source == source:
            assert_same(source, found.name, value)
    parts = _unique([v for _, _, p in RECORDED if isinstance(p, dict) for v in p.values()])
    for name in _with_one_of(source):
        for part in parts:
            assert_same(source, name, part)


_TAGS = sorted(
    {
        tag
        for source in SOURCES
        for name in _with_one_of(source)
        for tag in ((discriminator(_defs(source)[name]["oneOf"]) or ("", {}))[1])
    }
)
_KEYS = ["sessionUpdate", "type", "content", "text", "toolCallId", "title", "kind", "status"]
_KEYS += ["outcome", "optionId", "uri", "name", "data", "mimeType", "entries", "sessionId"]
_KEYS += ["update", "priority", "path", "oldText", "newText", "terminalId", "_meta", "id"]

_LEAVES = st.one_of(
    st.sampled_from(_TAGS),
    st.text(max_size=4),
    st.integers(-2, 2),
    st.booleans(),
    st.none(),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(_KEYS), inner, max_size=5),
    ),
    max_leaves=12,
)


@settings(max_examples=300)
@given(value=_VALUES, index=st.integers(0, 10_000))
def test_generated_values_get_the_plain_verdict(value: Any, index: int) -> None:
    names = [*_with_one_of(SOURCES[1]), "SessionNotification"]
    assert_same(SOURCES[1], names[index % len(names)], value)


@settings(max_examples=300)
@given(
    pick=st.integers(0, 10_000),
    key=st.sampled_from(_KEYS),
    replacement=_VALUES,
    drop=st.booleans(),
)
def test_mutated_session_updates_get_the_plain_verdict(
    pick: int, key: str, replacement: Any, drop: bool
) -> None:
    updates = [p for m, _, p in RECORDED if m == "session/update" and isinstance(p, dict)]
    params = json.loads(json.dumps(updates[pick % len(updates)]))
    target = params["update"] if isinstance(params.get("update"), dict) else params
    if drop:
        target.pop(key, None)
    else:
        target[key] = replacement
    for source in SOURCES:
        assert_same(source, "SessionNotification", params)
