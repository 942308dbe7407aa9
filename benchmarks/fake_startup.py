"""Fake CLI start-up: CPU per fake process against the bare interpreter, per wire format.

``harness conform`` starts hundreds of fakes and detection starts them too, so what a
fake costs before its first byte is paid again and again. For each wire format (the
def :func:`harness.recording.corpus.format_choices` picks for it, or the defs given with
``--agent``), through the shims ``harness fakes install`` writes:

* probe: ``<bin> --version`` (interpreter, imports, argv check, one line out);
* run: one ``happy`` turn through the real runner (:func:`harness.runner.run_agent`),
  the fake's CPU divided by the processes the turn started.

Each figure is a ratio to ``python -S -c pass`` run in this same process, interleaved
with the fakes round by round, median of ``--repeat`` rounds: the machine's speed and
load cancel out. Target: <= 3x. CPU is the children's user + system time
(``RUSAGE_CHILDREN``), so POSIX only.

Run: ``python benchmarks/fake_startup.py [--repeat N] [--agent ID ...]``. Figures only;
exits 1 when a fake run fails or the target is missed (``--no-target``: figures only).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TARGET = 3.0


def children_cpu() -> float:
    """CPU seconds (user + system) of every child this process has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bare_start() -> float:
    """CPU seconds of one ``python -S -c pass``."""
    before = children_cpu()
    subprocess.run([sys.executable, "-S", "-c", "pass"], check=True)
    return children_cpu() - before


def bare_start_s(repeat: int = 20) -> float:
    """CPU seconds of one ``python -S -c pass`` (median of ``repeat``)."""
    return statistics.median(bare_start() for _ in range(repeat))


@contextlib.contextmanager
def counted_popens() -> Iterator[list[int]]:
    """While open, ``[n]`` counts the ``subprocess.Popen`` starts (asyncio's too)."""
    count = [0]
    real_init = subprocess.Popen.__init__

    def init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        count[0] += 1
        real_init(self, *args, **kwargs)

    subprocess.Popen.__init__ = init  # type: ignore[method-assign]
    try:
        yield count
    finally:
        subprocess.Popen.__init__ = real_init  # type: ignore[method-assign]


class Subject:
    """One def's fake, installed in its own sandbox (bin on PATH, HOME, project dir)."""

    def __init__(self, root: Path, label: str, agent: str, transport: str) -> None:
        from harness.defs.registry import BUILTIN_DEFS
        from harness.defs.transport import select_transport
        from harness.runtime.fakes_install import install_fakes

        self.label = label
        self.bin, self.home, self.cwd = root / "bin", root / "home", root / "cwd"
        self.home.mkdir(parents=True)
        self.cwd.mkdir(parents=True)
        report = install_fakes(self.bin, BUILTIN_DEFS, agents=[agent])
        by_agent = {a: p for p, a in report.written.items()}
        self.shim = by_agent[agent]
        defn = next(d for d in BUILTIN_DEFS if d.id == agent)
        self.defn = select_transport(defn, name=transport)
        self.transport = transport
        self.env = {
            "PATH": f"{self.bin}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "FAKE_CLI_SCENARIO": "happy",
        }

    def probe(self) -> float:
        """CPU seconds of ``<bin> --version``."""
        before = children_cpu()
        subprocess.run(
            [self.shim, "--version"], env=self.env, check=True, stdout=subprocess.DEVNULL
        )
        return children_cpu() - before

    def run(self) -> float:
        """CPU seconds per fake process of one happy turn through the runner."""
        from harness.runner import RunRequest, run_agent

        request = RunRequest(
            defn=self.defn, prompt="hi", cwd=str(self.cwd), env=self.env, transport=self.transport
        )
        before = children_cpu()
        with counted_popens() as count:
            result = run_agent(request)
        spent = children_cpu() - before
        if result.status.value != "succeeded":
            raise RuntimeError(f"{self.label}: the happy turn ended {result.status.value}")
        return spent / max(count[0], 1)


def subjects(root: Path, agents: list[str]) -> list[Subject]:
    """One subject per wire format, or per ``agents`` (through the def's first transport)."""
    from harness.defs.transport import transport_names
    from harness.recording.corpus import format_choices

    if agents:
        from harness.defs.registry import BUILTIN_DEFS

        defs = {d.id: d for d in BUILTIN_DEFS}
        picks = [(a, a, transport_names(defs[a])[0]) for a in agents]
    else:
        picks = [(f"{c.agent} ({c.stream_format})", c.agent, c.transport) for c in format_choices()]
    return [Subject(root / str(i), *pick) for i, pick in enumerate(picks)]


def measure(subs: list[Subject], repeat: int) -> dict[str, dict[str, float]]:
    """Median CPU seconds of bare / probe / run, interleaved round by round."""
    samples: dict[str, dict[str, list[float]]] = {"bare": {"": []}}
    jobs: list[tuple[str, str, Callable[[], float]]] = [("bare", "", bare_start)]
    for sub in subs:
        samples[sub.label] = {"probe": [], "run": []}
        jobs += [(sub.label, "probe", sub.probe), (sub.label, "run", sub.run)]
    for _ in range(repeat):
        for label, kind, job in jobs:
            samples[label][kind].append(job())
    return {
        label: {kind: statistics.median(xs) for kind, xs in kinds.items()}
        for label, kinds in samples.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="rounds (default 15)")
    parser.add_argument("--agent", action="append", default=[], help="only this def")
    parser.add_argument("--no-target", action="store_true", help="never exit 1 on a miss")
    args = parser.parse_args()
    if not hasattr(os, "getloadavg"):
        print("POSIX only (CPU of children through RUSAGE_CHILDREN)")
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-fake-startup-") as tmp:
        subs = subjects(Path(tmp), args.agent)
        for sub in subs:  # warm: bytecode, page cache
            sub.probe()
            sub.run()
        medians = measure(subs, args.repeat)
    bare = medians.pop("bare")[""]
    load = os.getloadavg()[0]
    print(f"fake start-up, median of {args.repeat} interleaved rounds, load {load:.1f}")
    print(f"  bare python -S -c pass  {bare * 1000:6.1f} ms CPU   (target <= {TARGET:.0f}x)")
    worst = 0.0
    for label, kinds in medians.items():
        probe, run = kinds["probe"] / bare, kinds["run"] / bare
        worst = max(worst, probe, run)
        print(
            f"  {label:40s} --version {kinds['probe'] * 1000:6.1f} ms {probe:4.1f}x"
            f"   run {kinds['run'] * 1000:6.1f} ms/process {run:4.1f}x"
        )
    return 0 if args.no_target or worst <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
