"""Judging a cancelled run from its recording (the cancel part of ``harness replay``).

Rules: RECORD-LADDER-001, REPLAY-CANCEL-STATUS-001.
Design: docs/design/recording.md#harness.recording.replay_cancel
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from harness.ladder import Step, StepKind
from harness.protocols.base import Actions, SetDeadline, TwoWaySession

__all__ = ["CancelPlan", "Canceller", "GraceTick", "describe_ladder", "ladder_problems"]

#: Rounding slack when comparing recorded gaps (times are written to 0.001 ms).
_SLACK_MS = 0.01

_RANK = {
    StepKind.CANCEL: 0,
    StepKind.GRACE: 1,
    StepKind.STDIN_CLOSE: 2,
    StepKind.TERMINATE: 3,
    StepKind.KILL: 4,
    StepKind.REAPED: 6,
}


@dataclass(frozen=True)
class CancelPlan:
    """What a replay needs of a recording's cancel: when, the graces, when it ended."""

    cancel: Step
    #: label -> the grace recorded for it (ms after the cancel).
    graces: dict[str, float]
    #: The recorded time the run stopped waiting (the leader's exit, else the reap, else
    #: the recording's end): a grace that ends later never expired.
    ended_ms: float

    @classmethod
    def from_steps(cls, steps: Sequence[Step], end_ms: float) -> CancelPlan | None:
        cancel = next((s for s in steps if s.kind is StepKind.CANCEL), None)
        if cancel is None:
            return None
        graces: dict[str, float] = {}
        for step in steps:
            if step.kind is StepKind.GRACE:
                graces.setdefault(str(step.detail["label"]), float(step.detail["ms"]))
        ended = end_ms
        for kind in (StepKind.REAPED, StepKind.EXITED):
            found = next((s for s in steps if s.kind is kind), None)
            if found is not None:
                ended = found.t_ms
        return cls(cancel, graces, ended)


def ladder_problems(steps: Sequence[Step]) -> list[str]:
    """Why the recorded ladder is out of order (REPLAY-CANCEL-LADDER-001); ``[]`` if it is not."""
    if not steps:
        return []
    by_kind = {s.kind: s for s in steps}
    cancel = next((s for s in steps if s.kind is StepKind.CANCEL), None)
    terminate = by_kind.get(StepKind.TERMINATE)
    problems = _sequence_problems(steps)
    if cancel is not None and terminate is not None:
        problems += _graceful_stop_problems(steps, cancel, terminate, by_kind)
    if StepKind.KILL in by_kind:
        problems += _forced_stop_problems(steps, terminate, by_kind[StepKind.KILL])
    problems += _reap_problems(steps, cancel)
    return problems


def _sequence_problems(steps: Sequence[Step]) -> list[str]:
    """The cancel first, each rung once, times never going back, rungs never going down."""
    problems: list[str] = []
    kinds = [s.kind for s in steps]
    first = steps[0]
    if first.kind is not StepKind.CANCEL:
        problems.append(f"a {first.kind.value!r} step (line {first.line}) before the cancel")
    for kind in StepKind:
        if kind is not StepKind.GRACE and kinds.count(kind) > 1:
            problems.append(f"{kinds.count(kind)} {kind.value!r} steps")
    previous: Step | None = None
    top = -1
    for step in steps:
        if previous is not None and step.t_ms + _SLACK_MS < previous.t_ms:
            problems.append(
                f"{step.kind.value!r} at {step.t_ms} ms (line {step.line}) comes before "
                f"{previous.kind.value!r} at {previous.t_ms} ms"
            )
        previous = step
        rank = _RANK.get(step.kind)
        if rank is None:
            continue
        if rank < top:
            problems.append(f"{step.kind.value!r} (line {step.line}) after a later rung")
        top = max(top, rank)
    return problems


def _graceful_stop_problems(
    steps: Sequence[Step], cancel: Step, terminate: Step, by_kind: dict[StepKind, Step]
) -> list[str]:
    """The graceful stop came after stdin closed and after the grace, unless the CLI
    answered or left first."""
    problems: list[str] = []
    kinds = [s.kind for s in steps]
    stdin_open = bool(cancel.detail.get("stdin_open"))
    if stdin_open and StepKind.STDIN_CLOSE not in kinds[: kinds.index(StepKind.TERMINATE)]:
        problems.append("the graceful stop was sent while stdin was still open")
    graces = [float(s.detail["ms"]) for s in steps if s.kind is StepKind.GRACE]
    answered = terminate.stdout_chunks > cancel.stdout_chunks
    exited = by_kind.get(StepKind.EXITED)
    left = exited is not None and exited.t_ms <= terminate.t_ms + _SLACK_MS
    waited = terminate.t_ms - cancel.t_ms
    if graces and not (answered or left) and waited + _SLACK_MS < min(graces):
        problems.append(
            f"the graceful stop came {waited:.3f} ms after the cancel, before the "
            f"{min(graces):g} ms grace ended, with no answer from the CLI"
        )
    return problems


