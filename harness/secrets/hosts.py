"""Host names a recording writes as ``{host}``: which names count, and where one matches.

A CLI may print the name of the machine it runs on (the codex app-server's
``remoteControl/status/changed`` frame carries it as ``serverName``), so a recording
would say which machine made it. A host name is a word, not a path: it matches only as
a whole token, case-insensitively (DNS names are), never inside a longer word or name
(``vm`` is not in ``vmstat``, ``avm`` or ``vm.max_map_count``; a final ``.`` ends it).
Sans-IO: the caller reads the machine's names (``record.host_spellings``).

Rule: RECORD-HOST-001.
Design: docs/design/secrets.md#harness.secrets.hosts
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "MIN_HOST_NAME",
    "NEVER_SCRUBBED_HOSTS",
    "find_hosts",
    "host_hold_start",
    "host_literals",
    "host_names",
]

#: A name shorter than this is not scrubbed: one letter is in every word of the data.
MIN_HOST_NAME = 2

#: Names that are never scrubbed (RECORD-HOST-001), compared lowercased. They name no
#: machine in particular, and rewriting them would change what a recording means:
#: loopback names (the scripted model server's URLs read ``http://localhost:PORT``),
#: and the JSON literals, which stand unquoted in every frame.
NEVER_SCRUBBED_HOSTS = frozenset(
    {
        "localhost",
        "localhost.localdomain",
        "localdomain",
        "ip6-localhost",
        "ip6-loopback",
        "broadcasthost",
        "true",
        "false",
        "null",
    }
)

#: Bytes that may be part of a host name: letters, digits, ``-``, ``.``, ``_`` (seen on
#: Windows) and every non-ASCII byte (a UTF-8 letter). A match is bounded by any other.
_HOST_BYTES = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._"
) | frozenset(range(0x80, 0x100))
#: Bytes that make a name read as a number or an address rather than a machine's name.
_NUMERIC_BYTES = frozenset(b"0123456789.")
_DOT = ord(".")


def host_names(*given: str | None) -> tuple[str, ...]:
    """Each name as given and its short form before the first dot, without repeats, in
    order (a CLI may print either)."""
    out: list[str] = []
    for name in given:
        if not name:
            continue
        for spelling in (name, name.split(".", 1)[0]):
            if spelling and spelling not in out:
                out.append(spelling)
    return tuple(out)


def _scrubbable(literal: bytes) -> bool:
    """RECORD-HOST-001: long enough, a possible host name, not a name in
    :data:`NEVER_SCRUBBED_HOSTS`, not a number."""
    return (
        len(literal) >= MIN_HOST_NAME
        and all(b in _HOST_BYTES for b in literal)
        and not all(b in _NUMERIC_BYTES for b in literal)
        and literal.decode("utf-8", "replace") not in NEVER_SCRUBBED_HOSTS
    )


def host_literals(names: Iterable[str]) -> tuple[bytes, ...]:
    """The names to match: lowercased UTF-8, the ones never scrubbed dropped, longest
    first (``vm.example.org`` before its short form ``vm``)."""
    found = {name.lower().encode("utf-8", "surrogateescape") for name in names if name}
    return tuple(sorted((b for b in found if _scrubbable(b)), key=lambda b: (-len(b), b)))


def find_hosts(data: bytes, base: int, literals: Sequence[bytes]) -> list[tuple[int, int]]:
    """Every ``(start, end)`` in ``data[base:]`` where a literal stands as a whole token,
    matched case-insensitively (``data[:base]`` is context for the boundary before it).
    Several may overlap: the caller keeps the longest of those that start together."""
    if not literals:
        return []
    lowered = data.lower()  # ASCII only, so offsets stay those of ``data``
    found: list[tuple[int, int]] = []
    for literal in literals:
        at = lowered.find(literal, base)
        while at >= 0:
            end = at + len(literal)
            if (at == 0 or data[at - 1] not in _HOST_BYTES) and _ends_token(data, end):
                found.append((at, end))
            at = lowered.find(literal, at + 1)
    return found


def _ends_token(data: bytes, end: int) -> bool:
    """Whether a name ending at ``end`` ends there: the next byte cannot continue it, or
    it is a final ``.`` (the end of a sentence, or of a fully qualified name)."""
    if end < len(data) and data[end] == _DOT:
        end += 1
    return end == len(data) or data[end] not in _HOST_BYTES


def host_hold_start(data: bytes, floor: int, literals: Sequence[bytes]) -> int:
    """Where a trailing prefix of a host name begins (``len(data)``: none), looking no
    earlier than ``floor``: the bytes still to come decide whether it is one."""
    end = len(data)
    hold = end
    for literal in literals:
        start = max(floor, end - len(literal))
        tail = data[start:].lower()
        for offset in range(len(tail)):
            if literal.startswith(tail[offset:]):
                hold = min(hold, start + offset)
                break
    return hold
