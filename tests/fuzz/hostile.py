"""The hostile-frame fuzzer shared by every parser and session (rule ROBUST-FUZZ-001).

What it drives, discovered from the registries (a new format is covered without
an edit here):

* every one-way parser: each ``stream_format`` of
  :func:`harness.formats.one_way_formats` in each of its dialects
  (:func:`harness.formats.known_dialects`), fed directly;
* every two-way session: each format of :func:`harness.formats.two_way_formats`,
  built by its capture adapter (:func:`harness.capture.adapter_for`), fed
  directly (``start`` / ``receive`` / ``tick`` / ``cancel`` / ``end_of_output``)
  and through the capture replay (:func:`harness.capture.replay`, with the
  recorded client's stdin as host input);
* every format through a recording: the mutated recording file is read by
  :func:`harness.recording.record.parse_recording` and replayed by
  :func:`harness.recording.replay.replay_recording`.

The seeds are the recorded corpus (``recordings/**/*.jsonl``, format v1: a header
line, chunk lines, an exit line), grouped by the header's format and dialect. Each
example applies one to three mutations from :data:`MUTATIONS` (drawn from
``random.Random`` seeded by the example's name, so every failure replays exactly):
a wrong type at any field (a value replaced by a list, an object, an int, a
string, null or a bool), a lone surrogate escape in a string or key, a number
token that overflows (``1e999``, ``-1e999``) or is huge (``10**400``), deep
nesting (up to 100,000 ``[``), a cut at a byte, dropped/duplicated/swapped lines,
undecodable bytes and garbage lines. The stream is then fed in random chunks.

The documented outcomes (anything else is a failure):

* one-way parsers: ``feed``/``finish`` never raise (``harness/streams/base.py``);
* sessions: ``receive``/``tick``/``cancel``/``end_of_output`` never raise
  (``harness/protocols/base.py``: bad bytes fail the session with a
  ``SessionError``); ``start`` and the adapters' request builders may raise a
  :class:`harness.errors.HarnessError` for a request they cannot send
  (``HostInputError`` for unusable host input, ``DshRequestError``,
  ``CodexAppServerRequestError``, ...);
* recordings: :func:`~harness.recording.record.parse_recording` and
  :func:`~harness.recording.replay.replay_recording` may raise
  :class:`harness.errors.HarnessError` (``RecordingError`` names the line);
* every event any of them returns writes as valid JSON (``allow_nan=False``)
  that UTF-8 can encode, and renders as a terminal line UTF-8 can encode; every
  frame a JSON session writes is one strict JSON value in UTF-8.

:data:`DOCUMENTED_ERRORS` is that list of exception types.
"""

from __future__ import annotations

import json
import os
import random
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from harness.capture import adapter_for
from harness.capture import replay as capture_replay
from harness.commands.render import format_event
from harness.errors import HarnessError
from harness.events import Event, event_json_line
from harness.formats import create_parser, known_dialects, one_way_formats, two_way_formats
from harness.protocols.base import Actions, TwoWaySession
from harness.recording.record import (
    Chunk,
    Direction,
    Recording,
    RecordingError,
    format_recording,
    parse_recording,
)
from harness.recording.replay import replay_recording
from harness.streams.decoder import loads_json

__all__ = [
    "DOCUMENTED_ERRORS",
    "MUTATIONS",
    "Case",
    "Target",
    "examples_per_target",
    "one_way_targets",
    "run_case",
    "two_way_targets",
]

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "recordings"

#: Exceptions a driver may let out of an entry point that documents them (see above).
DOCUMENTED_ERRORS: tuple[type[BaseException], ...] = (HarnessError,)

#: Examples per target and driver: a smoke-sized run in the README's test command (the
#: slowest target costs ~0.1 s an example on 2 loaded cores); CI's fuzz step runs
#: ``HARNESS_FUZZ_EXAMPLES=10000``, which is where the mutations are really explored.
DEFAULT_EXAMPLES = 25
#: Seed of the whole run (``HARNESS_FUZZ_SEED``); each example derives its own from it.
DEFAULT_SEED = 0
#: Corpus files larger than this (stdout bytes) are left out: they only slow the loop.
MAX_SEED_BYTES = 160 * 1024


def examples_per_target() -> int:
    raw = os.environ.get("HARNESS_FUZZ_EXAMPLES", "")
    return int(raw) if raw.strip() else DEFAULT_EXAMPLES


