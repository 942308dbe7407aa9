"""The restore journal: a user's config survives a harness that is killed outright.

Rules: MCP-MANAGED-001, SIG-JOURNAL-001.
Design: docs/design/mcp.md#harness.mcp.journal
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import secrets
import stat
import sys
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import psutil

from harness.errors import HarnessError
from harness.mcp.inject import MCP_JSON_NAME

__all__ = [
    "JOURNAL_FORMAT",
    "JOURNAL_NAME",
    "Entry",
    "JournalError",
    "Original",
    "Owner",
    "Recovery",
    "begin",
    "finish",
    "read_entries",
    "recover",
]

#: The journal's file name, in the directory of the files it guards.
JOURNAL_NAME = ".harness-mcp-journal.json"
JOURNAL_FORMAT = "harness-mcp-journal/1"

_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_DIR_FD = (
    os.open in os.supports_dir_fd
    and os.stat in os.supports_dir_fd
    and os.unlink in os.supports_dir_fd
    and os.rename in os.supports_dir_fd
    and bool(_O_DIRECTORY)
)
#: Two readings of one process's start time agree within this (seconds).
_START_TOLERANCE_S = 0.01


class JournalError(HarnessError):
    """The journal cannot be read, names a file it may not, or cannot be written."""

    code = "MCP_JOURNAL_INVALID"

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}", rule="SIG-JOURNAL-002")
        self.path = path


@dataclass(frozen=True)
class Owner:
    """The harness process that made a change: its pid and its start time (psutil)."""

    pid: int
    started: float

    @classmethod
    def current(cls) -> Owner:
        return cls(os.getpid(), psutil.Process().create_time())

    def alive(self) -> bool:
        """Still running (and not a new process that reused the pid)."""
        try:
            proc = psutil.Process(self.pid)
            if proc.status() == psutil.STATUS_ZOMBIE:
                return False
            return abs(proc.create_time() - self.started) < _START_TOLERANCE_S
        except psutil.Error:
            return False


@dataclass(frozen=True)
class Original:
    """What a file was before injection: its bytes and mode, or ``content=None`` (absent)."""

    content: bytes | None = field(repr=False)
    mode: int | None = None


@dataclass(frozen=True)
class Entry:
    """One run's claim on one file of the directory."""

    id: str
    owner: Owner
    name: str
    original: Original

    def to_json(self) -> dict[str, Any]:
        content = self.original.content
        return {
            "id": self.id,
            "pid": self.owner.pid,
            "started": self.owner.started,
            "name": self.name,
            "original": None if content is None else base64.b64encode(content).decode("ascii"),
            "mode": self.original.mode,
        }


@dataclass(frozen=True)
class Recovery:
    """What :func:`recover` did in one directory."""

    directory: str
    #: Files put back from entries of runs that are gone (their paths).
    restored: tuple[str, ...] = ()
    #: Files removed because they did not exist before a run that is gone created them.
    removed: tuple[str, ...] = ()
    #: Entries left alone because their run is still alive.
    live: tuple[Entry, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "directory": self.directory,
            "restored": list(self.restored),
            "removed": list(self.removed),
            "live_runs": sorted({e.owner.pid for e in self.live}),
        }


# --------------------------------------------------------------------------- the directory


@dataclass
class _Dir:
    path: str
    fd: int | None

    def where(self, name: str) -> str:
        return os.path.join(self.path, name)

    def open(self, name: str, flags: int, mode: int = 0o600) -> int:
        if self.fd is not None:
            return os.open(name, flags, mode, dir_fd=self.fd)
        return os.open(self.where(name), flags, mode)

    def lstat(self, name: str) -> os.stat_result | None:
        try:
            if self.fd is not None:
                return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
            return os.lstat(self.where(name))
        except FileNotFoundError:
            return None

    def unlink(self, name: str) -> None:
        if self.fd is not None:
            os.unlink(name, dir_fd=self.fd)
        else:
            os.unlink(self.where(name))

    def replace(self, src: str, dst: str) -> None:
        if self.fd is not None:
            os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        else:
            os.replace(self.where(src), self.where(dst))

    def sync(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):  # some filesystems refuse fsync on a dir
                os.fsync(self.fd)


