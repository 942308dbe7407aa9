"""``run_cancelled_after``: the user's cancel lands once the turn is under way.

Real fake CLIs: claude's fake shows text first (the cancel follows it), dsh's fake writes a
message only once it ends (the cancel follows the session id, then the caller's ``working``).
"""

from __future__ import annotations

import threading

import pytest

from harness.events import TextDelta
from harness.runner import RunOutcome
from harness.runner.user_cancel import run_cancelled_after
from tests.runner.conftest import FakeWorld, text_of

LONG_TURN = [
    {"kind": "text", "text": "Working on it..."},
    *[{"kind": "sleep", "ms": 250} for _ in range(40)],
    {"kind": "text", "text": "never reached"},
]


@pytest.mark.rule("RUN-CANCEL-ORDER-001")
def test_the_cancel_follows_the_first_text(world: FakeWorld) -> None:
    request = world.request("claude", world.scenario_file("long", LONG_TURN))
    seen: list[object] = []
    result = run_cancelled_after(request, 100, on_event=seen.append)
    assert result.status is RunOutcome.CANCELLED and result.cancel_requested
    assert text_of(result.events) == "Working on it..."
    assert any(isinstance(e, TextDelta) for e in seen)  # the caller's on_event saw them


@pytest.mark.rule("RUN-CANCEL-ORDER-001")
def test_without_text_the_cancel_follows_the_session_once_working(world: FakeWorld) -> None:
    request = world.request(
        "deepseek-harness",
        world.scenario_file("long", LONG_TURN),
        cancel_grace_ms=8000,
    )
    asked = threading.Event()
    calls: list[bool] = []

    def working() -> bool:
        # Not yet on the first few polls: the cancel must wait for it.
        calls.append(True)
        if len(calls) >= 3:
            asked.set()
        return asked.is_set()

    result = run_cancelled_after(request, 10_000, after_session_ms=100, working=working)
    assert asked.is_set() and len(calls) >= 3
    assert result.status is RunOutcome.CANCELLED and result.error is None
    # The dsh fake commits the interrupted message at the cancel: its text comes with it.
    assert text_of(result.events) == "Working on it..."
