"""``real_findings``: the live differential of one def, for ``harness conform --real``.

For each transport and case of the def's recipe: run the case on the real CLI and on the
fake (:func:`harness.live.session.run_live`), compare them (:mod:`.differential`), and
check the real run's request log (LIVE-REQUESTS-001: it used the recipe's provider API,
every request was addressed to 127.0.0.1) and what its sealed launches tried outside
loopback (LIVE-NET-001, :mod:`harness.live.netns`). No recipe, a ``skip`` recipe or a CLI that is
not installed gives ``skipped`` findings with the reason, never a silent pass
(LIVE-SKIP-001).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conformance.checks import Finding, failed, not_tested, passed, skipped
from harness.defs.types import AgentDef
from harness.live.differential import DIFF_RULES, compare_sides, side_from_run
from harness.live.netns import NetEvidence
from harness.live.recipes import Recipe, ScenarioCase, recipe_for
from harness.live.session import LiveRun, LiveUnavailable, resolve_case, run_live
from harness.modelserver import RequestRecord

__all__ = [
    "LIVE_RULES",
    "PROVIDER_API",
    "CliReport",
    "case_label",
    "net_finding",
    "real_findings",
    "request_findings",
    "select_cases",
]

#: Recipe provider -> the ``api`` the model server logs for it.
PROVIDER_API = {
    "anthropic": "anthropic-messages",
    "openai-responses": "openai-responses",
    "openai-chat": "openai-chat",
    "gemini": "google-genai",
}
LIVE_RULES = (*DIFF_RULES, "LIVE-REQUESTS-001", "LIVE-NET-001")
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

Progress = Callable[[str], None]
Result = list[tuple[str, str, Finding]]


def case_label(case: ScenarioCase, transport: str, recipe: Recipe) -> str:
    """``<case>`` or, for a recipe with several transports, ``<case>@<transport>``."""
    return case.id if len(recipe.transports) <= 1 else f"{case.id}@{transport}"


def request_findings(recipe: Recipe, requests: Sequence[RequestRecord]) -> Finding:
    """LIVE-REQUESTS-001 on the real run's request log."""
    api = PROVIDER_API.get(recipe.provider or "")
    hosts = sorted({r.headers.get("host", "") for r in requests})
    foreign = [h for h in hosts if not h.startswith(_LOOPBACK_HOSTS)]
    used = sorted({r.api for r in requests if r.api})
    problems: list[str] = []
    if foreign:
        problems.append(f"requests addressed to {foreign}")
    if api is not None and api not in used:
        problems.append(f"no {api} request (the recipe's provider); APIs seen: {used}")
    if not problems:
        return passed(f"{len(requests)} requests, all to 127.0.0.1, API {used}")
    lines = [f"{r.method} {r.path} api={r.api} host={r.headers.get('host')}" for r in requests]
    return failed(
        "LIVE-REQUESTS-001: the real side diverged: " + "; ".join(problems),
        repro_command=f"harness live run {recipe.agent}",
        expected=f"every request to 127.0.0.1 and at least one {api} request",
        actual="\n".join(lines) or "(no requests)",
    )


def net_finding(evidence: NetEvidence | None, *, repro_command: str) -> Finding:
    """LIVE-NET-001 on what the sealed launches of one real run recorded."""
    if evidence is None or not evidence.sealing.sealed:
        why = evidence.sealing.reason if evidence is not None else "no sealed launch"
        return skipped(f"{why}; traffic off the machine was possible and was not recorded")
    if evidence.attempts:
        return failed(
            f"LIVE-NET-001: the real CLI tried to reach the network outside loopback "
            f"{len(evidence.attempts)} time(s): "
            + ", ".join(sorted({f"{a.kind} {a.target}" for a in evidence.attempts})),
            repro_command=repro_command,
            expected="no connect or name look-up outside loopback",
            actual="\n".join(str(a) for a in evidence.attempts),
            stderr="\n".join(evidence.problems),
        )
    if evidence.launches == 0:
        return skipped("the real CLI was never launched sealed")
    if not evidence.recorded:
        return skipped(
            f"sealed ({evidence.sealing.how}): nothing could leave the machine and no name "
            f"was looked up, but connects were not recorded in "
            f"{evidence.launches - evidence.traced} of {evidence.launches} launch(es) "
            "(strace is not installed)"
        )
    note = f"; launcher notes: {'; '.join(evidence.problems)}" if evidence.problems else ""
    return passed(
        f"sealed ({evidence.sealing.how}): {evidence.launches} launch(es), "
        f"no attempt outside loopback{note}"
    )


def _skip_all(label: str, reason: str) -> Result:
    return [(rule, label, skipped(reason)) for rule in LIVE_RULES]


def select_cases(
    recipe: Recipe, transport: str, scenarios: Sequence[str] | None
) -> list[ScenarioCase]:
    """The cases of ``transport`` to run: the recipe's, or exactly those named.

    A name is a case id (``text`` is the case ``text``, never also ``text-resume``, which
    runs the same scenario file twice); a name that is no case id is a one-turn case of
    that scenario file.
    """
    cases = list(recipe.cases_for(transport))
    if not scenarios:
        return cases
    by_id = {c.id: c for c in cases}
    return [by_id[s] if s in by_id else resolve_case(recipe, s) for s in dict.fromkeys(scenarios)]


