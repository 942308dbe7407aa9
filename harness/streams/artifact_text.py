"""``<artifact>`` blocks in a plain CLI's stdout: pure extraction, no files.

Seed 000 §5.13: a ``plain`` CLI's stdout is still an artifact handoff when the model
writes Anthropic-style ``<artifact identifier=… type=…>…</artifact>`` blocks. ref §2.5
gives the upstream algorithm (``extractPlainStreamArtifacts``), followed rule by rule
(the PLAIN-ARTIFACT-* rules cited below). The plain parser calls
:func:`extract_artifacts` at ``finish``; writing the files is
:func:`harness.host.artifacts.write_artifacts`, a layer above (the runner calls it).

"Whitespace" and "trim" mean what they mean in JavaScript (upstream's ``\\s`` and
``String.prototype.trim``), so both implementations split the same stdout the same way.
The scan is O(n log n): openers, closers, quote and backtick positions are indexed once.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Collection
from dataclasses import dataclass

from harness.errors import HarnessError

__all__ = [
    "ARTIFACT_EXTENSIONS",
    "CLOSE_TAG",
    "MAX_ARTIFACTS_PER_RUN",
    "MAX_COLLISION_SUFFIX",
    "OPEN_TAG",
    "ArtifactError",
    "ArtifactNamesExhaustedError",
    "ExtractedArtifact",
    "artifact_slug",
    "extract_artifacts",
    "markdown_skip_ranges",
]

OPEN_TAG = "<artifact"
CLOSE_TAG = "</artifact>"
#: ref §2.5: "Max 50 artifacts per run".
MAX_ARTIFACTS_PER_RUN = 50
#: ref §2.5: collision suffixes run ``-2`` … ``-9999``, then allocation fails.
MAX_COLLISION_SUFFIX = 9999
#: ref §2.5 / seed 000 §5.13 table: normalized ``type`` -> file extension.
ARTIFACT_EXTENSIONS: dict[str, str] = {
    "html": ".html",
    "text/html": ".html",
    "css": ".css",
    "text/css": ".css",
    "svg": ".svg",
    "image/svg+xml": ".svg",
    "markdown": ".md",
    "md": ".md",
    "text/markdown": ".md",
    "text/x-markdown": ".md",
}

#: JavaScript ``\s`` / ``trim()`` whitespace (WhiteSpace + LineTerminator, ES2023).
_JS_WS_CHARS = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_WS = r"[\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"

# Markdown context (ref §2.5; upstream mirrors the web client's markdown-context).
_FENCE_OPEN = re.compile(rf"```(?:[A-Za-z0-9_][A-Za-z0-9_+-]*)?{_WS}*")
_FENCE_CLOSE = re.compile(rf"```{_WS}*")
_HEADING = re.compile(rf"#{{1,4}}{_WS}+")
_UL_ITEM = re.compile(rf"{_WS}*[-*+]{_WS}+")
_OL_ITEM = re.compile(rf"{_WS}*[0-9]+\.{_WS}+")
_BACKTICKS = re.compile(r"`+")
# ref §2.5 attribute regex, with JS \w (ASCII) and \s spelled out.
_ATTR = re.compile(rf"([A-Za-z_:][A-Za-z0-9_:.-]*){_WS}*={_WS}*(?:\"([^\"]*)\"|'([^']*)')")
# ref §2.5: a missing type is HTML when the content starts like an HTML document.
_HTML_DOC = re.compile(rf"{_WS}*(?:<!doctype{_WS}+html\b|<html\b)", re.IGNORECASE | re.ASCII)
_SLUG_RUN = re.compile(r"[^a-z0-9_-]+")


class ArtifactError(HarnessError):
    """Base of the artifact handoff errors."""

    code = "ARTIFACT_ERROR"


class ArtifactNamesExhaustedError(ArtifactError):
    """``stem.ext`` and ``stem-2.ext`` … ``stem-9999.ext`` are all taken (ref §2.5).

    ``allocated`` holds the artifacts named before the failure, in order, so a
    caller can still report (or write) them, as upstream had persisted them.
    """

    code = "ARTIFACT_NAME_EXHAUSTED"

    def __init__(self, desired: str, allocated: list[ExtractedArtifact]) -> None:
        super().__init__(
            f"could not allocate artifact filename for {desired!r}: it and every suffix "
            f"-2 … -{MAX_COLLISION_SUFFIX} are already taken",
            rule="PLAIN-ARTIFACT-COLLIDE-001",
        )
        self.desired = desired
        self.allocated = allocated


@dataclass(frozen=True, slots=True)
class ExtractedArtifact:
    """One ``<artifact>`` block, named for the project (seed 000 §5.13)."""

    #: The project file name: slug + extension, with a ``-N`` suffix on collision.
    name: str
    #: The ``identifier`` attribute as written ('' when absent).
    identifier: str
    #: The normalized type: a key of :data:`ARTIFACT_EXTENSIONS`.
    artifact_type: str
    #: The ``title`` attribute as written ('' when absent).
    title: str
    #: Everything between the opening tag's ``>`` and ``</artifact>``, verbatim.
    content: str
    #: ``.html``, ``.css``, ``.svg`` or ``.md``.
    extension: str


# -- extraction ----------------------------------------------------------------


def extract_artifacts(stdout: str, existing_names: Collection[str] = ()) -> list[ExtractedArtifact]:
    """The supported ``<artifact>`` blocks of ``stdout``, in order, uniquely named.

    ``existing_names`` are the project's current file names; a block whose
    name is taken gets ``-2``, ``-3`` … (PLAIN-ARTIFACT-COLLIDE-001). Raises
    :class:`ArtifactNamesExhaustedError` only when a name and all 9998 suffixed
    forms are taken. Never raises on any ``stdout``.
    """
    if isinstance(existing_names, str):
        raise TypeError("existing_names must be a collection of names, not one string")
    # seed 000 §5.13 / ref §2.5 (PLAIN-ARTIFACT-MAX-001): fast exit without an opener.
    if OPEN_TAG not in stdout:
        return []
    scan = _Scan(stdout)
    reserved = set(existing_names)
    out: list[ExtractedArtifact] = []
    pos = 0
    # ref §2.5 (PLAIN-ARTIFACT-MAX-001): at most 50 artifacts per run.
    while pos < len(stdout) and len(out) < MAX_ARTIFACTS_PER_RUN:
        open_start = scan.next_opener(pos)
        if open_start == -1:
            break
        after_tag = open_start + len(OPEN_TAG)
        next_open = scan.next_opener(after_tag)
        open_end = scan.tag_end(after_tag)
        # ref §2.5 (PLAIN-ARTIFACT-RESYNC-001): unterminated tag -> look past it.
        if open_end == -1:
            pos = after_tag
            continue
        # ref §2.5 (PLAIN-ARTIFACT-RESYNC-001): a real opener inside this tag wins.
        if next_open != -1 and next_open < open_end:
            pos = next_open
            continue
        close_start = scan.next_close(open_end)
        # ref §2.5 (PLAIN-ARTIFACT-RESYNC-001): unclosed -> skip this opener.
        if close_start == -1:
            pos = after_tag
            continue
        # ref §2.5 (PLAIN-ARTIFACT-RESYNC-001): a real opener before the close wins.
        if next_open != -1 and next_open < close_start:
            pos = next_open
            continue
        attrs = _parse_attrs(stdout[after_tag : open_end - 1])
        content = stdout[open_end:close_start]
        artifact_type = _normalize_type(attrs.get("type"), content)
        if artifact_type is not None:
            identifier = attrs.get("identifier", "")
            title = attrs.get("title", "")
            extension = ARTIFACT_EXTENSIONS[artifact_type]
            stem = artifact_slug(identifier, title)
            name = _reserve(stem, extension, reserved, out)
            out.append(
                ExtractedArtifact(name, identifier, artifact_type, title, content, extension)
            )
        pos = close_start + len(CLOSE_TAG)
    return out


def artifact_slug(identifier: str, title: str = "") -> str:
    """The file stem for a block (ref §2.5, PLAIN-ARTIFACT-SLUG-001).

    ``identifier``, else ``title``, else ``artifact``; lowercased; every run of
    characters outside ``[a-z0-9_-]`` becomes one ``-``; leading and trailing
    ``-`` removed; cut to 60 characters; ``artifact`` if nothing is left.
    """
    source = identifier or title or "artifact"
    slug = _SLUG_RUN.sub("-", source.lower()).strip("-")[:60]
    return slug or "artifact"


def markdown_skip_ranges(text: str) -> list[tuple[int, int]]:
    """Sorted, disjoint ``[start, end)`` spans of fenced blocks and inline code spans.

    An ``<artifact`` opener starting inside one of them is quoted code, not an
    artifact (ref §2.5, PLAIN-ARTIFACT-FENCE-001).
    """
    fences = _fence_ranges(text)
    spans = fences + _inline_code_ranges(text, fences)
    spans.sort()
    return spans


def _reserve(
    stem: str, extension: str, reserved: set[str], allocated: list[ExtractedArtifact]
) -> str:
    # ref §2.5 (PLAIN-ARTIFACT-COLLIDE-001): first free of stem.ext, stem-2.ext, …
    desired = f"{stem}{extension}"
    if desired not in reserved:
        reserved.add(desired)
        return desired
    for suffix in range(2, MAX_COLLISION_SUFFIX + 1):
        candidate = f"{stem}-{suffix}{extension}"
        if candidate not in reserved:
            reserved.add(candidate)
            return candidate
    raise ArtifactNamesExhaustedError(desired, list(allocated))


def _normalize_type(raw_type: str | None, content: str) -> str | None:
    # ref §2.5 (PLAIN-ARTIFACT-TYPES-001): trimmed, lowercased, must be in the map;
    # a missing/blank type with an HTML-document body is text/html; else skipped.
    normalized = raw_type.strip(_JS_WS_CHARS).lower() if raw_type is not None else ""
    if normalized and normalized in ARTIFACT_EXTENSIONS:
        return normalized
    if not normalized and _HTML_DOC.match(content):
        return "text/html"
    return None


def _parse_attrs(raw: str) -> dict[str, str]:
    # ref §2.5 (PLAIN-ARTIFACT-OPENER-001): name="value" or name='value'; last wins.
    attrs: dict[str, str] = {}
    for match in _ATTR.finditer(raw):
        double, single = match.group(2), match.group(3)
        attrs[match.group(1)] = double if double is not None else (single or "")
    return attrs


class _Scan:
    """Indexes of one stdout: real openers, closers, and quote positions."""

    def __init__(self, text: str) -> None:
        self._text = text
        skip = markdown_skip_ranges(text)
        skip_starts = [start for start, _ in skip]
        openers: list[int] = []
        for idx in _find_all(text, OPEN_TAG):
            nxt = idx + len(OPEN_TAG)
            # ref §2.5 (PLAIN-ARTIFACT-OPENER-001): `<artifact` then `>` or whitespace.
            if nxt >= len(text) or (text[nxt] != ">" and text[nxt] not in _JS_WS_CHARS):
                continue
            # ref §2.5 (PLAIN-ARTIFACT-FENCE-001): openers in markdown code are skipped.
            at = bisect_right(skip_starts, idx) - 1
            if at >= 0 and idx < skip[at][1]:
                continue
            openers.append(idx)
        self._openers = openers
        self._closes = list(_find_all(text, CLOSE_TAG))
        self._specials: list[int] = []
        self._quotes: dict[str, list[int]] = {'"': [], "'": []}
        for match in re.finditer("[\"'>]", text):
            self._specials.append(match.start())
            if match.group() != ">":
                self._quotes[match.group()].append(match.start())
        self._tag_end: dict[int, int] = {}

    def next_opener(self, start: int) -> int:
        at = bisect_left(self._openers, start)
        return self._openers[at] if at < len(self._openers) else -1

    def next_close(self, start: int) -> int:
        at = bisect_left(self._closes, start)
        return self._closes[at] if at < len(self._closes) else -1

    def tag_end(self, start: int) -> int:
        """Index after the first ``>`` at or after ``start`` outside quotes, or -1.

        ref §2.5 (PLAIN-ARTIFACT-OPENER-001): "attribute scan honours quotes".
        Memoized per quote-free resume point, so all calls together are linear.
        """
        chain: list[int] = []
        pos = start
        result = -1
        while True:
            if pos in self._tag_end:
                result = self._tag_end[pos]
                break
            chain.append(pos)
            at = bisect_left(self._specials, pos)
            if at == len(self._specials):
                break
            idx = self._specials[at]
            char = self._text[idx]
            if char == ">":
                result = idx + 1
                break
            same = self._quotes[char]
            close_at = bisect_right(same, idx)
            if close_at == len(same):
                break
            pos = same[close_at] + 1
        for key in chain:
            self._tag_end[key] = result
        return result


def _find_all(text: str, needle: str) -> list[int]:
    # Neither tag can overlap itself, so successive finds see every occurrence.
    found: list[int] = []
    idx = text.find(needle)
    while idx != -1:
        found.append(idx)
        idx = text.find(needle, idx + len(needle))
    return found


def _lines(text: str) -> list[tuple[int, int, bool]]:
    """``(start, end, has_newline)`` per line, split on ``\\n`` only."""
    out: list[tuple[int, int, bool]] = []
    pos = 0
    while pos < len(text):
        eol = text.find("\n", pos)
        if eol == -1:
            out.append((pos, len(text), False))
            break
        out.append((pos, eol, True))
        pos = eol + 1
    return out


def _fence_ranges(text: str) -> list[tuple[int, int]]:
    # ref §2.5 (PLAIN-ARTIFACT-FENCE-001): fences open and close only on complete
    # (newline-terminated) lines starting with ```; an open fence runs to the end.
    ranges: list[tuple[int, int]] = []
    fence_start = -1
    for start, end, has_newline in _lines(text):
        if not has_newline:
            break
        if fence_start == -1:
            if _FENCE_OPEN.fullmatch(text, start, end):
                fence_start = start
        elif _FENCE_CLOSE.fullmatch(text, start, end):
            ranges.append((fence_start, end + 1))
            fence_start = -1
    if fence_start != -1:
        ranges.append((fence_start, len(text)))
    return ranges


def _inline_blocks(text: str, fences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    # ref §2.5 (PLAIN-ARTIFACT-FENCE-001): code spans are scoped to one paragraph
    # (ended by a blank line, a fence, a heading or a list item), heading or list item.
    blocks: list[tuple[int, int]] = []
    fence_starts = [start for start, _ in fences]
    block_start = -1
    pos = 0
    while pos < len(text):
        at = bisect_right(fence_starts, pos) - 1
        if at >= 0 and pos < fences[at][1]:
            if block_start != -1 and pos > block_start:
                blocks.append((block_start, pos))
            block_start = -1
            pos = fences[at][1]
            continue
        eol = text.find("\n", pos)
        line_end = len(text) if eol == -1 else eol
        line = text[pos:line_end]
        if not line.strip(_JS_WS_CHARS):
            if block_start != -1 and pos > block_start:
                blocks.append((block_start, pos))
            block_start = -1
        elif _HEADING.match(line) or _UL_ITEM.match(line) or _OL_ITEM.match(line):
            if block_start != -1 and pos > block_start:
                blocks.append((block_start, pos))
            block_start = -1
            blocks.append((pos, line_end))
        elif block_start == -1:
            block_start = pos
        pos = len(text) if eol == -1 else eol + 1
    if block_start != -1 and len(text) > block_start:
        blocks.append((block_start, len(text)))
    return blocks


def _inline_code_ranges(text: str, fences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    # ref §2.5 (PLAIN-ARTIFACT-FENCE-001): a backtick run opens a span closed by
    # the next run of the same length in the same block; unmatched runs are text.
    ranges: list[tuple[int, int]] = []
    for start, end in _inline_blocks(text, fences):
        runs = [(m.start(), m.end() - m.start()) for m in _BACKTICKS.finditer(text, start, end)]
        by_length: dict[int, list[int]] = {}
        for index, (_, length) in enumerate(runs):
            by_length.setdefault(length, []).append(index)
        index = 0
        while index < len(runs):
            run_start, length = runs[index]
            same = by_length[length]
            nxt = bisect_right(same, index)
            if nxt == len(same):
                index += 1
                continue
            close = same[nxt]
            ranges.append((run_start, runs[close][0] + length))
            index = close + 1
    return ranges
