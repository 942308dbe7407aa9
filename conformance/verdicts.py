"""The verdict model: outcomes → one result per (def, rule) → the run's exit code.

Pure (no pytest, no IO, no clock), so it is tested with synthetic outcomes
(style anchors, "Examples to follow" 10; acp-tck ``common/report.py``).

Design: docs/design/conformance.md#conformance.verdicts
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.baseline import Entry, EntryList
from conformance.evidence import Evidence
from conformance.rules import RULE_ID_PATTERN, Rule, Tier, all_rules
from harness.defs.types import ID_PATTERN

__all__ = [
    "DEFAULT_MAX_RERUNS",
    "DISPOSITION_ORDER",
    "EXIT_NOT_CONFORMANT",
    "EXIT_OK",
    "EXIT_USAGE",
    "STATUS_PRIORITY",
    "Cell",
    "Disposition",
    "Outcome",
    "Status",
    "Verdict",
    "fails_run",
    "fold_attempts",
    "judge",
    "should_rerun",
    "worst",
]

#: acp-tck's exit codes (wire §B.3): 0 conformant, 1 not conformant, 2 usage error.
EXIT_OK = 0
EXIT_NOT_CONFORMANT = 1
EXIT_USAGE = 2

#: Solo re-runs a flaky-listed check gets after a failure before it counts as failed.
DEFAULT_MAX_RERUNS = 2


class Status(str, enum.Enum):
    """What one check observed (design §Conformance model "Verdicts")."""

    #: The rule holds.
    PASS = "pass"
    #: The rule is broken; the outcome carries the evidence.
    FAIL = "fail"
    #: The rule does not apply here (the reason says why).
    SKIPPED = "skipped"
    #: The rule applies, but the check could not run (a dead CLI cannot score 100%).
    NOT_TESTED = "not_tested"


#: Lower is worse. CONFORM-VERDICT-001: a cell takes the worst status of its checks.
#: ``not_tested`` ranks above ``pass``: a scenario whose check could not run must not
#: hide behind another scenario's pass (acp-tck ranks it last because it only ever
#: synthesizes NOT_TESTED for rules with no test; our checks report it explicitly).
#: ``pass`` ranks above ``skipped``: a rule verified where it applies is a pass.
STATUS_PRIORITY: Mapping[Status, int] = {
    Status.FAIL: 0,
    Status.NOT_TESTED: 1,
    Status.PASS: 2,
    Status.SKIPPED: 3,
}


class Disposition(str, enum.Enum):
    """A cell's final result once the baseline and flaky lists are applied."""

    #: Failed, not listed in the baseline.
    FAIL = "fail"
    #: Passes, but a baseline entry still lists it: the baseline is stale (wire §B.2).
    STALE = "stale"
    #: Applies, but no check could run.
    NOT_TESTED = "not_tested"
    #: A flaky-listed check failed, then passed on a solo re-run.
    FLAKY = "flaky"
    #: Failed or not tested, and the baseline lists it (a known gap; exit 0).
    EXPECTED_FAIL = "expected_fail"
    PASS = "pass"
    SKIPPED = "skipped"


#: Display order, worst first (reports, summaries).
DISPOSITION_ORDER: tuple[Disposition, ...] = tuple(Disposition)

_NO_OUTCOME_REASON = "no check ran for this rule, which applies to this def"


def worst(statuses: Iterable[Status]) -> Status:
    """The worst of ``statuses`` by :data:`STATUS_PRIORITY` (CONFORM-VERDICT-001)."""
    found = list(statuses)
    if not found:
        raise ValueError("worst() of no statuses")
    return min(found, key=STATUS_PRIORITY.__getitem__)


