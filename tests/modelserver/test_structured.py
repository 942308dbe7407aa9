"""Schema-valid JSON for structured-output requests (MODEL-STRUCT-001).

Every generated value is checked with :mod:`jsonschema` (Draft 2020-12): a table of
hand-written schemas covering each keyword the generator handles, the schemas the
real CLIs send (claude's title, gemini's router), and a hypothesis property over
generated satisfiable schemas.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.modelserver import UnsatisfiableSchemaError
from harness.modelserver.structured import (
    DEFAULT_STRING,
    example_for,
    normalize_schema,
    regex_example,
    structured_json,
    structured_value,
)

SCHEMAS: list[tuple[str, Any]] = [
    (
        "claude-title",
        {
            "type": "object",
            "properties": {"title": {"type": "string"}},
            "required": ["title"],
            "additionalProperties": False,
        },
    ),
    (
        "gemini-router",
        {
            "type": "object",
            "properties": {
                "complexity_reasoning": {"type": "string"},
                "complexity_score": {"type": "integer", "minimum": 1, "maximum": 100},
            },
            "required": ["complexity_reasoning", "complexity_score"],
        },
    ),
    (
        "enum-and-const",
        {
            "type": "object",
            "properties": {"role": {"enum": ["user", "assistant"]}, "v": {"const": 3}},
            "required": ["role", "v"],
        },
    ),
    ("typed-enum", {"type": "integer", "enum": ["a", 2, 3]}),
    (
        "bounds",
        {
            "type": "object",
            "properties": {
                "a": {"type": "integer", "exclusiveMinimum": 4, "maximum": 9},
                "b": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                "c": {"type": "integer", "minimum": 7, "multipleOf": 5},
                "d": {"type": "number", "minimum": 0.15, "multipleOf": 0.1},
                "e": {"type": "integer", "maximum": -3},
                "f": {"type": "number", "minimum": 2, "exclusiveMinimum": True},
            },
            "required": ["a", "b", "c", "d", "e"],
        },
    ),
    (
        "strings",
        {
            "type": "object",
            "properties": {
                "when": {"type": "string", "format": "date-time"},
                "mail": {"type": "string", "format": "email"},
                "id": {"type": "string", "format": "uuid"},
                "code": {"type": "string", "pattern": "^[A-Z]{3}-\\d{4}$"},
                "word": {"type": "string", "pattern": "^(foo|bar)_[a-z]+$"},
                "short": {"type": "string", "maxLength": 4},
                "long": {"type": "string", "minLength": 40},
            },
            "required": ["when", "mail", "id", "code", "word", "short", "long"],
        },
    ),
    (
        "arrays",
        {
            "type": "object",
            "properties": {
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 3,
                    "uniqueItems": True,
                },
                "nums": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 1},
                    "minItems": 2,
                    "uniqueItems": True,
                },
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "string"}, {"type": "integer"}],
                    "minItems": 2,
                    "items": False,
                },
                "has": {"type": "array", "contains": {"const": "needle"}, "minContains": 2},
            },
            "required": ["tags", "nums", "pair", "has"],
        },
    ),
    (
        "refs",
        {
            "$defs": {
                "Item": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "child": {"$ref": "#/$defs/Item"}},
                    "required": ["name"],
                }
            },
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "minItems": 1}
            },
            "required": ["items"],
        },
    ),
    (
        "definitions-ref",
        {"definitions": {"N": {"type": "integer", "minimum": 4}}, "$ref": "#/definitions/N"},
    ),
    (
        "allOf",
        {
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "integer", "minimum": 2}}, "required": ["b"]},
            ]
        },
    ),
    (
        "anyOf-nullable",
        {
            "type": "object",
            "properties": {
                "x": {"anyOf": [{"type": "null"}, {"type": "string", "minLength": 2}]},
                "y": {"type": ["null", "integer"]},
            },
            "required": ["x", "y"],
        },
    ),
    ("oneOf-exclusive", {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]}),
    ("not", {"type": "string", "not": {"const": DEFAULT_STRING}}),
    (
        "min-properties",
        {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2},
    ),
    (
        "pattern-properties",
        {
            "type": "object",
            "patternProperties": {"^x_[0-9]+$": {"type": "boolean"}},
            "additionalProperties": False,
            "minProperties": 1,
        },
    ),
    (
        "dependent-required",
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a"],
            "dependentRequired": {"a": ["b"]},
        },
    ),
    (
        "max-properties",
        {
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "string"},
                "c": {"type": "string"},
            },
            "required": ["c"],
            "maxProperties": 1,
        },
    ),
    ("untyped", {"properties": {"q": {"minimum": 3}}, "required": ["q"]}),
    ("empty", {}),
    ("true", True),
]


@pytest.mark.rule("MODEL-STRUCT-001")
@pytest.mark.parametrize("schema", [s for _, s in SCHEMAS], ids=[n for n, _ in SCHEMAS])
def test_generated_values_validate(schema: Any) -> None:
    value, valid = structured_value(schema)
    jsonschema.Draft202012Validator(schema).validate(value)
    assert valid is True
    text, ok = structured_json(schema)
    assert ok is True and isinstance(text, str)


@pytest.mark.rule("MODEL-STRUCT-001", "MODEL-GEM-002")
def test_the_documented_choices() -> None:
    # real-clis.md: enum -> the first value, numbers -> minimum or 1, title -> a sentence
    assert example_for({"enum": ["user", "assistant"]}) == "user"
    assert example_for({"type": "integer"}) == 1
    assert example_for({"type": "number", "minimum": 2.5}) == 2.5
    assert example_for({"type": "string"}) == DEFAULT_STRING
    router = example_for(SCHEMAS[1][1])
    assert isinstance(router["complexity_score"], int) and router["complexity_score"] >= 1
    # items differ where they can (uniqueItems); booleans alternate
    assert example_for({"type": "array", "items": {"type": "boolean"}, "minItems": 2}) == [
        True,
        False,
    ]


@pytest.mark.rule("MODEL-STRUCT-001")
def test_openapi_schemas_are_normalized() -> None:
    openapi = {
        "type": "OBJECT",
        "properties": {
            "s": {"type": "STRING", "nullable": True},
            "n": {"type": "ARRAY", "items": {"type": "INTEGER"}},
        },
        "required": ["s", "n"],
    }
    assert normalize_schema(openapi) == {
        "type": "object",
        "properties": {
            "s": {"type": ["string", "null"]},
            "n": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["s", "n"],
    }
    value = example_for(openapi)
    jsonschema.validate(value, normalize_schema(openapi))


@pytest.mark.rule("MODEL-STRUCT-001")
@pytest.mark.parametrize(
    "schema",
    [
        False,
        {"type": "integer", "minimum": 5, "maximum": 3},
        {"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]},
        {"$ref": "#/$defs/missing"},
        {"allOf": [{"type": "string"}, False]},
    ],
    ids=["false", "empty-range", "required-recursion", "dangling-ref", "allof-false"],
)
def test_unsatisfiable_schemas_raise_a_typed_error(schema: Any) -> None:
    with pytest.raises(UnsatisfiableSchemaError) as info:
        example_for(schema)
    assert info.value.rule == "MODEL-STRUCT-001"


@pytest.mark.rule("MODEL-STRUCT-001")
@pytest.mark.parametrize(
    "pattern",
    [
        r"^[a-z]+$",
        r"^\d{3}-\d{2}$",
        r"^(?:ab|cd)+x?$",
        r"^[^0-9\s]{2,}$",
        r"\bword\b",
        r"^(a)(b)\2\1$",
        r"^.{5}$",
        r"^[\w.-]+@[\w-]+\.com$",
        r"^(?=x)x\W$",
        r"[A-F0-9]{8}",
    ],
)
def test_regex_examples_match(pattern: str) -> None:
    found = regex_example(pattern)
    assert found is not None and re.search(pattern, found)


# -- property: every satisfiable schema from the generator below gets a valid value -----------
_patterns = st.sampled_from(
    [r"^[a-z]{2,8}$", r"^\d+$", r"^(red|green)-[0-9]{2}$", r"^[A-Z][a-z]*$"]
)


def _string() -> st.SearchStrategy[dict[str, Any]]:
    plain = st.builds(
        lambda lo, span, fmt: {
            "type": "string",
            **({"minLength": lo, "maxLength": lo + span} if lo is not None else {}),
            **({"format": fmt} if fmt and lo is None else {}),
        },
        st.one_of(st.none(), st.integers(0, 30)),
        st.integers(0, 30),
        st.sampled_from([None, "date", "email", "uuid", "ipv4"]),
    )
    patterned = _patterns.map(lambda p: {"type": "string", "pattern": p})
    return st.one_of(plain, patterned)


def _integer() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda lo, span, step, excl: {
            "type": "integer",
            **({"minimum": lo} if lo is not None and not excl else {}),
            **({"exclusiveMinimum": lo - 1} if lo is not None and excl else {}),
            **({"maximum": (lo or 0) + span + (step or 1)} if span is not None else {}),
            **({"multipleOf": step} if step else {}),
        },
        st.one_of(st.none(), st.integers(-50, 50)),
        st.one_of(st.none(), st.integers(0, 40)),
        st.one_of(st.none(), st.integers(1, 7)),
        st.booleans(),
    )


def _number() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda lo, span, excl: {
            "type": "number",
            ("exclusiveMinimum" if excl else "minimum"): lo,
            **({"exclusiveMaximum": lo + span} if span else {}),
        },
        st.floats(-1e6, 1e6, allow_nan=False),
        st.one_of(st.none(), st.floats(0.5, 100)),
        st.booleans(),
    )


_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-9, 9), st.text(max_size=4))
_leaf = st.one_of(
    _string(),
    _integer(),
    _number(),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.lists(_json_scalars, min_size=1, max_size=4).map(lambda v: {"enum": v}),
    _json_scalars.map(lambda v: {"const": v}),
)
_names = st.text(alphabet="abcdefgh_", min_size=1, max_size=6)


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    obj = st.builds(
        lambda props, req_all, closed: {
            "type": "object",
            "properties": props,
            "required": sorted(props) if req_all else sorted(props)[: len(props) // 2],
            **({"additionalProperties": False} if closed else {}),
        },
        st.dictionaries(_names, children, max_size=4),
        st.booleans(),
        st.booleans(),
    )
    arr = st.builds(
        lambda items, lo, span: {
            "type": "array",
            "items": items,
            "minItems": lo,
            "maxItems": lo + span,
        },
        children,
        st.integers(0, 3),
        st.integers(0, 3),
    )
    unique = st.builds(
        lambda lo: {
            "type": "array",
            "items": {"type": "string"},
            "minItems": lo,
            "uniqueItems": True,
        },
        st.integers(0, 4),
    )
    nullable = children.map(lambda c: {"anyOf": [c, {"type": "null"}]})
    either = st.lists(children, min_size=1, max_size=3).map(lambda cs: {"anyOf": cs})
    return st.one_of(obj, arr, unique, nullable, either)


_schemas = st.recursive(_leaf, _extend, max_leaves=12)


@pytest.mark.rule("MODEL-STRUCT-001")
@given(schema=_schemas)
@settings(max_examples=150)
def test_any_generated_schema_gets_a_valid_value(schema: Any) -> None:
    value, valid = structured_value(schema)
    jsonschema.Draft202012Validator(schema).validate(value)
    assert valid
