"""Module docstrings stay short and their design links resolve.

A module docstring says what the module does and why in a few lines; the longer design
discussion lives in ``docs/design/<topic>.md`` and the docstring links to it. This test
fails on a docstring over :data:`MAX_LINES` lines (nothing is allow-listed) and on a
``docs/design/...md`` link (with an optional ``#anchor``) that names a missing file or
an anchor the file does not define.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conformance.rules.spec import anchors_in

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("harness", "conformance", "fake_clis")
MAX_LINES = 20
#: ``docs/design/runner.md`` or ``docs/design/runner.md#harness.runner.status``.
DESIGN_LINK = re.compile(r"docs/design/(?P<file>[\w.-]+\.md)(?:#(?P<anchor>[\w.-]*\w))?")


def _modules() -> list[Path]:
    return sorted(p for top in PACKAGES for p in (ROOT / top).rglob("*.py"))


def docstring_problems(source: str, where: str, root: Path = ROOT) -> list[str]:
    """Why the module docstring in ``source`` (from ``where``) breaks the rules above."""
    doc = ast.get_docstring(ast.parse(source), clean=False)
    if doc is None:
        return []
    problems = []
    lines = len(doc.strip("\n").splitlines())
    if lines > MAX_LINES:
        problems.append(f"{where}: module docstring has {lines} lines (at most {MAX_LINES})")
    for link in DESIGN_LINK.finditer(doc):
        target = root / "docs" / "design" / link["file"]
        if not target.is_file():
            problems.append(f"{where}: {link[0]}: no such file")
        elif link["anchor"] and link["anchor"] not in anchors_in(target.read_text("utf-8")):
            problems.append(f"{where}: {link[0]}: no anchor {link['anchor']!r} in the file")
    return problems


def test_module_docstrings_are_short_and_their_design_links_resolve() -> None:
    problems = [
        problem
        for path in _modules()
        for problem in docstring_problems(path.read_text("utf-8"), str(path.relative_to(ROOT)))
    ]
    assert not problems, "\n".join(problems)


def test_the_design_notes_are_reached_from_a_docstring() -> None:
    """Every design note with a module section is linked from that module."""
    linked = {
        (link["file"], link["anchor"])
        for path in _modules()
        for link in DESIGN_LINK.finditer(
            ast.get_docstring(ast.parse(path.read_text("utf-8"))) or ""
        )
    }
    modules = {
        str(p.relative_to(ROOT).with_suffix("")).replace("/", ".").removesuffix(".__init__")
        for p in _modules()
    }
    orphans = [
        f"docs/design/{doc.name}#{anchor}"
        for doc in sorted((ROOT / "docs" / "design").glob("*.md"))
        for anchor in anchors_in(doc.read_text("utf-8"))
        if anchor in modules and (doc.name, anchor) not in linked
    ]
    assert not orphans, "sections no module docstring links to:\n" + "\n".join(orphans)


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ("\n".join(["Line."] * (MAX_LINES + 1)), f"has {MAX_LINES + 1} lines"),
        ("Short.\n\nDesign: docs/design/no-such-topic.md\n", "no such file"),
        ("Short.\n\nDesign: docs/design/notes.md#missing.anchor\n", "no anchor 'missing.anchor'"),
    ],
)
def test_the_checker_catches_a_broken_docstring(tmp_path: Path, doc: str, expected: str) -> None:
    (tmp_path / "docs" / "design").mkdir(parents=True)
    (tmp_path / "docs" / "design" / "notes.md").write_text('<a id="present"></a>\n# Notes\n')
    problems = docstring_problems(f'"""{doc}"""\n', "m.py", root=tmp_path)
    assert len(problems) == 1
    assert expected in problems[0]


def test_the_checker_accepts_a_short_docstring_with_a_resolving_link(tmp_path: Path) -> None:
    (tmp_path / "docs" / "design").mkdir(parents=True)
    (tmp_path / "docs" / "design" / "notes.md").write_text('<a id="pkg.mod"></a>\n# Notes\n')
    doc = '"""What and why.\n\nDesign: docs/design/notes.md#pkg.mod\n"""\n'
    assert docstring_problems(doc, "m.py", root=tmp_path) == []
