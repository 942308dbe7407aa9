"""Helpers shared by the json-event-stream dialects (ref §2.2 "Shared helpers").

Private to ``harness.streams``: the dispatcher (:mod:`harness.streams.json_events`),
the codex mapper (:mod:`harness.streams.codex_items`) and the per-dialect
handlers import from here, so none of them imports another.

Every function is total: any JSON value in, a value out, never an exception
(the dialect handlers are fed arbitrary decoded objects; hypothesis checks it).
JavaScript semantics that upstream relies on are spelled out where Python's
differ (``typeof x === 'number'`` excludes booleans; ``{}`` and ``[]`` are
truthy; ``JSON.parse`` rejects ``NaN``).
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from harness.events import Event
from harness.streams.base import js_trim
from harness.streams.decoder import loads_json

__all__ = [
    "MAX_ERROR_DEPTH",
    "DialectHandler",
    "Emit",
    "extract_error_message",
    "is_finite_number",
    "is_number",
    "is_record",
    "js_truthy",
    "nonempty_str",
    "nullish",
    "parse_json_objects",
    "pick_usage",
    "safe_parse_json",
    "stringify_content",
    "todo_write_input_from_items",
    "todo_write_input_from_parsed_value",
]

#: The callback a handler emits events through (the parser's ``emit``).
Emit = Callable[[Event], None]

#: Nesting limit for :func:`extract_error_message` (upstream recurses without one;
#: a bound keeps a hostile, deeply nested error object from exhausting the stack).
MAX_ERROR_DEPTH = 32


class DialectHandler(Protocol):
    """One json-event-stream dialect: map a decoded object to events (seed 002 §7.3).

    ``handle`` returns ``True`` when it claimed the object (events, if any, went
    through the ``emit`` callback given at construction); ``False`` lets the
    dispatcher emit the line as ``raw``. ``finish`` runs once at end of output.
    """

    def handle(self, obj: dict[str, Any]) -> bool: ...

    def finish(self) -> None: ...


# -- JavaScript value semantics -------------------------------------------------


def is_record(value: object) -> bool:
    """``isRecord``: a JSON object (not an array, not null)."""
    return isinstance(value, dict)


#: The Python types ``json.loads`` gives JSON numbers (``bool`` is a distinct type).
_NUMBER_TYPES = (int, float)


def is_number(value: object) -> bool:
    """``typeof value === 'number'`` (a JSON bool is not a number)."""
    return type(value) in _NUMBER_TYPES


#: ``JSON.parse`` reads an integer literal as the nearest double; from this
#: magnitude on that is ``Infinity`` (halfway between the largest double and 2**1024,
#: which rounds up). Python's ``math.isfinite`` raises on such an int instead.
_JS_INT_OVERFLOW = 2**1024 - 2**970


def is_finite_number(value: object) -> bool:
    """``typeof value === 'number' && Number.isFinite(value)``.

    Total for every JSON number: an integer too large for a double is ``Infinity``
    in JavaScript, hence not finite (and never an ``OverflowError`` here).
    """
    kind = type(value)
    if kind is int:
        return -_JS_INT_OVERFLOW < value < _JS_INT_OVERFLOW  # type: ignore[operator]
    return kind is float and math.isfinite(value)  # type: ignore[arg-type]


def js_truthy(value: object) -> bool:
    """JavaScript truthiness of a JSON value: ``{}`` and ``[]`` are truthy, ``NaN`` is not."""
    if isinstance(value, (dict, list)):
        return True
    if isinstance(value, float) and math.isnan(value):
        return False
    return bool(value)


def nonempty_str(value: object) -> str | None:
    """``typeof value === 'string' && value.length > 0 ? value : null``."""
    return value if type(value) is str and value else None


def nullish(*values: object) -> Any:
    """``a ?? b ?? …``: the first value that is not ``None`` (JSON null / missing)."""
    for value in values:
        if value is not None:
            return value
    return None


# -- JSON -----------------------------------------------------------------------


def safe_parse_json(value: object) -> Any:
    """``safeParseJson``: null -> None; object/array -> itself; string -> parsed or None.

    Any other type (number, bool) gives ``None``, as upstream.
    """
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        return value
    if not isinstance(value, str):
        return None
    try:
        return loads_json(value)
    except (ValueError, RecursionError):
        return None


def stringify_content(value: object) -> str:
    """``stringifyContent``: a string as is, null -> ``''``, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        # Upstream falls back to String(value); a bounded repr never recurses deeply.
        return reprlib.repr(value)


