"""``harness conform`` over every built-in def: wall time, CPU time and processes started.

The command runs in this process (``harness.cli.main``), so what it costs is counted
exactly: CPU is this process's own plus that of every child it waited for, processes
are the ``subprocess.Popen`` calls it made (the fakes and their probes), and the
adapter-layer observations are the def-level fake runs of
:mod:`conformance.checks.adapter_layer` (one per def is the floor: more means its
cache evicted a def whose checks still ran). Target: <= 20 s wall on a quiet 2-core
machine with both cores busy (CPU / wall near 2). Each figure is printed next to the
bare interpreter's start-up (``python -S -c pass``) timed here too, so "processes x
start-up" says how much of the CPU the fakes' start-up alone explains.

Run: ``python benchmarks/conform.py [--agent ID ...] [--jobs N]``. Figures only, no
assertions (speed lives in benchmarks, never in timed tests); exits 1 when conform
cannot run at all.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fake_startup import bare_start_s, children_cpu

TARGET_WALL_S = 20.0


class _Counter:
    """Counts ``subprocess.Popen`` starts and adapter-layer observations while active, in
    this process and in the forked copies conform makes (the counts live in shared
    memory, which a fork keeps shared)."""

    def __init__(self) -> None:
        self._popens = multiprocessing.Value("i", 0)
        self._observations = multiprocessing.Value("i", 0)

    @property
    def popens(self) -> int:
        return int(self._popens.value)

    @property
    def observations(self) -> int:
        return int(self._observations.value)

    @contextlib.contextmanager
    def active(self) -> Any:
        from conformance.checks import adapter_layer

        real_init = subprocess.Popen.__init__
        real_observe = adapter_layer._observe
        counter = self

        def init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
            with counter._popens.get_lock():
                counter._popens.value += 1
            real_init(self, *args, **kwargs)

        async def observe(*args: Any, **kwargs: Any) -> None:
            with counter._observations.get_lock():
                counter._observations.value += 1
            await real_observe(*args, **kwargs)

        subprocess.Popen.__init__ = init  # type: ignore[method-assign]
        adapter_layer._observe = observe  # type: ignore[assignment]
        try:
            yield self
        finally:
            subprocess.Popen.__init__ = real_init  # type: ignore[method-assign]
            adapter_layer._observe = real_observe


def run_conform(agents: list[str], jobs: int | None) -> tuple[int, float, float, _Counter, str]:
    """Exit code, wall s, CPU s (this process and its children) of one conform, and what
    its terminal report says needs attention."""
    from harness.cli import main

    counter = _Counter()
    with tempfile.TemporaryDirectory(prefix="bench-conform-") as tmp:
        argv = ["conform", "--report", "json", "--report", "terminal", "--out", tmp]
        for agent in agents:
            argv += ["--agent", agent]
        if jobs is not None:
            argv += ["--jobs", str(jobs)]
        cpu0 = time.process_time() + children_cpu()
        wall0 = time.perf_counter()
        sink = io.StringIO()
        with counter.active(), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            code = main(argv)
        wall = time.perf_counter() - wall0
        cpu = time.process_time() + children_cpu() - cpu0
    report = sink.getvalue()
    attention = report[report.find("Needs attention:") :] if "Needs attention:" in report else ""
    return code, wall, cpu, counter, attention


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", action="append", default=[], help="only this def")
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    from harness.defs.registry import BUILTIN_DEFS

    defs = len(args.agent) or len(BUILTIN_DEFS)
    bare = bare_start_s()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    code, wall, cpu, counter, attention = run_conform(args.agent, args.jobs)
    if code not in (0, 1):
        print(f"harness conform could not run (exit {code})")
        return 1
    cores = os.cpu_count() or 1
    print(f"harness conform, {defs} defs, exit {code}, load {load:.1f} on {cores} CPUs")
    print(f"  wall      {wall:7.1f} s   (target <= {TARGET_WALL_S:.0f} s, quiet 2-core machine)")
    print(f"  CPU       {cpu:7.1f} s   ({cpu / wall:.2f} cores busy)")
    print(
        f"  processes {counter.popens:7d}     (x bare start-up {bare * 1000:.1f} ms = "
        f"{counter.popens * bare:.1f} s CPU)"
    )
    print(f"  adapter-layer observations {counter.observations} for {defs} defs")
    if attention:
        print(attention.rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
