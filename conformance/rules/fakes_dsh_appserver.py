"""Rules the two-way fake CLIs keep: DeepSeek Harness with the ``open-design``
profile (``fake_clis/dsh.py``) and ``codex app-server`` (``fake_clis/codex_app_server.py``).

A fake is only useful if it tells the truth about the program it stands in for (design
§Fake CLIs, principle 7): it speaks the real protocol, refuses what the real program
refuses, and the engine's own session must run a turn against it as a live process.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

_DSH = ("dsh-profile-jsonl",)
_APP = ("codex-app-server",)

RULES = (
    # --- dsh --------------------------------------------------------------------------
    Rule(
        "FAKE-DSH-HAPPY-001",
        Tier.MANDATORY,
        "Driven live by the dsh session, the fake's happy run gives a working status, "
        "thinking, text, one tool_use and its tool_result, the file written, usage, completed.",
        "seed 001 §6",
        _DSH,
    ),
    Rule(
        "FAKE-DSH-FRAMES-001",
        Tier.MANDATORY,
        "Every frame the dsh fake writes (fault steps aside) validates against the "
        "generation-1 schema; ready comes first and every later frame carries the request id.",
        "seed 001 §6",
        _DSH,
    ),
    Rule(
        "FAKE-DSH-STEPS-001",
        Tier.MANDATORY,
        "Each text or thinking chunk is one frame, a shell or other tool is a tool_call and a "
        "tool_result with is_error, usage names provider and model, api_error is result failed.",
        "seed 001 §9",
        _DSH,
    ),
    Rule(
        "FAKE-DSH-FAULTS-001",
        Tier.MANDATORY,
        "malformed writes a truncated frame line, foreign a frame of another request id, "
        "oversize one frame of exactly the asked bytes, crash mid_line half a frame and exits.",
        "seed 001 §6",
        _DSH,
    ),
    Rule(
        "FAKE-DSH-RESUME-001",
        Tier.MANDATORY,
        "execute.resume_session_id of a saved session continues it (same id, resumed true); an "
        "unknown or corrupt one is result failed with resume_rejected and no new session.",
        "seed 001 §7",
        _DSH,
    ),
    Rule(
        "FAKE-DSH-CANCEL-001",
        Tier.MANDATORY,
        "A cancel for the active request ends the run with result cancelled and the session "
        "kept; a cancel for another request is ignored; stdin EOF before execute exits 0.",
        "seed 001 §10",
        _DSH,
    ),
    Rule(
        "FAKE-DSH-EXEC-001",
        Tier.MANDATORY,
        "The fake reads the prompt from execute and checks the command: an invalid one, an "
        "unknown model or effort is a protocol_error; stderr never holds the prompt.",
        "seed 001 §14",
        _DSH,
    ),
    Rule(
        "FAKE-DSH-ARGV-001",
        Tier.MANDATORY,
        "The dsh fake accepts the def's argv and refuses unknown options, conflicting modes, a "
        "mode without --profile and a prompt argument, exit 1 in commander's words.",
        "seed 001 §6",
        _DSH,
    ),
    Rule(
        "FAKE-DSH-PROBE-001",
        Tier.MANDATORY,
        "--version, --probe and --models answer what the def parses; a missing profile exits 1, "
        "an incompatible one reports protocol_version 2; detection reads all of it.",
        "seed 001 §5",
        _DSH,
    ),
    Rule(
        "FAKE-DSH-PLUGIN-001",
        Tier.MANDATORY,
        "plugin --profile open-design add <tarball> records the tarball and its sha256 and "
        "writes the profile's package.json under the DSH home, after which the probe passes.",
        "seed 001 §4",
        _DSH,
    ),
    # --- codex app-server -------------------------------------------------------------
    Rule(
        "FAKE-APPSERVER-HAPPY-001",
        Tier.MANDATORY,
        "Driven live by the app-server session, the fake's happy run gives the thread id, "
        "reasoning, text deltas, the write as tool_use/tool_result, the file, usage (then the "
        "rate-limit snapshot), completed.",
        "wire §A.3.2",
        _APP,
    ),
    Rule(
        "FAKE-APPSERVER-WIRE-001",
        Tier.MANDATORY,
        "Every message the fake writes omits jsonrpc and validates against the schema codex "
        "0.171.0 generates (responses, notifications, server requests).",
        "wire §A.0",
        _APP,
    ),
    Rule(
        "FAKE-APPSERVER-LIFECYCLE-001",
        Tier.MANDATORY,
        "Requests before initialize get Not initialized, a second initialize Already "
        "initialized, unknown methods -32600; the server outlives a turn and exits 0 at EOF "
        "and on SIGTERM, writing nothing more.",
        "wire §A.3.2",
        _APP,
    ),
    Rule(
        "FAKE-APPSERVER-PATCH-001",
        Tier.MANDATORY,
        "item/fileChange/patchUpdated previews with cwd-relative paths precede the fileChange "
        "item only when the client enabled apply_patch_streaming_events.",
        "seed 000 §5.3",
        _APP,
    ),
    Rule(
        "FAKE-APPSERVER-RESUME-001",
        Tier.MANDATORY,
        "thread/resume continues a saved thread (also one codex exec made) and replays its "
        "usage; an unknown id is no rollout found, a non-UUID invalid session id, -32600.",
        "seed 000 §5.3",
        _APP,
    ),
    Rule(
        "FAKE-APPSERVER-INTERRUPT-001",
        Tier.MANDATORY,
        "turn/interrupt of the active turn answers {} once the turn has stopped, after the "
        "aborted call's account/rateLimits/updated, and completes it as interrupted; without "
        "an active turn it is -32600 no active turn to interrupt, for another turn id "
        "expected active turn id X but found Y, for an unknown thread thread not found.",
        "wire §A.3.2",
        _APP,
    ),
    Rule(
        "FAKE-APPSERVER-ERROR-001",
        Tier.MANDATORY,
        "A model API failure is an error notification and turn/completed failed carrying the "
        "same error, and the server stays up.",
        "wire §A.3.2",
        _APP,
    ),
    Rule(
        "FAKE-APPSERVER-STEPS-001",
        Tier.MANDATORY,
        "Shell steps are commandExecution items, other tools mcpToolCall, is_error fails them; "
        "malformed, foreign, oversize and crash mid_line write their faults.",
        "wire §A.3.2",
        _APP,
    ),
    Rule(
        "FAKE-APPSERVER-APPROVAL-001",
        Tier.MANDATORY,
        "Under approvalPolicy untrusted commands and file changes wait for the client's "
        "decision; a decline leaves the item declined; never asks nothing.",
        "seed 000 §10",
        _APP,
    ),
    Rule(
        "FAKE-APPSERVER-SANDBOX-001",
        Tier.MANDATORY,
        "A write under the read-only sandbox is rejected before it runs: no file and no "
        "fileChange item.",
        "seed 000 §10",
        _APP,
    ),
)
