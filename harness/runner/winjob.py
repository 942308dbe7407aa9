"""Windows: the run's process tree as a Job Object (seed 001 §10, RUN-WINJOB-001).

Design: docs/design/runner.md#harness.runner.winjob
"""

from __future__ import annotations

import enum
import sys
import weakref

__all__ = [
    "JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE",
    "Job",
    "StopStep",
    "ctrl_break_note",
    "forced_steps",
    "graceful_steps",
    "job_failure_note",
]

#: ``JOBOBJECT_BASIC_LIMIT_INFORMATION.LimitFlags``: closing the last handle kills every member.
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
_JOB_OBJECT_BASIC_PROCESS_ID_LIST = 3
_JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9
_PROCESS_TERMINATE = 0x0001
_PROCESS_SET_QUOTA = 0x0100
_ERROR_MORE_DATA = 234
#: The exit code every member gets from the forced stop (that of ``TerminateProcess`` use).
FORCED_EXIT_CODE = 1


class StopStep(str, enum.Enum):
    """One thing the Windows stop ladder does."""

    #: ``CTRL_BREAK_EVENT`` to the CLI's console process group (graceful).
    CTRL_BREAK = "ctrl-break"
    #: ``TerminateJobObject``: every process in the run's job (forced).
    TERMINATE_JOB = "terminate-job"
    #: ``TerminateProcess`` on each process of the psutil snapshot (forced).
    KILL_SNAPSHOT = "kill-snapshot"


def graceful_steps(*, root_exited: bool) -> tuple[StopStep, ...]:
    """The graceful stop: CTRL_BREAK to the group, unless its leader is gone.

    The group's id is the leader's pid; once the leader was reaped that number may name
    someone else's group (RUN-OWNED-001), so nothing is sent and the forced stop follows.
    """
    return () if root_exited else (StopStep.CTRL_BREAK,)


def forced_steps(*, has_job: bool) -> tuple[StopStep, ...]:
    """The forced stop: the job first (it reaches every member), then the snapshot.

    The snapshot kill still runs with a job: it reaches processes started before the
    assignment. Without a job (the assignment failed) it is all there is.
    """
    if has_job:
        return (StopStep.TERMINATE_JOB, StopStep.KILL_SNAPSHOT)
    return (StopStep.KILL_SNAPSHOT,)


def ctrl_break_note(pid: int, error: BaseException) -> str:
    """The line reported when CTRL_BREAK_EVENT could not be delivered (never silence)."""
    return (
        f"harness: CTRL_BREAK_EVENT to process group {pid} failed "
        f"({type(error).__name__}: {error}); the forced stop follows after the grace period"
    )


def job_failure_note(pid: int, error: BaseException) -> str:
    """The line reported when the CLI could not be put in a Job Object."""
    return (
        f"harness: could not put process {pid} in a Job Object "
        f"({type(error).__name__}: {error}); the forced stop kills the processes it has seen"
    )


class Job:
    """A Job Object that kills its members when its last handle closes (Windows only)."""

    def __init__(self) -> None:
        self._handle = _create_kill_on_close_job()
        self._finalizer = weakref.finalize(self, _close_handle, self._handle)

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def assign(self, pid: int) -> None:
        """Put process ``pid`` (and so everything it starts from now on) in the job."""
        _assign(self._handle, pid)

    def pids(self) -> list[int]:
        """The pids of the job's live members."""
        return [] if self.closed else _member_pids(self._handle)

    def terminate(self) -> None:
        """Kill every member (``TerminateJobObject``)."""
        if not self.closed:
            _terminate(self._handle)

    def close(self) -> None:
        """Close the handle; any member still alive dies with it."""
        self._finalizer()


def _close_handle(handle: int) -> None:
    if sys.platform == "win32":
        import ctypes  # Windows only: kernel32 exists there alone

        ctypes.WinDLL("kernel32", use_last_error=True).CloseHandle(handle)


