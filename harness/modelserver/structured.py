"""Schema-valid JSON for structured-output requests (rule MODEL-STRUCT-001).

Design: docs/design/modelserver.md#harness.modelserver.structured
"""

from __future__ import annotations

import importlib
import json
import math
import re
import sys
from collections.abc import Mapping
from typing import Any

import jsonschema

from harness.modelserver.errors import UnsatisfiableSchemaError

__all__ = [
    "DEFAULT_STRING",
    "example_for",
    "normalize_schema",
    "regex_example",
    "structured_json",
    "structured_value",
]

#: The string a free-text field gets (real-clis.md: ``title`` = "Hello from the mock").
DEFAULT_STRING = "Hello from the mock"
#: Deeper than this the schema is treated as unsatisfiable (a required recursive ref).
_MAX_DEPTH = 48
#: Optional properties are filled down to this depth (deeper only the required ones).
_OPTIONAL_DEPTH = 6
#: How many variants a failing node tries before the best effort is kept.
_RETRIES = 4

_FORMATS: dict[str, str] = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "time": "00:00:00Z",
    "duration": "P1D",
    "email": "mock@example.com",
    "idn-email": "mock@example.com",
    "hostname": "localhost",
    "idn-hostname": "localhost",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uri": "http://127.0.0.1/",
    "uri-reference": "/mock",
    "iri": "http://127.0.0.1/",
    "iri-reference": "/mock",
    "uri-template": "http://127.0.0.1/{id}",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "json-pointer": "/mock",
    "relative-json-pointer": "0",
    "regex": "^mock$",
}

_OPENAPI_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}

_sre: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")
_sre_c: Any = importlib.import_module(
    "re._constants" if sys.version_info >= (3, 11) else "sre_constants"
)


