"""The AMR compaction continuation, end to end (seed 000 §12; RUN-CONTINUE-001).

Real processes: the runner drives the ``vela`` fake (AMR) through a turn that the
``compaction`` scenario step interrupts. The fake is a strict peer, like Open Design's own
test agent: it refuses ``_session/continue`` ("unsafe continuation") unless the process
that was interrupted is gone, this process loaded the session, the cursor is the one it
gave, and no prompt is sent again. So a run that succeeds proves the order the seed
prescribes; the ledger the fake keeps in its session file shows both processes' requests.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from harness.events import Status, ToolResult, ToolUse
from harness.runner import RunResult, run_agent, run_agent_async
from harness.runner.types import RunOutcome
from tests.runner.conftest import FakeWorld, text_of

WRITE = {"kind": "tool", "tool": "write", "path": "page.html", "content": "<h1>once</h1>"}
FINAL = {"kind": "text", "text": "Recovered and finished."}


def scenario(world: FakeWorld, name: str, **compaction: Any) -> str:
    steps = [
        {"kind": "text", "text": "Writing the page."},
        WRITE,
        {"kind": "compaction", **compaction},
        FINAL,
        {"kind": "usage", "input_tokens": 10, "output_tokens": 4},
    ]
    return world.scenario_file(name, steps)


def run(world: FakeWorld, path: str, **kw: Any) -> tuple[RunResult, Path]:
    req = world.request("amr", path, **kw)
    return run_agent(req), Path(req.cwd)


def marks(result: RunResult) -> list[Status]:
    return [e for e in result.events if isinstance(e, Status) and e.label == "continuation"]


def ledger(world: FakeWorld, result: RunResult) -> list[dict[str, Any]]:
    assert result.session_id, result
    sessions = world.home / ".fake-cli" / "amr" / "sessions"
    found = [p for p in sessions.glob("*.json") if result.session_id in p.name]
    assert len(found) == 1, list(sessions.glob("*"))
    rows: list[dict[str, Any]] = json.loads(found[0].read_text(encoding="utf-8"))["ledger"]
    return rows


@pytest.mark.rule("RUN-CONTINUE-001", "ACP-AMR-CONTINUE-001")
def test_an_interrupted_turn_continues_once_in_a_new_process(world: FakeWorld) -> None:
    result, cwd = run(world, scenario(world, "continue"))
    assert result.status is RunOutcome.SUCCEEDED, result.error
    assert result.continuations == 1 and len(marks(result)) == 1
    # The first process's interruption is kept beside the continued outcome.
    assert result.interruption is not None
    assert result.interruption.code == "AMR_CONTINUATION_INCOMPLETE"
    assert result.interruption.rule == "ACP-AMR-CONTINUE-001"
    # Both processes' events, in order: the first half, the mark, the continued loop.
    text = text_of(result.events)
    assert text.index("Writing the page.") < text.index("Recovered and finished.")
    mark = result.events.index(marks(result)[0])
    assert any(isinstance(e, ToolUse) for e in result.events[:mark])
    assert not any(isinstance(e, (ToolUse, ToolResult)) for e in result.events[mark:])
    # The tool ran once; the file is the one it wrote.
    assert result.files_written == ("page.html",)
    assert (cwd / "page.html").read_text(encoding="utf-8") == "<h1>once</h1>"
    # Two processes; the second loaded the session and sent no prompt.
    rows = ledger(world, result)
    pids = list(dict.fromkeys(r["pid"] for r in rows))
    assert len(pids) == 2 and result.pid == pids[1]
    second = [r["method"] for r in rows if r["pid"] == pids[1]]
    assert second == ["initialize", "session/load", "_session/continue"]
    assert [r["method"] for r in rows].count("session/prompt") == 1
    assert not any(r["has_prompt"] for r in rows if r["pid"] == pids[1])
    # The durable handle is what a later turn loads.
    assert result.session_id is not None and result.session_id.startswith("ses_")
    assert result.to_json(include_events=False)["continuations"] == 1


@pytest.mark.rule("RUN-CONTINUE-001", "ACP-AMR-CONTINUE-001", "ACP-MODEL-001")
def test_the_continuation_selects_the_model_again(world: FakeWorld) -> None:
    req = world.request("amr", scenario(world, "model"), model="openai/gpt-5.1")
    result = run_agent(req)
    assert result.status is RunOutcome.SUCCEEDED, result.error
    rows = ledger(world, result)
    pids = list(dict.fromkeys(r["pid"] for r in rows))
    assert [r["method"] for r in rows if r["pid"] == pids[1]] == [
        "initialize",
        "session/load",
        "session/set_model",
        "_session/continue",
    ]


@pytest.mark.rule("ACP-MODEL-003")
def test_a_model_amr_cannot_select_fails_the_run(world: FakeWorld) -> None:
    req = world.request("amr", "happy", model="openai/gpt-4-retired")
    result = run_agent(req)
    assert result.status is RunOutcome.FAILED
    assert result.error is not None and result.error.code == "AMR_MODEL_UNAVAILABLE"
    assert "choose another model" in result.error.message
    assert not text_of(result.events) and not result.files_written


@pytest.mark.rule(
    "RUN-CONTINUE-001",
    "ACP-AMR-CONTINUE-002",
    "ACP-AMR-CONTINUE-003",
    "ACP-AMR-CONTINUE-004",
    "ACP-AMR-CONTINUE-005",
    "ACP-AMR-CONTINUE-006",
)
@pytest.mark.parametrize(
    ("options", "code", "continued"),
    [
        ({"evidence": "legacy"}, "AMR_CONTINUATION_INCOMPLETE", 0),
        ({"pending_tool": True}, "AMR_CONTINUATION_INCOMPLETE", 0),
        ({"advertise": None}, "AMR_CONTINUATION_INCOMPLETE", 0),
        ({"advertise": 2}, "AMR_CONTINUATION_INCOMPLETE", 0),
        ({"history": "missing"}, "AMR_CONTINUATION_HISTORY_MISMATCH", 1),
        ({"history": "changed"}, "AMR_CONTINUATION_HISTORY_MISMATCH", 1),
        ({"repeat": True}, "AMR_CONTINUATION_EXHAUSTED", 1),
    ],
    ids=[
        "legacy",
        "pending-tool",
        "not-advertised",
        "version-2",
        "history-missing",
        "history-changed",
        "interrupted-again",
    ],
)
def test_every_refusal_fails_the_run_and_keeps_its_events(
    world: FakeWorld, options: dict[str, Any], code: str, continued: int
) -> None:
    result, cwd = run(world, scenario(world, "refused", **options))
    assert result.status is RunOutcome.FAILED
    assert result.error is not None and result.error.code == code, result.error
    assert result.continuations == continued and len(marks(result)) == continued
    assert (result.interruption is not None) == bool(continued)
    # Nothing is lost: the first half's text and tool stay; the file was written once.
    assert "Writing the page." in text_of(result.events)
    assert any(isinstance(e, ToolUse) for e in result.events)
    assert (cwd / "page.html").read_text(encoding="utf-8") == "<h1>once</h1>"
    assert "Recovered and finished." not in text_of(result.events)
    rows = ledger(world, result)
    assert [r["method"] for r in rows].count("session/prompt") == 1
    assert len({r["pid"] for r in rows}) == 1 + continued


@pytest.mark.rule("RUN-CONTINUE-001", "ACP-AMR-CONTINUE-007")
def test_a_cancel_before_the_interruption_is_never_continued(world: FakeWorld) -> None:
    path = world.scenario_file(
        "cancel",
        [
            {"kind": "text", "text": "Writing the page."},
            WRITE,
            {"kind": "sleep", "ms": 800},
            {"kind": "compaction"},
            FINAL,
        ],
    )
    req = world.request("amr", path)

    async def main() -> RunResult:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.call_later(0.4, cancel.set)
        return await run_agent_async(req, cancel=cancel)

    result = asyncio.run(main())
    assert result.status is RunOutcome.CANCELLED and result.cancel_requested
    assert result.continuations == 0 and not marks(result)


@pytest.mark.rule("RUN-CONTINUE-001", "ACP-AMR-CONTINUE-007")
def test_a_cancel_between_the_two_processes_cancels_the_run(
    world: FakeWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first process is reaped; the user's cancel lands before the second starts."""
    from harness.runner import engine

    cancel = asyncio.Event()
    original = engine._Run._continuation

    def cancelled_in_the_gap(self: engine._Run) -> Any:
        cancel.set()  # the watcher of the first process is gone: only the event says so
        return original(self)

    monkeypatch.setattr(engine._Run, "_continuation", cancelled_in_the_gap)
    req = world.request("amr", scenario(world, "gap"))
    result = asyncio.run(run_agent_async(req, cancel=cancel))
    assert result.status is RunOutcome.CANCELLED and result.cancel_requested
    assert result.continuations == 0 and not marks(result)
    assert len({r["pid"] for r in ledger(world, result)}) == 1
