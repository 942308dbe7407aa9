"""The Windows process tree: a Job Object, and failures reported (RUN-WINJOB-001).

The decision table and :class:`OwnedTree`'s Windows branches run on every OS (the
platform and the Job Object are replaced); the ctypes Job Object runs for real in the
``windows`` tests (the Windows CI matrix).
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator

import psutil
import pytest

from harness.runner import proctree
from harness.runner.proctree import OwnedTree, spawn_kwargs
from harness.runner.winjob import (
    Job,
    StopStep,
    ctrl_break_note,
    forced_steps,
    graceful_steps,
    job_failure_note,
)

pytestmark = pytest.mark.rule("RUN-WINJOB-001")

_SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


@pytest.mark.parametrize(("root_exited", "steps"), [(False, (StopStep.CTRL_BREAK,)), (True, ())])
def test_graceful_stop_breaks_the_group_only_while_its_leader_lives(
    root_exited: bool, steps: tuple[StopStep, ...]
) -> None:
    assert graceful_steps(root_exited=root_exited) == steps


@pytest.mark.parametrize(
    ("has_job", "steps"),
    [
        (True, (StopStep.TERMINATE_JOB, StopStep.KILL_SNAPSHOT)),
        (False, (StopStep.KILL_SNAPSHOT,)),
    ],
)
def test_forced_stop_ends_the_job_then_the_snapshot(
    has_job: bool, steps: tuple[StopStep, ...]
) -> None:
    assert forced_steps(has_job=has_job) == steps


def test_notes_name_the_process_and_the_error() -> None:
    note = ctrl_break_note(4242, OSError(87, "The parameter is incorrect"))
    assert "CTRL_BREAK_EVENT" in note and "4242" in note and "parameter is incorrect" in note
    assert "forced stop" in note
    note = job_failure_note(77, OSError(5, "Access is denied"))
    assert "Job Object" in note and "77" in note and "Access is denied" in note


class FakeJob:
    """Stands in for the ctypes Job Object; records what the tree asked of it."""

    def __init__(self, *, fail_assign: bool = False, members: tuple[int, ...] = ()) -> None:
        self.calls: list[str] = []
        self.fail_assign = fail_assign
        self.members = list(members)

    def assign(self, pid: int) -> None:
        self.calls.append(f"assign {pid}")
        if self.fail_assign:
            raise OSError(5, "Access is denied")

    def pids(self) -> list[int]:
        return list(self.members)

    def terminate(self) -> None:
        self.calls.append("terminate")

    def close(self) -> None:
        self.calls.append("close")


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(_SLEEPER)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def as_windows(monkeypatch: pytest.MonkeyPatch) -> list[FakeJob]:
    """Take proctree's Windows branches here; each job it makes is appended to the list."""
    jobs: list[FakeJob] = []
    monkeypatch.setattr(proctree, "_PLATFORM", "win32")
    return jobs


def _use(monkeypatch: pytest.MonkeyPatch, jobs: list[FakeJob], job: FakeJob) -> None:
    def make() -> FakeJob:
        jobs.append(job)
        return job

    monkeypatch.setattr(proctree, "_make_job", make)


def test_the_cli_is_put_in_a_job_right_away(
    monkeypatch: pytest.MonkeyPatch, as_windows: list[FakeJob], sleeper: subprocess.Popen[bytes]
) -> None:
    _use(monkeypatch, as_windows, FakeJob())
    tree = OwnedTree(sleeper.pid, on_note=lambda text: None)
    assert as_windows[0].calls == [f"assign {sleeper.pid}"]
    assert tree.notes == []
    tree.close()
    assert as_windows[0].calls[-1] == "close"


def test_a_failed_ctrl_break_is_reported_not_swallowed(
    monkeypatch: pytest.MonkeyPatch, as_windows: list[FakeJob], sleeper: subprocess.Popen[bytes]
) -> None:
    _use(monkeypatch, as_windows, FakeJob())
    sent: list[int] = []

    def failing_break(group: int) -> None:
        sent.append(group)
        raise OSError(87, "The parameter is incorrect")

    monkeypatch.setattr(proctree, "_ctrl_break", failing_break)
    heard: list[str] = []
    tree = OwnedTree(sleeper.pid, on_note=heard.append)
    tree.terminate()
    assert sent == [sleeper.pid]
    assert heard == tree.notes and len(heard) == 1, f"expected one note, got {heard!r}"
    assert "CTRL_BREAK_EVENT" in heard[0] and "parameter is incorrect" in heard[0]