def normalize_schema(schema: Any) -> Any:
    """A copy of ``schema`` with OpenAPI spellings turned into JSON Schema.

    Gemini's ``responseSchema`` uses upper-case type names and ``nullable``; JSON
    Schema validators reject both. Anything else is copied unchanged.
    """
    if isinstance(schema, list):
        return [normalize_schema(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"):
            out[key] = (
                {k: normalize_schema(v) for k, v in value.items()}
                if isinstance(value, Mapping)
                else value
            )
        elif key in ("const", "enum", "default", "examples", "required", "dependentRequired"):
            out[key] = value
        elif key == "type":
            out[key] = _normalize_type(value)
        else:
            out[key] = normalize_schema(value)
    if out.pop("nullable", False) is True and "type" in out:
        types = out["type"] if isinstance(out["type"], list) else [out["type"]]
        if "null" not in types:
            out["type"] = [*types, "null"]
    return out


def _normalize_type(value: Any) -> Any:
    if isinstance(value, str) and value in _OPENAPI_TYPES:
        return value.lower()
    if isinstance(value, list):
        return [_normalize_type(v) for v in value]
    return value


def structured_value(schema: Any) -> tuple[Any, bool]:
    """``(value, valid)``: a value built from ``schema`` and whether it validates."""
    root = normalize_schema(schema if schema is not None else {})
    gen = _Generator(root)
    value = gen.value(root, depth=0, variant=0, refs=())
    return value, gen.valid(root, value)


def example_for(schema: Any) -> Any:
    """A value for ``schema``; raises :class:`UnsatisfiableSchemaError` when none validates."""
    value, valid = structured_value(schema)
    if not valid:
        raise UnsatisfiableSchemaError(
            f"no value found for schema {json.dumps(schema, sort_keys=True)[:300]!r}; "
            f"best effort {json.dumps(value)[:200]!r} does not validate"
        )
    return value


def structured_json(schema: Any) -> tuple[str, bool]:
    """``(json_text, valid)`` for a structured-output reply."""
    value, valid = structured_value(schema)
    return json.dumps(value, ensure_ascii=False), valid


class _Generator:
    def __init__(self, root: Any) -> None:
        self.root = root
        try:
            self._validator: Any = jsonschema.Draft202012Validator(
                root if isinstance(root, (Mapping, bool)) else {}
            )
        except Exception:  # a schema jsonschema itself cannot load: generate unchecked
            self._validator = None
        #: Validation calls left; past it no node retries (bounds the work per request).
        self._budget = 4000

    # -- validation ------------------------------------------------------------------
    def valid(self, schema: Any, value: Any) -> bool:
        if self._validator is None:
            return True
        self._budget -= 1
        try:
            return bool(self._validator.evolve(schema=schema).is_valid(value))
        except Exception:  # unknown type names, bad regexes: cannot judge, accept
            return True

    def _fails_here(self, schema: Any, value: Any) -> bool:
        """Whether ``value`` breaks ``schema`` at its own level (not only inside a child)."""
        if self._validator is None:
            return False
        self._budget -= 1
        try:
            errors = list(self._validator.evolve(schema=schema).iter_errors(value))
        except Exception:
            return False
        return any(not e.path for e in errors)

    # -- dispatch --------------------------------------------------------------------
    def value(self, schema: Any, *, depth: int, variant: int, refs: tuple[str, ...]) -> Any:
        if depth > _MAX_DEPTH:
            raise UnsatisfiableSchemaError(f"schema nests deeper than {_MAX_DEPTH} levels")
        if schema is True or schema is None:
            return DEFAULT_STRING if variant == 0 else f"{DEFAULT_STRING} {variant}"
        if schema is False:
            raise UnsatisfiableSchemaError("the schema `false` accepts no value")
        if not isinstance(schema, Mapping):
            return DEFAULT_STRING
        first = self._one(schema, depth=depth, variant=variant, refs=refs)
        if self._budget <= 0 or self._fails_here(schema, first) is False:
            return first
        # The node itself is wrong (not only a child, which retried on its own): other
        # variants, e.g. distinct items for uniqueItems, another option for oneOf.
        for attempt in range(1, _RETRIES + 1):
            candidate = self._one(schema, depth=depth, variant=variant + attempt, refs=refs)
            if self.valid(schema, candidate):
                return candidate
        return first

    def _one(
        self, schema: Mapping[str, Any], *, depth: int, variant: int, refs: tuple[str, ...]
    ) -> Any:
        schema, refs = self._resolve(schema, refs)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
            return self._enum(schema, variant)
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                return self._choice(schema, key, options, depth=depth, variant=variant, refs=refs)
        kind = _pick_type(schema)
        if kind == "object":
            return self._object(schema, depth=depth, variant=variant, refs=refs)
        if kind == "array":
            return self._array(schema, depth=depth, variant=variant, refs=refs)
        if kind == "integer":
            return _integer(schema, variant)
        if kind == "number":
            return _number(schema, variant)
        if kind == "boolean":
            return variant % 2 == 0
        if kind == "null":
            return None
        return _string(schema, variant)

    # -- $ref and allOf ----------------------------------------------------------------
    def _resolve(
        self, schema: Mapping[str, Any], refs: tuple[str, ...]
    ) -> tuple[Mapping[str, Any], tuple[str, ...]]:
        seen = 0
        while True:
            ref = schema.get("$ref")
            parts = schema.get("allOf")
            if isinstance(ref, str):
                seen += 1
                if seen > _MAX_DEPTH:
                    raise UnsatisfiableSchemaError(f"$ref chain {ref!r} does not end")
                target = self._pointer(ref)
                rest = {k: v for k, v in schema.items() if k != "$ref"}
                schema = _merge(target, rest) if rest else target
                refs = (*refs, ref)
                continue
            if isinstance(parts, list) and parts:
                merged: Mapping[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
                for part in parts:
                    if part is False:
                        raise UnsatisfiableSchemaError("allOf contains `false`")
                    if isinstance(part, Mapping):
                        merged = _merge(merged, part)
                schema = merged
                continue
            return schema, refs

    def _pointer(self, ref: str) -> Mapping[str, Any]:
        if not ref.startswith("#"):
            return {}  # a remote ref: nothing local to follow; any value
        node: Any = self.root
        for raw in ref[1:].split("/")[1:] if ref != "#" else []:
            key = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise UnsatisfiableSchemaError(f"$ref {ref!r} points nowhere in the schema")
        if node is True:
            return {}
        if node is False:
            raise UnsatisfiableSchemaError(f"$ref {ref!r} points at `false`")
        if not isinstance(node, Mapping):
            raise UnsatisfiableSchemaError(f"$ref {ref!r} points at a non-schema")
        return node

    # -- enum / choice -----------------------------------------------------------------
    def _enum(self, schema: Mapping[str, Any], variant: int) -> Any:
        values = list(schema["enum"])
        fitting = (
            [v for v in values if self.valid({"type": schema["type"]}, v)]
            if ("type" in schema)
            else values
        )
        pool = fitting or values
        # real-clis.md: "enum -> the first value" (later variants only when a node fails).
        return pool[variant % len(pool)]

    def _choice(
        self,
        schema: Mapping[str, Any],
        key: str,
        options: list[Any],
        *,
        depth: int,
        variant: int,
        refs: tuple[str, ...],
    ) -> Any:
        base = {k: v for k, v in schema.items() if k != key}
        ordered = sorted(
            range(len(options)),
            key=lambda i: (_only_null(options[i]), i),
        )
        first: Any = None
        found = False
        rotation = variant % len(ordered)
        for i in ordered[rotation:] + ordered[:rotation]:
            option = options[i]
            if option is False:
                continue
            merged = _merge(base, option) if isinstance(option, Mapping) else base
            try:
                candidate = self.value(merged, depth=depth + 1, variant=variant, refs=refs)
            except UnsatisfiableSchemaError:
                continue
            if not found:
                first, found = candidate, True
            if self.valid(schema, candidate):
                return candidate
        if not found:
            raise UnsatisfiableSchemaError(f"no {key} option can be satisfied")
        return first

    # -- containers --------------------------------------------------------------------
    def _object(
        self, schema: Mapping[str, Any], *, depth: int, variant: int, refs: tuple[str, ...]
    ) -> dict[str, Any]:
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        required = [r for r in schema.get("required", []) if isinstance(r, str)]
        deps = schema.get("dependentRequired")
        additional = schema.get("additionalProperties", True)
        max_props = schema.get("maxProperties")
        out: dict[str, Any] = {}
        wanted: list[str] = list(required)
        for name, sub in props.items():
            if name in wanted:
                continue
            if depth >= _OPTIONAL_DEPTH or _is_recursive(sub, refs):
                continue
            wanted.append(name)
        if isinstance(max_props, int):
            keep = [n for n in wanted if n in required]
            keep += [n for n in wanted if n not in required][: max(0, max_props - len(keep))]
            wanted = keep
        index = 0
        while index < len(wanted):
            name = wanted[index]
            index += 1
            sub = props.get(name, self._pattern_schema(schema, name, additional))
            out[name] = self.value(sub, depth=depth + 1, variant=variant, refs=refs)
            if isinstance(deps, Mapping):
                for extra in deps.get(name, []):
                    if extra not in wanted:
                        wanted.append(extra)
        min_props = schema.get("minProperties")
        n = 0
        while isinstance(min_props, int) and len(out) < min_props and n < min_props + 8:
            n += 1
            key = self._extra_key(schema, n)
            if key in out:
                continue
            sub = self._pattern_schema(schema, key, additional)
            out[key] = self.value(sub, depth=depth + 1, variant=variant + n, refs=refs)
        return out

    def _pattern_schema(self, schema: Mapping[str, Any], key: str, additional: Any) -> Any:
        patterns = schema.get("patternProperties")
        if isinstance(patterns, Mapping):
            for pattern, sub in patterns.items():
                try:
                    if re.search(pattern, key):
                        return sub
                except re.error:
                    continue
        return additional if isinstance(additional, (Mapping, bool)) else True

    def _extra_key(self, schema: Mapping[str, Any], n: int) -> str:
        names = schema.get("propertyNames")
        patterns = schema.get("patternProperties")
        if schema.get("additionalProperties") is False and isinstance(patterns, Mapping):
            for pattern in patterns:
                found = regex_example(str(pattern), extra=n)
                if found is not None:
                    return found
        if isinstance(names, Mapping) and "pattern" in names:
            found = regex_example(str(names["pattern"]), extra=n)
            if found is not None:
                return found
        return f"extra_{n}"

    def _array(
        self, schema: Mapping[str, Any], *, depth: int, variant: int, refs: tuple[str, ...]
    ) -> list[Any]:
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        items = schema.get("items", True)
        contains = schema.get("contains")
        min_items = schema.get("minItems", 0)
        min_items = min_items if isinstance(min_items, int) else 0
        max_items = schema.get("maxItems")
        out: list[Any] = []
        for i, head in enumerate(prefix):
            if isinstance(max_items, int) and len(out) >= max_items:
                break
            if len(out) >= max(min_items, 1) and contains is None:
                break
            out.append(self.value(head, depth=depth + 1, variant=variant + i, refs=refs))
        need_contains = 0
        if contains is not None and contains is not False:
            min_contains = schema.get("minContains", 1)
            need_contains = min_contains if isinstance(min_contains, int) else 1
            need_contains -= sum(1 for v in out if self.valid(contains, v))
        i = len(out)
        while need_contains > 0 or len(out) < min_items:
            if i > max(min_items, 1) + 64:
                break
            sub: Any = items if items is not False else True
            if need_contains > 0 and isinstance(contains, Mapping):
                sub = _merge(sub, contains) if isinstance(sub, Mapping) else contains
                need_contains -= 1
            out.append(self.value(sub, depth=depth + 1, variant=variant + i, refs=refs))
            i += 1
        return out


def _only_null(option: Any) -> bool:
    return isinstance(option, Mapping) and option.get("type") == "null"


def _is_recursive(sub: Any, refs: tuple[str, ...]) -> bool:
    if not isinstance(sub, Mapping):
        return False
    text = json.dumps(sub, sort_keys=True, default=str)
    return any(f'"$ref": "{ref}"' in text for ref in refs)


def _pick_type(schema: Mapping[str, Any]) -> str:
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list) and declared:
        real = [t for t in declared if t != "null"]
        return str(real[0]) if real else "null"
    if any(
        k in schema
        for k in (
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "minProperties",
        )
    ):
        return "object"
    if any(k in schema for k in ("items", "prefixItems", "minItems", "contains")):
        return "array"
    if any(
        k in schema
        for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
    ):
        return "number"
    return "string"


def _merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Both schemas at once (the allOf of two), as far as generation needs it."""
    out = dict(a)
    for key, value in b.items():
        if key not in out:
            out[key] = value
        elif key in ("allOf", "anyOf", "oneOf") and isinstance(out[key], list):
            out["allOf"] = [*out.get("allOf", []), {key: out[key]}, {key: value}]
            if key != "allOf":
                del out[key]
        else:
            out[key] = _merged_value(key, out[key], value)
    return out


_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")


def _merged_value(key: str, mine: Any, value: Any) -> Any:
    """One keyword both schemas set: the value that satisfies both (``value`` if unknown)."""
    both_maps = isinstance(mine, Mapping) and isinstance(value, Mapping)
    both_lists = isinstance(mine, list) and isinstance(value, list)
    if key == "properties" and both_maps:
        return _merge_properties(mine, value)
    if key == "required" and both_lists:
        return [*mine, *(v for v in value if v not in mine)]
    if key in _LOWER_BOUNDS:
        return max(mine, value)
    if key in _UPPER_BOUNDS:
        return min(mine, value)
    if key == "type":
        return _intersect_types(mine, value)
    if key == "enum" and both_lists:
        return [v for v in mine if v in value] or mine
    if key in ("items", "additionalProperties", "contains") and both_maps:
        return {"allOf": [mine, value]}
    return value


def _merge_properties(mine: Mapping[str, Any], value: Mapping[str, Any]) -> dict[str, Any]:
    """Each property of either side; one both sides define differently must meet both."""
    props = dict(mine)
    for name, sub in value.items():
        props[name] = {"allOf": [props[name], sub]} if name in props and props[name] != sub else sub
    return props


def _intersect_types(a: Any, b: Any) -> Any:
    left = a if isinstance(a, list) else [a]
    right = b if isinstance(b, list) else [b]
    both = [t for t in left if t in right or (t == "integer" and "number" in right)]
    both += [t for t in right if t == "integer" and "number" in left and t not in both]
    return both if len(both) != 1 else both[0]


# -- scalars ----------------------------------------------------------------------------
def _integer(schema: Mapping[str, Any], variant: int) -> int:
    lo, hi = _bounds(schema)
    lo_i = None if lo is None else (math.floor(lo[0]) + 1 if lo[1] else math.ceil(lo[0]))
    hi_i = None if hi is None else (math.ceil(hi[0]) - 1 if hi[1] else math.floor(hi[0]))
    start = lo_i if lo_i is not None else (1 if hi_i is None or hi_i >= 1 else hi_i)
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0:
        if float(step).is_integer():
            m = int(step)
            start = -(-start // m) * m
        else:
            start = _smallest_int_multiple(start, float(step), hi_i)
        value = start + variant * (int(step) if float(step).is_integer() else 0)
    else:
        value = start + variant
    if hi_i is not None and value > hi_i:
        value = start
    return value


def _smallest_int_multiple(start: int, step: float, hi: int | None) -> int:
    limit = start + 10_000 if hi is None else min(hi, start + 10_000)
    for candidate in range(start, limit + 1):
        if abs(candidate / step - round(candidate / step)) < 1e-9:
            return candidate
    return start


def _number(schema: Mapping[str, Any], variant: int) -> int | float:
    lo, hi = _bounds(schema)
    if lo is None:
        value: float = 1.0 if hi is None or hi[0] > 1 or (hi[0] == 1 and not hi[1]) else hi[0] - 1
    elif lo[1]:
        value = (lo[0] + hi[0]) / 2 if hi is not None else lo[0] + 1
    else:
        value = lo[0]
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0:
        value = math.ceil(value / step - 1e-9) * step
        if lo is not None and lo[1] and value <= lo[0]:
            value += step
        value = round(value, 12)
        if variant and (hi is None or value + variant * step <= hi[0]):
            value = round(value + variant * step, 12)
    elif variant:
        # half steps: variants are distinct, and odd ones are not integers (oneOf number|integer)
        bumped = value + variant / 2
        if hi is None or bumped < hi[0] or (bumped == hi[0] and not hi[1]):
            value = bumped
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else value


def _bounds(
    schema: Mapping[str, Any],
) -> tuple[tuple[float, bool] | None, tuple[float, bool] | None]:
    """``((low, exclusive), (high, exclusive))``; draft-4 boolean exclusives too."""

    def num(key: str) -> float | None:
        v = schema.get(key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    lo: tuple[float, bool] | None = None
    hi: tuple[float, bool] | None = None
    if (m := num("minimum")) is not None:
        lo = (m, schema.get("exclusiveMinimum") is True)
    if (m := num("exclusiveMinimum")) is not None and (lo is None or m >= lo[0]):
        lo = (m, True)
    if (m := num("maximum")) is not None:
        hi = (m, schema.get("exclusiveMaximum") is True)
    if (m := num("exclusiveMaximum")) is not None and (hi is None or m <= hi[0]):
        hi = (m, True)
    return lo, hi


def _string(schema: Mapping[str, Any], variant: int) -> str:
    min_len = schema.get("minLength", 0)
    min_len = min_len if isinstance(min_len, int) else 0
    max_len = schema.get("maxLength")
    max_len = max_len if isinstance(max_len, int) else None
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        for extra in (0, 1, 2, 4, 8, 16, 32, 64):
            found = regex_example(pattern, extra=extra + variant)
            if found is None:
                break
            if len(found) >= min_len and (max_len is None or len(found) <= max_len):
                return found
    fmt = schema.get("format")
    base = _FORMATS.get(fmt, DEFAULT_STRING) if isinstance(fmt, str) else DEFAULT_STRING
    if variant and base == DEFAULT_STRING:
        base = f"{base} {variant}"
    if len(base) < min_len:
        base = base + "x" * (min_len - len(base))
    if max_len is not None and len(base) > max_len:
        base = base[:max_len] if variant == 0 else (str(variant) + base)[:max_len]
    return base


# -- regex walker -----------------------------------------------------------------------
def regex_example(pattern: str, *, extra: int = 0) -> str | None:
    """A string that ``re.search(pattern, s)`` accepts, or None when none was found.

    Walks the parsed pattern: literals, classes, ``.``, groups, alternations (the
    first branch), repeats (the minimum plus ``extra``, capped at the maximum),
    backreferences; anchors and look-arounds add nothing.
    """
    try:
        parsed = _sre.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    groups: dict[int, str] = {}
    try:
        text = _walk(list(parsed), extra, groups)
    except (ValueError, RecursionError):
        return None
    try:
        return text if re.search(pattern, text) else None
    except re.error:
        return None


def _walk(items: list[Any], extra: int, groups: dict[int, str]) -> str:
    out: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":
            out.append("a" if arg != ord("a") else "b")
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_class_char(arg))
        elif name == "BRANCH":
            out.append(_walk(list(arg[1][0]), extra, groups))
        elif name == "SUBPATTERN":
            group, body = arg[0], arg[-1]
            text = _walk(list(body), extra, groups)
            if group is not None:
                groups[group] = text
            out.append(text)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = arg
            count = low + extra
            if high != _sre_c.MAXREPEAT:
                count = min(count, high)
            count = min(count, 10_000)
            out.append("".join(_walk(list(body), extra, groups) for _ in range(count)))
        elif name == "GROUPREF":
            out.append(groups.get(arg, ""))
        elif name == "ATOMIC_GROUP":
            out.append(_walk(list(arg), extra, groups))
        elif name in ("AT", "ASSERT", "ASSERT_NOT", "GROUPREF_EXISTS"):
            continue
        else:
            raise ValueError(f"regex op {name} is not supported")
    return "".join(out)


def _class_char(members: list[Any]) -> str:
    negate = any(str(op) == "NEGATE" for op, _ in members)
    if negate:
        excluded: set[str] = set()
        for op, arg in members:
            if str(op) == "LITERAL":
                excluded.add(chr(arg))
            elif str(op) == "RANGE":
                excluded.update(chr(c) for c in range(arg[0], min(arg[1], arg[0] + 512) + 1))
        for c in "aZ0_-x":
            if c not in excluded and not _in_cat(members, c):
                return c
        return next(
            chr(c)
            for c in range(33, 0x3000)
            if chr(c) not in excluded and not _in_cat(members, chr(c))
        )
    for op, arg in members:
        name = str(op)
        if name == "LITERAL":
            return chr(arg)
        if name == "RANGE":
            low, high = arg
            for c in "a0A":
                if low <= ord(c) <= high:
                    return c
            return chr(low)
        if name == "CATEGORY":
            return _category_example(str(arg))
    raise ValueError("empty character class")


def _category_example(category: str) -> str:
    table = {
        "CATEGORY_DIGIT": "0",
        "CATEGORY_NOT_DIGIT": "a",
        "CATEGORY_SPACE": " ",
        "CATEGORY_NOT_SPACE": "a",
        "CATEGORY_WORD": "a",
        "CATEGORY_NOT_WORD": "-",
    }
    return table.get(category, "a")


def _in_cat(members: list[Any], c: str) -> bool:
    for op, arg in members:
        if str(op) == "CATEGORY":
            cat = str(arg)
            checks = {
                "CATEGORY_DIGIT": c.isdigit(),
                "CATEGORY_NOT_DIGIT": not c.isdigit(),
                "CATEGORY_SPACE": c.isspace(),
                "CATEGORY_NOT_SPACE": not c.isspace(),
                "CATEGORY_WORD": c.isalnum() or c == "_",
                "CATEGORY_NOT_WORD": not (c.isalnum() or c == "_"),
            }
            if checks.get(cat, False):
                return True
    return False