@dataclass(frozen=True)
class Outcome:
    """One check of one rule against one def (one scenario, one attempt)."""

    rule_id: str
    def_id: str
    status: Status
    #: Why: the failure in one line, or why the rule was skipped / not tested.
    reason: str = ""
    evidence: Evidence | None = None
    duration_ms: float = 0.0
    #: Which check or scenario produced it; a rule may be checked by several.
    scenario: str | None = None
    #: 1 for the first run; 2.. for solo re-runs of a flaky-listed check.
    attempt: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.status, Status):
            try:
                object.__setattr__(self, "status", Status(self.status))
            except ValueError:
                known = ", ".join(s.value for s in Status)
                raise ValueError(
                    f"outcome {self.def_id}:{self.rule_id}: status {self.status!r} "
                    f"is not one of {known}"
                ) from None
        where = f"outcome {self.def_id}:{self.rule_id}"
        if not RULE_ID_PATTERN.match(self.rule_id):
            raise ValueError(f"{where}: rule id {self.rule_id!r} is malformed")
        if not ID_PATTERN.match(self.def_id):
            raise ValueError(f"{where}: def id {self.def_id!r} is malformed")
        if self.attempt < 1:
            raise ValueError(f"{where}: attempt must be >= 1, got {self.attempt}")
        if self.duration_ms < 0:
            raise ValueError(f"{where}: duration_ms must be >= 0, got {self.duration_ms}")
        # design §Conformance model: every failed verdict carries its evidence.
        if self.status is Status.FAIL and self.evidence is None:
            raise ValueError(f"{where}: a fail outcome must carry evidence (CONFORM-EVIDENCE-001)")
        # design §Conformance model: skipped means not applicable, with the reason.
        if self.status in (Status.SKIPPED, Status.NOT_TESTED) and not self.reason.strip():
            raise ValueError(f"{where}: a {self.status.value} outcome must say why (reason)")

    def to_json(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "def_id": self.def_id,
            "scenario": self.scenario,
            "attempt": self.attempt,
            "status": self.status.value,
            "reason": self.reason,
            "duration_ms": self.duration_ms,
            "evidence": None if self.evidence is None else self.evidence.to_json(),
        }


def should_rerun(
    attempts: Sequence[Status], *, flaky_listed: bool, max_reruns: int = DEFAULT_MAX_RERUNS
) -> bool:
    """Whether the runner re-runs a check solo once more (CONFORM-FLAKY-001).

    ``attempts``: the statuses of this (def, rule, scenario) check so far, in
    order. Only a flaky-listed check is re-run, only while every attempt so far
    failed, and at most ``max_reruns`` times after the first run. Solo re-runs
    of failures are how MCP's python-sdk tells load flakes from bugs (wire §B.2).
    """
    if max_reruns < 0:
        raise ValueError(f"max_reruns must be >= 0, got {max_reruns}")
    if not flaky_listed or not attempts:
        return False
    if any(s is not Status.FAIL for s in attempts):
        return False
    return len(attempts) <= max_reruns


@dataclass(frozen=True)
class CheckResult:
    """One check's attempts folded into one status."""

    status: Status
    #: Failed, then passed on a solo re-run (only for flaky-listed checks).
    flaky: bool
    #: The outcome that decides it (for a flaky check: the failing attempt).
    decisive: Outcome
    attempts: int


def fold_attempts(attempts: Sequence[Outcome], *, flaky_listed: bool) -> CheckResult:
    """The attempts of one check (same def, rule, scenario) as one result.

    A flaky-listed check whose first attempt failed and a later attempt passed is
    ``pass`` + ``flaky``. Anything else is the worst of the attempts, so a re-run
    never hides a real failure: all attempts failing is a ``fail``, and re-runs of
    a check that is not listed flaky cannot turn its failure into a pass.
    """
    if not attempts:
        raise ValueError("fold_attempts() of no attempts")
    ordered = sorted(attempts, key=lambda o: o.attempt)
    numbers = [o.attempt for o in ordered]
    if len(set(numbers)) != len(numbers):
        first = ordered[0]
        raise ValueError(
            f"outcome {first.def_id}:{first.rule_id} scenario {first.scenario!r}: "
            f"duplicate attempt numbers {numbers}"
        )
    statuses = [o.status for o in ordered]
    if flaky_listed and statuses[0] is Status.FAIL and Status.PASS in statuses[1:]:
        return CheckResult(Status.PASS, True, ordered[0], len(ordered))
    status = worst(statuses)
    decisive = next(o for o in ordered if o.status is status)
    return CheckResult(status, False, decisive, len(ordered))


