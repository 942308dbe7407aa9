"""MiMo Code, modelled as an OpenCode-compatible CLI (seed 000 §3, seed 002 §3.4, §8.1).

The seeds put ``mimo`` in ``json-event-stream`` (seed 000 §3 catalog; seed 002
§3.4) with its own MCP strategy ``mimo-env-content``: the OpenCode config schema
in ``MIMOCODE_CONFIG_CONTENT`` (seed 002 §8.1, "same as opencode, renamed").
Ref §8.3 records that a later upstream generation moved mimo to ACP
(``mimo acp``); where the seeds and the reference disagree the seeds win, so
this def speaks OpenCode's run grammar and stream: ``run --format json [-m M]``,
prompt on stdin, parsed by the ``opencode`` dialect.

No permission bypass is passed: the seeds name none for mimo, and an
OpenCode-compatible fork is not known to accept OpenCode's flags.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.shared import model_flag, options_with_ids
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    McpInjection,
    PromptDelivery,
    RuntimeContext,
)

__all__ = ["AGENT_DEF"]


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """argv for one ``mimo run`` turn (ARGV-MIMO-001); prompt on stdin."""
    args = ["run", "--format", "json"]
    model = model_flag(options)
    if model is not None:
        args += ["-m", model]
    return args


AGENT_DEF = AgentDef(
    id="mimo",
    name="MiMo Code",
    bin="mimo",
    bin_env_key="MIMO_BIN",  # ref §5.2
    build_args=build_args,
    stream_format="json-event-stream",
    event_parser="opencode",
    prompt_delivery=PromptDelivery.STDIN,
    fallback_models=(
        DEFAULT_MODEL_OPTION,
        *options_with_ids(
            ("xiaomi/mimo-v2.5-pro", "mimo-v2.5-pro (Xiaomi)"),
            ("xiaomi/mimo-v2.5", "mimo-v2.5 (Xiaomi)"),
            ("xiaomi/mimo-v2-pro", "mimo-v2-pro (Xiaomi)"),
            ("xiaomi/mimo-v2-flash", "mimo-v2-flash (Xiaomi, fast)"),
        ),
    ),
    external_mcp_injection=McpInjection.MIMO_ENV_CONTENT,
)
