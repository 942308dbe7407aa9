"""``shlex.quote`` for the fakes' command lines, without importing ``shlex``.

``shlex`` compiles a regex at import (and so imports ``re`` and ``enum``); a fake
starts hundreds of times in ``harness conform`` and only ever quotes a command the
way ``shlex.quote`` does.
"""

from __future__ import annotations

__all__ = ["quote"]

#: What ``shlex.quote`` leaves unquoted: ASCII ``\w`` and ``@%+=:,./-``.
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")


def quote(text: str) -> str:
    """``shlex.quote(text)``: ``text`` as one POSIX shell word."""
    if not text:
        return "''"
    if all(char in _SAFE for char in text):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"
