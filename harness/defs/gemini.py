"""Gemini CLI -- retired as a local runtime, kept documented (seed 000 §3, ref §8.3).

seed 000 §3: "Gemini remains available as a BYOK provider and MCP client target,
but its local generation runtime was retired and is not an adapter id"; seed 002
§3.4 still catalogs it under ``json-event-stream`` with the ``gemini`` dialect,
which is the shape kept here so recordings of it stay replayable.

``gemini --output-format stream-json --yolo [--model M]`` with the prompt on
stdin (Gemini reads stdin when ``-p`` is omitted and stdin is a pipe). Workspace
trust comes from ``GEMINI_CLI_TRUST_WORKSPACE=true`` in the def env instead of
``--skip-trust``, which several builds hide or reject (seed 002 §4.3). Upstream
pinned a minimum version 0.30.0 (the first with ``--output-format stream-json``);
``version_policy.min_version`` carries it (an older build is reported, not hidden).
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
    VersionPolicy,
)

__all__ = ["AGENT_DEF"]

_HEADLESS: tuple[str, ...] = ("--yolo",)


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """argv for one Gemini turn (ARGV-GEMINI-001); prompt on stdin."""
    args = ["--output-format", "stream-json", *_HEADLESS]
    model = model_flag(options)
    if model is not None:
        args += ["--model", model]
    return args


AGENT_DEF = AgentDef(
    id="gemini",
    name="Gemini CLI (retired)",
    bin="gemini",
    bin_env_key="GEMINI_BIN",  # ref §5.2
    build_args=build_args,
    stream_format="json-event-stream",
    event_parser="gemini",
    prompt_delivery=PromptDelivery.STDIN,
    env={"GEMINI_CLI_TRUST_WORKSPACE": "true"},
    version_policy=VersionPolicy(
        supported_versions=(),
        supported_version_pattern=r"^\d+\.\d+\.\d+",
        require_version=False,
        min_version="0.30.0",
    ),
    headless_flags=_HEADLESS,
    fallback_models=(
        DEFAULT_MODEL_OPTION,
        *options_with_ids(
            ("gemini-2.5-pro", "gemini-2.5-pro"),
            ("gemini-2.5-flash", "gemini-2.5-flash"),
            ("gemini-2.5-flash-lite", "gemini-2.5-flash-lite"),
        ),
    ),
    # seed 002 §8.1: gemini is in the "not set" row.
    external_mcp_injection=McpInjection.NONE,
    docs_url="https://github.com/google-gemini/gemini-cli",
    install_url="https://www.npmjs.com/package/@google/gemini-cli",
    # seed 000 §3 (FIDELITY-RETIRED-001): not an adapter id any more.
    retired=(
        "its local generation runtime was retired upstream; Gemini remains a BYOK provider "
        "and MCP client target"
    ),
)
