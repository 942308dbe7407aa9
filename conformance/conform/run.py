"""``harness conform``: judge defs rule by rule against their fakes (and, asked, real CLIs).

Executes a plan (:mod:`conformance.conform.plan`): def checks, fake runs
(:mod:`conformance.conform.fake_runs`), ``--real``, flaky re-runs; then the verdict.
Rules: CONFORM-EXIT-001.
Design: docs/design/conformance.md#conformance.conform
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.baseline import EntryList
from conformance.checks import Finding, all_checks, evaluate_def, skipped, to_outcomes
from conformance.conform.fake_runs import Runner, RunsInCopy, default_jobs, not_tested_all
from conformance.conform.plan import NO_FAKE_RULE, REAL_RULE, ConformPlan, DefPlan, RunJob
from conformance.conform.progress import OnProgress, Tracker
from conformance.forked import Forked, ForkedError
from conformance.rules import Rule, all_rules
from conformance.verdicts import DEFAULT_MAX_RERUNS, Outcome, Status, Verdict, judge, should_rerun
from fake_clis.scenario import load_scenario

__all__ = ["ConformResult", "run_conform"]

#: Check modules whose def-level checks must not run while anything else does: the argv
#: checks flip ``sys.platform`` for the whole process (conformance/checks/defs.py docs).
SERIAL_CHECK_MODULES: tuple[str, ...] = ("conformance.checks.defs",)


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


class _ArgvChecks:
    """Phase 1a: the def-level checks of :data:`SERIAL_CHECK_MODULES`, which change
    process-wide state (``sys.platform``, env and audit traps) while they run, so nothing
    may run beside them in the same process.

    They run in a forked copy of this process (:class:`~conformance.forked.Forked`), on
    the second core while this one starts the fakes: 1-2 s of conform over all defs in
    which one core had waited. Where no copy can be made they run here at once, before
    anything else starts; when the copy gives no result, here after everything else.
    """

    def __init__(self, plan: ConformPlan, tracker: Tracker, rules: Sequence[Sequence[str]]):
        self.plan = plan
        self.tracker = tracker
        self.rules = rules
        self._by_def: list[list[Outcome]] | None = None
        self._copy = Forked.start(lambda _send: self._judge_silently()) if any(rules) else None
        if self._copy is None:
            self._by_def = self._judge(tracker)
        else:
            tracker.checking.update(p.id for p, r in zip(plan.defs, rules, strict=True) if r)

    def _judge(self, tracker: Tracker) -> list[list[Outcome]]:
        return [_def_outcomes(self.plan, i, tracker, r) for i, r in enumerate(self.rules)]

    def _judge_silently(self) -> list[list[Outcome]]:
        """In the copy: its progress is reported by :meth:`collect`, here."""
        return self._judge(Tracker(self.plan, None))

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
    plan: ConformPlan, index: int, tracker: Tracker, rule_ids: Sequence[str] | None = None
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
    plan: ConformPlan, index: int, tracker: Tracker, rule_ids: Sequence[str]
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
        out = not_tested_all(p.id, p.run_rules, why, None)
        # CONFORM-RUN-NOFAKE-001: said once more as its own cell, with the reason.
        return out + not_tested_all(p.id, [NO_FAKE_RULE], why, None)
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
    tracker: Tracker,
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
        return not_tested_all(p.id, rules, why, "real")

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
        return not_tested_all(p.id, [REAL_RULE], why, "real")
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
        out += not_tested_all(p.id, [REAL_RULE], why, "real")
    elif not out:
        out += not_tested_all(p.id, [REAL_RULE], "--real: real_findings found nothing", "real")
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
    runner: Runner,
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
    tracker = Tracker(plan, on_progress, baseline)
    outcomes: list[Outcome] = []
    serial, parallel = _split_def_rules(plan)
    concurrency = jobs or default_jobs()
    env = os.environ if base_env is None else base_env
    with (
        ThreadPoolExecutor(max_workers=concurrency) as pool,
        tempfile.TemporaryDirectory(prefix="harness-conform-", dir=work_dir) as tmp,
    ):
        # The forked copies first, while this process has one thread: half of phase 2
        # (RunsInCopy), and phase 1a, the argv checks (_ArgvChecks: or here and now).
        runs = RunsInCopy(plan, Path(tmp) / "copy", env, concurrency)
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
        runner = Runner(plan, Path(tmp), tracker, env)

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
