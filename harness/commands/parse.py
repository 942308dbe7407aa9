"""``harness parse``: feed a raw stdout capture through a def's parser and print events.

Rules: CLIERR-PARSE-001.
Design: docs/design/cli.md#harness.commands.parse
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, TextIO

from harness.capture import adapter_for, parse_host_input, replay_capture
from harness.capture.driver import capture_values
from harness.commands.common import choose_def
from harness.commands.render import format_event
from harness.errors import HarnessError
from harness.events import Event, Raw, event_json_line
from harness.formats import UnknownStreamFormatError, create_parser, two_way_formats

if TYPE_CHECKING:
    from harness.capture import CaptureReplay
    from harness.defs.types import AgentDef

__all__ = ["cmd_parse", "resolve_format"]

EXIT_OK = 0
EXIT_FAILED = 1

#: Bytes read from the input at a time (PARSE-MEMORY-001): the input is never held whole.
READ_CHUNK_BYTES = 64 * 1024


def _resolve(args: argparse.Namespace) -> tuple[str, str | None, AgentDef | None]:
    by_def = bool(args.agent or getattr(args, "defs", None))
    if by_def == bool(args.format):
        raise HarnessError("give exactly one of --agent ID (or --def FILE) or --format FORMAT")
    if by_def:
        defn = choose_def(args, args.agent).defn
        return defn.stream_format, args.parser or defn.event_parser, defn
    return str(args.format), args.parser, None


def resolve_format(args: argparse.Namespace) -> tuple[str, str | None]:
    """(stream_format, dialect) from ``--agent`` or ``--format``/``--parser``."""
    stream_format, dialect, _ = _resolve(args)
    return stream_format, dialect


def _emit(events: list[Event], out: TextIO, as_json: bool) -> None:
    for event in events:
        if as_json:
            out.write(event_json_line(event) + "\n")
        else:
            out.write(format_event(event) + "\n")


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise HarnessError(f"{path}: {exc.strerror}") from exc


def _chunks(path: str, size: int = READ_CHUNK_BYTES) -> Iterator[bytes]:
    """The file at ``path``, ``size`` bytes at a time (PARSE-MEMORY-001); opened now, so a
    missing file is reported before anything is printed."""
    try:
        handle = Path(path).open("rb")  # noqa: SIM115 -- _read_chunks closes it
    except OSError as exc:
        raise HarnessError(f"{path}: {exc.strerror}") from exc
    return _read_chunks(handle, path, size)


def _read_chunks(handle: IO[bytes], path: str, size: int) -> Iterator[bytes]:
    with handle:
        while True:
            try:
                chunk = handle.read(size)
            except OSError as exc:
                raise HarnessError(f"{path}: {exc.strerror}") from exc
            if not chunk:
                return
            yield chunk


def cmd_parse(args: argparse.Namespace, out: TextIO) -> int:
    stream_format, dialect, defn = _resolve(args)
    if args.chunk is not None and args.chunk < 1:
        raise HarnessError(f"--chunk must be >= 1, got {args.chunk}")
    frames = getattr(args, "frames", False)
    host_input = getattr(args, "host_input", None)
    if stream_format in two_way_formats():
        return _replay(args, stream_format, defn, out, frames=frames, host_input=host_input)
    if frames or host_input is not None:
        raise HarnessError(
            f"--frames and --host-input apply to two-way formats only "
            f"({', '.join(sorted(two_way_formats()))}); {stream_format!r} is one-way"
        )
    # PARSE-MEMORY-001: fed as read, --chunk bytes (else 64 KiB) at a time; printed as parsed.
    chunks = _chunks(args.file, args.chunk or READ_CHUNK_BYTES)
    try:
        parser = create_parser(stream_format, dialect)
    except UnknownStreamFormatError as exc:
        raise HarnessError(str(exc)) from exc
    recognised = unrecognised = 0

    def batches() -> Iterator[list[Event]]:
        for chunk in chunks:
            yield parser.feed(chunk)
        yield parser.finish()

    for events in batches():
        raw = sum(isinstance(e, Raw) for e in events)
        unrecognised += raw
        recognised += len(events) - raw
        _emit(events, out, args.json)
    if unrecognised and not recognised:
        out.flush()
        print(
            f"harness: parse: {args.file}: no {stream_format} frame in the input "
            f"({unrecognised} raw line(s)); is it the right --format?",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_OK


# -- two-way formats: replay through the session (harness.capture) ----------------------------


def _replay(
    args: argparse.Namespace,
    stream_format: str,
    defn: AgentDef | None,
    out: TextIO,
    *,
    frames: bool,
    host_input: str | None,
) -> int:
    # PARSE-MEMORY-001: the capture is read in chunks (twice when the request is
    # synthesized from its handshake) and each event is printed as the session emits it.
    adapter = adapter_for(stream_format)
    captured = _chunks(args.file)
    host_frames = parse_host_input(_read(host_input)) if host_input is not None else None
    if host_frames is not None:
        request, source = adapter.host_request(host_frames), "host-input"
    else:
        request = adapter.synthesize_request(capture_values(captured))
        source, captured = "synthesized", _chunks(args.file)
    result = replay_capture(
        adapter.create_session(defn, host_frames),
        request,
        captured,
        adapter,
        host_frames=host_frames,
        chunk_size=args.chunk,
        request_source=source,
        on_event=lambda event: _emit([event], out, args.json),
    )
    if frames:
        for frame in result.frames:
            if args.json:
                out.write(json.dumps({"frame": frame}, ensure_ascii=False) + "\n")
            else:
                text = frame if isinstance(frame, str) else json.dumps(frame, ensure_ascii=False)
                out.write(f"> {text}\n")
    out.flush()
    # CAPTURE-FAIL-001: the reason comes after the events recovered before the failure.
    _report(result, sys.stderr, as_json=args.json)
    return EXIT_OK if result.ok else EXIT_FAILED


def _report(result: CaptureReplay, err: TextIO, *, as_json: bool) -> None:
    if as_json:
        err.write(json.dumps({"summary": result.summary_json()}, ensure_ascii=False) + "\n")
        err.flush()
        return
    status = result.status.value if result.status else "unfinished"
    parts = [
        f"{result.lines_consumed} lines replayed",
        f"{len(result.remaining_lines)} lines left after the first turn",
        f"{len(result.id_rewrites)} response ids rewritten",
        f"{len(result.frames)} frames sent",
    ]
    comparison = result.comparison
    if comparison is not None:
        parts.append(
            f"{len(comparison.differences)} of {max(comparison.recorded, comparison.sent)} "
            "frames differ from the host input"
        )
        if comparison.after_first_turn:
            parts.append(f"{comparison.after_first_turn} host frames after the first turn")
    err.write(f"harness: replay {result.stream_format}: {status}; {'; '.join(parts)}\n")
    for rewrite in result.id_rewrites:
        err.write(f"harness: replay: {rewrite.describe()}\n")
    for difference in comparison.differences if comparison is not None else ():
        err.write(f"harness: replay: {difference.describe()}\n")
    error = result.error
    if error is not None:
        rule = f"[{error.rule}] " if error.rule else ""
        err.write(f"harness: replay failed: {rule}{error.code}: {error.message}\n")
    elif result.status is None:
        err.write("harness: replay failed: the session did not finish\n")
    elif result.late_error is not None:
        # FIDELITY-REPLAY-001: what came after the finish fails the run live, and here.
        late = result.late_error
        err.write(
            f"harness: replay failed after the session finished: {late.code}: {late.message}\n"
        )
    err.flush()
