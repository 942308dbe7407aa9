"""The codex app-server session as a state machine: random host calls and server frames.

MACHINE-MOVE-001, MACHINE-END-001.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import strategies as st

from harness.protocols.base import SessionRequest
from harness.protocols.codex_app_server import CodexAppServerSession
from tests.protocols.stateful import SessionSpec, session_machine_test
from tests.protocols.test_codex_app_server import (
    CWD,
    PROMPT,
    THREAD,
    delta,
    error_note,
    init_result,
    thread_result,
    token_usage,
    turn_completed,
    turn_result,
    turn_started,
)


def _line(obj: object) -> bytes:
    return (json.dumps(obj) + "\n").encode()


_APPROVAL = {
    "id": 90,
    "method": "item/commandExecution/requestApproval",
    "params": {"threadId": THREAD, "turnId": "t", "itemId": "i"},
}

_LINES = [
    _line(init_result()),
    _line(thread_result()),
    _line(thread_result(method="thread/resume")),
    _line(turn_result()),
    _line(turn_started()),
    _line(delta("m1", "hello")),
    _line(token_usage(3, 4)),
    _line(error_note("Reconnecting... 1/2", True)),
    _line(error_note("boom", False)),
    _line(turn_completed()),
    _line(turn_completed("interrupted")),
    _line(turn_completed("failed", {"message": "bad"})),
    _line(turn_completed("inProgress")),
    _line({"id": 4, "result": {}}),
    _line({"id": 4, "error": {"code": -32600, "message": "no turn"}}),
    _line({"id": 2, "error": {"code": -32600, "message": "no thread"}}),
    _line({"id": None, "error": {"code": -32700, "message": "parse"}}),
    _line(_APPROVAL),
    b"codex banner\n",
    b"\n",
]

_REQUESTS = st.builds(
    SessionRequest,
    prompt=st.just(PROMPT),
    cwd=st.just(CWD),
    resume_session_id=st.sampled_from([None, THREAD]),
)

CodexMachine = session_machine_test(
    SessionSpec(
        make=lambda: CodexAppServerSession(shutdown_grace_ms=400, interrupt_grace_ms=900),
        requests=_REQUESTS,
        lines=_LINES,
        script=[
            _line(init_result()),
            _line(thread_result()),
            _line(turn_result()),
            _line(turn_started()),
            _line(delta("m1", "hello")),
            _line({"id": 4, "result": {}}),
            _line(turn_completed("interrupted")),
        ],
    )
)

TestCodexMachine = pytest.mark.rule("MACHINE-MOVE-001", "MACHINE-END-001")(CodexMachine.TestCase)
