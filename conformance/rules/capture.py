"""Rules of replaying a captured stdout through a two-way session (``harness parse``).

Enforced by ``harness/capture/driver.py`` (format-neutral driver),
``harness/capture/adapters.py`` (one adapter per two-way format) and
``harness/commands/parse.py`` (output and exit code); proved by
``tests/capture/test_driver.py`` and ``tests/capture/test_adapters.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier
from harness.formats import two_way_formats

_TWO_WAY = two_way_formats()


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(rule_id, Tier.MANDATORY, statement, citation, _TWO_WAY)


RULES = (
    _rule(
        "CAPTURE-FRAMING-001",
        "A capture is split by the shared line decoder and fed line by line, a final "
        "unterminated line without its newline; how the bytes are chunked never changes the "
        "replay.",
        "wire §A.0",
    ),
    _rule(
        "CAPTURE-IDORDER-001",
        "A captured response whose id is not one of the session's outstanding request ids is "
        "fed under the id of the session's oldest outstanding request, and the rewrite is "
        "reported.",
        "design §Recordings",
    ),
    _rule(
        "CAPTURE-IDORDER-002",
        "When the kind of request a response answers is known (pi command, host input), it "
        "answers only an outstanding request of that kind; a response to a request the "
        "session never sent cannot answer another one.",
        "wire §A.2",
    ),
    _rule(
        "CAPTURE-HOSTINPUT-001",
        "With host input the replay follows the recorded client's request: prompt, cwd, "
        "request id, model and the resume or load of an existing session.",
        "design §Recordings",
    ),
    _rule(
        "CAPTURE-SYNTH-001",
        "Without host input the request is synthesized from the capture: the dsh request_id of "
        "the first run-scoped frame, and a resume when the capture shows one.",
        "seed 001 §6",
    ),
    _rule(
        "CAPTURE-FRAMES-001",
        "With host input the session's frames are compared with the recorded client's first "
        "turn, ignoring ids, paths and timestamps; each difference is reported by index and "
        "fails the command.",
        "design §Recordings",
    ),
    _rule(
        "CAPTURE-TURNS-001",
        "A capture holding more than one turn is replayed whole, as a live run reads it; the "
        "lines after the first turn's finish are reported, and are an error only where the "
        "session judges them one.",
        "design §Recordings",
    ),
    _rule(
        "CAPTURE-FAIL-001",
        "A capture the session cannot parse prints the events recovered before the failure, "
        "then the typed reason, and exits non-zero.",
        "design §Principles",
    ),
    _rule(
        "CAPTURE-EXIT-001",
        "harness parse exits 0 when a replayed run completed or was cancelled without frame "
        "differences, 1 when it failed or frames differ, and 2 for bad usage or input.",
        "design §Conformance model",
    ),
)
