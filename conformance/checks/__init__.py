"""Executable rule checks: rule id -> the function that judges it.

Design: docs/design/conformance.md#conformance.checks
"""

from __future__ import annotations

import dataclasses
import importlib
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from conformance.evidence import Evidence, Frame
from conformance.rules import Rule, all_rules
from conformance.verdicts import Outcome, Status
from harness.defs.types import AgentDef

__all__ = [
    "CHECK_MODULES",
    "Check",
    "DefSubject",
    "Finding",
    "Level",
    "all_checks",
    "check",
    "evaluate_def",
    "failed",
    "not_tested",
    "passed",
    "registry_problems",
    "select_checks",
    "skipped",
    "to_outcomes",
]

Level = Literal["def", "run"]

#: Modules whose import registers the built-in checks.
CHECK_MODULES: tuple[str, ...] = (
    "conformance.checks.defs",
    "conformance.checks.runs",
    "conformance.checks.adapter_layer",
    "conformance.checks.fidelity",
)

#: Prefix of every ``skipped`` reason (design §Conformance model: "not applicable, with
#: the reason").
NOT_APPLICABLE = "not applicable: "


@dataclass(frozen=True)
class Finding:
    """What one check observed: a status, why, and on ``fail`` the evidence."""

    status: Status
    reason: str = ""
    evidence: Evidence | None = None

    def __post_init__(self) -> None:
        if self.status is Status.FAIL and self.evidence is None:
            raise ValueError("a failed finding carries evidence (CONFORM-EVIDENCE-001)")
        if self.status in (Status.SKIPPED, Status.NOT_TESTED) and not self.reason.strip():
            raise ValueError(f"a {self.status.value} finding says why")


def passed(reason: str = "") -> Finding:
    return Finding(Status.PASS, reason)


def skipped(why: str) -> Finding:
    """The rule does not apply here; ``why`` completes ``"not applicable: ..."``."""
    return Finding(Status.SKIPPED, NOT_APPLICABLE + why)


def not_tested(why: str) -> Finding:
    return Finding(Status.NOT_TESTED, why)


def failed(
    summary: str,
    *,
    repro_command: str,
    expected: str = "",
    actual: str = "",
    transcript: Iterable[Frame | Mapping[str, Any]] = (),
    stderr: str = "",
) -> Finding:
    """A ``fail`` finding; the evidence is bounded as the reports require."""
    one_line = " ".join(summary.splitlines()).strip()
    evidence = Evidence.bounded(
        summary=one_line,
        repro_command=repro_command,
        expected=expected,
        actual=actual,
        transcript=transcript,
        stderr=stderr,
    )
    return Finding(Status.FAIL, one_line, evidence)


@dataclass(frozen=True)
class DefSubject:
    """One def to judge without a run.

    ``siblings`` is the set the def is checked in (for DEF-REGISTRY-001: it may include
    the def itself; ``harness conform --def`` passes the built-ins plus the file's defs);
    ``source`` is the def file, for the repro command; ``max_examples`` bounds the
    hypothesis exploration of ARGV-PURE-001.
    """

    defn: AgentDef
    siblings: tuple[AgentDef, ...] = ()
    source: str | None = None
    max_examples: int = 10
    #: The emulated id whose fake plays the def (the pytest plugin's ``--adapter-fake-as``
    #: choice); ``None``: :func:`conformance.fakes.fake_for` chooses, as conform does.
    emulator: str | None = None

    @property
    def repro_command(self) -> str:
        if self.source:
            return f"harness conform --def {self.source}"
        return f"harness conform --agent {self.defn.id}"


Func = TypeVar("Func", bound=Callable[..., Finding])


@dataclass(frozen=True)
class Check:
    """One registered check."""

    rule_id: str
    level: Level
    func: Callable[[Any], Finding] = field(repr=False)

    @property
    def name(self) -> str:
        return f"{self.func.__module__}.{self.func.__qualname__}"

    def run(self, subject: Any) -> Finding:
        """Call the check; a crash is ``not_tested`` (it applies, but could not be judged)."""
        try:
            finding = self.func(subject)
        except Exception as exc:
            where = traceback.extract_tb(exc.__traceback__)[-1:]
            at = f" at {where[0].filename}:{where[0].lineno}" if where else ""
            return not_tested(f"check {self.name} crashed{at}: {type(exc).__name__}: {exc}")
        return _name_rule(finding, self.rule_id)


