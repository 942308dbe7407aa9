"""Rules of the acp-json-rpc two-way session (seed 000 §3, §5.4, §5.9; seed 002 §7.4,
§8.1; ref §2.6, §2.9, §10.1; wire §A.0, §A.1).

Enforced by ``harness/protocols/acp/`` (the session; ``updates.py`` the update
mapping, ``schema.py`` the vendored-schema validation) and ``jsonrpc.py``
(JSON-RPC framing); proved by ``tests/protocols/test_acp.py``,
``test_acp_updates.py``, ``test_acp_schema.py`` and ``test_jsonrpc.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

_ACP = ("acp-json-rpc",)


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(rule_id, Tier.MANDATORY, statement, citation, _ACP)


def _capability(rule_id: str, statement: str, citation: str, capability: str) -> Rule:
    return Rule(rule_id, Tier.CAPABILITY, statement, citation, _ACP, capability)


RULES = (
    # -- framing (wire §A.0; ref §2.6, §2.9) ----------------------------------------------
    _rule(
        "ACP-FRAME-001",
        "Non-JSON stdout lines are ignored and counted in non_json_lines; they never fail the run.",
        "ref §2.6",
    ),
    _rule(
        "ACP-FRAME-002",
        "A pretty-printed JSON message is reassembled within 256 lines and 128000 characters; "
        "a complete one-line message is never absorbed, and lines of a failed aggregate are "
        "re-read one by one.",
        "ref §2.9",
    ),
    _rule(
        "ACP-FRAME-003",
        "Lines up to max_line_bytes (default 16 MiB) are processed, including 600 KB updates; a "
        "longer line fails the run with ACP_FRAME_TOO_LARGE.",
        "wire §A.0",
    ),
    _rule(
        "ACP-FRAME-004",
        "Every frame written is one line of compact UTF-8 JSON ending in LF, with U+2028, "
        "U+2029 and U+0085 escaped.",
        "wire §A.0",
    ),
    _rule(
        "ACP-CHUNK-001",
        "Any chunking of the agent's stdout gives identical events, frames and controls.",
        "design §Principles",
    ),
    _rule(
        "ACP-ROBUST-001",
        "Arbitrary bytes never raise out of receive or end_of_output; every run ends in exactly "
        "one Finished control.",
        "design §Principles",
    ),
    # -- JSON-RPC (wire §A.0, §A.1.2; ref §2.6) -------------------------------------------
    _rule(
        "ACP-RPC-001",
        "Frames carry jsonrpc 2.0 (omitted in the codex app-server dialect); incoming values "
        "are classified as request, notification, response, error response or invalid.",
        "wire §A.0",
    ),
    _rule(
        "ACP-RPC-002",
        "Our request ids are sequential integers from 1; responses correlate by exact id; "
        "string and integer agent request ids are echoed verbatim.",
        "ref §2.6",
    ),
    _rule(
        "ACP-RPC-003",
        "Every agent request other than session/request_permission is answered with error "
        "-32601 and counted in unsupported_requests; no request is left unanswered.",
        "wire §A.1.2",
    ),
    # -- schema (wire §A.1.1) ---------------------------------------------------------------
    _rule(
        "ACP-SCHEMA-001",
        "Every frame the session writes validates against the vendored ACP v1 schema $def "
        "bound by x-method; a frame that does not is a LocalProtocolError.",
        "wire §A.1.1",
    ),
    _rule(
        "ACP-SCHEMA-002",
        "Every frame received is validated; a violation is counted in schema_violations and "
        "reported as status schema_violation without failing the run.",
        "wire §A.1.1",
    ),
    _rule(
        "ACP-SCHEMA-003",
        "A method only in schema.unstable.json is validated against it; session/set_model, in "
        "neither file, against a local sessionId+modelId shape.",
        "wire §A.1.1",
    ),
    # -- handshake (ref §2.6 steps 1-4; seed 002 §7.4) -----------------------------------
    _rule(
        "ACP-INIT-001",
        "initialize is written first with protocolVersion 1, clientCapabilities fs read/write "
        "false and terminal false, and clientInfo; nothing else is written before its result.",
        "ref §2.6",
    ),
    _rule(
        "ACP-SESSION-001",
        "After the initialize result the session writes session/new with the absolute cwd and "
        "mcpServers.",
        "seed 002 §7.4",
    ),
    _rule(
        "ACP-SESSION-002",
        "With a resume session id and loadSession advertised, session/load carries sessionId, "
        "cwd and the same mcpServers as session/new.",
        "ref §2.6",
    ),
    _rule(
        "ACP-SESSION-003",
        "A resume against an agent without agentCapabilities.loadSession fails with "
        "ACP_LOAD_UNSUPPORTED; a new session is never started instead.",
        "wire §A.1.2",
    ),
    _rule(
        "ACP-RESULT-001",
        "An initialize or session/new result without the fields the flow needs (sessionId) "
        "fails the run with ACP_INVALID_RESPONSE.",
        "ref §2.6",
    ),
    _rule(
        "ACP-MODEL-001",
        "A requested non-default model is set with session/set_config_option when a "
        "model|models|modelid|modelids option exists, else with session/set_model.",
        "ref §2.6",
    ),
    _rule(
        "ACP-MODEL-002",
        "A -32603 or -32601 error to the model request yields status model=default and the "
        "prompt is still sent; other model errors fail the run.",
        "ref §2.6",
    ),
    _capability(
        "ACP-MODEL-003",
        "With acp.model_unavailable_error_code, any error to the model request fails the run "
        "with that code (not retryable) and the prompt is never sent; there is no fallback to "
        "the default model.",
        "ref §2.6",
        "acp.model_unavailable_error_code",
    ),
    _rule(
        "ACP-PROMPT-001",
        "session/prompt carries the sessionId and one text block, then status "
        "waiting_for_first_output is emitted with the session id.",
        "ref §2.6",
    ),
    # -- MCP servers (ref §2.6; seed 002 §8.1) -------------------------------------------
    _rule(
        "ACP-MCP-001",
        "A stdio MCP server's env is sent as [{name, value}] in ARRAY format and as a map in "
        "MAP format, converting from either input shape; other transports pass through.",
        "seed 002 §8.1",
    ),
    _capability(
        "ACP-MCP-002",
        "Stdio MCP servers are withheld when agentInfo.version is numerically >= the def's "
        "acp.stdio_mcp_removed_in_version.",
        "ref §2.6",
        "acp.stdio_mcp_removed_in_version",
    ),
    # -- session/update mapping (ref §2.6 newer table) ----------------------------------
    _rule(
        "ACP-UPDATE-TEXT-001",
        "Message chunks are deduplicated as cumulative snapshots; the first visible text emits "
        "status streaming with ttft_ms, then text_delta.",
        "ref §2.6",
    ),
    _rule(
        "ACP-UPDATE-EXTRACT-001",
        "Update text is the first non-empty text under content, text, delta, message, output, "
        "answer, value, body, parts, choices, at most 4 levels deep, arrays concatenated.",
        "ref §2.6",
    ),
    _rule(
        "ACP-UPDATE-THOUGHT-001",
        "Thought chunks emit thinking_start once, then thinking_delta.",
        "ref §2.6",
    ),
    _rule(
        "ACP-UPDATE-TOOL-001",
        "tool_call and tool_call_update are accumulated per toolCallId into exactly one "
        "tool_use and one tool_result at a terminal status, keeping the agent's toolCallId.",
        "ref §2.6",
    ),
    _rule(
        "ACP-UPDATE-TOOL-002",
        "The tool name comes from a recognized kind (edit->Edit, write->Write, read->Read, "
        "execute->Bash, search->Grep, fetch->Fetch), else the title-cased kind, name or title.",
        "ref §2.6",
    ),
    _rule(
        "ACP-UPDATE-TOOL-003",
        "Tool input is rawInput plus file_path from locations/content, rawInput or the title; "
        "the result is rawOutput, else content text or diff, truncated at 8000 characters.",
        "ref §2.6",
    ),
    _rule(
        "ACP-UPDATE-TOOL-004",
        "Think-only tools (kind, name or title think/thought/reason/reasoning) are never "
        "transcribed.",
        "ref §2.6",
    ),
    _rule(
        "ACP-UPDATE-TOOL-005",
        "Open tools are flushed at the prompt result with is_error false, and on failure or "
        "cancel with is_error true.",
        "ref §2.6",
    ),
    _rule(
        "ACP-UPDATE-STATUS-001",
        "Other non-chunk updates emit status labelled with sessionUpdate; usage_update, "
        "session_info_update and available_commands_update are ignored.",
        "ref §2.6",
    ),
    _rule(
        "ACP-UPDATE-REPLAY-001",
        "Content updates before the prompt is written (session/load history replay) and updates "
        "for another sessionId are counted, never transcribed.",
        "wire §A.1.2",
    ),
    # -- the turn (ref §2.6 step 5) --------------------------------------------------------
    _rule(
        "ACP-TURN-001",
        "The session/prompt result ends the turn: tools flushed, usage with the normalized "
        "usage and stopReason, CloseStdin, Terminate after the shutdown grace, Finished.",
        "ref §2.6",
    ),
    _capability(
        "ACP-TURN-002",
        "With acp.turn_end_completes_prompt, a turn_end session update completes the prompt.",
        "ref §2.6",
        "acp.turn_end_completes_prompt",
    ),
    _rule(
        "ACP-USAGE-001",
        "Usage keys are normalized from camelCase or snake_case to input_tokens, output_tokens, "
        "cached_read_tokens, cache_read_input_tokens, cache_creation_input_tokens, "
        "cached_write_tokens, thought_tokens and total_tokens.",
        "ref §2.6",
    ),
    # -- permissions (ref §2.6; wire §A.1.3) ------------------------------------------------
    _rule(
        "ACP-PERM-001",
        "session/request_permission is answered selected with optionId approve_for_session, "
        "else the first allow_always, else the first allow_once option.",
        "ref §2.6",
    ),
    _rule(
        "ACP-PERM-002",
        "A permission request with no acceptable option is answered cancelled and fails the run "
        "with ACP_PERMISSION_UNHANDLED.",
        "ref §2.6",
    ),
    _rule(
        "ACP-PERM-003",
        "After our cancel, permission requests are answered with outcome cancelled.",
        "wire §A.1.3",
    ),
    # -- errors, exit, watchdog (ref §2.6) ------------------------------------------------
    _rule(
        "ACP-ERROR-001",
        "A JSON-RPC error to one of our requests fails the run with AGENT_EXECUTION_FAILED, "
        "'json-rpc id <n>: <message>' and retryable inferred from data or text.",
        "ref §2.6",
    ),
    _rule(
        "ACP-ERROR-002",
        "A -32603 error on an id that is not outstanding is ignored, and so is everything after "
        "the run finished.",
        "ref §2.6",
    ),
    _rule(
        "ACP-EXIT-001",
        "End of output before completion fails the run with 'ACP session exited before "
        "completion'.",
        "ref §2.6",
    ),
    _rule(
        "ACP-TIMEOUT-001",
        "A stage watchdog, reset on every frame written and line read, fails the run with "
        "'ACP <stage> timed out after <ms>ms' when a tick passes its deadline.",
        "ref §2.6",
    ),
    # -- cancellation (ref §2.6 Abort, §10.1; wire §A.1.3) ---------------------------------
    _rule(
        "ACP-CANCEL-001",
        "cancel flushes open tools as errors, sends session/cancel as a notification and ends "
        "cancelled on the stopReason cancelled prompt result.",
        "ref §10.1",
    ),
    _rule(
        "ACP-CANCEL-002",
        "When the cancel grace passes without the prompt result, the run ends cancelled with "
        "CloseStdin and Terminate(0).",
        "ref §10.1",
    ),
    _rule(
        "ACP-CANCEL-003",
        "cancel is idempotent; before the prompt is written it ends the run at once.",
        "ref §2.6",
    ),
    # -- AMR native continuation (seed 000 "AMR compaction continuation (ACP extension v1)") --
    _rule(
        "ACP-AMR-CONTINUE-001",
        "A prompt answered with complete OPENCODE_COMPACTION_CONTINUATION_INCOMPLETE evidence "
        "for the session it opened, after every tool call reached a terminal status, fails "
        "that process (not retryable) and offers one continuation: a new session that loads "
        "the durable session and sends _session/continue with only {sessionId, continuation "
        "cursor}, never the prompt again.",
        "seed 000 §12 (AMR compaction continuation)",
    ),
    _rule(
        "ACP-AMR-CONTINUE-002",
        "No continuation unless the def names the runtime whose evidence it accepts "
        "(acp.native_continue_runtime) and initialize advertised agentCapabilities.loadSession "
        "and _meta['com.open-design.nativeSessionContinue'].version == 1, in the interrupted "
        "process and again in the continuing one (an unsupported version fails the run).",
        "seed 000 §12 (AMR compaction continuation)",
    ),
    _rule(
        "ACP-AMR-CONTINUE-003",
        "Missing or changed history stops with failure: evidence naming another session, a "
        "session/load error, or a load answering another openCodeSessionId; never a new "
        "session and never the prompt.",
        "seed 000 §12 (AMR compaction continuation)",
    ),
    _rule(
        "ACP-AMR-CONTINUE-004",
        "At most one native continuation per run: an interruption of the continuation fails "
        "the run (exhausted recovery).",
        "seed 000 §12 (AMR compaction continuation)",
    ),
    _rule(
        "ACP-AMR-CONTINUE-005",
        "Outstanding or unknown tools forbid the continuation: a tool call with no terminal "
        "status, or an update for a call no tool_call announced, whatever the evidence claims.",
        "seed 000 §12 (AMR compaction continuation)",
    ),
    _rule(
        "ACP-AMR-CONTINUE-006",
        "The legacy compaction wording (or partial evidence) is classified as "
        "AMR_CONTINUATION_INCOMPLETE, not retryable, and authorizes no continuation, reseed "
        "or prompt replay.",
        "seed 000 §12 (AMR compaction continuation)",
    ),
    _rule(
        "ACP-AMR-CONTINUE-007",
        "Cancellation stops the run: an interrupted prompt after a cancel ends cancelled and is "
        "never continued.",
        "seed 000 §12 (AMR compaction continuation)",
    ),
    # -- definitions are data (seed 000 §1; seed 002 §7.4) ------------------------------
    _rule(
        "ACP-DEF-001",
        "AcpSession.from_def takes every ACP difference from AgentDef fields; the session never "
        "branches on an agent id.",
        "seed 002 §7.4",
    ),
)
