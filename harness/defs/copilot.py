"""GitHub Copilot CLI (seed 000 §5.7, ref §8.3).

``copilot --allow-all-tools --output-format json [--model M] [--add-dir D]...``.
There is no ``-p`` at all: the prompt is piped to stdin, because ``-p -`` would
be read as the literal one-character prompt ``-`` (seed 000 §5.7).
``--allow-all-tools`` is required headless, otherwise Copilot blocks on a
tool-approval prompt. Long silent turns are normal, so the inactivity watchdog
is 30 minutes (ref §10.1). No auth probe: Copilot owns login and account scope.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.shared import model_flag, nonempty, options_with_ids
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    McpInjection,
    PromptDelivery,
    RuntimeContext,
)

__all__ = ["AGENT_DEF"]

_HEADLESS: tuple[str, ...] = ("--allow-all-tools",)


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """argv for one Copilot turn (ARGV-COPILOT-001); prompt on stdin, never ``-p``."""
    args = [*_HEADLESS, "--output-format", "json"]
    model = model_flag(options)
    if model is not None:
        args += ["--model", model]
    # seed 000 §5.7: repeated --add-dir widens path access to supplied external roots.
    for directory in nonempty(extra_allowed_dirs):
        args += ["--add-dir", directory]
    return args


AGENT_DEF = AgentDef(
    id="copilot",
    name="GitHub Copilot CLI",
    bin="copilot",
    bin_env_key="COPILOT_BIN",  # ref §5.2
    build_args=build_args,
    stream_format="copilot-stream-json",
    prompt_delivery=PromptDelivery.STDIN,
    headless_flags=_HEADLESS,
    # No models subcommand; hints observed in the stream and in `copilot --help`.
    fallback_models=(
        DEFAULT_MODEL_OPTION,
        *options_with_ids(("claude-sonnet-4.6", "Claude Sonnet 4.6"), ("gpt-5.2", "GPT-5.2")),
    ),
    # seed 002 §8.1: no external MCP injection for copilot.
    external_mcp_injection=McpInjection.NONE,
    inactivity_timeout_ms=30 * 60 * 1000,
    docs_url="https://github.com/github/copilot-cli",
    install_url="https://www.npmjs.com/package/@github/copilot",
)