def run_seed() -> int:
    raw = os.environ.get("HARNESS_FUZZ_SEED", "")
    return int(raw) if raw.strip() else DEFAULT_SEED


# -- targets ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    stream_format: str
    dialect: str | None
    #: The corpus recordings this target is seeded with.
    recordings: tuple[Recording, ...]

    @property
    def name(self) -> str:
        return self.stream_format + (f"[{self.dialect}]" if self.dialect else "")


@cache
def _corpus() -> tuple[Recording, ...]:
    found: list[Recording] = []
    for path in sorted(RECORDINGS.rglob("*.jsonl")):
        try:
            recording = parse_recording(path.read_bytes(), source=str(path.relative_to(ROOT)))
        except RecordingError:
            # Not a seed (one being written, say); the corpus tests judge the files themselves.
            continue
        if len(recording.stream(Direction.STDOUT)) <= MAX_SEED_BYTES:
            found.append(recording)
    return tuple(found)


def _seeds(stream_format: str, dialect: str | None) -> tuple[Recording, ...]:
    same_format = [r for r in _corpus() if r.header.stream_format == stream_format]
    exact = [r for r in same_format if r.header.event_parser == dialect]
    # A dialect with no recording of its own is seeded with its format's other dialects.
    return tuple(exact or same_format)


def one_way_targets() -> list[Target]:
    targets: list[Target] = []
    for stream_format in sorted(one_way_formats()):
        dialects: list[str | None] = [*sorted(known_dialects(stream_format))] or [None]
        for dialect in dialects:
            targets.append(Target(stream_format, dialect, _seeds(stream_format, dialect)))
    return targets


def two_way_targets() -> list[Target]:
    return [Target(f, None, _seeds(f, None)) for f in sorted(two_way_formats())]


# -- mutations ----------------------------------------------------------------------------

#: Values of the wrong type for any field (and a few hostile shapes of the right one).
WRONG_VALUES: tuple[Any, ...] = (
    [],
    {},
    [[]],
    {"type": []},
    0,
    -1,
    2**53 + 1,
    "",
    "x",
    None,
    True,
    False,
    1.5,
)
#: Raw number tokens ``json.dumps`` cannot write: overflowing and huge.
NUMBER_TOKENS: tuple[str, ...] = (
    "1e999",
    "-1e999",
    "1" + "0" * 400,
    "-1" + "0" * 400,
    "1e-999",
    "-0.0",
    "1.7976931348623157e308",
)
LONE_SURROGATES = ("\ud800", "\udbff", "\udc00", "\udfff")
NESTING_DEPTHS = (64, 500, 990, 5_000, 100_000)
#: The most pieces :func:`chunks` cuts one stream into.
MAX_PIECES = 2048
#: A placeholder string the serializer replaces with a raw token.
_SENTINEL = "\x00hostile-token\x00"


def _paths(value: Any, limit: int = 400) -> list[tuple[Any, Any]]:
    """``(container, key)`` for every value inside ``value`` (iteratively, at most ``limit``)."""
    out: list[tuple[Any, Any]] = []
    stack = [value]
    while stack and len(out) < limit:
        node = stack.pop()
        pairs = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in list(pairs):
            out.append((node, key))
            if isinstance(item, (dict, list)):
                stack.append(item)
    return out


def _dump(value: Any, token: str | None = None) -> bytes:
    # ensure_ascii: a lone surrogate becomes its ``\\uXXXX`` escape, as a CLI would write it.
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    if token is not None:
        text = text.replace(json.dumps(_SENTINEL), token)
    return text.encode("ascii")


class _Lines:
    """A stream as lines (without their ``\\n``), and whether it ended with one."""

    def __init__(self, data: bytes) -> None:
        self.lines = data.split(b"\n")

    def bytes(self) -> bytes:
        return b"\n".join(self.lines)

    def json_index(self, rng: random.Random) -> tuple[int, Any] | None:
        candidates = [i for i, line in enumerate(self.lines) if line.strip()[:1] in (b"{", b"[")]
        rng.shuffle(candidates)
        for index in candidates[:8]:
            try:
                return index, json.loads(self.lines[index])
            except (ValueError, RecursionError):
                continue
        return None


Mutation = Callable[[random.Random, _Lines], str]


