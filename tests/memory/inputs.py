"""Large inputs for the memory tests and ``benchmarks/memory.py``, written without holding them.

Each one is a corpus recording (``recordings/<format>/happy.jsonl``) with one stdout line,
the first holding ``marker``, repeated until the file reaches about ``size`` bytes, so a
replay or a parse of it is the same run with a longer answer.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.recording.record import Direction, load_recording

ROOT = Path(__file__).resolve().parents[2]

#: stream format -> (corpus recording, a byte string in the stdout line to repeat).
SOURCES: dict[str, tuple[str, bytes]] = {
    "claude-stream-json": ("claude-stream-json/happy.jsonl", b'"content":[{"type":"text"'),
    "acp-json-rpc": ("acp-json-rpc/happy.jsonl", b"agent_message_chunk"),
    "pi-rpc": ("pi-rpc/happy.jsonl", b'"text_delta"'),
    "plain": ("plain/happy.jsonl", b"create the page"),
}

_BATCH = 1024


def _stdout_lines(fmt: str) -> tuple[list[bytes], int]:
    name, marker = SOURCES[fmt]
    recording = load_recording(ROOT / "recordings" / name)
    lines = recording.stream(Direction.STDOUT).splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if marker in line)
    return lines, index


def _repeats(line: bytes, size: int) -> int:
    return max(1, size // max(len(line), 1))


def write_capture(fmt: str, target: Path, size: int) -> None:
    """What the CLI wrote on stdout, with the marked line repeated (``harness parse`` input)."""
    lines, index = _stdout_lines(fmt)
    with target.open("wb") as out:
        out.writelines(lines[: index + 1])
        repeat = _repeats(lines[index], size)
        while repeat > 0:
            batch = min(repeat, _BATCH)
            out.write(lines[index] * batch)
            repeat -= batch
        out.writelines(lines[index + 1 :])


def write_plain_line(target: Path, size: int) -> None:
    """One stdout line of ``size`` bytes of text (the case a plain run must not hold)."""
    with target.open("wb") as out:
        block = b"lorem ipsum " * 5461  # 65,532 bytes
        left = size
        while left > 0:
            out.write(block[:left])
            left -= len(block)
        out.write(b"\n")


def write_recording(fmt: str, target: Path, size: int) -> None:
    """The corpus recording with one chunk per stdout line, the marked one repeated."""
    name, _ = SOURCES[fmt]
    source = ROOT / "recordings" / name
    raw = source.read_bytes().splitlines(keepends=True)
    recording = load_recording(source)
    lines, index = _stdout_lines(fmt)

    def chunk(line: bytes) -> bytes:
        return json.dumps({"t": 1, "dir": "stdout", "data": line.decode()}).encode() + b"\n"

    with target.open("wb") as out:
        out.write(raw[0])
        for item in recording.chunks:
            if item.direction is Direction.STDIN:
                out.write(
                    json.dumps({"t": 0, "dir": "stdin", "data": item.data.decode()}).encode()
                    + b"\n"
                )
        out.writelines(chunk(line) for line in lines[: index + 1])
        repeated = chunk(lines[index])
        repeat = _repeats(repeated, size)
        while repeat > 0:
            batch = min(repeat, _BATCH)
            out.write(repeated * batch)
            repeat -= batch
        out.writelines(chunk(line) for line in lines[index + 1 :])
        out.write(raw[-1])
