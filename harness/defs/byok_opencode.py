"""BYOK OpenCode: the API-key-backed OpenCode profile (seed 000 §5.2, ref §8.3).

It replaced the old direct-Anthropic fallback loop: provider credentials and the
chosen model are translated into OpenCode configuration, and the installed
OpenCode process still owns the model/tool loop. argv is ``run --format json``,
the probe-gated permission bypass shared with ``opencode`` and the model in
OpenCode's ``provider/model`` syntax; the prompt goes to stdin. It shares the
OpenCode JSON-event parser and the ``OPENCODE_CONFIG_CONTENT`` MCP injection.

The argv carries no session flag, so no native resume is declared (ref §8.3's
table lists capture-style, but an id the argv never passes back would be dead
state). ref §5.2: the executable override key is OpenCode's ``OPENCODE_BIN``.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.shared import (
    OPENCODE_CAPABILITY_FLAGS,
    OPENCODE_HELP_ARGS,
    model_flag,
    opencode_permission_bypass,
)
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    McpInjection,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
)

__all__ = ["AGENT_DEF"]


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """argv for one BYOK ``opencode run`` turn (ARGV-BYOK-001); prompt on stdin."""
    args = ["run", "--format", "json"]
    # seed 000 §10: the same probe-gated bypass as opencode.
    args += opencode_permission_bypass(options)
    model = model_flag(options)
    if model is not None:
        args += ["-m", model]
    return args


AGENT_DEF = AgentDef(
    id="byok-opencode",
    name="BYOK OpenCode",
    bin="opencode2",
    fallback_bins=("opencode-cli", "opencode"),
    bin_env_key="OPENCODE_BIN",
    build_args=build_args,
    stream_format="json-event-stream",
    event_parser="opencode",
    prompt_delivery=PromptDelivery.STDIN,
    headless_flags=("--dangerously-skip-permissions",),
    help_args=OPENCODE_HELP_ARGS,
    capability_flags=OPENCODE_CAPABILITY_FLAGS,
    fallback_models=(DEFAULT_MODEL_OPTION,),
    supports_custom_model=True,
    resume_style=ResumeStyle.NONE,
    external_mcp_injection=McpInjection.OPENCODE_ENV_CONTENT,
    # seed 002 §7.4 (FIDELITY-OPENCODE-LOG-001): provider errors are in OpenCode's own log.
    failure_log_dir="~/.local/share/opencode/log",
    docs_url="https://opencode.ai/docs",
)
