"""Expected-failures baselines and flaky lists (design §Conformance model "Baselines").

Design: docs/design/conformance.md#conformance.baseline
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from conformance.rules import RULE_ID_PATTERN
from harness.defs.types import ID_PATTERN
from harness.errors import HarnessError

__all__ = [
    "BaselineError",
    "Entry",
    "EntryList",
    "Scope",
    "load_baseline",
    "load_flaky",
    "parse_entries",
]

BASELINE_FILE_RULE = "CONFORM-BASELINE-FILE-001"


class BaselineError(HarnessError):
    """A baseline or flaky-list file that is not valid; names the file and line."""

    code = "CONFORM_BASELINE_INVALID"

    def __init__(self, source: str, line: int | None, problem: str) -> None:
        where = source if line is None else f"{source}:{line}"
        super().__init__(f"{where}: {problem}", rule=BASELINE_FILE_RULE)
        self.source = source
        self.line = line
        self.problem = problem


class Scope(str, enum.Enum):
    """How much of the matrix one entry covers."""

    #: ``def_id:rule_id``: one cell.
    CELL = "cell"
    #: ``rule_id``: that rule for every def.
    RULE = "rule"
    #: ``def_id:*``: every rule of that def.
    DEF = "def"


@dataclass(frozen=True)
class Entry:
    """One line of a baseline or flaky list."""

    #: ``None`` for a bare ``rule_id`` entry (every def).
    def_id: str | None
    #: ``None`` for a ``def_id:*`` entry (every rule).
    rule_id: str | None
    source: str
    line: int
    #: The trailing comment, if any: why the gap exists.
    note: str = ""

    @property
    def scope(self) -> Scope:
        if self.def_id is None:
            return Scope.RULE
        if self.rule_id is None:
            return Scope.DEF
        return Scope.CELL

    @property
    def text(self) -> str:
        """The entry as it is written in the file (canonical form)."""
        if self.def_id is None:
            return str(self.rule_id)
        return f"{self.def_id}:{self.rule_id or '*'}"

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"

    def matches(self, def_id: str, rule_id: str) -> bool:
        return (self.def_id is None or self.def_id == def_id) and (
            self.rule_id is None or self.rule_id == rule_id
        )

    def to_json(self) -> dict[str, object]:
        return {
            "entry": self.text,
            "scope": self.scope.value,
            "source": self.source,
            "line": self.line,
            "note": self.note,
        }


@dataclass(frozen=True)
class EntryList:
    """The entries of one file, in file order. ``kind`` is ``baseline`` or ``flaky``."""

    kind: str
    source: str
    entries: tuple[Entry, ...] = ()

    def matching(self, def_id: str, rule_id: str) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.matches(def_id, rule_id))

    def lists(self, def_id: str, rule_id: str) -> bool:
        return any(e.matches(def_id, rule_id) for e in self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "source": self.source,
            "entries": [e.to_json() for e in self.entries],
        }


def _hint_unknown_rule(rule_id: str, known: Collection[str]) -> str:
    close = difflib.get_close_matches(rule_id, list(known), n=1)
    return f"; did you mean {close[0]}?" if close else ""


def _parse_token(
    token: str, *, source: str, line: int, known_rules: Collection[str] | None
) -> tuple[str | None, str | None]:
    """One entry token -> (def_id, rule_id); ``None`` means every."""

    def fail(problem: str) -> BaselineError:
        return BaselineError(source, line, problem)

    def check_rule(rule_id: str) -> str:
        if not RULE_ID_PATTERN.match(rule_id):
            raise fail(
                f"{rule_id!r} is not a rule id (expected <AREA>-<TOPIC>-<NNN>, e.g. DSH-RESUME-002)"
            )
        if known_rules is not None and rule_id not in known_rules:
            hint = _hint_unknown_rule(rule_id, known_rules)
            raise fail(f"unknown rule id {rule_id!r}{hint}")
        return rule_id

    if token in ("*", "*:*"):
        raise fail(f"{token!r} would list every rule of every def; name a def or a rule")
    if ":" not in token:
        if RULE_ID_PATTERN.match(token):
            return None, check_rule(token)
        if ID_PATTERN.match(token):
            raise fail(
                f"{token!r} is not a rule id; to list every rule of def {token!r} write '{token}:*'"
            )
        raise fail(f"{token!r} is neither a rule id nor def_id:rule_id")
    def_id, _, rule_id = token.partition(":")
    if def_id == "*":
        raise fail(f"write {rule_id!r} (a bare rule id) to list it for every def, not {token!r}")
    if not ID_PATTERN.match(def_id):
        raise fail(f"def id {def_id!r} does not match {ID_PATTERN.pattern}")
    if rule_id == "*":
        return def_id, None
    if not rule_id:
        raise fail(f"{token!r} has no rule id after ':' (write '{def_id}:*' for every rule)")
    return def_id, check_rule(rule_id)


def parse_entries(
    text: str,
    *,
    source: str,
    kind: str = "baseline",
    known_rules: Collection[str] | None = None,
) -> EntryList:
    """Parse the text of a baseline or flaky list (syntax in the module docstring).

    ``known_rules``: when given, a rule id outside it is an error. Raises
    :class:`BaselineError` naming ``source`` and the 1-based line.
    """
    entries: list[Entry] = []
    first_seen: dict[tuple[str | None, str | None], int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        body, hash_, comment = raw.partition("#")
        token = body.strip()
        if not token:
            continue
        if any(ch.isspace() for ch in token):
            raise BaselineError(
                source,
                number,
                f"one entry per line; {token!r} holds more than one word (start a note with '#')",
            )
        def_id, rule_id = _parse_token(token, source=source, line=number, known_rules=known_rules)
        key = (def_id, rule_id)
        if key in first_seen:
            raise BaselineError(
                source, number, f"duplicate entry {token!r} (first on line {first_seen[key]})"
            )
        first_seen[key] = number
        note = comment.strip() if hash_ else ""
        entries.append(Entry(def_id, rule_id, source, number, note))
    return EntryList(kind=kind, source=source, entries=tuple(entries))


def _load(path: str | Path, kind: str, known_rules: Collection[str] | None) -> EntryList:
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BaselineError(source, None, f"cannot read {kind} file: {exc.strerror}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BaselineError(source, line, f"{kind} file is not UTF-8") from exc
    return parse_entries(text, source=source, kind=kind, known_rules=known_rules)


def load_baseline(path: str | Path, *, known_rules: Collection[str] | None = None) -> EntryList:
    """Read an expected-failures file (``harness conform --baseline FILE``)."""
    return _load(path, "baseline", known_rules)


def load_flaky(path: str | Path, *, known_rules: Collection[str] | None = None) -> EntryList:
    """Read a flaky list: checks the runner re-runs solo before calling them failed."""
    return _load(path, "flaky", known_rules)
