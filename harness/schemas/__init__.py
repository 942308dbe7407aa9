"""JSON Schemas shipped with the engine, loaded by name."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["load_schema"]


@cache
def load_schema(name: str) -> dict[str, Any]:
    """Load ``harness/schemas/<name>`` (e.g. ``"events.schema.json"``)."""
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
