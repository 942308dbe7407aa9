"""DeepSeek TUI's ``exec`` mode over ``plain`` (seed 000 §5.11).

Invocation: ``deepseek exec --auto [--model <id>] "<prompt>"``; ``codewhale`` is the
argv-compatible binary after the upstream rename. The prompt is the last positional argument:
clap declares it a required ``String`` with no ``-`` stdin sentinel, so argv is the only route
and the def declares a 30 000-byte budget (seed 000 §5.11 "Prompt delivery"). ``--auto`` is the
YOLO posture without a TTY (seed 000 §5.11, §10). ``--json`` is deliberately absent: it batches
the whole run into one trailing object instead of streaming (seed 000 §5.11 "Streaming").

An oversized prompt gets DeepSeek's own advice sentence (ref §4.1 ``def.id === 'deepseek'``).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    ModelOption,
    PromptDelivery,
    RuntimeContext,
)

__all__ = ["AGENT_DEF", "PROMPT_TOO_LARGE_HINT"]

#: ref §4.1, the DeepSeek-specific advice (verbatim).
PROMPT_TOO_LARGE_HINT = (
    "Reduce the selected skills/design-system context or conversation length, or use DeepSeek "
    "through an API/provider model connection for large contexts. Pick a stdin-capable adapter "
    "when the prompt must include large local context."
)


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    args = ["exec", "--auto"]
    if options.model and options.model != DEFAULT_MODEL_OPTION.id:
        args += ["--model", options.model]
    args.append(prompt)
    return args


AGENT_DEF = AgentDef(
    id="deepseek",
    name="DeepSeek TUI",
    bin="deepseek",
    fallback_bins=("codewhale",),
    bin_env_key="DEEPSEEK_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="plain",
    prompt_delivery=PromptDelivery.ARGV,
    max_prompt_arg_bytes=30_000,
    prompt_too_large_hint=PROMPT_TOO_LARGE_HINT,
    # seed 000 §5.11 (FIDELITY-AUTH-001): no auth probe; a run failing on authentication
    # names the two places DeepSeek TUI reads its key from.
    auth_guidance=(
        "DeepSeek TUI reads its API key from ~/.deepseek/config.toml or the DEEPSEEK_API_KEY "
        "environment variable; set one of them, then send the request again."
    ),
    headless_flags=("--auto",),
    # seed 000 §5.11 "Models": fallback hints; any other id may be pasted as a custom model.
    fallback_models=(
        DEFAULT_MODEL_OPTION,
        ModelOption("deepseek-v4-pro", "deepseek-v4-pro"),
        ModelOption("deepseek-v4-flash", "deepseek-v4-flash"),
    ),
)