def _replace_value(
    rng: random.Random, lines: _Lines, make: Callable[[], tuple[Any, str | None]]
) -> str:
    picked = lines.json_index(rng)
    if picked is None:
        return "no JSON line"
    index, value = picked
    new, token = make()
    paths = _paths(value) if isinstance(value, (dict, list)) else []
    if not paths or rng.random() < 0.05:
        lines.lines[index] = _dump(new, token)
        return f"line {index + 1}: whole value -> {(token or repr(new))[:40]}"
    container, key = rng.choice(paths)
    container[key] = new
    lines.lines[index] = _dump(value, token)
    return f"line {index + 1}: [{key!r}] -> {(token or repr(new))[:40]}"


def wrong_type(rng: random.Random, lines: _Lines) -> str:
    return "wrong type " + _replace_value(rng, lines, lambda: (rng.choice(WRONG_VALUES), None))


def number_token(rng: random.Random, lines: _Lines) -> str:
    return "number " + _replace_value(rng, lines, lambda: (_SENTINEL, rng.choice(NUMBER_TOKENS)))


def deep_nesting(rng: random.Random, lines: _Lines) -> str:
    depth = rng.choice(NESTING_DEPTHS)
    opener = rng.choice(("[", '{"a":'))
    closer = "]" if opener == "[" else "}"
    if rng.random() < 0.3:
        # An unclosed run of openers: the whole line.
        index = rng.randrange(len(lines.lines) + 1)
        lines.lines.insert(index, (opener * depth).encode())
        return f"line {index + 1}: {depth} unclosed {opener!r}"
    token = opener * depth + "0" + closer * depth
    return f"nesting {depth} " + _replace_value(rng, lines, lambda: (_SENTINEL, token))


def lone_surrogate(rng: random.Random, lines: _Lines) -> str:
    picked = lines.json_index(rng)
    if picked is None:
        return "no JSON line"
    index, value = picked
    surrogate = rng.choice(LONE_SURROGATES)
    paths = _paths(value) if isinstance(value, (dict, list)) else []
    strings = [(c, k) for c, k in paths if isinstance(c[k], str)]
    if isinstance(value, dict) and value and (not strings or rng.random() < 0.2):
        key = rng.choice(list(value))
        value[key + surrogate] = value.pop(key)
        where = f"key {key!r}"
    elif strings:
        container, key = rng.choice(strings)
        text: str = container[key]
        at = rng.randint(0, len(text))
        container[key] = text[:at] + surrogate + text[at:]
        where = f"[{key!r}]"
    else:
        return "no string"
    lines.lines[index] = _dump(value)
    return f"surrogate line {index + 1}: {where} gets {surrogate.encode('unicode_escape').decode()}"


def drop_key(rng: random.Random, lines: _Lines) -> str:
    picked = lines.json_index(rng)
    if picked is None:
        return "no JSON line"
    index, value = picked
    objects = [c for c, _ in _paths(value) if isinstance(c, dict) and c]
    if isinstance(value, dict) and value:
        objects.append(value)
    if not objects:
        return "no key"
    target = rng.choice(objects)
    key = rng.choice(list(target))
    del target[key]
    lines.lines[index] = _dump(value)
    return f"line {index + 1}: drop key {key!r}"


def cut_at_byte(rng: random.Random, lines: _Lines) -> str:
    data = lines.bytes()
    at = rng.randint(0, len(data))
    lines.lines = data[:at].split(b"\n")
    return f"cut at byte {at}"


def cut_line(rng: random.Random, lines: _Lines) -> str:
    index = rng.randrange(len(lines.lines))
    line = lines.lines[index]
    at = rng.randint(0, len(line))
    lines.lines[index] = line[:at]
    return f"line {index + 1}: cut at byte {at}"


def drop_line(rng: random.Random, lines: _Lines) -> str:
    index = rng.randrange(len(lines.lines))
    del lines.lines[index]
    return f"drop line {index + 1}"


def duplicate_line(rng: random.Random, lines: _Lines) -> str:
    index = rng.randrange(len(lines.lines))
    lines.lines.insert(index, lines.lines[index])
    return f"duplicate line {index + 1}"


def swap_lines(rng: random.Random, lines: _Lines) -> str:
    a = rng.randrange(len(lines.lines))
    b = rng.randrange(len(lines.lines))
    lines.lines[a], lines.lines[b] = lines.lines[b], lines.lines[a]
    return f"swap lines {a + 1} and {b + 1}"


def bad_bytes(rng: random.Random, lines: _Lines) -> str:
    index = rng.randrange(len(lines.lines))
    line = lines.lines[index]
    at = rng.randint(0, len(line))
    junk = rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\r", b"\xe2\x80\xa8"))
    lines.lines[index] = line[:at] + junk + line[at:]
    return f"line {index + 1}: bytes {junk!r} at {at}"