@dataclass(frozen=True)
class Cell:
    """The result of one rule for one def: one cell of the defs × rules matrix."""

    def_id: str
    rule_id: str
    tier: Tier
    #: The worst status of its checks (CONFORM-VERDICT-001).
    status: Status
    disposition: Disposition
    reason: str
    evidence: Evidence | None
    outcomes: tuple[Outcome, ...]
    #: A flaky-listed check failed, then passed on a re-run.
    flaky: bool = False
    baseline_entries: tuple[Entry, ...] = ()
    flaky_entries: tuple[Entry, ...] = ()

    @property
    def fails_run(self) -> bool:
        return fails_run(self.tier, self.disposition)

    @property
    def duration_ms(self) -> float:
        return sum(o.duration_ms for o in self.outcomes)


def fails_run(tier: Tier, disposition: Disposition) -> bool:
    """Whether a cell makes the run non-conformant (CONFORM-EXIT-001).

    design §Conformance model: non-zero on any mandatory fail or not_tested, or any
    capability fail; a listed rule that now passes fails the run (stale baseline) —
    whatever its tier, since the gap it declared has closed and the file is wrong.
    """
    if disposition is Disposition.STALE:
        return True
    if disposition is Disposition.FAIL:
        return tier in (Tier.MANDATORY, Tier.CAPABILITY)
    if disposition is Disposition.NOT_TESTED:
        return tier is Tier.MANDATORY
    return False


@dataclass(frozen=True)
class Verdict:
    """Every cell of a run, the lists applied to it, and the exit code."""

    #: In def order, then by rule id.
    cells: tuple[Cell, ...]
    #: Defs in the order they were given.
    defs: tuple[str, ...]
    #: The rules of the cells, by id (sorted).
    rules: Mapping[str, Rule]
    baseline: EntryList | None = None
    flaky_list: EntryList | None = None
    #: Baseline entries that match cells, none of which still fails (wire §B.2).
    stale_entries: tuple[Entry, ...] = ()
    #: Baseline entries that match no cell of this run (tolerated; reported).
    unmatched_entries: tuple[Entry, ...] = ()
    _index: dict[tuple[str, str], Cell] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self._index.update({(c.def_id, c.rule_id): c for c in self.cells})

    def cell(self, def_id: str, rule_id: str) -> Cell | None:
        return self._index.get((def_id, rule_id))

    @property
    def failing_cells(self) -> tuple[Cell, ...]:
        return tuple(c for c in self.cells if c.fails_run)

    @property
    def conformant(self) -> bool:
        return not self.failing_cells

    @property
    def exit_code(self) -> int:
        """CONFORM-EXIT-001: 0 iff nothing fails the run."""
        return EXIT_OK if self.conformant else EXIT_NOT_CONFORMANT

    def counts(self, cells: Iterable[Cell] | None = None) -> dict[Disposition, int]:
        out = dict.fromkeys(Disposition, 0)
        for c in self.cells if cells is None else cells:
            out[c.disposition] += 1
        return out

    def counts_by_tier(self) -> dict[Tier, dict[Disposition, int]]:
        return {t: self.counts(c for c in self.cells if c.tier is t) for t in Tier}

    def counts_by_def(self) -> dict[str, dict[Disposition, int]]:
        return {d: self.counts(c for c in self.cells if c.def_id == d) for d in self.defs}

    def reasons(self) -> list[str]:
        """Why the run is not conformant, one line per kind (empty when it is)."""
        tally: dict[tuple[Tier, Disposition], int] = {}
        for c in self.failing_cells:
            tally[(c.tier, c.disposition)] = tally.get((c.tier, c.disposition), 0) + 1
        verbs = {
            Disposition.FAIL: ("fails", "fail"),
            Disposition.NOT_TESTED: ("is not tested", "are not tested"),
            Disposition.STALE: (
                "passes but is still listed in the baseline (stale)",
                "pass but are still listed in the baseline (stale)",
            ),
        }
        out = []
        for disp in (Disposition.FAIL, Disposition.NOT_TESTED, Disposition.STALE):
            for tier in Tier:
                n = tally.get((tier, disp), 0)
                if n:
                    one, many = verbs[disp]
                    out.append(
                        f"{n} {tier.value} {'cell' if n == 1 else 'cells'} "
                        f"{one if n == 1 else many}"
                    )
        return out


