"""Rules of the dsh-profile-jsonl two-way session (seed 001 §5-§10, §14; ref §2.8).

Enforced by ``harness/protocols/dsh.py`` (session) and
``harness/protocols/dsh_frames.py`` (frames, ``harness/schemas/dsh-profile-v1.schema.json``);
proved by ``tests/protocols/test_dsh.py`` and ``tests/protocols/test_dsh_frames.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

_DSH = ("dsh-profile-jsonl",)


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(rule_id, Tier.MANDATORY, statement, citation, _DSH)


RULES = (
    # -- framing (seed 001 §6 "Strictness rules"; ref §2.8 strict JSONL stream) --
    _rule(
        "DSH-FRAME-LINE-001",
        "Every non-empty stdout line is exactly one frame; blank lines are skipped and a frame "
        "split over several lines fails the run.",
        "seed 001 §6",
    ),
    _rule(
        "DSH-FRAME-TOOLARGE-001",
        "A line, or an unterminated buffer, longer than max_frame_bytes fails the run with "
        "DSH_PROFILE_FRAME_TOO_LARGE as soon as the limit is passed.",
        "ref §2.8",
    ),
    _rule(
        "DSH-FRAME-MALFORMED-001",
        "A line that is not valid JSON fails the run with DSH_PROFILE_MALFORMED_FRAME; it is "
        "never ignored.",
        "seed 001 §6",
    ),
    _rule(
        "DSH-FRAME-INVALID-001",
        "Valid JSON that does not match generation 1 fails the run with "
        "DSH_PROFILE_INVALID_FRAME and a detail that names the field, never its value.",
        "seed 001 §6",
    ),
    _rule(
        "DSH-FRAME-TYPE-001",
        "A frame type outside generation 1 fails the run as an invalid frame.",
        "ref §2.8",
    ),
    _rule(
        "DSH-FRAME-TRUNCATED-001",
        "At end of output an unterminated final line that is not a complete JSON value fails "
        "with DSH_PROFILE_TRUNCATED_FRAME; a complete final value without newline is a frame.",
        "ref §2.8",
    ),
    _rule(
        "DSH-FRAME-FIRSTERROR-001",
        "The first stream or protocol error is terminal: no event, frame or control follows it.",
        "ref §2.8",
    ),
    _rule(
        "DSH-SCHEMA-001",
        "Every runtime frame the session accepts and every host command it writes validates "
        "against dsh-profile-v1.schema.json, and the hand-written validator agrees with it.",
        "seed 001 §6",
    ),
    # -- handshake and execute (seed 001 §5, §6, §7) ---------------------------------
    _rule(
        "DSH-PROBE-001",
        "The --probe output is one probe frame with runtime open-design, protocol_version 1, "
        "a plugin_version and all generation-1 capabilities.",
        "seed 001 §5",
    ),
    _rule(
        "DSH-READY-001",
        "The host writes nothing until the ready frame; any other first frame fails the run.",
        "seed 001 §7",
    ),
    _rule(
        "DSH-READY-002",
        "The ready frame is validated like the probe frame (runtime, protocol version, plugin "
        "version, compatibility generation, capabilities).",
        "seed 001 §5",
    ),
    _rule(
        "DSH-READY-003",
        "A ready or probe frame after the handshake fails the run (unexpected identity frame).",
        "ref §2.8",
    ),
    _rule(
        "DSH-EXEC-001",
        "After ready the host writes exactly one execute command with request_id, an absolute "
        "cwd, the prompt and mcp_servers; resume_session_id only when resuming.",
        "seed 001 §6",
    ),
    _rule(
        "DSH-EXEC-MODEL-001",
        "The execute model is parsed from provider/model; default or empty omits it and a "
        "malformed model is a typed error before anything is written.",
        "ref §2.8",
    ),
    # -- request ownership and session order (seed 001 §6) ------------------------------
    _rule(
        "DSH-REQID-001",
        "Frames for another request_id are ignored and counted; they cannot affect the run.",
        "seed 001 §6",
    ),
    _rule(
        "DSH-REQID-002",
        "After ready every run-scoped frame must carry a request_id; one without it is invalid.",
        "seed 001 §6",
    ),
    _rule(
        "DSH-SESSION-ORDER-001",
        "The session frame must arrive before content, tool, usage and completed result frames.",
        "seed 001 §6",
    ),
    _rule(
        "DSH-SESSION-ONCE-001",
        "A second session frame fails the run.",
        "ref §2.8",
    ),
    # -- resume (seed 001 §6, §7) -----------------------------------------------------
    _rule(
        "DSH-RESUME-001",
        "On resume the session frame must carry the requested id with resumed true, else "
        "DSH_PROFILE_RESUME_MISMATCH.",
        "seed 001 §6",
    ),
    _rule(
        "DSH-RESUME-002",
        "A missing or corrupt resume target ends in DSH_PROFILE_RESUME_REJECTED and never in a "
        "new session.",
        "seed 001 §6",
    ),
    _rule(
        "DSH-RESUME-003",
        "A run that did not ask to resume fails when the session frame says resumed true.",
        "ref §2.8",
    ),
    _rule(
        "DSH-RESUME-004",
        "A result with resume_rejected true fails a run that did not ask to resume.",
        "seed 001 §6",
    ),
    # -- terminal result (seed 001 §6, §9) --------------------------------------------
    _rule(
        "DSH-RESULT-ONCE-001",
        "Exactly one terminal result is accepted; any output after it is counted and reported "
        "as an error event.",
        "seed 001 §6",
    ),
    _rule(
        "DSH-RESULT-MISSING-001",
        "End of output without a terminal result fails with DSH_PROFILE_MISSING_RESULT.",
        "seed 001 §6",
    ),
    _rule(
        "DSH-RESULT-SESSION-001",
        "The result session_id must equal the established session id, else "
        "DSH_PROFILE_SESSION_MISMATCH.",
        "ref §2.8",
    ),
    _rule(
        "DSH-RESULT-FAILED-001",
        "A failed result must carry error and fails the run with that error's code.",
        "seed 001 §9",
    ),
    _rule(
        "DSH-RESULT-CANCELLED-001",
        "A cancelled result without a host cancel fails the run.",
        "ref §10.1",
    ),
    _rule(
        "DSH-PROTOCOL-ERROR-001",
        "A protocol_error frame for this run (or for no request) fails it with the frame's code.",
        "seed 001 §6",
    ),
    # -- event normalization (seed 001 §9) ---------------------------------------------
    _rule(
        "DSH-EVENT-SESSION-001",
        "A session frame yields status working with the session id.",
        "ref §2.8",
    ),
    _rule(
        "DSH-EVENT-THINKING-001",
        "A thinking block yields thinking_start, then non-empty thinking_delta, and "
        "thinking_end where the first frame of another kind follows it (or before the run "
        "finishes); later thinking opens a new block.",
        "seed 001 §9",
    ),
    _rule(
        "DSH-EVENT-TEXT-001",
        "Text frames yield text_delta for non-empty content.",
        "seed 001 §9",
    ),
    _rule(
        "DSH-EVENT-TOOL-001",
        "tool_call yields tool_use with the parsed argument object (or raw text); tool_result "
        "yields tool_result with the call id.",
        "seed 001 §9",
    ),
    _rule(
        "DSH-EVENT-USAGE-001",
        "usage yields a usage event with provider, model and normalized token counts.",
        "ref §2.8",
    ),
    _rule(
        "DSH-EVENT-COMPLETE-001",
        "A completed result closes stdin and finishes the run completed; nothing else does.",
        "seed 001 §9",
    ),
    # -- cancellation (seed 001 §10, §7) -----------------------------------------------
    _rule(
        "DSH-CANCEL-ORDER-001",
        "Cancel writes the cancel command for the active request, then waits a bounded grace.",
        "seed 001 §10",
    ),
    _rule(
        "DSH-CANCEL-ACK-001",
        "A cancelled result within the grace closes stdin and finishes the run cancelled.",
        "seed 001 §10",
    ),
    _rule(
        "DSH-CANCEL-GRACE-001",
        "When the grace passes without a result, stdin is closed and the process tree is "
        "terminated, and the run finishes cancelled.",
        "seed 001 §10",
    ),
    _rule(
        "DSH-CANCEL-BEFORE-READY-001",
        "A cancel before ready finishes the run cancelled without writing execute.",
        "ref §2.8",
    ),
    _rule(
        "DSH-CANCEL-AFTER-FINISH-001",
        "A cancel after the run finished, or a second cancel, is a no-op.",
        "seed 001 §10",
    ),
    _rule(
        "DSH-CANCEL-SESSION-001",
        "A validated session id is kept after cancellation so a later run may resume it.",
        "seed 001 §7",
    ),
    # -- security and robustness (seed 001 §6, §14; design principle 4) --------------
    _rule(
        "DSH-SEC-001",
        "Errors never contain the prompt, raw tool output or frame text.",
        "seed 001 §14",
    ),
    _rule(
        "DSH-ROBUST-001",
        "Arbitrary bytes never raise out of the session; they are buffered or end in a typed "
        "failure.",
        "seed 001 §6",
    ),
    _rule(
        "DSH-CHUNK-001",
        "Any chunking of the same stdout bytes yields identical events, frames and controls.",
        "seed 001 §6",
    ),
)
