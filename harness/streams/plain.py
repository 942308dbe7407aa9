"""``plain``: stdout is free text; ``<artifact>`` blocks in it become artifacts.

Seed 000 §3 lists the plain runtimes (aider, antigravity, atomcode, deepseek,
grok-build, qwen); seed 000 §5.13 and ref §2.5 describe the only structure
their output has: Anthropic-style ``<artifact>`` blocks, extracted when the
run completes.

* **Text** (PLAIN-TEXT-001). Each :meth:`PlainStreamParser.feed` returns the
  chunk's text as one :class:`~harness.events.TextDelta`. Bytes are decoded
  with one incremental UTF-8 decoder (``errors="replace"``), so a multi-byte
  character split across reads is held until complete and never becomes
  U+FFFD. Where chunk boundaries fall decides how the text is cut into deltas,
  and those boundaries differ from run to run; the invariant is therefore that
  the *concatenated* text is identical for any chunking, not the list of
  deltas. (Upstream forwards plain stdout on a separate ``stdout`` channel
  rather than as ``text_delta``, ref §1.2; here every format shares one
  vocabulary.)
* **Artifacts** (PLAIN-ARTIFACT-EVENT-001). :meth:`PlainStreamParser.finish`
  runs :func:`harness.artifacts.extract_artifacts` over the whole stdout and
  emits one :class:`~harness.events.Artifact` per block (name, identifier,
  artifact type). The parser stays sans-IO: writing the files is
  :func:`harness.artifacts.write_artifacts`, which the runner calls. Pass the
  project's current file names as ``existing_names`` so collisions get
  ``-2``, ``-3`` … (PLAIN-ARTIFACT-COLLIDE-001). If every suffix of a name is
  taken, the artifacts named before it are still emitted, followed by an
  ``error`` event with code ``ARTIFACT_NAME_EXHAUSTED``; ``finish`` never
  raises.

Neither method raises on any input (PLAIN-ROBUST-001).
"""

from __future__ import annotations

import codecs
from collections.abc import Collection

from harness.artifacts import (
    ArtifactNamesExhaustedError,
    ExtractedArtifact,
    extract_artifacts,
)
from harness.events import Artifact, Error, Event, TextDelta
from harness.streams import UnknownStreamFormatError

__all__ = ["PlainStreamParser", "create"]


class PlainStreamParser:
    """Bytes in, ``text_delta`` per chunk; ``artifact`` events at :meth:`finish`."""

    def __init__(self, existing_names: Collection[str] = ()) -> None:
        if isinstance(existing_names, str):
            raise TypeError("existing_names must be a collection of names, not one string")
        self._existing = frozenset(existing_names)
        # PLAIN-TEXT-001: one incremental decoder for the whole stream, so a
        # UTF-8 sequence split between reads is decoded whole.
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._parts: list[str] = []
        self._finished = False

    def feed(self, data: bytes) -> list[Event]:
        if self._finished:
            raise RuntimeError("PlainStreamParser.feed() called after finish()")
        return self._text(self._decoder.decode(data, final=False))

    def finish(self) -> list[Event]:
        if self._finished:
            return []
        self._finished = True
        out = self._text(self._decoder.decode(b"", final=True))
        stdout = "".join(self._parts)
        self._parts = [stdout]
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
    def text(self) -> str:
        """All stdout text decoded so far (complete after :meth:`finish`)."""
        return "".join(self._parts)

    def _text(self, text: str) -> list[Event]:
        if not text:
            return []
        self._parts.append(text)
        return [TextDelta(delta=text)]


def _artifact_event(artifact: ExtractedArtifact) -> Artifact:
    return Artifact(
        name=artifact.name,
        identifier=artifact.identifier or None,
        artifact_type=artifact.artifact_type,
    )


def create(dialect: str | None) -> PlainStreamParser:
    """Factory for :func:`harness.streams.create_parser`.

    ``plain`` has a single dialect, so a def names no ``event_parser``
    (upstream ignores ``eventParser`` for this format); any other value is a
    definition error.
    """
    if dialect is not None:
        raise UnknownStreamFormatError(
            f"stream format 'plain' takes no event parser, got {dialect!r}"
        )
    return PlainStreamParser()