def _entry_is_stale(entry: Entry, matched: Sequence[Cell], flaky_list: EntryList | None) -> bool:
    """An entry is stale when the gap it declares has closed (wire §B.2, pass+listed → 1).

    It matched at least one passing cell and none of its cells still fails or is not
    tested. Skipped cells are tolerated (MCP: absent/skipped baselined checks). A cell
    on the flaky list keeps the entry alive: a flaky pass never makes it stale.
    """
    if not matched:
        return False
    if any(c.status in (Status.FAIL, Status.NOT_TESTED) for c in matched):
        return False
    if flaky_list is not None and any(flaky_list.lists(c.def_id, c.rule_id) for c in matched):
        return False
    return any(c.status is Status.PASS for c in matched)


def _observe(
    def_id: str,
    rule: Rule,
    scenarios: Mapping[str | None, Sequence[Outcome]],
    flaky_entries: tuple[Entry, ...],
) -> Cell:
    """One cell before the baseline: its checks' attempts folded, then the worst check."""
    if not scenarios:
        return Cell(
            def_id,
            rule.id,
            rule.tier,
            Status.NOT_TESTED,
            Disposition.NOT_TESTED,
            _NO_OUTCOME_REASON,
            None,
            (),
            flaky_entries=flaky_entries,
        )
    names = sorted(scenarios, key=lambda s: (s is not None, s or ""))
    checks = [fold_attempts(scenarios[s], flaky_listed=bool(flaky_entries)) for s in names]
    status = worst(c.status for c in checks)
    decisive = next(c for c in checks if c.status is status)
    is_flaky = status is Status.PASS and any(c.flaky for c in checks)
    if is_flaky:
        decisive = next(c for c in checks if c.flaky)
    reason = decisive.decisive.reason
    if status is Status.FAIL and flaky_entries and decisive.attempts > 1:
        reason = f"listed flaky, failed all {decisive.attempts} attempts: {reason}"
    elif is_flaky:
        reason = f"failed, then passed on a solo re-run: {reason}"
    return Cell(
        def_id,
        rule.id,
        rule.tier,
        status,
        Disposition(status.value),
        reason,
        decisive.decisive.evidence,
        tuple(o for s in names for o in sorted(scenarios[s], key=lambda o: o.attempt)),
        flaky=is_flaky,
        flaky_entries=flaky_entries,
    )


