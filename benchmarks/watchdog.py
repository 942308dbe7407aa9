"""What the process watchdog costs a run: its start, and the time a run waits on it.

The watchdog (``harness.runtime.watchdog``) starts with the first CLI group a process
guards and is retired with the last, so a harness that runs one CLI after another pays
one watchdog start per run. Figures, each a median of ``--repeat`` rounds interleaved
so that the machine's load cancels out:

* start CPU: the watchdog's CPU from start to exit, against ``python -S -c pass``;
* blocking: the wall time ``guard`` (spawning it) plus ``release`` (telling it to exit
  and reaping it) keep the caller waiting, against that same bare start's wall time;
* run: one ``happy`` claude turn through the real runner with the watchdog, against
  the same turn with it off.

Run: ``python benchmarks/watchdog.py [--repeat N]``. POSIX only (``RUSAGE_CHILDREN``).
Figures only; exit 1 when a run fails.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bare_start() -> tuple[float, float]:
    """CPU and wall seconds of one ``python -S -c pass``."""
    cpu, wall = children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-S", "-c", "pass"], check=True)
    return children_cpu() - cpu, time.perf_counter() - wall


def watchdog_round() -> tuple[float, float]:
    """CPU of one watchdog life and the wall time guard + release blocked the caller."""
    from harness.runtime.watchdog import Watchdog

    leader = subprocess.Popen(
        [sys.executable, "-S", "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    try:
        dog = Watchdog()
        time.sleep(0.05)  # the leader's own start is not the watchdog's
        cpu = children_cpu()
        started = time.perf_counter()
        dog.guard(leader.pid, 0)
        blocked = time.perf_counter() - started
        time.sleep(0.1)  # a short run: the watchdog is up and reading
        started = time.perf_counter()
        dog.release(leader.pid)
        blocked += time.perf_counter() - started
        return children_cpu() - cpu, blocked
    finally:
        leader.kill()
        leader.wait()


def run_round(world: Path, *, watchdog_on: bool) -> float:
    """Wall seconds of one happy claude turn, the watchdog on or off."""
    from harness.defs.registry import BUILTIN_DEFS, get_agent_def
    from harness.runner import RunRequest, run_agent
    from harness.runtime import watchdog

    watchdog.WATCHDOG.disabled = None if watchdog_on else "off for the benchmark"
    env = dict(os.environ)
    env["PATH"] = str(world / "bin") + os.pathsep + env.get("PATH", "")
    env["HOME"] = str(world / "home")
    env["FAKE_CLI_SCENARIO"] = "happy"
    project = Path(tempfile.mkdtemp(dir=world))
    request = RunRequest(
        defn=get_agent_def("claude", BUILTIN_DEFS),
        prompt="Create hello.html with a greeting.",
        cwd=str(project),
        env=env,
    )
    started = time.perf_counter()
    result = run_agent(request)
    took = time.perf_counter() - started
    if result.status.value != "succeeded":
        raise SystemExit(f"a run failed: {result.status.value} {result.error}")
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    from harness.defs.registry import BUILTIN_DEFS
    from harness.runtime.fakes_install import install_fakes, prepare_fake_home

    bare_cpu, bare_wall, dog_cpu, blocked, on, off = [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        world = Path(tmp)
        install_fakes(world / "bin", BUILTIN_DEFS)
        (world / "home").mkdir()
        prepare_fake_home(world / "home")
        run_round(world, watchdog_on=True)  # warm the imports and the caches
        for _ in range(args.repeat):
            cpu, wall = bare_start()
            bare_cpu.append(cpu)
            bare_wall.append(wall)
            cpu, wait = watchdog_round()
            dog_cpu.append(cpu)
            blocked.append(wait)
            on.append(run_round(world, watchdog_on=True))
            off.append(run_round(world, watchdog_on=False))
    med = statistics.median
    cpu, wall = med(bare_cpu), med(bare_wall)
    print(f"python -S -c pass  cpu {cpu * 1e3:5.1f} ms  wall {wall * 1e3:5.1f} ms")
    print(f"watchdog start     cpu {med(dog_cpu) * 1e3:5.1f} ms  {med(dog_cpu) / cpu:.2f}x")
    print(f"guard + release    wall {med(blocked) * 1e3:4.1f} ms  {med(blocked) / wall:.2f}x")
    ratio = med(on) / med(off)
    print(
        f"happy claude run   on {med(on) * 1e3:5.1f} ms  off {med(off) * 1e3:5.1f} ms  {ratio:.3f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
