"""The pi-rpc session as a state machine: random host calls and peer lines (MACHINE-*)."""

from __future__ import annotations

import json

import pytest
from hypothesis import strategies as st

from harness.protocols.base import SessionRequest
from harness.protocols.pi_rpc import PiRpcSession
from tests.protocols.stateful import SessionSpec, session_machine_test


def _line(obj: object) -> bytes:
    return (json.dumps(obj) + "\n").encode()


_LINES = [
    _line({"type": "response", "id": rid, "command": "prompt", "success": ok})
    for rid in (1, 2, 3)
    for ok in (True, False)
] + [
    _line(
        {
            "type": "response",
            "id": 1,
            "command": "new_session",
            "success": True,
            "data": {"cancelled": True},
        }
    ),
    _line({"type": "agent_start"}),
    _line({"type": "agent_end", "messages": []}),
    _line({"type": "turn_start"}),
    _line({"type": "turn_end", "message": {"stopReason": "error", "errorMessage": "boom"}}),
    _line({"type": "turn_end", "message": {"stopReason": "stop", "usage": {"input": 3}}}),
    _line(
        {"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "delta": "hi"}}
    ),
    _line({"type": "auto_retry_start"}),
    _line({"type": "auto_retry_end", "success": False, "finalError": "gave up"}),
    _line({"type": "compaction_start"}),
    _line({"type": "compaction_end", "willRetry": False}),
    _line({"type": "extension_error", "error": "ext"}),
    _line({"type": "extension_ui_request", "id": "u1", "method": "confirm"}),
    b"not json\n",
    b"\n",
]

_REQUESTS = st.builds(
    SessionRequest,
    prompt=st.just("do it"),
    cwd=st.just("/work"),
    resume_session_id=st.sampled_from([None, "/sessions/a.jsonl"]),
)

PiMachine = session_machine_test(
    SessionSpec(
        make=lambda: PiRpcSession(graceful_shutdown_ms=100, retry_window_ms=1000),
        requests=_REQUESTS,
        lines=_LINES,
        script=[
            _line({"type": "response", "id": 1, "command": "new_session", "success": True}),
            _line({"type": "agent_start"}),
            _line({"type": "turn_end", "message": {"stopReason": "error"}}),
            _line({"type": "agent_end", "messages": []}),
            _line({"type": "auto_retry_start"}),
            _line({"type": "agent_start"}),
            _line({"type": "agent_end", "messages": []}),
            _line({"type": "response", "id": 3, "command": "abort", "success": True}),
        ],
        cancel_before_start_ends=True,
    )
)

TestPiMachine = pytest.mark.rule("MACHINE-MOVE-001", "MACHINE-END-001")(PiMachine.TestCase)
