"""Hermes over ``acp-json-rpc`` (seed 000 §3 catalog; ref §8.3 hermes row).

Invocation: ``hermes acp --accept-hooks``. ``--accept-hooks`` accepts the agent's hook consent
non-interactively, which is Hermes' headless posture (seed 000 §10: "Other definitions have
their own explicit headless posture"). No native resume (ref §8.3: "—"); external MCP servers
are merged into ``session/new`` (seed 002 §8.1 ``acp-merge``).
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
    """Fixed argv (ref §8.3)."""
    return ["acp", "--accept-hooks"]


AGENT_DEF = AgentDef(
    id="hermes",
    name="Hermes",
    bin="hermes",
    bin_env_key="HERMES_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="acp-json-rpc",
    prompt_delivery=PromptDelivery.PROTOCOL,
    headless_flags=("--accept-hooks",),
    resume_style=ResumeStyle.NONE,
    external_mcp_injection=McpInjection.ACP_MERGE,
)
