"""``harness conform``'s fake runs: each (def, scenario) through the real runner, judged.

Runs go concurrently in lanes, half of them in a forked copy of the process when there
are more runs than lanes; a judged run's directories are removed in the background.
Design: docs/design/conformance.md#conformance.conform
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import secrets as _secrets
import shutil
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.checks import not_tested, to_outcomes
from conformance.checks.runs import evaluate_run, observe_run
from conformance.conform.plan import ConformPlan, DefTarget, RunJob
from conformance.conform.progress import Relay, Tracker
from conformance.fakes import clean_fake_env
from conformance.forked import Forked, ForkedError, Send
from conformance.verdicts import Outcome
from fake_clis.scenario import load_scenario
from harness.defs.types import AgentDef, ResumeStyle
from harness.recording.replay_budget import BudgetVerdict, budget_verdicts
from harness.runner import RunRequest, is_substantive, run_agent_async
from harness.runtime.fakes_install import prepare_fake_home, shim_name, shim_text

if TYPE_CHECKING:
    from fake_clis.scenario import Scenario
    from harness.events import Event

__all__ = [
    "CANCEL_AFTER_S",
    "INACTIVITY_TIMEOUT_MS",
    "LINGER_INACTIVITY_TIMEOUT_MS",
    "WAITING_LANES_PER_JOB",
    "Runner",
    "RunsInCopy",
    "default_jobs",
    "not_tested_all",
]

#: A scenario the fake never finishes by itself (:func:`~conformance.conform.plan.needs_cancel`)
#: is cancelled by the host once the run has said something, or after this many
#: seconds -- what RUN-CANCEL-001 judges (ref §10.1 rule 1).
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


def not_tested_all(
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


class Runner:
    def __init__(
        self,
        plan: ConformPlan,
        root: Path,
        tracker: Tracker,
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
            return not_tested_all(plan.id, rules, why, job.scenario)
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


class RunsInCopy:
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
        runner = Runner(self.plan, root, Relay(self.plan, send), env)
        try:
            out = asyncio.run(runner.run_all(self.there, lanes))
        finally:
            runner.sweeper.close()
        return out, runner.runs

    def collect(self, tracker: Tracker) -> list[Outcome] | None:
        """Wait for the copy (in a worker thread), reporting its runs as they finish: all
        its outcomes, or ``None`` when it gave no result (its runs are then made here)."""
        if self._copy is None:
            return []
        try:
            outcomes, self.runs = self._copy.result(lambda item: tracker.run_done(*item))
        except ForkedError:
            return None
        return outcomes


def default_jobs() -> int:
    """Concurrent fake runs: fakes mostly wait (on pipes, on their scenario's sleeps and
    the host's cancel timer), so eight per core, at most 32. Measured on 2 cores: 4 jobs
    kept the CPU at ~50 % and took twice the wall time 16 jobs took."""
    return max(2, min(32, (os.cpu_count() or 1) * 8))
