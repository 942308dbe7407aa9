"""The claude parser against Open Design's TypeScript claude-stream parser on node.

Both sides read the same synthetic ``claude-stream-json`` stream (>= 20 MB of text
deltas and assistant messages, ``benchmarks/claude_sdk.py``'s generator) in 64 KiB
chunks, as a pipe delivers it, from bytes to events:

* node: ``createClaudeStreamHandler(sink)`` from the upstream ``claude-stream.ts``,
  each chunk through a ``StringDecoder`` (what ``setEncoding('utf8')`` uses) into
  ``feed``, then ``flush``; CPU time from ``process.cpuUsage`` around that loop,
  after one warm-up pass;
* ours: ``create_parser("claude-stream-json")`` ``feed`` per chunk + ``finish``
  (guards on); CPU time from ``time.process_time``, after one warm-up pass.

Rounds alternate node, ours, node, ours ... and the medians are compared: the
figure is ours / node (target <= 1.2). Each side's floor is timed too: the same
chunks framed into lines and decoded, no handler (node ``JSON.parse``; ours orjson,
``json.loads`` without it). Ours-floor / node is the least ours / node that a parser
decoding every line with that reader can reach.

The upstream source stays outside this repository. Give a checkout of
nexu-io/open-design (or the ``claude-stream.ts`` file itself, with the modules it
imports beside it) as ``--upstream PATH``. Types are stripped by bundling with
esbuild, which the benchmark installs with npm into its cache directory
(``--cache``, default ``~/.cache/adapter-harness/claude-node``). Without node, npm
or the upstream file it says so and exits 0.

Run: ``python benchmarks/claude_node.py --upstream PATH [--mb N] [--rounds N]``.
Figures only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.claude_sdk import sdk_turn
from benchmarks.parsers import synth
from harness.formats import create_parser

TARGET = 1.2
CHUNK = 64 * 1024
ESBUILD = "esbuild@0.28.2"
#: Where claude-stream.ts has lived in the upstream tree, newest first.
UPSTREAM_PLACES = ("apps/daemon/src/runtimes/claude-stream.ts", "apps/daemon/src/claude-stream.ts")

#: Node side: one warm-up pass each, then per "run" line on stdin one timed parser pass
#: and one floor pass, answered with a JSON line {"cpu_s", "floor_s", "events"}.
#: Arguments: bundle, stream file, chunk size.
RUNNER_JS = r"""
const fs = require('fs');
const { StringDecoder } = require('string_decoder');
const { createClaudeStreamHandler } = require(process.argv[2]);
const data = fs.readFileSync(process.argv[3]);
const chunk = Number(process.argv[4]);
function chunks(feed) {
  const decoder = new StringDecoder('utf8');
  for (let at = 0; at < data.length; at += chunk) {
    feed(decoder.write(data.subarray(at, at + chunk)));
  }
  feed(decoder.end());
}
function parserPass() {
  let events = 0;
  const handler = createClaudeStreamHandler(() => { events += 1; });
  chunks(handler.feed);
  handler.flush();
  return events;
}
function floorPass() {
  let buffer = '';
  chunks((text) => {
    buffer += text;
    let nl;
    while ((nl = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line) JSON.parse(line);
    }
  });
}
function cpu(fn) {
  const start = process.cpuUsage();
  const result = fn();
  const used = process.cpuUsage(start);
  return [(used.user + used.system) / 1e6, result];
}
parserPass();
floorPass();
require('readline').createInterface({ input: process.stdin }).on('line', () => {
  const [cpuS, events] = cpu(parserPass);
  const [floorS] = cpu(floorPass);
  process.stdout.write(JSON.stringify({ cpu_s: cpuS, floor_s: floorS, events }) + '\n');
});
"""


class Skip(Exception):
    """A prerequisite is missing; the message says which and how to supply it."""


class Failed(Exception):
    """The node side broke while measuring; the message says how."""


def find_upstream(path: Path) -> Path:
    """The ``claude-stream.ts`` file itself, or where it sits in an upstream checkout."""
    if path.is_file():
        return path
    for place in UPSTREAM_PLACES:
        if (path / place).is_file():
            return path / place
    raise Skip(
        f"no claude-stream.ts at {str(path)!r} (looked for {', '.join(UPSTREAM_PLACES)}); "
        "pass --upstream with a checkout of nexu-io/open-design"
    )


def esbuild(cache: Path) -> Path:
    """The esbuild binary in the cache, installed with npm on first use."""
    binary = cache / "node_modules" / ".bin" / "esbuild"
    if binary.is_file():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise Skip("npm is not on PATH (needed once to install esbuild into the cache)")
    cache.mkdir(parents=True, exist_ok=True)
    print(f"installing {ESBUILD} into {cache} ...", flush=True)
    cmd = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(cache), ESBUILD]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not binary.is_file():
        raise Skip(f"npm could not install {ESBUILD}: {done.stderr.strip()[-300:]}")
    return binary


def bundle(source: Path, cache: Path) -> Path:
    """One CommonJS file with the upstream parser and its imports, types stripped."""
    out = cache / "claude-stream.cjs"
    cmd = [str(esbuild(cache)), str(source), "--bundle", "--platform=node", "--format=cjs"]
    done = subprocess.run([*cmd, f"--outfile={out}"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Skip(f"esbuild could not bundle {source}: {done.stderr.strip()[-500:]}")
    return out


def _reader() -> Callable[[bytes], Any]:
    try:
        import orjson
    except ImportError:
        return json.loads
    return orjson.loads


def floor(data: bytes) -> float:
    """CPU seconds to frame ``data`` into lines (CHUNK-byte feeds) and decode each one."""
    loads = _reader()
    start = time.process_time()
    rest = b""
    for at in range(0, len(data), CHUNK):
        *lines, rest = (rest + data[at : at + CHUNK]).split(b"\n")
        for line in lines:
            if line:
                loads(line)
    if rest:
        loads(rest)
    return time.process_time() - start


def ours(data: bytes) -> tuple[float, int]:
    """CPU seconds and event count for our parser over ``data`` in CHUNK-byte feeds."""
    start = time.process_time()
    parser = create_parser("claude-stream-json", None)
    events = 0
    for at in range(0, len(data), CHUNK):
        events += len(parser.feed(data[at : at + CHUNK]))
    events += len(parser.finish())
    return time.process_time() - start, events


class NodeSide:
    """The node runner as a child process; each ``run()`` is one timed pass."""

    def __init__(self, node: str, bundled: Path, stream: Path) -> None:
        runner = bundled.with_name("runner.cjs")
        runner.write_text(RUNNER_JS, "utf-8")
        self._proc = subprocess.Popen(
            [node, str(runner), str(bundled), str(stream), str(CHUNK)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self) -> tuple[float, float, int]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write("run\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise Failed(f"the node runner exited with code {self._proc.wait()}")
        answer = json.loads(line)
        return float(answer["cpu_s"]), float(answer["floor_s"]), int(answer["events"])

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        if self._proc.wait(timeout=30) != 0:
            print(f"  node runner exited with code {self._proc.returncode}")


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "adapter-harness" / "claude-node"


def measure(opts: argparse.Namespace) -> None:
    if opts.upstream is None:
        raise Skip("no --upstream PATH given (a checkout of nexu-io/open-design)")
    node = shutil.which("node")
    if node is None:
        raise Skip("node is not on PATH")
    bundled = bundle(find_upstream(opts.upstream), opts.cache)
    data = synth(sdk_turn, opts.mb * 1024 * 1024)
    lines = data.count(b"\n")
    rounds = max(1, opts.rounds)
    print(f"stream: {len(data) / 1e6:.1f} MB, {lines} lines, {CHUNK // 1024} KiB feeds")
    print(f"CPU s per pass, {rounds} interleaved rounds after a warm-up, median")
    with tempfile.TemporaryDirectory() as tmp:
        stream = Path(tmp) / "claude-stream.jsonl"
        stream.write_bytes(data)
        side = NodeSide(node, bundled, stream)
        try:
            ours(data)
            floor(data)
            t_node: list[float] = []
            t_node_floor: list[float] = []
            t_ours: list[float] = []
            t_ours_floor: list[float] = []
            for _ in range(rounds):
                cpu, cpu_floor, n_node = side.run()
                t_node.append(cpu)
                t_node_floor.append(cpu_floor)
                cpu, n_ours = ours(data)
                t_ours.append(cpu)
                t_ours_floor.append(floor(data))
        finally:
            side.close()
    m_node, m_ours = statistics.median(t_node), statistics.median(t_ours)
    f_node, f_ours = statistics.median(t_node_floor), statistics.median(t_ours_floor)
    reader = f"{_reader().__module__}.loads"
    print(f"  {'node (upstream claude-stream.ts)':34}: {m_node:7.3f}  ({n_node} events)")
    print(f"  {'ours (feed + finish)':34}: {m_ours:7.3f}  ({n_ours} events)")
    print(f"  {'node floor (lines + JSON.parse)':34}: {f_node:7.3f}")
    print(f"  {f'ours floor (lines + {reader})':34}: {f_ours:7.3f}")
    print(f"  ours / node: {m_ours / m_node:.2f}x (target <= {TARGET})")
    print(f"  ours floor / node: {f_ours / m_node:.2f}x (the least ours / node with that reader)")
    print(f"  ours / ours floor: {m_ours / f_ours:.2f}x, node / node floor: {m_node / f_node:.2f}x")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream", type=Path, help="open-design checkout or claude-stream.ts")
    ap.add_argument("--cache", type=Path, default=default_cache(), help="where esbuild lives")
    ap.add_argument("--mb", type=int, default=20, help="stream size in MB (default 20)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    try:
        measure(ap.parse_args())
    except Skip as skip:
        print(f"skipped: {skip}")
    except Failed as failed:
        print(f"error: {failed}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
