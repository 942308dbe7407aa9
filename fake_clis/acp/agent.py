"""One ACP agent's differences from the others (the server is shared)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fake_clis.argv import Grammar, Parsed
from fake_clis.base import FakeRun

__all__ = ["Agent", "at_least"]


@dataclass(frozen=True)
class Agent:
    """Everything that differs between the ACP agents (the server below is shared)."""

    agent_id: str
    prog: str
    version: str
    version_output: str
    style: str
    grammar: Callable[[bool], Grammar]
    help_text: str
    #: The subcommand path that starts the ACP server.
    acp_command: tuple[str, ...]
    info_name: str
    info_title: str
    auth_methods: tuple[Mapping[str, Any], ...]
    #: ``config`` = a ``model`` config option; ``models`` = a ``models`` block (set_model);
    #: ``both`` = the two (reasonix sends both; the engine then prefers the config option).
    model_channel: str
    models: tuple[tuple[str, str], ...]
    #: ``array`` (ACP schema) or ``map`` (reasonix) for a stdio MCP server's env.
    env_format: str = "array"
    #: Stdio MCP servers are refused from this reported version on (kimi).
    stdio_removed_in: str | None = None
    #: Kiro: a ``turn_end`` session update precedes the prompt response.
    turn_end_update: bool = False
    #: Agent posture: argv -> True when writes are approved without asking.
    auto_approve: Callable[[Parsed], bool] = lambda parsed: False
    mcp_http: bool = False
    session_prefix: str = ""
    #: Env var that pins the session's initial model (amr: ``VELA_DEFAULT_MODEL``, ref §8.3).
    default_model_env: str | None = None
    capability_meta: Mapping[str, Any] = field(default_factory=dict)
    #: Agent-specific argv checks beyond the grammar: returns (message, exit code) or None.
    check_argv: Callable[[FakeRun], tuple[str, int] | None] | None = None
    models_args: tuple[str, ...] | None = None
    models_output: str = ""
    #: ``rawInput`` of a write tool call: the key of the path, and whether the path stays as
    #: the model wrote it (relative) instead of resolved under the session cwd.
    write_path_key: str = "path"
    write_path_as_given: bool = False
    #: Whether a shell tool call's ``rawInput`` carries the session ``cwd``.
    shell_input_cwd: bool = True
    #: Whether a shell tool call lists the session cwd in ``locations`` (kilo).
    shell_locations_cwd: bool = False
    #: The exit code at stdin EOF after a turn failed with an API error (``None``: the
    #: scenario's). A real ACP server answers the failed prompt with an error and, being a
    #: server, still exits 0 when its client goes (live: kilo 7.7.7, vibe-acp 3.0.2).
    api_error_exit: int | None = None
    #: Whether the agent exits once its client closes stdin. vibe-acp 3.0.2 does not: each
    #: of its live runs (recordings/real/vibe/*.jsonl, and a failed api_error run) ended by
    #: the host's SIGTERM after the close grace (ref §10.1 rule 3 bounds that wait).
    exits_at_eof: bool = True
    #: How a prompt that hits a scripted API error ends: ``None`` = a JSON-RPC error
    #: response; a string = the turn still ends with ``end_turn``, after that text (with
    #: ``{status}`` and ``{message}`` filled) as one agent message when it is not empty.
    #: Live: kimi 1.51.0 ends the turn silently; hermes 0.19.0 says what failed.
    api_error_reply: str | None = None
    #: How tool calls are rendered: ``acp`` (``tool_call`` pending with ``kind`` and
    #: ``rawInput``, then ``in_progress`` and ``completed``/``failed`` updates), ``kimi``
    #: (kimi-cli 1.51.0) or ``hermes`` (hermes-agent 0.19.0); see ``render.TurnRenderer.tool``.
    tool_style: str = "acp"
    #: Put between the text of two model messages of one prompt (hermes: a blank line).
    text_separator: str = ""
    #: ``session/request_permission`` options: (optionId, name, kind), in order.
    permission_options: tuple[tuple[str, str, str], ...] = (
        ("allow_once", "Allow", "allow_once"),
        ("allow_always", "Always allow", "allow_always"),
        ("reject_once", "Reject", "reject_once"),
    )
    #: AMR (Vela over OpenCode): a per-process ACP ``sessionId`` beside the durable
    #: ``openCodeSessionId``, the ``compaction`` step and ``_session/continue`` (seed 000
    #: "AMR compaction continuation (ACP extension v1)").
    native_continue: bool = False


def _version_tuple(text: str) -> tuple[int, ...] | None:
    match = re.match(r"^\s*v?(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def at_least(version: str, floor: str) -> bool:
    mine, theirs = _version_tuple(version), _version_tuple(floor)
    if mine is None or theirs is None:
        return False
    width = max(len(mine), len(theirs))
    return mine + (0,) * (width - len(mine)) >= theirs + (0,) * (width - len(theirs))
