"""Arguments a caller adds around the def's own (``RunRequest.argv_prepend`` /
``argv_append``): ``build_args`` still gets everything a run gives it, so a def that takes
its prompt from a file (DEF-FILE-001) keeps it, and the whole argv is what is spawned
(RUN-SPAWN-001)."""

from __future__ import annotations

import pytest

from harness.runner import run_agent
from tests.runner.conftest import FakeWorld


@pytest.mark.rule("RUN-SPAWN-001", "DEF-FILE-001")
def test_added_arguments_go_around_a_prompt_file_def(world: FakeWorld) -> None:
    req = world.request(
        "grok-build", "text", argv_prepend=("--model", "grok-4"), argv_append=("--effort", "low")
    )
    result = run_agent(req)
    assert result.succeeded, result.error
    args = list(result.argv[1:])
    assert args[:2] == ["--model", "grok-4"] and args[-2:] == ["--effort", "low"]
    assert "--prompt-file" in args  # build_args ran with the prompt file in between
    assert "PONG" in "".join(getattr(e, "delta", "") for e in result.events)
