"""``plain``: stdout is free text; ``<artifact>`` blocks in it become artifacts.

Seed 000 §3 lists the plain runtimes (aider, antigravity, atomcode, deepseek,
grok-build, qwen); seed 000 §5.13 and ref §2.5 describe the only structure
their output has: Anthropic-style ``<artifact>`` blocks, extracted when the
run completes.

Rules: PLAIN-ARTIFACT-COLLIDE-001, PLAIN-ROBUST-001.
Design: docs/design/streams.md#harness.streams.plain
"""

from __future__ import annotations

import codecs
from bisect import bisect_left
from collections.abc import Collection

from harness.events import Artifact, Error, Event, TextDelta
from harness.streams import UnknownStreamFormatError
from harness.streams.artifact_text import (
    OPEN_TAG as _OPEN_TAG,
)
from harness.streams.artifact_text import (
    ArtifactNamesExhaustedError,
    ExtractedArtifact,
    extract_artifacts,
    markdown_skip_ranges,
)

__all__ = [
    "ARTIFACT_TEXT_LIMIT",
    "TEXT_PIECE_BYTES",
    "PlainStreamParser",
    "create",
]

#: Stdout bytes whose text one ``text_delta`` carries at most (PLAIN-TEXT-BOUND-001).
TEXT_PIECE_BYTES = 64 * 1024
#: Characters of stdout text held for artifact extraction at most (PLAIN-ARTIFACT-BOUND-001).
ARTIFACT_TEXT_LIMIT = 8 * 1024 * 1024
#: The held text is checked against the limit every this many pieces (1 MiB of stdout).
_CHECK_EVERY_PIECES = 16
#: Held pieces are joined this many at a time: small reads must not multiply the hold.
_JOIN_PIECES = 256

_FENCE = "```"


class PlainStreamParser:
    """Bytes in, bounded ``text_delta`` events as they arrive; ``artifact`` events at finish."""

    def __init__(
        self,
        existing_names: Collection[str] = (),
        *,
        artifact_text_limit: int = ARTIFACT_TEXT_LIMIT,
    ) -> None:
        if isinstance(existing_names, str):
            raise TypeError("existing_names must be a collection of names, not one string")
        if artifact_text_limit < 1:
            raise ValueError(f"artifact_text_limit must be >= 1, got {artifact_text_limit!r}")
        self._existing = frozenset(existing_names)
        self._limit = artifact_text_limit
        # PLAIN-TEXT-001: one incremental decoder for the whole stream, so a
        # UTF-8 sequence split between reads is decoded whole.
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        #: Stdout bytes consumed so far.
        self._offset = 0
        #: The text extraction needs, in parts; ``None`` once over the limit.
        self._held: list[str] | None = []
        self._held_chars = 0
        self._unjoined = 0
        #: Once not holding: the last characters seen (an opener split between pieces),
        #: and whether an opener appeared in text that was not held.
        self._tail = ""
        self._unheld_opener = False
        self._finished = False

    def feed(self, data: bytes) -> list[Event]:
        if self._finished:
            raise RuntimeError("PlainStreamParser.feed() called after finish()")
        out: list[Event] = []
        pos = 0
        while pos < len(data):
            # PLAIN-TEXT-BOUND-001: pieces end at fixed stdout offsets, whatever the reads.
            room = TEXT_PIECE_BYTES - self._offset % TEXT_PIECE_BYTES
            segment = data[pos : pos + room]
            pos += len(segment)
            self._offset += len(segment)
            self._text(self._decoder.decode(segment, final=False), out)
            if self._offset % (TEXT_PIECE_BYTES * _CHECK_EVERY_PIECES) == 0:
                self._bound()
        return out

    def finish(self) -> list[Event]:
        if self._finished:
            return []
        self._finished = True
        out: list[Event] = []
        self._text(self._decoder.decode(b"", final=True), out)
        if self._held is None:
            if self._unheld_opener:
                out.append(_limit_error(self._limit))
            return out
        stdout = "".join(self._held)
        self._held = [stdout]
        # seed 000 §5.13 (PLAIN-ARTIFACT-EVENT-001): extract once, at completion.
        try:
            found = extract_artifacts(stdout, self._existing)
        except ArtifactNamesExhaustedError as exc:
            out.extend(_artifact_event(a) for a in exc.allocated)
            out.append(Error(message=exc.message, code=exc.code))
            return out
        out.extend(_artifact_event(a) for a in found)
        return out

    @property
    def text(self) -> str | None:
        """The stdout text artifact extraction needs (complete after :meth:`finish`).

        All of it, less leading paragraphs that cannot hold or affect an artifact
        (PLAIN-ARTIFACT-BOUND-001); ``None`` once that would exceed the limit.
        :func:`extract_artifacts` over it gives what it gives over the whole stdout.
        """
        return None if self._held is None else "".join(self._held)

    def _text(self, text: str, out: list[Event]) -> None:
        if not text:
            return
        out.append(TextDelta(delta=text))
        if self._held is not None:
            self._held.append(text)
            self._held_chars += len(text)
            self._unjoined += 1
            if self._unjoined >= _JOIN_PIECES:
                self._held[-_JOIN_PIECES:] = ["".join(self._held[-_JOIN_PIECES:])]
                self._unjoined = 0
            return
        window = self._tail + text
        if _OPEN_TAG in window:
            self._unheld_opener = True
        self._tail = window[-(len(_OPEN_TAG) - 1) :]

    def _bound(self) -> None:
        """PLAIN-ARTIFACT-BOUND-001: drop what extraction cannot need; stop past the limit."""
        if self._held is None or self._held_chars <= self._limit:
            return
        held = "".join(self._held)
        held = held[_safe_cut(held) :]
        if len(held) <= self._limit:
            self._held = [held]
            self._held_chars = len(held)
            self._unjoined = 0
            return
        self._held = None
        self._held_chars = 0
        self._unheld_opener = _OPEN_TAG in held
        self._tail = held[-(len(_OPEN_TAG) - 1) :]


