"""Random ids for the fakes' frames: UUIDs, hex tokens, alphanumeric names.

The standard library's ``uuid`` imports ``platform`` and ``secrets`` imports
``hashlib`` and ``random``; a fake starts hundreds of times in ``harness conform``
and only ever needs random ids, so these come straight from ``os.urandom``.
"""

from __future__ import annotations

import os

__all__ = ["alnum", "token_hex", "uuid4", "uuid4_hex"]

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def uuid4_hex() -> str:
    """32 hex digits of a random (version 4, RFC 4122 variant) UUID."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return raw.hex()


def uuid4() -> str:
    """A random UUID in its canonical 8-4-4-4-12 form, as ``str(uuid.uuid4())``."""
    h = uuid4_hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def token_hex(nbytes: int) -> str:
    """``2 * nbytes`` random hex digits, as ``secrets.token_hex``."""
    return os.urandom(nbytes).hex()


def alnum(length: int) -> str:
    """``length`` random letters and digits (rejection sampling keeps it uniform)."""
    out: list[str] = []
    while len(out) < length:
        for byte in os.urandom(length - len(out) + 8):
            if byte < 248:  # 248 = 4 * 62: the largest multiple of 62 below 256
                out.append(_ALNUM[byte % 62])
                if len(out) == length:
                    break
    return "".join(out)
