"""``harness conform``'s plan (pure): which rules, scenarios and fake runs each def gets.

Reads no file but the scenarios, spawns nothing, looks at no clock: tested with plain data.
Rules: CONFORM-PLAN-001.
Design: docs/design/conformance.md#conformance.conform
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.checks.loader import load_def_file
from conformance.fakes import emulator_for
from conformance.rules import Rule
from fake_clis.catalog import all_specs, unemulated_steps
from fake_clis.scenario import load_scenario
from harness.defs.registry import BUILTIN_DEFS
from harness.defs.types import AgentDef
from harness.errors import HarnessError

if TYPE_CHECKING:
    from fake_clis.scenario import Scenario

__all__ = [
    "BUILTIN_BASELINE",
    "NO_FAKE_RULE",
    "REAL_RULE",
    "SCENARIO_EXCLUSIONS",
    "ConformError",
    "ConformPlan",
    "DefPlan",
    "DefTarget",
    "RunJob",
    "builtin_targets",
    "file_targets",
    "live_rule_ids",
    "needs_cancel",
    "plan_conform",
    "resolve_emulator",
    "scenario_exclusion",
]

#: CONFORM-REAL-001: with ``--real`` the def's real CLI was judged, or it says why not.
REAL_RULE = "CONFORM-REAL-001"
#: CONFORM-RUN-NOFAKE-001: a def no fake can play is not tested, never passed.
NO_FAKE_RULE = "CONFORM-RUN-NOFAKE-001"
#: Known gaps of the built-in defs, applied when ``harness conform`` runs them without a
#: ``--baseline`` of its own (CONFORM-BASELINE-BUILTIN-001).
BUILTIN_BASELINE = Path(__file__).parents[1] / "baselines" / "builtin.txt"
#: The module whose ``RULES`` are the live rules (``harness conform --real``).
LIVE_RULES_MODULE = "conformance.rules.live"

#: A scenario whose fake never finishes on its own (a ``hang`` step, or a stall longer
#: than this) is cancelled by the host once the run has said something, or after
#: :data:`~conformance.conform.fake_runs.CANCEL_AFTER_S` -- what RUN-CANCEL-001 judges
#: (ref §10.1 rule 1).
STALL_CANCEL_MS = 1_000

#: Scenarios that do not apply to a stream format, keyed by scenario then format, each
#: with its reason: the plan leaves them out and says why (CONFORM-PLAN-001).
SCENARIO_EXCLUSIONS: Mapping[str, Mapping[str, str]] = {
    # None today: a ``noise`` line, once left out for ``dsh-profile-jsonl`` (seed 001 §5:
    # "every non-empty stdout line is exactly one protocol frame"), is judged as the fault
    # it is there by the run-level checks themselves (the format's ``strict_framing``).
}


class ConformError(HarnessError):
    """A ``harness conform`` request that cannot be planned (unknown rule, scenario, def)."""

    code = "CONFORM_USAGE"


# ---------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class DefTarget:
    """One def to judge, where it came from, and which fake emulator plays its CLI."""

    defn: AgentDef
    #: The def file (``--def``), or ``None`` for a built-in def.
    source: str | None = None
    #: The built-in id whose fake emulator plays the def's CLI; ``None``: no fake can.
    emulator: str | None = None
    #: Why no fake can play it (when ``emulator`` is ``None``).
    no_fake_reason: str = ""

    @property
    def id(self) -> str:
        return self.defn.id

    def repro(self, scenario: str | None = None, rule: str | None = None) -> str:
        """The ``harness conform`` command that reproduces one verdict of this def."""
        words = ["harness", "conform"]
        words += ["--def", self.source] if self.source else ["--agent", self.defn.id]
        if scenario is not None:
            words += ["--scenario", scenario]
        if rule is not None:
            words += ["--rule", rule]
        return shlex.join(words)


#: The built-in id whose fake plays a def's CLI, or ``(None, why)``: the pytest plugin's
#: choice too (PLUGIN-FAKE-001).
resolve_emulator = emulator_for


def builtin_targets(
    defs: Sequence[AgentDef], agents: Sequence[str] | None = None
) -> list[DefTarget]:
    """Targets for the built-in (and local profile) defs, all or the ``agents`` asked for."""
    by_id = {d.id: d for d in defs}
    if agents:
        unknown = [a for a in agents if a not in by_id]
        if unknown:
            raise ConformError(
                f"--agent: unknown agent id(s) {unknown}; known: {', '.join(sorted(by_id))}"
            )
        chosen = [by_id[a] for a in dict.fromkeys(agents)]
    else:
        chosen = list(defs)
    emulators = set(all_specs())
    out: list[DefTarget] = []
    for defn in chosen:
        emulator, why = resolve_emulator(defn, BUILTIN_DEFS, emulators)
        out.append(DefTarget(defn, None, emulator, why))
    return out


def file_targets(paths: Sequence[str], reserved_ids: Iterable[str]) -> list[DefTarget]:
    """Targets for adapter authors' def files, each loaded and validated as data first.

    A bad file raises :class:`~conformance.checks.loader.DefFileError` naming the file and
    the field (DEFCHECK-LOAD-001); ``harness conform`` then exits 2 and runs nothing.
    """
    emulators = set(all_specs())
    reserved = set(reserved_ids)
    out: list[DefTarget] = []
    for path in paths:
        for defn in load_def_file(path, reserved_ids=reserved):
            emulator, why = resolve_emulator(defn, BUILTIN_DEFS, emulators)
            out.append(DefTarget(defn, path, emulator, why))
            reserved.add(defn.id)
    return out


# ---------------------------------------------------------------------------- planning


def needs_cancel(scenario: Scenario) -> bool:
    """Whether the fake never ends this scenario by itself, so the host cancels it."""
    return scenario.stall_ms >= STALL_CANCEL_MS or any(s.kind == "hang" for s in scenario.steps)


def scenario_exclusion(
    scenario: str, stream_format: str, emulator: str | None = None
) -> str | None:
    """Why ``scenario`` does not apply to a def of ``stream_format`` played by the fake of
    ``emulator`` (``None``: it does).

    Besides :data:`SCENARIO_EXCLUSIONS`, a scenario with a step kind only some CLIs produce
    (``compaction``: AMR's runtime, seed 000 §12) is left out for a def whose fake does not
    emulate that step: the fake would refuse the scenario, which judges nothing of the def.
    """
    by_format = SCENARIO_EXCLUSIONS.get(scenario, {}).get(stream_format)
    if by_format is not None or emulator is None:
        return by_format
    missing = _unemulated_steps(emulator, scenario)
    if missing:
        kinds = ", ".join(repr(k) for k in missing)
        return f"the {emulator} fake does not emulate scenario step {kinds}"
    return None


@functools.cache
def _unemulated_steps(emulator: str, scenario: str) -> tuple[str, ...]:
    return tuple(unemulated_steps(emulator, scenario))


def live_rule_ids(catalog: Mapping[str, Rule]) -> tuple[str, ...]:
    """The live rules ``--real`` judges: those :func:`harness.live.conform.real_findings`
    reports on (its ``LIVE_RULES``); while :mod:`harness.live` cannot be imported, every
    rule of ``conformance/rules/live.py`` (each then ``not_tested``, with the reason)."""
    import importlib

    try:
        live = importlib.import_module("harness.live.conform")
        return tuple(r for r in getattr(live, "LIVE_RULES", ()) if r in catalog)
    except ImportError:
        pass
    try:
        module = importlib.import_module(LIVE_RULES_MODULE)
    except ImportError:
        return ()
    return tuple(r.id for r in getattr(module, "RULES", ()) if r.id in catalog)


def _rule_applies(rule: Rule, stream_format: str) -> bool:
    return rule.formats == () or "*" in rule.formats or stream_format in rule.formats


@dataclass(frozen=True)
class RunJob:
    """One fake run: a def (by its index in the plan) and a scenario."""

    index: int
    scenario: str
    cancel: bool
    #: The run spends most of its time waiting on a timer, not working: the host's cancel
    #: (:func:`needs_cancel`) or the idle watchdog of a fake that lingers after its answer.
    waits: bool = False

    @classmethod
    def of(cls, index: int, name: str, scenario: Scenario) -> RunJob:
        """The run of scenario ``name`` for def ``index``, its timers read from ``scenario``."""
        cancel = needs_cancel(scenario)
        return cls(index, name, cancel, waits=cancel or scenario.ignore_stdin_close)


@dataclass(frozen=True)
class DefPlan:
    """What :func:`run_conform` does for one def."""

    target: DefTarget
    def_rules: tuple[str, ...]
    run_rules: tuple[str, ...]
    scenarios: tuple[str, ...]
    #: (scenario, why it does not apply to this def).
    left_out: tuple[tuple[str, str], ...]
    live_rules: tuple[str, ...] = ()
    real: bool = False

    @property
    def id(self) -> str:
        return self.target.id

    @property
    def applicable(self) -> tuple[str, ...]:
        """Every rule this def is judged on; one with no outcome is ``not_tested``."""
        rules = [*self.def_rules, *self.run_rules]
        if self.real:
            rules += [*self.live_rules, REAL_RULE]
        if self.run_rules and self.target.emulator is None:
            rules.append(NO_FAKE_RULE)
        return tuple(dict.fromkeys(rules))


@dataclass(frozen=True)
class ConformPlan:
    defs: tuple[DefPlan, ...]
    #: The set the defs are checked in (DEF-REGISTRY-001): built-ins plus file defs.
    siblings: tuple[AgentDef, ...]
    real: bool = False
    #: ``--scenario`` as given (``None``: every scenario), for ``real_findings``.
    scenario_filter: tuple[str, ...] | None = None

    @functools.cached_property
    def jobs(self) -> tuple[RunJob, ...]:
        """Every fake run, scenario-major so the defs progress together (each scenario
        read once: the runs' timers come from it)."""
        parsed = {s: load_scenario(s) for s in {s for p in self.defs for s in p.scenarios}}
        out = [
            RunJob.of(i, s, parsed[s])
            for i, p in enumerate(self.defs)
            if p.target.emulator is not None and p.run_rules
            for s in p.scenarios
        ]
        return tuple(sorted(out, key=lambda j: (j.scenario != "happy", j.scenario, j.index)))

    @property
    def applicable(self) -> dict[str, tuple[str, ...]]:
        return {p.id: p.applicable for p in self.defs}


def plan_conform(
    targets: Sequence[DefTarget],
    *,
    def_checks: Iterable[str],
    run_checks: Iterable[str],
    catalog: Mapping[str, Rule],
    scenarios: Sequence[str],
    scenario_filter: Sequence[str] | None = None,
    rule_filter: Sequence[str] | None = None,
    siblings: Sequence[AgentDef] = (),
    real: bool = False,
    live_rules: Sequence[str] = (),
) -> ConformPlan:
    """The plan (pure): which rules, scenarios and runs each def gets.

    ``def_checks`` / ``run_checks``: the rule ids with a registered check of that level;
    ``scenarios``: every scenario there is; ``scenario_filter`` (``--scenario``) and
    ``rule_filter`` (``--rule``) narrow them. Raises :class:`ConformError` for a duplicate
    def id, an unknown scenario or a rule nothing here can judge.
    """
    _refuse_duplicate_targets(targets)
    chosen = _chosen_scenarios(scenarios, scenario_filter)
    rules = _RuleSets(
        def_ids=sorted(set(def_checks)),
        run_ids=sorted(r for r in set(run_checks) if r in catalog),
        live=sorted(set(live_rules)) if real else [],
        real=real,
    )
    if rule_filter is not None:
        rules = rules.narrowed(rule_filter, catalog)
    return ConformPlan(
        defs=tuple(_def_plan(t, rules, chosen, catalog, rule_filter) for t in targets),
        siblings=tuple(siblings),
        real=real,
        scenario_filter=None if scenario_filter is None else tuple(chosen),
    )


def _refuse_duplicate_targets(targets: Sequence[DefTarget]) -> None:
    """Something to judge, and no def id twice (each id names one row of the verdict)."""
    if not targets:
        raise ConformError("nothing to judge: no def selected")
    seen: dict[str, str] = {}
    for t in targets:
        where = t.source or "built-in"
        if t.id in seen:
            raise ConformError(f"def id {t.id!r} is given twice ({seen[t.id]} and {where})")
        seen[t.id] = where


def _chosen_scenarios(scenarios: Sequence[str], scenario_filter: Sequence[str] | None) -> list[str]:
    """Every scenario, or those ``--scenario`` names (each known, each once, in order)."""
    known = list(scenarios)
    if scenario_filter is None:
        return known
    unknown = [s for s in scenario_filter if s not in known]
    if unknown:
        raise ConformError(f"--scenario: unknown scenario(s) {unknown}; known: {', '.join(known)}")
    return list(dict.fromkeys(scenario_filter))


@dataclass(frozen=True)
class _RuleSets:
    """The rule ids a plan judges, by kind (def-level, run-level, live)."""

    def_ids: list[str]
    run_ids: list[str]
    live: list[str]
    real: bool

    @property
    def judged(self) -> set[str]:
        return {*self.def_ids, *self.run_ids, *self.live, *([REAL_RULE] if self.real else [])}

    def narrowed(self, rule_filter: Sequence[str], catalog: Mapping[str, Rule]) -> _RuleSets:
        """Only the rules ``--rule`` names; each must be known and judged in this run."""
        unknown = [r for r in rule_filter if r not in catalog]
        if unknown:
            raise ConformError(f"--rule: unknown rule id(s) {unknown}; {len(catalog)} known")
        unjudged = [r for r in rule_filter if r not in self.judged]
        if unjudged:
            hint = " (live rules need --real)" if not self.real else ""
            raise ConformError(
                f"--rule: no check judges {unjudged} in this run{hint}; rules with checks: "
                f"{', '.join(sorted(self.judged))}"
            )
        wanted = set(rule_filter)
        return _RuleSets(
            def_ids=[r for r in self.def_ids if r in wanted],
            run_ids=[r for r in self.run_ids if r in wanted],
            live=[r for r in self.live if r in wanted],
            real=self.real,
        )


def _def_plan(
    target: DefTarget,
    rules: _RuleSets,
    chosen: Sequence[str],
    catalog: Mapping[str, Rule],
    rule_filter: Sequence[str] | None,
) -> DefPlan:
    """One def's share of the plan: the scenarios that apply to it (CONFORM-PLAN-001, the
    others left out with the reason) and the live rules of its format."""
    fmt = target.defn.stream_format
    reasons = {s: scenario_exclusion(s, fmt, target.emulator) for s in chosen}
    applies = tuple(s for s in chosen if reasons[s] is None)
    real = rules.real and (rule_filter is None or bool(rules.live) or REAL_RULE in rule_filter)
    return DefPlan(
        target=target,
        def_rules=tuple(rules.def_ids),
        run_rules=tuple(rules.run_ids),
        scenarios=applies if rules.run_ids else (),
        left_out=tuple((s, r) for s, r in reasons.items() if r is not None),
        live_rules=tuple(r for r in rules.live if _rule_applies(catalog[r], fmt)),
        real=real,
    )
