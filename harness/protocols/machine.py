"""Transition tables: a state machine's phases and every legal move, as data.

The shape of h11's ``_state.py``: phases are an enum, every legal move is one entry
``(phase, trigger) -> next phase`` in one table, and :meth:`Machine.next` is the only
lookup; anything else raises :class:`LocalProtocolError` naming the machine, the phase
and the trigger (rule MACHINE-MOVE-001). The state diagrams in ``docs/design/`` are drawn
from the same tables (:func:`mermaid`), so the pictures cannot drift from the code.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from harness.protocols.base import LocalProtocolError

__all__ = ["Machine", "mermaid"]

P = TypeVar("P", bound=enum.Enum)
T = TypeVar("T", bound=enum.Enum)


@dataclass(frozen=True)
class Machine(Generic[P, T]):
    """One state machine: its phases, its triggers and the table of legal moves.

    ``terminal`` phases end the machine: no move leaves them. The table is checked when
    the machine is built, so a typo is an import-time error, not a stuck run.
    """

    name: str
    initial: P
    moves: Mapping[tuple[P, T], P]
    terminal: frozenset[P] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        phases = type(self.initial)
        for (source, trigger), target in self.moves.items():
            if not isinstance(source, phases) or not isinstance(target, phases):
                raise TypeError(f"machine {self.name}: move {source!r} -> {target!r} mixes enums")
            if source in self.terminal:
                raise ValueError(
                    f"machine {self.name}: terminal phase {source.name} has a move "
                    f"({trigger.name} -> {target.name})"
                )
        reachable = {self.initial}
        frontier = [self.initial]
        while frontier:
            phase = frontier.pop()
            for (source, _), target in self.moves.items():
                if source is phase and target not in reachable:
                    reachable.add(target)
                    frontier.append(target)
        unreachable = [p.name for p in phases if p not in reachable]
        if unreachable:
            raise ValueError(f"machine {self.name}: unreachable phases {unreachable}")

    @property
    def phases(self) -> tuple[P, ...]:
        return tuple(type(self.initial))

    def allows(self, phase: P, trigger: T) -> bool:
        return (phase, trigger) in self.moves

    def next(self, phase: P, trigger: T) -> P:
        """The phase ``trigger`` moves ``phase`` to; :class:`LocalProtocolError` if illegal."""
        try:
            return self.moves[(phase, trigger)]
        except KeyError:
            legal = sorted(t.name for (p, t) in self.moves if p is phase)
            raise LocalProtocolError(
                f"{self.name}: {trigger.name} is not a legal move in phase {phase.name} "
                f"(legal: {', '.join(legal) or 'none'})"
            ) from None


def mermaid(machine: Machine[P, T]) -> str:
    """The machine as a Mermaid ``stateDiagram-v2`` block (one line per table entry)."""
    lines = ["```mermaid", "stateDiagram-v2", f"    [*] --> {machine.initial.name}"]
    edges: dict[tuple[str, str], list[str]] = {}
    for (source, trigger), target in machine.moves.items():
        edges.setdefault((source.name, target.name), []).append(trigger.name.lower())
    for (source_name, target_name), triggers in edges.items():
        lines.append(f"    {source_name} --> {target_name}: {' / '.join(triggers)}")
    ends = [phase for phase in machine.phases if phase in machine.terminal]
    lines.extend(f"    {phase.name} --> [*]" for phase in ends)
    lines.append("```")
    return "\n".join(lines)
