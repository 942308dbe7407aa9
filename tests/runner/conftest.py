"""Fixtures for the runner tests: real fake CLIs on a private PATH, and a leak check.

``no_leaked_processes`` is autouse: every runner test fails when a process it started is
still alive afterwards (the leftovers are killed first). Two nets catch them:

* psutil children of the test process, recursive (zombies do not count);
* every process whose environment carries this test's token. Each test exports a fresh
  ``HARNESS_TEST_LEAK_TOKEN``; runs inherit it, so a grandchild orphaned when its parent
  died (re-parented to PID 1, invisible to ``children()``) is still found.

The ``stress`` marker is registered here (``-m "not stress"`` deselects the stress test).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.events import Event, TextDelta
from harness.fakes_install import install_fakes
from harness.launch import path_env_key
from harness.runner import RunRequest, RunResult, run_agent_async

LEAK_TOKEN_VAR = "HARNESS_TEST_LEAK_TOKEN"

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


# --------------------------------------------------------------------------- leak check


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _carries(proc: psutil.Process, token: str) -> bool:
    try:
        return proc.environ().get(LEAK_TOKEN_VAR) == token
    except psutil.Error:
        return False


def leaked_processes(token: str, exclude: set[int]) -> list[psutil.Process]:
    me = os.getpid()
    found: dict[int, psutil.Process] = {}
    for child in psutil.Process(me).children(recursive=True):
        if child.pid not in exclude and _alive(child):
            found[child.pid] = child
    for proc in psutil.process_iter():
        if proc.pid in (me, *exclude) or proc.pid in found:
            continue
        if _carries(proc, token) and _alive(proc):
            found[proc.pid] = proc
    return list(found.values())


def kill_and_describe(procs: Sequence[psutil.Process]) -> list[str]:
    described: list[str] = []
    for proc in procs:
        try:
            described.append(f"pid {proc.pid}: {' '.join(proc.cmdline())[:200]}")
            proc.kill()
        except psutil.Error:
            continue
    psutil.wait_procs(list(procs), timeout=2)
    return described


@pytest.fixture(autouse=True)
def no_leaked_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Fail the test when a process it started outlives it (the leftovers are killed)."""
    token = uuid.uuid4().hex
    monkeypatch.setenv(LEAK_TOKEN_VAR, token)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    yield token
    leaked = leaked_processes(token, before)
    if leaked:
        described = kill_and_describe(leaked)
        pytest.fail("test left processes running (now killed):\n  " + "\n  ".join(described))


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
        # pi's auto-retry waits 2 s, 4 s, 8 s by default; keep failing runs short.
        settings = self.home / ".pi" / "agent" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"retry": {"baseDelayMs": 20}}), encoding="utf-8")
        self._count = 0

    def project(self, name: str = "project") -> Path:
        self._count += 1
        path = self.root / f"{name}-{self._count}"
        path.mkdir(parents=True)
        return path

    def env(self, scenario: str = "happy", **extra: str) -> dict[str, str]:
        bin_keys = {d.bin_env_key.upper() for d in BUILTIN_DEFS if d.bin_env_key}
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.upper().startswith(_SCRUBBED_PREFIXES)
            and k.upper() not in bin_keys
            and k.upper() != "PYTHONPATH"
        }
        key = path_env_key(env, sys.platform)
        env[key] = str(self.bin) + os.pathsep + env.get(key, "")
        env.update(HOME=str(self.home), USERPROFILE=str(self.home), FAKE_CLI_SCENARIO=scenario)
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
