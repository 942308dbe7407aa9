"""The role-marker guard: stop a model from fabricating a turn boundary (seed 002 §7.5).

Rules: RMG-NOFLUSH-001.
Design: docs/design/guards.md#harness.guards.role_marker
"""

from __future__ import annotations

import re

from harness.events import FabricatedRoleMarker

__all__ = [
    "FABRICATED_ROLE_MARKER_RE",
    "FIRST_CHUNK_PENDING_MARKER_TAIL_RE",
    "NEWLINE_ANCHORED_PENDING_MARKER_TAIL_RE",
    "NEWLINE_ANCHORED_ROLE_MARKER_RE",
    "TAIL_BUFFER_SIZE",
    "RoleMarkerGuard",
]

_ROLES = r"(?:user|assistant|assist|system)"

# seed 002 §7.5, ref §3.1 (RMG-REGEX-001): the four patterns of generation 3.
#: A confirmed marker at the start of the message or after a newline.
FABRICATED_ROLE_MARKER_RE = re.compile(r"(?:^|\n)[ \t]*##[ \t]+" + _ROLES + r"(?=[^a-z])")
#: A confirmed marker after a newline (used once the tail is a mid-stream window).
NEWLINE_ANCHORED_ROLE_MARKER_RE = re.compile(r"\n[ \t]*##[ \t]+" + _ROLES + r"(?=[^a-z])")
#: A complete keyword at the very end of the buffer, lookahead not yet known.
FIRST_CHUNK_PENDING_MARKER_TAIL_RE = re.compile(r"(?:^|\n)[ \t]*##[ \t]+" + _ROLES + r"\Z")
#: As above, newline-anchored only.
NEWLINE_ANCHORED_PENDING_MARKER_TAIL_RE = re.compile(r"\n[ \t]*##[ \t]+" + _ROLES + r"\Z")

#: Characters of already-emitted text kept to see markers across chunk boundaries.
TAIL_BUFFER_SIZE = 64
#: Chunks returned by the fast path before they are rolled into the tail anyway (the
#: fold is linear in what it joins: this bounds what a long clean message holds).
_FRESH_LIMIT = 32


class RoleMarkerGuard:
    """One assistant message's text channel (ref §3.2, generation 3).

    :meth:`feed_text` returns the part of each chunk that is safe to show.
    After the first confirmed marker the guard is :attr:`contaminated` and
    returns ``""`` for everything else fed to it.
    """

    __slots__ = (
        "_first_chunk",
        "_fresh",
        "_hashless",
        "_marker",
        "_pending",
        "_tail",
        "contaminated",
    )

    def __init__(self) -> None:
        #: Last <= 64 characters already returned as safe text, but for ``_fresh``.
        self._tail = ""
        #: Text the fast path returned since the tail was last rolled: rolled in together
        #: when the slow path needs the tail (the last 64 characters of a concatenation
        #: are those of its last 64 plus what follows), or when it holds too many.
        self._fresh: list[str] = []
        #: Received but withheld: a complete-but-unconfirmed marker suffix.
        self._pending = ""
        #: Nothing withheld and no ``#`` in the tail: text with no ``#`` takes the fast path.
        self._hashless = True
        #: True while ``_tail`` is still the whole emitted text (``^`` is the real start).
        self._first_chunk = True
        #: True once a fabricated marker was confirmed; later text is dropped. A plain
        #: attribute, not a property: the claude parser reads it on every text delta.
        #: Only the guard sets it.
        self.contaminated = False
        self._marker: str | None = None

    @property
    def marker(self) -> str | None:
        """The confirmed marker, stripped of its newline and leading blanks (``'##   user'``)."""
        return self._marker

    def feed_text(self, text: str) -> str:
        """Feed one chunk of the message's text; return the safe part (maybe ``""``)."""
        if self.contaminated or not text:
            return ""
        if self._hashless and "#" not in text:
            # Fast path, exactly equivalent to the general one: every pattern needs
            # "##", so with no "#" in tail + text nothing can match or be withheld.
            fresh = self._fresh
            fresh.append(text)
            if len(fresh) >= _FRESH_LIMIT:
                self._roll_tail()
            return text
        self._roll_tail()
        tail = self._tail
        emitted = len(tail)
        buffer = tail + self._pending + text
        if self._first_chunk:
            match_re, pending_re = FABRICATED_ROLE_MARKER_RE, FIRST_CHUNK_PENDING_MARKER_TAIL_RE
        else:
            match_re = NEWLINE_ANCHORED_ROLE_MARKER_RE
            pending_re = NEWLINE_ANCHORED_PENDING_MARKER_TAIL_RE

        match = match_re.search(buffer)
        if match is not None:
            # seed 002 §7.5 (RMG-REGEX-001): cut at the marker; drop it and all after it.
            self.contaminated = True
            self._marker = match.group(0).strip(" \t\n")
            self._pending = ""
            # Empty when the marker began inside the already-emitted tail.
            return buffer[emitted : match.start()]

        # ref §3.2 (RMG-HOLDBACK-001): withhold a complete keyword whose lookahead
        # character has not arrived; never withhold what was already emitted.
        pending_match = pending_re.search(buffer)
        pending_start = max(pending_match.start(), emitted) if pending_match else len(buffer)
        safe = buffer[emitted:pending_start]
        self._pending = buffer[pending_start:]

        self._fresh.append(safe)
        self._roll_tail()
        self._hashless = not self._pending and "#" not in self._tail
        return safe

    def _roll_tail(self) -> None:
        """Fold the text returned since into the 64-character tail.

        ref §3.2 (RMG-TAIL-001): roll the 64-character tail; ``first_chunk`` turns off
        only when the tail is sliced, never merely because something was emitted.
        """
        fresh = self._fresh
        if not fresh:
            return
        full = self._tail + "".join(fresh)
        fresh.clear()
        if len(full) > TAIL_BUFFER_SIZE:
            self._tail = full[-TAIL_BUFFER_SIZE:]
            self._first_chunk = False
        else:
            self._tail = full

    def warning_event(self, message_id: str | None) -> FabricatedRoleMarker | None:
        """The ``fabricated_role_marker`` event for ``message_id``, or None while clean."""
        if not self.contaminated or not self._marker:
            return None
        return FabricatedRoleMarker(marker=self._marker, message_id=message_id)
