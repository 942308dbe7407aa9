"""Shared fixtures for the fake-CLI tests (every emulator module's tests use them).

Fakes are real processes (design principle 7); the suite-wide leak check
(:mod:`tests.support.processes`) fails a test that leaves one running.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from harness.events import Event, TextDelta
from harness.formats import create_parser
from tests.support.env import inherited_env

E = TypeVar("E")


# --------------------------------------------------------------------------- running fakes

#: The repository root, so ``python -m fake_clis`` imports this checkout.
REPO_ROOT = Path(__file__).resolve().parents[2]

#: Variables a test run must not inherit from the developer's shell.
_SCRUBBED_PREFIXES = ("FAKE_CLI_", "ANTHROPIC_", "OPENAI_", "CODEX_", "COPILOT_", "QODER_")


@dataclass
class FakeResult:
    """One finished fake run: exit code, both streams, and what the fake recorded."""

    code: int
    stdout: bytes
    stderr: bytes
    record: dict[str, Any]

    @property
    def out(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8", "replace")


class FakeCli:
    """Runs ``python -m fake_clis AGENT ...`` as a real subprocess in a private cwd and HOME."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cwd = root / "project"
        self.home = root / "home"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        self.record_path = root / "record.json"

    def env(self, scenario: str = "happy", **extra: str) -> dict[str, str]:
        env = inherited_env(_SCRUBBED_PREFIXES, self.home)
        env.update(
            PYTHONPATH=str(REPO_ROOT),
            FAKE_CLI_SCENARIO=scenario,
            FAKE_CLI_RECORD=str(self.record_path),
            PYTHONIOENCODING="utf-8",
        )
        env.update(extra)
        return env

    @staticmethod
    def argv(agent: str, args: Sequence[str]) -> list[str]:
        return [sys.executable, "-m", "fake_clis", agent, *args]

    def scenario_file(self, name: str, steps: list[dict[str, Any]], **top: Any) -> str:
        """Write a scenario (validated by the fake when it loads it); returns its path."""
        path = self.root / f"{name}.json"
        path.write_text(json.dumps({"name": name, "steps": steps, **top}), encoding="utf-8")
        return str(path)

    def run(
        self,
        agent: str,
        args: Sequence[str],
        *,
        scenario: str = "happy",
        input: bytes = b"",
        env: dict[str, str] | None = None,
        timeout: float = 60.0,
    ) -> FakeResult:
        self.record_path.unlink(missing_ok=True)
        done = subprocess.run(
            self.argv(agent, args),
            input=input,
            capture_output=True,
            cwd=self.cwd,
            env=env if env is not None else self.env(scenario),
            timeout=timeout,
            check=False,
        )
        return FakeResult(done.returncode, done.stdout, done.stderr, self.record())

    def popen(
        self,
        agent: str,
        args: Sequence[str],
        *,
        scenario: str = "happy",
        env: dict[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        self.record_path.unlink(missing_ok=True)
        return subprocess.Popen(
            self.argv(agent, args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.cwd,
            env=env if env is not None else self.env(scenario),
        )

    def record(self) -> dict[str, Any]:
        """What the fake wrote to FAKE_CLI_RECORD ({} when it exited before running)."""
        try:
            data: dict[str, Any] = json.loads(self.record_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data


@pytest.fixture
def fake(tmp_path: Path) -> FakeCli:
    """A fake-CLI runner with its own project dir and HOME under ``tmp_path``."""
    return FakeCli(tmp_path)


def parse_stream(stream_format: str, data: bytes) -> list[Event]:
    """Feed ``data`` to the engine's parser for ``stream_format`` (whole, then finish)."""
    parser = create_parser(stream_format)
    return [*parser.feed(data), *parser.finish()]


def events_of(events: Sequence[Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


def text_of(events: Sequence[Event]) -> str:
    return "".join(e.delta for e in events if isinstance(e, TextDelta))


def install_shim(bin_dir: Path, name: str, agent: str) -> Path:
    """A POSIX executable ``name`` that runs the fake for ``agent`` (``harness fakes install``)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / name
    shim.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -m fake_clis {agent} "$@"\n', encoding="utf-8"
    )
    shim.chmod(0o755)
    return shim
