"""Rules of the pi-rpc two-way session (seed 000 §5.10; ref §2.7; wire §A.2).

Enforced by ``harness/protocols/pi_rpc.py`` (session, session-file capture) and
``harness/protocols/pi_images.py`` (image policy); proved by ``tests/protocols/test_pi_rpc.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

_PI = ("pi-rpc",)


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(rule_id, Tier.MANDATORY, statement, citation, _PI)


RULES = (
    # -- framing ------------------------------------------------------------------
    _rule(
        "PI-FRAME-001",
        "Every command is one compact JSON object on one LF-terminated line, with an integer id "
        "from a per-session counter starting at 1; responses are matched by that exact id.",
        "ref §2.7",
    ),
    _rule(
        "PI-FRAME-002",
        "stdout is split on LF only with one trailing CR stripped; U+2028, U+2029 and U+0085 "
        "inside JSON strings never split a record.",
        "wire §A.2",
    ),
    _rule(
        "PI-FRAME-003",
        "A line that is not JSON, not an object, has no string type, or names an event pi does "
        "not define is published as a raw event, never dropped silently.",
        "design §Principles",
    ),
    _rule(
        "PI-FRAME-004",
        "A line over max_line_bytes becomes a raw event with its true size; an oversize "
        "agent_end still ends the run.",
        "wire §A.0",
    ),
    _rule(
        "PI-FRAME-005",
        "Arbitrary stdout bytes never raise, and any chunking of a transcript yields the same "
        "events, frames and controls.",
        "design §Principles",
    ),
    # -- start and prompt ---------------------------------------------------------------
    _rule(
        "PI-START-001",
        "start() immediately emits status initializing carrying the requested model (omitted "
        "when none).",
        "ref §2.7",
    ),
    _rule(
        "PI-PROMPT-001",
        "Without a resume id the first frame is {id, type:'prompt', message} with images only "
        "when there are some.",
        "seed 000 §5.10",
    ),
    _rule(
        "PI-PROMPT-002",
        "A prompt response with success:false fails the run with 'prompt rejected: <error>'.",
        "ref §2.7",
    ),
    _rule(
        "PI-PROMPT-003",
        "A prompt response with success:true only means accepted: the run continues until "
        "agent_end.",
        "seed 000 §5.10",
    ),
    # -- resume -------------------------------------------------------------------------
    _rule(
        "PI-RESUME-001",
        "With a resume id, new_session{parentSession} is sent first and the prompt only after "
        "the success response carrying the new_session id.",
        "seed 000 §5.10",
    ),
    _rule(
        "PI-RESUME-002",
        "A new_session response with success:false fails the run with PI_PARENT_SESSION_FAILED "
        "'parent session rejected: <error>' and the prompt is never sent.",
        "ref §2.7",
    ),
    _rule(
        "PI-RESUME-003",
        "The session handle is the single new or changed *.jsonl session file; zero or several "
        "changed files give no handle.",
        "seed 000 §5.10",
    ),
    _rule(
        "PI-RESUME-004",
        "A new_session that an extension cancelled still sends the prompt but reports a warning "
        "status that the parent session was not linked.",
        "design §Principles",
    ),
    # -- extension UI ---------------------------------------------------------------------
    _rule(
        "PI-UI-001",
        "An extension_ui_request confirm is answered {type:'extension_ui_response', id, "
        "confirmed:true}.",
        "seed 000 §5.10",
    ),
    _rule(
        "PI-UI-002",
        "select, input, editor and other dialogs are answered with the first option (a string, "
        "else its label ?? value ?? '') or {cancelled:true} when there are no options.",
        "ref §2.7",
    ),
    _rule(
        "PI-UI-003",
        "Fire-and-forget methods (setStatus, setWidget, notify, setTitle, set_editor_text) get "
        "no reply and are counted.",
        "seed 000 §5.10",
    ),
    _rule(
        "PI-UI-004",
        "An extension_ui_request without an id is ignored and counted.",
        "ref §2.7",
    ),
    # -- event map ----------------------------------------------------------------------
    _rule(
        "PI-EVENT-001",
        "agent_start maps to status working and turn_start to status thinking.",
        "ref §2.7",
    ),
    _rule(
        "PI-EVENT-002",
        "The first message_update text_delta emits status streaming with ttft_ms before its "
        "text_delta; later ones emit only text_delta.",
        "ref §2.7",
    ),
    _rule(
        "PI-EVENT-003",
        "message_update thinking_start, thinking_delta and thinking_end map to thinking_start, "
        "thinking_delta and thinking_end.",
        "ref §2.7",
    ),
    _rule(
        "PI-EVENT-004",
        "A message_update error maps to error{message: reason || delta || 'Agent error', raw}.",
        "ref §2.7",
    ),
    _rule(
        "PI-EVENT-005",
        "message_start, message_end and the other known non-mapped events emit nothing (usage "
        "comes only from turn_end) and are counted.",
        "ref §2.7",
    ),
    _rule(
        "PI-EVENT-006",
        "tool_execution_start maps to tool_use{id, name, input: args} and tool_execution_end to "
        "tool_result with text parts joined by newline, other parts as JSON, is_error only when "
        "isError is true.",
        "ref §2.7",
    ),
    _rule(
        "PI-EVENT-007",
        "turn_end maps message.usage to usage (tokens, cost total ?? totalCost, duration) when "
        "any token count is present, plus error{errorMessage || 'Pi agent error'} when "
        "stopReason is 'error'.",
        "ref §2.7",
    ),
    _rule(
        "PI-EVENT-008",
        "extension_error maps to error{message: error || 'Extension error', raw}.",
        "seed 000 §5.10",
    ),
    _rule(
        "PI-EVENT-009",
        "compaction_start maps to status compacting, auto_retry_start to status retrying, and "
        "auto_retry_end with success:false to error{finalError || 'Auto-retry exhausted'}.",
        "seed 000 §5.10",
    ),
    # -- ending -------------------------------------------------------------------------
    _rule(
        "PI-END-001",
        "agent_end finishes the run: close stdin, terminate after graceful_shutdown_ms, "
        "Finished(completed); later lines are only counted.",
        "seed 000 §5.10",
    ),
    _rule(
        "PI-END-002",
        "An in-stream error (turn_end stopReason error, message_update error, extension_error, "
        "exhausted auto_retry_end) makes the run end as failed, not completed.",
        "seed 000 §5.10",
    ),
    _rule(
        "PI-END-003",
        "After an agent_end whose last turn stopped with 'error', the run waits retry_window_ms "
        "for pi's auto-retry or compaction; a new attempt supersedes the failed one's model "
        "errors.",
        "seed 000 §5.10",
    ),
    _rule(
        "PI-END-004",
        "End of output before agent_end fails the run with 'pi exited before agent_end'.",
        "seed 000 §5.10",
    ),
    # -- cancellation -------------------------------------------------------------------
    _rule(
        "PI-CANCEL-001",
        "cancel() sends {id, type:'abort'} once and sets a grace deadline; agent_end or the "
        "abort response within it closes stdin, terminates and finishes cancelled.",
        "ref §10.1",
    ),
    _rule(
        "PI-CANCEL-002",
        "A tick at or past the cancel grace closes stdin, terminates at once (after_ms 0) and "
        "finishes cancelled.",
        "ref §10.1",
    ),
    _rule(
        "PI-CANCEL-003",
        "cancel() before start() yields only Finished(cancelled); cancel() is idempotent.",
        "ref §2.7",
    ),
    _rule(
        "PI-CANCEL-004",
        "While cancelling, pi's events are counted, not published, and extension dialogs are "
        "dismissed with cancelled:true, never approved.",
        "ref §2.7",
    ),
    # -- images -------------------------------------------------------------------------
    _rule(
        "PI-IMAGE-001",
        "At most 10 images are forwarded per prompt.",
        "ref §2.7",
    ),
    _rule(
        "PI-IMAGE-002",
        "Forwarded images total at most 20 MiB; an image that does not fit is skipped and later "
        "smaller ones may still be sent.",
        "ref §2.7",
    ),
    _rule(
        "PI-IMAGE-003",
        "Only .png .jpg .jpeg .gif .webp (case-insensitive, judged on the resolved path) are "
        "forwarded, with the matching MIME type.",
        "ref §2.7",
    ),
    _rule(
        "PI-IMAGE-004",
        "An image is forwarded only when its resolved path is a regular file inside the upload "
        "root.",
        "ref §2.7",
    ),
    _rule(
        "PI-IMAGE-005",
        "Unreadable images are skipped rather than failing the run; forwarded ones are "
        "{type:'image', data: base64, mimeType}.",
        "seed 000 §5.10",
    ),
)
