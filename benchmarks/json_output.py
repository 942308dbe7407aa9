"""``--json`` output: the cost of one event line, against the way it was written before.

The events are those of a synthetic claude stream (``benchmarks/parsers.py``). Each is
written as a JSON line two ways in this process, best of N:

* before: reflection over ``dataclasses.fields`` for every event and ``json.dumps`` with
  ``ensure_ascii=False`` (a new ``JSONEncoder`` per call);
* now: :func:`harness.events.event_json_line` (field names read once per class, one
  cached encoder).

Both must give the same bytes. Prints microseconds per event and the ratio now / before;
target <= 0.6 (the measured cost was 3.5 us/event, 43 % of ``harness parse`` CPU).

Run: ``python benchmarks/json_output.py [--repeat N]``. Exits 1 when the outputs differ
or the target is missed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.parsers import _lines, claude_turn
from harness.events import Event, event_json_line, json_safe
from harness.formats import create_parser

TARGET = 0.6


def before(event: Event) -> str:
    """The per-event path as it was: reflection and a new encoder for every event."""
    if "to_json" in vars(type(event)):  # a class with a shape of its own
        return json.dumps(event.to_json(), ensure_ascii=False)
    out: dict[str, object] = {"type": event.type}
    for f in dataclasses.fields(event):  # type: ignore[arg-type]
        value = getattr(event, f.name)
        if value is not None:
            out[f.name] = value
    return json.dumps(json_safe(out), ensure_ascii=False)  # type: ignore[arg-type]


def events() -> list[Event]:
    parser = create_parser("claude-stream-json")
    data = _lines([e for i in range(2000) for e in claude_turn(i)])
    return [*parser.feed(data), *parser.finish()]


def best(write: Callable[[Event], str], evs: list[Event], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for event in evs:
            write(event)
        times.append(time.process_time() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    evs = events()
    if [before(e) for e in evs] != [event_json_line(e) for e in evs]:
        print("the two ways give different lines")
        return 1
    old = best(before, evs, args.repeat)
    new = best(event_json_line, evs, args.repeat)
    ratio = new / old
    per = 1e6 / len(evs)
    print(f"{len(evs)} events: before {old * per:.2f} us/event, now {new * per:.2f} us/event")
    print(f"now / before: {ratio:.2f} (target <= {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
