"""What several subcommands share: loading and choosing the defs, checking a scenario."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fake_clis.scenario import ScenarioError, list_scenarios, load_scenario
from harness.defs.registry import get_agent_def, load_agent_defs
from harness.defs.types import AgentDef
from harness.errors import BadInputError, HarnessError, LocalProfileError

__all__ = ["ChosenDef", "check_scenario", "choose_def", "load_defs"]


def load_defs(args: argparse.Namespace) -> tuple[AgentDef, ...]:
    """Built-in defs plus the local profiles (``--profiles`` or ``$HARNESS_AGENT_PROFILES``).

    Only the commands that use the defs call this, so a broken profiles file fails those and
    no other (CLIERR-PROFILES-001): the first problem (file, entry, field) is raised, with the
    count of the others, and ``main`` prints it as one line with exit 2.
    """
    defs, problems = load_agent_defs(profile_path=getattr(args, "profiles", None), env=os.environ)
    if problems:
        first = problems[0]
        if len(problems) > 1:
            more = f"{first.problem}; and {len(problems) - 1} more problem(s) in this file"
            first = LocalProfileError(first.path, first.index, first.field, more)
        raise first
    return defs


@dataclass(frozen=True)
class ChosenDef:
    """The def a command acts on, and the set it belongs to."""

    defn: AgentDef
    #: Built-ins and local profiles, or (for a ``--def`` file's def) that def alone: the
    #: set a fake install settles binary names over.
    family: tuple[AgentDef, ...]
    #: The def file it came from (``--def``), or ``None``.
    source: str | None = None


def choose_def(args: argparse.Namespace, agent: str | None) -> ChosenDef:
    """``agent`` among the built-ins, local profiles and the defs of the ``--def`` files
    (``args.defs``, loaded as ``harness conform --def`` loads them: DEFCHECK-LOAD-001);
    with no ``agent``, the one def the files export."""
    # start-up: the def-file loader brings the conformance checks; a command loads it only
    # when it chooses a def
    from conformance.checks.loader import load_def_file

    defs = load_defs(args)
    reserved = {d.id for d in defs}
    from_files: dict[str, tuple[AgentDef, str]] = {}
    for path in getattr(args, "defs", None) or ():
        for defn in load_def_file(path, reserved_ids=reserved):
            from_files[defn.id] = (defn, path)
            reserved.add(defn.id)
    if agent is None:
        if not from_files:
            raise HarnessError("give AGENT (an agent id) or --def FILE")
        if len(from_files) > 1:
            raise HarnessError(f"give AGENT: the --def files define {', '.join(from_files)}")
        agent = next(iter(from_files))
    if agent in from_files:
        defn, path = from_files[agent]
        return ChosenDef(defn, (defn,), path)
    every = [*defs, *(d for d, _ in from_files.values())]
    return ChosenDef(get_agent_def(agent, every), defs)


def check_scenario(name: str, *, cases: Sequence[str] = (), option: str = "--scenario") -> None:
    """Refuse a fake or live scenario that is neither one of ``cases`` (a live recipe's case
    ids), a bundled scenario name nor a readable scenario file, listing the known names
    (CLIERR-SCENARIO-001)."""
    if name in cases:
        return
    try:
        load_scenario(name)
    except ScenarioError as exc:
        if Path(name).suffix:  # a file: the reader names it and what is wrong in it
            raise BadInputError(option, str(exc), rule="CLIERR-SCENARIO-001") from None
        known = ", ".join(sorted({*cases, *list_scenarios()}))
        raise BadInputError(
            f"{option} {name}", f"unknown scenario; known: {known}", rule="CLIERR-SCENARIO-001"
        ) from None
