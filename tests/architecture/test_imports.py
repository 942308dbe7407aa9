"""The import graph: no cycles, and every function-level import says why.

``lint-imports`` (contracts in pyproject.toml) holds the layers. This test holds what the
layers cannot: no cycle between modules of one layer, counting imports at any depth
(module level, inside functions, under ``TYPE_CHECKING``), and an import inside a function
only where it needs to be there (start-up time, a platform-only module), with a comment
saying why: on the import's line, on the line above it or its group, or above the
function.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("harness", "conformance", "fake_clis")


@dataclass(frozen=True)
class ImportSite:
    """One internal import: who imports what, where, and whether it sits in a function."""

    importer: str
    imported: str
    path: Path
    line: int
    in_function: bool
    explained: bool


def module_files(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``packages`` under ``root``."""
    out: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _targets(node: ast.Import | ast.ImportFrom, module: str, files: Mapping[str, Path]) -> set[str]:
    """The project modules an import statement loads (a name imported from a package
    counts as its submodule when one has that name)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".")
            if files[module].name != "__init__.py":
                package.pop()
            package = package[: len(package) - node.level + 1]
            base = ".".join([*package, base] if base else package)
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
    found: set[str] = set()
    for name in names:
        known = name
        while known and known not in files:
            known = known.rpartition(".")[0]
        if known and known != module:
            found.add(known)
    return found


def _is_comment(line: str) -> bool:
    return line.strip().startswith("#")


def _explained(node: ast.stmt, lines: list[str], function: ast.stmt, body: list[ast.stmt]) -> bool:
    """A comment on the import's line, above it, above the run of imports it belongs to,
    or above the function (its first decorator)."""
    if "#" in lines[node.lineno - 1]:
        return True
    index = body.index(node)
    while index > 0 and isinstance(body[index - 1], (ast.Import, ast.ImportFrom)):
        index -= 1
    first = body[index]
    if first.lineno >= 2 and _is_comment(lines[first.lineno - 2]):
        return True
    top = min([function.lineno, *(d.lineno for d in getattr(function, "decorator_list", []))])
    return top >= 2 and _is_comment(lines[top - 2])


def import_sites(root: Path, packages: Iterable[str]) -> Iterator[ImportSite]:
    """Every import of a project module by a project module, at any depth."""
    files = module_files(root, packages)
    for module, path in files.items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        yield from _walk(
            ast.parse(text), module, path=path, lines=lines, files=files, function=None
        )


def _walk(
    node: ast.AST,
    module: str,
    *,
    path: Path,
    lines: list[str],
    files: Mapping[str, Path],
    function: ast.stmt | None,
) -> Iterator[ImportSite]:
    for field in ("body", "orelse", "finalbody", "handlers"):
        block = getattr(node, field, None)
        if not isinstance(block, list):
            continue
        for child in block:
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                explained = function is None or _explained(child, lines, function, block)
                for target in sorted(_targets(child, module, files)):
                    yield ImportSite(
                        module, target, path, child.lineno, function is not None, explained
                    )
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from _walk(child, module, path=path, lines=lines, files=files, function=child)
            elif isinstance(child, ast.AST):
                yield from _walk(
                    child, module, path=path, lines=lines, files=files, function=function
                )


def cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _describe(component: list[str], sites: Iterable[ImportSite]) -> str:
    members = set(component)
    inside = [s for s in sites if s.importer in members and s.imported in members]
    edges = ", ".join(f"{s.importer}:{s.line} -> {s.imported}" for s in inside)
    return f"{' <-> '.join(component)} ({edges})"


def test_no_module_imports_itself_back() -> None:
    sites = list(import_sites(ROOT, PACKAGES))
    assert sites, "no imports found: the scan is broken"
    found = cycles((s.importer, s.imported) for s in sites)
    assert not found, "import cycles (move the shared piece down a layer):\n" + "\n".join(
        _describe(c, sites) for c in found
    )


def test_every_function_level_import_says_why() -> None:
    sites = list(import_sites(ROOT, PACKAGES))
    assert any(s.in_function for s in sites), "no function-level import found: scan is broken"
    bare = sorted({f"{s.path.relative_to(ROOT)}:{s.line}" for s in sites if not s.explained})
    assert not bare, (
        "imports inside a function without a comment saying why (move them to the top of "
        "the module, or say why they must wait: start-up time, a platform-only module):\n"
        + "\n".join(bare)
    )


def _package(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_scan_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import helper\n",
            "pkg/b.py": "def helper() -> None:\n    from pkg import a\n",
            "pkg/c.py": "from . import a\n",
        },
    )
    sites = list(import_sites(tmp_path, ["pkg"]))
    assert cycles((s.importer, s.imported) for s in sites) == [["pkg.a", "pkg.b"]]
    assert [(s.importer, s.line) for s in sites if not s.explained] == [("pkg.b", 2)]
    assert ("pkg.c", "pkg.a") in {(s.importer, s.imported) for s in sites}


def test_a_comment_explains_an_import_its_group_or_its_function(tmp_path: Path) -> None:
    _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/x.py": "",
            "pkg/y.py": "",
            "pkg/use.py": (
                "def on_line() -> None:\n"
                "    import pkg.x  # start-up: only this command needs it\n"
                "def group() -> None:\n"
                "    # start-up: both wait for the command\n"
                "    import pkg.x\n"
                "    import pkg.y\n"
                "# start-up: the whole function waits\n"
                "def above() -> None:\n"
                "    import pkg.y\n"
                "def bare() -> None:\n"
                "    x = 1\n"
                "    import pkg.y\n"
            ),
        },
    )
    sites = [s for s in import_sites(tmp_path, ["pkg"]) if s.importer == "pkg.use"]
    assert [(s.line, s.explained) for s in sites] == [
        (2, True),
        (5, True),
        (6, True),
        (9, True),
        (12, False),
    ]
