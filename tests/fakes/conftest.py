"""Shared fixtures for the fake-CLI tests (every emulator module's tests use them).

``no_leaked_processes`` is autouse: a test that leaves a child process of the test
runner alive fails, after the leftovers are killed (design principle 7: fakes are real
processes, so their tests must clean up what they start). Processes that are already
exiting get a short grace period; zombies (exited, not yet reaped) are not leaks.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import psutil
import pytest

from harness.events import Event, TextDelta
from harness.streams import create_parser

E = TypeVar("E")

#: How long a finishing child may take to go away before it counts as leaked.
GRACE_SECONDS = 1.0


def _live_children() -> list[psutil.Process]:
    alive: list[psutil.Process] = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.append(child)
        except psutil.NoSuchProcess:
            continue
    return alive


def leaked_processes(grace: float = GRACE_SECONDS) -> list[str]:
    """Kill every live descendant of this process; describe the ones that were alive."""
    children = _live_children()
    if not children:
        return []
    _, alive = psutil.wait_procs(children, timeout=grace)
    described: list[str] = []
    for proc in alive:
        try:
            described.append(f"pid {proc.pid}: {' '.join(proc.cmdline())[:200]}")
            proc.kill()
        except psutil.NoSuchProcess:
            continue
    psutil.wait_procs(alive, timeout=grace)
    return described


@pytest.fixture(autouse=True)
def no_leaked_processes() -> Iterator[None]:
    """Fail the test when it leaves a child process behind (the leftovers are killed)."""
    yield
    leaked = leaked_processes()
    if leaked:
        pytest.fail("test left processes running (now killed):\n  " + "\n  ".join(leaked))


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
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.upper().startswith(_SCRUBBED_PREFIXES) and k.upper() != "PYTHONPATH"
        }
        env.update(
            HOME=str(self.home),
            USERPROFILE=str(self.home),
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


def kill_tree(proc: subprocess.Popen[bytes]) -> list[int]:
    """Kill ``proc`` and every descendant (snapshot first); reap; return the pids killed."""
    try:
        family = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        family = []
    for member in family:
        try:
            member.kill()
        except psutil.NoSuchProcess:
            continue
    psutil.wait_procs(family, timeout=5)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    proc.wait(timeout=5)
    return [m.pid for m in family]


class StdoutPump:
    """Reads a process's stdout on a thread so tests can wait with a deadline."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self._fd = proc.stdout.fileno()
        self._queue: queue.Queue[bytes | None] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()
        self.received = bytearray()

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                self._queue.put(None)
                return
            self._queue.put(chunk)

    def next(self, timeout: float) -> bytes | None:
        """The next chunk, or None at EOF; raises ``TimeoutError`` after ``timeout``."""
        try:
            chunk = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no stdout within {timeout}s") from None
        if chunk is not None:
            self.received += chunk
        return chunk

    def until(self, needle: bytes, timeout: float) -> bytes:
        """Read until ``needle`` has appeared in stdout; returns everything read so far."""
        deadline = time.monotonic() + timeout
        while needle not in self.received:
            left = deadline - time.monotonic()
            if left <= 0 or self.next(left) is None:
                break
        if needle not in self.received:
            raise AssertionError(
                f"{needle!r} never appeared; stdout so far: {bytes(self.received)!r}"
            )
        return bytes(self.received)


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
