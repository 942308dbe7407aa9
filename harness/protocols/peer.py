"""Drive a session against a scripted peer (h11's ``ConnectionPair`` idea).

A script is a list of steps the fake CLI side plays:

* :class:`Expect` — the session must have written a frame matching ``match``
  (a JSON subset: every key in ``match`` must be present with an equal value,
  recursively; :data:`ANY` matches anything; a callable is a predicate);
* :class:`Send` — the peer writes bytes (a dict/list is encoded as one JSON
  line) to the session;
* :class:`Eof` — stdout closes; :class:`Cancel` — the host cancels;
  :class:`Tick` — the clock reaches ``at_ms``.

:func:`run_script` returns every event, frame and control the session
produced, so a rule is a short, readable, deterministic test. ``chunk_size``
splits every :class:`Send` into pieces to prove chunking does not matter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.events import Event
from harness.protocols.base import Actions, Control, Finished, SessionRequest, TwoWaySession

__all__ = [
    "ANY",
    "Cancel",
    "Eof",
    "Expect",
    "ScriptResult",
    "Send",
    "Step",
    "Tick",
    "json_subset_mismatch",
    "run_script",
]


class _Any:
    def __repr__(self) -> str:
        return "ANY"


#: Matches any value in an :class:`Expect` pattern.
ANY: Any = _Any()


@dataclass(frozen=True)
class Expect:
    match: Any
    label: str = ""


@dataclass(frozen=True)
class Send:
    data: Any
    at_ms: float | None = None


@dataclass(frozen=True)
class Eof:
    at_ms: float | None = None


@dataclass(frozen=True)
class Cancel:
    at_ms: float | None = None


@dataclass(frozen=True)
class Tick:
    at_ms: float


Step = Expect | Send | Eof | Cancel | Tick


@dataclass
class ScriptResult:
    events: list[Event] = field(default_factory=list)
    #: Every frame the session wrote, parsed as JSON (in order).
    frames: list[Any] = field(default_factory=list)
    controls: list[Control] = field(default_factory=list)

    @property
    def finished(self) -> Finished | None:
        for control in self.controls:
            if isinstance(control, Finished):
                return control
        return None

    def events_json(self) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.events]


def json_subset_mismatch(pattern: Any, value: Any, path: str = "$") -> str | None:
    """``None`` when ``value`` matches ``pattern``; else where and how it differs."""
    if pattern is ANY:
        return None
    if callable(pattern) and not isinstance(pattern, (Mapping, list, str)):
        return None if pattern(value) else f"{path}: predicate rejected {value!r}"
    if isinstance(pattern, Mapping):
        if not isinstance(value, Mapping):
            return f"{path}: expected an object, got {value!r}"
        for key, sub in pattern.items():
            if key not in value:
                return f"{path}: missing key {key!r}"
            problem = json_subset_mismatch(sub, value[key], f"{path}.{key}")
            if problem:
                return problem
        return None
    if isinstance(pattern, list):
        if not isinstance(value, list) or len(value) != len(pattern):
            return f"{path}: expected a list of {len(pattern)}, got {value!r}"
        for index, (sub, item) in enumerate(zip(pattern, value, strict=False)):
            problem = json_subset_mismatch(sub, item, f"{path}[{index}]")
            if problem:
                return problem
        return None
    if pattern != value or type(pattern) is not type(value):
        return f"{path}: expected {pattern!r}, got {value!r}"
    return None


def _encode(data: Any) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode()
    return (json.dumps(data, ensure_ascii=False) + "\n").encode()


def run_script(
    session: TwoWaySession,
    request: SessionRequest,
    script: Sequence[Step],
    *,
    chunk_size: int | None = None,
    allow_unexpected_frames: bool = False,
    start_ms: float = 0.0,
    on_actions: Callable[[Actions], None] | None = None,
) -> ScriptResult:
    """Play ``script`` against ``session``; raise AssertionError on a mismatch."""
    result = ScriptResult()
    outbox: list[Any] = []
    now = start_ms

    def absorb(actions: Actions) -> None:
        if on_actions is not None:
            on_actions(actions)
        result.events.extend(actions.events)
        result.controls.extend(actions.controls)
        for frame in actions.frames:
            assert frame.endswith(b"\n"), f"frame is not newline-terminated: {frame!r}"
            parsed = json.loads(frame)
            result.frames.append(parsed)
            outbox.append(parsed)

    absorb(session.start(request, now))
    for index, step in enumerate(script):
        where = f"script step {index} ({type(step).__name__})"
        if isinstance(step, Expect):
            assert outbox, f"{where}: expected a frame {step.label or step.match!r}, none was sent"
            frame = outbox.pop(0)
            problem = json_subset_mismatch(step.match, frame)
            assert problem is None, f"{where} {step.label}: {problem}\nframe: {frame!r}"
        elif isinstance(step, Send):
            now = step.at_ms if step.at_ms is not None else now
            data = _encode(step.data)
            size = chunk_size or len(data) or 1
            for start in range(0, len(data), size):
                absorb(session.receive(data[start : start + size], now))
        elif isinstance(step, Eof):
            now = step.at_ms if step.at_ms is not None else now
            absorb(session.end_of_output(now))
        elif isinstance(step, Cancel):
            now = step.at_ms if step.at_ms is not None else now
            absorb(session.cancel(now))
        else:
            now = step.at_ms
            absorb(session.tick(now))
    if not allow_unexpected_frames:
        assert not outbox, f"session sent frames the script did not expect: {outbox!r}"
    return result
