"""``harness conform``: judge defs rule by rule against their fakes (and, asked, real CLIs).

Rules: CONFORM-EXIT-001.
Design: docs/design/conformance.md#conformance.conform
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
import functools
import os
import secrets as _secrets
import shlex
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.baseline import EntryList
from conformance.checks import Finding, all_checks, evaluate_def, not_tested, skipped, to_outcomes
from conformance.checks.loader import load_def_file
from conformance.checks.runs import evaluate_run, observe_run
from conformance.fakes import clean_fake_env, emulator_for
from conformance.forked import Forked, ForkedError, Send
from conformance.rules import Rule, all_rules
from conformance.verdicts import DEFAULT_MAX_RERUNS, Outcome, Status, Verdict, judge, should_rerun
from fake_clis.catalog import all_specs, unemulated_steps
from fake_clis.scenario import load_scenario
from harness.defs.registry import BUILTIN_DEFS
from harness.defs.types import AgentDef, ResumeStyle
from harness.errors import HarnessError
from harness.recording.replay_budget import BudgetVerdict, budget_verdicts
from harness.runner import RunRequest, is_substantive, run_agent_async
from harness.runtime.fakes_install import prepare_fake_home, shim_name, shim_text

if TYPE_CHECKING:
    from fake_clis.scenario import Scenario
    from harness.events import Event

__all__ = [
    "BUILTIN_BASELINE",
    "CANCEL_AFTER_S",
    "NO_FAKE_RULE",
    "REAL_RULE",
    "SCENARIO_EXCLUSIONS",
    "ConformError",
    "ConformPlan",
    "ConformResult",
    "DefPlan",
    "DefTarget",
    "ProgressUpdate",
    "RunJob",
    "builtin_targets",
    "default_jobs",
    "file_targets",
    "live_rule_ids",
    "needs_cancel",
    "plan_conform",
    "resolve_emulator",
    "run_conform",
    "scenario_exclusion",
]

#: CONFORM-REAL-001: with ``--real`` the def's real CLI was judged, or it says why not.
REAL_RULE = "CONFORM-REAL-001"
#: CONFORM-RUN-NOFAKE-001: a def no fake can play is not tested, never passed.
NO_FAKE_RULE = "CONFORM-RUN-NOFAKE-001"
#: Check modules whose def-level checks must not run while anything else does: the argv
#: checks flip ``sys.platform`` for the whole process (conformance/checks/defs.py docs).
SERIAL_CHECK_MODULES: tuple[str, ...] = ("conformance.checks.defs",)
#: Known gaps of the built-in defs, applied when ``harness conform`` runs them without a
#: ``--baseline`` of its own (CONFORM-BASELINE-BUILTIN-001).
BUILTIN_BASELINE = Path(__file__).parent / "baselines" / "builtin.txt"
#: The module whose ``RULES`` are the live rules (``harness conform --real``).
LIVE_RULES_MODULE = "conformance.rules.live"

#: A scenario whose fake never finishes on its own (a ``hang`` step, or a stall longer
#: than this) is cancelled by the host once the run has said something, or after
#: :data:`CANCEL_AFTER_S` -- what RUN-CANCEL-001 judges (ref §10.1 rule 1).
STALL_CANCEL_MS = 1_000
CANCEL_AFTER_S = 2.0
#: The runner's timeouts for a fake run: a fake answers at once, so these only stop a
#: broken def from holding the whole run (the runner's default is 10 minutes, ref §10.1).
FIRST_OUTPUT_TIMEOUT_MS = 30_000
INACTIVITY_TIMEOUT_MS = 30_000
#: The inactivity timeout of a run whose scenario lingers after its answer
#: (``ignore_stdin_close``): a text-stdin CLI has no completion signal, so the watchdog
#: is what ends that run (RUN-TIMEOUT-IDLE-001) and 30 s of it held a job slot each --
#: half of the wall time of conform over all defs. The fake answers in one burst, so 5 s
#: of silence is already unambiguous, also on a loaded machine.
LINGER_INACTIVITY_TIMEOUT_MS = 5_000
#: Lanes for runs that wait on a timer (the host's cancel, a lingering fake's idle
#: watchdog), per job: such a run holds its lane for 2-5 s with its fake asleep, and the
#: 82 of conform over all defs held a shared lane for ~270 s in all, most of the wall time
#: of 16 lanes. In lanes of their own they no longer keep working runs from the CPU.
WAITING_LANES_PER_JOB = 2
#: Bytes of each direction kept for a run's transcript (the evidence is bounded again).
MAX_WIRE_BYTES = 8 * 1024 * 1024
#: Threads removing finished runs' directories. Removing a directory is a wait on the
#: file system's journal, not CPU, and concurrent removals share one commit: on an ext4
#: disk mounted with ``discard``, 900 directories took 2.9 s on one thread, 0.2 s on four.
SWEEP_THREADS = 4
#: Env var carrying a made-up secret into every fake run, so RUN-SECRET-001 is exercised.
SECRET_ENV = "HARNESS_CONFORM_API_KEY"
#: The prompt every fake run gets (fakes follow their scenario, not the prompt).
PROMPT = "Create hello.html with a greeting."

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


def default_jobs() -> int:
    """Concurrent fake runs: fakes mostly wait (on pipes, on their scenario's sleeps and
    the host's cancel timer), so eight per core, at most 32. Measured on 2 cores: 4 jobs
    kept the CPU at ~50 % and took twice the wall time 16 jobs took."""
    return max(2, min(32, (os.cpu_count() or 1) * 8))


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


class _Tracker:
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


# ---------------------------------------------------------------------------- running


@dataclass(frozen=True)
class ConformResult:
    plan: ConformPlan
    verdict: Verdict
    outcomes: tuple[Outcome, ...]
    #: Fake runs made (re-runs included).
    runs: int
    duration_s: float
    finished_at: _dt.datetime


class _Tap:
    """A WireTap keeping what crossed stdin and stdout (bounded), for the transcript."""

    def __init__(self) -> None:
        self.wire: dict[str, bytearray] = {"stdin": bytearray(), "stdout": bytearray()}
        #: The def as spawned (through its transport) and the argv it spawned, unredacted:
        #: the prompt-budget guards judge them per platform (CONFORM-BUDGET-*).
        self.defn: AgentDef | None = None
        self.argv: tuple[str, ...] = ()

    def spawned(
        self,
        defn: AgentDef,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        secrets: Sequence[str] = (),
    ) -> None:
        self.defn = defn
        self.argv = tuple(argv)

    def budget(self) -> tuple[BudgetVerdict, ...]:
        """Each platform's verdict on what was spawned (none when nothing was)."""
        if self.defn is None:
            return ()
        return tuple(budget_verdicts(self.defn, self.argv))

    def data(self, direction: str, data: bytes, t_ms: float) -> None:
        buf = self.wire.get(direction)
        if buf is not None and len(buf) < MAX_WIRE_BYTES:
            buf += data[: MAX_WIRE_BYTES - len(buf)]

    def exited(self, code: int | None, signal: int | None, duration_ms: float) -> None:
        return None

    def lines(self, direction: str) -> tuple[str, ...]:
        text = bytes(self.wire[direction]).decode("utf-8", "replace")
        return tuple(text.splitlines(keepends=True))


def _install_shims(target: DefTarget, bin_dir: Path) -> Path:
    """Shims named like the def's ``bin`` and fallbacks, running its emulator."""
    assert target.emulator is not None
    bin_dir.mkdir(parents=True, exist_ok=True)
    text = shim_text(target.emulator, sys.executable, sys.platform)
    for name in dict.fromkeys((target.defn.bin, *target.defn.fallback_bins)):
        shim = bin_dir / shim_name(name, sys.platform)
        shim.write_text(text, encoding="utf-8", newline="")
        if sys.platform != "win32":
            shim.chmod(0o755)
    return bin_dir / shim_name(target.defn.bin, sys.platform)


def _not_tested_all(
    def_id: str, rules: Iterable[str], why: str, scenario: str | None
) -> list[Outcome]:
    return to_outcomes(def_id, {r: not_tested(why) for r in rules}, scenario=scenario)


class _Sweeper:
    """Removes each finished run's directories in the background, while other runs go on.

    Left to the end, the ~1,600 run directories of conform over every def were removed
    one by one after the last verdict: 11-16 s of wall time with both cores idle.
    """

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(SWEEP_THREADS, thread_name_prefix="conform-sweep")

    def discard(self, path: Path) -> None:
        self._pool.submit(shutil.rmtree, path, ignore_errors=True)

    def close(self) -> None:
        """Wait until everything handed over is removed."""
        self._pool.shutdown(wait=True)


class _Runner:
    def __init__(
        self,
        plan: ConformPlan,
        root: Path,
        tracker: _Tracker,
        base_env: Mapping[str, str],
    ) -> None:
        self.plan = plan
        self.root = root
        self.tracker = tracker
        self.base_env = base_env
        #: Removes each judged run's directories; :meth:`close` waits for it.
        self.sweeper = _Sweeper()
        self.secret = "sk-conform-" + _secrets.token_hex(16)
        self.runs = 0
        self._shims: dict[tuple[int, bool], Path] = {}
        self._counter = 0

    def _shim(self, index: int, old: bool = False) -> Path:
        """The def's fake; an old build (``old_version`` scenario) is another executable,
        as it is on a user's disk, so the help probe kept per executable finds what that
        build has (FIDELITY-CAPS-001): conform judges both generations."""
        key = (index, old)
        if key not in self._shims:
            target = self.plan.defs[index].target
            where = self.root / f"d{index}" / ("bin-old" if old else "bin")
            self._shims[key] = _install_shims(target, where)
        return self._shims[key]

    def _request(self, index: int, scenario: str, parsed: Scenario | None = None) -> RunRequest:
        """The fake run of ``scenario`` for def ``index`` (``parsed``: the scenario, when the
        caller has it loaded already)."""
        target = self.plan.defs[index].target
        parsed = parsed or load_scenario(scenario)
        shim = self._shim(index, old=parsed.old_version)
        self._counter += 1
        run_dir = self.root / f"d{index}" / f"{scenario}-{self._counter}"
        cwd, home = run_dir / "cwd", run_dir / "home"
        cwd.mkdir(parents=True)
        home.mkdir()
        prepare_fake_home(home)
        env = clean_fake_env(self.base_env, target.defn, shim.parent, home)
        env["FAKE_CLI_SCENARIO"] = scenario
        specify = target.defn.resume_style is ResumeStyle.SPECIFY
        lingers = parsed.ignore_stdin_close
        idle_ms = LINGER_INACTIVITY_TIMEOUT_MS if lingers else INACTIVITY_TIMEOUT_MS
        return RunRequest(
            defn=target.defn,
            prompt=PROMPT,
            cwd=str(cwd),
            home=str(home),
            env=env,
            env_overlay={SECRET_ENV: self.secret},
            bin_override=str(shim),
            new_session_id=str(uuid.uuid4()) if specify else None,
            first_output_timeout_ms=FIRST_OUTPUT_TIMEOUT_MS,
            inactivity_timeout_ms=idle_ms,
        )

    async def run_one(self, job: RunJob, rule_ids: Sequence[str] | None = None) -> list[Outcome]:
        """One fake run, judged by the def's run-level rules (or ``rule_ids``)."""
        plan = self.plan.defs[job.index]
        rules = list(plan.run_rules if rule_ids is None else rule_ids)
        repro = plan.target.repro(job.scenario)
        self.runs += 1
        request: RunRequest | None = None
        try:
            scenario = load_scenario(job.scenario)
            request = self._request(job.index, job.scenario, scenario)
            tap = _Tap()
            cancel = asyncio.Event()
            on_event: Callable[[Event], None] | None = None
            timer: asyncio.TimerHandle | None = None
            if job.cancel:
                # ref §10.1 rule 1 (RUN-CANCEL-001): cancel once the CLI said something.
                def on_event(event: Event) -> None:
                    if is_substantive(event):
                        cancel.set()

                timer = asyncio.get_running_loop().call_later(CANCEL_AFTER_S, cancel.set)
            try:
                result = await run_agent_async(request, on_event=on_event, cancel=cancel, tap=tap)
            finally:
                if timer is not None:
                    timer.cancel()
            obs = observe_run(
                result,
                request=request,
                scenario=scenario,
                frames_out=tap.lines("stdout"),
                frames_in=tap.lines("stdin"),
                repro_command=repro,
            )
            obs = dataclasses.replace(obs, budget=tap.budget())
            findings = evaluate_run(obs, rule_ids=rules)
        except Exception as exc:  # the run itself could not be made: not tested, never pass
            why = f"the fake run could not be made: {type(exc).__name__}: {exc}"
            return _not_tested_all(plan.id, rules, why, job.scenario)
        finally:
            if request is not None:  # judged: its cwd and home are no longer needed
                self.sweeper.discard(Path(request.cwd).parent)
        return [
            dataclasses.replace(o, duration_ms=result.duration_ms)
            for o in to_outcomes(plan.id, findings, scenario=job.scenario)
        ]

    async def run_all(self, jobs: Sequence[RunJob], concurrency: int) -> list[Outcome]:
        """Every job: ``concurrency`` working runs at a time and, in a lane of their own,
        up to :data:`WAITING_LANES_PER_JOB` times as many runs that wait on a timer."""
        working = asyncio.Semaphore(max(1, concurrency))
        waiting = asyncio.Semaphore(max(1, concurrency) * WAITING_LANES_PER_JOB)
        out: list[Outcome] = []

        async def guarded(job: RunJob) -> None:
            async with waiting if job.waits else working:
                outcomes = await self.run_one(job)
            out.extend(outcomes)
            self.tracker.run_done(self.plan.defs[job.index].id, job.scenario, outcomes)

        await asyncio.gather(*(guarded(j) for j in jobs))
        return out


class _RunsInCopy:
    """Phase 2, split: half of the fake runs made by a forked copy of this process.

    One event loop starts and follows every run; with 48 runs in flight it was busy
    most of the time (starting processes, reading pipes, judging), so conform over all
    defs kept ~1 of 2 cores busy. A copy (:class:`~conformance.forked.Forked`) with an
    event loop of its own makes every second run, in its own directory (``root``), with
    half of the lanes; each judged run comes back as it finishes, for the progress view.
    Only worth it, and only tried, when there are more runs than lanes.
    """

    def __init__(
        self, plan: ConformPlan, root: Path, env: Mapping[str, str], concurrency: int
    ) -> None:
        self.plan = plan
        every = plan.jobs
        split = len(every) > concurrency > 1
        self.here: tuple[RunJob, ...] = every[0::2] if split else every
        self.there: tuple[RunJob, ...] = every[1::2] if split else ()
        self.lanes_here = concurrency - concurrency // 2 if split else concurrency
        #: Runs the copy made (its re-runs included).
        self.runs = 0
        self._copy: Forked[tuple[list[Outcome], int]] | None = None
        if self.there:
            lanes = concurrency // 2
            self._copy = Forked.start(lambda send: self._run(root, env, lanes, send))
            if self._copy is None:  # no copy: every run is made here
                self.here, self.there, self.lanes_here = every, (), concurrency

    def _run(
        self, root: Path, env: Mapping[str, str], lanes: int, send: Send
    ) -> tuple[list[Outcome], int]:
        """In the copy: make its runs; each judged run goes back at once."""
        root.mkdir()
        runner = _Runner(self.plan, root, _Relay(self.plan, send), env)
        try:
            out = asyncio.run(runner.run_all(self.there, lanes))
        finally:
            runner.sweeper.close()
        return out, runner.runs

    def collect(self, tracker: _Tracker) -> list[Outcome] | None:
        """Wait for the copy (in a worker thread), reporting its runs as they finish: all
        its outcomes, or ``None`` when it gave no result (its runs are then made here)."""
        if self._copy is None:
            return []
        try:
            outcomes, self.runs = self._copy.result(lambda item: tracker.run_done(*item))
        except ForkedError:
            return None
        return outcomes


class _Relay(_Tracker):
    """A copy's tracker: each finished run is sent to the parent's tracker."""

    def __init__(self, plan: ConformPlan, send: Send) -> None:
        super().__init__(plan, None)
        self._send = send

    def run_done(self, def_id: str, scenario: str, outcomes: Sequence[Outcome]) -> None:
        self._send((def_id, scenario, list(outcomes)))


class _ArgvChecks:
    """Phase 1a: the def-level checks of :data:`SERIAL_CHECK_MODULES`, which change
    process-wide state (``sys.platform``, env and audit traps) while they run, so nothing
    may run beside them in the same process.

    They run in a forked copy of this process (:class:`~conformance.forked.Forked`), on
    the second core while this one starts the fakes: 1-2 s of conform over all defs in
    which one core had waited. Where no copy can be made they run here at once, before
    anything else starts; when the copy gives no result, here after everything else.
    """

    def __init__(self, plan: ConformPlan, tracker: _Tracker, rules: Sequence[Sequence[str]]):
        self.plan = plan
        self.tracker = tracker
        self.rules = rules
        self._by_def: list[list[Outcome]] | None = None
        self._copy = Forked.start(lambda _send: self._judge_silently()) if any(rules) else None
        if self._copy is None:
            self._by_def = self._judge(tracker)
        else:
            tracker.checking.update(p.id for p, r in zip(plan.defs, rules, strict=True) if r)

    def _judge(self, tracker: _Tracker) -> list[list[Outcome]]:
        return [_def_outcomes(self.plan, i, tracker, r) for i, r in enumerate(self.rules)]

    def _judge_silently(self) -> list[list[Outcome]]:
        """In the copy: its progress is reported by :meth:`collect`, here."""
        return self._judge(_Tracker(self.plan, None))

    def collect(self) -> None:
        """Wait for the copy (in a worker thread) and report its outcomes' progress."""
        if self._copy is None:
            return
        try:
            by_def = self._copy.result()
        except ForkedError:
            return  # judged here by outcomes(), once nothing else runs
        self._by_def = by_def
        self._report(by_def)

    def _report(self, by_def: Sequence[Sequence[Outcome]]) -> None:
        for p, rules, found in zip(self.plan.defs, self.rules, by_def, strict=True):
            for outcome in found:
                self.tracker.note(p.id, outcome.rule_id, [outcome])
            if rules:
                self.tracker.checks_done(p.id)

    def outcomes(self, index: int) -> list[Outcome]:
        """Def ``index``'s outcomes; call once the fake runs and :meth:`collect` are done."""
        if self._by_def is None:
            self._by_def = self._judge(self.tracker)
            for p, rules in zip(self.plan.defs, self.rules, strict=True):
                if rules:
                    self.tracker.checks_done(p.id)
        return self._by_def[index]


def _def_outcomes(
    plan: ConformPlan, index: int, tracker: _Tracker, rule_ids: Sequence[str] | None = None
) -> list[Outcome]:
    """Every def-level check of one def, one rule at a time (the progress names each)."""
    p = plan.defs[index]
    out: list[Outcome] = []
    for rule in p.def_rules if rule_ids is None else rule_ids:
        tracker.note(p.id, rule)
        started = time.monotonic()
        findings = evaluate_def(
            p.target.defn, siblings=plan.siblings, source=p.target.source, rule_ids=[rule]
        )
        ms = (time.monotonic() - started) * 1000.0
        outcomes = [dataclasses.replace(o, duration_ms=ms) for o in to_outcomes(p.id, findings)]
        tracker.note(p.id, rule, outcomes)
        out += outcomes
    return out


def _checked_def(
    plan: ConformPlan, index: int, tracker: _Tracker, rule_ids: Sequence[str]
) -> list[Outcome]:
    """:func:`_def_outcomes`, then the def's checks are done (for its progress)."""
    try:
        return _def_outcomes(plan, index, tracker, rule_ids)
    finally:
        tracker.checks_done(plan.defs[index].id)


def _split_def_rules(plan: ConformPlan) -> tuple[list[list[str]], list[list[str]]]:
    """Per def: the def rules whose checks live in :data:`SERIAL_CHECK_MODULES` (or have no
    registered check) and the rest, which may run concurrently with other defs'."""
    checks = all_checks("def")
    serial: list[list[str]] = []
    parallel: list[list[str]] = []
    for p in plan.defs:
        one = [r for r in p.def_rules if r not in checks or _serial(checks[r].func)]
        serial.append(one)
        parallel.append([r for r in p.def_rules if r not in one])
    return serial, parallel


def _serial(func: Callable[..., Any]) -> bool:
    return func.__module__ in SERIAL_CHECK_MODULES


def _structural_outcomes(p: DefPlan) -> list[Outcome]:
    """Outcomes that need no run: no fake at all, or no scenario that applies."""
    if not p.run_rules:
        return []
    if p.target.emulator is None:
        why = f"no fake CLI can play this def: {p.target.no_fake_reason}"
        out = _not_tested_all(p.id, p.run_rules, why, None)
        # CONFORM-RUN-NOFAKE-001: said once more as its own cell, with the reason.
        return out + _not_tested_all(p.id, [NO_FAKE_RULE], why, None)
    if not p.scenarios:
        left = "; ".join(f"{s}: {why}" for s, why in p.left_out) or "none selected"
        why = f"no selected scenario applies to this def ({left})"
        return to_outcomes(p.id, {r: skipped(why) for r in p.run_rules})
    return []


RealFindings = Callable[..., "list[tuple[str, str, Finding]]"]


def _real_outcomes(
    plan: ConformPlan,
    p: DefPlan,
    catalog: Mapping[str, Rule],
    *,
    cache_dir: str | None,
    record_dir: str | None,
    tracker: _Tracker,
) -> list[Outcome]:
    """``--real``: the live findings of one def from :mod:`harness.live` (imported here).

    A missing module makes every live rule and CONFORM-REAL-001 ``not_tested``; a crash
    of ``real_findings`` or a finding naming an unknown rule makes CONFORM-REAL-001
    ``not_tested``; no finding at all is ``not_tested`` too (never a silent pass).
    """
    rules = [*p.live_rules, REAL_RULE]
    tracker.note(p.id, "real CLI")
    try:
        # only --real loads live mode (the model server, aiohttp), and a missing one is reported
        from harness.live.conform import real_findings
    except ImportError as exc:
        why = f"--real: harness.live is not available ({type(exc).__name__}: {exc})"
        return _not_tested_all(p.id, rules, why, "real")

    def progress(*args: Any, **kwargs: Any) -> None:
        words = [str(a) for a in args] + [f"{k}={v}" for k, v in kwargs.items()]
        tracker.note(p.id, "real: " + " ".join(words))

    try:
        found = real_findings(
            p.target.defn,
            scenarios=None if plan.scenario_filter is None else list(plan.scenario_filter),
            cache_dir=cache_dir,
            record_dir=record_dir,
            on_progress=progress,
        )
    except Exception as exc:
        why = f"--real: real_findings raised {type(exc).__name__}: {exc}"
        return _not_tested_all(p.id, [REAL_RULE], why, "real")
    out: list[Outcome] = []
    problems: list[str] = []
    for item in found:
        try:
            rule_id, scenario, finding = item
        except (TypeError, ValueError):
            problems.append(f"not a (rule, scenario, finding) triple: {item!r}")
            continue
        if rule_id not in catalog or not isinstance(finding, Finding):
            problems.append(f"finding for unknown rule {rule_id!r} or not a Finding")
            continue
        label = f"real:{scenario}"
        out += to_outcomes(p.id, {rule_id: finding}, scenario=label)
    if problems:
        why = "--real: real_findings returned " + "; ".join(problems[:3])
        out += _not_tested_all(p.id, [REAL_RULE], why, "real")
    elif not out:
        out += _not_tested_all(p.id, [REAL_RULE], "--real: real_findings found nothing", "real")
    else:
        judged = [o for o in out if o.status is not Status.SKIPPED]
        if judged:
            summary = f"{len(judged)} live finding(s) on the real CLI"
            out += to_outcomes(p.id, {REAL_RULE: Finding(Status.PASS, summary)}, scenario="real")
        else:
            # every live finding says the real CLI could not run here: so does this one.
            finding = Finding(Status.SKIPPED, out[0].reason)
            out += to_outcomes(p.id, {REAL_RULE: finding}, scenario="real")
    return out


async def _flaky_reruns(
    runner: _Runner,
    outcomes: list[Outcome],
    *,
    flaky: EntryList,
    max_reruns: int,
) -> list[Outcome]:
    """CONFORM-FLAKY-001: re-run each failed flaky-listed check solo until it passes or
    the re-runs are used up (MCP python-sdk's solo re-verification, wire §B.2)."""
    plan, tracker = runner.plan, runner.tracker
    index = {p.id: i for i, p in enumerate(plan.defs)}
    extra: list[Outcome] = []
    failed = [o for o in outcomes if o.status is Status.FAIL and flaky.lists(o.def_id, o.rule_id)]
    for first in failed:
        attempts = [first.status]
        i = index[first.def_id]
        while should_rerun(attempts, flaky_listed=True, max_reruns=max_reruns):
            number = len(attempts) + 1
            if first.scenario is None:
                got = await asyncio.to_thread(_def_outcomes, plan, i, tracker, [first.rule_id])
            else:
                job = RunJob.of(i, first.scenario, load_scenario(first.scenario))
                got = await runner.run_one(job, [first.rule_id])
            again = [dataclasses.replace(o, attempt=number) for o in got]
            extra += again
            attempts.append(again[0].status if again else Status.NOT_TESTED)
    return extra


def run_conform(
    plan: ConformPlan,
    *,
    jobs: int | None = None,
    baseline: EntryList | None = None,
    flaky: EntryList | None = None,
    on_progress: OnProgress | None = None,
    catalog: Mapping[str, Rule] | None = None,
    cache_dir: str | None = None,
    record_dir: str | None = None,
    max_reruns: int = DEFAULT_MAX_RERUNS,
    base_env: Mapping[str, str] | None = None,
    work_dir: str | None = None,
) -> ConformResult:
    """Execute ``plan`` and judge it (see the module docs for the order of the phases)."""
    rules = all_rules() if catalog is None else catalog
    started = time.monotonic()
    tracker = _Tracker(plan, on_progress, baseline)
    outcomes: list[Outcome] = []
    serial, parallel = _split_def_rules(plan)
    concurrency = jobs or default_jobs()
    env = os.environ if base_env is None else base_env
    with (
        ThreadPoolExecutor(max_workers=concurrency) as pool,
        tempfile.TemporaryDirectory(prefix="harness-conform-", dir=work_dir) as tmp,
    ):
        # The forked copies first, while this process has one thread: half of phase 2
        # (_RunsInCopy), and phase 1a, the argv checks (_ArgvChecks: or here and now).
        runs = _RunsInCopy(plan, Path(tmp) / "copy", env, concurrency)
        argv = _ArgvChecks(plan, tracker, serial)
        runs_collected = pool.submit(runs.collect, tracker)
        argv_collected = pool.submit(argv.collect)
        # Phase 1b: every other def-level check (e.g. ones that run the def's fake), one
        # worker per def; a def's own checks stay in order (they may share a cache). They
        # run while phase 2 does: both mostly wait on fake processes, and nothing in
        # either flips process-wide state (only phase 1a does, never beside them here).
        tracker.checking.update(plan.defs[i].id for i in range(len(plan.defs)) if parallel[i])
        futures = [
            pool.submit(_checked_def, plan, i, tracker, parallel[i])
            for i in range(len(plan.defs))
            if parallel[i]
        ]
        runner = _Runner(plan, Path(tmp), tracker, env)

        async def fakes() -> list[Outcome]:
            out = await runner.run_all(runs.here, runs.lanes_here)
            there = await asyncio.wrap_future(runs_collected)
            # the copy's runs, or, when it gave no result, those runs made here now
            out += there if there is not None else await runner.run_all(runs.there, concurrency)
            if flaky is not None and len(flaky):
                out += await _flaky_reruns(runner, out, flaky=flaky, max_reruns=max_reruns)
            return out

        # Phase 2: every (def, scenario) on the fakes, concurrently; flaky re-runs solo.
        try:
            ran = asyncio.run(fakes())
        finally:
            runner.sweeper.close()
        argv_collected.result()
        for i, p in enumerate(plan.defs):
            outcomes += argv.outcomes(i)
            outcomes += _structural_outcomes(p)
        for future in futures:
            outcomes += future.result()
        outcomes += ran
    # Phase 3: --real, one def at a time (real CLIs are heavy).
    for p in plan.defs:
        if p.real:
            outcomes += _real_outcomes(
                plan, p, rules, cache_dir=cache_dir, record_dir=record_dir, tracker=tracker
            )
        tracker.note(p.id, "done")
    verdict = judge(
        outcomes,
        rules=rules,
        applicable=plan.applicable,
        baseline=baseline,
        flaky=flaky,
        known_defs=[d.id for d in plan.siblings],
    )
    return ConformResult(
        plan=plan,
        verdict=verdict,
        outcomes=tuple(outcomes),
        runs=runner.runs + runs.runs,
        duration_s=time.monotonic() - started,
        finished_at=_dt.datetime.now(_dt.timezone.utc),
    )
