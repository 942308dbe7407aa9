"""Trae CLI over ``acp-json-rpc`` (seed 000 §5.9).

Invocation: ``traecli acp serve --yolo``. ``--yolo`` avoids headless approval prompts (seed 000
§5.9 "Permission", §10 "Qoder and Trae use --yolo"). External MCP servers go through the ACP
launch descriptor (``acp-merge``, seed 000 §5.9). The version probe gets 10 s and resume is ACP
``session/load`` (ref §8.3 trae-cli row).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.shared import ACP_MODEL_DISCOVERY_INPUT, parse_acp_models
from harness.defs.types import (
    AgentDef,
    BuildOptions,
    ListModels,
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
    """Fixed argv (seed 000 §5.9)."""
    return ["acp", "serve", "--yolo"]


AGENT_DEF = AgentDef(
    id="trae-cli",
    name="Trae CLI",
    bin="traecli",
    bin_env_key="TRAE_CLI_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="acp-json-rpc",
    prompt_delivery=PromptDelivery.PROTOCOL,
    headless_flags=("--yolo",),
    version_probe_timeout_ms=10_000,
    # seed 002 §4.5 detectAcpModels (FIDELITY-ACP-MODELS-001): the models session/new reports.
    list_models=ListModels(
        args=("acp", "serve", "--yolo"),
        stdin=ACP_MODEL_DISCOVERY_INPUT,
        parse=parse_acp_models,
        timeout_ms=10_000,
    ),
    resume_style=ResumeStyle.ACP_LOAD,
    external_mcp_injection=McpInjection.ACP_MERGE,
    docs_url="https://www.volcengine.com/docs/86677/2227861?lang=zh",  # seed 000 §5.9
)
