"""A deliberately broken def: Claude Code's def with a flag Claude Code does not have.

The author copied qwen's ``--yolo`` into a claude-stream-json def. Every def-level check
passes (the argv is pure, headless, budget-free); the fake ``claude`` rejects the unknown
option the way Claude Code's commander parser does, so the happy scenario's run fails and
``harness conform`` reports RUN-HAPPY-TEXT-001 with the CLI's stderr as evidence.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from harness.defs.claude import AGENT_DEF as CLAUDE
from harness.defs.types import BuildOptions, RuntimeContext


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    args = CLAUDE.build_args(prompt, image_paths, extra_allowed_dirs, options, ctx)
    return [*args, "--yolo"]  # not a Claude Code flag


AGENT_DEF = dataclasses.replace(
    CLAUDE, id="broken-argv", name="Broken argv (claude + --yolo)", build_args=build_args
)
