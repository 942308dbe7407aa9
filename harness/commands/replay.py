"""``harness replay FILE|DIR …``: replay recordings and print their events and verdicts.

Rules: REPLAY-BUDGET-001, REPLAY-CLI-001.
Design: docs/design/recording.md#harness.commands.replay
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from harness.commands.render import format_event
from harness.errors import HarnessError
from harness.events import event_json_line
from harness.recording.record import scan_recording
from harness.recording.replay import SystemClock, replay_recording
from harness.recording.replay_budget import PLATFORMS

if TYPE_CHECKING:
    from harness.events import Event
    from harness.recording.record import RecordingHeader

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


class _Printer:
    """One recording's output. Its first line is written with the first event (or the
    verdict), so a recording that cannot be replayed prints nothing but its error."""

    def __init__(self, path: Path, header: RecordingHeader, args: argparse.Namespace) -> None:
        self._path = path
        self._header = header
        self._args = args
        self._started = False

    def begin(self, out: TextIO) -> None:
        if self._started:
            return
        self._started = True
        header = self._header
        if self._args.json:
            out.write(_dumps({"recording": {"path": str(self._path), **header.to_json()}}))
            return
        dialect = f"/{header.event_parser}" if header.event_parser else ""
        out.write(
            f"== {self._path}: {header.agent} ({header.stream_format}{dialect}), "
            f"chunking {self._args.chunking}\n"
        )

    def event(self, event: Event, out: TextIO) -> None:
        self.begin(out)
        out.write(event_json_line(event) + "\n" if self._args.json else format_event(event) + "\n")


def _replay(path: Path, args: argparse.Namespace, out: TextIO) -> bool:
    """Replay one recording and print it; whether it passed. The file is checked whole
    first, then its stdout streamed through the parser and each event printed as it comes
    (design §Reliability: memory does not grow with the recording)."""
    scan = scan_recording(path)
    printer = _Printer(path, scan.header, args)
    result = replay_recording(
        scan,
        chunking=args.chunking,
        seed=args.seed,
        timing=args.timing,
        clock=SystemClock(),
        on_event=lambda event: printer.event(event, out),
        platforms=tuple(args.platforms or PLATFORMS),
        bin_path=args.bin_path,
    )
    printer.begin(out)
    if args.json:
        out.write(_dumps({"verdict": result.to_json()}))
    else:
        for finding in result.findings:
            out.write(f"verdict {finding.rule} {finding.verdict}: {finding.message}\n")
        word = "PASS" if result.ok else "FAIL"
        ended = scan.exit.signal or scan.exit.code
        out.write(f"{word} {path} ({result.event_count} events, exit {ended})\n")
    return result.ok


def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    paths = recording_paths(list(args.paths))
    passed = failed = unreadable = 0
    for path in paths:
        try:
            ok = _replay(path, args, out)
        except HarnessError as exc:
            unreadable += 1
            out.flush()
            print(f"harness: error: {exc}", file=sys.stderr)
            continue
        if ok:
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
