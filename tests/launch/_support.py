"""Helpers for the launch/detection tests: synthetic defs, real sh scripts, child checks."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil

from harness.defs.types import AgentDef, BuildOptions, RuntimeContext

#: Dirs that hold ``sh``, ``sleep``, ``cat`` ... for the scripts' child PATH.
SYSTEM_PATH = os.pathsep.join(d for d in ("/usr/local/bin", "/usr/bin", "/bin") if os.path.isdir(d))


def _no_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    return []


def make_def(agent_id: str = "fake", *, bin: str | None = None, **fields: Any) -> AgentDef:
    """A synthetic :class:`AgentDef` (tests never depend on the real defs)."""
    return AgentDef(
        id=agent_id,
        name=fields.pop("name", f"Fake {agent_id}"),
        bin=bin if bin is not None else agent_id,
        build_args=_no_args,
        stream_format="plain",
        **fields,
    )


def write_script(path: Path, body: str, *, executable: bool = True) -> Path:
    """Write a POSIX ``#!/bin/sh`` script (``body`` follows the shebang line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body.lstrip("\n"))
    mode = path.stat().st_mode
    if executable:
        path.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    else:
        path.chmod(mode & ~(stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))
    return path


def child_pids() -> set[int]:
    """Live (non-zombie) descendants of this test process."""
    out: set[int] = set()
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.status() != psutil.STATUS_ZOMBIE:
                out.add(proc.pid)
        except psutil.NoSuchProcess:
            continue
    return out


def _dead(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def is_gone(pid: int, *, grace_s: float = 3.0) -> bool:
    """The process no longer runs (absent, or a zombie awaiting its reaper).

    A SIGKILL takes effect when the kernel next schedules the target, so a process
    killed a moment ago may still show as running: poll for up to ``grace_s``.
    """
    deadline = time.monotonic() + grace_s
    while not _dead(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


def new_children(before: set[int], *, grace_s: float = 3.0) -> set[int]:
    """Descendants started since ``before`` that are still alive after ``grace_s`` at most."""
    deadline = time.monotonic() + grace_s
    while True:
        left = child_pids() - before
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.01)
