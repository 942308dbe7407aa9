"""orjson as a fast path of the JSON reader, used only where its value equals ``json``'s.

Where orjson is not installed (a platform without a wheel), :data:`LOADS` is None and
every reader takes the standard-library path alone.

Design: docs/design/streams.md#harness.streams.fast_json
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["LOADS", "FastJsonError", "may_hold_long_digits", "needs_stdlib"]

#: orjson's error for text it refuses; any refusal falls back to the stdlib path, whose
#: outcome (value or error) is then the answer.
FastJsonError: type[ValueError]
#: ``orjson.loads``, or None without orjson.
LOADS: Callable[[str], Any] | None
try:
    import orjson
except ImportError:
    LOADS = None
    FastJsonError = ValueError
else:
    LOADS = orjson.loads
    FastJsonError = orjson.JSONDecodeError

#: Every other difference is a refusal by orjson (NaN/Infinity, a lone surrogate escape,
#: a number beyond the double range such as 1e999, nesting past 1024 levels, a BOM) or
#: none at all (duplicate keys, ``-0``, floats). The one value it reads otherwise: an
#: integer beyond 64 bits becomes a float. Nineteen digits in a row is the shortest text
#: that can hold one (``-9223372036854775809``); such text goes to the stdlib reader.
_LONG_DIGITS = re.compile("[0-9]{19}")
#: ``search`` for nineteen digits in a row in a str.
needs_stdlib = _LONG_DIGITS.search
#: Each ASCII digit to ``0``, every other byte to a space.
_DIGIT_MASK = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_MASKED_RUN = b"0" * 19


def may_hold_long_digits(data: bytes) -> bool:
    """False when no text within ``data`` holds nineteen digits in a row.

    One pass over a whole chunk: a hot loop that gets False skips the per-line search.
    A table translation and a substring search: a regex retries at every digit of every
    shorter run, several times slower on text full of numbers.
    """
    return _MASKED_RUN in data.translate(_DIGIT_MASK)
