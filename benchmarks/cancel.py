"""Cancel latency and runner overhead, measured on real fake CLIs with real process trees.

Every cancel case runs a tree of three processes: the fake CLI, a child and a grandchild
(the ``spawn_tree`` scenario step), and waits until all three exist before cancelling.
``cancel_latency_ms`` is what the runner reports: cancel request to a fully reaped tree.

* **cooperative, SIGTERM** (claude fake, one-way): the tree dies on SIGTERM.
  Target: median and p95 <= 100 ms.
* **cooperative, protocol** (dsh fake): the runtime answers the protocol ``cancel`` with
  ``result: cancelled`` and exits; its helpers die on the SIGTERM that reaps the tree.
  Target: median and p95 <= 100 ms.
* **forced** (claude fake): child and grandchild ignore SIGTERM, so only the SIGKILL after
  the shutdown grace stops them (seed 001 §10 step 5). Target: p95 <= grace + 100 ms.
* **overhead**: one complete run of the same fake (the ``text`` scenario, qwen) through
  :func:`harness.runner.run_agent` against a bare :func:`subprocess.run` of the same
  command with the same stdin. Target: median ratio <= 1.5.

Run: ``python benchmarks/cancel.py [--runs N] [--grace MS]``. Prints the table; exits 1
when a target is missed. POSIX: the SIGTERM-ignoring helpers need signals.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil

from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.events import Event, TextDelta
from harness.host.launch import path_env_key
from harness.runner import RunRequest, RunResult, run_agent, run_agent_async
from harness.runtime.fakes_install import install_fakes

COOPERATIVE_TARGET_MS = 100.0
FORCED_SLACK_MS = 100.0
OVERHEAD_TARGET = 1.5


@dataclass
class Row:
    name: str
    samples: list[float]
    target: float
    unit: str

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def p95(self) -> float:
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]

    @property
    def ok(self) -> bool:
        return self.p95 <= self.target if self.unit == "ms" else self.median <= self.target


class Bench:
    def __init__(self, root: Path, grace_ms: int) -> None:
        self.root = root
        self.grace = grace_ms
        self.bin = root / "bin"
        self.home = root / "home"
        self.home.mkdir()
        install_fakes(self.bin, BUILTIN_DEFS, agents=["claude", "qwen", "deepseek-harness"])
        self.count = 0

    def env(self, scenario: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith("FAKE_CLI_")}
        key = path_env_key(env, sys.platform)
        env[key] = str(self.bin) + os.pathsep + env.get(key, "")
        env.update(HOME=str(self.home), USERPROFILE=str(self.home), FAKE_CLI_SCENARIO=scenario)
        return env

    def scenario(self, ignore_term: bool) -> str:
        path = self.root / f"tree-{'deaf' if ignore_term else 'soft'}.json"
        steps = [
            {"kind": "spawn_tree", "ignore_term": ignore_term},
            {"kind": "text", "text": "ready"},
            {"kind": "hang"},
        ]
        path.write_text(json.dumps({"name": "tree", "steps": steps}), encoding="utf-8")
        return str(path)

    def request(self, agent: str, scenario: str) -> RunRequest:
        self.count += 1
        project = self.root / f"project-{self.count}"
        project.mkdir()
        return RunRequest(
            defn=get_agent_def(agent, BUILTIN_DEFS),
            prompt="benchmark",
            cwd=str(project),
            env=self.env(scenario),
            shutdown_grace_ms=self.grace,
            cancel_grace_ms=2000,
        )

    def cancel_latency(self, agent: str, scenario: str, ignore_term: bool) -> float:
        """One run, cancelled once the three-process tree is up (and deaf, if asked)."""

        async def main() -> RunResult:
            cancel = asyncio.Event()
            before = {p.pid for p in psutil.Process().children()}
            ready = asyncio.Event()

            def on_event(event: Event) -> None:
                if isinstance(event, TextDelta) and "ready" in event.delta:
                    ready.set()

            task = asyncio.ensure_future(
                run_agent_async(self.request(agent, scenario), on_event=on_event, cancel=cancel)
            )
            await asyncio.wait_for(ready.wait(), 60)
            await _tree_up({p.pid for p in psutil.Process().children()} - before, ignore_term)
            cancel.set()
            return await task

        result = asyncio.run(main())
        assert result.cancel_latency_ms is not None, result
        return result.cancel_latency_ms

    def overhead(self) -> float:
        """Runner time / bare subprocess.run time for one complete run of the same fake."""
        request = self.request("qwen", "text")
        started = time.perf_counter()
        result = run_agent(request)
        runner = time.perf_counter() - started
        assert result.succeeded, result.error
        argv = list(result.argv)
        started = time.perf_counter()
        done = subprocess.run(
            argv,
            input=request.prompt.encode(),
            capture_output=True,
            cwd=request.cwd,
            env=request.env,
            check=False,
        )
        bare = time.perf_counter() - started
        assert done.returncode == 0, done.stderr
        return runner / bare


def _ignores_sigterm(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("SigIgn:"):
                    return bool(int(line.split()[1], 16) & (1 << 14))
    except OSError:
        return False
    return False


async def _tree_up(leaders: set[int], ignore_term: bool) -> None:
    """Wait until a leader has two descendants (deaf to SIGTERM when asked)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for pid in leaders:
            try:
                helpers = psutil.Process(pid).children(recursive=True)
            except psutil.Error:
                continue
            if len(helpers) >= 2 and (
                not ignore_term
                or not sys.platform.startswith("linux")
                or all(_ignores_sigterm(h.pid) for h in helpers)
            ):
                if ignore_term and not sys.platform.startswith("linux"):
                    await asyncio.sleep(1.5)  # no SigIgn to read: let the handlers install
                return
        await asyncio.sleep(0.02)
    raise TimeoutError("the fake's helper processes never came up")


