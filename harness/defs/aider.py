"""Aider over ``plain`` (seed 000 §3 catalog; ref §8.3 aider row).

Invocation: ``aider --yes-always --no-pretty --no-git --no-auto-commits
--no-suggest-shell-commands --no-show-model-warnings [--model M] --message <prompt>``.
The prompt is an argv value, so the def declares a 30 000-byte budget (seed 000 §12: "argv-only
definitions must declare and enforce a prompt budget"; ref §8.3). ``--yes-always`` is its
non-interactive permission posture (seed 000 §10). Output is plain text; artifacts are extracted
from ``<artifact>`` blocks after the run (seed 000 §5.13).
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

_FIXED = (
    "--yes-always",
    "--no-pretty",
    "--no-git",
    "--no-auto-commits",
    "--no-suggest-shell-commands",
    "--no-show-model-warnings",
)


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    args = list(_FIXED)
    if options.model and options.model != DEFAULT_MODEL_OPTION.id:
        args += ["--model", options.model]
    # --message is last so the prompt never shifts the position of another flag.
    args += ["--message", prompt]
    return args


AGENT_DEF = AgentDef(
    id="aider",
    name="Aider",
    bin="aider",
    bin_env_key="AIDER_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="plain",
    prompt_delivery=PromptDelivery.ARGV,
    max_prompt_arg_bytes=30_000,
    headless_flags=("--yes-always",),
)
