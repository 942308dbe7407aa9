"""Citations outside the rule catalog: comments, docstrings and design notes.

The catalog's citations are held to ``docs/spec/`` by :mod:`conformance.rules.spec`;
the same ``<document> §<section>`` citations in the code's comments and docstrings and
in the Markdown notes (``docs/design/``, ``CONTRIBUTING.md``, ``README.md``) are held
here, found by :func:`conformance.rules.citations.find_citations`. In the Markdown each
citation is also a link to its section, so a reader can follow it:
``[seed 002 §6.3](../spec/adapter-layer.md#seed-002-6.3)``.
``python -m conformance.rules.prose --check`` lists what does not resolve;
``--link`` turns the Markdown's plain citations into links.
"""

from __future__ import annotations

import argparse
import ast
import io
import os
import re
import sys
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.rules.citations import DOCUMENTS, SPEC_DIR, find_citations
from conformance.rules.spec import SpecProblem, anchors_in

__all__ = [
    "CODE_DIRS",
    "NOTES",
    "check",
    "link_markdown",
    "main",
    "markdown_problems",
    "python_problems",
    "spec_anchors",
]

#: Where comments and docstrings are read (repository-relative).
CODE_DIRS = ("harness", "conformance", "fake_clis", "tests", "benchmarks", "scripts")
#: The Markdown notes whose citations must be links (files, or folders of ``*.md``).
NOTES = ("docs/design", "CONTRIBUTING.md", "README.md")

#: A Markdown link: its text and its target.
_LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _root() -> Path:
    return Path(__file__).resolve().parents[2]


def spec_anchors(root: Path) -> set[str]:
    """Every explicit anchor of ``docs/spec/``."""
    found: set[str] = set()
    for doc in DOCUMENTS.values():
        path = root / SPEC_DIR / doc.file
        if path.is_file():
            found.update(anchors_in(path.read_text("utf-8")))
    return found


@dataclass(frozen=True)
class _Prose:
    """A run of prose in a source file: its first line (1-based) and its text."""

    line: int
    text: str


def _python_prose(source: str) -> Iterator[_Prose]:
    """The comments (consecutive lines joined) and the docstrings of a Python source:
    every string that stands alone as a statement."""
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield _Prose(node.lineno, node.value.value)
    block: list[str] = []
    first = last = 0
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        row = token.start[0]
        if block and row != last + 1:
            yield _Prose(first, "\n".join(block))
            block = []
        if not block:
            first = row
        block.append(token.string)
        last = row
    if block:
        yield _Prose(first, "\n".join(block))


def _where(path: str, prose: _Prose, offset: int) -> str:
    return f"{path}:{prose.line + prose.text.count(chr(10), 0, offset)}"


def python_problems(path: str, source: str, anchors: set[str]) -> list[SpecProblem]:
    """Each citation in the comments and docstrings of ``source`` that does not resolve."""
    problems: list[SpecProblem] = []
    for prose in _python_prose(source):
        for cited in find_citations(prose.text, anchors):
            if cited.problem is not None:
                text = prose.text[cited.start : cited.end]
                problems.append(
                    SpecProblem(_where(path, prose, cited.start), f"{text!r}: {cited.problem}")
                )
    return problems


def _relative(link: str, note: str) -> str:
    """``link`` (repository-relative) as seen from the Markdown file ``note``."""
    return os.path.relpath(link.partition("#")[0], os.path.dirname(note) or ".") + (
        "#" + link.partition("#")[2] if "#" in link else ""
    )


