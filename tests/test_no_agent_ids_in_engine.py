"""Definitions are data: engine modules never name an agent id (design principle 2).

Every string literal (docstrings excluded) in the sans-IO engine and the IO
shell is checked against the registry's ids. The json-event-stream dispatcher
may name its dialects (``codex``, ``cursor-agent``, ...): they are wire-format
dialect names that a def selects with ``event_parser``, and they may appear
nowhere else.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness.defs.registry import BUILTIN_DEFS
from harness.formats import known_dialects, one_way_formats

ROOT = Path(__file__).resolve().parent.parent / "harness"
ENGINE = [
    *sorted((ROOT / "streams").glob("*.py")),
    *sorted((ROOT / "formats").glob("*.py")),
    *sorted((ROOT / "guards").glob("*.py")),
    *sorted((ROOT / "protocols").glob("*.py")),
    *sorted((ROOT / "mcp").glob("*.py")),
    *sorted((ROOT / "capture").glob("*.py")),
    *sorted((ROOT / "runner").glob("*.py")),
    *sorted((ROOT / "host").glob("*.py")),
    *sorted((ROOT / "secrets").glob("*.py")),
    *sorted((ROOT / "runtime").glob("*.py")),
    # not recording/corpus.py: its edge cases are data naming the agent each one records
    *(
        ROOT / "recording" / f"{name}.py"
        for name in ("record", "replay", "replay_budget", "replay_cancel")
    ),
]
DIALECT_TABLE = ROOT / "streams" / "json_events.py"
AGENT_IDS = {d.id for d in BUILTIN_DEFS}
DIALECTS = {name for fmt in one_way_formats() for name in known_dialects(fmt)}


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def string_literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstring_nodes(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
    ]


@pytest.mark.rule("DEF-DATA-001")
@pytest.mark.parametrize("path", ENGINE, ids=lambda p: str(p.relative_to(ROOT)))
def test_engine_module_names_no_agent_id(path: Path) -> None:
    allowed = DIALECTS if path == DIALECT_TABLE else set()
    hits = [(line, text) for line, text in string_literals(path) if text in AGENT_IDS - allowed]
    assert not hits, f"{path.relative_to(ROOT.parent)} names agent ids: {hits}"


@pytest.mark.rule("DEF-DATA-001")
def test_the_check_catches_a_module_that_names_an_id(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('"""doc mentions claude"""\nif agent == "claude":\n    pass\n')
    assert string_literals(bad) == [(2, "claude")]
