"""The claude fake prints its frames in the order and shape claude 2.1.332 printed them
against the scripted model server (recordings/real/claude/*.jsonl), frame by frame.

Rules: FAKE-CLAUDE-004 (conformance/rules/fakes_stream.py). Each case runs the fake with
the recording's own argv and stdin on the scenario the real run was given, and compares
the sequence of frame kinds (consecutive deltas of one kind count once, since where a
stream splits is the model's choice, not the CLI's), then each kind's keys in order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.recording.record import Direction, Recording, load_recording
from tests.fakes.conftest import FakeCli
from tests.support.processes import StdoutPump, kill_tree

REAL_DIR = Path(__file__).resolve().parents[2] / "recordings" / "real" / "claude"
#: The steps of the ``thinking-chunks`` scenario the real CLI ran (its own scenario file,
#: not a bundled one): thinking streamed in pieces, to see an estimate per piece.
THINKING_CHUNKS: list[dict[str, Any]] = [
    {
        "kind": "thinking",
        "text": "The user wants a page, so think a lot.",
        "chunks": ["The user wants ", "a page, so ", "think a lot."],
    },
    {"kind": "text", "text": "Hi.", "chunks": ["Hi."]},
    {"kind": "thinking", "text": "Second thought here.", "chunks": ["Second ", "thought here."]},
    {"kind": "text", "text": "Done.", "chunks": ["Done."]},
]
#: The fake scenario of each real recording (harness/live/recipes/claude.json; the cancel
#: case is the hang scenario, cancelled once its text has arrived), by name or as steps.
SCENARIOS: dict[str, str | list[dict[str, Any]]] = {
    "api_error": "api_error",
    "cancel": "hang",
    "happy": "happy",
    "happy-partial": "happy",
    "shell": "shell",
    "text": "text",
    "text-partial": "text",
    "text-resume": "text",
    "text-two-turns": "text",
    "thinking-chunks": THINKING_CHUNKS,
    "thinking-chunks-partial": THINKING_CHUNKS,
}
#: Recordings whose one recorded user line reached claude twice (a wrapper wrote it twice:
#: two turns in one process).
FED_TWICE = frozenset({"text-two-turns"})
#: A resumed turn, run after its first turn with the session id the fake gave that turn.
SECOND_TURNS = {"text-resume": "text-resume.turn2"}
#: Objects whose keys are names (a model's), not fields.
NAMED_KEYS = frozenset({"modelUsage"})
#: Guards a read from a fake that prints less than the real CLI did (not a timing check).
READ_GUARD_S = 30.0


def signature(line: bytes) -> str:
    """What a frame is, in one word or a few: type, subtype, inner event, block kind."""
    try:
        frame: Any = json.loads(line)
    except ValueError:
        return "not-json"
    if not isinstance(frame, dict):
        return "not-an-object"
    parts = [str(frame.get("type")), str(frame.get("subtype", ""))]
    event = frame.get("event")
    if isinstance(event, dict):
        parts.append(str(event.get("type")))
        block = event.get("content_block") or event.get("delta") or {}
        parts.append(str(block.get("type", "")) if isinstance(block, dict) else "")
    message = frame.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        parts += [str(b.get("type")) for b in message["content"] if isinstance(b, dict)]
    return " ".join(p for p in parts if p)


def shape(data: bytes) -> list[str]:
    """The signatures of ``data``'s lines, consecutive repeats of a delta counted once."""
    out: list[str] = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        sig = signature(line)
        if out and out[-1] == sig and "content_block_delta" in sig:
            continue
        out.append(sig)
    return out


def key_paths(value: Any, prefix: str = "") -> list[str]:
    """Every key of ``value`` as a dotted path, in order (list items as ``[]``, once)."""
    out: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append(prefix + key)
            if key not in NAMED_KEYS:
                out += key_paths(item, f"{prefix}{key}.")
    elif isinstance(value, list):
        for item in value:
            out += [p for p in key_paths(item, prefix + "[].") if p not in out]
    return out


def shapes(data: bytes) -> dict[str, set[tuple[str, ...]]]:
    """Per frame kind, the key paths its lines had."""
    out: dict[str, set[tuple[str, ...]]] = {}
    for line in data.split(b"\n"):
        if line.strip():
            out.setdefault(signature(line), set()).add(tuple(key_paths(json.loads(line))))
    return out


def _data(recording: Recording, direction: Direction) -> bytes:
    return b"".join(c.data for c in recording.chunks if c.direction is direction)


def _args(recording: Recording, session_id: str | None = None) -> list[str]:
    args = list(recording.header.argv[1:])
    if session_id is not None:
        args[args.index("--resume") + 1] = session_id
    return args


def _scenario(fake: FakeCli, name: str) -> str:
    scenario = SCENARIOS[name]
    return scenario if isinstance(scenario, str) else fake.scenario_file(name, scenario)


def test_every_real_recording_has_a_case() -> None:
    names = {p.name.removesuffix(".jsonl") for p in REAL_DIR.glob("*.jsonl")}
    assert names == set(SCENARIOS) | set(SECOND_TURNS.values())


@pytest.mark.rule("FAKE-CLAUDE-004")
@pytest.mark.parametrize("name", sorted(set(SCENARIOS) - {"cancel"}))
def test_fake_frames_come_in_the_real_order(fake: FakeCli, name: str) -> None:
    real = load_recording(REAL_DIR / f"{name}.jsonl")
    stdin = _data(real, Direction.STDIN) * (2 if name in FED_TWICE else 1)
    scenario = _scenario(fake, name)
    result = fake.run("claude", _args(real), scenario=scenario, input=stdin)
    if real.exit.signal is None:  # else the host stopped the wrapper that fed claude twice
        assert result.code == real.exit.code, result.err
    assert shape(result.stdout) == shape(_data(real, Direction.STDOUT))
    assert shapes(result.stdout) == shapes(_data(real, Direction.STDOUT))
    second = SECOND_TURNS.get(name)
    if second is None:
        return
    real2 = load_recording(REAL_DIR / f"{second}.jsonl")
    session_id = json.loads(result.stdout.split(b"\n", 1)[0])["session_id"]
    args = _args(real2, session_id)
    again = fake.run("claude", args, scenario=scenario, input=_data(real2, Direction.STDIN))
    assert again.code == real2.exit.code, again.err
    assert shape(again.stdout) == shape(_data(real2, Direction.STDOUT))
    assert shapes(again.stdout) == shapes(_data(real2, Direction.STDOUT))


@pytest.mark.rule("FAKE-CLAUDE-004")
def test_fake_frames_before_a_cancel_come_in_the_real_order(fake: FakeCli) -> None:
    """The real run was cancelled once its text arrived: the fake's frames up to then."""
    real = load_recording(REAL_DIR / "cancel.jsonl")
    want = shape(_data(real, Direction.STDOUT))
    proc = fake.popen("claude", _args(real), scenario=_scenario(fake, "cancel"))
    try:
        assert proc.stdin is not None
        proc.stdin.write(_data(real, Direction.STDIN))
        proc.stdin.flush()
        pump = StdoutPump(proc)
        # The hang scenario never ends its message: read until as many frames as the real
        # run printed (or the fake's end of output), then stop it.
        while len(shape(bytes(pump.received))) < len(want) and not pump.eof:
            pump.next(READ_GUARD_S)
    finally:
        kill_tree(proc)
    got = bytes(pump.received)
    assert shape(got)[: len(want)] == want
    assert shapes(got) == shapes(_data(real, Direction.STDOUT))