@contextlib.contextmanager
def _locked(directory: str) -> Iterator[_Dir]:
    """The directory, opened once and locked against other harness processes."""
    if not _DIR_FD:
        if not os.path.isdir(directory):
            raise JournalError(directory, "is not a directory")
        yield _Dir(directory, None)
        return
    try:
        fd = os.open(directory, os.O_RDONLY | _O_DIRECTORY)
    except OSError as exc:
        raise JournalError(directory, f"cannot open the directory: {exc.strerror}") from None
    try:
        if sys.platform != "win32":
            import fcntl  # POSIX only: Windows has no fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        yield _Dir(directory, fd)
    finally:
        os.close(fd)  # closing releases the lock


def _write_atomic(directory: _Dir, name: str, content: bytes, mode: int) -> None:
    """``content`` to ``name`` by an fsync'd temp file renamed over it; never follows a link."""
    temp = f"{name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_BINARY
    fd = directory.open(temp, flags, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            if hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), stat.S_IMODE(mode))
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        if not hasattr(os, "fchmod"):
            os.chmod(directory.where(temp), stat.S_IMODE(mode))
        directory.replace(temp, name)
    except BaseException:
        with contextlib.suppress(OSError):
            directory.unlink(temp)
        raise
    directory.sync()


# --------------------------------------------------------------------------- the journal


def _problem(path: str, index: int, what: str) -> JournalError:
    return JournalError(path, f"entries[{index}]: {what}")


def _parse(path: str, raw: bytes) -> list[Entry]:
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise JournalError(path, f"is not JSON ({type(exc).__name__})") from None
    if not isinstance(doc, dict) or doc.get("format") != JOURNAL_FORMAT:
        raise JournalError(path, f"is not a {JOURNAL_FORMAT} journal")
    items = doc.get("entries")
    if not isinstance(items, list):
        raise JournalError(path, "has no entries list")
    entries: list[Entry] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _problem(path, index, "is not an object")
        pid, started, name = item.get("pid"), item.get("started"), item.get("name")
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            raise _problem(path, index, "pid is not a positive integer")
        if not isinstance(started, (int, float)) or isinstance(started, bool):
            raise _problem(path, index, "started is not a number")
        if name != MCP_JSON_NAME:
            raise _problem(path, index, f"names {name!r}; only {MCP_JSON_NAME} is restored")
        encoded, mode = item.get("original"), item.get("mode")
        content: bytes | None = None
        if encoded is not None:
            if not isinstance(encoded, str):
                raise _problem(path, index, "original is not base64 text or null")
            try:
                content = base64.b64decode(encoded.encode("ascii"), validate=True)
            except (binascii.Error, UnicodeEncodeError):
                raise _problem(path, index, "original is not valid base64") from None
        if mode is not None and (not isinstance(mode, int) or isinstance(mode, bool)):
            raise _problem(path, index, "mode is not an integer or null")
        entries.append(
            Entry(
                id=str(item.get("id") or uuid.uuid4().hex),
                owner=Owner(pid, float(started)),
                name=MCP_JSON_NAME,
                original=Original(content, None if mode is None else stat.S_IMODE(mode)),
            )
        )
    return entries


def _load(directory: _Dir) -> list[Entry]:
    where = directory.where(JOURNAL_NAME)
    info = directory.lstat(JOURNAL_NAME)
    if info is None:
        return []
    if not stat.S_ISREG(info.st_mode):
        raise JournalError(where, "is not a regular file; refusing to read it")
    try:
        fd = directory.open(JOURNAL_NAME, os.O_RDONLY | _O_NOFOLLOW | _O_BINARY)
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise JournalError(where, f"cannot read: {exc.strerror}") from None
    return _parse(where, raw)


def _save(directory: _Dir, entries: Sequence[Entry]) -> None:
    where = directory.where(JOURNAL_NAME)
    try:
        if not entries:
            with contextlib.suppress(FileNotFoundError):
                directory.unlink(JOURNAL_NAME)
            directory.sync()
            return
        doc = {"format": JOURNAL_FORMAT, "entries": [e.to_json() for e in entries]}
        _write_atomic(directory, JOURNAL_NAME, json.dumps(doc, indent=1).encode() + b"\n", 0o600)
    except OSError as exc:
        raise JournalError(where, f"cannot write: {exc.strerror}") from None


