"""The rule catalog: every rule the engine enforces, by id.

Each area module under this package declares ``RULES: tuple[Rule, ...]``.
Ids follow ``<AREA>-<TOPIC>-<NNN>`` (e.g. ``DSH-RESUME-002``). Tests bind to
rules with ``@pytest.mark.rule("ID")``; a meta-test fails when a rule has no
test or a test names an unknown rule.
"""

from __future__ import annotations

import enum
import importlib
import pkgutil
import re
from dataclasses import dataclass

from conformance.rules.citations import resolve

__all__ = ["RULE_ID_PATTERN", "Rule", "Tier", "all_rules", "get_rule"]

RULE_ID_PATTERN = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-\d{3}$")

#: Seed documents by short name, for citations such as ``seed 002 §7.5``.
SEED_FILES = {
    "000": "000_80034a41ab6e4d81.txt (agent adapters)",
    "001": "001_e4d6164e3e13d8a8.txt (DeepSeek Harness profile adapter)",
    "002": "002_c6a6604ccbe5c89b.txt (adapter layer deep read, zh)",
}


class Tier(str, enum.Enum):
    MANDATORY = "mandatory"
    #: Applies only when the def declares the capability (``capability`` names it).
    CAPABILITY = "capability"
    ADVISORY = "advisory"


@dataclass(frozen=True)
class Rule:
    id: str
    tier: Tier
    #: The normative sentence, one line.
    statement: str
    #: e.g. ``"seed 002 §7.5"``, ``"ref §2.1.3"`` (reference/open-design-behaviour.md),
    #: ``"wire §A.0"`` (reference/wire-formats-and-anchors.md) or ``"design §Recordings"``;
    #: each cited section is restated under an anchor of ``docs/spec/`` (:attr:`links`).
    citation: str
    #: Stream formats the rule applies to; ``("*",)`` = every format, ``()`` = def-level.
    formats: tuple[str, ...] = ("*",)
    #: For CAPABILITY rules: the def field or capability that gates it.
    capability: str | None = None

    def __post_init__(self) -> None:
        if not RULE_ID_PATTERN.match(self.id):
            raise ValueError(f"rule id {self.id!r} does not match {RULE_ID_PATTERN.pattern}")
        if (self.tier is Tier.CAPABILITY) != (self.capability is not None):
            raise ValueError(f"rule {self.id}: capability is set iff tier is CAPABILITY")
        if not self.statement or "\n" in self.statement:
            raise ValueError(f"rule {self.id}: statement must be one non-empty line")
        if not re.match(r"^(seed 00[012]|ref|wire|design) §", self.citation):
            raise ValueError(
                f"rule {self.id}: citation {self.citation!r} must start with "
                "'seed 000 §', 'seed 001 §', 'seed 002 §', 'ref §', 'wire §' or 'design §'"
            )

    @property
    def links(self) -> tuple[str, ...]:
        """Where the citation points, repository-relative: ``docs/spec/<file>.md#<anchor>``
        per cited section (see :func:`conformance.rules.citations.resolve`); raises
        :class:`~conformance.rules.citations.CitationError` for a citation no section can
        hold."""
        return resolve(self.citation)


_CATALOG: dict[str, Rule] | None = None


def all_rules() -> dict[str, Rule]:
    """Every rule from every area module (a fresh dict; the catalog is read once per
    process); raises on a duplicate id."""
    global _CATALOG  # noqa: PLW0603 -- a process-wide cache of an immutable catalog
    if _CATALOG is None:
        found: dict[str, Rule] = {}
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            module = importlib.import_module(f"{__name__}.{info.name}")
            for rule in getattr(module, "RULES", ()):
                if rule.id in found:
                    raise ValueError(f"duplicate rule id {rule.id} in {info.name}")
                found[rule.id] = rule
        _CATALOG = found
    return dict(_CATALOG)


def get_rule(rule_id: str) -> Rule:
    rules = all_rules()
    try:
        return rules[rule_id]
    except KeyError:
        raise KeyError(f"unknown rule id {rule_id!r}; {len(rules)} known") from None
