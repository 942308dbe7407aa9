"""``run_cancelled_after``: a run the user cancels once its turn is under way.

What a person does at a terminal, made repeatable for recordings and live cases: the cancel
comes ``after_text_ms`` after the first text, or, when no text came first, ``after_session_ms``
after the session id and the caller's ``working()`` both say the turn is under way (a CLI may
write a message only once it ends, as the dsh bundle does, and then shows no text before the
cancel; a live case asks its model server whether the model was called). The stop itself is
the runner's (RUN-CANCEL-ORDER-001).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from harness.events import Event, Status, TextDelta
from harness.runner.engine import OnEvent, WireTap, run_agent_async
from harness.runner.types import RunRequest, RunResult

__all__ = ["AFTER_SESSION_MS", "run_cancelled_after"]

#: The fallback delay after the session id when no text came first.
AFTER_SESSION_MS = 2000
_POLL_S = 0.05


def run_cancelled_after(
    request: RunRequest,
    after_text_ms: int,
    *,
    after_session_ms: int = AFTER_SESSION_MS,
    working: Callable[[], bool] | None = None,
    on_event: OnEvent | None = None,
    tap: WireTap | None = None,
) -> RunResult:
    """Run ``request`` to its end and cancel it once its turn is under way (see above)."""

    async def main() -> RunResult:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        armed: set[str] = set()
        waits: list[asyncio.Task[None]] = []

        async def after_session() -> None:
            while working is not None and not working():
                await asyncio.sleep(_POLL_S)
            await asyncio.sleep(after_session_ms / 1000)
            cancel.set()

        def watch(event: Event) -> None:
            if isinstance(event, TextDelta) and event.delta.strip() and "text" not in armed:
                armed.add("text")
                loop.call_later(after_text_ms / 1000, cancel.set)
            elif isinstance(event, Status) and event.session_id and not armed:
                armed.add("session")
                waits.append(loop.create_task(after_session()))
            if on_event is not None:
                on_event(event)

        try:
            return await run_agent_async(request, on_event=watch, cancel=cancel, tap=tap)
        finally:
            for task in waits:
                task.cancel()

    return asyncio.run(main())