def real_findings(
    defn: AgentDef,
    *,
    scenarios: Sequence[str] | None = None,
    transports: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    record_dir: str | os.PathLike[str] | None = None,
    on_progress: Progress | None = None,
    report: CliReport | None = None,
) -> Result:
    """``(rule id, scenario, finding)`` for every LIVE rule, case and transport of ``defn``.

    ``scenarios`` limits the cases (:func:`select_cases`; default: the recipe's) and
    ``transports`` the transports (default: the recipe's); only those run.
    ``record_dir`` records each real run to ``<record_dir>/<agent>/<label>.jsonl``.
    After the runs, ``on_progress`` gets one report line for the CLI
    (:class:`CliReport`: version, scenarios, requests, network attempts, wall time),
    which is also filled into ``report`` when one is given.
    """
    progress = on_progress or (lambda _msg: None)
    recipe = recipe_for(defn.id)
    if recipe is None:
        return _skip_all("*", f"no live recipe for {defn.id!r} (harness/live/recipes)")
    if recipe.skip_reason is not None:
        # never launched; the verdict says why.
        return _skip_all("*", recipe.skip_reason)
    names = recipe.transport_names(defn)
    if transports:
        unknown = [t for t in transports if t not in names]
        if unknown:
            return _skip_all("*", f"transport {unknown} is not in the recipe (runs {names})")
        names = tuple(t for t in names if t in transports)
    report = report if report is not None else CliReport(defn.id)
    out: Result = []
    for transport in names:
        for case in select_cases(recipe, transport, scenarios):
            label = case_label(case, transport, recipe)
            out.extend(
                _one_case(
                    defn, recipe, case, transport, label, cache_dir, record_dir, progress, report
                )
            )
    if report.scenarios:
        progress(report.line())
    return out


@dataclass
class CliReport:
    """What ``conform --real`` reports per CLI, summed over its real runs."""

    agent: str
    version: str | None = None
    scenarios: list[str] = field(default_factory=list)
    requests: int = 0
    attempts: list[str] = field(default_factory=list)
    unsealed: str | None = None
    wall_s: float = 0.0

    def add(self, label: str, run: LiveRun) -> None:
        self.version = self.version or run.cli_version
        self.scenarios.append(label)
        self.requests += len(run.requests)
        self.wall_s += run.wall_s
        if run.net is not None and not run.net.sealing.sealed:
            self.unsealed = run.net.sealing.reason
        elif run.net is not None:
            self.attempts += [f"{label} {a}" for a in run.net.attempts]

    def line(self) -> str:
        net = (
            self.unsealed
            if self.unsealed is not None
            else f"{len(self.attempts)} network attempt(s)"
            + (f" ({'; '.join(self.attempts[:5])})" if self.attempts else "")
        )
        return (
            f"{self.agent} {self.version or '(version unknown)'}: "
            f"{len(self.scenarios)} scenario(s) [{', '.join(self.scenarios)}], "
            f"{self.requests} request(s), {net}, wall {self.wall_s:.1f} s"
        )


def _one_case(  # noqa: PLR0917 - one private call site
    defn: AgentDef,
    recipe: Recipe,
    case: ScenarioCase,
    transport: str,
    label: str,
    cache_dir: str | os.PathLike[str] | None,
    record_dir: str | os.PathLike[str] | None,
    progress: Progress,
    report: CliReport,
) -> Result:
    record = None
    if record_dir is not None:
        record = Path(record_dir) / defn.id / f"{label.replace('@', '.')}.jsonl"
        record.parent.mkdir(parents=True, exist_ok=True)
    real: LiveRun | None = None
    fake: LiveRun | None = None
    try:
        progress(f"{defn.id} {label}: real CLI")
        real = run_live(
            defn,
            case,
            recipe=recipe,
            transport=transport,
            side="real",
            cache_dir=cache_dir,
            record=record,
        )
        report.add(label, real)
        progress(f"{defn.id} {label}: fake CLI")
        fake = run_live(defn, case, recipe=recipe, transport=transport, side="fake")
        repro = f"harness live diff {defn.id} --scenario {case.id} --transport {transport}"
        found = compare_sides(
            side_from_run(f"real {defn.id} {real.cli_version or ''}".strip(), real),
            side_from_run(f"fake {defn.id}", fake),
            scenario=case.scenario,
            repro_command=repro,
            volatile=recipe.volatile_text,
        )
        out: Result = [(rule, label, finding) for rule, finding in found]
        out.append(("LIVE-REQUESTS-001", label, request_findings(recipe, real.requests)))
        out.append(("LIVE-NET-001", label, net_finding(real.net, repro_command=repro)))
        verdicts = ", ".join(f"{r.split('-')[2]}={f.status.value}" for r, _l, f in out)
        progress(f"{defn.id} {label}: {verdicts}")
        return out
    except LiveUnavailable as exc:
        progress(f"{defn.id} {label}: skipped ({exc.reason})")
        return _skip_all(label, exc.reason)
    except Exception as exc:  # a crash of the check itself is not_tested, with the cause
        why = f"the live run crashed: {type(exc).__name__}: {exc}"
        progress(f"{defn.id} {label}: not tested ({why})")
        return [(rule, label, not_tested(why)) for rule in LIVE_RULES]
    finally:
        for run in (real, fake):
            if run is not None:
                run.dirs.cleanup()
