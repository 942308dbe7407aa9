"""The fixed parts of claude 2.1.332's frames, as the real CLI printed them against the
scripted model server (recordings/real/claude/*.jsonl): what the claude fake adds to the
counts it keeps itself.

Design: docs/design/fakes.md#fake_clis.claude_stream
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = [
    "INIT_MODES",
    "INIT_SETTINGS",
    "MODEL_USAGE_LIMITS",
    "RESULT_STATE",
    "SYNTHETIC_USAGE",
    "TERMINAL_SLASH_COMMANDS",
    "result_usage",
]

#: What claude 2.1.332's result adds to the message usage (recordings/real/claude/*.jsonl).
_RESULT_USAGE: dict[str, Any] = {
    "output_tokens_details": {"thinking_tokens": 0},
    "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
    "service_tier": "standard",
    "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
    "inference_geo": "",
    "iterations": [],
    "speed": "standard",
    "fallback_credit": None,
}


def result_usage(counted: Mapping[str, int], failed: bool) -> dict[str, Any]:
    """claude 2.1.332's result usage: a failed call's lists ``output_tokens_details`` first
    (recordings/real/claude/api_error.jsonl)."""
    usage: dict[str, Any] = {**counted, **_RESULT_USAGE}
    if failed:
        usage = {"output_tokens_details": usage.pop("output_tokens_details"), **usage}
    return usage


#: The model's limits in claude 2.1.332's ``modelUsage`` (claude-opus-5-5's, whatever the
#: model: the fake knows no other).
MODEL_USAGE_LIMITS: dict[str, int] = {
    "contextWindow": 1_000_000,
    "maxOutputTokens": 128_000,
    "thinkingTokens": 0,
    "cacheCreationEphemeral5mInputTokens": 0,
    "cacheCreationEphemeral1hInputTokens": 0,
}
#: The usage of claude 2.1.332's synthetic API-error message (recordings/real/claude/
#: api_error.jsonl): nothing was counted, most fields are null.
SYNTHETIC_USAGE: dict[str, Any] = {
    "output_tokens_details": None,
    "input_tokens": 0,
    "output_tokens": 0,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
    "service_tier": None,
    "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
    "inference_geo": None,
    "iterations": None,
    "speed": None,
    "fallback_credit": None,
}
#: The session state claude 2.1.332's result reports: no fast mode, no sub-agents.
RESULT_STATE: dict[str, Any] = {
    "fast_mode_state": "off",
    "fast_mode_disabled_reason": "sdk_opt_in_required",
    "subagent_stats": {
        "spawned": 0,
        "requested": {"background": 0, "foreground": 0, "unset": 0},
        "started_in_background": 0,
        "max_depth": 0,
        "spawned_by_subagents": 0,
        "completed": 0,
        "failed": 0,
        "killed": {"parent": 0, "user": 0, "system": 0},
        "refused": {"depth_limit": 0, "concurrency_limit": 0, "budget": 0},
        "by_type": {},
    },
    "safety_stops": 0,
}


#: The slash commands claude 2.1.332's init lists as terminal-only.
TERMINAL_SLASH_COMMANDS = ("doctor", "color", "focus", "reload-plugins")
#: What claude 2.1.332's init says about itself, as seen under the live recipe's
#: environment (telemetry off, a base URL that is not Anthropic's).
INIT_SETTINGS: dict[str, Any] = {
    "capabilities": [
        "interrupt_receipt_v1",
        "interrupt_cancel_queued_v1",
        "interrupt_send_now_v1",
        "interrupt_requeue_taken_v1",
        "msg_lifecycle_v1",
        "request_marker_lists_v1",
        "ask_user_question_unanswered_v1",
        "lifecycle_wakeup_source_v1",
        "sdk_mcp_tools_list_changed",
        "sdk_mcp_manifests",
        "mcp_read_resource_v1",
        "mcp_tool_ui_meta_v1",
        "ui_surface_v1",
        "mcp_call_result_not_for_model_v1",
        "mcp_call_soft_error_result_v1",
        "mcp_call_check_permissions_v1",
        "voice_call_talk_line_v1",
        "withdrawn_files_note_v2",
        "withdrawn_tools_v1",
        "ui_pane_widget_v1",
        "reload_plugins_refuse_if_busy_v1",
        "get_usage_detached_v1",
        "silent_resend_files_v1",
    ],
    "analytics_disabled": True,
    "product_feedback_disabled": True,
    "served_by_anthropic": False,
}
#: The modes claude 2.1.332's init reports last: no fast mode, no ultrathink.
INIT_MODES: dict[str, Any] = {
    "fast_mode_state": "off",
    "fast_mode_disabled_reason": "sdk_opt_in_required",
    "per_turn_effort_active": True,
    "ultrathink_available": False,
    "ultrathink_typed_raises": False,
    "view_mode": "default",
}
