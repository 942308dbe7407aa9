"""A Draft 2020-12 validator whose ``oneOf`` goes straight to the branch a tag names.

ACP unions (``SessionUpdate``, ``ContentBlock``, ...) are ``oneOf`` lists whose branches
each pin one property to a distinct string ``const``. Plain ``oneOf`` validates every
branch; here a valid tagged branch alone settles it, with the same verdict and the same
errors as before (wire §A.1.1, ACP-SCHEMA-001/002).

Design: docs/design/protocols.md#harness.protocols.schema_dispatch
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]

__all__ = ["DispatchingValidator", "discriminator"]

_PLAIN_ONE_OF = jsonschema.Draft202012Validator.VALIDATORS["oneOf"]

#: id(oneOf list) -> (the list, its tag table or None); the list is kept so an id is never reused.
_TABLES: dict[int, tuple[list[Any], tuple[str | None, dict[str, int]] | None]] = {}


def _tag(branch: Any) -> tuple[str | None, str] | None:
    """``(property, value)`` when ``branch`` pins one property to a string ``const``;
    ``(None, value)`` when it pins the instance itself (an enum written as ``oneOf``)."""
    if not isinstance(branch, dict):
        return None
    if isinstance(branch.get("const"), str):
        return None, branch["const"]
    properties = branch.get("properties")
    if not isinstance(properties, dict):
        return None
    pinned = [
        (name, sub["const"])
        for name, sub in properties.items()
        if isinstance(sub, dict) and isinstance(sub.get("const"), str)
    ]
    return pinned[0] if len(pinned) == 1 else None


def discriminator(one_of: list[Any]) -> tuple[str | None, dict[str, int]] | None:
    """The shared tag (a property, or ``None`` for the instance itself) and ``value ->
    branch index``, or ``None`` when there is none.

    Every branch must pin the same thing to a distinct string: an instance whose tag is
    another string then fails that branch's ``const``, so at most the tagged branch can
    be valid.
    """
    tags = [_tag(branch) for branch in one_of]
    names = {tag[0] for tag in tags if tag is not None}
    if not tags or None in tags or len(names) != 1:
        return None
    table = {tag[1]: index for index, tag in enumerate(tags) if tag is not None}
    if len(table) != len(tags):
        return None
    return names.pop(), table


def _table(one_of: list[Any]) -> tuple[str | None, dict[str, int]] | None:
    found = _TABLES.get(id(one_of))
    if found is None or found[0] is not one_of:
        found = (one_of, discriminator(one_of))
        _TABLES[id(one_of)] = found
    return found[1]


def _one_of(
    validator: Any, one_of: list[Any], instance: Any, schema: Any
) -> Iterator[jsonschema.ValidationError]:
    """``oneOf``: a valid tagged branch means no error; anything else runs the plain keyword."""
    table = _table(one_of) if isinstance(instance, (dict, str)) else None
    if table is not None:
        name = table[0]
        if name is None:
            value = instance
        else:
            value = instance.get(name) if isinstance(instance, dict) else None
        index = table[1].get(value) if isinstance(value, str) else None
        if index is not None:
            branch = one_of[index]
            if next(iter(validator.descend(instance, branch, schema_path=index)), None) is None:
                return
    yield from _PLAIN_ONE_OF(validator, one_of, instance, schema)


DispatchingValidator: type[jsonschema.Draft202012Validator] = jsonschema.validators.extend(  # type: ignore[no-untyped-call,unused-ignore]
    jsonschema.Draft202012Validator, {"oneOf": _one_of}
)