def judge(
    outcomes: Iterable[Outcome],
    *,
    rules: Mapping[str, Rule] | None = None,
    applicable: Mapping[str, Iterable[str]] | None = None,
    baseline: EntryList | None = None,
    flaky: EntryList | None = None,
    known_defs: Collection[str] = (),
) -> Verdict:
    """Fold ``outcomes`` into a :class:`Verdict`.

    ``rules``: the catalog (default :func:`conformance.rules.all_rules`); an outcome
    naming a rule outside it is an error. ``applicable``: def id → the rule ids that
    apply to it; an applicable rule with no outcome is ``not_tested``
    (CONFORM-VERDICT-001). ``baseline`` / ``flaky``: parsed lists
    (:mod:`conformance.baseline`). ``known_defs``: every def id that exists (judged or
    not); an entry naming one this run did not judge (``--agent`` narrowed it) is not
    reported as matching no cell (CONFORM-BASELINE-STALE-001).
    """
    catalog = all_rules() if rules is None else rules
    defs: dict[str, None] = {}
    expected = _expected_cells(applicable or {}, catalog, defs)
    grouped = _group(outcomes, catalog, defs)
    # Cells in def order (as given), then by rule id: reports list them in this order.
    def_order = {d: i for i, d in enumerate(defs)}
    keys = sorted({**expected, **dict.fromkeys(grouped)}, key=lambda k: (def_order[k[0]], k[1]))

    # First pass: what every cell observed.
    observed = [
        _observe(
            def_id,
            catalog[rule_id],
            grouped.get((def_id, rule_id), {}),
            () if flaky is None else flaky.matching(def_id, rule_id),
        )
        for def_id, rule_id in keys
    ]

    # Second pass: what the baseline makes of it (wire §B.2).
    entries = baseline.entries if baseline is not None else ()
    matched_by_entry = {e: [c for c in observed if e.matches(c.def_id, c.rule_id)] for e in entries}
    stale = tuple(e for e in entries if _entry_is_stale(e, matched_by_entry[e], flaky))
    not_judged = set(known_defs) - set(defs)
    unmatched = tuple(e for e in entries if not matched_by_entry[e] and e.def_id not in not_judged)
    cells = [_with_baseline(c, baseline, stale) for c in observed]
    used_rules = sorted({c.rule_id for c in cells})
    return Verdict(
        cells=tuple(cells),
        defs=tuple(defs),
        rules={r: catalog[r] for r in used_rules},
        baseline=baseline,
        flaky_list=flaky,
        stale_entries=stale,
        unmatched_entries=unmatched,
    )


def _expected_cells(
    applicable: Mapping[str, Iterable[str]], catalog: Mapping[str, Rule], defs: dict[str, None]
) -> dict[tuple[str, str], None]:
    """The (def, rule) cells that must have an outcome; adds their defs to ``defs``."""
    expected: dict[tuple[str, str], None] = {}
    for def_id, rule_ids in applicable.items():
        defs.setdefault(def_id, None)
        for rule_id in rule_ids:
            if rule_id not in catalog:
                raise ValueError(f"applicable[{def_id!r}] names unknown rule id {rule_id!r}")
            expected.setdefault((def_id, rule_id), None)
    return expected


def _group(
    outcomes: Iterable[Outcome], catalog: Mapping[str, Rule], defs: dict[str, None]
) -> dict[tuple[str, str], dict[str | None, list[Outcome]]]:
    """(def, rule) -> scenario -> attempts; adds each outcome's def to ``defs``."""
    grouped: dict[tuple[str, str], dict[str | None, list[Outcome]]] = {}
    for o in outcomes:
        if o.rule_id not in catalog:
            raise ValueError(f"outcome {o.def_id}:{o.rule_id} names a rule not in the catalog")
        defs.setdefault(o.def_id, None)
        grouped.setdefault((o.def_id, o.rule_id), {}).setdefault(o.scenario, []).append(o)
    return grouped


def _with_baseline(c: Cell, baseline: EntryList | None, stale: tuple[Entry, ...]) -> Cell:
    """What the baseline makes of an observed cell (wire §B.2)."""
    b_entries = baseline.matching(c.def_id, c.rule_id) if baseline is not None else ()
    disposition, reason = c.disposition, c.reason
    if b_entries and c.status in (Status.FAIL, Status.NOT_TESTED):
        disposition = Disposition.EXPECTED_FAIL
    elif c.flaky:
        disposition = Disposition.FLAKY
    elif c.status is Status.PASS and any(e in stale for e in b_entries):
        e = next(e for e in b_entries if e in stale)
        disposition = Disposition.STALE
        reason = (
            f"passes, but baseline entry {e.text!r} ({e.where}) still lists it as an "
            "expected failure; remove the entry"
        )
    return dataclasses.replace(
        c, disposition=disposition, reason=reason, baseline_entries=b_entries
    )
