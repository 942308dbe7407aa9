"""Server-sent-event framing shared by the provider modules (pure; no IO).

A rendered streaming reply is a list of :data:`Frame`: encoded SSE bytes, a
:class:`~harness.modelserver.scenario_script.Pause` (the app sleeps), or
:class:`~harness.modelserver.scenario_script.HangBlock` (the app stops sending and
holds the stream open).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.modelserver.scenario_script import HangBlock, Pause

__all__ = ["DONE", "Frame", "ReplyIds", "pieces", "sse", "stop_after"]

Frame = bytes | Pause | HangBlock

#: Chat Completions' end-of-stream sentinel.
DONE = b"data: [DONE]\n\n"

#: Argument text streams in pieces of at most this many characters.
PIECE_CHARS = 32


def sse(data: Mapping[str, Any], event: str | None = None) -> bytes:
    """One SSE event: optional ``event:`` line, one ``data:`` line of compact JSON."""
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {body}\n\n".encode()


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """``text`` cut into consecutive pieces (one piece for short text, none for empty)."""
    return [text[i : i + size] for i in range(0, len(text), size)]


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
