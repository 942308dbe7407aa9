"""The process tree one run owns, and how it is stopped (wire §B.7 "Process-tree termination").

Design: docs/design/runner.md#harness.runner.proctree
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import psutil

from harness.runner.winjob import (
    Job,
    StopStep,
    ctrl_break_note,
    forced_steps,
    graceful_steps,
    job_failure_note,
)

__all__ = ["OwnedTree", "spawn_kwargs"]

_log = logging.getLogger(__name__)

#: ``sys.platform``, read through here so the Windows branches can be tested anywhere.
_PLATFORM = sys.platform
#: Makes the run's Job Object (replaced in tests).
_make_job: Callable[[], Job] = Job


def _ctrl_break(group: int) -> None:
    """``CTRL_BREAK_EVENT`` to a console process group (``GenerateConsoleCtrlEvent``)."""
    os.kill(group, getattr(signal, "CTRL_BREAK_EVENT", 1))


def spawn_kwargs() -> dict[str, Any]:
    """``subprocess`` keywords that make the child the root of a tree we can stop.

    wire §B.7: POSIX ``start_new_session=True``; Windows ``CREATE_NEW_PROCESS_GROUP``.
    """
    if _PLATFORM == "win32":
        return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200)}
    return {"start_new_session": True}


#: How long one scan of the process table serves every tree's snapshot in this process.
#: Concurrent runs (``harness conform`` runs 16) each snapshot every 500 ms; each scan reads
#: every process's stat file, so sharing it keeps the cost per interval, not per run.
PPID_MAP_TTL_S = 0.2


class _PpidTable:
    """pid -> parent pid for every process, shared by the trees of this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken = float("-inf")
        #: Wall-clock time of the scan (processes started later are not in it).
        self.scanned_at = 0.0
        self._table: dict[int, int] = {}

    def get(self) -> tuple[dict[int, int], float]:
        """The table, at most :data:`PPID_MAP_TTL_S` old, and when it was scanned."""
        with self._lock:
            now = time.monotonic()
            if now - self._taken > PPID_MAP_TTL_S:
                wall = time.time()
                fresh = scan_ppids()
                self._table, self._taken, self.scanned_at = fresh, now, wall
            return self._table, self.scanned_at


