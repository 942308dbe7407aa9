"""Fixtures for the headless-posture tests: no test may leave a process behind."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.conftest import leaked_processes


@pytest.fixture(autouse=True)
def no_leaked_processes() -> Iterator[None]:
    """Fail the test when it leaves a child process behind (the leftovers are killed)."""
    yield
    leaked = leaked_processes()
    if leaked:
        pytest.fail("test left processes running (now killed):\n  " + "\n  ".join(leaked))
