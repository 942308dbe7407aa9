"""Rules of the scripted model server for live mode (design §Live mode).

Enforced by ``harness/modelserver/`` and proved by ``tests/modelserver/`` against a
real server on 127.0.0.1 with a real HTTP client. The server is a harness component,
not a runtime's stream, so every rule is def-level (``formats=()``). The facts each
rule rests on (endpoints, SSE sequences, what each real CLI needs) are recorded in
``reference/real-clis.md``; the citations name the design section they serve.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]

_LIVE = "design §Live mode"


def _rule(rule_id: str, statement: str, tier: Tier = Tier.MANDATORY) -> Rule:
    return Rule(rule_id, tier, statement, _LIVE, ())


RULES: tuple[Rule, ...] = (
    # -- binding and lifecycle -------------------------------------------------------------
    _rule(
        "MODEL-BIND-001",
        "The model server binds loopback only; any other host is refused with a typed "
        "NonLoopbackHostError before a socket is opened.",
    ),
    _rule(
        "MODEL-BIND-002",
        "start()/stop() (a background thread with its own loop) and astart()/astop() (the "
        "caller's loop) leave no thread, task or listening socket behind.",
    ),
    # -- routing -----------------------------------------------------------------------------
    _rule(
        "MODEL-ROUTE-001",
        "Every endpoint is served under any base prefix (/v1, /v1beta, custom, none) with "
        "query strings such as ?beta=true and ?alt=sse ignored; unknown paths get a 404.",
    ),
    _rule(
        "MODEL-ROUTE-002",
        "HEAD probes (/, /api/hello) get 200; GET …/models and …/models/<id> answer a "
        "listing that Anthropic, OpenAI and Gemini clients all accept.",
    ),
    # -- Anthropic Messages --------------------------------------------------------------------
    _rule(
        "MODEL-ANTH-001",
        "A streaming Messages reply is message_start, ping, per block content_block_start/"
        "delta (thinking_delta+signature_delta, text_delta, input_json_delta)/stop, "
        "message_delta (stop_reason end_turn|tool_use, usage), message_stop.",
    ),
    _rule(
        "MODEL-ANTH-002",
        "A non-streaming Messages reply is one message object with the same blocks; "
        "…/messages/count_tokens answers {input_tokens}.",
    ),
    # -- OpenAI Responses --------------------------------------------------------------------
    _rule(
        "MODEL-RESP-001",
        "A streaming Responses reply is response.created, response.in_progress, per item "
        "output_item.added … output_item.done (reasoning summary, message content_part/"
        "output_text deltas, function_call_arguments), then response.completed carrying id "
        "and usage.",
    ),
    _rule(
        "MODEL-RESP-002",
        "A custom tool (codex's apply_patch) is answered with a custom_tool_call item whose "
        "input streams as custom_tool_call_input.delta/done.",
    ),
    # -- OpenAI Chat Completions ----------------------------------------------------------
    _rule(
        "MODEL-CHAT-001",
        "A streaming Chat Completions reply is a role delta, content (or reasoning_content) "
        "deltas or tool_calls deltas (index/id/name first, then argument pieces), a "
        "finish_reason chunk, a usage chunk iff stream_options.include_usage, then [DONE].",
    ),
    _rule(
        "MODEL-CHAT-002",
        "A non-streaming Chat Completions reply is one chat.completion object with the "
        "message's content, tool_calls, finish_reason and usage.",
    ),
    # -- Gemini ----------------------------------------------------------------------------------
    _rule(
        "MODEL-GEM-001",
        "streamGenerateContent?alt=sse sends one chunk per scenario chunk (text, thought "
        "text, functionCall parts), the last carrying finishReason and usageMetadata; "
        "generateContent answers one object with every part.",
    ),
    _rule(
        "MODEL-GEM-002",
        "Gemini's router classifier request (responseJsonSchema {complexity_reasoning, "
        "complexity_score}) gets schema-valid JSON with an integer score >= 1 and consumes "
        "no scenario step.",
    ),
    # -- the script ----------------------------------------------------------------------------
    _rule(
        "MODEL-SCRIPT-001",
        "The reply is stateless: with no tool result since the last real user turn it is the "
        "scenario's steps up to and including the first callable tool step; after k tool "
        "results, the steps after the k-th tool (the last segment past the end).",
    ),
    _rule(
        "MODEL-SCRIPT-002",
        "The last real user turn skips role system/developer entries (claude's mid-"
        "conversation system messages, aider's reminders) and system-reminder-only turns.",
    ),
    _rule(
        "MODEL-SCRIPT-003",
        "A thinking step becomes the API's reasoning form and each text chunk one delta, in "
        "scenario order.",
    ),
    _rule(
        "MODEL-SCRIPT-004",
        "A usage step becomes the API's usage fields on the reply of its segment; other "
        "replies report zero usage, so a turn's total equals the scenario's.",
    ),
    _rule(
        "MODEL-SCRIPT-005",
        "Side requests (title generation, memory extraction, suggestion mode) get small "
        "replies of their own and never the scenario's tool calls.",
    ),
    _rule(
        "MODEL-SCRIPT-006",
        "sleep steps and stall_ms delay the stream; a hang step holds the response open "
        "until the server stops; CLI-side steps (stderr, crash, ...) are not played.",
    ),
    # -- tools --------------------------------------------------------------------------------
    _rule(
        "MODEL-TOOL-001",
        "A write step calls the best write-like tool in the request's own tool list, never "
        "one named with todo, memory, notebook, stdin, goal, plan or agent.",
    ),
    _rule(
        "MODEL-TOOL-002",
        "Without a write-like tool a write step uses apply_patch (an *** Add File patch; a "
        "custom tool gets it as input), else a shell tool with a command that writes the "
        "file, else text (an aider file listing or SEARCH/REPLACE block).",
    ),
    _rule(
        "MODEL-TOOL-003",
        "Tool arguments come from the tool's schema (path, content and command keys, "
        "required keys, sandbox_permissions require_escalated when offered and not "
        "forbidden) and validate against it.",
    ),
    _rule(
        "MODEL-TOOL-ARGS-001",
        "Streamed tool arguments are cut into pieces of about 32 characters that join to the "
        "arguments, never inside a JSON string of up to 512 characters (a path stays whole in "
        "one delta, so a recording's scrubber can find it in a CLI's echo of the deltas).",
    ),
    _rule(
        "MODEL-TOOL-004",
        "A path is made absolute under the cwd the request mentions when the tool's schema "
        "or description asks for absolute paths, and left relative otherwise.",
    ),
    _rule(
        "MODEL-TOOL-005",
        "A shell step calls the request's shell tool (exec_command, bash, Bash, "
        "run_shell_command, shell, ...) with the step's command.",
    ),
    # -- errors, structured output, log ------------------------------------------------------
    _rule(
        "MODEL-ERR-001",
        "An api_error step answers the step's HTTP status with the API's own error body: "
        "Anthropic {type:error, error:{type,message}}, OpenAI {error:{message,type,code}}, "
        "Gemini {error:{code,message,status}}.",
    ),
    _rule(
        "MODEL-STRUCT-001",
        "A structured-output request (output_config.format, output_format, forced tool, "
        "text.format, response_format, responseJsonSchema/responseSchema) gets JSON valid "
        "against the request's schema.",
    ),
    _rule(
        "MODEL-LOG-001",
        "Every request is appended as one JSON line {t, method, path, model, stream, "
        "tool_names, message_roles, structured, reply_kind, ...} and kept in "
        "server.requests.",
    ),
    _rule(
        "MODEL-LOG-002",
        "The request log never holds a credential: auth headers and key-named query "
        "parameters are replaced, and their values and key-shaped text are redacted "
        "everywhere else.",
    ),
    _rule(
        "MODEL-TIMING-001",
        "Every finished request has a timing in server.timings: the time the server held it, "
        "the part of that the client took to send its body, and the part the scenario's "
        "pauses took (as slept), so what the server itself "
        "adds per request is measurable on real CLI runs (benchmarks/live.py; target: "
        "<= 5 ms at p95); a request held open by a hang step is marked hung.",
    ),
    # -- a real CLI ------------------------------------------------------------------------------
    _rule(
        "MODEL-LIVE-001",
        "A real CLI (codex 0.171.0) completes a text scenario and a file-writing tool "
        "scenario against the server with a fake key, offline, every request on loopback.",
        Tier.ADVISORY,
    ),
)
