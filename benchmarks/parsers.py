"""Parser throughput and chunking cost, as ratios measured in one process.

1. Throughput: each one-way JSONL parser on a >= 10 MB synthetic stream of its
   own wire format, against the floor of ``data.split(b"\\n")`` + ``json.loads``
   on every line of the same bytes. Target: >= 0.5x the floor.
2. Growth under small chunks: feeding 16-byte chunks, the time for 4 MB of
   input divided by the time for 1 MB. Target: <= 4.8 (no quadratic
   buffering). Measured for every parser on a multi-line stream, and for the
   line decoder and the plain parser on one single 4 MB text line.
3. 1-byte feeds against 64 KiB feeds of the same bytes, per format (a figure, no target).

Run: ``python benchmarks/parsers.py [--quick] [--only TEXT] [--cpu]``. Prints a
table; exits 1 when a target is missed. Timings are ratios within one process,
so the absolute speed of the machine cancels out. ``--only`` keeps the formats
whose name contains TEXT (repeatable); ``--cpu`` times with the process CPU clock
instead of the wall clock, which other jobs on a busy machine disturb less.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.formats import create_parser
from harness.streams.decoder import LineDecoder


def _lines(objs: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objs).encode()


TEXT = "The quick brown fox jumps over the lazy dog; 0123456789 ✓ "


def claude_turn(i: int) -> list[dict[str, Any]]:
    mid = f"msg_{i}"
    ev: list[dict[str, Any]] = [
        {"type": "stream_event", "event": {"type": "message_start", "message": {"id": mid}}},
        {
            "type": "stream_event",
            "event": {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        },
    ]
    for _ in range(8):
        ev.append(
            {
                "type": "stream_event",
                "event": {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": TEXT},
                },
            }
        )
    ev.append({"type": "stream_event", "event": {"type": "content_block_stop", "index": 0}})
    ev.append(
        {
            "type": "assistant",
            "message": {"id": mid, "content": [{"type": "text", "text": TEXT * 8}]},
        }
    )
    return ev


def codex_turn(i: int) -> list[dict[str, Any]]:
    return [
        {
            "type": "item.completed",
            "item": {"id": f"i{i}a", "type": "agent_message", "text": TEXT * 4},
        },
        {
            "type": "item.completed",
            "item": {
                "id": f"i{i}b",
                "type": "command_execution",
                "command": "ls",
                "aggregated_output": TEXT,
                "exit_code": 0,
                "status": "completed",
            },
        },
    ]


def cursor_turn(i: int) -> list[dict[str, Any]]:
    return [
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": TEXT}]},
            "timestamp_ms": 1700000000000 + i,
        }
        for _ in range(4)
    ]


def opencode_turn(i: int) -> list[dict[str, Any]]:
    return [
        {"type": "text", "sessionID": "ses_1", "part": {"type": "text", "text": TEXT * 4}},
        {
            "type": "tool_use",
            "sessionID": "ses_1",
            "part": {
                "tool": "bash",
                "callID": f"c{i}",
                "state": {"status": "completed", "input": {"command": "ls"}, "output": TEXT},
            },
        },
    ]


def gemini_turn(i: int) -> list[dict[str, Any]]:
    return [
        {"type": "message", "role": "assistant", "content": TEXT, "delta": True} for _ in range(4)
    ]


def kimi_turn(i: int) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": TEXT * 4}]


def copilot_turn(i: int) -> list[dict[str, Any]]:
    return [{"type": "assistant.message_delta", "data": {"deltaContent": TEXT}} for _ in range(4)]


def qoder_turn(i: int) -> list[dict[str, Any]]:
    return [{"type": "assistant", "message": {"content": [{"type": "text", "text": TEXT * 4}]}}]


FORMATS: dict[str, tuple[str, str | None, Callable[[int], list[dict[str, Any]]]]] = {
    "claude-stream-json": ("claude-stream-json", None, claude_turn),
    "json-event-stream/codex": ("json-event-stream", "codex", codex_turn),
    "json-event-stream/cursor-agent": ("json-event-stream", "cursor-agent", cursor_turn),
    "json-event-stream/opencode": ("json-event-stream", "opencode", opencode_turn),
    "json-event-stream/gemini": ("json-event-stream", "gemini", gemini_turn),
    "json-event-stream/kimi": ("json-event-stream", "kimi", kimi_turn),
    "copilot-stream-json": ("copilot-stream-json", None, copilot_turn),
    "qoder-stream-json": ("qoder-stream-json", None, qoder_turn),
}


def synth(turn: Callable[[int], list[dict[str, Any]]], min_bytes: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    i = 0
    while size < min_bytes:
        block = _lines(turn(i))
        parts.append(block)
        size += len(block)
        i += 1
    return b"".join(parts)


def best_of(
    repeat: int, fn: Callable[[], object], clock: Callable[[], float] = time.perf_counter
) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def floor(data: bytes) -> None:
    for line in data.split(b"\n"):
        if line:
            json.loads(line)


def run_parser(fmt: str, dialect: str | None, data: bytes, chunk: int | None) -> int:
    parser = create_parser(fmt, dialect)
    n = 0
    if chunk is None:
        n += len(parser.feed(data))
    else:
        for start in range(0, len(data), chunk):
            n += len(parser.feed(data[start : start + chunk]))
    n += len(parser.finish())
    return n


def run_decoder(data: bytes, chunk: int) -> int:
    decoder = LineDecoder(max_line_bytes=16 * 1024 * 1024)
    n = 0
    for start in range(0, len(data), chunk):
        n += len(decoder.feed(data[start : start + chunk]))
    return n + len(decoder.finish())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller inputs (smoke run)")
    ap.add_argument(
        "--only", action="append", metavar="TEXT", help="only formats whose name contains TEXT"
    )
    ap.add_argument("--cpu", action="store_true", help="time with the process CPU clock")
    opts = ap.parse_args()
    clock = time.process_time if opts.cpu else time.perf_counter
    formats = {
        name: spec
        for name, spec in FORMATS.items()
        if not opts.only or any(text in name for text in opts.only)
    }
    big = 2 * 1024 * 1024 if opts.quick else 10 * 1024 * 1024
    small, large = (256 * 1024, 1024 * 1024) if opts.quick else (1024 * 1024, 4 * 1024 * 1024)
    repeat = 1 if opts.quick else 5
    failed = False

    print(f"throughput on >= {big / 1e6:.0f} MB (ratio = floor time / parser time; target >= 0.5)")
    print(f"{'format':34} {'MB':>6} {'events':>8} {'floor s':>8} {'parser s':>9} {'ratio':>6}")
    for name, (fmt, dialect, turn) in formats.items():
        data = synth(turn, big)
        t_floor = best_of(repeat, functools.partial(floor, data), clock)
        t_parser = best_of(repeat, functools.partial(run_parser, fmt, dialect, data, None), clock)
        events = run_parser(fmt, dialect, data, None)
        ratio = t_floor / t_parser
        failed |= ratio < 0.5
        flag = "" if ratio >= 0.5 else "  MISS"
        print(
            f"{name:34} {len(data) / 1e6:6.1f} {events:8d} {t_floor:8.3f} {t_parser:9.3f}"
            f" {ratio:6.2f}{flag}"
        )

    print(
        f"\ngrowth with 16-byte chunks: time({large >> 20 or 1} MB) / time({small >> 10} KB)"
        " (target <= 4.8)"
    )
    print(f"{'input':48} {'t small':>8} {'t large':>8} {'ratio':>6}")

    def growth(label: str, fn: Callable[[bytes], object], d_small: bytes, d_large: bytes) -> None:
        nonlocal failed
        t_s = best_of(repeat, lambda: fn(d_small), clock)
        t_l = best_of(repeat, lambda: fn(d_large), clock)
        ratio = t_l / t_s
        failed |= ratio > 4.8
        flag = "" if ratio <= 4.8 else "  MISS"
        print(f"{label:48} {t_s:8.3f} {t_l:8.3f} {ratio:6.2f}{flag}")

    for name, (fmt, dialect, turn) in formats.items():
        d_small, d_large = synth(turn, small)[:small], synth(turn, large)[:large]
        growth(
            f"{name} (lines)",
            functools.partial(run_parser, fmt, dialect, chunk=16),
            d_small,
            d_large,
        )
    if not opts.only:
        line_small = b'{"t":"' + b"x" * small + b'"}\n'
        line_large = b'{"t":"' + b"x" * large + b'"}\n'
        growth("line decoder (one long line)", lambda d: run_decoder(d, 16), line_small, line_large)
        growth(
            "plain (one long text line)",
            lambda d: run_parser("plain", None, d, 16),
            b"y" * small,
            b"y" * large,
        )

    # 3. What a byte-at-a-time producer costs: the no-newline path of ``feed`` (figure only).
    tiny = 64 * 1024 if opts.quick else 256 * 1024
    print(f"\n1-byte feeds: time(1-byte chunks) / time(64 KiB chunks) on {tiny >> 10} KB")
    for name, (fmt, dialect, turn) in formats.items():
        data = synth(turn, tiny)[:tiny]
        feeds = functools.partial(run_parser, fmt, dialect, data)
        t_big = best_of(repeat, functools.partial(feeds, 64 * 1024), clock)
        t_one = best_of(repeat, functools.partial(feeds, 1), clock)
        print(f"{name:48} {t_big:8.3f} {t_one:8.3f} {t_one / t_big:6.1f}x")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
