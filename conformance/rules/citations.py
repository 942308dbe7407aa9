"""Where a rule's citation points: pure citation -> ``docs/spec/`` link resolution.

A citation names a section of a source document (``"seed 002 §6.3"``, ``"ref §2.8"``,
``"wire §A.0"``, ``"design §Recordings"``); ``docs/spec/`` restates each source in the
project's own words, one file per source, one explicit anchor per cited section.
:func:`resolve` maps a citation to its links without touching the disk. It sits below
the catalog (``Rule.links`` uses it); :mod:`conformance.rules.spec` holds the Markdown
to the catalog.

Citation grammar: parts separated by ``;``. A part is ``<document> §<section>`` with an
optional trailing ``(gloss)`` that names the topic and does not change the anchor, or
``<product> <version> in <path>`` naming captured evidence kept in the repository
(``recordings/...``), which links to that path.

:func:`find_citations` finds the same ``<document> §<section>`` citations in prose (a
comment, a docstring, a design note), where a bare ``§<section>`` after a connector
(``seed 001 §11 / §14``) continues the last document named.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

__all__ = [
    "DOCUMENTS",
    "SPEC_DIR",
    "CitationError",
    "Cited",
    "SpecDocument",
    "anchor_for",
    "find_citations",
    "resolve",
]

#: Repository-relative directory of the restated spec.
SPEC_DIR = "docs/spec"


@dataclass(frozen=True)
class SpecDocument:
    """One source document and the file of ``docs/spec/`` that restates it."""

    #: How citations name it, e.g. ``"seed 002"``.
    key: str
    #: File under ``docs/spec/``.
    file: str
    #: Anchor prefix; a section's anchor is ``<prefix>-<section slug>``.
    prefix: str
    #: The source's title.
    title: str


DOCUMENTS: dict[str, SpecDocument] = {
    d.key: d
    for d in (
        SpecDocument("seed 000", "adapters.md", "seed-000", "Agent Adapters"),
        SpecDocument(
            "seed 001", "dsh-profile.md", "seed-001", "DeepSeek Harness profile adapter design"
        ),
        SpecDocument(
            "seed 002",
            "adapter-layer.md",
            "seed-002",
            "适配 25 家 CLI：RuntimeAgentDef 与双向 MCP (adapter layer deep read)",
        ),
        SpecDocument(
            "ref", "upstream-behaviour.md", "ref", "Open Design adapter layer — behaviour reference"
        ),
        SpecDocument(
            "wire", "wire-formats.md", "wire", "Wire formats and conformance-harness anchors"
        ),
        SpecDocument("design", "design.md", "design", "adapter-harness — design"),
    )
}

_SECTION_PART = re.compile(
    r"^(?P<doc>seed 00[012]|ref|wire|design) §(?P<section>[^();]+?)\s*(?:\((?P<gloss>[^()]*)\))?$"
)
_EVIDENCE_PART = re.compile(r"^(?P<what>\S.*?) in (?P<path>recordings/[\w./+-]+)$")
_SLUG_DROP = re.compile(r"[^a-z0-9.]+")


class CitationError(ValueError):
    """A citation (or one of its ``;`` parts) that names no section ``docs/spec/`` can hold."""


def _slug(section: str) -> str:
    return _SLUG_DROP.sub("-", section.lower()).strip("-")


def anchor_for(document: str, section: str) -> str:
    """The anchor of ``section`` of ``document`` (e.g. ``("wire", "A.1.2")`` → ``wire-a.1.2``)."""
    try:
        doc = DOCUMENTS[document]
    except KeyError:
        raise CitationError(
            f"unknown document {document!r}; known: {', '.join(DOCUMENTS)}"
        ) from None
    slug = _slug(section)
    if not slug:
        raise CitationError(f"{document} cites an empty section {section!r}")
    return f"{doc.prefix}-{slug}"


def resolve(citation: str) -> tuple[str, ...]:
    """The repository-relative links a citation points to, one per ``;`` part.

    ``"seed 002 §6.3; ref §2.8"`` → ``("docs/spec/adapter-layer.md#seed-002-6.3",
    "docs/spec/upstream-behaviour.md#ref-2.8")``. Raises :class:`CitationError`
    naming the part that does not parse. Pure: it does not check that the anchor
    exists (:func:`check` does).
    """
    links: list[str] = []
    for index, raw in enumerate(citation.split(";")):
        part = raw.strip()
        section = _SECTION_PART.match(part)
        if section is not None:
            doc = DOCUMENTS[section["doc"]]
            links.append(f"{SPEC_DIR}/{doc.file}#{anchor_for(doc.key, section['section'])}")
            continue
        evidence = _EVIDENCE_PART.match(part)
        if evidence is not None and index > 0:
            links.append(evidence["path"].rstrip("/"))
            continue
        raise CitationError(
            f"citation {citation!r}: part {index + 1} {part!r} is neither "
            "'<document> §<section>' (documents: "
            + ", ".join(DOCUMENTS)
            + ") nor, after a first section, '<product> <version> in recordings/<path>'"
        )
    return tuple(links)


# -- citations in prose ----------------------------------------------------------

#: A numbered section (``6.3``, ``2.1.8``, ``A.1.2``, ``10``); a trailing full stop ends
#: the sentence, not the section.
_NUMBERED = re.compile(r"[A-Z]?\d+(?:\.\d+)*(?!\w)|[A-Z](?:\.\d+)+(?!\w)")
#: A word of a named section (``Recordings``, ``Live mode``, ``Who uses it``).
_WORD = re.compile(r"\s*([A-Za-z0-9][\w-]*)")
#: At most this many words name a section.
_MOST_WORDS = 5
#: What comes right before ``§`` when it names the document: ``seed 002``, a seed's
#: number alone (``seed 000 §4, 002 §8.1``), ``ref``, ``wire``, ``design`` (any case).
_DOCUMENT_BEFORE = re.compile(
    r"(?:\bseed\s+)?\b(?P<seed>\d{3})\s*$|\b(?P<word>[A-Za-z][\w.-]*)\s*$", re.IGNORECASE
)
#: What may come right before a bare ``§`` that continues the last document named: a
#: list or range separator, ``and``/``or``, an opening bracket, or nothing on the line.
_CONTINUES = re.compile(r"(?:[,/&;(\[\-–]|\band|\bor)\s*$|^[\s#:*>\"'`(\[-]*$")


@dataclass(frozen=True)
class Cited:
    """One ``§`` citation found in prose: where its text is (``start``/``end`` offsets,
    from the document's name or the bare sign through the section), what it cites, and
    where it points (``link``, repository-relative) or why it points nowhere
    (``problem``)."""

    start: int
    end: int
    document: str | None
    section: str
    link: str | None
    problem: str | None = None


def _section_at(text: str, at: int, document: str, anchors: Container[str]) -> tuple[str, int]:
    """The section cited at ``text[at:]`` and where its text ends: a numbered one, or
    the longest run of words that names an anchor of ``document`` (the first word when
    none does)."""
    numbered = _NUMBERED.match(text, at)
    if numbered is not None:
        return numbered.group(), numbered.end()
    words: list[re.Match[str]] = []
    end = at
    while len(words) < _MOST_WORDS:
        word = _WORD.match(text, end)
        if word is None or (words and "\n\n" in text[end : word.start(1)]):
            break
        words.append(word)
        end = word.end()
    for size in range(len(words), 0, -1):
        section = " ".join(w.group(1) for w in words[:size])
        if _anchor_or_none(document, section) in anchors:
            return section, words[size - 1].end()
    return (words[0].group(1), words[0].end()) if words else ("", at)


def _anchor_or_none(document: str, section: str) -> str | None:
    try:
        return anchor_for(document, section)
    except CitationError:
        return None


def _document_before(text: str, at: int, last: str | None) -> tuple[int, str | None, str | None]:
    """For the ``§`` at ``text[at]``: where its citation starts, its document (a key of
    :data:`DOCUMENTS`), and a problem when it has none. A sign that opens a line may
    take its document from the end of the line before."""
    line = text.rfind("\n", 0, at) + 1
    before = text[max(line, at - 40) : at]
    if line > 0 and _CONTINUES.fullmatch(before) is not None and _LINE_START.fullmatch(before):
        above = text.rfind("\n", 0, line - 1) + 1
        named = _DOCUMENT_BEFORE.search(text, max(above, line - 41), line - 1)
        document = _document_of(named)
        if named is not None and document is not None:
            return named.start(), document, None
    named = _DOCUMENT_BEFORE.search(before)
    document = _document_of(named)
    if named is not None and document is not None:
        return at - len(before) + named.start(), document, None
    if _CONTINUES.search(before) is not None:
        if last is None:
            return at, None, "a bare § with no document named before it"
        return at, last, None
    word = named["word"] if named is not None else before.strip()[-20:]
    return at, None, f"unknown document {word!r} (documents: {', '.join(DOCUMENTS)})"


#: A line's start before a sign: only blanks, comment marks and opening punctuation.
_LINE_START = re.compile(r"[\s#:*>\"'`(\[-]*")


def _document_of(named: re.Match[str] | None) -> str | None:
    if named is None:
        return None
    if named["seed"] is not None:
        return f"seed {named['seed']}"
    word = named["word"].lower()
    return word if word in DOCUMENTS else None


def find_citations(text: str, anchors: Container[str]) -> list[Cited]:
    """Every ``§`` citation in ``text``, resolved against ``anchors`` (the anchors that
    exist in ``docs/spec/``; they also decide where a named section ends).

    ``seed 002 §6.3``, ``ref §2.8``, ``wire §A.0``, ``design §Live mode``; a seed's
    number alone (``seed 000 §4, 002 §8.1``); a section with no document of its own
    (``seed 001 §11 / §14``) after ``,``, ``/``, ``-``, ``and``, ``or``, ``(`` or alone
    at a line's start continues the last document named before it in the same
    paragraph. Any other word before the sign is an unknown
    document. A sign followed by no section (a ``§`` quoted alone) cites nothing.
    """
    found: list[Cited] = []
    last: str | None = None
    paragraph = 0
    for sign in re.finditer("§", text):
        at = sign.start()
        if not re.match(r"[A-Za-z0-9]", text[at + 1 : at + 2]):
            continue
        blank = text.rfind("\n\n", paragraph, at)
        if blank != -1:
            paragraph, last = blank + 2, None
        start, document, problem = _document_before(text, at, last)
        if document is None or problem is not None:
            found.append(Cited(start, at + 1, None, "", None, problem))
            continue
        last = document
        section, end = _section_at(text, at + 1, document, anchors)
        anchor = anchor_for(document, section)
        spec_file = f"{SPEC_DIR}/{DOCUMENTS[document].file}"
        missing = None if anchor in anchors else f"{spec_file} has no anchor {anchor!r}"
        found.append(Cited(start, end, document, section, f"{spec_file}#{anchor}", missing))
    return found
