"""Fixtures for the runner tests: real fake CLIs on a private PATH.

Every test here is held by the suite-wide leak check (:mod:`tests.support.processes`):
a process a run leaves behind, even an orphaned grandchild, fails the test.

The ``stress`` marker is registered here (``-m "not stress"`` deselects the stress test).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.events import Event, Status, TextDelta
from harness.host.launch import path_env_key
from harness.runner import RunRequest, RunResult, run_agent_async
from harness.runtime.fakes_install import install_fakes, prepare_fake_home
from tests.support.env import inherited_env

#: One def per stream format and transport (codex twice: exec-json and app-server).
FORMAT_CASES: tuple[tuple[str, str | None], ...] = (
    ("claude", None),
    ("codex", "exec-json"),
    ("copilot", None),
    ("qoder", None),
    ("qwen", None),
    ("devin", None),
    ("pi", None),
    ("deepseek-harness", None),
    ("codex", None),
)

_SCRUBBED_PREFIXES = ("FAKE_CLI_", "ANTHROPIC_", "OPENAI_", "CODEX_", "OD_")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "stress: long randomized runner stress test (deselect with -m 'not stress')"
    )


# --------------------------------------------------------------------------- fake CLIs


@dataclass
class FakeWorld:
    """A private PATH holding every fake, a HOME, and project dirs under ``root``."""

    root: Path

    def __post_init__(self) -> None:
        self.bin = self.root / "bin"
        self.home = self.root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        install_fakes(self.bin, BUILTIN_DEFS)
        prepare_fake_home(self.home)
        self._count = 0

    def project(self, name: str = "project") -> Path:
        self._count += 1
        path = self.root / f"{name}-{self._count}"
        path.mkdir(parents=True)
        return path

    def env(self, scenario: str = "happy", **extra: str) -> dict[str, str]:
        bin_keys = {d.bin_env_key for d in BUILTIN_DEFS if d.bin_env_key}
        env = inherited_env(_SCRUBBED_PREFIXES, self.home, drop=bin_keys)
        key = path_env_key(env, sys.platform)
        env[key] = str(self.bin) + os.pathsep + env.get(key, "")
        env["FAKE_CLI_SCENARIO"] = scenario
        env.update(extra)
        return env

    def scenario_file(self, name: str, steps: list[dict[str, Any]], **top: Any) -> str:
        path = self.root / f"{name}.json"
        path.write_text(json.dumps({"name": name, "steps": steps, **top}), encoding="utf-8")
        return str(path)

    def request(
        self,
        agent: str,
        scenario: str = "happy",
        *,
        transport: str | None = None,
        cwd: Path | None = None,
        env_extra: dict[str, str] | None = None,
        **kw: Any,
    ) -> RunRequest:
        kw.setdefault("shutdown_grace_ms", 1000)
        kw.setdefault("inactivity_timeout_ms", 30_000)
        return RunRequest(
            defn=get_agent_def(agent, BUILTIN_DEFS),
            prompt=kw.pop("prompt", "Create hello.html with a greeting."),
            cwd=str(cwd or self.project(agent)),
            env=self.env(scenario, **(env_extra or {})),
            transport=transport,
            **kw,
        )


@pytest.fixture
def world(tmp_path: Path) -> FakeWorld:
    return FakeWorld(tmp_path)


def case_id(case: tuple[str, str | None]) -> str:
    agent, transport = case
    return f"{agent}[{transport}]" if transport else agent


def run_all(requests: Sequence[RunRequest]) -> list[RunResult]:
    """Run several requests concurrently (each is its own process tree)."""

    async def main() -> list[RunResult]:
        return list(await asyncio.gather(*(run_agent_async(r) for r in requests)))

    return asyncio.run(main())


def text_of(events: Sequence[Event]) -> str:
    return "".join(e.delta for e in events if isinstance(e, TextDelta))


#: CLIs that print a message's text whole when the message ends (dsh 0.2.1-rc.2 under the
#: open-design bundle: recordings/real/deepseek-harness/), and so their fakes: a turn that
#: hangs mid-message has printed none, and a test that cancels mid-turn aims at the run once
#: its session is known.
WHOLE_MESSAGES = frozenset({"deepseek-harness"})


def turn_started(event: Event, agent: str) -> bool:
    """True for the event that shows ``agent``'s turn is under way (a cancel can land)."""
    if agent in WHOLE_MESSAGES:
        return isinstance(event, Status) and bool(event.session_id)
    return isinstance(event, TextDelta) and bool(event.delta.strip())