def _name_rule(finding: Finding, rule_id: str) -> Finding:
    """Make a failed finding's evidence summary start with the rule id it proves."""
    evidence = finding.evidence
    if finding.status is not Status.FAIL or evidence is None:
        return finding
    summary = evidence.summary
    if not summary.startswith(rule_id):
        summary = f"{rule_id}: {summary}"
    evidence = dataclasses.replace(evidence, summary=summary)
    return Finding(Status.FAIL, summary, evidence)


#: rule id -> its check. Filled by :func:`check` when a check module is imported.
_REGISTRY: dict[str, Check] = {}


def check(rule_id: str, *, level: Level) -> Callable[[Func], Func]:
    """Register the decorated function as the check of ``rule_id``.

    Raises ``ValueError`` for a bad level or a second check of the same rule (one rule,
    one check: a verdict must not depend on which of two checks ran).
    """
    if level not in ("def", "run"):
        raise ValueError(f"check {rule_id}: level must be 'def' or 'run', got {level!r}")

    def register(func: Func) -> Func:
        existing = _REGISTRY.get(rule_id)
        same = existing is not None and existing.name == f"{func.__module__}.{func.__qualname__}"
        if existing is not None and existing.func is not func and not same:
            raise ValueError(
                f"rule {rule_id} already has a check ({existing.name}); "
                f"{func.__module__}.{func.__qualname__} cannot register a second one"
            )
        _REGISTRY[rule_id] = Check(rule_id, level, func)
        return func

    return register


def _load_check_modules() -> None:
    for name in CHECK_MODULES:
        importlib.import_module(name)


def registry_problems(
    checks: Mapping[str, Check] | None = None, rules: Mapping[str, Rule] | None = None
) -> list[str]:
    """CHECKS-REGISTRY-001: what is wrong with the registry (empty when nothing is).

    Every check must name a known rule, under that rule's id, at the rule's level.
    """
    if checks is None:
        _load_check_modules()
        checks = dict(_REGISTRY)
    catalog = all_rules() if rules is None else rules
    problems: list[str] = []
    for rule_id, chk in sorted(checks.items()):
        if chk.rule_id != rule_id:
            problems.append(f"{chk.name} is registered under {rule_id} but names {chk.rule_id}")
        rule = catalog.get(chk.rule_id)
        if rule is None:
            problems.append(f"{chk.name} names unknown rule {chk.rule_id}")
            continue
        rule_level: Level = "def" if rule.formats == () else "run"
        if chk.level != rule_level:
            problems.append(
                f"{chk.name} is a {chk.level}-level check, but {chk.rule_id} is a "
                f"{rule_level}-level rule (formats {list(rule.formats)})"
            )
    return problems


def all_checks(level: Level | None = None) -> dict[str, Check]:
    """Every registered check (rule id -> check), optionally of one level.

    Raises ``ValueError`` naming every problem :func:`registry_problems` finds.
    """
    _load_check_modules()
    problems = registry_problems(dict(_REGISTRY))
    if problems:
        raise ValueError("broken checks registry (CHECKS-REGISTRY-001): " + "; ".join(problems))
    return {rid: c for rid, c in sorted(_REGISTRY.items()) if level in (None, c.level)}


def select_checks(level: Level, rule_ids: Iterable[str] | None) -> dict[str, Check]:
    """The checks of ``level`` (all, or those of ``rule_ids``; an id without one is a KeyError)."""
    checks = all_checks(level)
    if rule_ids is None:
        return checks
    wanted = list(rule_ids)
    unknown = [r for r in wanted if r not in checks]
    if unknown:
        raise KeyError(f"no {level}-level check for {unknown}; known: {sorted(checks)}")
    return {r: checks[r] for r in wanted}


def evaluate_def(
    defn: AgentDef,
    *,
    siblings: Iterable[AgentDef] = (),
    source: str | None = None,
    rule_ids: Iterable[str] | None = None,
    max_examples: int = 10,
    emulator: str | None = None,
) -> dict[str, Finding]:
    """Run the def-level checks on ``defn`` (all of them, or ``rule_ids``); ``emulator``
    names the fake that plays it (default: :func:`conformance.fakes.fake_for`'s)."""
    subject = DefSubject(defn, tuple(siblings), source, max_examples, emulator)
    return {rid: chk.run(subject) for rid, chk in select_checks("def", rule_ids).items()}


def to_outcomes(
    def_id: str,
    findings: Mapping[str, Finding],
    *,
    scenario: str | None = None,
    attempt: int = 1,
) -> list[Outcome]:
    """The findings of one def as verdict-model outcomes (one per rule)."""
    return [
        Outcome(
            rule_id=rid,
            def_id=def_id,
            status=f.status,
            reason=f.reason,
            evidence=f.evidence,
            scenario=scenario,
            attempt=attempt,
        )
        for rid, f in findings.items()
    ]
