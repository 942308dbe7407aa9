"""OpenCode (seed 000 §5.6, §10; ref §8.3).

Design: docs/design/defs.md#harness.defs.opencode
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from harness.defs.shared import (
    OPENCODE_CAPABILITY_FLAGS,
    OPENCODE_HELP_ARGS,
    cap_found,
    model_flag,
    opencode_permission_bypass,
    options_with_ids,
    resume_id,
)
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    ListModels,
    McpInjection,
    ModelOption,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
)

__all__ = ["AGENT_DEF", "parse_opencode_models"]

#: ``provider/model`` (OpenCode's model syntax).
_MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._/:@-]*$")
_DECODER = json.JSONDecoder()


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """argv for one ``opencode run`` turn (ARGV-OPENCODE-002); prompt on stdin."""
    args = ["run", "--format", "json"]
    # seed 000 §10 (ARGV-OPENCODE-001): only a flag the help probe advertised.
    args += opencode_permission_bypass(options)
    # ref §8.3: `{--dir cwd}` -- OpenCode 1.x otherwise adopts the nearest git root.
    if ctx.cwd and cap_found(options, "workspaceDir"):
        args += ["--dir", ctx.cwd]
    # seed 000 §5.6: "Follow-up turns continue the native session with -s <session-id>".
    stored = resume_id(ctx)
    if stored is not None:
        args += ["-s", stored]
    model = model_flag(options)
    if model is not None:
        args += ["-m", model]
    return args


def parse_opencode_models(stdout: str) -> list[ModelOption] | None:
    """Parse ``opencode models --verbose`` (or plain ``opencode models``) output.

    ref §8.3 (ARGV-OPENCODE-003): the verbose form prints each ``provider/model``
    id followed by a pretty-printed JSON metadata object; the plain form (2.x)
    prints one id per line. Every id matching ``provider/model`` is kept once,
    in order, after :data:`DEFAULT_MODEL_OPTION`; metadata blocks are skipped
    whole (a JSON value that does not decode ends the block at that line).
    ``None`` when no id is found.
    """
    out: list[ModelOption] = [DEFAULT_MODEL_OPTION]
    seen: set[str] = set()
    lines = stdout.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        index += 1
        if line.startswith("{"):
            index = _skip_json_block(lines, index - 1)
            continue
        if not _MODEL_ID.match(line) or line in seen:
            continue
        seen.add(line)
        out.append(ModelOption(line, line))
    return out if len(out) > 1 else None


def _skip_json_block(lines: list[str], start: int) -> int:
    """Index of the first line after the JSON value that begins at ``lines[start]``."""
    text = "\n".join(lines[start:])
    try:
        _, end = _DECODER.raw_decode(text.lstrip())
    except ValueError:
        return start + 1
    consumed = text.lstrip()[:end]
    return start + consumed.count("\n") + 1


AGENT_DEF = AgentDef(
    id="opencode",
    name="OpenCode",
    bin="opencode-cli",
    fallback_bins=("opencode",),
    bin_env_key="OPENCODE_BIN",  # ref §5.2
    build_args=build_args,
    stream_format="json-event-stream",
    event_parser="opencode",
    prompt_delivery=PromptDelivery.STDIN,
    headless_flags=("--dangerously-skip-permissions",),
    help_args=OPENCODE_HELP_ARGS,
    capability_flags=OPENCODE_CAPABILITY_FLAGS,
    # ref §8.3: `models --verbose`, 15 s (a provider-registry round trip can take >8 s).
    list_models=ListModels(
        args=("models", "--verbose"),
        parse=parse_opencode_models,
        timeout_ms=15_000,
        # ref §8.3: OpenCode 2.x rejects --verbose; retry the plain listing.
        fallback_args=("models",),
    ),
    fallback_models=(
        DEFAULT_MODEL_OPTION,
        *options_with_ids(
            ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
            ("openai/gpt-5", "openai/gpt-5"),
            ("google/gemini-2.5-pro", "google/gemini-2.5-pro"),
        ),
    ),
    resume_style=ResumeStyle.CAPTURE,
    external_mcp_injection=McpInjection.OPENCODE_ENV_CONTENT,
    # seed 002 §7.4 (FIDELITY-OPENCODE-LOG-001): provider errors are in OpenCode's own log.
    failure_log_dir="~/.local/share/opencode/log",
    docs_url="https://opencode.ai/docs",
    install_url="https://www.npmjs.com/package/opencode-ai",
    # Stderr that means the resumed session is gone (seed 000 §8 recovery).
    resume_failure_patterns=(r"session not found", r"NotFoundError"),
)
