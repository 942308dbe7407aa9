"""Claude Code: the reference adapter (seed 000 §5.1, seed 002 §4.1, ref §8.3).

Design: docs/design/defs.md#harness.defs.claude
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.shared import (
    UnsupportedOptionError,
    cap_found,
    cap_not_denied,
    choice_flag,
    model_flag,
    new_session_id,
    nonempty,
    options_with_ids,
    resume_id,
)
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    AuthProbe,
    BuildOptions,
    EnvStripRule,
    McpInjection,
    PromptDelivery,
    PromptInputFormat,
    ResumeStyle,
    RuntimeContext,
)

__all__ = ["AGENT_DEF", "CLAUDE_EFFORT_IDS"]

_ID = "claude"

#: ``--effort`` levels Claude Code accepts (ref §8.3 ``{--effort E}``; Claude Code docs
#: "adjust effort level"). ``default`` omits the flag.
CLAUDE_EFFORT_IDS: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")

#: Non-interactive permission posture (seed 000 §10: "Claude runs with
#: ``--permission-mode bypassPermissions``").
_HEADLESS: tuple[str, ...] = ("--permission-mode", "bypassPermissions")


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """argv for one ``claude -p`` turn; the prompt itself goes to stdin (seed 002 §6.2)."""
    # seed 000 §5.1 (ARGV-CLAUDE-002): stream-json in and out; --verbose is required
    # with stream-json output in print mode.
    args = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    # seed 002 §4.1 (ARGV-CLAUDE-001): new flag, only when `claude -p --help` lists it.
    if cap_found(options, "partialMessages"):
        args.append("--include-partial-messages")
    model = model_flag(options)
    if model is not None:
        args += ["--model", model]
    effort = choice_flag(options.reasoning)
    if effort is not None:
        # ref §8.3 (ARGV-CLAUDE-005): `{--effort E}`; an unknown level or a CLI that
        # reports --effort missing is an error, never a silently dropped choice.
        if effort not in CLAUDE_EFFORT_IDS:
            raise UnsupportedOptionError(
                _ID,
                "reasoning",
                effort,
                f"expected one of {list(CLAUDE_EFFORT_IDS)}",
                rule="ARGV-CLAUDE-005",
            )
        if options.capabilities.get("effort") is False:
            raise UnsupportedOptionError(
                _ID,
                "reasoning",
                effort,
                "this Claude Code build does not advertise --effort; update it or choose "
                "the CLI default reasoning",
                rule="ARGV-CLAUDE-005",
            )
        # A failed probe ({}) keeps the safe baseline of seed 002 §5.5: no optional flag.
        if cap_found(options, "effort"):
            args += ["--effort", effort]
    # seed 002 §4.1 (ARGV-CLAUDE-003): `caps.addDir !== false` -- old flag, default on.
    # --add-dir is variadic in Claude Code: one flag, then every directory.
    dirs = nonempty(extra_allowed_dirs)
    if dirs and cap_not_denied(options, "addDir"):
        args += ["--add-dir", *dirs]
    # seed 002 §4.1 (ARGV-CLAUDE-004): specify-style session -- resume the stored id,
    # else start the session under the id the host minted.
    stored = resume_id(ctx)
    minted = new_session_id(ctx)
    if stored is not None:
        args += ["--resume", stored]
    elif minted is not None:
        args += ["--session-id", minted]
    # seed 000 §10: headless permission posture, always last.
    args += _HEADLESS
    return args


AGENT_DEF = AgentDef(
    id=_ID,
    name="Claude Code",
    bin="claude",
    # seed 002 §3.1: OpenClaude is an argv-compatible fork; an install with only the
    # fork must not be reported as missing.
    fallback_bins=("openclaude",),
    bin_env_key="CLAUDE_BIN",  # ref §5.2
    build_args=build_args,
    stream_format="claude-stream-json",
    # seed 002 §6.2: the only stream-json stdin adapter; stdin stays open until a
    # clean terminal turn so the host can inject further user messages.
    prompt_delivery=PromptDelivery.STDIN,
    prompt_input_format=PromptInputFormat.STREAM_JSON,
    # ref §5.3: an inherited ANTHROPIC_API_KEY would override the user's login unless
    # the user points Claude Code at their own endpoint.
    strip_env=(EnvStripRule(keys=("ANTHROPIC_API_KEY",), unless_set=("ANTHROPIC_BASE_URL",)),),
    headless_flags=_HEADLESS,
    help_args=("-p", "--help"),
    capability_flags={
        "--include-partial-messages": "partialMessages",
        "--forward-subagent-text": "forwardSubagentText",
        "--agents": "customAgents",
        "--add-dir": "addDir",
        "--effort": "effort",
    },
    auth_probe=AuthProbe(args=("auth", "status"), timeout_ms=5000),  # ref §5.4
    # No list-models subcommand; the CLI's own aliases are stable hints.
    fallback_models=(
        DEFAULT_MODEL_OPTION,
        *options_with_ids(
            ("sonnet", "Sonnet (CLI alias)"),
            ("opus", "Opus (CLI alias)"),
            ("haiku", "Haiku (CLI alias)"),
        ),
    ),
    reasoning_options=(
        DEFAULT_MODEL_OPTION,
        *options_with_ids(
            ("low", "Low"),
            ("medium", "Medium"),
            ("high", "High"),
            ("xhigh", "Extra high"),
            ("max", "Max"),
        ),
    ),
    resume_style=ResumeStyle.SPECIFY,
    # seed 002 §8.1: Claude Code auto-loads .mcp.json from the project cwd.
    external_mcp_injection=McpInjection.CLAUDE_MCP_JSON,
    docs_url="https://docs.anthropic.com/en/docs/claude-code/overview",
    install_url="https://www.npmjs.com/package/@anthropic-ai/claude-code",
    # Stderr that means the resumed session is gone (seed 000 §8 recovery).
    resume_failure_patterns=(
        r"no conversation found with session id",
        r"no session found",
        r"session .* not found",
    ),
)
