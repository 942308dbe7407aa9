"""Human-readable one-line rendering of normalized events (for terminals)."""

from __future__ import annotations

import json
from typing import Any

from harness.events import Event

__all__ = ["format_event"]

_MAX = 160


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = json.dumps(text, ensure_ascii=False) if isinstance(value, str) else text
    return text if len(text) <= _MAX else text[: _MAX - 1] + "…"


def format_event(event: Event) -> str:
    """``type`` padded, then the fields as ``key=value`` (strings JSON-quoted, long ones cut)."""
    data = event.to_json()
    kind = data.pop("type")
    if kind in ("text_delta", "thinking_delta"):
        return f"{kind:<22} {_short(data['delta'])}"
    parts = [f"{key}={_short(value)}" for key, value in data.items()]
    return f"{kind:<22} {' '.join(parts)}".rstrip()