def _forced_stop_problems(steps: Sequence[Step], terminate: Step | None, kill: Step) -> list[str]:
    """The forced stop came after a graceful one and after its wait."""
    kinds = [s.kind for s in steps]
    if terminate is None or kinds.index(StepKind.KILL) < kinds.index(StepKind.TERMINATE):
        return ["the forced stop came without a graceful stop before it"]
    gap = kill.t_ms - terminate.t_ms
    wait = float(terminate.detail["grace_ms"])
    if gap + _SLACK_MS < wait:
        return [
            f"the forced stop came {gap:.3f} ms after the graceful one, before its "
            f"{wait:g} ms wait ended"
        ]
    return []


def _reap_problems(steps: Sequence[Step], cancel: Step | None) -> list[str]:
    """The tree was reaped, last (a run that exited at the cancel needs no reap)."""
    last = steps[-1].kind
    if any(s.kind is StepKind.REAPED for s in steps):
        return (
            [] if last is StepKind.REAPED else [f"a {last.value!r} step after the tree was reaped"]
        )
    if cancel is not None and not (len(steps) == 1 and cancel.detail.get("exited")):
        return ["the tree was never reaped"]
    return []


def describe_ladder(steps: Sequence[Step]) -> str:
    """The ladder for a person: each step, what it carried, and when after the cancel
    (``cancel at 1127 ms > grace 2000 ms > stdin_close +4 ms > terminate SIGTERM +4 ms``)."""
    if not steps:
        return "no steps"
    origin = steps[0].t_ms
    parts: list[str] = []
    for step in steps:
        if step is steps[0]:
            parts.append(f"{step.kind.value} at {step.t_ms:g} ms")
            continue
        what = step.kind.value
        detail = step.detail
        if step.kind is StepKind.GRACE:
            what += f" {float(detail['ms']):g} ms ({detail['label']})"
        elif step.kind in (StepKind.TERMINATE, StepKind.KILL):
            what += f" {detail['signal']}"
        elif step.kind is StepKind.EXITED:
            what += f" {detail['signal'] or detail['code']}"
        parts.append(f"{what} +{step.t_ms - origin:.0f} ms")
    return " > ".join(parts)


@dataclass(frozen=True)
class GraceTick:
    """A grace deadline the replay let expire: its label, when the recording says it
    ended (ms after spawn) and the clock's reading when it was delivered."""

    label: str
    recorded_ms: float
    delivered_ms: float | None


@dataclass
class Canceller:
    """Cancels a replayed two-way session where the recording did, and lets its grace run
    out where the recording's did (REPLAY-CANCEL-FRAMES-001, REPLAY-CANCEL-TIMING-001).

    The replay tells it each stdout chunk as the driver asks for it (:meth:`reading`);
    the session wrapper asks it for due actions before feeding more (:meth:`due`) and at
    the end of output (:meth:`at_end`). ``wait_until`` paces a grace to its recorded
    offset (the replay's pacer; a no-op without ``--timing``).
    """

    plan: CancelPlan
    wait_until: Callable[[float], float | None]
    sent: bool = False
    #: Frames the session wrote before the cancel (the rest answer it).
    frames_before: int = 0
    ticks: list[GraceTick] = field(default_factory=list)
    _cancel_due: bool = False
    _pending: list[SetDeadline] = field(default_factory=list)
    _read_until_ms: float = 0.0

    def reading(self, index: int, t_ms: float) -> None:
        """The driver asks for stdout chunk ``index`` (0-based), recorded at ``t_ms``:
        every complete line before it was fed."""
        if index >= self.plan.cancel.stdout_chunks:
            self._cancel_due = True
        self._read_until_ms = max(self._read_until_ms, t_ms)

    def due(self, session: TwoWaySession, frames_sent: int, *, final: bool = False) -> Actions:
        """The cancel and the grace ticks due before the session is fed more."""
        out = Actions()
        if not self.sent and (self._cancel_due or final):
            self.sent = True
            self.frames_before = frames_sent
            actions = session.cancel(0.0)
            self._pending = [c for c in actions.controls if isinstance(c, SetDeadline)]
            out.extend(actions)
        if not self.sent:
            return out
        until = self.plan.ended_ms if final else self._read_until_ms
        for deadline in list(self._pending):
            grace = self.plan.graces.get(deadline.label)
            if grace is None:
                continue
            at = self.plan.cancel.t_ms + grace
            if at > until + _SLACK_MS:
                continue
            self._pending.remove(deadline)
            if out.finished is not None:
                continue
            clock = self.wait_until(at)
            self.ticks.append(GraceTick(deadline.label, at, clock))
            out.extend(session.tick(deadline.at_ms))
        return out
