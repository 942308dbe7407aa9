"""The registry: every built-in :class:`AgentDef`, checked once at import.

Rules: DEF-REGISTRY-002.
Design: docs/design/defs.md#harness.defs.registry
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from harness.defs.aider import AGENT_DEF as _AIDER
from harness.defs.amp import AGENT_DEF as _AMP
from harness.defs.amr import AGENT_DEF as _AMR
from harness.defs.antigravity import AGENT_DEF as _ANTIGRAVITY
from harness.defs.atomcode import AGENT_DEF as _ATOMCODE
from harness.defs.byok_opencode import AGENT_DEF as _BYOK_OPENCODE
from harness.defs.claude import AGENT_DEF as _CLAUDE
from harness.defs.codebuddy import AGENT_DEF as _CODEBUDDY
from harness.defs.codex import AGENT_DEF as _CODEX
from harness.defs.copilot import AGENT_DEF as _COPILOT
from harness.defs.cursor_agent import AGENT_DEF as _CURSOR_AGENT
from harness.defs.deepseek import AGENT_DEF as _DEEPSEEK
from harness.defs.deepseek_harness import AGENT_DEF as _DEEPSEEK_HARNESS
from harness.defs.devin import AGENT_DEF as _DEVIN
from harness.defs.format_options import misplaced_options
from harness.defs.gemini import AGENT_DEF as _GEMINI
from harness.defs.grok_build import AGENT_DEF as _GROK_BUILD
from harness.defs.hermes import AGENT_DEF as _HERMES
from harness.defs.kilo import AGENT_DEF as _KILO
from harness.defs.kimi import AGENT_DEF as _KIMI
from harness.defs.kiro import AGENT_DEF as _KIRO
from harness.defs.local_profiles import profiles_path, read_local_profiles
from harness.defs.mimo import AGENT_DEF as _MIMO
from harness.defs.opencode import AGENT_DEF as _OPENCODE
from harness.defs.pi import AGENT_DEF as _PI
from harness.defs.prime_agent import AGENT_DEF as _PRIME_AGENT
from harness.defs.qoder import AGENT_DEF as _QODER
from harness.defs.qwen import AGENT_DEF as _QWEN
from harness.defs.reasonix import AGENT_DEF as _REASONIX
from harness.defs.trae_cli import AGENT_DEF as _TRAE_CLI
from harness.defs.types import ID_PATTERN, AgentDef, PromptDelivery
from harness.defs.vibe import AGENT_DEF as _VIBE
from harness.errors import AgentDefError, DuplicateAgentError, LocalProfileError, UnknownAgentError
from harness.guards.budget_generations import budgets_for

__all__ = [
    "BUILTIN_DEFS",
    "BUILTIN_REGISTRY",
    "build_registry",
    "get_agent_def",
    "load_agent_defs",
    "validate_def",
]

#: ref §8.2 ``SHIPPED_AGENT_DEFS`` order (28 ids), then the retired ``gemini`` (29 in all).
BUILTIN_DEFS: tuple[AgentDef, ...] = (
    _AMR,
    _CLAUDE,
    _CODEX,
    _DEVIN,
    _OPENCODE,
    _BYOK_OPENCODE,
    _HERMES,
    _TRAE_CLI,
    _GROK_BUILD,
    _KIMI,
    _CURSOR_AGENT,
    _QWEN,
    _QODER,
    _COPILOT,
    _AMP,
    _PI,
    _KIRO,
    _KILO,
    _VIBE,
    _DEEPSEEK,
    _DEEPSEEK_HARNESS,
    _AIDER,
    _ANTIGRAVITY,
    _REASONIX,
    _PRIME_AGENT,
    _CODEBUDDY,
    _MIMO,
    _ATOMCODE,
    _GEMINI,
)


def validate_def(defn: AgentDef) -> None:
    """Raise :class:`AgentDefError` naming the first invalid field of ``defn``."""
    if not ID_PATTERN.match(defn.id):
        raise AgentDefError(defn.id, "id", f"must match {ID_PATTERN.pattern}", rule="DEF-ID-001")
    for field, value in (("name", defn.name), ("bin", defn.bin)):
        if not value.strip():
            raise AgentDefError(defn.id, field, "must be a non-empty string", rule="DEF-ID-001")
    budget = defn.max_prompt_arg_bytes
    if defn.prompt_delivery is PromptDelivery.ARGV:
        # seed 000 §12 / seed 002 §6.2: argv delivery must fail observably before spawn.
        if budget is None:
            raise AgentDefError(
                defn.id,
                "max_prompt_arg_bytes",
                "argv prompt delivery requires a prompt budget",
                rule="DEF-BUDGET-001",
            )
        if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
            raise AgentDefError(
                defn.id,
                "max_prompt_arg_bytes",
                "must be a positive integer",
                rule="DEF-BUDGET-001",
            )
    elif budget is not None:
        # ref §4: every budget guard runs iff the budget is set; off argv it would misfire.
        raise AgentDefError(
            defn.id,
            "max_prompt_arg_bytes",
            f"only argv prompt delivery takes a budget (delivery is {defn.prompt_delivery.value})",
            rule="DEF-BUDGET-002",
        )
    try:
        budgets_for(defn.prompt_budget_generation)
    except ValueError as exc:
        raise AgentDefError(
            defn.id, "prompt_budget_generation", str(exc), rule="FIDELITY-BUDGET-001"
        ) from None
    misplaced = misplaced_options(defn)
    if misplaced:
        field, problem = misplaced[0]
        raise AgentDefError(defn.id, field, problem, rule="DEF-OPTIONS-001")


def build_registry(defs: Iterable[AgentDef]) -> dict[str, AgentDef]:
    """Validate each def and index them by id, keeping order.

    Raises :class:`AgentDefError` for an invalid def and :class:`DuplicateAgentError` for a
    repeated id (seed 000 §1: "Duplicate agent definition id", DEF-REGISTRY-001).
    """
    registry: dict[str, AgentDef] = {}
    for defn in defs:
        validate_def(defn)
        if defn.id in registry:
            raise DuplicateAgentError(
                f"duplicate agent definition id: {defn.id!r}", rule="DEF-REGISTRY-001"
            )
        registry[defn.id] = defn
    return registry


#: The built-ins by id. Built at import, so a bad built-in def fails ``import``.
BUILTIN_REGISTRY: Mapping[str, AgentDef] = MappingProxyType(build_registry(BUILTIN_DEFS))


def get_agent_def(
    agent_id: str, defs: Iterable[AgentDef] | Mapping[str, AgentDef] | None = None
) -> AgentDef:
    """The def for ``agent_id`` among ``defs`` (default: the built-ins).

    Raises :class:`UnknownAgentError` listing every known id (DEF-REGISTRY-003).
    """
    if defs is None:
        registry: Mapping[str, AgentDef] = BUILTIN_REGISTRY
    elif isinstance(defs, Mapping):
        registry = defs
    else:
        registry = build_registry(defs)
    try:
        return registry[agent_id]
    except KeyError:
        raise UnknownAgentError(agent_id, list(registry)) from None


def load_agent_defs(
    profile_path: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[tuple[AgentDef, ...], list[LocalProfileError]]:
    """Built-ins followed by the valid local profiles, plus one error per rejected profile.

    ``profile_path`` wins over the env vars of
    :data:`~harness.defs.local_profiles.PROFILES_ENV_VARS`; ``env`` defaults to
    ``os.environ``. A bad or unreadable profiles file never hides a built-in (PROFILE-VALID-001).
    """
    path = profiles_path(os.environ if env is None else env, profile_path)
    if path is None:
        return BUILTIN_DEFS, []
    profile_defs, errors = read_local_profiles(path, BUILTIN_DEFS)
    combined = (*BUILTIN_DEFS, *profile_defs)
    build_registry(combined)  # profiles were checked entry by entry; this re-proves the invariants
    return combined, errors
