"""The claude parser against claude-agent-sdk-python's ``parse_message``, one process.

One synthetic ``claude-stream-json`` stream of >= 20 MB, mostly text deltas
(``benchmarks/parsers.py``'s claude turn, with the ``session_id``/``uuid`` fields the
SDK requires), is read four ways, CPU time, best of N:

* floor: ``data.split(b"\\n")`` + ``json.loads`` on every line (no parser at all);
* SDK: the floor + ``claude_agent_sdk`` ``parse_message`` on every object;
* ours, handler only: ``ClaudeStreamParser.handle`` on the already-decoded objects;
* ours: ``ClaudeStreamParser.feed`` + ``finish`` on the bytes (framing, JSON, guards on).

Prints each figure and the ratios SDK / ours (target >= 1.25) and floor / SDK (the
highest ratio any parser that decodes JSON with the standard library can reach is
about SDK / floor). Without the SDK installed (``pip install claude-agent-sdk``) only
our figures are printed.

Run: ``python benchmarks/claude_sdk.py [--mb N] [--repeat N]``. Figures only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.parsers import claude_turn, synth
from harness.formats import create_parser
from harness.streams.claude import ClaudeStreamParser

TARGET = 1.25


def sdk_turn(i: int) -> list[dict[str, Any]]:
    """A claude turn carrying the fields ``parse_message`` requires of a real stream."""
    frames = claude_turn(i)
    for frame in frames:
        frame.update(session_id="ses_bench", uuid=f"uuid-{i}", parent_tool_use_id=None)
        if frame["type"] == "assistant":
            frame["message"]["model"] = "claude-bench"
    return frames


def best(repeat: int, fn: Callable[[], object]) -> float:
    fastest = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        fastest = min(fastest, time.process_time() - start)
    return fastest


def floor(data: bytes) -> None:
    for line in data.split(b"\n"):
        if line:
            json.loads(line)


def ours(data: bytes) -> int:
    parser = create_parser("claude-stream-json", None)
    return len(parser.feed(data)) + len(parser.finish())


def handler_only(objects: list[dict[str, Any]]) -> None:
    parser = ClaudeStreamParser()
    for obj in objects:
        parser.handle(obj, "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=20, help="stream size in MB (default 20)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    opts = ap.parse_args()
    repeat = max(1, opts.repeat)
    data = synth(sdk_turn, opts.mb * 1024 * 1024)
    objects = [json.loads(line) for line in data.split(b"\n") if line]
    print(f"stream: {len(data) / 1e6:.1f} MB, {len(objects)} lines (CPU s, best of {repeat})")
    t_floor = best(repeat, lambda: floor(data))
    t_ours = best(repeat, lambda: ours(data))
    t_handle = best(repeat, lambda: handler_only(objects))
    print(f"  floor (split + json.loads) : {t_floor:7.3f}")
    print(f"  ours (feed + finish)       : {t_ours:7.3f}")
    print(f"  ours, handler only         : {t_handle:7.3f}")
    try:
        from claude_agent_sdk._internal.message_parser import parse_message
    except ImportError:
        print("  claude-agent-sdk: not installed (pip install claude-agent-sdk)")
        return 0

    def sdk() -> None:
        for line in data.split(b"\n"):
            if line:
                parse_message(json.loads(line))

    def sdk_only() -> None:
        for obj in objects:
            parse_message(obj)

    t_sdk = best(repeat, sdk)
    t_sdk_only = best(repeat, sdk_only)
    print(f"  SDK (floor + parse_message): {t_sdk:7.3f}")
    print(f"  SDK, parse_message only    : {t_sdk_only:7.3f}")
    print(f"  SDK / ours: {t_sdk / t_ours:.2f}x (target >= {TARGET})")
    print(f"  SDK / ours, handlers only: {t_sdk_only / t_handle:.2f}x")
    print(f"  SDK / floor: {t_sdk / t_floor:.2f}x (the most a json.loads-based parser reaches)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
