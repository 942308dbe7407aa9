"""Carry out an :class:`~harness.mcp.inject.InjectionPlan`'s file operations, safely.

Rules: MCP-MANAGED-001.
Design: docs/design/mcp.md#harness.mcp.apply
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from harness.errors import HarnessError
from harness.mcp import journal
from harness.mcp.inject import MCP_JSON_NAME, InjectionPlan, path_strictly_inside

__all__ = ["AppliedInjection", "McpApplyError", "apply_injection", "restore_injection"]

_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
#: True where open/stat/unlink/rename accept ``dir_fd`` (POSIX).
_DIR_FD = (
    os.open in os.supports_dir_fd
    and os.stat in os.supports_dir_fd
    and os.unlink in os.supports_dir_fd
    and os.rename in os.supports_dir_fd
    and bool(_O_DIRECTORY)
)


class McpApplyError(HarnessError):
    """A file operation of an injection plan was refused or failed; nothing was written."""

    code = "MCP_APPLY_REFUSED"

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}", rule="MCP-MANAGED-003")
        self.path = path


@dataclass(frozen=True)
class AppliedInjection:
    """What :func:`apply_injection` did: the env overlay for the child, and the files."""

    plan: InjectionPlan
    #: Lay this over the child's environment (``RunRequest.env_overlay``). Values are secret.
    env: Mapping[str, str] = field(repr=False)
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    #: path -> the bytes that were there before (``None``: no file), for restore.
    previous: Mapping[str, bytes | None] = field(default_factory=dict, repr=False)
    #: path -> the mode the previous file had (restored with it).
    modes: Mapping[str, int | None] = field(default_factory=dict)
    #: path -> this run's restore-journal entries for it (SIG-JOURNAL-001).
    journaled: Mapping[str, tuple[journal.Entry, ...]] = field(default_factory=dict, repr=False)


@dataclass
class _Dir:
    """An approved directory: a descriptor (POSIX) or its real path (fallback)."""

    real: str
    fd: int | None


@contextmanager
def _approved_dir(target: str, root: str | None) -> Iterator[_Dir]:
    if os.path.basename(target) != MCP_JSON_NAME:
        raise McpApplyError(target, f"only {MCP_JSON_NAME} is ever written by MCP injection")
    if root is None:
        raise McpApplyError(target, "the plan has no managed projects root")
    parent = os.path.dirname(target)
    try:
        real_root = os.path.realpath(root, strict=True)
        real_parent = os.path.realpath(parent, strict=True)
    except OSError as exc:
        raise McpApplyError(target, f"cannot resolve the directory: {exc.strerror}") from None
    if not path_strictly_inside(real_parent, real_root):
        raise McpApplyError(
            target,
            f"resolves to {real_parent}, which is not strictly inside the managed projects "
            f"root {real_root}; refusing to touch it",
        )
    if not os.path.isdir(real_parent):
        raise McpApplyError(target, "the project directory does not exist")
    if not _DIR_FD:
        yield _Dir(real_parent, None)
        return
    try:
        fd = os.open(real_parent, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW)
    except OSError as exc:
        raise McpApplyError(target, f"cannot open the directory: {exc.strerror}") from None
    try:
        # The descriptor must be the directory the real-path check approved (no swap between
        # the check and the open).
        try:
            opened = os.fstat(fd)
            again = os.path.realpath(parent, strict=True)
            expected = os.stat(again)
        except OSError as exc:
            raise McpApplyError(target, f"cannot re-check the directory: {exc.strerror}") from None
        same = (opened.st_dev, opened.st_ino) == (expected.st_dev, expected.st_ino)
        if not same or not path_strictly_inside(again, real_root):
            raise McpApplyError(target, "the directory changed while it was being checked")
        yield _Dir(real_parent, fd)
    finally:
        os.close(fd)


def _lstat(directory: _Dir) -> os.stat_result | None:
    try:
        if directory.fd is not None:
            return os.stat(MCP_JSON_NAME, dir_fd=directory.fd, follow_symlinks=False)
        return os.lstat(os.path.join(directory.real, MCP_JSON_NAME))
    except FileNotFoundError:
        return None


def _check_existing(target: str, info: os.stat_result | None) -> None:
    if info is None:
        return
    if stat.S_ISLNK(info.st_mode):
        raise McpApplyError(target, "is a symbolic link; refusing to follow or replace it")
    if not stat.S_ISREG(info.st_mode):
        raise McpApplyError(target, "exists and is not a regular file")


def _read_existing(directory: _Dir) -> bytes | None:
    flags = os.O_RDONLY | _O_NOFOLLOW | _O_BINARY
    try:
        if directory.fd is not None:
            fd = os.open(MCP_JSON_NAME, flags, dir_fd=directory.fd)
        else:
            fd = os.open(os.path.join(directory.real, MCP_JSON_NAME), flags)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _write(target: str, directory: _Dir, content: bytes, mode: int = 0o600) -> None:
    temp = f"{MCP_JSON_NAME}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_BINARY
    try:
        if directory.fd is not None:
            fd = os.open(temp, flags, 0o600, dir_fd=directory.fd)
        else:
            fd = os.open(os.path.join(directory.real, temp), flags, 0o600)
    except OSError as exc:
        raise McpApplyError(target, f"cannot create a temp file: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode != 0o600 and hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), stat.S_IMODE(mode))  # a restored file keeps its mode
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        if directory.fd is not None:
            os.replace(temp, MCP_JSON_NAME, src_dir_fd=directory.fd, dst_dir_fd=directory.fd)
        else:
            os.replace(
                os.path.join(directory.real, temp), os.path.join(directory.real, MCP_JSON_NAME)
            )
    except OSError as exc:
        _unlink_quietly(directory, temp)
        raise McpApplyError(target, f"cannot write: {exc.strerror}") from None


def _unlink_quietly(directory: _Dir, name: str) -> None:
    try:
        if directory.fd is not None:
            os.unlink(name, dir_fd=directory.fd)
        else:
            os.unlink(os.path.join(directory.real, name))
    except OSError:
        pass


def _remove(target: str, directory: _Dir) -> bool:
    info = _lstat(directory)
    if info is None:
        return False
    _check_existing(target, info)
    try:
        if directory.fd is not None:
            os.unlink(MCP_JSON_NAME, dir_fd=directory.fd)
        else:
            os.unlink(os.path.join(directory.real, MCP_JSON_NAME))
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise McpApplyError(target, f"cannot remove: {exc.strerror}") from None
    return True


def _journal_begin(target: str, directory: _Dir) -> tuple[journal.Entry, ...]:
    """SIG-JOURNAL-001: the original is journaled (fsync'd) before the file is touched."""
    try:
        entries, _ = journal.begin(directory.real, [MCP_JSON_NAME])
    except journal.JournalError as exc:
        raise McpApplyError(target, f"restore journal: {exc}") from None
    return tuple(entries)


def _journal_finish(target: str, directory: _Dir, entries: tuple[journal.Entry, ...]) -> None:
    try:
        journal.finish(directory.real, entries)
    except journal.JournalError as exc:
        raise McpApplyError(target, f"restore journal: {exc}") from None


def apply_injection(plan: InjectionPlan) -> AppliedInjection:
    """Write/remove the plan's ``.mcp.json`` under the checks above; return the env overlay.

    The env overlay is ``plan.env`` (variables in ``plan.env_untouched`` are not in it: the
    child inherits them unchanged, seed 002 §8.1). When an operation is refused, the ones
    already done are undone before the error propagates.
    """
    previous: dict[str, bytes | None] = {}
    modes: dict[str, int | None] = {}
    journaled: dict[str, tuple[journal.Entry, ...]] = {}
    done = AppliedInjection(plan, {}, previous=previous, modes=modes, journaled=journaled)
    written: list[str] = []
    removed: list[str] = []
    try:
        for write in plan.writes:
            with _approved_dir(write.path, plan.managed_root) as directory:
                _check_existing(write.path, _lstat(directory))
                entries = _journal_begin(write.path, directory)
                original = entries[0].original
                previous[write.path], modes[write.path] = original.content, original.mode
                journaled[write.path] = entries
                _write(write.path, directory, write.content.encode("utf-8"))
            written.append(write.path)
        for path in plan.removals:
            with _approved_dir(path, plan.managed_root) as directory:
                _check_existing(path, _lstat(directory))
                entries = _journal_begin(path, directory)
                original = entries[0].original
                if _remove(path, directory):
                    previous[path], modes[path] = original.content, original.mode
                    journaled[path] = entries
                    removed.append(path)
                else:
                    _journal_finish(path, directory, entries)
    except BaseException:
        restore_injection(done)
        raise
    return AppliedInjection(
        plan=plan,
        env=dict(plan.env),
        written=tuple(written),
        removed=tuple(removed),
        previous=previous,
        modes=modes,
        journaled=journaled,
    )


def restore_injection(applied: AppliedInjection) -> None:
    """Put every file :func:`apply_injection` touched back as it was, with its mode (same
    safety checks), and drop the run's journal entries (SIG-JOURNAL-001, SIG-JOURNAL-003)."""
    for path, before in applied.previous.items():
        with _approved_dir(path, applied.plan.managed_root) as directory:
            entries = applied.journaled.get(path)
            if entries:
                _journal_finish(path, directory, entries)
            elif before is None:
                _remove(path, directory)
            else:
                _check_existing(path, _lstat(directory))
                mode = applied.modes.get(path)
                _write(path, directory, before, 0o600 if mode is None else mode)
