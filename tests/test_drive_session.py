"""The shared session driver (:mod:`tests.support.drive`) against a real echo process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping

import pytest

from harness.events import Event, TextDelta
from harness.protocols.base import (
    Actions,
    CloseStdin,
    Finished,
    RunStatus,
    SessionRequest,
    SessionState,
    SetDeadline,
)
from tests.support.drive import cancel_once, drive_session
from tests.support.processes import pid_alive

#: Echoes each stdin line upper-cased; exits 3 at EOF (or never, with ``linger``).
ECHO = """
import sys, time
for line in sys.stdin:
    sys.stdout.write(line.upper()); sys.stdout.flush()
sys.stderr.write("bye"); sys.stderr.flush()
if sys.argv[1:] == ["linger"]:
    time.sleep(60)
sys.exit(3)
"""

REQUEST = SessionRequest(prompt="hello", cwd=".")


def spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", ECHO, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


class EchoSession:
    """Sends the prompt, then one more line at its deadline; done at the second echo."""

    def __init__(self, *, finish: bool = True) -> None:
        self.finish = finish
        self.done = False
        self.seen = b""
        self.ticks = 0
        self.cancels = 0

    @property
    def state(self) -> SessionState:
        return SessionState.RUNNING

    @property
    def session_id(self) -> str | None:
        return None

    @property
    def counters(self) -> Mapping[str, int]:
        return {"ticks": self.ticks, "cancels": self.cancels}

    def start(self, request: SessionRequest, now_ms: float) -> Actions:
        return Actions(
            frames=[request.prompt.encode() + b"\n"], controls=[SetDeadline(now_ms + 20, "next")]
        )

    def receive(self, data: bytes, now_ms: float) -> Actions:
        self.seen += data
        actions = Actions(events=[TextDelta(delta=data.decode())])
        # ">= 2", once: a cancel's echo can arrive in the same read as the second line.
        if self.finish and not self.done and self.seen.count(b"\n") >= 2:
            self.done = True
            actions.controls += [CloseStdin(), Finished(RunStatus.COMPLETED)]
        return actions

    def end_of_output(self, now_ms: float) -> Actions:
        return Actions()

    def cancel(self, now_ms: float) -> Actions:
        self.cancels += 1
        return Actions(frames=[b"cancel\n"])

    def tick(self, now_ms: float) -> Actions:
        self.ticks += 1
        return Actions(frames=[b"later\n"])


def test_frames_go_in_stdout_comes_back_and_deadlines_tick() -> None:
    session = EchoSession()
    run = drive_session(spawn(), session, REQUEST, timeout=30)
    assert run.finished == Finished(RunStatus.COMPLETED)
    assert run.sent == [b"hello\n", b"later\n"]
    assert run.stdout == b"HELLO\nLATER\n"
    assert "".join(e.delta for e in run.events if isinstance(e, TextDelta)) == "HELLO\nLATER\n"
    assert session.ticks == 1
    assert (run.code, run.stderr) == (3, b"bye")


def test_cancel_once_cancels_a_single_time() -> None:
    session = EchoSession()

    def seen_hello(events: list[Event]) -> bool:
        return any(isinstance(e, TextDelta) and "HELLO" in e.delta for e in events)

    run = drive_session(spawn(), session, REQUEST, on_events=cancel_once(seen_hello))
    assert session.cancels == 1
    assert run.sent.count(b"cancel\n") == 1
    assert cancel_once(None) is None


def test_a_run_without_an_end_fails_naming_stdout_and_stops_the_process() -> None:
    proc = spawn()
    with pytest.raises(AssertionError, match=r"no end within 0\.5s; stdout: b'HELLO\\nLATER\\n'"):
        drive_session(proc, EchoSession(finish=False), REQUEST, timeout=0.5)
    assert not pid_alive(proc.pid)


def test_a_process_that_outlives_exit_timeout_is_killed_without_a_code() -> None:
    proc = spawn("linger")
    run = drive_session(proc, EchoSession(), REQUEST, exit_timeout=0.3)
    assert run.finished == Finished(RunStatus.COMPLETED)
    assert (run.code, run.stderr) == (None, b"")
    assert not pid_alive(proc.pid)


def test_stdout_eof_ends_the_run_through_end_of_output() -> None:
    class Closing(EchoSession):
        def start(self, request: SessionRequest, now_ms: float) -> Actions:
            return Actions(frames=[b"only\n"], controls=[CloseStdin()])

    run = drive_session(spawn(), Closing(finish=False), REQUEST)
    assert run.finished is None
    assert (run.stdout, run.code) == (b"ONLY\n", 3)
