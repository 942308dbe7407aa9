"""Redaction: the prompt and anything that looks like a secret never reach a report.

Rules: RUN-STDERR-REDACT-001.
Design: docs/design/secrets.md#harness.secrets.redact
"""

from __future__ import annotations

import codecs
import math
from collections import deque
from collections.abc import Iterable, Mapping

from harness.secrets.detect import MIN_SECRET_VALUE, SecretMatcher, secret_values

__all__ = [
    "DEFAULT_TAIL_BYTES",
    "INDEX_BUDGET",
    "MIN_PROMPT_FRAGMENT",
    "MIN_SECRET_VALUE",
    "MIN_SHORT_PROMPT",
    "PROMPT_MARK",
    "SECRET_MARK",
    "Redactor",
    "StderrTail",
    "secret_env_values",
]

#: The secrets of one or more environments, longest first
#: (:func:`harness.secrets.detect.secret_values`).
secret_env_values = secret_values


#: A shared stretch at least this long is treated as (part of) the prompt.
MIN_PROMPT_FRAGMENT = 24
#: A prompt shorter than MIN_PROMPT_FRAGMENT is redacted whole from this length on.
MIN_SHORT_PROMPT = 4
#: At most this many prompt pieces are indexed (memory bound; see the module docstring).
INDEX_BUDGET = 20_000
#: ref §1.1 / upstream's raw budget: stderr tails keep the last 64 KiB.
DEFAULT_TAIL_BYTES = 64 * 1024

PROMPT_MARK = "[REDACTED:prompt]"
SECRET_MARK = "[REDACTED:secret]"


class _PromptIndex:
    """Finds every stretch of a text that also occurs in the prompt (>= the fragment size)."""

    def __init__(self, prompt: str, fragment: int = MIN_PROMPT_FRAGMENT) -> None:
        self._prompt = prompt
        self._k = fragment
        self._short: str | None = None
        self._grams: dict[str, int] = {}
        if len(prompt) < fragment:
            stripped = prompt.strip()
            self._short = stripped if len(stripped) >= MIN_SHORT_PROMPT else None
            return
        count = len(prompt) - fragment + 1
        step = max(1, math.ceil(count / INDEX_BUDGET))
        for pos in range(0, count, step):
            gram = prompt[pos : pos + fragment]
            if gram.strip():  # a run of whitespace is not the prompt's content
                self._grams.setdefault(gram, pos)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Merged ``[start, end)`` spans of ``text`` that are shared with the prompt."""
        if self._short is not None:
            return _find_all(text, self._short)
        if not self._grams or len(text) < self._k:
            return []
        prompt, k = self._prompt, self._k
        found: list[tuple[int, int]] = []
        covered_to = -1
        i = 0
        last = len(text) - k
        while i <= last:
            pos = self._grams.get(text[i : i + k])
            if pos is None:
                i += 1
                continue
            start, end = i, i + k
            p_start, p_end = pos, pos + k
            # Extend the match both ways along this alignment.
            while start > 0 and p_start > 0 and text[start - 1] == prompt[p_start - 1]:
                start -= 1
                p_start -= 1
            while end < len(text) and p_end < len(prompt) and text[end] == prompt[p_end]:
                end += 1
                p_end += 1
            if end > covered_to:
                found.append((start, end))
                covered_to = end
            i = max(i + 1, end - k + 1)
        return _merge(found)


def _find_all(text: str, needle: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = text.find(needle)
    while start >= 0:
        spans.append((start, start + len(needle)))
        start = text.find(needle, start + len(needle))
    return spans


def _merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


class Redactor:
    """Replaces the prompt, key-shaped tokens and secret env values in text."""

    def __init__(
        self,
        prompt: str | None = None,
        *,
        env: Mapping[str, str] | None = None,
        secrets: Iterable[str] = (),
    ) -> None:
        self._prompt = _PromptIndex(prompt) if prompt else None
        self._secrets = SecretMatcher([*secret_values(env or {}), *secrets])

    def redact(self, text: str) -> str:
        """``text`` with every prompt fragment and secret replaced (never raises)."""
        if not text:
            return text
        if self._prompt is not None:
            text = _replace_spans(text, self._prompt.spans(text), PROMPT_MARK)
        return self._secrets.redact_text(text, SECRET_MARK)


def _replace_spans(text: str, spans: list[tuple[int, int]], mark: str) -> str:
    if not spans:
        return text
    parts: list[str] = []
    prev = 0
    for start, end in spans:
        parts.append(text[prev:start])
        parts.append(mark)
        prev = end
    parts.append(text[prev:])
    return "".join(parts)


class StderrTail:
    """The last ``limit`` bytes of a stream, kept as whole lines and redacted on read.

    Bounded memory whatever arrives (a 5 MB burst keeps ~``limit`` bytes): complete
    lines are queued and dropped from the front once the total passes ``limit``; a line
    longer than ``limit`` keeps only its end, and the first word of that end is dropped
    because it may be the second half of a secret cut by the boundary. Nothing is
    redacted until :meth:`text`, which redacts line by line (a secret never spans a
    newline), then cuts the result to ``limit`` UTF-8 bytes at a line start when it can.
    """

    def __init__(self, redactor: Redactor, limit: int = DEFAULT_TAIL_BYTES) -> None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit!r}")
        self._redactor = redactor
        self._limit = limit
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._lines: deque[str] = deque()
        self._size = 0
        self._partial = ""
        self._partial_cut = False
        self.total_bytes = 0

    def feed(self, data: bytes) -> None:
        if not data:
            return
        self.total_bytes += len(data)
        text = self._decoder.decode(data)
        if not text:
            return
        pieces = text.split("\n")
        for piece in pieces[:-1]:
            self._push(self._take_partial(piece))
        self._partial += pieces[-1]
        if len(self._partial) > self._limit:
            self._partial = self._partial[-self._limit :]
            self._partial_cut = True

    def _take_partial(self, piece: str) -> str:
        line = self._partial + piece
        cut = self._partial_cut or len(line) > self._limit
        self._partial = ""
        self._partial_cut = False
        if cut:
            line = _drop_first_word(line[-self._limit :])
        return line

    def _push(self, line: str) -> None:
        self._lines.append(line)
        self._size += len(line.encode("utf-8", "replace")) + 1
        while self._size > self._limit and len(self._lines) > 1:
            dropped = self._lines.popleft()
            self._size -= len(dropped.encode("utf-8", "replace")) + 1

    def text(self) -> str:
        """The redacted tail (at most ``limit`` UTF-8 bytes)."""
        lines = list(self._lines)
        tail = self._partial + self._decoder.decode(b"", final=False)
        if tail:
            lines.append(_drop_first_word(tail) if self._partial_cut else tail)
        redacted = [self._redactor.redact(line) for line in lines]
        out = "\n".join(redacted)
        if self._lines and not tail:
            out += "\n"
        data = out.encode("utf-8", "replace")
        if len(data) <= self._limit:
            return out
        cut = data[-self._limit :]
        newline = cut.find(b"\n")
        if 0 <= newline < len(cut) - 1:
            cut = cut[newline + 1 :]
        return cut.decode("utf-8", "ignore")


def _drop_first_word(text: str) -> str:
    for index, char in enumerate(text):
        if char.isspace():
            return "…" + text[index:]
    return "…"
