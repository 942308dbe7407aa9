"""The one secret detector: which env names hold credentials, which text is key-shaped,
every spelling of a known secret value, and the routine that finds them all.

Rules: SECRET-ONE-001.
Design: docs/design/secrets.md#harness.secrets.detect
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import quote, quote_plus, unquote, urlsplit

__all__ = [
    "MIN_SECRET_VALUE",
    "SECRET_SHAPES",
    "SecretMatcher",
    "SecretShape",
    "encode_text",
    "is_secret_name",
    "redact_url",
    "secret_values",
    "spellings",
    "url_passwords",
]

#: A known value shorter than this many UTF-8 bytes is not searched for in text: ``1`` or
#: ``dev`` would erase ordinary words. Its env var is still judged by name.
MIN_SECRET_VALUE = 8

# -- names --------------------------------------------------------------------------------------

#: Substrings of an upper-cased name that make it a credential.
_SECRET_SUBSTRINGS = (
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "APIKEY",
    "API_KEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
    "COOKIE",
)
#: Whole words (split on anything but letters and digits) that make a name a credential.
_SECRET_WORDS = frozenset(
    {
        "KEY",
        "KEYS",
        "AUTH",
        "AUTHORIZATION",
        "OAUTH",
        "PAT",
        "PWD",
        "PASS",
        "CREDS",
        "DSN",
        "SIG",
        "SIGNATURE",
    }
)
#: Names that contain a secret word but are not secrets (the shell's working dirs).
_NOT_SECRET = frozenset({"PWD", "OLDPWD"})


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True when a variable, header or parameter called ``name`` holds a credential.

    ``ANTHROPIC_API_KEY``, ``GH_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, ``DB_PASSWORD``,
    ``GOOGLE_APPLICATION_CREDENTIALS``, ``SENTRY_DSN``, ``NPM_CONFIG__AUTH``,
    ``x-api-key``, ``Authorization``. Not ``PWD`` (the working directory) nor
    ``GIT_AUTHOR_NAME`` (``AUTHOR`` is not the word ``AUTH``). Remembered per name: every
    fake run of ``harness conform`` asks again about the same environment's names.
    """
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    if any(part in upper for part in _SECRET_SUBSTRINGS):
        return True
    words = re.split(r"[^A-Z0-9]+", upper)
    return any(w in _SECRET_WORDS or w.endswith(("KEY", "KEYS")) for w in words if w)


# -- shapes -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SecretShape:
    """Key-shaped text. The part of a match before the group ``keep`` ends is kept (the
    ``Bearer`` word, a URL's ``scheme://user:``). ``hints``: text every match contains,
    searched first (in lower-cased data when ``fold``)."""

    what: str
    pattern: re.Pattern[bytes]
    hints: tuple[bytes, ...]
    fold: bool = False


