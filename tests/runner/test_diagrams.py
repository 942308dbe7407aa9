"""The state diagrams in docs/design/sessions.md follow the tables (MACHINE-DIAGRAM-001)."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import harness.protocols
from harness.protocols.machine import Machine
from harness.runner.diagrams import DOCUMENT, MACHINES, check, main, render


@pytest.mark.rule("MACHINE-DIAGRAM-001")
def test_the_committed_diagrams_match_the_tables() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "harness.runner.diagrams", "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (proc.returncode, proc.stderr) == (0, "")


@pytest.mark.rule("MACHINE-DIAGRAM-001")
def test_a_stale_missing_or_unknown_diagram_is_reported() -> None:
    text = DOCUMENT.read_text(encoding="utf-8")
    assert check(text) == []
    stale = text.replace("    NEW --> HANDSHAKE: start\n", "", 1)
    assert check(stale) == ["diagram 'acp-json-rpc' differs from its transition table"]
    assert render(stale) == text
    missing = text.replace("<!-- diagram:begin pi-rpc -->", "<!-- pi-rpc -->")
    assert check(missing) == ["no diagram block for machine 'pi-rpc'"]
    unknown = text + "\n<!-- diagram:begin nope -->\n<!-- diagram:end -->\n"
    assert check(unknown) == ["no machine is named 'nope'"]


@pytest.mark.rule("MACHINE-DIAGRAM-001")
def test_write_redraws_and_check_then_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "sessions.md"
    blocks = "".join(f"<!-- diagram:begin {m.name} -->\n<!-- diagram:end -->\n" for m in MACHINES)
    doc.write_text("# title\n\n" + blocks, encoding="utf-8")
    assert main(["--check", "--document", str(doc)]) == 1
    assert "differs from its transition table; run" in capsys.readouterr().err
    assert main(["--write", "--document", str(doc)]) == 0
    assert main(["--check", "--document", str(doc)]) == 0
    assert doc.read_text(encoding="utf-8").startswith("# title\n\n<!-- diagram:begin acp-json-rpc")


def test_an_unreadable_document_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--check", "--document", str(tmp_path / "absent.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: error: cannot read ") and err.count("\n") == 1


@pytest.mark.rule("MACHINE-DIAGRAM-001")
def test_every_session_table_is_drawn() -> None:
    tables: dict[int, str] = {}  # by identity: a module may import another's table
    for info in pkgutil.walk_packages(harness.protocols.__path__, "harness.protocols."):
        module = importlib.import_module(info.name)
        table = getattr(module, "MACHINE", None)
        if isinstance(table, Machine):
            tables[id(table)] = table.name
    assert len(tables) == 4
    assert set(tables.values()) <= {machine.name for machine in MACHINES}
