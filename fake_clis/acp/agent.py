"""One ACP agent's differences from the others (the server is shared)."""

from __future__ import annotations

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from fake_clis.argv import Grammar, Parsed
    from fake_clis.base import FakeRun

__all__ = ["Agent", "at_least"]


def _never_approves(parsed: Parsed) -> bool:
    return False


class Agent:
    """Everything that differs between the ACP agents (the server below is shared)."""

    __slots__ = (
        "acp_command",
        "agent_id",
        "api_error_exit",
        "api_error_reply",
        "auth_methods",
        "auto_approve",
        "capability_meta",
        "check_argv",
        "default_model_env",
        "env_format",
        "exits_at_eof",
        "grammar",
        "help_text",
        "info_name",
        "info_title",
        "mcp_http",
        "model_channel",
        "models",
        "models_args",
        "models_output",
        "native_continue",
        "permission_options",
        "prog",
        "session_prefix",
        "shell_input_cwd",
        "shell_locations_cwd",
        "stdio_removed_in",
        "style",
        "text_separator",
        "tool_style",
        "turn_end_update",
        "version",
        "version_output",
        "write_path_as_given",
        "write_path_key",
    )

    def __init__(
        self,
        *,
        agent_id: str,
        prog: str,
        version: str,
        version_output: str,
        style: str,
        grammar: Callable[[bool], Grammar],
        help_text: str,
        acp_command: tuple[str, ...],
        info_name: str,
        info_title: str,
        auth_methods: tuple[Mapping[str, Any], ...],
        model_channel: str,
        models: tuple[tuple[str, str], ...],
        env_format: str = "array",
        stdio_removed_in: str | None = None,
        turn_end_update: bool = False,
        auto_approve: Callable[[Parsed], bool] = _never_approves,
        mcp_http: bool = False,
        session_prefix: str = "",
        default_model_env: str | None = None,
        capability_meta: Mapping[str, Any] | None = None,
        check_argv: Callable[[FakeRun], tuple[str, int] | None] | None = None,
        models_args: tuple[str, ...] | None = None,
        models_output: str = "",
        write_path_key: str = "path",
        write_path_as_given: bool = False,
        shell_input_cwd: bool = True,
        shell_locations_cwd: bool = False,
        api_error_exit: int | None = None,
        exits_at_eof: bool = True,
        api_error_reply: str | None = None,
        tool_style: str = "acp",
        text_separator: str = "",
        permission_options: tuple[tuple[str, str, str], ...] = (
            ("allow_once", "Allow", "allow_once"),
            ("allow_always", "Always allow", "allow_always"),
            ("reject_once", "Reject", "reject_once"),
        ),
        native_continue: bool = False,
    ) -> None:
        self.agent_id = agent_id
        self.prog = prog
        self.version = version
        self.version_output = version_output
        self.style = style
        self.grammar = grammar
        self.help_text = help_text
        #: The subcommand path that starts the ACP server.
        self.acp_command = acp_command
        self.info_name = info_name
        self.info_title = info_title
        self.auth_methods = auth_methods
        #: ``config`` = a ``model`` config option; ``models`` = a ``models`` block (set_model);
        #: ``both`` = the two (reasonix sends both; the engine then prefers the config option).
        self.model_channel = model_channel
        self.models = models
        #: ``array`` (ACP schema) or ``map`` (reasonix) for a stdio MCP server's env.
        self.env_format = env_format
        #: Stdio MCP servers are refused from this reported version on (kimi).
        self.stdio_removed_in = stdio_removed_in
        #: Kiro: a ``turn_end`` session update precedes the prompt response.
        self.turn_end_update = turn_end_update
        #: Agent posture: argv -> True when writes are approved without asking.
        self.auto_approve = auto_approve
        self.mcp_http = mcp_http
        self.session_prefix = session_prefix
        #: Env var that pins the session's initial model (amr: ``VELA_DEFAULT_MODEL``, ref §8.3).
        self.default_model_env = default_model_env
        self.capability_meta: Mapping[str, Any] = capability_meta or {}
        #: Agent-specific argv checks beyond the grammar: returns (message, exit code) or None.
        self.check_argv = check_argv
        self.models_args = models_args
        self.models_output = models_output
        #: ``rawInput`` of a write tool call: the key of the path, and whether the path stays as
        #: the model wrote it (relative) instead of resolved under the session cwd.
        self.write_path_key = write_path_key
        self.write_path_as_given = write_path_as_given
        #: Whether a shell tool call's ``rawInput`` carries the session ``cwd``.
        self.shell_input_cwd = shell_input_cwd
        #: Whether a shell tool call lists the session cwd in ``locations`` (kilo).
        self.shell_locations_cwd = shell_locations_cwd
        #: The exit code at stdin EOF after a turn failed with an API error (``None``: the
        #: scenario's). A real ACP server answers the failed prompt with an error and, being a
        #: server, still exits 0 when its client goes (live: kilo 7.7.7, vibe-acp 3.0.2).
        self.api_error_exit = api_error_exit
        #: Whether the agent exits once its client closes stdin. vibe-acp 3.0.2 does not: each
        #: of its live runs (recordings/real/vibe/*.jsonl, and a failed api_error run) ended by
        #: the host's SIGTERM after the close grace (ref §10.1 rule 3 bounds that wait).
        self.exits_at_eof = exits_at_eof
        #: How a prompt that hits a scripted API error ends: ``None`` = a JSON-RPC error
        #: response; a string = the turn still ends with ``end_turn``, after that text (with
        #: ``{status}`` and ``{message}`` filled) as one agent message when it is not empty.
        #: Live: kimi 1.51.0 ends the turn silently; hermes 0.19.0 says what failed.
        self.api_error_reply = api_error_reply
        #: How tool calls are rendered: ``acp`` (``tool_call`` pending with ``kind`` and
        #: ``rawInput``, then ``in_progress`` and ``completed``/``failed`` updates), ``kimi``
        #: (kimi-cli 1.51.0) or ``hermes`` (hermes-agent 0.19.0); see ``render.TurnRenderer.tool``.
        self.tool_style = tool_style
        #: Put between the text of two model messages of one prompt (hermes: a blank line).
        self.text_separator = text_separator
        #: ``session/request_permission`` options: (optionId, name, kind), in order.
        self.permission_options = permission_options
        #: AMR (Vela over OpenCode): a per-process ACP ``sessionId`` beside the durable
        #: ``openCodeSessionId``, the ``compaction`` step and ``_session/continue`` (seed 000
        #: "AMR compaction continuation (ACP extension v1)").
        self.native_continue = native_continue


def _version_tuple(text: str) -> tuple[int, ...] | None:
    import re  # only kimi's stdio MCP servers compare versions

    match = re.match(r"^\s*v?(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def at_least(version: str, floor: str) -> bool:
    mine, theirs = _version_tuple(version), _version_tuple(floor)
    if mine is None or theirs is None:
        return False
    width = max(len(mine), len(theirs))
    return mine + (0,) * (width - len(mine)) >= theirs + (0,) * (width - len(theirs))