def garbage_line(rng: random.Random, lines: _Lines) -> str:
    index = rng.randrange(len(lines.lines) + 1)
    junk = rng.choice(
        (b"", b"   ", b"null", b"[]", b"{}", b"42", b'"x"', b"NaN", b"{", b"}", b"Infinity")
    )
    lines.lines.insert(index, junk)
    return f"insert line {index + 1}: {junk!r}"


MUTATIONS: tuple[Mutation, ...] = (
    wrong_type,
    wrong_type,
    wrong_type,
    lone_surrogate,
    number_token,
    deep_nesting,
    drop_key,
    cut_at_byte,
    cut_line,
    drop_line,
    duplicate_line,
    swap_lines,
    bad_bytes,
    garbage_line,
)


def mutate(rng: random.Random, data: bytes) -> tuple[bytes, list[str]]:
    lines = _Lines(data)
    notes: list[str] = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        if not lines.lines:
            break
        mutation = rng.choice(MUTATIONS)
        notes.append(mutation(rng, lines))
    return lines.bytes(), notes


def chunks(rng: random.Random, data: bytes) -> list[bytes]:
    """``data`` in random pieces (sometimes whole, sometimes byte by byte near a cut)."""
    mode = rng.random()
    if mode < 0.3 or not data:
        return [data]
    out: list[bytes] = []
    at = 0
    biggest = 1 if mode < 0.4 else rng.choice((3, 17, 97, 4096))
    # At most ~MAX_PIECES pieces: a 100,000-bracket line is cut coarsely, not byte by byte.
    smallest = max(1, len(data) // MAX_PIECES)
    biggest = max(biggest, smallest)
    while at < len(data):
        step = rng.randint(smallest, biggest)
        out.append(data[at : at + step])
        at += step
    return out


# -- drivers --------------------------------------------------------------------------------


class Violation(AssertionError):
    """An outcome the module docstring does not document."""


def _check_events(events: Sequence[Event]) -> None:
    for event in events:
        line = event_json_line(event)
        line.encode("utf-8")
        loads_json(line)  # strict: Infinity / NaN in the output would fail here
        format_event(event).encode("utf-8")


def _check_frames(frames: Sequence[bytes]) -> None:
    for frame in frames:
        text = frame.decode("utf-8")
        loads_json(text.rstrip("\n"))


def _absorb(actions: Actions, events: list[Event]) -> None:
    events.extend(actions.events)
    _check_frames(actions.frames)


def drive_one_way(target: Target, rng: random.Random, stdout: bytes, stdin: bytes) -> None:
    parser = create_parser(target.stream_format, target.dialect)
    events: list[Event] = []
    for piece in chunks(rng, stdout):
        events.extend(parser.feed(piece))
    events.extend(parser.finish())
    _check_events(events)


def _session(target: Target) -> TwoWaySession:
    return adapter_for(target.stream_format).create_session(None)


def drive_session(target: Target, rng: random.Random, stdout: bytes, stdin: bytes) -> None:
    adapter = adapter_for(target.stream_format)
    values = [_value(line) for line in stdout.split(b"\n")]
    request = adapter.synthesize_request(values)
    session = _session(target)
    events: list[Event] = []
    now = 0.0
    _absorb(session.start(request, now), events)
    for piece in chunks(rng, stdout):
        now += rng.choice((0.0, 1.0, 50.0, 10_000.0))
        _absorb(session.receive(piece, now), events)
        if rng.random() < 0.05:
            _absorb(session.tick(now), events)
        if rng.random() < 0.01:
            _absorb(session.cancel(now), events)
    _absorb(session.end_of_output(now), events)
    _absorb(session.tick(now + 1e9), events)
    _check_events(events)


def drive_capture(target: Target, rng: random.Random, stdout: bytes, stdin: bytes) -> None:
    host = stdin if stdin.strip() and rng.random() < 0.7 else None
    try:
        result = capture_replay(
            target.stream_format, stdout, host_input=host, chunk_size=rng.choice((None, 1, 7, 64))
        )
    except DOCUMENTED_ERRORS:
        return
    _check_events(result.events)
    json.dumps(result.summary_json(), ensure_ascii=False, allow_nan=False).encode("utf-8")


def _value(line: bytes) -> Any:
    try:
        return loads_json(line.decode("utf-8", "replace").strip())
    except (ValueError, RecursionError):
        return None


def _rechunk(rng: random.Random, direction: Direction, data: bytes, t: float) -> list[Chunk]:
    return [Chunk(t, direction, piece) for piece in chunks(rng, data) if piece]


def drive_recording(target: Target, rng: random.Random, stdout: bytes, stdin: bytes) -> None:
    seed = rng.choice(target.recordings)
    pieces = [
        *_rechunk(rng, Direction.STDIN, stdin, 1.0),
        *_rechunk(rng, Direction.STDOUT, stdout, 2.0),
    ]
    recording = replace(seed, chunks=tuple(pieces))
    file_lines = _Lines(format_recording(recording).encode("utf-8"))
    if rng.random() < 0.2:
        # The recording file itself: header, chunk and exit lines get the same treatment.
        # number_token is left out here until the recording reader takes a huge chunk time
        # (test_pinned.py: test_a_recording_with_a_huge_chunk_time_is_a_recording_error).
        file_mutation = rng.choice((wrong_type, drop_key, lone_surrogate, cut_line))
        file_mutation(rng, file_lines)
    try:
        parsed = parse_recording(file_lines.bytes(), source="<fuzz>")
        result = replay_recording(
            parsed, chunking=rng.choice(("recorded", "line", "random")), seed=rng.randrange(99)
        )
    except DOCUMENTED_ERRORS:
        return
    _check_events(result.events)


Driver = Callable[[Target, random.Random, bytes, bytes], None]

DRIVERS: dict[str, Driver] = {
    "one-way": drive_one_way,
    "session": drive_session,
    "capture": drive_capture,
    "recording": drive_recording,
}


# -- one example ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    target: Target
    driver: str
    index: int

    @property
    def name(self) -> str:
        return f"{self.target.name}/{self.driver}#{self.index}"

    def rng(self) -> random.Random:
        return random.Random(f"{run_seed()}:{self.name}")


def _example(case: Case) -> tuple[random.Random, Recording, bytes, bytes, list[str]]:
    rng = case.rng()
    seed = rng.choice(case.target.recordings)
    stdout, notes = mutate(rng, seed.stream(Direction.STDOUT))
    stdin = seed.stream(Direction.STDIN)
    if stdin.strip() and rng.random() < 0.3:
        stdin, stdin_notes = mutate(rng, stdin)
        notes += [f"stdin: {n}" for n in stdin_notes]
    return rng, seed, stdout, stdin, notes


def _fails(driver: Driver, case: Case, stdout: bytes, stdin: bytes) -> BaseException | None:
    try:
        driver(case.target, random.Random(f"driver:{run_seed()}:{case.name}"), stdout, stdin)
    except Exception as exc:  # every other exception is what the suite looks for
        return exc
    return None


def _minimize(driver: Driver, case: Case, stdout: bytes, stdin: bytes, kind: type) -> bytes:
    """Drop stdout lines one at a time while the same exception type still comes out."""
    lines = stdout.split(b"\n")
    index = 0
    while index < len(lines) and len(lines) > 1:
        trial = lines[:index] + lines[index + 1 :]
        failure = _fails(driver, case, b"\n".join(trial), stdin)
        if failure is not None and type(failure) is kind:
            lines = trial
        else:
            index += 1
    return b"\n".join(lines)


def run_case(case: Case) -> None:
    """Run one example; raise :class:`Violation` naming format, mutation and a reproducer."""
    _, seed, stdout, stdin, notes = _example(case)
    driver = DRIVERS[case.driver]
    failure = _fails(driver, case, stdout, stdin)
    if failure is None:
        return
    minimal = _minimize(driver, case, stdout, stdin, type(failure))
    shown = repr(minimal)
    if len(shown) > 3000:
        shown = shown[:3000] + f"... ({len(minimal)} bytes)"
    trace = "".join(traceback.format_exception(failure)[-6:])
    raise Violation(
        f"{case.name}: {type(failure).__name__}: {failure}\n"
        f"format: {case.target.name}, driver: {case.driver}, seeded from {seed.source}\n"
        f"mutations: {'; '.join(notes)}\n"
        f"minimal stdout reproducer ({case.driver} driver, same chunking seed {case.name!r}):\n"
        f"  {shown}\n{trace}"
    ) from failure


def cases(targets: Sequence[Target], driver: str) -> Iterator[Case]:
    for target in targets:
        for index in range(examples_per_target()):
            yield Case(target, driver, index)
