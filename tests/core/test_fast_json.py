"""orjson's fast path reads every text exactly as the stdlib path does (ROBUST-SURROGATE-001,
ROBUST-DEPTH-001), and without orjson the stdlib path reads alone.

Each property runs the same input twice, once with the fast path and once with
``fast_json.LOADS`` set to None (what a platform without an orjson wheel gets), and
compares the value (types, float signs, key order) or the error class.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.events import event_json_line
from harness.formats import create_parser
from harness.recording.record import Direction, load_recording
from harness.streams import fast_json
from harness.streams.base import JsonlStreamParser
from harness.streams.decoder import MAX_JSON_DEPTH, loads_json
from tests.helpers import cut_points, split_at

ROOT = Path(__file__).resolve().parents[2]

#: The differential tests need orjson; the last test runs either way.
needs_orjson = pytest.mark.skipif(fast_json.LOADS is None, reason="orjson is not installed")


@contextmanager
def stdlib_reader() -> Iterator[None]:
    """The readers as a platform without orjson runs them."""
    saved = fast_json.LOADS
    fast_json.LOADS = None
    try:
        yield
    finally:
        fast_json.LOADS = saved


def canonical(value: Any) -> Any:
    """``value`` with what ``==`` hides made visible: bool vs int vs float, -0.0, key order."""
    if isinstance(value, dict):
        return ("dict", [(key, canonical(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("list", [canonical(item) for item in value])
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else value.hex())
    return (type(value).__name__, value)


def outcome(read: Callable[[str], Any], text: str) -> Any:
    try:
        return canonical(read(text))
    except (ValueError, RecursionError) as exc:
        # orjson's error class derives from json's; what the caller catches is compared.
        return ("error", RecursionError if isinstance(exc, RecursionError) else ValueError)


def both_ways(read: Callable[[str], Any], text: str) -> tuple[Any, Any]:
    fast = outcome(read, text)
    with stdlib_reader():
        slow = outcome(read, text)
    return fast, slow


# -- inputs ---------------------------------------------------------------------------------

#: Number tokens where orjson and json could part: beyond 64 bits, beyond the double range,
#: negative zero, long mantissas, subnormals.
number_tokens = st.one_of(
    st.integers().map(str),
    st.integers(min_value=2**62, max_value=2**70).flatmap(
        lambda n: st.sampled_from([str(n), str(-n), f"{n}.0", f"{n}e0"])
    ),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.from_regex(r"\A-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,4})?\Z"),
    st.sampled_from(["-0", "-0.0", "0e0", "1e999", "-1e999", "1E309", "4.9e-324", "2e-324"]),
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@st.composite
def json_texts(draw: st.DrawFn) -> str:
    """Texts json writes (NaN and huge ints included), with numbers and objects it may not."""
    kind = draw(st.sampled_from(["dumps", "number", "duplicate", "nested", "escaped"]))
    if kind == "dumps":
        return json.dumps(draw(json_values), ensure_ascii=draw(st.booleans()))
    if kind == "number":
        return draw(number_tokens)
    if kind == "duplicate":
        keys = draw(st.lists(st.sampled_from(["a", "b", "\u00e9"]), min_size=1, max_size=6))
        items = ",".join(f'"{key}":{draw(number_tokens)}' for key in keys)
        return "{" + items + "}"
    if kind == "nested":
        depth = draw(st.integers(MAX_JSON_DEPTH - 2, 1100))
        return "[" * depth + draw(number_tokens) + "]" * depth
    # String escapes: lone and paired surrogates, controls, the BOM.
    parts = draw(
        st.lists(
            st.sampled_from(
                ["\\ud800", "\\udfff", "\\ud83d\\ude00", "\\u0000", "\\n", "x", "\u2028", "\t"]
            ),
            max_size=4,
        )
    )
    return '{"k' + "".join(parts[:1]) + '":"' + "".join(parts) + '"}'


@cache
def corpus_lines() -> tuple[str, ...]:
    """Every stdout line of the recorded corpus, decoded as the line decoder decodes it."""
    lines: list[str] = []
    for path in sorted((ROOT / "recordings").rglob("*.jsonl")):
        try:
            recording = load_recording(path)
        except Exception:
            continue  # a recording of a defect may not load; the others are enough
        stdout = b"".join(c.data for c in recording.chunks if c.direction is Direction.STDOUT)
        lines.extend(line.decode("utf-8", "replace") for line in stdout.split(b"\n") if line)
    return tuple(lines)


#: What a mutation inserts: JSON's punctuation, number pieces, escapes, spaces and a BOM.
_PIECES = [
    "{", "}", "[", "]", ",", ":", '"', "\\", "\\ud800", "\\ud83d\\ude00", "-", "0", "9",
    "e", "E", "+", ".", "NaN", "Infinity", "1e999", "18446744073709551616", " ", "\t",
    "\u00a0", "\ufeff", "\x00", "true", "null",
]  # fmt: skip


@st.composite
def mutated_corpus_lines(draw: st.DrawFn) -> str:
    line = draw(st.sampled_from(corpus_lines()))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(line)))
        cut = draw(st.integers(0, 3))
        line = line[:at] + draw(st.sampled_from(_PIECES)) + line[at + cut :]
    return line


any_text = json_texts() | mutated_corpus_lines() | st.text(max_size=40)


# -- the properties ------------------------------------------------------------------------


@needs_orjson
@pytest.mark.rule("ROBUST-SURROGATE-001")
@given(text=any_text, pad=st.sampled_from(["", " ", "\n", " \t\r\n "]))
@settings(max_examples=600)
@example(text="18446744073709551616", pad="")
@example(text="-9223372036854775809", pad="")
@example(text="[" * 700 + "]" * 700, pad="")
@example(text='{"a":1,"a":2.5,"b":-0}', pad="")
@example(text='"\\ud800"', pad="")
@example(text="\ufeff{}", pad="")
@example(text="1e999", pad="")
def test_loads_json_reads_as_the_stdlib_path(text: str, pad: str) -> None:
    fast, slow = both_ways(loads_json, pad + text + pad)
    assert fast == slow


class Recorder(JsonlStreamParser):
    """Claims nothing; records each value the base loop read (unread lines become raw)."""

    def __init__(self) -> None:
        super().__init__()
        self.values: list[Any] = []

    def handle(self, obj: dict[str, Any], line: str) -> bool:
        self.values.append(canonical(obj))
        return False

    def handle_non_object(self, value: Any, line: str) -> bool:
        self.values.append(canonical(value))
        return False


def read_stream(data: bytes, cuts: list[int]) -> tuple[list[Any], list[str]]:
    parser = Recorder()
    events = [e for chunk in split_at(data, cuts) for e in parser.feed(chunk)]
    events += parser.finish()
    return parser.values, [event_json_line(event) for event in events]


@needs_orjson
@pytest.mark.rule("ROBUST-SURROGATE-001")
@given(lines=st.lists(any_text, max_size=6), cuts=cut_points(), crlf=st.booleans())
@settings(max_examples=300)
def test_the_parsers_hot_loop_reads_as_the_stdlib_path(
    lines: list[str], cuts: list[int], crlf: bool
) -> None:
    end = "\r\n" if crlf else "\n"
    data = "".join(line + end for line in lines).encode("utf-8", "surrogatepass")
    fast = read_stream(data, cuts)
    with stdlib_reader():
        slow = read_stream(data, cuts)
    assert fast == slow


@needs_orjson
def test_big_integers_stay_integers_on_the_fast_path() -> None:
    # orjson alone reads them as floats; they must come back exactly.
    assert loads_json('{"n":18446744073709551616}') == {"n": 2**64}
    assert loads_json("-9223372036854775809") == -(2**63) - 1
    values, _ = read_stream(b'{"a":[123456789012345678901234567890]}\n', [])
    assert values == [canonical({"a": [123456789012345678901234567890]})]


def test_without_orjson_installed_the_stdlib_path_reads_alone() -> None:
    """A platform without an orjson wheel: orjson cannot be imported, the parsers still read."""
    recording = load_recording(ROOT / "recordings" / "claude-stream-json" / "happy.jsonl")
    stdout = b"".join(c.data for c in recording.chunks if c.direction is Direction.STDOUT)
    stdout += b'{"type":"x","n":18446744073709551616}\n[1e999]\n{"k":"\\ud800"}\n'
    script = (
        "import sys\n"
        "sys.modules['orjson'] = None  # import orjson raises ImportError\n"
        "from harness.streams import fast_json\n"
        "assert fast_json.LOADS is None, fast_json.LOADS\n"
        "from harness.events import event_json_line\n"
        "from harness.formats import create_parser\n"
        "parser = create_parser('claude-stream-json', None)\n"
        "events = parser.feed(sys.stdin.buffer.read()) + parser.finish()\n"
        "sys.stdout.write(''.join(event_json_line(e) + '\\n' for e in events))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], input=stdout, capture_output=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    parser = create_parser("claude-stream-json", None)
    events = parser.feed(stdout) + parser.finish()
    assert done.stdout.decode() == "".join(event_json_line(e) + "\n" for e in events)
    assert len(events) > 3
