"""Replay throughput of the whole recordings corpus, and the wall time of ``harness conform``.

1. Every ``*.jsonl`` under ``recordings/`` (``harness.recording.corpus.corpus_files``) is replayed
   through ``harness.recording.replay.replay_recording``: events per second and MB of recorded
   stdout per second, best of N, at the recorded chunking; then at 1-byte chunking, shown
   as a ratio to the recorded figure (design principle 4: the cost per byte stays flat
   when input arrives one byte at a time).
2. ``python -m harness conform`` over all built-in defs, timed once through a subprocess,
   next to the target (<= 60 s on 2 cores). When
   ``harness conform --help`` fails the command is reported "not available".

Run: ``python benchmarks/replay.py [--repeat N] [--skip-conform]``. Figures only, no
assertions (CONTRIBUTING: speed lives in benchmarks as ratios, never timed tests).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.recording.corpus import corpus_files
from harness.recording.record import Direction, Recording, load_recording
from harness.recording.replay import replay_recording

CONFORM_TARGET_S = 60.0


def _replay_all(recordings: list[Recording], chunking: str) -> tuple[float, int]:
    """Seconds to replay every recording once at ``chunking``, and the events produced."""
    events = 0
    start = time.perf_counter()
    for recording in recordings:
        events += len(replay_recording(recording, chunking=chunking).events)
    return time.perf_counter() - start, events


def replay_figures(repeat: int) -> None:
    paths = corpus_files()
    recordings = [load_recording(p) for p in paths]
    stdout_bytes = sum(len(r.stream(Direction.STDOUT)) for r in recordings)
    mb = stdout_bytes / 1e6
    print(f"corpus: {len(recordings)} recordings, {mb:.2f} MB of stdout")
    rates: dict[str, tuple[float, float]] = {}
    for mode in ("recorded", "1"):
        best = min(_replay_all(recordings, mode) for _ in range(repeat))
        seconds, events = best
        rates[mode] = (events / seconds, mb / seconds)
        print(
            f"  chunking {mode:>8}: {seconds:7.3f} s  {events / seconds:12,.0f} events/s  "
            f"{mb / seconds:8.2f} MB/s  (best of {repeat})"
        )
    ratio = rates["1"][1] / rates["recorded"][1]
    print(f"  1-byte chunking / recorded: {ratio:.3f}x the throughput")


def conform_figure() -> None:
    env = dict(os.environ)
    probe = subprocess.run(
        [sys.executable, "-m", "harness", "conform", "--help"],
        capture_output=True,
        env=env,
        check=False,
    )
    if probe.returncode != 0:
        print(f"harness conform (all defs): not available (target <= {CONFORM_TARGET_S:.0f} s)")
        return
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "harness", "conform"], capture_output=True, env=env, check=False
    )
    seconds = time.perf_counter() - start
    print(
        f"harness conform (all defs): {seconds:.1f} s wall, exit {done.returncode} "
        f"(target <= {CONFORM_TARGET_S:.0f} s on 2 cores; {os.cpu_count()} CPUs here)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    parser.add_argument("--skip-conform", action="store_true")
    args = parser.parse_args()
    replay_figures(max(1, args.repeat))
    if not args.skip_conform:
        conform_figure()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
