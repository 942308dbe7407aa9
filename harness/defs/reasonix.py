"""DeepSeek Reasonix over ``acp-json-rpc`` (seed 000 §3 catalog; ref §8.3 reasonix row).

Invocation: ``reasonix acp`` (``dsnix`` is the alternate binary name). Reasonix >= 1.0 (Go)
expects an MCP server's ``env`` as a ``{"KEY": "value"}`` map rather than the ACP schema's
``[{name, value}]`` array (ref §2.6, ref §7: ``acpMcpEnvFormat:'map'``). No native resume
(ref §8.3: "—"); external MCP servers are merged (ref §7 lists reasonix under ``acp-merge``).

Upstream also sets ``REASONIX_ACP_SYSTEM_APPEND`` in the def's ``env`` (ref §5.3), but neither
the seeds nor the reference give its value, so this def declares no env rather than invent one.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.types import (
    AcpEnvFormat,
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
    id="reasonix",
    name="DeepSeek Reasonix",
    bin="reasonix",
    fallback_bins=("dsnix",),
    bin_env_key="REASONIX_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="acp-json-rpc",
    prompt_delivery=PromptDelivery.PROTOCOL,
    resume_style=ResumeStyle.NONE,
    external_mcp_injection=McpInjection.ACP_MERGE,
    acp=AcpOptions(mcp_env_format=AcpEnvFormat.MAP),
    install_url="https://github.com/esengine/DeepSeek-Reasonix",
)