#: Each pattern starts with its literal prefix (so ``re`` scans for it quickly) and then looks
#: behind it, so a match never starts inside a longer word (``task-…`` is not ``sk-…``).
SECRET_SHAPES: tuple[SecretShape, ...] = (
    # OpenAI (sk-, sk-proj-) and Anthropic (sk-ant-api03-…) keys.
    SecretShape("sk- key", re.compile(rb"sk-(?<![A-Za-z0-9_]sk-)[A-Za-z0-9_-]{16,}"), (b"sk-",)),
    SecretShape(
        "github token",
        re.compile(rb"gh[pousr]_(?<![A-Za-z0-9_]gh[pousr]_)[A-Za-z0-9]{20,}"),
        (b"gh",),
    ),
    SecretShape(
        "github fine-grained token",
        re.compile(rb"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{20,}"),
        (b"github_pat_",),
    ),
    SecretShape(
        "aws access key id",
        re.compile(rb"A[KS]IA(?<![A-Za-z0-9]A[KS]IA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
        (b"AKIA", b"ASIA"),
    ),
    SecretShape(
        "slack token",
        re.compile(rb"xox[abposr]-(?<![A-Za-z0-9]xox[abposr]-)[A-Za-z0-9-]{10,}"),
        (b"xox",),
    ),
    SecretShape(
        "google api key",
        re.compile(rb"AIza(?<![A-Za-z0-9_-]AIza)[0-9A-Za-z_-]{35,}"),
        (b"AIza",),
    ),
    SecretShape(
        "bearer token",
        re.compile(rb"(?i)(?P<keep>\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
        (b"bearer",),
        fold=True,
    ),
    SecretShape(
        "jwt",
        re.compile(rb"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"),
        (b"eyJ",),
    ),
    # The whole block; without its END line (cut off), the key material that follows.
    SecretShape(
        "pem private key",
        re.compile(
            rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"
            rb"(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|(?:[A-Za-z0-9+/=\s]|\\[nr])*)"
        ),
        (b"PRIVATE KEY-----",),
    ),
    # scheme://user:password@host: the password (rule SECRET-URL-001).
    SecretShape(
        "url password",
        re.compile(rb"(?P<keep>[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@?#\"'<>]*:)[^\s/@?#\"'<>]+(?=@)"),
        (b"://",),
    ),
)

_URL_PASSWORD = SECRET_SHAPES[-1].pattern


def url_passwords(text: str) -> list[str]:
    """The password of every ``scheme://user:pass@host`` in ``text``, as written and, when it
    differs, percent-decoded (``p%40ss`` is the password ``p@ss``)."""
    found: list[str] = []
    data, errors = encode_text(text)
    for m in _URL_PASSWORD.finditer(data):
        written = data[m.end("keep") : m.end()].decode("utf-8", errors)
        found.append(written)
        decoded = unquote(written, errors=errors)
        if decoded != written:
            found.append(decoded)
    return found


def redact_url(url: str) -> str:
    """``scheme://host[:port]`` and ``/…`` when there is more: credentials, path, query and
    fragment hidden (a URL from a user's config may carry a token anywhere)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "<url>"
    tail = "/…" if (parts.path not in ("", "/") or parts.query or parts.fragment) else ""
    return f"{parts.scheme}://{host}{port}{tail}"


# -- known values -------------------------------------------------------------------------------


def encode_text(text: str) -> tuple[bytes, str]:
    """UTF-8 bytes of ``text`` and the error handler that reverses it: an argv or env value
    that was not UTF-8 holds lone surrogates (``surrogateescape``, PEP 383)."""
    try:
        return text.encode("utf-8", "surrogateescape"), "surrogateescape"
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass"), "surrogatepass"


def secret_values(*envs: Mapping[str, str]) -> list[str]:
    """The secrets an environment holds, longest first: the value of every secret-named
    variable and the password of every credential URL in any value (``DATABASE_URL``),
    stripped, at least :data:`MIN_SECRET_VALUE` bytes long."""
    values: set[str] = set()
    for env in envs:
        for name, value in env.items():
            if is_secret_name(name):
                values.add(value.strip())
            if "://" in value:
                values.update(url_passwords(value))
    return sorted((v for v in values if _long_enough(v)), key=lambda v: (-len(v), v))


def _long_enough(value: str) -> bool:
    return len(encode_text(value)[0]) >= MIN_SECRET_VALUE


def _upper_hex(text: str, escape: str) -> str:
    """``text`` with the hex digits after each ``escape`` (``\\u``, ``%``) upper-cased."""
    width = 4 if escape == "\\u" else 2
    pattern = re.escape(escape) + f"([0-9a-fA-F]{{{width}}})"
    return re.sub(pattern, lambda m: escape + m.group(1).upper(), text)


def _base64_cores(data: bytes) -> set[bytes]:
    """For each of the three alignments ``data`` can have inside a longer base64 payload, the
    encoded characters that depend on ``data`` alone (standard and URL-safe alphabets)."""
    cores: set[bytes] = set()
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data)
        first = -(-offset * 8 // 6)  # the first character whose bits all lie in data
        last = (8 * (offset + len(data))) // 6  # one past the last such character
        core = encoded[first:last]
        if len(core) >= MIN_SECRET_VALUE:
            cores.add(core)
            cores.add(core.translate(bytes.maketrans(b"+/", b"-_")))
    return cores


def spellings(value: str) -> set[bytes]:
    """Every spelling of ``value`` a CLI is likely to print, as UTF-8 bytes (rule
    SECRET-ENCODED-001): raw; inside a JSON string (``\\"``, ``\\\\``), with non-ASCII as
    ``\\u`` escapes in either case, with ``/`` as ``\\/``, and inside a JSON string twice;
    percent-encoded with ``%20`` or ``+`` for a space, in either hex case; inside base64."""
    raw = encode_text(value)[0]
    texts = {value}
    for ensure_ascii in (False, True):
        once = json.dumps(value, ensure_ascii=ensure_ascii)[1:-1]
        twice = json.dumps(once, ensure_ascii=ensure_ascii)[1:-1]
        for escaped in (once, twice, _upper_hex(once, "\\u"), _upper_hex(twice, "\\u")):
            texts.update((escaped, escaped.replace("/", "\\/")))
    for safe in ("", "/"):
        for encoded in (quote(raw, safe=safe), quote_plus(raw, safe=safe)):
            texts.update((encoded, _lower_hex(encoded)))
    out = {encode_text(t)[0] for t in texts}
    out |= _base64_cores(raw)
    return out


def _lower_hex(text: str) -> str:
    return re.sub("%([0-9A-F]{2})", lambda m: "%" + m.group(1).lower(), text)


# -- finding ------------------------------------------------------------------------------------


class SecretMatcher:
    """Finds key-shaped text and every spelling of ``values`` (known secrets: an env's
    :func:`secret_values`, a request's credentials); the one redaction routine."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        literals: set[bytes] = set()
        for value in values:
            stripped = value.strip()
            if _long_enough(stripped):
                literals |= spellings(stripped)
        #: Longest first, so a spelling that contains another is redacted whole.
        self.literals: tuple[bytes, ...] = tuple(sorted(literals, key=lambda v: (-len(v), v)))

    def find(
        self, data: bytes, base: int = 0
    ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """Sorted, merged ``[start, end)`` spans to redact in ``data[base:]`` (``data[:base]``
        is context for look-behinds), and the whole extent of every shape match (the
        ``Bearer`` word included): what a stream must not cut."""
        found: list[tuple[int, int]] = []
        extents: list[tuple[int, int]] = []
        lowered: bytes | None = None
        for shape in SECRET_SHAPES:
            if shape.fold:
                lowered = data.lower() if lowered is None else lowered
                haystack = lowered
            else:
                haystack = data
            if not any(haystack.find(hint, base) >= 0 for hint in shape.hints):
                continue
            keeps = "keep" in shape.pattern.groupindex
            for m in shape.pattern.finditer(data, base):
                start = m.end("keep") if keeps else m.start()
                if m.end() > start:
                    found.append((start, m.end()))
                    extents.append((m.start(), m.end()))
        for literal in self.literals:
            at = data.find(literal, base)
            while at >= 0:
                found.append((at, at + len(literal)))
                at = data.find(literal, at + 1)
        merged: list[tuple[int, int]] = []
        for start, end in sorted(found):
            if merged and start < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged, extents

    def redact_bytes(self, data: bytes, mark: bytes) -> bytes:
        """``data`` with every secret replaced by ``mark``."""
        spans, _ = self.find(data)
        if not spans:
            return data
        out = bytearray()
        cur = 0
        for start, end in spans:
            out += data[cur:start]
            out += mark
            cur = end
        out += data[cur:]
        return bytes(out)

    def redact_text(self, text: str, mark: str) -> str:
        """``text`` with every secret replaced by ``mark``."""
        data, errors = encode_text(text)
        redacted = self.redact_bytes(data, encode_text(mark)[0])
        return text if redacted is data else redacted.decode("utf-8", errors)
