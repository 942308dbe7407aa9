"""Run checks of engine fidelity: a run behaves as the host's own run would.

FIDELITY-CAPS-001 (seed 002 §5.5): the argv a run spawned agrees with the help-probe
findings ``build_args`` read, and, for a fake run, the findings agree with the build the
scenario plays: an ``old_version`` scenario is an old build whose help hides the new
optional flags (so not every capability can be found), any other is a current build
whose help lists them (so some capability is found).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from conformance.checks import Finding, check, passed, skipped
from conformance.checks.runs import RunObservation, _fail

__all__ = ["capabilities_reach_the_run"]


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
