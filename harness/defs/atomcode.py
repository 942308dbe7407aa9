"""AtomCode over ``plain`` with the prompt in a file (ref §8.3 atomcode row).

Invocation: ``atomcode --prompt-file <ctx.prompt_file_path> -y [--model M]``. The engine writes
the prompt to a 0600 temp file before ``build_args`` and passes its path in
``RuntimeContext.prompt_file_path`` (seed 002 §6.2). ``-y`` is the non-interactive approval flag
(seed 000 §10). A missing path is the engine breaking its own contract, so ``build_args`` raises
instead of degrading (seed 002 §9 ⑧, rule DEF-FILE-001).
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
from harness.errors import AgentDefError

__all__ = ["AGENT_DEF"]

_ID = "atomcode"


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    if not context.prompt_file_path:
        # seed 002 §9 ⑧: an internal contract violation throws, never degrades silently.
        raise AgentDefError(
            _ID,
            "RuntimeContext.prompt_file_path",
            "file prompt delivery needs the prompt file path before build_args",
            rule="DEF-FILE-001",
        )
    args = ["--prompt-file", context.prompt_file_path, "-y"]
    if options.model and options.model != DEFAULT_MODEL_OPTION.id:
        args += ["--model", options.model]
    return args


AGENT_DEF = AgentDef(
    id=_ID,
    name="AtomCode",
    bin="atomcode",
    build_args=_build_args,
    stream_format="plain",
    prompt_delivery=PromptDelivery.FILE,
    headless_flags=("-y",),
)
