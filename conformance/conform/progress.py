"""Progress per def while ``harness conform`` runs (CONFORM-PROGRESS-001).

A def is finished when its fake runs and its def checks are; failed rules are counted as
the verdict table counts them.
Design: docs/design/conformance.md#conformance.conform
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from conformance.baseline import EntryList
from conformance.conform.plan import ConformPlan
from conformance.forked import Send
from conformance.verdicts import Outcome, Status

__all__ = ["OnProgress", "ProgressUpdate", "Relay", "Tracker"]

# ---------------------------------------------------------------------------- progress


@dataclass(frozen=True)
class ProgressUpdate:
    """Where one def is: runs done of its total, what it is judging now."""

    def_id: str
    done: int
    total: int
    #: e.g. ``"DEF-BUDGET-001"``, ``"scenario happy"``, ``"real CLI"``, ``"done"``.
    current: str
    #: Rules failed so far, not counting the baseline's expected failures: the verdict
    #: table's fail column for this def once it is finished.
    failures: int = 0
    finished: bool = False
    #: Failed rules the baseline lists (the table's xfail column).
    expected: int = 0


OnProgress = Callable[[ProgressUpdate], None]


class Tracker:
    """Progress per def (CONFORM-PROGRESS-001). A def is finished when its runs and its
    concurrent def checks are; failed rules are counted as the verdict table counts them."""

    def __init__(
        self,
        plan: ConformPlan,
        on_progress: OnProgress | None,
        baseline: EntryList | None = None,
    ) -> None:
        self._on = on_progress
        self._baseline = baseline
        self.total = {p.id: len(p.scenarios) if p.target.emulator else 0 for p in plan.defs}
        self.done = dict.fromkeys(self.total, 0)
        self.failed: dict[str, set[str]] = {d: set() for d in self.total}
        self.finished: set[str] = set()
        #: Defs whose def checks (phase 1b, and the argv checks when a forked copy of
        #: this process judges them) are still running: how many groups of them.
        self.checking: Counter[str] = Counter()
        self.real = {p.id: p.real for p in plan.defs}
        self._lock = threading.RLock()

    def note(self, def_id: str, current: str, outcomes: Iterable[Outcome] = ()) -> None:
        with self._lock:  # def checks of several defs may report from worker threads
            self.failed[def_id].update(o.rule_id for o in outcomes if o.status is Status.FAIL)
            if current == "done":
                if def_id in self.finished:
                    return
                self.finished.add(def_id)
            if self._on is not None:
                failed = self.failed[def_id]
                listed = {r for r in failed if self._baseline and self._baseline.lists(def_id, r)}
                self._on(
                    ProgressUpdate(
                        def_id,
                        self.done[def_id],
                        self.total[def_id],
                        current,
                        len(failed - listed),
                        finished=current == "done",
                        expected=len(listed),
                    )
                )

    def _maybe_finished(self, def_id: str) -> None:
        with self._lock:
            ran = self.done[def_id] >= self.total[def_id]
            if ran and def_id not in self.checking and not self.real.get(def_id):
                self.note(def_id, "done")

    def run_done(self, def_id: str, scenario: str, outcomes: Sequence[Outcome]) -> None:
        with self._lock:
            self.done[def_id] += 1
        worst = next((o.rule_id for o in outcomes if o.status is Status.FAIL), None)
        current = f"scenario {scenario}" + (f" ({worst} fails)" if worst else "")
        self.note(def_id, current, outcomes)
        self._maybe_finished(def_id)

    def checks_done(self, def_id: str) -> None:
        with self._lock:
            self.checking[def_id] -= 1
            if self.checking[def_id] <= 0:
                del self.checking[def_id]
        self._maybe_finished(def_id)


class Relay(Tracker):
    """A copy's tracker: each finished run is sent to the parent's tracker."""

    def __init__(self, plan: ConformPlan, send: Send) -> None:
        super().__init__(plan, None)
        self._send = send

    def run_done(self, def_id: str, scenario: str, outcomes: Sequence[Outcome]) -> None:
        self._send((def_id, scenario, list(outcomes)))