def _read_original(directory: _Dir, name: str) -> Original:
    where = directory.where(name)
    info = directory.lstat(name)
    if info is None:
        return Original(None, None)
    if not stat.S_ISREG(info.st_mode):
        raise JournalError(where, "is not a regular file; refusing to journal or replace it")
    try:
        fd = directory.open(name, os.O_RDONLY | _O_NOFOLLOW | _O_BINARY)
        with os.fdopen(fd, "rb") as handle:
            return Original(handle.read(), stat.S_IMODE(info.st_mode))
    except OSError as exc:
        raise JournalError(where, f"cannot read: {exc.strerror}") from None


def _put_back(directory: _Dir, name: str, original: Original) -> bool:
    """Make ``name`` what ``original`` says; True when something changed."""
    where = directory.where(name)
    info = directory.lstat(name)
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise JournalError(where, "is no longer a regular file; refusing to replace it")
    try:
        if original.content is None:
            if info is None:
                return False
            directory.unlink(name)
            directory.sync()
            return True
        mode = 0o644 if original.mode is None else original.mode
        _write_atomic(directory, name, original.content, mode)
        return True
    except OSError as exc:
        raise JournalError(where, f"cannot restore: {exc.strerror}") from None


def _settle(
    directory: _Dir, entries: list[Entry], me: Owner | None
) -> tuple[list[Entry], Recovery]:
    """Apply the entries of runs that are gone (names no live run holds); keep the rest."""
    live = [e for e in entries if e.owner == me or e.owner.alive()]
    held = {e.name for e in live}
    restored: list[str] = []
    removed: list[str] = []
    for name in sorted({e.name for e in entries} - held):
        oldest = next(e for e in entries if e.name == name)  # the first claim: the user's bytes
        if _put_back(directory, name, oldest.original):
            (restored if oldest.original.content is not None else removed).append(
                directory.where(name)
            )
    # Dead entries for a name a live run holds carry the same original: drop them.
    report = Recovery(directory.path, tuple(restored), tuple(removed), tuple(live))
    return live, report


# --------------------------------------------------------------------------- public API


def read_entries(directory: str) -> list[Entry]:
    """The journal's entries in ``directory`` (none when there is no journal)."""
    with _locked(directory) as opened:
        return _load(opened)


def recover(directory: str) -> Recovery:
    """Apply what runs that are gone left in ``directory``'s journal (SIG-JOURNAL-002)."""
    with _locked(directory) as opened:
        entries = _load(opened)
        if not entries:
            return Recovery(directory)
        kept, report = _settle(opened, entries, None)
        if kept != entries:
            _save(opened, kept)
        return report


def begin(
    directory: str, names: Sequence[str], *, owner: Owner | None = None
) -> tuple[list[Entry], Recovery]:
    """Journal ``names`` of ``directory`` before they are changed; recover dead runs first.

    Returns this run's new entries (hand them to :func:`finish`) and what was recovered.
    Each entry's original is the file as it is now, or, when a live run already holds the
    file, that run's original (SIG-JOURNAL-003).
    """
    me = owner or Owner.current()
    with _locked(directory) as opened:
        kept, report = _settle(opened, _load(opened), me)
        mine: list[Entry] = []
        for name in names:
            if name != MCP_JSON_NAME:
                raise JournalError(opened.where(name), f"only {MCP_JSON_NAME} is journaled")
            held = next((e for e in kept if e.name == name), None)
            original = held.original if held is not None else _read_original(opened, name)
            mine.append(Entry(uuid.uuid4().hex, me, name, original))
        _save(opened, [*kept, *mine])
        return mine, report


def finish(directory: str, entries: Sequence[Entry]) -> list[str]:
    """Drop ``entries`` (one run's, from :func:`begin`) and put each file back unless another
    live run still holds it. Returns the paths that were put back or removed."""
    ids = {e.id for e in entries}
    with _locked(directory) as opened:
        current = _load(opened)
        live = [e for e in current if e.id not in ids and e.owner.alive()]
        held = {e.name for e in live}
        changed: list[str] = []
        # Every file no live run holds any more comes back, from its oldest claim (the
        # user's original): this run's, or that of a run that is gone.
        for name in sorted({e.name for e in (*current, *entries)} - held):
            oldest = next(e for e in (*current, *entries) if e.name == name)
            if _put_back(opened, name, oldest.original):
                changed.append(opened.where(name))
        _save(opened, live)
        return changed
