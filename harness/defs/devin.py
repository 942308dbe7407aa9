"""Devin for Terminal over ``acp-json-rpc`` (seed 000 §5.4).

Invocation: ``devin --permission-mode dangerous --respect-workspace-trust false acp``.
``--permission-mode dangerous`` avoids headless approval prompts and
``--respect-workspace-trust false`` keeps Devin from blocking on trust prompts for new project
directories (seed 000 §5.4 "Permission", §10). Resume is ACP ``session/load`` (ref §8.3);
external MCP servers are merged into ``session/new`` (seed 002 §8.1 ``acp-merge``).
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

#: seed 000 §10: "Devin uses --permission-mode dangerous --respect-workspace-trust false".
_HEADLESS = ("--permission-mode", "dangerous", "--respect-workspace-trust", "false")


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    """Fixed argv (seed 000 §5.4); the permission flags precede the ``acp`` subcommand."""
    return [*_HEADLESS, "acp"]


AGENT_DEF = AgentDef(
    id="devin",
    name="Devin for Terminal",
    bin="devin",
    bin_env_key="DEVIN_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="acp-json-rpc",
    prompt_delivery=PromptDelivery.PROTOCOL,
    headless_flags=_HEADLESS,
    resume_style=ResumeStyle.ACP_LOAD,
    external_mcp_injection=McpInjection.ACP_MERGE,
    install_url="https://cli.devin.ai/install.sh",  # seed 000 §5.4 "Install/update"
)
