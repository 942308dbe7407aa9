"""Rules of the ``claude-stream-json`` parser (seed 000 §5.1, seed 002 §7.2, ref §2.1).

Enforced by :mod:`harness.streams.claude`; tests in ``tests/streams/test_claude.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

_CLAUDE = ("claude-stream-json",)

RULES = (
    Rule(
        id="CLAUDE-PROGRESS-001",
        tier=Tier.MANDATORY,
        statement=(
            "system/thinking_tokens with an integer estimate gives status 'thinking' "
            "(detail '~N tokens'); system/api_retry gives status 'retrying' naming the "
            "attempt and the HTTP status; neither ends the run."
        ),
        citation="design §Principles 3 (nothing dropped); claude 2.1.332 in recordings/real/claude",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-INIT-001",
        tier=Tier.MANDATORY,
        statement=(
            "system/init gives status 'initializing' with model and session_id; "
            "system/status gives status labelled by its status, else 'working'."
        ),
        citation="ref §2.1.1",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-STREAMING-001",
        tier=Tier.MANDATORY,
        statement=(
            "message_start with a numeric ttft_ms gives status 'streaming' with ttft_ms "
            "and starts a new message (per-message flags reset, previous role guard dropped)."
        ),
        citation="ref §2.1.2",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-THINKING-001",
        tier=Tier.MANDATORY,
        statement=(
            "A thinking content block gives thinking_start; every thinking_delta is forwarded, "
            "even empty, but only a non-empty one marks the message's thinking as streamed."
        ),
        citation="ref §2.1.2",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-TOOL-INPUT-001",
        tier=Tier.MANDATORY,
        statement=(
            "input_json_delta fragments accumulate per block (tool_input_delta when id and name "
            "are strings); content_block_stop emits tool_use with the parsed input, nothing on a "
            "parse failure, and the content_block_start input when no fragment came."
        ),
        citation="seed 002 §7.2",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-DEDUPE-TEXT-001",
        tier=Tier.MANDATORY,
        statement=(
            "A message's text is emitted once whether it arrives as deltas, in the assistant "
            "wrapper, or both in either order."
        ),
        citation="seed 002 §7.2",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-DEDUPE-THINKING-001",
        tier=Tier.MANDATORY,
        statement=(
            "A message's thinking is emitted once whether it arrives as deltas, in the assistant "
            "wrapper, or both in either order."
        ),
        citation="seed 002 §7.2",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-DEDUPE-TOOL-001",
        tier=Tier.MANDATORY,
        statement=(
            "Each tool_use id is emitted once: content_block_stop and the assistant wrapper share "
            "one emitted-id set, so the arrival order does not matter."
        ),
        citation="seed 002 §7.2",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-TOOL-WRAPPER-INPUT-001",
        tier=Tier.MANDATORY,
        statement=(
            "When the wrapper emits a tool_use whose streamed block is still open and its "
            "assembled input parses, that input replaces the wrapper's (often empty) input."
        ),
        citation="ref §2.1.3",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-TURNEND-ORDER-001",
        tier=Tier.MANDATORY,
        statement=(
            "The turn_end from an assistant wrapper's stop_reason comes after that wrapper's "
            "tool_use events."
        ),
        citation="seed 002 §7.2",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-TURNEND-ONCE-001",
        tier=Tier.MANDATORY,
        statement=(
            "At most one turn_end per message id, whether message_delta, the wrapper, or both "
            "carry the stop_reason."
        ),
        citation="ref §2.1.3",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-SUBAGENT-001",
        tier=Tier.MANDATORY,
        statement=(
            "Frames with a non-null parent_tool_use_id never emit turn_end, and their assistant "
            "error is not a run error; their content is still surfaced."
        ),
        citation="seed 000 §12",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-ERROR-001",
        tier=Tier.MANDATORY,
        statement=(
            "A main-turn assistant frame with a non-empty error string gives error with the "
            "joined text (else the error) as message and the error as code."
        ),
        citation="ref §2.1.3",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-TOOLRESULT-001",
        tier=Tier.MANDATORY,
        statement=(
            "Each user tool_result block gives tool_result with its id, its content stringified "
            "(string as is, text blocks joined by newline, else JSON) and is_error as a boolean."
        ),
        citation="ref §2.1.1",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-RESULT-001",
        tier=Tier.MANDATORY,
        statement=(
            "A result frame gives usage with usage, total_cost_usd, duration_ms, stop_reason "
            "(else terminal_reason) and is_error when true."
        ),
        citation="ref §2.1.4",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-RESULT-ERROR-001",
        tier=Tier.MANDATORY,
        statement=(
            "A result with is_error true also gives a terminal error: code AGENT_PROMPT_TOO_LARGE "
            "for 'Prompt is too long', else the subtype, else 'result_error'."
        ),
        citation="ref §2.1.4",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-RAW-001",
        tier=Tier.MANDATORY,
        statement=(
            "Lines the parser does not claim (non-JSON, non-objects, unknown types or subtypes, "
            "malformed known frames) become raw events; nothing is dropped silently."
        ),
        citation="seed 002 §7.1",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-GUARD-001",
        tier=Tier.MANDATORY,
        statement=(
            "Visible text passes the artifact-echo guard then a per-message role-marker guard; "
            "on contamination one fabricated_role_marker is emitted and the message's text stops."
        ),
        citation="seed 002 §7.5",
        formats=_CLAUDE,
    ),
    Rule(
        id="CLAUDE-CHUNKING-001",
        tier=Tier.MANDATORY,
        statement=(
            "Any split of the same stdout bytes gives the same events, and no input makes the "
            "parser raise."
        ),
        citation="wire §A.0",
        formats=_CLAUDE,
    ),
)
