"""Where a rule's citation points: a section of ``docs/spec/``.

A citation names a section of a source document (``"seed 002 §6.3"``,
``"ref §2.8"``, ``"wire §A.0"``, ``"design §Recordings"``); ``docs/spec/`` restates
each source in the project's own words, one file per source, one explicit anchor
per cited section. :func:`resolve` (:mod:`conformance.rules.citations`) maps a citation to its
links without touching the disk; :func:`check` and :func:`write` (``python -m conformance.rules.spec
--check`` / ``--write``) hold the Markdown to the catalog: every anchor a rule
cites exists, and the rule-id block under each section lists exactly the rules
that cite it.

Citation grammar: parts separated by ``;``. A part is ``<document> §<section>``
with an optional trailing ``(gloss)`` that names the topic and does not change
the anchor, or ``<product> <version> in <path>`` naming captured evidence kept in
the repository (``recordings/...``), which links to that path.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.rules import Rule, all_rules
from conformance.rules.citations import (
    DOCUMENTS,
    SPEC_DIR,
    CitationError,
    SpecDocument,
    anchor_for,
    resolve,
)

__all__ = [
    "DOCUMENTS",
    "SPEC_DIR",
    "CitationError",
    "SpecDocument",
    "SpecProblem",
    "anchor_for",
    "anchors_in",
    "check",
    "main",
    "render_blocks",
    "resolve",
    "write",
]

_ANCHOR = re.compile(r"""<a\s+id=["']([^"']+)["']\s*>\s*</a>""")
_BLOCK = re.compile(
    r"(?P<begin><!-- rules:begin (?P<anchor>[^ >]+) -->\n)(?P<body>.*?)(?P<end><!-- rules:end -->)",
    re.DOTALL,
)


# -- the Markdown side ---------------------------------------------------------


@dataclass(frozen=True)
class SpecProblem:
    """One way ``docs/spec/`` and the catalog disagree."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def _default_root() -> Path:
    return Path(__file__).resolve().parents[2]


def anchors_in(text: str) -> list[str]:
    """The explicit anchors (``<a id="..."></a>``) of a Markdown text, in order."""
    return _ANCHOR.findall(text)


def _citing(rules: Iterable[Rule]) -> dict[str, list[str]]:
    """Link → ids of the rules whose citation points there (sorted)."""
    out: dict[str, list[str]] = {}
    for rule in rules:
        for link in resolve(rule.citation):
            out.setdefault(link, []).append(rule.id)
    return {link: sorted(set(ids)) for link, ids in out.items()}


def _block_body(ids: Sequence[str]) -> str:
    if not ids:
        return "No rule in the catalog cites this section.\n"
    noun = "rule" if len(ids) == 1 else "rules"
    return f"Enforced by {len(ids)} {noun}: " + ", ".join(f"`{i}`" for i in ids) + ".\n"


def render_blocks(text: str, file: str, citing: Mapping[str, Sequence[str]]) -> str:
    """``text`` with every ``rules:begin <anchor>`` block regenerated from ``citing``."""

    def fill(match: re.Match[str]) -> str:
        ids = citing.get(f"{SPEC_DIR}/{file}#{match['anchor']}", ())
        return match["begin"] + _block_body(ids) + match["end"]

    return _BLOCK.sub(fill, text)


def check(root: Path | None = None, rules: Iterable[Rule] | None = None) -> list[SpecProblem]:
    """Every disagreement between ``docs/spec/`` under ``root`` and the catalog.

    A citation that does not parse, a cited anchor or path that does not exist,
    a cited anchor without a rule-id block, an anchor defined twice, a block
    under no anchor, and a block whose ids are stale.
    """
    base = _default_root() if root is None else root
    rule_list = list(all_rules().values()) if rules is None else list(rules)
    problems: list[SpecProblem] = []
    citing: dict[str, list[str]] = {}
    for rule in rule_list:
        try:
            for link in resolve(rule.citation):
                citing.setdefault(link, []).append(rule.id)
        except CitationError as exc:
            problems.append(SpecProblem(rule.id, str(exc)))
    citing = {link: sorted(set(ids)) for link, ids in citing.items()}

    texts: dict[str, str] = {}
    for doc in DOCUMENTS.values():
        path = base / SPEC_DIR / doc.file
        if not path.is_file():
            problems.append(SpecProblem(f"{SPEC_DIR}/{doc.file}", "file missing"))
            continue
        text = path.read_text(encoding="utf-8")
        texts[doc.file] = text
        anchors = anchors_in(text)
        seen: set[str] = set()
        for anchor in anchors:
            if anchor in seen:
                problems.append(SpecProblem(f"{SPEC_DIR}/{doc.file}", f"anchor {anchor!r} twice"))
            seen.add(anchor)
        blocks = [m["anchor"] for m in _BLOCK.finditer(text)]
        for anchor in blocks:
            if anchor not in seen:
                problems.append(
                    SpecProblem(
                        f"{SPEC_DIR}/{doc.file}", f"rules block for unknown anchor {anchor!r}"
                    )
                )
        if render_blocks(text, doc.file, citing) != text:
            problems.append(
                SpecProblem(
                    f"{SPEC_DIR}/{doc.file}",
                    "rule-id blocks are stale; run `python -m conformance.rules.spec --write`",
                )
            )
    for link, ids in sorted(citing.items()):
        where = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        file, _, anchor = link.partition("#")
        if not anchor:
            if not (base / file).exists():
                problems.append(SpecProblem(where, f"cited path {file!r} does not exist"))
            continue
        name = file.removeprefix(f"{SPEC_DIR}/")
        if name not in texts:
            continue  # already reported as a missing file
        if anchor not in anchors_in(texts[name]):
            problems.append(SpecProblem(where, f"cites {link} but {file} has no anchor {anchor!r}"))
        elif f"<!-- rules:begin {anchor} -->" not in texts[name]:
            problems.append(SpecProblem(where, f"{file} has no rules block for anchor {anchor!r}"))
    return problems


def write(root: Path | None = None) -> list[Path]:
    """Regenerate every rule-id block under ``root``; return the files that changed."""
    base = _default_root() if root is None else root
    citing = _citing(all_rules().values())
    changed: list[Path] = []
    for doc in DOCUMENTS.values():
        path = base / SPEC_DIR / doc.file
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        new = render_blocks(text, doc.file, citing)
        if new != text:
            path.write_text(new, encoding="utf-8", newline="\n")
            changed.append(path)
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.rules.spec",
        description="Hold docs/spec/ to the rule catalog.",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="report disagreements; exit 1 if any")
    mode.add_argument("--write", action="store_true", help="regenerate the rule-id blocks")
    args = parser.parse_args(argv)
    if args.write:
        for path in write():
            print(f"updated {path}")
    problems = check()
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
