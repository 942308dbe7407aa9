"""Detection fan-out: one concurrent pass over every def vs. the slowest def alone.

Every def in ``harness.defs.registry.BUILTIN_DEFS`` (or, when the registry does not
import, 29 synthetic defs) gets a fake executable under its real ``bin`` name that
sleeps a fixed time and prints a version, whatever probe it is asked for. Then:

* single passes: each def detected alone, one after another; the slowest is the
  floor a concurrent pass can reach (version probe, compatibility probe, then
  help/models/auth together: up to three sleeps in sequence);
* the concurrent pass: every def at once (``detect_all``).

The ratio concurrent / slowest single is printed; target <= 1.5 (seed 002 §5.4:
25 defs in parallel cost about as much as the slowest one). Timings are ratios
within one process, so the speed of the machine cancels out.

Run: ``python benchmarks/detect.py [--sleep S] [--repeat N]``. POSIX only (the fakes
are sh scripts). Exits 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.defs.types import AgentDef, BuildOptions, RuntimeContext
from harness.host.launch import RealFileSystem
from harness.runtime.detect import DetectionResult, detect_all

TARGET = 1.5
SYNTHETIC_COUNT = 29


def _no_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    return []


def load_defs() -> tuple[list[AgentDef], str]:
    """The registry's defs, or synthetic ones when it does not import."""
    try:
        from harness.defs.registry import BUILTIN_DEFS
    except Exception as exc:  # the registry is another module's job; fall back, say why
        print(f"registry unavailable ({type(exc).__name__}: {exc}); using synthetic defs")
        synthetic = [
            AgentDef(
                id=f"bench-{i:02d}",
                name=f"Bench {i}",
                bin=f"bench-{i:02d}",
                build_args=_no_args,
                stream_format="plain",
            )
            for i in range(SYNTHETIC_COUNT)
        ]
        return synthetic, "synthetic"
    return list(BUILTIN_DEFS), "registry"


def write_fakes(defs: Sequence[AgentDef], bin_dir: Path, sleep_s: float) -> None:
    """One sh script per distinct bin: sleep, then print a version line."""
    for defn in defs:
        for name in (defn.bin, *defn.fallback_bins):
            path = bin_dir / name
            if path.exists():
                continue
            path.write_text(f'#!/bin/sh\nsleep {sleep_s}\necho "{name} 1.0.0"\n')
            path.chmod(0o755)


async def _timed(defs: Sequence[AgentDef], env: dict[str, str], home: str) -> float:
    start = time.perf_counter()
    results: list[DetectionResult] = await detect_all(
        defs, env=env, platform=sys.platform, home=home, fs=RealFileSystem()
    )
    elapsed = time.perf_counter() - start
    if len(results) != len(defs):
        raise SystemExit(f"detect_all returned {len(results)} results for {len(defs)} defs")
    return elapsed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sleep", type=float, default=0.4, help="seconds each probe sleeps")
    parser.add_argument("--repeat", type=int, default=3, help="concurrent passes (median kept)")
    args = parser.parse_args(argv)
    if sys.platform == "win32":
        print("benchmarks/detect.py needs a POSIX shell for its fake executables; skipped")
        return 0

    defs, source = load_defs()
    with tempfile.TemporaryDirectory(prefix="detect-bench-") as tmp:
        root = Path(tmp)
        bin_dir = root / "bin"
        home = root / "home"
        bin_dir.mkdir()
        home.mkdir()
        write_fakes(defs, bin_dir, args.sleep)
        system = [d for d in ("/usr/local/bin", "/usr/bin", "/bin") if os.path.isdir(d)]
        env = {"PATH": os.pathsep.join([str(bin_dir), *system]), "LC_ALL": "C"}

        singles = {d.id: asyncio.run(_timed([d], env, str(home))) for d in defs}
        slowest_id = max(singles, key=lambda k: singles[k])
        slowest = singles[slowest_id]
        passes = [asyncio.run(_timed(defs, env, str(home))) for _ in range(max(1, args.repeat))]
        concurrent = statistics.median(passes)

    ratio = concurrent / slowest
    print(f"defs: {len(defs)} ({source}); each probe sleeps {args.sleep:.2f} s")
    print(f"sum of single passes:   {sum(singles.values()):7.3f} s")
    print(f"slowest single pass:    {slowest:7.3f} s  ({slowest_id})")
    print(
        f"concurrent pass (med):  {concurrent:7.3f} s  (runs: "
        + ", ".join(f"{p:.3f}" for p in passes)
        + ")"
    )
    verdict = "ok" if ratio <= TARGET else "MISSED"
    print(f"ratio concurrent / slowest single: {ratio:.2f}  (target <= {TARGET}) {verdict}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
