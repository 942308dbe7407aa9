"""Grok Build (xAI's ``grok`` CLI) over ``plain`` with the prompt in a file.

Seed 002 §6.2 lists grok-build as the ``promptViaFile`` runtime: the engine writes the prompt to a
0600 temp file and passes its path in ``RuntimeContext.prompt_file_path`` (seed 002 §3.2).
Invocation: ``grok --prompt-file <path> [--model M] [--effort R]`` (seed 002 §1 table; ref §8.3
"new" generation). A missing path raises (seed 002 §6.2 and §9 ⑧: ``defs/grok-build.ts:81-83``
throws because the daemon, not the user, broke the contract; rule DEF-FILE-001).

Headless posture (seed 000 §10: a def never relies on an interactive approval): grok 0.2.111
in ``--prompt-file`` mode does not ask; without ``--always-approve`` it drops the model's first
tool call and ends the turn with exit 0, so the def passes ``--always-approve``.

``grok models`` prints one id per line plus header lines such as ``Default model: grok-build``;
:func:`parse_grok_models` keeps only single-token lines (ref §8.3: line-separated, 10 s).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    ListModels,
    ModelOption,
    PromptDelivery,
    RuntimeContext,
)
from harness.errors import AgentDefError

__all__ = ["AGENT_DEF", "parse_grok_models"]

_ID = "grok-build"
#: Tools run without an approval nobody could give (see the module docstring).
_HEADLESS = ("--always-approve",)


def parse_grok_models(stdout: str) -> list[ModelOption] | None:
    """One model id per line -> ``default`` + ids; ``None`` when no id line is found.

    Blank lines, ``#`` comments and lines with inner whitespace or a trailing ``:`` (headers
    like ``Default model: grok-build`` or ``Available models:``) are not ids.
    """
    out: list[ModelOption] = [DEFAULT_MODEL_OPTION]
    seen = {DEFAULT_MODEL_OPTION.id}
    for raw in stdout.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#") or line.endswith(":") or len(line.split()) != 1:
            continue
        if line in seen:
            continue
        seen.add(line)
        out.append(ModelOption(line, line))
    return out if len(out) > 1 else None


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    if not context.prompt_file_path:
        # seed 002 §9 ⑧: throw on the internal contract violation, never fall back to argv.
        raise AgentDefError(
            _ID,
            "RuntimeContext.prompt_file_path",
            "file prompt delivery needs the prompt file path before build_args",
            rule="DEF-FILE-001",
        )
    args = ["--prompt-file", context.prompt_file_path, *_HEADLESS]
    if options.model and options.model != DEFAULT_MODEL_OPTION.id:
        args += ["--model", options.model]
    if options.reasoning and options.reasoning != DEFAULT_MODEL_OPTION.id:
        args += ["--effort", options.reasoning]
    return args


AGENT_DEF = AgentDef(
    id=_ID,
    name="Grok Build",
    bin="grok",
    build_args=_build_args,
    stream_format="plain",
    prompt_delivery=PromptDelivery.FILE,
    headless_flags=_HEADLESS,
    list_models=ListModels(args=("models",), parse=parse_grok_models, timeout_ms=10_000),
    fallback_models=(
        DEFAULT_MODEL_OPTION,
        ModelOption("grok-build", "grok-build (xAI · default)"),
        ModelOption("grok-4.3", "grok-4.3 (xAI)"),
        ModelOption("grok-4.20-reasoning", "grok-4.20-reasoning (xAI · deep)"),
        ModelOption("grok-4.20-non-reasoning", "grok-4.20-non-reasoning (xAI · fast)"),
    ),
    reasoning_options=(
        ModelOption(DEFAULT_MODEL_OPTION.id, "Default"),
        ModelOption("low", "low"),
        ModelOption("medium", "medium"),
        ModelOption("high", "high"),
        ModelOption("xhigh", "xhigh"),
        ModelOption("max", "max"),
    ),
    install_url="https://x.ai/cli",
    docs_url="https://x.ai/cli",
)