def scan_ppids() -> dict[int, int]:
    """pid -> parent pid of every process now (Linux: straight from ``/proc``).

    psutil builds a Process per pid and reads its stat file two or three times (identity,
    then the asked field); reading each ``/proc/<pid>/stat`` once is ~4x cheaper, and
    ``harness conform`` scans five times a second. Elsewhere, or when ``/proc`` cannot be
    read, psutil does it.
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            return _scan_proc()
    table: dict[int, int] = {}
    for proc in psutil.process_iter(["ppid"]):
        ppid = proc.info.get("ppid")
        if isinstance(ppid, int):
            table[proc.pid] = ppid
    return table


def _scan_proc() -> dict[int, int]:
    table: dict[int, int] = {}
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    data = stat.read()
            except OSError:  # exited since the listing, or not ours to read
                continue
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
            rest = data[data.rfind(b")") + 2 :].split(b" ", 2)
            if len(rest) >= 2 and rest[1].isdigit():
                table[int(entry.name)] = int(rest[1])
    return table


_PPID_TABLE = _PpidTable()


def _descendants(root: int, table: dict[int, int]) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid in table.items():
        if pid != ppid:
            children.setdefault(ppid, []).append(pid)
    out: list[int] = []
    stack = list(children.get(root, ()))
    seen = {root}
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        out.append(pid)
        stack.extend(children.get(pid, ()))
    return out


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


class OwnedTree:
    """The processes one run started: the leader, its group (POSIX) or job (Windows), and
    known descendants.

    ``on_note`` receives each line the tree has to report (a CTRL_BREAK that failed, a job
    that could not be made); without it the line is logged as a warning. Either way it
    is kept in :attr:`notes`.
    """

    def __init__(self, pid: int, *, on_note: Callable[[str], None] | None = None) -> None:
        self.pid = pid
        self._known: dict[int, psutil.Process] = {}
        self._on_note = on_note
        #: What the tree reported while stopping (RUN-WINJOB-001), in order.
        self.notes: list[str] = []
        try:
            self._root: psutil.Process | None = psutil.Process(pid)
        except psutil.Error:
            self._root = None
        self.root_exited = False
        self._job: Job | None = None
        if _PLATFORM == "win32":
            try:
                job = _make_job()
                try:
                    job.assign(pid)
                except OSError:
                    job.close()
                    raise
                self._job = job
            except OSError as exc:
                self._note(job_failure_note(pid, exc))

    def _note(self, text: str) -> None:
        self.notes.append(text)
        if self._on_note is not None:
            self._on_note(text)
        else:
            _log.warning("%s", text)

    def close(self) -> None:
        """Windows: close the job; members still alive die with it (kill-on-close)."""
        if self._job is not None:
            self._job.close()

    # -- knowledge --------------------------------------------------------------------------

    def snapshot(self) -> None:
        """Remember the leader's current descendants (call while the run is live)."""
        root = self._root
        if root is None or self.root_exited:
            return
        # A shared, briefly cached process table (PPID_MAP_TTL_S): a process younger than
        # the cache is seen by the next snapshot, as one younger than the interval is.
        table, scanned_at = _PPID_TABLE.get()
        for pid in _descendants(root.pid, table):
            if pid in self._known:
                continue
            try:
                child = psutil.Process(pid)
                # RUN-OWNED-001: a pid that exited and was reused after the scan belongs to
                # someone else; the scan cannot have seen a process that started after it.
                if child.create_time() > scanned_at + 0.05:
                    continue
            except psutil.Error:
                continue
            self._known[pid] = child

    def mark_root_exited(self) -> None:
        """The leader was reaped: its pid may be reused, so it is never signalled again."""
        self.root_exited = True

    def _group_members(self) -> list[psutil.Process]:
        """POSIX: every process whose group is ours (including ones psutil never saw)."""
        if sys.platform == "win32":
            return []
        members: list[psutil.Process] = []
        for pid in psutil.pids():
            if pid == self.pid and self.root_exited:
                continue
            try:
                if os.getpgid(pid) != self.pid:
                    continue
                members.append(psutil.Process(pid))
            except (OSError, psutil.Error):
                continue
        return members

    def _job_members(self) -> list[psutil.Process]:
        """Windows: the job's members (a member's pid is never someone else's)."""
        if self._job is None:
            return []
        try:
            pids = self._job.pids()
        except OSError:
            return []
        members: list[psutil.Process] = []
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                members.append(psutil.Process(pid))
        return members

    def survivors(self) -> list[psutil.Process]:
        """Owned processes that are still alive (zombies excluded)."""
        found: dict[int, psutil.Process] = {}
        if self._root is not None and not self.root_exited and _alive(self._root):
            found[self._root.pid] = self._root
        for proc in self._group_members():
            if _alive(proc):
                found.setdefault(proc.pid, proc)
        for proc in self._job_members():
            if _alive(proc):
                found.setdefault(proc.pid, proc)
        for pid, proc in list(self._known.items()):
            if _alive(proc):
                found.setdefault(pid, proc)
            else:
                del self._known[pid]
        return list(found.values())

    # -- stopping ---------------------------------------------------------------------------

    def terminate(self) -> None:
        """The graceful stop: SIGTERM to the group and known escapees; Windows CTRL_BREAK."""
        self.snapshot()
        if _PLATFORM == "win32":
            for step in graceful_steps(root_exited=self.root_exited):
                if step is StopStep.CTRL_BREAK:
                    # wire §B.7: CTRL_BREAK_EVENT reaches the new process group (console
                    # children). RUN-WINJOB-001: a failure is reported, not swallowed.
                    try:
                        _ctrl_break(self.pid)
                    except (OSError, ValueError) as exc:
                        self._note(ctrl_break_note(self.pid, exc))
            return
        self._signal_group(signal.SIGTERM)
        for proc in list(self._known.values()):
            with contextlib.suppress(psutil.Error, OSError):
                proc.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        """The forced stop: SIGKILL (POSIX group + snapshot) / the job, then the snapshot."""
        self.snapshot()
        if _PLATFORM == "win32":
            if self._job is not None and StopStep.TERMINATE_JOB in forced_steps(has_job=True):
                try:
                    self._job.terminate()
                except OSError as exc:
                    self._note(f"harness: TerminateJobObject failed ({exc}); killing the snapshot")
        elif sys.platform != "win32":
            self._signal_group(signal.SIGKILL)
        victims = list(self._known.values())
        if self._root is not None and not self.root_exited:
            victims.insert(0, self._root)
        for proc in victims:
            with contextlib.suppress(psutil.Error, OSError):
                proc.kill()

    def _signal_group(self, sig: int) -> None:
        if sys.platform == "win32":
            return
        if self.root_exited and not self._group_members():
            # The group is empty, so its id may be recycled: never signal it again.
            return
        # The group id stays ours while a member exists (wire §B.7: "the group may outlive
        # the leader"); ESRCH means it emptied meanwhile.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)
