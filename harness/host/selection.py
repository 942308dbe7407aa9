"""Which agent a run uses (seed 000 §7 "Agent switching", §8 "Selection and failure recovery").

Design: docs/design/host.md#harness.host.selection
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from harness.defs.types import AgentDef
from harness.errors import HarnessError, UnknownAgentError

if TYPE_CHECKING:
    from harness.host.detect_result import DetectionResult

__all__ = [
    "AgentUnavailableError",
    "NoAgentAvailableError",
    "next_agent_after_failure",
    "select_agent",
    "unavailable_reason",
]


class AgentUnavailableError(HarnessError):
    """The requested agent is not available; ``reason`` says why. Nothing was substituted."""

    code = "AGENT_UNAVAILABLE"

    def __init__(self, agent_id: str, reason: str, *, rule: str) -> None:
        super().__init__(f"agent {agent_id!r} is not available: {reason}", rule=rule)
        self.agent_id = agent_id
        self.reason = reason


class NoAgentAvailableError(HarnessError):
    """No def is available; ``reasons`` maps each agent id to why."""

    code = "AGENT_NONE_AVAILABLE"

    def __init__(self, reasons: Mapping[str, str]) -> None:
        listed = "; ".join(f"{agent_id}: {why}" for agent_id, why in reasons.items())
        super().__init__(
            f"no agent is available ({listed or 'no agent definitions'})", rule="SELECT-NONE-001"
        )
        self.reasons = dict(reasons)


def _registry(defs: Iterable[AgentDef] | Mapping[str, AgentDef]) -> dict[str, AgentDef]:
    items = defs.values() if isinstance(defs, Mapping) else defs
    out: dict[str, AgentDef] = {}
    for defn in items:
        if defn.id in out:
            raise ValueError(f"duplicate agent definition id: {defn.id!r}")
        out[defn.id] = defn
    return out


def _by_id(detection: Sequence[DetectionResult]) -> dict[str, DetectionResult]:
    out: dict[str, DetectionResult] = {}
    for result in detection:
        if result.id in out:
            raise ValueError(f"two detection results for agent {result.id!r}")
        out[result.id] = result
    return out


def unavailable_reason(agent_id: str, result: DetectionResult | None) -> str:
    """Why ``agent_id`` cannot run, from its detection diagnostics."""
    if result is None:
        return "not detected"
    if not result.diagnostics:
        return "detection found it unavailable"
    return "; ".join(f"{d.code.value}: {d.message}" for d in result.diagnostics)


def _given(agent_id: str | None) -> str | None:
    if agent_id is None:
        return None
    stripped = agent_id.strip()
    return stripped or None


def select_agent(
    requested: str | None,
    configured: str | None,
    detection: Sequence[DetectionResult],
    defs: Iterable[AgentDef] | Mapping[str, AgentDef],
) -> AgentDef:
    """The def this run uses (SELECT-EXPLICIT-001, SELECT-DEFAULT-001, SELECT-NONE-001).

    ``defs`` is the registry in order (built-ins then local profiles); ``detection`` holds one
    result per def in any order (completion order is fine: order comes from ``defs``).
    """
    registry = _registry(defs)
    results = _by_id(detection)

    def available(agent_id: str) -> bool:
        result = results.get(agent_id)
        return result is not None and result.available

    explicit = _given(requested)
    if explicit is not None:
        # seed 000 §7: "Each chat/run request carries its agentId, and the daemon resolves that
        # definition when it creates the run." seed 000 §8: a failure "remains a failure for
        # that run"; the request is never moved to another agent.
        if explicit not in registry:
            raise UnknownAgentError(explicit, list(registry))
        if not available(explicit):
            raise AgentUnavailableError(
                explicit,
                unavailable_reason(explicit, results.get(explicit)),
                rule="SELECT-EXPLICIT-001",
            )
        return registry[explicit]
    # seed 000 §8: "when agentId is omitted: use the configured agent if it is currently
    # available, otherwise use the first available definition."
    # seed 000 §3 (FIDELITY-RETIRED-001): a retired def is not an adapter id; only an
    # explicit request reaches it.
    current = {agent_id: defn for agent_id, defn in registry.items() if not defn.retired}
    preferred = _given(configured)
    if preferred is not None and preferred in current and available(preferred):
        return current[preferred]
    for agent_id, defn in current.items():
        if available(agent_id):
            return defn
    reasons = {
        agent_id: unavailable_reason(agent_id, results.get(agent_id)) for agent_id in current
    }
    reasons.update(
        {
            agent_id: f"retired ({defn.retired})"
            for agent_id, defn in registry.items()
            if defn.retired
        }
    )
    raise NoAgentAvailableError(reasons)


def next_agent_after_failure(
    failed: AgentDef,
    detection: Sequence[DetectionResult],
    defs: Iterable[AgentDef] | Mapping[str, AgentDef],
) -> AgentDef:
    """The agent a retry of a failed run uses: the same one, never another (SELECT-NOFALLBACK-001).

    seed 000 §8: "OpenDesign does not implement an ordered cross-agent fallback chain." The
    user may pick another agent and send the request again; the engine does not. When the failed
    agent is no longer available the retry fails with :class:`AgentUnavailableError`.
    """
    return select_agent(failed.id, None, detection, defs)
