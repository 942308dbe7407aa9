"""Live mode network rules: a real CLI runs sealed, and whatever it tries is recorded."""

from __future__ import annotations

from conformance.rules import Rule, Tier

_RELIABILITY = "design §Reliability"

RULES = (
    Rule(
        id="LIVE-NET-001",
        tier=Tier.MANDATORY,
        statement="Every launch of a real CLI in live mode (the version probe included) runs "
        "in a network namespace with loopback only, every attempt to reach another address "
        "or to resolve a name is recorded, and a run with any such attempt fails; where no "
        "namespace can be made the verdict says the run was not sealed.",
        citation=_RELIABILITY,
    ),
)
