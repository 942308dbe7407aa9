"""The evidence a failed verdict carries (design §Conformance model "Evidence").

Every failed verdict carries the transcript slice that proves it (frames in
and out, in wire order), the tail of the CLI's stderr, what the rule expected
and what the run did, and the command that reproduces it (CONFORM-EVIDENCE-001).
acp-tck attaches the transcript and a 20 kB stderr tail to every FAIL
(wire §B.3); :meth:`Evidence.bounded` applies the same kind of bounds and
records what it cut, so nothing is dropped silently (design §Principles 3).

Pure data: no IO, no clock. :meth:`Evidence.to_json` / :meth:`Evidence.from_json`
give the shape the JSON report uses (``conformance/reports/report.schema.json``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_FRAMES",
    "MAX_FRAME_CHARS",
    "MAX_STDERR_TAIL_CHARS",
    "MAX_TEXT_CHARS",
    "Direction",
    "Evidence",
    "Frame",
]

#: Frames kept in a transcript slice; older frames are cut (counted in ``omitted_frames``).
MAX_FRAMES = 200
#: Characters kept of one frame's data (head and tail; the middle is elided and counted).
MAX_FRAME_CHARS = 16_384
#: Characters of stderr kept (the tail). acp-tck keeps the last 20 kB (wire §B.3).
MAX_STDERR_TAIL_CHARS = 20_000
#: Characters kept of ``expected`` / ``actual``.
MAX_TEXT_CHARS = 16_384


#: What makes a stderr line an error line (:meth:`Evidence.stderr_error_line`).
_ERROR_WORDS = re.compile(
    r"\b(error|fatal|panic|exception|traceback|unknown|invalid|unrecognized|denied|"
    r"not found|no such|failed|cannot|can't)\b",
    re.IGNORECASE,
)
#: Lines that name themselves something else than an error.
_NOT_ERROR = re.compile(r"\W*(warn(ing)?|note|info|hint|debug)\b", re.IGNORECASE)
#: Terminal colour codes a CLI may write on stderr.
_SGR_SEQUENCE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class Direction(str, enum.Enum):
    """Which pipe a frame travelled on (the recording format's directions, design §Recordings)."""

    #: Host → CLI: what the harness wrote.
    STDIN = "stdin"
    #: CLI → host: what the CLI wrote on stdout.
    STDOUT = "stdout"
    #: CLI → host: diagnostics the CLI wrote on stderr.
    STDERR = "stderr"


def _elide_middle(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters around an elision mark; returns (text, elided)."""
    if len(text) <= limit:
        return text, 0
    head = limit // 2
    tail = limit - head
    elided = len(text) - limit
    return f"{text[:head]}\n…[{elided} characters elided]…\n{text[-tail:]}", elided


@dataclass(frozen=True)
class Frame:
    """One chunk of the transcript: the pipe it travelled on and its text."""

    dir: Direction
    data: str
    #: Characters elided from the middle of ``data`` by :meth:`Evidence.bounded`.
    elided_chars: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.dir, Direction):
            try:
                object.__setattr__(self, "dir", Direction(self.dir))
            except ValueError:
                known = ", ".join(d.value for d in Direction)
                raise ValueError(f"frame dir {self.dir!r} is not one of {known}") from None
        if not isinstance(self.data, str):
            raise TypeError(f"frame data must be str, got {type(self.data).__name__}")
        if self.elided_chars < 0:
            raise ValueError(f"frame elided_chars must be >= 0, got {self.elided_chars}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dir": self.dir.value, "data": self.data}
        if self.elided_chars:
            out["elided_chars"] = self.elided_chars
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Frame:
        return cls(
            dir=Direction(obj["dir"]),
            data=str(obj["data"]),
            elided_chars=int(obj.get("elided_chars", 0)),
        )


def _frame(item: Frame | Mapping[str, Any]) -> Frame:
    return item if isinstance(item, Frame) else Frame.from_json(item)


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """What proves a verdict, and how to see it again (CONFORM-EVIDENCE-001)."""

    #: One line: what went wrong, naming the rule's subject.
    summary: str
    #: What the rule requires here.
    expected: str = ""
    #: What the run did instead.
    actual: str = ""
    #: The frames that prove it, in wire order (both directions).
    transcript_slice: tuple[Frame, ...] = field(default_factory=tuple)
    #: The end of the CLI's stderr.
    stderr_tail: str = ""
    #: The command that reproduces this verdict, ready to paste into a shell (required).
    repro_command: str
    #: Frames cut from the front of the slice by :meth:`bounded`.
    omitted_frames: int = 0
    #: Characters cut from the front of the stderr tail by :meth:`bounded`.
    stderr_omitted_chars: int = 0

    def __post_init__(self) -> None:
        # design §Conformance model: the evidence names what failed and how to reproduce it.
        if not self.summary.strip():
            raise ValueError("evidence summary must not be empty (CONFORM-EVIDENCE-001)")
        if "\n" in self.summary:
            raise ValueError(f"evidence summary must be one line, got {self.summary!r}")
        if not self.repro_command.strip():
            raise ValueError(
                "evidence repro_command must not be empty: every failed verdict carries "
                "the command to reproduce it (CONFORM-EVIDENCE-001)"
            )
        object.__setattr__(
            self, "transcript_slice", tuple(_frame(f) for f in self.transcript_slice)
        )
        if self.omitted_frames < 0 or self.stderr_omitted_chars < 0:
            raise ValueError("evidence omitted counts must be >= 0")

    def stderr_error_line(self) -> str | None:
        """The CLI's first stderr line that reads as an error (``error: unknown option
        '--yolo'``), where the cause of a failed run usually is; ``None`` if none does."""
        for line in self.stderr_tail.splitlines():
            text = _SGR_SEQUENCE.sub("", line).strip()
            if text and _ERROR_WORDS.search(text) and not _NOT_ERROR.match(text):
                return text
        return None

    @classmethod
    def bounded(
        cls,
        *,
        summary: str,
        repro_command: str,
        expected: str = "",
        actual: str = "",
        transcript: Iterable[Frame | Mapping[str, Any]] = (),
        stderr: str = "",
        max_frames: int = MAX_FRAMES,
        max_frame_chars: int = MAX_FRAME_CHARS,
        max_stderr_chars: int = MAX_STDERR_TAIL_CHARS,
    ) -> Evidence:
        """Evidence within the report bounds: the last ``max_frames`` frames (each cut to
        ``max_frame_chars``), the last ``max_stderr_chars`` of stderr. What is cut is counted."""
        if max_frames < 1 or max_frame_chars < 64 or max_stderr_chars < 0:
            raise ValueError("evidence bounds: max_frames >= 1, max_frame_chars >= 64")
        frames = [_frame(f) for f in transcript]
        omitted = max(0, len(frames) - max_frames)
        kept: list[Frame] = []
        for f in frames[omitted:]:
            data, elided = _elide_middle(f.data, max_frame_chars)
            kept.append(Frame(f.dir, data, f.elided_chars + elided))
        stderr_omitted = max(0, len(stderr) - max_stderr_chars)
        return cls(
            summary=summary,
            repro_command=repro_command,
            expected=_elide_middle(expected, MAX_TEXT_CHARS)[0],
            actual=_elide_middle(actual, MAX_TEXT_CHARS)[0],
            transcript_slice=tuple(kept),
            stderr_tail=stderr[stderr_omitted:],
            omitted_frames=omitted,
            stderr_omitted_chars=stderr_omitted,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "expected": self.expected,
            "actual": self.actual,
            "transcript_slice": [f.to_json() for f in self.transcript_slice],
            "omitted_frames": self.omitted_frames,
            "stderr_tail": self.stderr_tail,
            "stderr_omitted_chars": self.stderr_omitted_chars,
            "repro_command": self.repro_command,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Evidence:
        return cls(
            summary=str(obj["summary"]),
            repro_command=str(obj["repro_command"]),
            expected=str(obj.get("expected", "")),
            actual=str(obj.get("actual", "")),
            transcript_slice=tuple(Frame.from_json(f) for f in obj.get("transcript_slice", ())),
            stderr_tail=str(obj.get("stderr_tail", "")),
            omitted_frames=int(obj.get("omitted_frames", 0)),
            stderr_omitted_chars=int(obj.get("stderr_omitted_chars", 0)),
        )
