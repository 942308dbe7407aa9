"""Fixtures for the model-server tests: a real server on 127.0.0.1, stopped after each test.

``serve(scenario, **kw)`` starts a :class:`~harness.modelserver.ModelServer` in its
background thread (log in the test's tmp dir). The ``live`` marker (a real CLI against
the server; skipped when the CLI is absent) is registered here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_clis.scenario import Scenario
from harness.modelserver import ModelServer


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "live: runs a real coding-agent CLI (skips when absent)")


ServeFn = Callable[..., ModelServer]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServeFn]:
    started: list[ModelServer] = []

    def start(scenario: Scenario | str, **kw: Any) -> ModelServer:
        kw.setdefault("log_path", tmp_path / f"requests-{len(started)}.jsonl")
        server = ModelServer(scenario, **kw).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
