"""JSON for the fakes through the C accelerator, without importing the ``json`` package.

``json`` imports ``re`` for its pure-Python fallbacks, and with it ``enum``,
``functools`` and the regex compiler: about one more bare interpreter start-up, paid
by every fake start. ``_json`` does the same work in C. What the fast path does not
take (indentation, a BOM, a non-JSON value, any error) goes to ``json`` itself, so
results and errors are exactly the standard library's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from json import JSONDecodeError
    from types import ModuleType
    from typing import Any

__all__ = ["JSONDecodeError", "dumps", "loads"]

#: What json's decoder skips around a document (its ``WHITESPACE`` pattern).
_WHITESPACE = " \t\n\r"


def _accelerator() -> ModuleType | None:
    try:
        import _json
    except ImportError:  # an interpreter without it: json does all of the work
        return None
    return _json


_C = _accelerator()


def _not_serializable(value: object) -> object:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


class _DecoderDefaults:
    """What ``_json.make_scanner`` reads off a ``json.JSONDecoder()``: its defaults."""

    __slots__ = (
        "memo",
        "object_hook",
        "object_pairs_hook",
        "parse_constant",
        "parse_float",
        "parse_int",
        "strict",
    )

    def __init__(self) -> None:
        constants = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = constants.__getitem__
        self.memo: dict[str, str] = {}


_scan: Callable[[str, int], tuple[Any, int]] | None = None
_encoders: dict[tuple[bool, str, str, bool], Callable[[object, int], Any]] = {}
_markers: dict[int, object] = {}
if _C is not None:
    try:
        _scan = _C.make_scanner(_DecoderDefaults())
    except (AttributeError, TypeError):  # another interpreter's accelerator: json decides
        _scan = None


def _encoder(
    ensure_ascii: bool, item_sep: str, key_sep: str, sort_keys: bool
) -> Callable[[object, int], Any] | None:
    key = (ensure_ascii, item_sep, key_sep, sort_keys)
    found = _encoders.get(key)
    if found is None and _C is not None:
        strings = _C.encode_basestring_ascii if ensure_ascii else _C.encode_basestring
        try:
            found = _C.make_encoder(
                _markers, _not_serializable, strings, None, key_sep, item_sep, sort_keys,
                False, True,
            )  # fmt: skip
        except (AttributeError, TypeError):  # another interpreter's accelerator
            return None
        _encoders[key] = found
    return found


def dumps(
    obj: Any,
    *,
    ensure_ascii: bool = True,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
    indent: int | None = None,
) -> str:
    """``json.dumps(obj, ...)`` with these keywords (the others keep json's defaults)."""
    if indent is None:
        item_sep, key_sep = separators or (", ", ": ")
        encode = _encoder(ensure_ascii, item_sep, key_sep, sort_keys)
        if encode is not None:
            try:
                return "".join(encode(obj, 0))
            except Exception:  # json raises its own error for it below
                _markers.clear()
    import json  # the rare case: indentation, an error, no accelerator

    return json.dumps(
        obj, ensure_ascii=ensure_ascii, separators=separators, sort_keys=sort_keys, indent=indent
    )


def loads(document: str | bytes | bytearray) -> Any:
    """``json.loads(document)``."""
    if _scan is not None:
        text = _utf8_text(document) if not isinstance(document, str) else document
        if text is not None and not text.startswith("\ufeff"):
            start = len(text) - len(text.lstrip(_WHITESPACE))
            try:
                value, end = _scan(text, start)
            except Exception:  # json raises its own error for it below
                pass
            else:
                if not text[end:].strip(_WHITESPACE):
                    return value
    import json  # the rare case: a BOM, another encoding, an error

    return json.loads(document)


def _utf8_text(data: bytes | bytearray) -> str | None:
    """``data`` decoded as json decodes it when it detects UTF-8 (no BOM, no NUL in
    the first four bytes), else ``None``."""
    if data[:1] in (b"\xef", b"\xfe", b"\xff") or b"\x00" in data[:4]:
        return None
    try:
        return bytes(data).decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None


def __getattr__(name: str) -> Any:
    # JSONDecodeError is only looked up when an error is being caught.
    if name == "JSONDecodeError":
        import json

        return json.JSONDecodeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
