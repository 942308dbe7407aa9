"""``_session/continue``: the rest of an interrupted amr turn, in a new process, when safe.

seed 000 "AMR compaction continuation": the new process loads the same durable session
and sends only the cursor; the fake refuses (-32600 "unsafe continuation") unless it
loaded the session, the history is the saved one, the interrupted process is gone and
the cursor is the saved one exactly.

Design: docs/design/fakes.md#fake_clis.acp.server
"""

from __future__ import annotations

import os
import sys

from fake_clis import jsonio
from fake_clis.acp.process import AgentProcess, Handler
from fake_clis.acp.prompt import Prompt
from fake_clis.acp.wire import (
    CONTINUE_METHOD,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSAFE_CONTINUATION,
    Session,
    Turn,
)

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Continuation", "pid_alive"]


class Continuation(Handler):
    """``_session/continue``."""

    def __init__(self, process: AgentProcess, prompt: Prompt) -> None:
        super().__init__(process)
        self._prompt = prompt

    def on_continue(self, request_id: Any, params: dict[str, Any]) -> None:
        """``_session/continue {sessionId, continuation}``: the rest of the interrupted turn,
        without a user message, when it is safe (seed 000: the new process loads the same
        durable session and sends only the cursor; OpenCode rechecks persisted history)."""
        if not self.agent.native_continue:
            self.out.error(request_id, METHOD_NOT_FOUND, f"Method not found: {CONTINUE_METHOD}")
            return
        entry: dict[str, Any] = {
            "params": params,
            "loaded": False,
            "previous_alive": None,
            "accepted": False,
            "reason": None,
        }
        self.run.record.setdefault("continues", []).append(entry)
        session_id = params.get("sessionId")
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        pending: Any = None
        if session is not None:
            entry["loaded"] = session.loaded
            saved = self.run.load_session(session.durable_id)
            pending = saved.get("continuation") if saved is not None else None
            if isinstance(pending, dict) and isinstance(pending.get("pid"), int):
                entry["previous_alive"] = pid_alive(pending["pid"])
        reason = _refusal(params, session, pending, entry["previous_alive"])
        if reason is not None or session is None or not isinstance(pending, dict):
            entry["reason"] = reason
            self.out.error(request_id, INVALID_REQUEST, UNSAFE_CONTINUATION)
            return
        entry["accepted"] = True
        # One continuation per interruption: the pending record is consumed.
        self.store.write_doc(session.durable_id, lambda doc: doc.pop("continuation", None))
        options = dict(pending.get("options") or {})
        if options.get("repeat"):
            # The continuation is interrupted again, with the same evidence (once).
            again = {**pending, "pid": os.getpid(), "options": {**options, "repeat": False}}
            self._prompt.send_interruption(request_id, session, again)
            return
        index = int(pending.get("turn", len(session.turns) - 1))
        turn = _resumed_turn(session, index, pending)
        self._prompt.run_turn(
            request_id, session, turn, start=int(pending.get("next_step", 0)), index=index
        )


def _refusal(
    params: dict[str, Any], session: Session | None, pending: Any, previous_alive: bool | None
) -> str | None:
    """Why a ``_session/continue`` is unsafe, or ``None`` when it may go on."""
    extra = sorted(set(params) - {"sessionId", "continuation"})
    if session is None:
        return f"unknown session {params.get('sessionId')!r}"
    if "prompt" in params:
        return "a continuation carries no prompt"
    if extra:
        return f"unexpected params {extra}"
    if not session.loaded:
        return "the session was not loaded by this process"
    if session.history_changed:
        return "the persisted history changed"
    if not isinstance(pending, dict):
        return "no continuation is pending"
    if previous_alive is not False:
        return "the interrupted process is still alive"
    if not _same_json(params.get("continuation"), pending.get("cursor")):
        return "the cursor is not the saved one"
    return None


def _resumed_turn(session: Session, index: int, pending: dict[str, Any]) -> Turn:
    """The saved turn ``index`` as the continuation carries it on (its usage and cost so far)."""
    saved_turn = session.turns[index] if 0 <= index < len(session.turns) else {}
    return Turn(
        prompt=str(saved_turn.get("prompt", "")),
        text=[str(saved_turn.get("text", ""))],
        thinking=[str(saved_turn.get("thinking", ""))],
        tools=[t for t in saved_turn.get("tools", []) if isinstance(t, dict)],
        usage={k: v for k, v in dict(pending.get("usage") or {}).items() if isinstance(v, int)},
        cost=float(pending.get("cost", 0.0)),
    )


def _same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values (``1`` is not ``true``, ``1`` is not ``1.0``)."""
    return jsonio.dumps(a, sort_keys=True) == jsonio.dumps(b, sort_keys=True)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (an exited, reaped process does not)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.OpenProcess.restype = ctypes.c_void_p
        process_query_limited_information = 0x1000
        still_active = 259
        handle = kernel32.OpenProcess(process_query_limited_information, False, pid)
        if not handle:
            # ERROR_ACCESS_DENIED: it exists, owned by someone else.
            return ctypes.get_last_error() == 5
        try:
            code = ctypes.c_ulong()
            if not kernel32.GetExitCodeProcess(ctypes.c_void_p(handle), ctypes.byref(code)):
                return True
            return code.value == still_active
        finally:
            kernel32.CloseHandle(ctypes.c_void_p(handle))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Linux: an exited process its parent has not reaped yet (a zombie) is not alive.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            state = stat.read().rpartition(")")[2].split()[:1]
    except OSError:
        return True
    return state not in (["Z"], ["X"])