def test_without_a_listener_the_note_is_a_logged_warning(
    monkeypatch: pytest.MonkeyPatch,
    as_windows: list[FakeJob],
    sleeper: subprocess.Popen[bytes],
    caplog: pytest.LogCaptureFixture,
) -> None:
    _use(monkeypatch, as_windows, FakeJob())

    def failing_break(group: int) -> None:
        raise ValueError("no such group")

    monkeypatch.setattr(proctree, "_ctrl_break", failing_break)
    with caplog.at_level(logging.WARNING, logger="harness.runner.proctree"):
        OwnedTree(sleeper.pid).terminate()
    assert any("no such group" in r.getMessage() for r in caplog.records), caplog.records


def test_no_ctrl_break_once_the_leader_was_reaped(
    monkeypatch: pytest.MonkeyPatch, as_windows: list[FakeJob], sleeper: subprocess.Popen[bytes]
) -> None:
    _use(monkeypatch, as_windows, FakeJob())
    sent: list[int] = []
    monkeypatch.setattr(proctree, "_ctrl_break", sent.append)
    tree = OwnedTree(sleeper.pid, on_note=lambda text: None)
    tree.mark_root_exited()
    tree.terminate()
    assert sent == []


def test_the_forced_stop_terminates_the_job_then_kills_the_snapshot(
    monkeypatch: pytest.MonkeyPatch, as_windows: list[FakeJob], sleeper: subprocess.Popen[bytes]
) -> None:
    _use(monkeypatch, as_windows, FakeJob())
    tree = OwnedTree(sleeper.pid, on_note=lambda text: None)
    tree.kill()
    assert as_windows[0].calls == [f"assign {sleeper.pid}", "terminate"]
    assert sleeper.wait(timeout=60) is not None  # the snapshot kill reached the leader


def test_a_job_that_cannot_be_made_is_reported_and_the_snapshot_still_stops_the_tree(
    monkeypatch: pytest.MonkeyPatch, as_windows: list[FakeJob], sleeper: subprocess.Popen[bytes]
) -> None:
    job = FakeJob(fail_assign=True)
    _use(monkeypatch, as_windows, job)
    heard: list[str] = []
    tree = OwnedTree(sleeper.pid, on_note=heard.append)
    assert job.calls == [f"assign {sleeper.pid}", "close"], "a half-made job must be closed"
    assert len(heard) == 1 and "Job Object" in heard[0] and "Access is denied" in heard[0]
    tree.kill()
    assert "terminate" not in job.calls
    assert sleeper.wait(timeout=60) is not None


def test_job_members_count_as_survivors(
    monkeypatch: pytest.MonkeyPatch, as_windows: list[FakeJob], sleeper: subprocess.Popen[bytes]
) -> None:
    # A member the snapshots never saw (an orphan re-parented away) is still owned.
    stray = subprocess.Popen(_SLEEPER)
    try:
        _use(monkeypatch, as_windows, FakeJob(members=(stray.pid,)))
        tree = OwnedTree(sleeper.pid, on_note=lambda text: None)
        assert stray.pid in {proc.pid for proc in tree.survivors()}
    finally:
        stray.kill()
        stray.wait()


@pytest.mark.posix
def test_job_objects_are_refused_off_windows_with_a_clear_error() -> None:
    with pytest.raises(OSError, match="only on Windows"):
        Job()


# --- the real Job Object (Windows CI) ------------------------------------------------------

_PARENT = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(120)\n"
)


def _spawn_parent_with_child() -> tuple[subprocess.Popen[str], OwnedTree, psutil.Process]:
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, text=True, **spawn_kwargs()
    )
    tree = OwnedTree(parent.pid, on_note=lambda text: None)
    assert parent.stdout is not None
    child = psutil.Process(int(parent.stdout.readline()))
    return parent, tree, child


@pytest.mark.windows
def test_windows_job_kill_reaches_a_grandchild_the_snapshot_never_saw() -> None:
    parent, tree, child = _spawn_parent_with_child()
    try:
        assert tree.notes == [], tree.notes
        assert child.pid in {p.pid for p in tree.survivors()}, "the job should list the child"
        tree.kill()
        parent.wait(timeout=60)
        child.wait(timeout=60)
        assert not child.is_running()
    finally:
        tree.close()
        for proc in (child,):
            if proc.is_running():
                proc.kill()


@pytest.mark.windows
def test_windows_closing_the_job_kills_its_members() -> None:
    parent, tree, child = _spawn_parent_with_child()
    tree.close()
    parent.wait(timeout=60)
    child.wait(timeout=60)
    assert not child.is_running()
