"""Qoder CLI (seed 000 §5.8, ref §8.3).

``qodercli -p --output-format stream-json --yolo -w <project-cwd>`` with an
optional model, repeated ``--add-dir`` for *absolute* external roots only
(relative entries are not forwarded) and one ``--attachment <image>`` per image;
the prompt goes to stdin and print mode exits after the turn. Selecting
``default`` omits ``--model`` so Qoder's own configuration stays authoritative.

Detection only proves ``qodercli --version`` runs: Qoder owns login (persisted
``qodercli login`` state or an inherited ``QODER_PERSONAL_ACCESS_TOKEN``), so
there is no auth probe. (Never run the real ``qodercli`` in this project: it
dials public addresses by itself; it is tested with the fake CLI only.)
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.shared import is_absolute_path, model_flag, nonempty, options_with_ids
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    McpInjection,
    PromptDelivery,
    RuntimeContext,
)

__all__ = ["AGENT_DEF"]

#: seed 000 §10: "Qoder and Trae use ``--yolo``".
_HEADLESS: tuple[str, ...] = ("--yolo",)


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """argv for one ``qodercli -p`` turn (ARGV-QODER-001); prompt on stdin."""
    args = ["-p", "--output-format", "stream-json", *_HEADLESS]
    if ctx.cwd:
        args += ["-w", ctx.cwd]
    model = model_flag(options)
    if model is not None:
        args += ["--model", model]
    # seed 000 §5.8: "--add-dir is repeatable for absolute external roots; relative
    # entries are not forwarded" (absolute judged by the target platform's rules).
    for directory in nonempty(extra_allowed_dirs):
        if is_absolute_path(directory, ctx.platform):
            args += ["--add-dir", directory]
    # seed 000 §5.8: "one --attachment <absolute-image-path> per image".
    for image in nonempty(image_paths):
        args += ["--attachment", image]
    return args


AGENT_DEF = AgentDef(
    id="qoder",
    name="Qoder CLI",
    bin="qodercli",
    bin_env_key="QODER_BIN",  # ref §5.2
    build_args=build_args,
    stream_format="qoder-stream-json",
    prompt_delivery=PromptDelivery.STDIN,
    supports_image_paths=True,
    headless_flags=_HEADLESS,
    # seed 000 §5.8: fallback hints default, lite, efficient, auto, performance, ultimate.
    fallback_models=(
        DEFAULT_MODEL_OPTION,
        *options_with_ids(
            ("lite", "Lite"),
            ("efficient", "Efficient"),
            ("auto", "Auto"),
            ("performance", "Performance"),
            ("ultimate", "Ultimate"),
        ),
    ),
    # seed 002 §8.1: no external MCP injection for qoder.
    external_mcp_injection=McpInjection.NONE,
)
