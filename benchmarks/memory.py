"""Peak RSS of ``harness`` on 200 MB inputs: a plain run, ``harness parse``, ``harness replay``.

Design §Reliability: memory must not grow with the input. Each case writes its input to a
temp dir (``tests/memory/inputs.py``: a corpus recording whose answer is repeated until
the file is ``--size`` bytes), runs the command, and samples the RSS of the harness
process alone (psutil, every 20 ms; a fake CLI's own memory is not counted):

* **run plain**: ``harness run qwen --fake`` with a scenario printing one line of
  ``--size`` bytes (the fake holds that line itself; only the harness is measured);
* **parse FORMAT**: ``harness parse --format FORMAT`` of the captured stdout, for
  claude-stream-json, acp-json-rpc, pi-rpc and plain (one long line, and many lines);
* **replay FORMAT**: ``harness replay`` of the recording.

Target: every case stays under 100 MiB (``harness run`` keeps a bounded head and tail of its
events, ``harness replay`` streams its recording). Run: ``python benchmarks/memory.py [--size N]
[--only NAME ...]``. Figures only (a slow ACP session makes its 200 MB parse take minutes).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil

from tests.memory.inputs import write_capture, write_plain_line, write_recording

TARGET_MIB = 100.0
FORMATS = ("claude-stream-json", "acp-json-rpc", "pi-rpc", "plain")


def sampled_peak_mib(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """Peak RSS (MiB) of the process running ``argv`` (sampled), wall seconds, exit code."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    handle = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            peak = max(peak, handle.memory_info().rss)
        except psutil.Error:
            break
        time.sleep(0.02)
    code = proc.wait()
    return peak / 2**20, time.perf_counter() - start, code


def harness(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", *args]


def cases(root: Path, size: int) -> dict[str, Callable[[], list[str]]]:
    out: dict[str, Callable[[], list[str]]] = {}

    def plain_run() -> list[str]:
        scenario = root / "one-line.json"
        scenario.write_text(
            json.dumps(
                {
                    "name": "one-line",
                    "description": "one stdout line of --size bytes",
                    "steps": [{"kind": "oversize", "bytes": size}],
                }
            )
        )
        (root / "cwd").mkdir(exist_ok=True)
        return harness(
            "run", "qwen", "--fake", "--scenario", str(scenario), "--prompt", "hi",
            "--cwd", str(root / "cwd"),
        )  # fmt: skip

    out["run plain (one line)"] = plain_run
    for fmt in FORMATS:

        def parse(fmt: str = fmt) -> list[str]:
            path = root / f"{fmt}.capture"
            write_capture(fmt, path, size)
            return harness("parse", "--format", fmt, str(path))

        def replay(fmt: str = fmt) -> list[str]:
            path = root / f"{fmt}.jsonl"
            write_recording(fmt, path, size)
            return harness("replay", str(path))

        out[f"parse {fmt}"] = parse
        out[f"replay {fmt}"] = replay

    def plain_line() -> list[str]:
        path = root / "one-line.txt"
        write_plain_line(path, size)
        return harness("parse", "--format", "plain", str(path))

    out["parse plain (one line)"] = plain_line
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=200_000_000, help="input bytes")
    parser.add_argument("--only", nargs="*", default=None, help="case names to run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="harness-memory-") as tmp:
        root = Path(tmp)
        print(f"input size {args.size / 1e6:.0f} MB; target <= {TARGET_MIB} MiB")
        for name, prepare in cases(root, args.size).items():
            if args.only and name not in args.only:
                continue
            argv = prepare()
            peak, seconds, code = sampled_peak_mib(argv, root)
            mark = "" if peak <= TARGET_MIB else "  (over target)"
            print(f"  {name:<28} {peak:8.0f} MiB  {seconds:7.1f} s  exit {code}{mark}")
            for leftover in root.glob("*.capture"):
                leftover.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
