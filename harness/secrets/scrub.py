"""Scrubbing what a recording stores: secrets redacted, machine paths and host names as
placeholders.

A recording (design §Recordings) is committed and shared, so what it holds must be
safe and portable. Seed 001 §11: a secret "is never returned, masked, logged, placed in
argv"; seed 001 §14: "Bounded stderr excludes prompts, credentials". This module is
sans-IO: strings and bytes in, scrubbed strings and bytes out.

Rules: RECORD-SECRET-LITERAL-001, RECORD-SECRET-SHAPE-001, RECORD-PATHS-001,
RECORD-HOST-001.
Design: docs/design/secrets.md#harness.secrets.scrub
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from harness.secrets.detect import (
    MIN_SECRET_VALUE,
    SecretMatcher,
    encode_text,
    is_secret_name,
    secret_values,
)
from harness.secrets.hosts import find_hosts, host_hold_start, host_literals

__all__ = [
    "DEFAULT_MAX_HOLD",
    "HOST_PLACEHOLDER",
    "MIN_SECRET_LITERAL",
    "PATH_PLACEHOLDERS",
    "PLACEHOLDER_NAMES",
    "REDACTED",
    "REQUIRED_PLACEHOLDERS",
    "Scrubber",
    "StreamScrubber",
    "is_secret_name",
    "restore_bytes",
    "restore_text",
]

#: What a secret becomes (header env values and data alike).
REDACTED = "<redacted>"
_REDACTED_B = REDACTED.encode()

#: What a recording writes as ``{name}`` placeholders: the run's work dir, HOME, temp dir,
#: where the CLI itself is installed (live mode's cache: a CLI prints its own path in
#: stack traces and protocol metadata), and the machine's host name (RECORD-HOST-001).
PATH_PLACEHOLDERS = ("cwd", "home", "tmp", "install")
HOST_PLACEHOLDER = "host"
PLACEHOLDER_NAMES = (*PATH_PLACEHOLDERS, HOST_PLACEHOLDER)
#: What a host name becomes (RECORD-HOST-001).
_HOST_MARK = f"{{{HOST_PLACEHOLDER}}}".encode()
#: The ones every restore must be given (``install`` and ``host`` stay placeholders unless
#: given).
REQUIRED_PLACEHOLDERS = ("cwd", "home", "tmp")

#: Secret env values shorter than this many bytes are not searched for in the data.
MIN_SECRET_LITERAL = MIN_SECRET_VALUE

#: At most this many trailing bytes of one direction are held back waiting for more.
DEFAULT_MAX_HOLD = 16 * 1024

#: A run of bytes that may continue a key-shaped token (the ``Bearer`` token alphabet),
#: matched on reversed data to find where a trailing run starts.
_TOKEN_RUN = re.compile(rb"[A-Za-z0-9_\-.~+/=]+")
_SPACE_RUN = re.compile(rb"[ \t\r\n\x0b\x0c]+")

# -- placeholders -------------------------------------------------------------------------------

_NAMES_ALT = "|".join(PLACEHOLDER_NAMES)
#: A placeholder (no ``!``) or an escaped literal (one or more ``!``).
_PLACEHOLDER_STR = re.compile(r"\{(!*)(" + _NAMES_ALT + r")(:json)?\}")
_PLACEHOLDER_BYTES = re.compile(_PLACEHOLDER_STR.pattern.encode())
#: A ``{`` at the end of the held-back window that could still become one of those.
_PLACEHOLDER_PARTIAL = re.compile(rb"\{!*[a-z:]{0,12}\Z")
#: A path ends where the next character cannot continue a file or directory name.
_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
#: Every text that reads like a placeholder ends with one of these.
_ESCAPE_HINTS = (*(f"{name}}}".encode() for name in PLACEHOLDER_NAMES), b":json}")


def _json_spelling(value: str) -> str:
    """``value`` as it appears inside a JSON string (backslashes and quotes escaped)."""
    return json.dumps(value, ensure_ascii=False)[1:-1]


def _normalize_path(path: str) -> str | None:
    """A directory as it is matched: trailing separators dropped; roots ignored."""
    stripped = path.rstrip("/\\")
    if len(stripped) < 2 or re.fullmatch(r"[A-Za-z]:", stripped):
        return None
    return stripped


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    replacement: bytes


class Scrubber:
    """What one recorded run must not reveal, and the paths it writes as placeholders.

    ``env`` is the run's environment (secret-named values become literals to redact);
    ``paths`` maps placeholder names (:data:`PLACEHOLDER_NAMES`) to directories;
    ``hosts`` are the machine's host names, written as ``{host}`` where one stands as a
    whole token (:mod:`harness.secrets.hosts`); ``secrets`` adds literal values to redact.
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        paths: Mapping[str, str | Sequence[str] | None] | None = None,
        hosts: Iterable[str] = (),
        secrets: Iterable[str] = (),
    ) -> None:
        self._matcher = SecretMatcher([*secret_values(env or {}), *secrets])
        path_items: set[tuple[bytes, bytes]] = set()
        for name, given in (paths or {}).items():
            if name not in PATH_PLACEHOLDERS:
                raise ValueError(f"unknown placeholder {name!r}; known: {PATH_PLACEHOLDERS}")
            for path in (given,) if given is None or isinstance(given, str) else given:
                normalized = _normalize_path(path) if path else None
                if normalized is None:
                    continue
                path_items.add((encode_text(normalized)[0], f"{{{name}}}".encode()))
                escaped = _json_spelling(normalized)
                if escaped != normalized:
                    path_items.add((encode_text(escaped)[0], f"{{{name}:json}}".encode()))
        # Longest path first: a cwd under home becomes {cwd}, not {home}/….
        ordered = sorted(path_items, key=lambda item: (-len(item[0]), item[0]))
        self._path_literals = [p for p, _ in ordered]
        self._path_marks = [m for _, m in ordered]
        self._literals = [*self._matcher.literals, *self._path_literals]
        self._hosts = host_literals(hosts)

    # -- whole values (header fields) -----------------------------------------------------

    def scrub_text(self, text: str) -> str:
        """``text`` with secrets redacted and paths written as placeholders."""
        data, errors = encode_text(text)
        return self.scrub_bytes(data).decode("utf-8", errors)

    def scrub_bytes(self, data: bytes) -> bytes:
        return _apply(data, 0, len(data), self._spans(data, 0))

    def scrub_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """Names kept; a secret-named non-empty value becomes :data:`REDACTED`; other values
        are scrubbed like text (rules RECORD-SECRET-ENV-001, RECORD-PATHS-001)."""
        out: dict[str, str] = {}
        for name, value in env.items():
            if is_secret_name(name):
                out[name] = REDACTED if value else value
            else:
                out[name] = self.scrub_text(value)
        return out

    # -- the matching, shared with StreamScrubber -----------------------------------------------

    def _spans(self, data: bytes, base: int) -> list[_Span]:
        """Sorted, non-overlapping replacements for ``data[base:]`` (``data[:base]`` is context
        for look-behinds). Secrets win over paths and escapes they overlap."""
        return self._matches(data, base)[0]

    def _matches(self, data: bytes, base: int) -> tuple[list[_Span], list[tuple[int, int]]]:
        """:meth:`_spans`, and the whole extent of every match (a ``Bearer`` included): a
        chunk boundary inside one would split what the pattern needs to see together."""
        merged, extents = self._matcher.find(data, base)
        spans = [_Span(s, e, _REDACTED_B) for s, e in merged]
        starts = [s for s, _ in merged]
        for span in self._path_spans(data, base):
            i = bisect.bisect_right(starts, span.start) - 1
            if i >= 0 and merged[i][1] > span.start:
                continue  # inside a secret
            if i + 1 < len(merged) and merged[i + 1][0] < span.end:
                continue  # runs into a secret
            spans.append(span)
        spans.sort(key=lambda s: s.start)
        extents.extend((s.start, s.end) for s in spans)
        return spans, extents

    def _path_spans(self, data: bytes, base: int) -> list[_Span]:
        """Paths (longest first where several start at one place), host names and escaped
        placeholder literals, left to right and non-overlapping, as one regex alternation
        would find them."""
        found: list[tuple[int, int, int, bytes]] = []  # (start, -length, order, replacement)
        for order, (path, mark) in enumerate(
            zip(self._path_literals, self._path_marks, strict=True)
        ):
            at = data.find(path, base)
            while at >= 0:
                end = at + len(path)
                if end == len(data) or data[end] not in _NAME_BYTES:
                    found.append((at, -len(path), order, mark))
                at = data.find(path, at + 1)
        host_order = len(self._path_marks) + 1
        for start, end in find_hosts(data, base, self._hosts):
            found.append((start, start - end, host_order, _HOST_MARK))  # RECORD-HOST-001
        if any(data.find(tail, base) >= 0 for tail in _ESCAPE_HINTS):
            for m in _PLACEHOLDER_BYTES.finditer(data, base):
                # Literal text that reads like a placeholder: one more "!" (lossless).
                found.append(
                    (m.start(), -len(m.group()), len(self._path_marks), b"{!" + m.group()[1:])
                )
        found.sort()
        spans: list[_Span] = []
        covered = base
        for start, negative_length, _, replacement in found:
            if start < covered:
                continue
            spans.append(_Span(start, start - negative_length, replacement))
            covered = start - negative_length
        return spans

    def _hold_start(self, data: bytes, base: int, limit: int) -> int:
        """Where the tail that might still grow into a match begins (``len(data)``: none);
        only the last ``limit`` bytes are looked at."""
        end = len(data)
        floor = max(base, end - limit)
        # (a) a trailing token run, and "Bearer <spaces>" before it (read backwards in C).
        backwards = data[floor:][::-1]
        run = _TOKEN_RUN.match(backwards)
        i = end - (run.end() if run else 0)
        hold = i
        spaces = _SPACE_RUN.match(backwards, end - i)
        j = i - ((spaces.end() - (end - i)) if spaces else 0)
        if j < i and j - 6 >= floor and data[j - 6 : j].lower() == b"bearer":
            hold = min(hold, j - 6)
        # (b) a "{" that may start a placeholder-like text.
        brace = data.rfind(b"{", max(floor, end - 64))
        if brace >= 0 and _PLACEHOLDER_PARTIAL.match(data, brace):
            hold = min(hold, brace)
        # (c) the beginning of a literal (a full path too: what follows decides the match):
        # the earliest place in the last len(literal) bytes where the rest is its prefix.
        for literal in self._literals:
            first = literal[:1]
            at = data.find(first, max(floor, end - len(literal)))
            while at >= 0:
                if literal.startswith(data[at:]):
                    hold = min(hold, at)
                    break
                at = data.find(first, at + 1)
        # (d) a trailing prefix of a host name: what follows decides whether it is a token.
        if self._hosts:
            hold = min(hold, host_hold_start(data, floor, self._hosts))
        return hold