def _blanked(text: str) -> str:
    """``text`` with fenced code blocks blanked out (same length, lines kept)."""
    return _FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def markdown_problems(path: str, text: str, anchors: set[str]) -> list[SpecProblem]:
    """Each citation of the note ``path`` that does not resolve or is not a link to its
    section, and each link into ``docs/spec/`` whose anchor does not exist."""
    problems: list[SpecProblem] = []
    prose = _Prose(1, _blanked(text))
    links = list(_LINK.finditer(prose.text))
    for cited in find_citations(prose.text, anchors):
        where = _where(path, prose, cited.start)
        shown = prose.text[cited.start : cited.end]
        if cited.problem is not None or cited.link is None:
            problems.append(SpecProblem(where, f"{shown!r}: {cited.problem}"))
            continue
        if _in_code(prose.text, cited.start):
            continue  # a code span shows a citation as it is written
        wanted = _relative(cited.link, path)
        around = [m for m in links if m.start("text") <= cited.start and cited.end <= m.end("text")]
        if not around:
            problems.append(SpecProblem(where, f"{shown!r} is not a link (to {wanted})"))
        elif around[0]["target"] != wanted:
            problems.append(
                SpecProblem(where, f"{shown!r} links to {around[0]['target']}, not {wanted}")
            )
    spec_dir = os.path.relpath(SPEC_DIR, os.path.dirname(path) or ".")
    for match in links:
        file, _, anchor = match["target"].partition("#")
        if file.startswith(spec_dir + "/") and anchor and anchor not in anchors:
            where = _where(path, prose, match.start())
            problems.append(SpecProblem(where, f"link {match['target']} names no anchor"))
    return problems


def link_markdown(path: str, text: str, anchors: set[str]) -> str:
    """``text`` with each resolvable citation that is not inside a link made one."""
    blank = _blanked(text)
    links = [(m.start(), m.end()) for m in _LINK.finditer(blank)]
    out: list[str] = []
    done = 0
    for cited in find_citations(blank, anchors):
        if cited.problem is not None or cited.link is None:
            continue
        if any(s <= cited.start < e for s, e in links) or _in_code(blank, cited.start):
            continue
        out.append(text[done : cited.start])
        out.append(f"[{text[cited.start : cited.end]}]({_relative(cited.link, path)})")
        done = cited.end
    out.append(text[done:])
    return "".join(out)


def _in_code(text: str, at: int) -> bool:
    """Whether ``at`` lies inside an inline code span of its line."""
    line_start = text.rfind("\n", 0, at) + 1
    return text.count("`", line_start, at) % 2 == 1


def _notes(root: Path) -> list[Path]:
    found: list[Path] = []
    for name in NOTES:
        path = root / name
        found.extend(sorted(path.glob("*.md")) if path.is_dir() else [path])
    return [p for p in found if p.is_file()]


def _sources(root: Path) -> list[Path]:
    return sorted(
        p for d in CODE_DIRS for p in (root / d).rglob("*.py") if "__pycache__" not in p.parts
    )


def check(root: Path | None = None) -> list[SpecProblem]:
    """Every citation under ``root`` (comments, docstrings, notes) that does not
    resolve to an anchor of ``docs/spec/``, and every note's citation that is not a link."""
    base = _root() if root is None else root
    anchors = spec_anchors(base)
    problems: list[SpecProblem] = []
    for path in _sources(base):
        rel = path.relative_to(base).as_posix()
        problems.extend(python_problems(rel, path.read_text("utf-8"), anchors))
    for path in _notes(base):
        rel = path.relative_to(base).as_posix()
        problems.extend(markdown_problems(rel, path.read_text("utf-8"), anchors))
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.rules.prose",
        description="Hold the citations in comments, docstrings and notes to docs/spec/.",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="report what does not resolve")
    mode.add_argument("--link", action="store_true", help="link the notes' plain citations")
    args = parser.parse_args(argv)
    base = _root()
    if args.link:
        anchors = spec_anchors(base)
        for path in _notes(base):
            text = path.read_text("utf-8")
            new = link_markdown(path.relative_to(base).as_posix(), text, anchors)
            if new != text:
                path.write_text(new, "utf-8", newline="\n")
                print(f"linked {path.relative_to(base).as_posix()}")
        return 0
    problems = check(base)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