if sys.platform == "win32":
    import ctypes
    from ctypes import wintypes

    _kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    _kernel32.CreateJobObjectW.restype = wintypes.HANDLE
    _kernel32.CreateJobObjectW.argtypes = (wintypes.LPVOID, wintypes.LPCWSTR)
    _kernel32.OpenProcess.restype = wintypes.HANDLE
    _kernel32.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
    _kernel32.SetInformationJobObject.argtypes = (
        wintypes.HANDLE,
        ctypes.c_int,
        wintypes.LPVOID,
        wintypes.DWORD,
    )
    _kernel32.QueryInformationJobObject.argtypes = (
        wintypes.HANDLE,
        ctypes.c_int,
        wintypes.LPVOID,
        wintypes.DWORD,
        ctypes.POINTER(wintypes.DWORD),
    )
    _kernel32.AssignProcessToJobObject.argtypes = (wintypes.HANDLE, wintypes.HANDLE)
    _kernel32.TerminateJobObject.argtypes = (wintypes.HANDLE, wintypes.UINT)
    _kernel32.CloseHandle.argtypes = (wintypes.HANDLE,)

    class _IoCounters(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_ulonglong)
            for name in (
                "ReadOperationCount",
                "WriteOperationCount",
                "OtherOperationCount",
                "ReadTransferCount",
                "WriteTransferCount",
                "OtherTransferCount",
            )
        ]

    class _BasicLimits(ctypes.Structure):
        _fields_ = [
            ("PerProcessUserTimeLimit", ctypes.c_longlong),
            ("PerJobUserTimeLimit", ctypes.c_longlong),
            ("LimitFlags", wintypes.DWORD),
            ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t),
            ("ActiveProcessLimit", wintypes.DWORD),
            ("Affinity", ctypes.c_size_t),
            ("PriorityClass", wintypes.DWORD),
            ("SchedulingClass", wintypes.DWORD),
        ]

    class _ExtendedLimits(ctypes.Structure):
        _fields_ = [
            ("BasicLimitInformation", _BasicLimits),
            ("IoInfo", _IoCounters),
            ("ProcessMemoryLimit", ctypes.c_size_t),
            ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t),
            ("PeakJobMemoryUsed", ctypes.c_size_t),
        ]

    def _fail(what: str) -> OSError:
        error = ctypes.get_last_error()
        return OSError(error, f"{what} failed: {ctypes.FormatError(error).strip()}")

    def _create_kill_on_close_job() -> int:
        handle = _kernel32.CreateJobObjectW(None, None)
        if not handle:
            raise _fail("CreateJobObjectW")
        limits = _ExtendedLimits()
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        if not _kernel32.SetInformationJobObject(
            handle,
            _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION,
            ctypes.byref(limits),
            ctypes.sizeof(limits),
        ):
            error = _fail("SetInformationJobObject")
            _kernel32.CloseHandle(handle)
            raise error
        return int(handle)

    def _assign(job: int, pid: int) -> None:
        process = _kernel32.OpenProcess(_PROCESS_SET_QUOTA | _PROCESS_TERMINATE, False, pid)
        if not process:
            raise _fail(f"OpenProcess({pid})")
        try:
            if not _kernel32.AssignProcessToJobObject(job, process):
                raise _fail(f"AssignProcessToJobObject({pid})")
        finally:
            _kernel32.CloseHandle(process)

    def _member_pids(job: int) -> list[int]:
        capacity = 64
        while True:

            class _PidList(ctypes.Structure):
                _fields_ = [
                    ("NumberOfAssignedProcesses", wintypes.DWORD),
                    ("NumberOfProcessIdsInList", wintypes.DWORD),
                    ("ProcessIdList", ctypes.c_size_t * capacity),
                ]

            listing = _PidList()
            ok = _kernel32.QueryInformationJobObject(
                job,
                _JOB_OBJECT_BASIC_PROCESS_ID_LIST,
                ctypes.byref(listing),
                ctypes.sizeof(listing),
                None,
            )
            if ok or ctypes.get_last_error() != _ERROR_MORE_DATA:
                if not ok:
                    raise _fail("QueryInformationJobObject")
                count = listing.NumberOfProcessIdsInList
                return [int(pid) for pid in listing.ProcessIdList[:count]]
            capacity = max(capacity * 2, int(listing.NumberOfAssignedProcesses) + 16)

    def _terminate(job: int) -> None:
        if not _kernel32.TerminateJobObject(job, FORCED_EXIT_CODE):
            raise _fail("TerminateJobObject")

else:
    _NOT_WINDOWS = "Job Objects exist only on Windows"

    def _create_kill_on_close_job() -> int:
        raise OSError(_NOT_WINDOWS)

    def _assign(job: int, pid: int) -> None:
        raise OSError(_NOT_WINDOWS)

    def _member_pids(job: int) -> list[int]:
        raise OSError(_NOT_WINDOWS)

    def _terminate(job: int) -> None:
        raise OSError(_NOT_WINDOWS)