def parse_json_objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects in ``text``: the whole text if it is one, else one per line.

    Used to read JSON or JSONL tool output (ref §2.2 codex connector errors).
    """
    trimmed = js_trim(text)
    if not trimmed:
        return []
    direct = safe_parse_json(trimmed)
    if isinstance(direct, dict):
        return [direct]
    found: list[dict[str, Any]] = []
    for line in re.split(r"\r?\n", trimmed):
        parsed = safe_parse_json(js_trim(line))
        if isinstance(parsed, dict):
            found.append(parsed)
    return found


def extract_error_message(value: object, fallback: str, _depth: int = 0) -> str:
    """``extractErrorMessage`` (ref §2.2): the human message inside an error value.

    A string that parses to a JSON object or array is unwrapped (falling back
    to the string itself); an object yields ``detail``, else ``message``
    (recursively, so a JSON-string message is unwrapped), else an ``error``
    string, else the ``error`` object (recursively, same fallback), else a
    non-empty message from the ``data`` object, else ``name``, else
    ``fallback``. Depth is bounded by :data:`MAX_ERROR_DEPTH`.
    """
    if _depth > MAX_ERROR_DEPTH:
        return fallback
    if isinstance(value, str):
        parsed = safe_parse_json(value)
        if isinstance(parsed, (dict, list)):
            return extract_error_message(parsed, value, _depth + 1)
        return value
    if isinstance(value, dict):
        detail = nonempty_str(value.get("detail"))
        if detail is not None:
            return detail
        message = nonempty_str(value.get("message"))
        if message is not None:
            return extract_error_message(message, message, _depth + 1)
        error = value.get("error")
        if isinstance(error, str) and error:
            return error
        if isinstance(error, (dict, list)):
            return extract_error_message(error, fallback, _depth + 1)
        data = value.get("data")
        if isinstance(data, (dict, list)):
            data_message = extract_error_message(data, "", _depth + 1)
            if data_message:
                return data_message
        name = nonempty_str(value.get("name"))
        if name is not None:
            return name
    return fallback


# -- usage ----------------------------------------------------------------------


def pick_usage(source: dict[str, Any], keys: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Copy numeric fields of ``source`` under normalized names.

    ``keys`` pairs a wire key with our key (``input_tokens``, ``output_tokens``,
    ``thought_tokens``, ``cached_read_tokens``, ``cached_write_tokens``; ref §2.2).
    Non-numbers (including booleans) are skipped, as upstream's ``typeof`` checks.
    """
    usage: dict[str, Any] = {}
    for wire_key, our_key in keys:
        value = source.get(wire_key)
        if type(value) in _NUMBER_TYPES:
            usage[our_key] = value
    return usage


# -- todo snapshots (codex todo_list, gemini write_todos) -------------------------

_TODO_SEPARATORS = re.compile(r"[-\s]+")
_STOPPED = ("stopped", "failed", "blocked", "canceled", "cancelled")


def _normalize_todo_status(value: object) -> str:
    status = _TODO_SEPARATORS.sub("_", js_trim(value).lower()) if isinstance(value, str) else ""
    if status in ("complete", "done") or status.startswith("completed"):
        return "completed"
    if status in ("doing", "active") or status.startswith("in_progress"):
        return "in_progress"
    if status.startswith(_STOPPED):
        return "stopped"
    return "pending"


def todo_write_input_from_items(items: object) -> dict[str, Any] | None:
    """``{todos:[{content, status}]}`` from a list of todo-ish objects, or None if none usable.

    ``content`` is the first string of ``content``/``label``/``description``/``text``;
    entries without one are skipped; ``completed: true`` wins over ``status``.
    """
    if not isinstance(items, list):
        return None
    todos: list[dict[str, Any]] = []
    for raw in items:
        if not isinstance(raw, dict):
            continue
        content = ""
        for key in ("content", "label", "description", "text"):
            candidate = raw.get(key)
            if isinstance(candidate, str):
                content = candidate
                break
        if not content:
            continue
        status = "completed" if raw.get("completed") is True else None
        todos.append(
            {"content": content, "status": status or _normalize_todo_status(raw.get("status"))}
        )
    return {"todos": todos} if todos else None


def todo_write_input_from_parsed_value(value: object) -> dict[str, Any] | None:
    """A TodoWrite input from a list, or from an object's ``todos`` / ``todo`` list."""
    if isinstance(value, list):
        return todo_write_input_from_items(value)
    if not isinstance(value, dict):
        return None
    for key in ("todos", "todo"):
        if isinstance(value.get(key), list):
            return todo_write_input_from_items(value[key])
    return None
