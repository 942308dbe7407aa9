"""Amp: headless execute mode with a Claude-compatible stream (seed 000 §3, ref §8.3).

``amp -x --stream-json`` reads a plain-text prompt from stdin (not stream-json:
stdin is closed after the prompt for a one-shot turn). The model picker selects
Amp's agent *mode* (``smart`` / ``deep`` / ``rush``), passed as ``--mode``; Amp
takes no free-form model id (``supports_custom_model=False``), so any other
value is not forwarded (upstream behaviour: "an unknown model id is ignored
rather than passed as a bogus mode").

Headless posture (seed 000 §10: "Amp's ``--dangerously-allow-all``"), dropped when
the user chose the ``restricted`` permission mode (ref §8.3).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.shared import model_flag, options_with_ids
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    PromptDelivery,
    PromptInputFormat,
    RuntimeContext,
)

__all__ = ["AGENT_DEF", "AMP_MODES", "RESTRICTED_PERMISSION_MODE"]

#: Amp agent modes selectable through the model picker (ref §8.3 ``--mode smart|deep|rush``).
AMP_MODES: tuple[str, ...] = ("smart", "deep", "rush")

#: ``options.permission_mode`` value that withholds ``--dangerously-allow-all`` (ref §8.3).
RESTRICTED_PERMISSION_MODE = "restricted"

_HEADLESS: tuple[str, ...] = ("--dangerously-allow-all",)


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """argv for one ``amp -x`` turn (ARGV-AMP-001); the prompt goes to stdin."""
    args = ["-x", "--stream-json"]
    # ref §8.3: `[--dangerously-allow-all (unless permissionMode restricted)]`.
    if options.permission_mode != RESTRICTED_PERMISSION_MODE:
        args += _HEADLESS
    mode = model_flag(options)
    if mode is not None and mode in AMP_MODES:
        args += ["--mode", mode]
    return args


AGENT_DEF = AgentDef(
    id="amp",
    name="Amp",
    bin="amp",
    # ref §5.2: amp has no *_BIN override key (PATH only).
    build_args=build_args,
    stream_format="claude-stream-json",
    prompt_delivery=PromptDelivery.STDIN,
    prompt_input_format=PromptInputFormat.TEXT,
    headless_flags=_HEADLESS,
    fallback_models=(
        DEFAULT_MODEL_OPTION,
        *options_with_ids(
            ("smart", "Smart (mode)"), ("deep", "Deep (mode)"), ("rush", "Rush (mode)")
        ),
    ),
    supports_custom_model=False,
    docs_url="https://ampcode.com/manual",
)
