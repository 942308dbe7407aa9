"""A deliberately broken def: the prompt travels in argv, but no argv budget is declared.

It says ``prompt_delivery=STDIN`` (so the loader, which refuses argv delivery without
``max_prompt_arg_bytes``, accepts it) while its ``build_args`` appends the prompt as a
positional argument: argv delivery in fact, with no budget, the E2BIG / Windows
command-line failure seed 002 §6.1 warns about. ``harness conform`` reports
DEF-PROMPT-001 with the argv holding the prompt as evidence.
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
    return [*args, prompt]  # the prompt in argv, with no max_prompt_arg_bytes


AGENT_DEF = dataclasses.replace(
    CLAUDE, id="broken-budget", name="Broken budget (prompt in argv)", build_args=build_args
)