def _apply(data: bytes, start: int, end: int, spans: list[_Span]) -> bytes:
    """``data[start:end]`` with ``spans`` (all inside it) replaced."""
    out = bytearray()
    cur = start
    for span in spans:
        out += data[cur : span.start]
        out += span.replacement
        cur = span.end
    out += data[cur:end]
    return bytes(out)


class StreamScrubber:
    """Scrubs one direction of a recording chunk by chunk, keeping chunk boundaries.

    :meth:`push` takes a chunk under a caller-chosen key and returns the chunks now
    final, as ``(key, scrubbed bytes)`` in order; :meth:`flush` (end of the stream)
    returns the rest. See the module docstring for what is held back and why.
    """

    #: Raw bytes kept from released chunks, for the look-behinds of the next match.
    _CONTEXT = 64

    def __init__(self, scrubber: Scrubber, *, max_hold: int = DEFAULT_MAX_HOLD) -> None:
        if max_hold < 1:
            raise ValueError(f"max_hold must be >= 1, got {max_hold!r}")
        self._scrubber = scrubber
        self._max_hold = max_hold
        self._pending: list[tuple[int, bytes]] = []
        self._context = b""

    @property
    def pending_bytes(self) -> int:
        return sum(len(d) for _, d in self._pending)

    def push(self, key: int, data: bytes) -> list[tuple[int, bytes]]:
        self._pending.append((key, data))
        return self._release(final=False)

    def flush(self) -> list[tuple[int, bytes]]:
        return self._release(final=True)

    def _release(self, *, final: bool) -> list[tuple[int, bytes]]:
        if not self._pending:
            return []
        base = len(self._context)
        data = self._context + b"".join(d for _, d in self._pending)
        spans, extents = self._scrubber._matches(data, base)
        ends: list[int] = []
        pos = base
        for _, chunk in self._pending:
            pos += len(chunk)
            ends.append(pos)
        if final:
            count = len(ends)
        else:
            # A match that reaches the end may still grow (a PEM block without its END).
            open_ended = [start for start, stop in extents if stop == len(data)]
            hold = max(
                min([self._scrubber._hold_start(data, base, self._max_hold), *open_ended]),
                len(data) - self._max_hold,
            )
            count = 0
            for index, end in enumerate(ends):
                if end > hold:
                    break
                if not any(start < end < stop for start, stop in extents):
                    count = index + 1
        if count == 0:
            return []
        cut = ends[count - 1]
        released: list[tuple[int, bytes]] = []
        cur = base
        span_index = 0
        chunk_start = base
        for (key, _), chunk_end in zip(self._pending[:count], ends[:count], strict=True):
            out = bytearray()
            cur = max(cur, chunk_start)
            while span_index < len(spans) and spans[span_index].start < chunk_end:
                span = spans[span_index]
                out += data[cur : span.start]
                out += span.replacement
                cur = span.end
                span_index += 1
            if cur < chunk_end:
                out += data[cur:chunk_end]
                cur = chunk_end
            released.append((key, bytes(out)))
            chunk_start = chunk_end
        self._context = data[max(0, cut - self._CONTEXT) : cut]
        self._pending = self._pending[count:]
        return released


