"""``harness conform``: judge defs rule by rule against their fakes; reports and an exit code.

``harness conform [--def PATH.py ...] [--agent ID ...] [--real] [--baseline FILE]
[--flaky FILE] [--report json|junit|html|terminal ...] [--out DIR] [--jobs N]
[--rule ID ...] [--scenario NAME ...]``

Rules: CONFORM-EXIT-001, DEFCHECK-LOAD-001.
Design: docs/design/cli.md#harness.commands.conform
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from conformance.baseline import load_baseline, load_flaky
from conformance.checks import all_checks
from conformance.conform.fake_runs import default_jobs
from conformance.conform.plan import (
    BUILTIN_BASELINE,
    DefTarget,
    builtin_targets,
    file_targets,
    live_rule_ids,
    plan_conform,
)
from conformance.conform.progress import ProgressUpdate
from conformance.conform.run import ConformResult, run_conform
from conformance.reports import ReportMeta, html, json_report, junit, terminal
from conformance.rules import all_rules
from fake_clis.scenario import list_scenarios
from harness import __version__
from harness.commands.common import load_defs
from harness.errors import BadInputError, HarnessError
from harness.guards.budget_generations import BudgetGeneration

if TYPE_CHECKING:
    from conformance.baseline import EntryList
    from conformance.conform.plan import ConformPlan
    from conformance.rules import Rule
    from conformance.verdicts import Verdict
    from harness.defs.types import AgentDef

__all__ = [
    "DEFAULT_OUT",
    "REPORT_FILES",
    "REPORT_KINDS",
    "LineProgress",
    "TtyProgress",
    "check_out_dir",
    "cmd_conform",
    "report_kinds",
]

REPORT_KINDS: tuple[str, ...] = ("json", "junit", "html", "terminal")
#: File name per file report kind (the terminal table goes to stdout).
REPORT_FILES: dict[str, str] = {
    "json": "conform.json",
    "junit": "conform.junit.xml",
    "html": "conform.html",
}
DEFAULT_OUT = "conform-report"
#: Seconds between two redraws of the TTY progress block.
_REDRAW_S = 0.1


def report_kinds(values: Sequence[str] | None) -> list[str]:
    """``--report`` values (repeatable, or comma-separated) in order; none given: all four."""
    if not values:
        return list(REPORT_KINDS)
    kinds: list[str] = []
    for value in values:
        for kind in (k.strip() for k in value.split(",")):
            if kind not in REPORT_KINDS:
                raise HarnessError(
                    f"--report: unknown kind {kind!r}; known: {', '.join(REPORT_KINDS)}",
                    rule="CONFORM-CLI-001",
                )
            if kind not in kinds:
                kinds.append(kind)
    return kinds


def check_out_dir(out_dir: Path) -> None:
    """Refuse a ``--out`` that names, or lies below, something other than a directory.

    Checked before anything runs, so a long conform never ends in a traceback at ``mkdir``
    (CLIERR-OUTDIR-001).
    """
    for where in (out_dir, *out_dir.parents):
        if where.exists() or where.is_symlink():
            if not where.is_dir():
                problem = (
                    "is not a directory"
                    if where == out_dir
                    else f"cannot be created: {where} is not a directory"
                )
                raise BadInputError(
                    f"--out {out_dir}",
                    f"{problem}; name a directory for the reports",
                    rule="CLIERR-OUTDIR-001",
                )
            return


def failed_words(update: ProgressUpdate) -> str:
    """``", 4 rule(s) failed, 1 expected"``: counted as the verdict table counts them."""
    words = f", {update.failures} rule(s) failed" if update.failures else ""
    return words + (f", {update.expected} expected" if update.expected else "")


class LineProgress:
    """Plain progress for a pipe or a CI log (CONFORM-PROGRESS-001): a line per finished
    def and per real run step, and, when ``every_s`` passed without a line, one with the
    runs done so far (fake runs are scenario-major: defs finish late and together)."""

    def __init__(
        self,
        stream: TextIO,
        *,
        every_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.every_s = every_s
        self.clock = clock
        self.runs = 0
        self.total_runs = 0
        self.defs = 0
        self.finished = 0
        self.last = clock()

    def start(self, plan: ConformPlan, jobs: int) -> None:
        self.total_runs = len(plan.jobs)
        self.defs = len(plan.defs)
        self._line(f"{self.defs} def(s), {self.total_runs} fake run(s), {jobs} at a time")

    def __call__(self, update: ProgressUpdate) -> None:
        if update.current.startswith("scenario"):
            self.runs += 1
        if update.finished:
            self.finished += 1
            self._line(
                f"{update.def_id}: {update.done}/{update.total} runs done{failed_words(update)}"
            )
        elif update.current.startswith("real"):
            self._line(f"{update.def_id}: {update.current}")
        elif self.clock() - self.last >= self.every_s:
            self._line(
                f"{self.runs}/{self.total_runs} fake runs done, "
                f"{self.finished}/{self.defs} def(s) finished"
            )

    def _line(self, text: str) -> None:
        self.stream.write(f"conform: {text}\n")
        self.stream.flush()
        self.last = self.clock()

    def close(self) -> None:
        return None


class TtyProgress:
    """One updating line per def (runs done / total, what it judges now), redrawn in place.

    When the terminal has fewer rows than defs, the unfinished defs are shown first and a
    last line counts the rest.
    """

    def __init__(self, stream: TextIO, *, rows: int | None = None, cols: int | None = None):
        size = shutil.get_terminal_size((100, 24))
        self.stream = stream
        self.rows = rows or size.lines
        self.cols = cols or size.columns
        self.order: list[str] = []
        self.state: dict[str, ProgressUpdate] = {}
        self.drawn = 0
        self.last = 0.0

    def start(self, plan: ConformPlan, jobs: int) -> None:
        totals = {p.id: len(p.scenarios) if p.target.emulator else 0 for p in plan.defs}
        self.order = [p.id for p in plan.defs]
        self.state = {d: ProgressUpdate(d, 0, totals[d], "waiting") for d in self.order}
        self.stream.write(f"conform: {len(self.order)} def(s), {len(plan.jobs)} fake run(s)\n")
        self._draw()

    def __call__(self, update: ProgressUpdate) -> None:
        self.state[update.def_id] = update
        if update.def_id not in self.order:
            self.order.append(update.def_id)
        now = time.monotonic()
        if now - self.last >= _REDRAW_S or update.finished:
            self._draw()

    def lines(self) -> list[str]:
        width = max(20, self.cols - 1)
        name_w = max([3, *(len(d) for d in self.order)])
        shown = [d for d in self.order if not self.state[d].finished]
        shown += [d for d in self.order if self.state[d].finished]
        room = max(1, self.rows - 2)
        hidden = len(shown) - room if len(shown) > room else 0
        if hidden:
            shown = shown[: room - 1]
            hidden = len(self.order) - len(shown)
        out: list[str] = []
        for d in shown:
            u = self.state[d]
            filled = 12 * u.done // u.total if u.total else 12 * int(u.finished)
            bar = "#" * filled + "." * (12 - filled)
            mark = "done" if u.finished else u.current
            fails = failed_words(u).replace(",", " ", 1)
            line = f"{d.ljust(name_w)} [{bar}] {u.done:>3}/{u.total:<3} {mark}{fails}"
            out.append(line[:width])
        if hidden:
            finished = sum(1 for d in self.order if self.state[d].finished)
            out.append(f"… {hidden} more def(s); {finished}/{len(self.order)} finished")
        return out

    def _draw(self) -> None:
        lines = self.lines()
        buf = f"\x1b[{self.drawn}F" if self.drawn else ""
        buf += "".join(f"\x1b[2K{line}\n" for line in lines)
        # a block that shrank leaves old lines below: clear them
        for _ in range(max(0, self.drawn - len(lines))):
            buf += "\x1b[2K\n"
        self.stream.write(buf)
        self.stream.flush()
        self.drawn = max(self.drawn, len(lines))
        self.last = time.monotonic()

    def close(self) -> None:
        self._draw()


def _command_words(args: argparse.Namespace) -> tuple[str, ...]:
    """The command as given (for the reports' header)."""
    words = ["harness", "conform"]
    for path in args.defs or ():
        words += ["--def", path]
    for agent in args.agent or ():
        words += ["--agent", agent]
    if args.real:
        words.append("--real")
    for opt, value in (
        ("--baseline", args.baseline),
        ("--flaky", args.flaky),
        ("--budget-generation", args.budget_generation),
    ):
        if value:
            words += [opt, value]
    for kind in args.report or ():
        words += ["--report", kind]
    for rule in args.rule or ():
        words += ["--rule", rule]
    for scenario in args.scenario or ():
        words += ["--scenario", scenario]
    return tuple(words)


def cmd_conform(args: argparse.Namespace, out: TextIO) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise HarnessError("--jobs must be at least 1", rule="CONFORM-CLI-001")
    kinds = report_kinds(args.report)
    catalog = all_rules()
    builtins = load_defs(args)
    # Input first, all of it, before anything runs (exit 2 names the file and the field).
    out_dir = Path(args.out or DEFAULT_OUT)
    if any(kind in REPORT_FILES for kind in kinds):
        check_out_dir(out_dir)
    targets, file_defs = _targets(args, builtins)
    baseline, flaky = _baselines(args, catalog)
    plan = plan_conform(
        targets,
        def_checks=all_checks("def"),
        run_checks=all_checks("run"),
        catalog=catalog,
        scenarios=list_scenarios(),
        scenario_filter=args.scenario or None,
        rule_filter=args.rule or None,
        siblings=[*builtins, *(t.defn for t in file_defs)],
        real=args.real,
        # only --real judges live rules: without it the live module is not even imported
        live_rules=live_rule_ids(catalog) if args.real else (),
    )
    result = _run_with_progress(plan, args, baseline, flaky, catalog)
    verdict = result.verdict
    meta = ReportMeta(
        tool_version=__version__,
        generated_at=result.finished_at,
        title="harness conform",
        command=_command_words(args),
    )
    written = _write_reports(verdict, meta, kinds, out_dir)
    if "terminal" in kinds:
        terminal.print_report(verdict, meta, out, env=os.environ)
    out.write(
        f"{result.runs} fake run(s) and {len(verdict.cells)} verdict(s) in "
        f"{result.duration_s:.1f} s\n"
    )
    for path in written:
        out.write(f"report: {path}\n")
    out.flush()
    return verdict.exit_code


def _targets(
    args: argparse.Namespace, builtins: Sequence[AgentDef]
) -> tuple[list[DefTarget], list[DefTarget]]:
    """Every def to judge, and those of them from ``--def`` files (loaded and validated)."""
    targets: list[DefTarget] = []
    if args.agent or not args.defs:
        targets += builtin_targets(builtins, args.agent)
    file_defs = file_targets(args.defs or [], reserved_ids=[d.id for d in builtins])
    targets += file_defs
    if args.budget_generation is None:
        return targets, file_defs
    generation = _budget_generation(args.budget_generation)
    return [
        dataclasses.replace(
            t, defn=dataclasses.replace(t.defn, prompt_budget_generation=generation)
        )
        for t in targets
    ], file_defs


def _budget_generation(value: str) -> BudgetGeneration:
    """FIDELITY-BUDGET-001: either generation of the platform budget can be judged."""
    try:
        return BudgetGeneration(value)
    except ValueError:
        known = ", ".join(g.value for g in BudgetGeneration)
        raise HarnessError(
            f"--budget-generation {value!r}: expected one of {known}", rule="CONFORM-CLI-001"
        ) from None


def _baselines(
    args: argparse.Namespace, catalog: Mapping[str, Rule]
) -> tuple[EntryList | None, EntryList | None]:
    """``--baseline`` (for the built-in defs alone: their known gaps) and ``--flaky``."""
    path = args.baseline
    if path is None and not args.defs:
        # The built-in defs' known gaps (real CLI behaviour, each pinned by a recording).
        path = str(BUILTIN_BASELINE)
    baseline = load_baseline(path, known_rules=catalog) if path else None
    flaky = load_flaky(args.flaky, known_rules=catalog) if args.flaky else None
    return baseline, flaky


def _run_with_progress(
    plan: ConformPlan,
    args: argparse.Namespace,
    baseline: EntryList | None,
    flaky: EntryList | None,
    catalog: Mapping[str, Rule],
) -> ConformResult:
    """Run ``plan`` showing progress on stderr: redrawn on a TTY, lines in a pipe or a log."""
    err = sys.stderr
    jobs = args.jobs or default_jobs()
    progress: LineProgress | TtyProgress
    progress = TtyProgress(err) if err.isatty() else LineProgress(err)
    progress.start(plan, jobs)
    try:
        return run_conform(
            plan,
            jobs=jobs,
            baseline=baseline,
            flaky=flaky,
            on_progress=progress,
            catalog=catalog,
            cache_dir=args.cache_dir,
            record_dir=args.record_dir,
        )
    finally:
        progress.close()


def _write_reports(
    verdict: Verdict, meta: ReportMeta, kinds: Sequence[str], out_dir: Path
) -> list[Path]:
    """The file reports asked for, in ``out_dir`` (created when missing)."""
    renderers = {"json": json_report.render, "junit": junit.render, "html": html.render}
    files = [k for k in kinds if k in renderers]
    if not files:
        return []
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInputError(f"--out {out_dir}", f"cannot create: {exc.strerror}") from None
    written: list[Path] = []
    for kind in files:
        path = out_dir / REPORT_FILES[kind]
        path.write_text(renderers[kind](verdict, meta), encoding="utf-8", newline="\n")
        written.append(path)
    return written
