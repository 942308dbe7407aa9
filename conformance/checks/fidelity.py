"""Run checks of engine fidelity: a run behaves as the host's own run would.

FIDELITY-BUDGET-001 (seed 002 §6.3, ref §4.1), a def check: the argv guard of an argv
def applies the platform budget of the generation the def names, on every platform.

FIDELITY-CAPS-001 (seed 002 §5.5): the argv a run spawned agrees with the help-probe
findings ``build_args`` read, and, for a fake run, the findings agree with the build the
scenario plays: an ``old_version`` scenario is an old build whose help hides the new
optional flags (so not every capability can be found), any other is a current build
whose help lists them (so some capability is found).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from conformance.checks import DefSubject, Finding, check, failed, passed, skipped
from conformance.checks.runs import RunObservation, _fail
from harness.guards.budget import argv_prompt_limit, check_prompt_argv_budget
from harness.guards.budget_generations import BudgetGeneration

__all__ = ["budget_generation_applies", "capabilities_reach_the_run"]

#: The platforms the argv guard distinguishes (``sys.platform`` names).
_BUDGET_PLATFORMS = ("linux", "darwin", "win32")


def _passes_flag(argv: Sequence[str], flag: str) -> bool:
    """``flag`` is one of the spawned arguments (alone or as ``flag=value``)."""
    return any(arg == flag or arg.startswith(flag + "=") for arg in argv[1:])


def _found(caps: Mapping[str, bool], flags: Mapping[str, str]) -> list[str]:
    return sorted({key for key in flags.values() if caps.get(key) is True})


@check("FIDELITY-CAPS-001", level="run")
def capabilities_reach_the_run(obs: RunObservation) -> Finding:
    """FIDELITY-CAPS-001: probed capabilities, and only those, reach the run's argv."""
    flags = obs.capability_flags
    if not flags:
        return skipped("not applicable: the def probes no optional flag in its help")
    if obs.capabilities is None:
        return skipped("not applicable: no build_args ran for this observation (a replay)")
    caps = obs.capabilities
    found = _found(caps, flags)
    for flag, key in sorted(flags.items()):
        if caps.get(key) is not True and _passes_flag(obs.argv, flag):
            return _fail(
                obs,
                f"the run passed {flag} although the help probe did not find it",
                expected=f"no {flag} (capability {key!r} is {caps.get(key)!r})",
                actual="argv: " + " ".join(obs.argv),
            )
    if obs.scenario is None:
        return passed("every flag passed is one the help probe found")
    every = sorted(set(flags.values()))
    if obs.scenario.old_version and found == every:
        return _fail(
            obs,
            "the old build's run read the findings of a build that lists every optional flag",
            expected="the new optional flags missing (the old help hides them)",
            actual=f"found: {found}",
        )
    if not obs.scenario.old_version and not found:
        return _fail(
            obs,
            "the current build advertises its optional flags, yet the run read none of them",
            expected=f"the help probe's findings for {sorted(flags)}",
            actual=f"capabilities: {dict(caps)}",
        )
    generation = "old" if obs.scenario.old_version else "current"
    return passed(f"the {generation} build's findings reached build_args: {found}")


@check("FIDELITY-BUDGET-001", level="def")
def budget_generation_applies(subject: DefSubject) -> Finding:
    """FIDELITY-BUDGET-001: a prompt of exactly the generation's limit passes the argv
    guard and one byte more is refused, on linux, darwin and win32."""
    defn = subject.defn
    budget = defn.max_prompt_arg_bytes
    if budget is None:
        return skipped("not applicable: the def does not take its prompt in argv")
    try:
        generation = BudgetGeneration(defn.prompt_budget_generation)
    except ValueError:
        known = ", ".join(g.value for g in BudgetGeneration)
        return failed(
            f"{defn.id}: prompt_budget_generation names no known generation",
            repro_command=subject.repro_command,
            expected=f"one of {known}",
            actual=f"prompt_budget_generation={defn.prompt_budget_generation!r}",
        )
    for platform in _BUDGET_PLATFORMS:
        limit = argv_prompt_limit(budget, platform, generation)
        fits = check_prompt_argv_budget(defn, "x" * limit, platform)
        over = check_prompt_argv_budget(defn, "x" * (limit + 1), platform)
        if fits is not None or over is None or over.limit != limit:
            return failed(
                f"{defn.id}: the argv guard on {platform} does not apply the "
                f"{generation.value} budget of {limit} bytes",
                repro_command=subject.repro_command,
                expected=f"{limit} bytes pass, {limit + 1} are refused naming {limit}",
                actual=f"at the limit: {fits!r}; one over: {over!r}",
            )
    return passed(f"the {generation.value} generation's limits apply on every platform")
