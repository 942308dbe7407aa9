"""Kilo over ``acp-json-rpc`` (seed 000 §3 catalog; ref §8.3 kilo row).

Invocation: ``kilo acp`` (``kilocode`` is the package's alias binary, tried when ``kilo`` is not
found). Kilo only accepts models its ACP config option advertises, so free-text models are off
(ref §8.3 ``supportsCustomModel:false``). Resume is ACP ``session/load`` with durable ids. The MCP
``env`` shape is pinned to the ACP schema's array form (ref §7: "kilo pins 'array'").

Version policy (ref §8.3 "versionPolicy 7.4.23+"): MIME-aware ACP resource links landed in 7.4.23;
later 7.x and 8+ stable releases are accepted, a prerelease of the floor is not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.defs.shared import ACP_MODEL_DISCOVERY_INPUT, parse_acp_models
from harness.defs.types import (
    AcpEnvFormat,
    AcpOptions,
    AgentDef,
    BuildOptions,
    ListModels,
    McpInjection,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
    VersionPolicy,
)

__all__ = ["AGENT_DEF", "parse_kilo_version"]

_VERSION = re.compile(r"v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)")

#: 7.4.23 .. 7.4.x, 7.5+ .. 7.x, 8.x .. 9.x, 10+; optional ``+build`` metadata only.
_SUPPORTED_PATTERN = (
    r"^(?:7\.(?:4\.(?:2[3-9]|[3-9]\d|[1-9]\d{2,})|[5-9]\.\d+|\d{2,}\.\d+)"
    r"|[89]\.\d+\.\d+|[1-9]\d+\.\d+\.\d+)(?:\+[0-9A-Za-z.-]+)?$"
)


def parse_kilo_version(raw: str) -> str | None:
    """First semver in the ``kilo --version`` line, without a leading ``v``; else ``None``."""
    match = _VERSION.search(raw.strip())
    return match.group(1) if match else None


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
    id="kilo",
    name="Kilo",
    bin="kilo",
    fallback_bins=("kilocode",),
    bin_env_key="KILO_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="acp-json-rpc",
    prompt_delivery=PromptDelivery.PROTOCOL,
    supports_image_paths=True,
    supports_custom_model=False,
    # seed 002 §4.5 detectAcpModels (FIDELITY-ACP-MODELS-001): its model config option.
    list_models=ListModels(
        args=("acp",), stdin=ACP_MODEL_DISCOVERY_INPUT, parse=parse_acp_models, timeout_ms=10_000
    ),
    version_policy=VersionPolicy(
        supported_versions=("7.4.23",),
        supported_version_pattern=_SUPPORTED_PATTERN,
        require_version=True,
        parse=parse_kilo_version,
    ),
    resume_style=ResumeStyle.ACP_LOAD,
    external_mcp_injection=McpInjection.ACP_MERGE,
    acp=AcpOptions(mcp_env_format=AcpEnvFormat.ARRAY),
)