def run(runs: int, grace_ms: int) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="harness-bench-cancel-") as tmp:
        bench = Bench(Path(tmp), grace_ms)
        soft, deaf = bench.scenario(False), bench.scenario(True)
        rows = [
            Row(
                "cooperative cancel (SIGTERM)",
                [bench.cancel_latency("claude", soft, False) for _ in range(runs)],
                COOPERATIVE_TARGET_MS,
                "ms",
            ),
            Row(
                "cooperative cancel (protocol)",
                [bench.cancel_latency("deepseek-harness", soft, False) for _ in range(runs)],
                COOPERATIVE_TARGET_MS,
                "ms",
            ),
            Row(
                f"forced cancel (grace {grace_ms} ms)",
                [bench.cancel_latency("claude", deaf, True) for _ in range(runs)],
                grace_ms + FORCED_SLACK_MS,
                "ms",
            ),
            Row(
                "runner / bare subprocess.run",
                [bench.overhead() for _ in range(runs)],
                OVERHEAD_TARGET,
                "x",
            ),
        ]
    return rows


def render(rows: Sequence[Row], runs: int) -> str:
    lines = [
        f"{'case':<34} {'n':>3} {'median':>9} {'p95':>9} {'target':>10}  ok",
        "-" * 72,
    ]
    for row in rows:
        fmt = "{:>7.1f}ms" if row.unit == "ms" else "{:>8.2f}x"
        target = f"p95 <= {row.target:.0f}" if row.unit == "ms" else f"<= {row.target:.1f}x"
        lines.append(
            f"{row.name:<34} {runs:>3} {fmt.format(row.median)} {fmt.format(row.p95)} "
            f"{target:>10}  {'yes' if row.ok else 'NO'}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15, help="runs per case (default 15)")
    parser.add_argument("--grace", type=int, default=500, help="shutdown grace, ms")
    args = parser.parse_args(argv)
    if sys.platform == "win32":
        print("benchmarks/cancel.py: POSIX only (SIGTERM-ignoring helpers)")
        return 0
    rows = run(args.runs, args.grace)
    print(render(rows, args.runs))
    missed = [row.name for row in rows if not row.ok]
    if missed:
        print("missed: " + ", ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
