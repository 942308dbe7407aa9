"""Rules of the state machines: sessions and the runner's stop ladder as transition tables.

Enforced by ``harness/protocols/machine.py`` (the tables), ``harness/protocols/core.py``
(the session core) and ``harness/runner/stop.py``; proved by ``tests/protocols/``
(``test_machine.py`` and the stateful ``test_*_machine.py`` tests) and
``tests/runner/test_stop.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        "MACHINE-MOVE-001",
        Tier.MANDATORY,
        "Every phase change of a session or of the runner's stop ladder is an entry of its one "
        "transition table; any other move raises LocalProtocolError naming the machine, the "
        "phase and the trigger.",
        "design §Principles",
        (),
    ),
    Rule(
        "MACHINE-END-001",
        Tier.MANDATORY,
        "A session ends exactly once: a terminal phase, one status, one Finished control after "
        "CloseStdin and Terminate, and no frame or control after it, whatever the host and the "
        "peer do.",
        "design §Principles",
        (),
    ),
    Rule(
        "MACHINE-DIAGRAM-001",
        Tier.MANDATORY,
        "The state diagrams in docs/design/sessions.md are generated from the transition "
        "tables; a diagram that differs from its table fails the check.",
        "design §Principles",
        (),
    ),
)
