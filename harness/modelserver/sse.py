"""Server-sent-event framing shared by the provider modules (pure; no IO).

A rendered streaming reply is a list of :data:`Frame`: encoded SSE bytes, a
:class:`~harness.modelserver.scenario_script.Pause` (the app sleeps), or
:class:`~harness.modelserver.scenario_script.HangBlock` (the app stops sending and
holds the stream open).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.modelserver.scenario_script import HangBlock, Pause

__all__ = ["DONE", "Frame", "ReplyIds", "json_pieces", "pieces", "sse", "stop_after"]

Frame = bytes | Pause | HangBlock

#: Chat Completions' end-of-stream sentinel.
DONE = b"data: [DONE]\n\n"

#: Argument text streams in pieces of at most this many characters.
PIECE_CHARS = 32
#: A JSON string literal up to this long is never cut (see :func:`json_pieces`).
WHOLE_STRING_CHARS = 512

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def sse(data: Mapping[str, Any], event: str | None = None) -> bytes:
    """One SSE event: optional ``event:`` line, one ``data:`` line of compact JSON."""
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {body}\n\n".encode()


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """``text`` cut into consecutive pieces (one piece for short text, none for empty)."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def json_pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """JSON argument text in pieces of about ``size`` characters, never cutting inside a
    string literal of up to :data:`WHOLE_STRING_CHARS` characters.

    Real APIs cut argument deltas anywhere; the CLIs must (and do) join them. Keeping a
    short string whole, a path in particular, lets a recording's scrubber find the run's
    temporary paths, which a CLI echoes delta by delta into its own stream (copilot's
    ``inputDelta``, kimi's in-progress tool content). Longer strings (file contents) are
    still cut, so joining partial JSON stays exercised. The pieces join to ``text``.
    """
    whole = [
        (m.start(), m.end())
        for m in _STRING.finditer(text)
        if m.end() - m.start() <= WHOLE_STRING_CHARS
    ]
    starts = [a for a, _b in whole]
    out: list[str] = []
    at = 0
    while at < len(text):
        cut = min(at + size, len(text))
        # A cut inside a short string moves to the string's end.
        i = bisect.bisect_right(starts, cut - 1) - 1
        if i >= 0 and whole[i][0] < cut < whole[i][1]:
            cut = whole[i][1]
        out.append(text[at:cut])
        at = cut
    return out


def stop_after(frames: list[Frame]) -> bool:
    """Whether the rendered frames end the stream early (a hang)."""
    return bool(frames) and isinstance(frames[-1], HangBlock)


@dataclass(frozen=True)
class ReplyIds:
    """Deterministic ids for one reply: the request's number and its creation time."""

    seq: int
    created: int

    def make(self, prefix: str) -> str:
        return f"{prefix}_mock{self.seq:06d}"
