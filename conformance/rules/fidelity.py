"""Engine fidelity: a run behaves as the host's own run would (seed 000, seed 002).

Capabilities reach real runs (seed 002 §5.5); enforced by :mod:`harness.detect`
(:class:`~harness.detect.CapabilityCache`, :func:`~harness.detect.capabilities_for_run`),
:mod:`harness.runner.prepare` and the run check in :mod:`conformance.checks.runs`;
tests in ``tests/runner/test_capabilities.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        id="FIDELITY-CAPS-001",
        tier=Tier.MANDATORY,
        statement=(
            "build_args reads the help-probe findings of the executable the run spawns, kept "
            "per executable stamp (a replaced binary is probed again): a flag its help does "
            "not list is never passed, one it lists and the def gates on is."
        ),
        citation="seed 002 §5.5",
    ),
)
