"""CodeBuddy Code: a Claude-Code-compatible CLI (seed 000 §3, ref §8.3).

Same stream (``claude-stream-json``), same stream-json stdin prompt and the same
two capability gates as claude (seed 002 §4.1): ``--include-partial-messages``
only when ``codebuddy -p --help`` lists it, ``--add-dir`` unless the probe says
it is missing. No session resume, no auth probe, no model listing.

Not modelled: ref §5.3 drops ``CODEBUDDY_INTERNET_ENVIRONMENT`` unless its value
is one of ``public|internal|ioa``; :class:`EnvStripRule` cannot express a value
allow-list, so that rule belongs to the launch layer.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.shared import cap_found, cap_not_denied, model_flag, nonempty
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    EnvValueRule,
    McpInjection,
    PromptDelivery,
    PromptInputFormat,
    RuntimeContext,
)

__all__ = ["AGENT_DEF"]

#: seed 000 §10 / ref §8.3: bypass permissions and auto-confirm (``-y``).
_HEADLESS: tuple[str, ...] = ("--permission-mode", "bypassPermissions", "-y")


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """argv for one ``codebuddy -p`` turn (ref §8.3, ARGV-CODEBUDDY-001); prompt on stdin."""
    args = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    # seed 002 §4.1 / §5.5: new flag -> only when probed.
    if cap_found(options, "partialMessages"):
        args.append("--include-partial-messages")
    model = model_flag(options)
    if model is not None:
        args += ["--model", model]
    # seed 002 §4.1: old flag -> on unless the probe reported it missing; variadic.
    dirs = nonempty(extra_allowed_dirs)
    if dirs and cap_not_denied(options, "addDir"):
        args += ["--add-dir", *dirs]
    args += _HEADLESS
    return args


AGENT_DEF = AgentDef(
    id="codebuddy",
    name="CodeBuddy Code",
    bin="codebuddy",
    bin_env_key="CODEBUDDY_BIN",  # ref §5.2
    build_args=build_args,
    stream_format="claude-stream-json",
    prompt_delivery=PromptDelivery.STDIN,
    prompt_input_format=PromptInputFormat.STREAM_JSON,
    headless_flags=_HEADLESS,
    help_args=("-p", "--help"),
    capability_flags={
        "--include-partial-messages": "partialMessages",
        "--add-dir": "addDir",
    },
    # No models subcommand: the CLI default plus user-typed ids.
    fallback_models=(DEFAULT_MODEL_OPTION,),
    # ref §7: CodeBuddy Code auto-loads .mcp.json from the project cwd, like claude.
    external_mcp_injection=McpInjection.CLAUDE_MCP_JSON,
    # ref §5.3: an unknown CODEBUDDY_INTERNET_ENVIRONMENT value is dropped from the spawn env.
    env_value_rules=(
        EnvValueRule("CODEBUDDY_INTERNET_ENVIRONMENT", ("public", "internal", "ioa")),
    ),
    # Stderr that means the resumed session is gone (seed 000 §8 recovery).
    resume_failure_patterns=(
        r"no conversation found with session id",
        r"no session found",
        r"session .* not found",
    ),
)