def _safe_cut(text: str) -> int:
    """The largest offset ``c`` such that extraction over ``text[c:] + more`` equals
    extraction over ``text + more`` for any ``more``: just after an empty line, outside
    every code fence, with no ``<artifact`` before it (0 when there is none)."""
    opener = text.find(_OPEN_TAG)
    bound = len(text) if opener == -1 else opener
    empty = text.rfind("\n\n", 0, bound)
    if empty == -1:
        return 0
    if _FENCE not in text[: empty + 2]:
        return empty + 2
    # Inline code spans never cross an empty line, so only a fence can hold a candidate.
    # PLAIN-ARTIFACT-FENCE-001: a fence still open at ``bound`` runs on past it (to its
    # closing line or the end of stdout), so a candidate at ``bound`` is inside it. No other skip
    # range ends just after an empty line: a closing fence line and a code span end in a
    # backtick or whitespace on that line, never in ``\n\n``.
    ranges = markdown_skip_ranges(text[:bound])
    starts = [start for start, _ in ranges]
    while empty != -1:
        cut = empty + 2
        at = bisect_left(starts, cut) - 1
        if at < 0 or cut > ranges[at][1]:
            return cut
        empty = text.rfind("\n\n", 0, ranges[at][0])
    return 0


def _limit_error(limit: int) -> Error:
    return Error(
        message=(
            f"artifacts were not extracted: an <artifact> block lies in plain output that "
            f"would need more than {limit} characters held at once (text since the last "
            "empty line outside a code fence, or since the first <artifact>); the text "
            "itself was delivered in full"
        ),
        code="ARTIFACT_TEXT_LIMIT",
    )


def _artifact_event(artifact: ExtractedArtifact) -> Artifact:
    return Artifact(
        name=artifact.name,
        identifier=artifact.identifier or None,
        artifact_type=artifact.artifact_type,
    )


def create(dialect: str | None) -> PlainStreamParser:
    """Factory for :func:`harness.formats.create_parser`.

    ``plain`` has a single dialect, so a def names no ``event_parser``
    (upstream ignores ``eventParser`` for this format); any other value is a
    definition error.
    """
    if dialect is not None:
        raise UnknownStreamFormatError(
            f"stream format 'plain' takes no event parser, got {dialect!r}"
        )
    return PlainStreamParser()
