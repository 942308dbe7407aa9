"""Every module of harness/ sits in a layer of the import contract.

``lint-imports`` holds the imports of the modules the ``layers`` contract names; a module it
does not name is held by nothing, so a new module dropped at the top of ``harness/`` (or in
a package spanning two layers) would slip past it. This test fails on one. A package whose
``__init__`` imports nothing (a docstring, a version) needs no layer of its own.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from tests.architecture.test_imports import module_files

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest itself depends on tomli before Python 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def layer_modules(pyproject: str) -> list[str]:
    """The module names the ``layers`` contract lists, in every layer."""
    contracts = tomllib.loads(pyproject)["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c["id"] == "layers"]
    return [name.strip() for layer in layers for name in layer.replace("|", ":").split(":") if name]


def _imports_nothing(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return not any(
        isinstance(node, (ast.Import, ast.ImportFrom))
        and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
        for node in ast.walk(tree)
    )


def unlayered(files: Mapping[str, Path], layers: Iterable[str]) -> list[str]:
    """Modules of ``files`` under no layer, except namespace packages that import nothing."""
    names = list(layers)
    return sorted(
        module
        for module, path in files.items()
        if not any(module == n or module.startswith(f"{n}.") for n in names)
        and not (path.name == "__init__.py" and _imports_nothing(path))
    )


def test_every_harness_module_sits_in_a_layer() -> None:
    layers = layer_modules((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found = unlayered(module_files(ROOT, ["harness"]), layers)
    assert not found, (
        "modules no layer of pyproject's `layers` contract names (give each a layer, or put "
        "it in a package that has one):\n" + "\n".join(found)
    )


def test_the_check_finds_a_module_outside_every_layer(tmp_path: Path) -> None:
    for name, text in {
        "pkg/__init__.py": '"""A namespace."""\n',
        "pkg/low.py": "",
        "pkg/sub/__init__.py": "from pkg.sub import inner\n",
        "pkg/sub/inner.py": "",
        "pkg/stray.py": "import pkg.low\n",
    }.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    files = module_files(tmp_path, ["pkg"])
    assert unlayered(files, ["pkg.low", "pkg.sub.inner"]) == ["pkg.stray", "pkg.sub"]
    assert unlayered(files, ["pkg.low", "pkg.sub", "pkg.stray"]) == []
