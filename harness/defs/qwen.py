"""Qwen Code over ``plain`` with the prompt on stdin (seed 000 §3 catalog; ref §8.3 qwen row).

Invocation: ``qwen --yolo [--model M]``; the prompt is written to stdin as text and stdin is
closed. ``--yolo`` is its non-interactive permission posture (seed 000 §10).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    PromptDelivery,
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
    args = ["--yolo"]
    if options.model and options.model != DEFAULT_MODEL_OPTION.id:
        args += ["--model", options.model]
    return args


AGENT_DEF = AgentDef(
    id="qwen",
    name="Qwen Code",
    bin="qwen",
    bin_env_key="QWEN_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="plain",
    prompt_delivery=PromptDelivery.STDIN,
    headless_flags=("--yolo",),
)
