"""Kiro CLI over ``acp-json-rpc`` (seed 000 §3 catalog; ref §8.3 kiro row).

Invocation: ``kiro-cli acp``. Resume is ACP ``session/load``; Kiro's ``turn_end`` session update
completes the prompt (``acpTurnEndCompletesPrompt``, ref §2.6 step 5). External MCP servers are
merged into ``session/new`` (seed 002 §8.1 ``acp-merge``).
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
    """Fixed argv (ref §8.3)."""
    return ["acp"]


AGENT_DEF = AgentDef(
    id="kiro",
    name="Kiro CLI",
    bin="kiro-cli",
    bin_env_key="KIRO_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="acp-json-rpc",
    prompt_delivery=PromptDelivery.PROTOCOL,
    resume_style=ResumeStyle.ACP_LOAD,
    external_mcp_injection=McpInjection.ACP_MERGE,
    acp=AcpOptions(turn_end_completes_prompt=True),
)
