"""Rules of the pinned ``@open-design/dsh-runtime`` profile bundle itself.

Seed 001 §3 (the bundle is a thin host adapter over Harness services), §5 (probe), §6 (the
stdio protocol and its strictness rules), §7 (cold resume), §10 (cancellation). Enforced by
``harness/profile_bundle/package/`` (packed by ``build_bundle.py``); proved by
``tests/dsh_setup/test_bundle_runtime.py`` (stub runtime services under plain Node) and
``tests/live/test_dsh_bundle_live.py`` (the real ``dsh`` when it is installed).
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

_DSH = ("dsh-profile-jsonl",)


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(rule_id, Tier.MANDATORY, statement, citation, _DSH)


RULES = (
    _rule(
        "DSHBUNDLE-PLUGIN-001",
        "The bundle tarball is a DeepSeek Harness plugin bundle (package.json declares "
        "dsh.bundle.patch; the patch inserts the open-design-runtime plugin) that answers "
        "--probe with the generation-1 identity, --models with the runtime's catalog, and "
        "refuses any other app argument with a message naming it.",
        "seed 001 §5",
    ),
    _rule(
        "DSHBUNDLE-STDIO-001",
        "Under --stdio the bundle writes ready, reads one execute, answers session, projects "
        "the runtime's durable events as thinking/text/tool_call/tool_result/usage frames "
        "carrying the request id, and ends with exactly one result; a bad host command, a "
        "cwd other than the process directory or an unadvertised model is a protocol_error.",
        "seed 001 §6",
    ),
    _rule(
        "DSHBUNDLE-RESUME-001",
        "A resume_session_id is resumed through the runtime's own agents.resume service with "
        "the same id and resumed: true; a missing, foreign-cwd or unreadable target is a "
        "failed result with resume_rejected: true, and no new session is created.",
        "seed 001 §7",
    ),
    _rule(
        "DSHBUNDLE-CANCEL-001",
        "A cancel naming the active request cancels the runtime's agent and the run ends "
        "with one result: cancelled; a cancel for another request changes nothing.",
        "seed 001 §10",
    ),
)
