"""The dsh profile session as a state machine: random host calls and runtime frames (MACHINE-*)."""

from __future__ import annotations

import json

import pytest
from hypothesis import strategies as st

from harness.events import Error
from harness.protocols.base import SessionRequest
from harness.protocols.dsh import DshProfileSession
from tests.protocols.stateful import SessionSpec, session_machine_test
from tests.protocols.test_dsh import (
    CWD,
    PROMPT,
    READY,
    RID,
    SID,
    protocol_error,
    result,
    session,
    text,
    thinking,
    tool_call,
    usage,
)


def _line(obj: object) -> bytes:
    return (json.dumps(obj) + "\n").encode()


_LINES = [
    _line(READY),
    _line(session()),
    _line(session(resumed=True)),
    _line(session(rid="other")),
    _line(text("hi")),
    _line(thinking("hmm")),
    _line(tool_call("c1", "write_file", "{}")),
    _line(usage()),
    _line(result()),
    _line(result("cancelled")),
    _line(result("failed", error={"code": "DSH_X", "message": "no"})),
    _line(result(resume_rejected=True)),
    _line(protocol_error()),
    b'{"v": 1, "type": "text"\n',
    b"\n",
]

_REQUESTS = st.builds(
    SessionRequest,
    prompt=st.just(PROMPT),
    cwd=st.just(CWD),
    request_id=st.just(RID),
    resume_session_id=st.sampled_from([None, SID]),
)


def _after_result(event: object) -> bool:
    """DSH-RESULT-ONCE-001: output after the result yields one Error event."""
    return isinstance(event, Error) and event.code == "DSH_PROFILE_FRAME_AFTER_RESULT"


DshMachine = session_machine_test(
    SessionSpec(
        make=lambda: DshProfileSession(cancel_grace_ms=500, terminate_grace_ms=250),
        requests=_REQUESTS,
        lines=_LINES,
        script=[_line(READY), _line(session()), _line(thinking("a")), _line(result())],
        late_event=_after_result,
    )
)

TestDshMachine = pytest.mark.rule("MACHINE-MOVE-001", "MACHINE-END-001")(DshMachine.TestCase)
