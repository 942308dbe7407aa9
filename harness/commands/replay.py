"""``harness replay FILE|DIR …``: replay recordings and print their events and verdicts.

For each recording (a directory stands for every ``*.jsonl`` under it, sorted):

* human output: a ``== FILE`` line naming the agent, format and chunking; one line per
  event (:func:`harness.render.format_event`); one ``verdict RULE pass|fail|skipped:
  why`` line per finding; then ``PASS FILE`` or ``FAIL FILE`` with the event count;
* ``--json``: ``{"recording": {...}}``, one JSON object per event, then
  ``{"verdict": {...}}`` (objects without ``type``, so they never read as events);
* a recording that cannot be read is reported (``harness: error: FILE:LINE: …`` on
  stderr) and the others are still replayed.

Several recordings end with a count line (``N recordings: P passed, F failed``).
Exit code: 0 when every recording passed, 1 when one failed a rule (rule
REPLAY-CLI-001), 2 when one could not be read or a path holds no recording.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from harness.errors import HarnessError
from harness.render import format_event

__all__ = ["cmd_replay", "recording_paths"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def recording_paths(targets: list[str]) -> list[Path]:
    """Files as given; directories expanded to every ``*.jsonl`` under them, sorted."""
    found: list[Path] = []
    for target in targets:
        path = Path(target)
        if path.is_dir():
            below = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
            if not below:
                raise HarnessError(f"{target}: no *.jsonl recording under this directory")
            found.extend(below)
        elif path.exists():
            found.append(path)
        else:
            raise HarnessError(f"{target}: no such file or directory")
    return found


def _dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    from harness.record import load_recording
    from harness.replay import SystemClock, replay_recording

    paths = recording_paths(list(args.paths))
    passed = failed = unreadable = 0
    for path in paths:
        try:
            recording = load_recording(path)
            result = replay_recording(
                recording,
                chunking=args.chunking,
                seed=args.seed,
                timing=args.timing,
                clock=SystemClock(),
            )
        except HarnessError as exc:
            unreadable += 1
            out.flush()
            print(f"harness: error: {exc}", file=sys.stderr)
            continue
        header = recording.header
        if args.json:
            out.write(_dumps({"recording": {"path": str(path), **header.to_json()}}))
            for event in result.events:
                out.write(_dumps(event.to_json()))
            out.write(_dumps({"verdict": result.to_json()}))
        else:
            dialect = f"/{header.event_parser}" if header.event_parser else ""
            out.write(
                f"== {path}: {header.agent} ({header.stream_format}{dialect}), "
                f"chunking {args.chunking}\n"
            )
            for event in result.events:
                out.write(format_event(event) + "\n")
            for finding in result.findings:
                out.write(f"verdict {finding.rule} {finding.verdict}: {finding.message}\n")
            word = "PASS" if result.ok else "FAIL"
            ended = recording.exit.signal or recording.exit.code
            out.write(f"{word} {path} ({len(result.events)} events, exit {ended})\n")
        if result.ok:
            passed += 1
        else:
            failed += 1
        out.flush()
    if len(paths) > 1 and not args.json:
        out.write(
            f"{len(paths)} recordings: {passed} passed, {failed} failed, {unreadable} unreadable\n"
        )
        out.flush()
    if unreadable:
        return EXIT_BAD_INPUT
    return EXIT_FAILED if failed else EXIT_OK
