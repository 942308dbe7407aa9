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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DOCUMENTS", "SPEC_DIR", "CitationError", "SpecDocument", "anchor_for", "resolve"]

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
