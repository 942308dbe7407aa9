"""Rules of the ``json-event-stream`` format and its five dialects.

Seed 002 §7.3 and seed 000 §5.3 / §5.5 / §5.6 are normative; ref §2.2 gives
the exact upstream mapping tables (codex: latest generation; cursor-agent:
mid generation, for the late session-id capture). Enforced in
``harness/streams/json_events.py``, ``codex_items.py``, ``cursor.py``,
``opencode.py``, ``gemini.py`` and ``kimi.py``; tested in
``tests/streams/test_json_*.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

_F = ("json-event-stream",)


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(rule_id, Tier.MANDATORY, statement, citation, _F)


RULES = (
    # -- dispatcher --------------------------------------------------------------
    _rule(
        "JSONEV-RAW-001",
        "A line no dialect handler claims (not JSON, not an object, or an unknown shape) "
        "becomes a raw event carrying the line.",
        "seed 002 §7.3",
    ),
    _rule(
        "JSONEV-DIALECT-001",
        "The parser is created for one of codex, cursor-agent, opencode, gemini, kimi; "
        "any other or missing dialect is refused with a ValueError naming the known ones.",
        "seed 002 §7.3",
    ),
    _rule(
        "JSONEV-CHUNK-001",
        "Every dialect yields the same events for any split of the same stdout bytes.",
        "ref §2.0",
    ),
    _rule(
        "JSONEV-ROBUST-001",
        "No dialect raises on any input: arbitrary bytes or arbitrary JSON objects.",
        "ref §2.0",
    ),
    _rule(
        "JSONEV-ERRMSG-001",
        "Error messages are unwrapped: detail, then message (a JSON-string message is parsed), "
        "then error string, error object, data object, name, then the dialect's fallback.",
        "ref §2.2",
    ),
    # -- codex -------------------------------------------------------------------
    _rule(
        "CODEX-SESSION-001",
        "thread.started becomes status 'initializing' carrying thread_id as the session id.",
        "seed 002 §7.3",
    ),
    _rule(
        "CODEX-TURN-001",
        "turn.started becomes status 'thinking' and resets the agent_message paragraph state.",
        "ref §2.2",
    ),
    _rule(
        "CODEX-PARA-001",
        "A completed agent_message is prefixed with a newline iff the previous event was an "
        "agent_message that did not end with a newline and this text does not start with one.",
        "seed 002 §7.3",
    ),
    _rule(
        "CODEX-REASONING-001",
        "Reasoning items emit only the unseen suffix per item id as thinking_delta; a new "
        "item's first delta is prefixed with a blank line when reasoning was emitted before.",
        "ref §2.2",
    ),
    _rule(
        "CODEX-TODO-001",
        "Every todo_list item event becomes a TodoWrite tool_use snapshot of the full list.",
        "ref §2.2",
    ),
    _rule(
        "CODEX-BASH-001",
        "command_execution emits one Bash tool_use per id and, at completion, a tool_result "
        "that is an error iff a numeric exit_code is non-zero, else iff status is failed.",
        "ref §2.2",
    ),
    _rule(
        "CODEX-CONNECTOR-001",
        "Command output carrying a CONNECTOR_TOOL_NOT_FOUND API error raises one fatal error "
        "naming the tool and connector (subject to the first-error latch).",
        "ref §2.2",
    ),
    _rule(
        "CODEX-FILECHANGE-001",
        "file_change becomes one Write (add) or Edit (update) call per change with id "
        "'<item>#<index>'; an item with any other kind stays raw as a whole.",
        "ref §2.2",
    ),
    _rule(
        "CODEX-MCP-001",
        "mcp_tool_call becomes tool 'mcp__<server>__<tool>'; its result is an error when "
        "status is failed or an error object is present; unnamed calls stay raw.",
        "ref §2.2",
    ),
    _rule(
        "CODEX-WEBSEARCH-001",
        "web_search shows as tool_in_flight at item.started and settles into tool_use + "
        "tool_result at a completed 'search' action; other actions stay raw.",
        "ref §2.2",
    ),
    _rule(
        "CODEX-WARNING-001",
        "An error ITEM is non-fatal: it becomes status 'warning' with the message as detail.",
        "ref §2.2",
    ),
    _rule(
        "CODEX-USAGE-001",
        "turn.completed usage is normalized to input_tokens, output_tokens, thought_tokens "
        "and cached_read_tokens.",
        "ref §2.2",
    ),
    _rule(
        "CODEX-ERROR-ONCE-001",
        "Only the first of the run's fatal errors (error, turn.failed, connector error) is "
        "emitted.",
        "seed 002 §7.3",
    ),
    _rule(
        "CODEX-RECONNECT-001",
        "An error starting 'Reconnecting... n/max' with a known transport cause becomes status "
        "'agent_reconnecting' detail 'n/max'; a mere mention of reconnecting stays fatal.",
        "ref §2.2",
    ),
    _rule(
        "CODEX-ITEMTYPE-001",
        "App-server camelCase item types map onto the exec snake_case names, so both "
        "transports share one item mapping.",
        "wire §A.3.2",
    ),
    # -- cursor-agent --------------------------------------------------------------
    _rule(
        "CURSOR-INIT-001",
        "system/init becomes status 'initializing' with the model and session id.",
        "ref §2.2",
    ),
    _rule(
        "CURSOR-SESSION-001",
        "A later frame carrying a new session_id emits status 'running' with that session id "
        "(mid upstream generation).",
        "ref §2.2",
    ),
    _rule(
        "CURSOR-DELTA-001",
        "Timestamped incremental assistant deltas are emitted verbatim, never deduplicated "
        "by content.",
        "seed 002 §7.3",
    ),
    _rule(
        "CURSOR-REPLAY-001",
        "A terminal replay emits only the suffix missing from THIS turn's emitted text, "
        "nothing when it diverges, and always starts a new turn baseline.",
        "seed 002 §7.3",
    ),
    _rule(
        "CURSOR-USAGE-001",
        "result usage (inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens) and "
        "duration_ms become a usage event.",
        "ref §2.2",
    ),
    # -- opencode ------------------------------------------------------------------
    _rule(
        "OPENCODE-SESSION-001",
        "step_start becomes status 'running' carrying sessionID as the session id; an error "
        "frame naming a session not yet reported first gives status 'session' with that id.",
        "seed 000 §5.6",
    ),
    _rule(
        "OPENCODE-TEXT-001",
        "A text part with non-empty text becomes a text_delta.",
        "ref §2.2",
    ),
    _rule(
        "OPENCODE-DEDUPE-001",
        "tool_use and tool_result are each emitted at most once per "
        "'<sessionID or session>:<callID>' key, across lines.",
        "seed 002 §7.3",
    ),
    _rule(
        "OPENCODE-ISERROR-001",
        "A tool result is an error on status error/failed, a non-empty error, a non-zero "
        "exit, or a PowerShell ErrorRecord in bash/shell output; error false or 0 is not.",
        "ref §2.2",
    ),
    _rule(
        "OPENCODE-USAGE-001",
        "step_finish yields usage (and cost) only when at least one token field is a number.",
        "ref §2.2",
    ),
    _rule(
        "OPENCODE-ERROR-001",
        "An error frame becomes an error event with the unwrapped message and the frame as raw.",
        "ref §2.2",
    ),
    # -- gemini --------------------------------------------------------------------
    _rule(
        "GEMINI-INIT-001",
        "init becomes status 'initializing' with the model.",
        "ref §2.2",
    ),
    _rule(
        "GEMINI-SESSION-001",
        "init's session_id string rides on its initializing status as session_id.",
        "design §Normalized events",
    ),
    _rule(
        "GEMINI-TEXT-001",
        "Assistant message text becomes text_delta; the user message echo is consumed.",
        "ref §2.2",
    ),
    _rule(
        "GEMINI-TOOL-001",
        "tool_use and tool_result map by tool_id; a result is an error on status error or an "
        "error object, and its content falls back to the error message.",
        "ref §2.2",
    ),
    _rule(
        "GEMINI-TODO-001",
        "write_todos becomes a TodoWrite tool_use with id '<tool_id>:todo-native'.",
        "ref §2.2",
    ),
    _rule(
        "GEMINI-SEVERITY-001",
        "An error frame with severity warning is status 'warning'; any other is an error event.",
        "ref §2.2",
    ),
    _rule(
        "GEMINI-RESULT-001",
        "result is an error when its status is error or it has an error object, else usage "
        "from stats (input, output, cached tokens, duration).",
        "ref §2.2",
    ),
    _rule(
        "GEMINI-ARTIFACT-001",
        "After a file-write tool the next <artifact> block in assistant text is dropped; "
        "prose without a pending open-tag candidate disarms.",
        "ref §2.2",
    ),
    # -- kimi ----------------------------------------------------------------------
    _rule(
        "KIMI-TOOLCALL-001",
        "Assistant tool_calls become one tool_use each with trimmed id and name; calls "
        "missing either are skipped.",
        "ref §2.2",
    ),
    _rule(
        "KIMI-TOOLRESULT-001",
        "A tool-role message becomes a non-error tool_result for its tool_call_id.",
        "ref §2.2",
    ),
    _rule(
        "KIMI-TEXT-001",
        "Assistant string content becomes a text_delta.",
        "ref §2.2",
    ),
    _rule(
        "KIMI-META-001",
        "The meta session.resume_hint line is consumed without an event.",
        "ref §2.2",
    ),
)
