"""Reading what a user hands the ``harness`` command: UTF-8 text and JSON with a bounded depth.

Every problem is a :class:`~harness.errors.BadInputError` naming the source and, where it
applies, the line and column (CLIERR-UTF8-001, CLIERR-JSON-DEPTH-001): bad input never surfaces
as a ``UnicodeDecodeError`` or a ``RecursionError``.

* :func:`read_text_file` reads a file as UTF-8 text (a prompt file, ...);
* :func:`check_json_depth` refuses JSON nested deeper than :data:`MAX_JSON_DEPTH` before it is
  parsed: Python's ``json`` recurses once per level, as do the validators walking the result;
* :func:`check_argv` refuses a command-line argument that is not UTF-8 (on POSIX, Python keeps
  the undecodable bytes of ``sys.argv`` as lone surrogates).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from harness.errors import BadInputError

__all__ = [
    "MAX_JSON_DEPTH",
    "check_argv",
    "check_json_depth",
    "decode_utf8",
    "read_text_file",
]

#: Deepest nesting of arrays and objects a JSON input may have. The harness's own documents
#: (profiles, MCP configs, tool bundles) need fewer than ten levels.
MAX_JSON_DEPTH = 128

#: A JSON string (possibly unterminated) or one bracket; everything else is skipped.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def decode_utf8(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text (a BOM is kept); :class:`BadInputError` at the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode("utf-8")
        line, column = _line_column(good, len(good))
        raise BadInputError(
            source,
            f"is not UTF-8 text (byte 0x{data[exc.start]:02x}: {exc.reason})",
            line=line,
            column=column,
            rule="CLIERR-UTF8-001",
        ) from None


def read_text_file(path: str | os.PathLike[str], *, label: str | None = None) -> str:
    """The UTF-8 text of ``path``; unreadable or not UTF-8 -> :class:`BadInputError`.

    ``label`` names the source in the error (e.g. ``--prompt-file notes.md``); default the path.
    """
    source = label or os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BadInputError(source, f"cannot read: {exc.strerror or exc}") from None
    return decode_utf8(data, source)


def check_json_depth(text: str, source: str, *, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise :class:`BadInputError` at the bracket that nests ``text`` deeper than ``limit``.

    Only the nesting is checked (brackets inside strings do not count); the parser reports
    everything else.
    """
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                line, column = _line_column(text, match.start())
                raise BadInputError(
                    source,
                    f"JSON nested deeper than {limit} levels",
                    line=line,
                    column=column,
                    rule="CLIERR-JSON-DEPTH-001",
                )
        elif token in "]}":
            depth = max(depth - 1, 0)


def _shown(arg: str) -> str:
    """``arg`` printable: undecodable bytes as ``\\xNN``, other lone surrogates as ``\\uNNNN``."""
    try:
        return arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return arg.encode("utf-8", "backslashreplace").decode("utf-8")


def check_argv(argv: Sequence[str]) -> None:
    """Refuse the first argument that is not UTF-8 text, naming its position and option."""
    for index, arg in enumerate(argv):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            option = ""
            if not arg.startswith("-") and index > 0 and argv[index - 1].startswith("-"):
                option = f" (the value of {argv[index - 1]})"
            raise BadInputError(
                f"argument {index + 1}{option}",
                f"'{_shown(arg)}' is not UTF-8 text (character {exc.start + 1}); "
                "the harness takes UTF-8 text arguments",
                rule="CLIERR-UTF8-001",
            ) from None
