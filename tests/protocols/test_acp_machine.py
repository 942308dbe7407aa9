"""The ACP session as a state machine: random host calls and agent frames (MACHINE-*)."""

from __future__ import annotations

import json

import pytest
from hypothesis import strategies as st

from harness.protocols.acp.session import AcpSession
from harness.protocols.base import SessionRequest
from tests.protocols.stateful import SessionSpec, session_machine_test
from tests.protocols.test_acp import (
    CWD,
    PROMPT,
    SID,
    error,
    init_result,
    message,
    option,
    permission,
    prompt_done,
    result,
    thought,
    tool_call,
    update,
)


def _line(obj: object) -> bytes:
    return (json.dumps(obj) + "\n").encode()


_LINES = [
    _line(result(1, init_result(load=True))),
    _line(result(2, {"sessionId": SID})),
    _line(result(2, {})),
    _line(prompt_done()),
    _line(prompt_done(stop="cancelled")),
    _line(error(3, -32800, "cancelled")),
    _line(error(2, -32603, "internal")),
    _line(error(9, -32603, "noise")),
    _line(message("hi")),
    _line(thought("hmm")),
    _line(tool_call("call-1", status="pending")),
    _line(update({"sessionUpdate": "turn_end", "stopReason": "end_turn"})),
    _line(permission(70, [option("allow_once", "allow_once")])),
    _line(permission(71, [])),
    _line({"jsonrpc": "2.0", "id": 72, "method": "fs/read_text_file", "params": {}}),
    b"agent banner\n",
    b"\n",
]

_REQUESTS = st.builds(
    SessionRequest,
    prompt=st.just(PROMPT),
    cwd=st.just(CWD),
    model=st.sampled_from([None, "fast"]),
    resume_session_id=st.sampled_from([None, SID]),
)

AcpMachine = session_machine_test(
    SessionSpec(
        make=lambda: AcpSession(
            shutdown_grace_ms=500,
            cancel_grace_ms=2000,
            stage_timeout_ms=600_000,
            turn_end_completes_prompt=True,
        ),
        requests=_REQUESTS,
        lines=_LINES,
        script=[
            _line(result(1, init_result(load=True))),
            _line(result(2, {"sessionId": SID})),
            _line(result(3, {})),
            _line(message("hello")),
            _line(tool_call("call-1", status="pending")),
            _line(permission(70, [option("allow_once", "allow_once")])),
            _line(prompt_done(4, stop="cancelled")),
        ],
    )
)

TestAcpMachine = pytest.mark.rule("MACHINE-MOVE-001", "MACHINE-END-001")(AcpMachine.TestCase)
