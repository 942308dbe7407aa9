"""Rules the two-way protocol fakes keep: the ACP agents (amr, devin, hermes, kimi,
kiro, kilo, reasonix, trae-cli, vibe) and pi / prime-agent (``fake_clis/acp/``,
``fake_clis/pi_rpc.py``).

A two-way fake is the agent side of the protocol. It is only useful if it tells the truth:
it speaks the real frame shapes (validated against the vendored ACP schema), waits for the
client where the real agent waits (permission requests, extension dialogs, cancellation),
refuses the argv the real CLI refuses, and the engine's own session reads it back.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

_ACP = ("acp-json-rpc",)
_PI = ("pi-rpc",)

RULES = (
    # --- ACP -----------------------------------------------------------------------------
    Rule(
        "FAKE-ACP-001",
        Tier.MANDATORY,
        "Driven live by the engine's ACP session, every ACP fake's happy run gives thinking, "
        "text, one tool_use and tool_result for the write (the file written in the cwd), usage "
        "and a completed turn.",
        "wire §A.1.2; wire §A.1.3; ref §2.6",
        _ACP,
    ),
    Rule(
        "FAKE-ACP-002",
        Tier.MANDATORY,
        "Every frame an ACP fake writes validates against the vendored ACP v1 schema for its "
        "method; Kiro's turn_end session update is the one documented exception.",
        "wire §A.1.1; ref §2.6",
        _ACP,
    ),
    Rule(
        "FAKE-ACP-003",
        Tier.MANDATORY,
        "The ACP fakes answer initialize with protocolVersion 1, loadSession, agentInfo and "
        "authMethods, record session/new params, and offer the model as a config option "
        "(kilo, reasonix) or a models block (the others), each set through its own method.",
        "wire §A.1.2; ref §2.6",
        _ACP,
    ),
    Rule(
        "FAKE-ACP-004",
        Tier.MANDATORY,
        "An ACP fake refuses an MCP server env of the wrong shape for its agent (a map for "
        "reasonix, an array for the others) with -32602; kimi refuses stdio servers from "
        "0.37.0.",
        "ref §2.6; ref §7",
        _ACP,
    ),
    Rule(
        "FAKE-ACP-005",
        Tier.MANDATORY,
        "session/load of a saved session replays its history as session/update before "
        "answering and records the resume; an unknown session id is JSON-RPC error -32002.",
        "wire §A.1.2; wire §A.1.3",
        _ACP,
    ),
    Rule(
        "FAKE-ACP-006",
        Tier.MANDATORY,
        "Before a write an ACP fake asks session/request_permission (allow_once, allow_always, "
        "reject_once) and waits: allowed writes the file, rejected or cancelled fails the tool "
        "and writes nothing; auto-approving postures do not ask.",
        "wire §A.1.2; seed 000 §10",
        _ACP,
    ),
    Rule(
        "FAKE-ACP-007",
        Tier.MANDATORY,
        "A session/cancel notification stops an ACP fake's stream and the pending prompt is "
        "answered with stopReason cancelled after the last update.",
        "wire §A.1.3",
        _ACP,
    ),
    Rule(
        "FAKE-ACP-008",
        Tier.MANDATORY,
        "The ACP fakes render every scenario step kind (api_error as a JSON-RPC error to the "
        "prompt, malformed, foreign session, oversize line, crash mid-line, the common faults) "
        "and the engine reads each as the format requires.",
        "wire §A.0; ref §2.6; design §Fake CLIs",
        _ACP,
    ),
    Rule(
        "FAKE-ACP-009",
        Tier.MANDATORY,
        "An ACP fake exits on stdin EOF with the scenario's exit code, and keeps running after "
        "EOF when the scenario says ignore_stdin_close.",
        "seed 000 §5.4; design §Fake CLIs",
        _ACP,
    ),
    Rule(
        "FAKE-ACP-010",
        Tier.MANDATORY,
        "Each ACP fake accepts its def's build_args and refuses unknown flags and flags or "
        "arguments of another mode with its CLI's parser message and exit code.",
        "seed 000 §5.4; seed 000 §5.9; design §Principles",
        _ACP,
    ),
    Rule(
        "FAKE-ACP-011",
        Tier.MANDATORY,
        "The ACP fakes answer the probes: a version line the def's policy accepts, help, and "
        "the amr model list in the shape the def's parser reads.",
        "seed 002 §5.4; ref §8.3",
        _ACP,
    ),
    Rule(
        "FAKE-ACP-012",
        Tier.MANDATORY,
        "The amr fake answers session/new with a per-process ACP sessionId and the durable "
        "openCodeSessionId, loads by the durable id under a new ACP id (both ids answered), "
        "and fails a load of a missing session with -32600 'session gone' (resume_failed).",
        "seed 000 §12 (AMR compaction continuation)",
        _ACP,
    ),
    Rule(
        "FAKE-ACP-013",
        Tier.MANDATORY,
        "The amr fake's compaction step fails the prompt with structured (or legacy) "
        "continuation evidence after saving the turn; _session/continue is unsafe unless "
        "this process loaded the session, the interrupted process is gone, the cursor is the "
        "saved one and no prompt is sent, and then finishes the same turn once without "
        "re-running tools; other fakes refuse the scenario with exit 2.",
        "seed 000 §12 (AMR compaction continuation)",
        _ACP,
    ),
    # --- pi and prime-agent ----------------------------------------------------------------
    Rule(
        "FAKE-PI-001",
        Tier.MANDATORY,
        "Driven live by the engine's pi-rpc session, the pi and prime-agent fakes' happy run "
        "gives thinking, text, one tool_use and tool_result for the write (file written), "
        "usage and agent_end; the process stays alive until stdin closes, then exits 0.",
        "seed 000 §5.10; wire §A.2; ref §2.7",
        _PI,
    ),
    Rule(
        "FAKE-PI-002",
        Tier.MANDATORY,
        "The pi fakes speak rpc.md's shapes: responses echo the command id, events carry no "
        "id, message_update carries assistantMessageEvent deltas, turn_end carries "
        "usage{input, output, cacheRead, cacheWrite, totalTokens, cost.total} and stopReason.",
        "wire §A.2; ref §2.7",
        _PI,
    ),
    Rule(
        "FAKE-PI-003",
        Tier.MANDATORY,
        "A pi fake run writes exactly one session file (pi: <cwd>/.pi/sessions, prime-agent: "
        "~/.prime/agent/sessions); new_session(parentSession) succeeds only for an existing "
        "file; prime-agent --resume continues a saved id and fails on an unknown one.",
        "seed 000 §5.10; ref §2.7",
        _PI,
    ),
    Rule(
        "FAKE-PI-004",
        Tier.MANDATORY,
        "An abort command stops a pi fake's run: the turn ends aborted, agent_end follows, "
        "then the abort response.",
        "ref §2.7; ref §10.1",
        _PI,
    ),
    Rule(
        "FAKE-PI-005",
        Tier.MANDATORY,
        "A confirm tool step makes the pi fake send extension_ui_request(confirm) and wait for "
        "the matching extension_ui_response; confirmed runs the tool, anything else blocks it.",
        "seed 000 §5.10; ref §2.7",
        _PI,
    ),
    Rule(
        "FAKE-PI-006",
        Tier.MANDATORY,
        "The pi fakes render every scenario step kind (api_error with pi's auto-retry, "
        "malformed, foreign response, oversize line, crash mid-line, the common faults) and "
        "the engine reads each as the format requires.",
        "wire §A.2; ref §2.7; design §Fake CLIs",
        _PI,
    ),
    Rule(
        "FAKE-PI-007",
        Tier.MANDATORY,
        "The pi fakes accept their defs' build_args and refuse what pi's parser refuses "
        "(unknown option, unknown model: Error: ... exit 1; a bad thinking level only warns).",
        "seed 000 §5.10; ref §8.3",
        _PI,
    ),
    Rule(
        "FAKE-PI-008",
        Tier.MANDATORY,
        "The pi fakes answer the probes: version, help, and a model table (pi --list-models, "
        "prime-agent model list) that the def's own parser reads.",
        "seed 000 §5.10; ref §8.3",
        _PI,
    ),
)
