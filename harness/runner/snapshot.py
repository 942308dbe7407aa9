"""File snapshots taken around a run: which project files it wrote, which pi session file.

The runner does not watch the filesystem; it compares two snapshots (relative path ->
``(size, mtime_ns)``) taken before spawn and after the tree is reaped (rule
RUN-FILES-001). A path is *written* when it is new or its size or mtime changed.
Symbolic links are recorded as themselves (never followed), so a link to a directory
outside the project cannot pull that directory into the report. ``.git`` directories
are skipped (version-control metadata, not project output). A snapshot stops after
:data:`MAX_ENTRIES` entries and says so (``truncated``), so a huge tree costs a bounded
walk.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping

__all__ = [
    "MAX_ENTRIES",
    "SKIPPED_DIRS",
    "TreeSnapshot",
    "changed_paths",
    "snapshot_jsonl",
    "snapshot_tree",
]

MAX_ENTRIES = 50_000
SKIPPED_DIRS = frozenset({".git"})

#: relative path (``/``-separated) -> (size, mtime_ns)
TreeSnapshot = dict[str, tuple[int, int]]


def snapshot_tree(root: str, *, max_entries: int = MAX_ENTRIES) -> tuple[TreeSnapshot, bool]:
    """Every regular file and link under ``root``; ``(entries, truncated)``."""
    entries: TreeSnapshot = {}
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        path = os.path.join(root, rel_dir) if rel_dir else root
        try:
            with os.scandir(path) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in items:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                if entry.name not in SKIPPED_DIRS:
                    stack.append(rel)
                continue
            if len(entries) >= max_entries:
                return entries, True
            entries[rel] = (info.st_size, info.st_mtime_ns)
    return entries, False


def changed_paths(
    before: Mapping[str, tuple[int, int]], after: Mapping[str, tuple[int, int]]
) -> list[str]:
    """Paths of ``after`` that are new or differ from ``before``, sorted."""
    return sorted(p for p, s in after.items() if before.get(p) != s)


def snapshot_jsonl(directory: str) -> dict[str, tuple[int, float]]:
    """pi-rpc: ``*.jsonl`` directly in ``directory`` as absolute path -> (size, mtime).

    Feeds :meth:`harness.protocols.pi_rpc.PiRpcSession.capture_session_file` (ref §2.7:
    "capture changed ``.pi/sessions/*.jsonl``"); a missing directory is empty.
    """
    out: dict[str, tuple[int, float]] = {}
    try:
        with os.scandir(directory) as it:
            for entry in it:
                if not entry.name.endswith(".jsonl"):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    out[os.path.abspath(entry.path)] = (info.st_size, info.st_mtime)
    except OSError:
        return out
    return out
