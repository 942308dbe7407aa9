"""Mistral Vibe over ``acp-json-rpc`` (seed 000 §3 catalog; seed 002 §4.3).

The shortest def: ``vibe-acp`` is itself the ACP server, so ``build_args`` returns ``[]``; models
come from the ACP handshake and everything else from the protocol (seed 002 §4.3). Resume is ACP
``session/load`` (ref §8.3); external MCP servers are merged (seed 002 §8.1 ``acp-merge``).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.types import (
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
    """No arguments at all (seed 002 §4.3: ``buildArgs: () => []``)."""
    return []


AGENT_DEF = AgentDef(
    id="vibe",
    name="Vibe",
    bin="vibe-acp",
    bin_env_key="VIBE_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="acp-json-rpc",
    prompt_delivery=PromptDelivery.PROTOCOL,
    resume_style=ResumeStyle.ACP_LOAD,
    external_mcp_injection=McpInjection.ACP_MERGE,
)
