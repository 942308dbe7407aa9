"""Fixtures for the ``harness dsh setup`` tests: a fake ``dsh`` that logs every call.

:class:`DshWorld` is a private HOME (so the fake's Harness home is ``<home>/.dsh``) and a
``bin/dsh`` shim that runs the fake DeepSeek Harness (``python -m fake_clis deepseek-harness``).
The shim first appends its argv to ``calls.log`` and points ``FAKE_CLI_RECORD`` at a fresh file
under ``records/``, so every invocation leaves its own record (the fake itself overwrites one
record path per run). Both paths are written into the shim, so no environment variable the
setup passes or drops can hide a call.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.conftest import REPO_ROOT
from tests.support.env import inherited_env

#: Variables a test run must not inherit from the developer's shell.
_SCRUBBED_PREFIXES = ("FAKE_CLI_", "FAKE_DSH_", "DSH_", "DEEPSEEK_", "ANTHROPIC_", "OPENAI_")

#: The shim: log argv (fields end with \x1f), give this run its own record file, run the
#: fake with one interpreter start (a Python wrapper would double the cost of every call).
_SHIM = """#!/bin/sh
{{ for arg in "$@"; do printf '%s\\037' "$arg"; done; printf '\\n'; }} >> "{log}"
FAKE_CLI_RECORD="{records}/$$.json" PYTHONPATH="{root}" \\
  exec "{python}" -m fake_clis deepseek-harness "$@"
"""


class DshWorld:
    """A HOME, a logging ``dsh`` shim and the env a setup runs with."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.bin = root / "bin"
        self.records = root / "records"
        self.log = root / "calls.log"
        for d in (self.home, self.bin, self.records):
            d.mkdir(parents=True, exist_ok=True)
        self.dsh = self.bin / "dsh"
        self.dsh.write_text(
            _SHIM.format(log=self.log, records=self.records, root=REPO_ROOT, python=sys.executable),
            encoding="utf-8",
        )
        self.dsh.chmod(0o755)

    def env(self, *, via: str = "DSH_BIN", **extra: str) -> dict[str, str]:
        """A clean env: HOME here, the shim reachable through ``DSH_BIN`` or ``PATH``."""
        env = inherited_env(_SCRUBBED_PREFIXES, self.home)
        env.update(PYTHONIOENCODING="utf-8", PYTHONPATH=str(REPO_ROOT))
        if via == "DSH_BIN":
            env["DSH_BIN"] = str(self.dsh)
        elif via == "PATH":
            env["PATH"] = os.pathsep.join([str(self.bin), env.get("PATH", "")])
        env.update(extra)
        return env

    def calls(self) -> list[list[str]]:
        """Every argv the shim was called with, in order."""
        if not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [line.split("\x1f")[:-1] for line in lines]

    def records_of(self) -> list[dict[str, Any]]:
        """Every record the fake wrote (one per run that got past argv parsing)."""
        out: list[dict[str, Any]] = []
        for path in sorted(self.records.glob("*.json")):
            out.append(json.loads(path.read_text(encoding="utf-8")))
        return out

    def plugin_adds(self) -> list[dict[str, Any]]:
        """The fake's ``plugin_add`` records: one per ``dsh plugin ... add`` it ran."""
        return [r["plugin_add"] for r in self.records_of() if "plugin_add" in r]

    @property
    def marker(self) -> Path:
        """What the fake's ``plugin add`` writes (``<DSH home>/profiles/open-design``)."""
        return self.home / ".dsh" / "profiles" / "open-design" / "package.json"


@pytest.fixture
def world(tmp_path: Path) -> DshWorld:
    return DshWorld(tmp_path)