# -- restoring placeholders --------------------------------------------------------------------


def _check_values(values: Mapping[str, str]) -> None:
    missing = [n for n in REQUIRED_PLACEHOLDERS if n not in values]
    if missing:
        raise ValueError(f"restoring placeholders needs a value for {missing}")


def restore_text(text: str, values: Mapping[str, str]) -> str:
    """Placeholders replaced by ``values`` (``{cwd:json}`` by the JSON spelling); one ``!``
    removed from each escaped literal (rule RECORD-PATHS-001)."""
    _check_values(values)

    def sub(m: re.Match[str]) -> str:
        bangs, name, as_json = m.group(1), m.group(2), m.group(3)
        if bangs:
            return "{" + bangs[1:] + name + (as_json or "") + "}"
        value = values.get(name)
        if value is None:
            return m.group(0)
        return _json_spelling(value) if as_json else value

    return _PLACEHOLDER_STR.sub(sub, text)


def restore_bytes(data: bytes, values: Mapping[str, str]) -> bytes:
    """:func:`restore_text` for bytes (values are written as UTF-8)."""
    _check_values(values)

    def sub(m: re.Match[bytes]) -> bytes:
        bangs, name, as_json = m.group(1), m.group(2).decode(), m.group(3)
        if bangs:
            return b"{" + bangs[1:] + m.group(2) + (as_json or b"") + b"}"
        value = values.get(name)
        if value is None:
            return m.group(0)
        return encode_text(_json_spelling(value) if as_json else value)[0]

    return _PLACEHOLDER_BYTES.sub(sub, data)
