"""Kimi CLI over ``acp-json-rpc``.

Seed 000 §3 puts ``kimi`` in the ``acp-json-rpc`` row (the seeds win over seed 002 §3.4's older
``json-event-stream`` grouping and over the argv-prompt generation in ref §8.3). Invocation:
``kimi acp`` (ref §8.3 "kimi (ACP gen)"). Stdio MCP servers are withheld from ``session/new``
once the agent reports version >= 0.37.0 (ref §2.6 step 2, ref §7); other MCP servers are
merged (seed 002 §8.1 ``acp-merge``). No native resume (ref §8.3: "—").
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.types import (
    AcpOptions,
    AgentDef,
    BuildOptions,
    McpInjection,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
)

__all__ = ["AGENT_DEF"]


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    """Fixed argv (ref §8.3); the prompt is an ACP ``session/prompt`` frame."""
    return ["acp"]


AGENT_DEF = AgentDef(
    id="kimi",
    name="Kimi CLI",
    bin="kimi",
    bin_env_key="KIMI_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="acp-json-rpc",
    prompt_delivery=PromptDelivery.PROTOCOL,
    resume_style=ResumeStyle.NONE,
    external_mcp_injection=McpInjection.ACP_MERGE,
    acp=AcpOptions(stdio_mcp_removed_in_version="0.37.0"),
)
