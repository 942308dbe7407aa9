"""Cursor Agent (seed 000 §5.5, ref §8.3).

``cursor-agent --print --output-format stream-json --stream-partial-output
--force`` with the prompt on stdin (a ``-`` argument would be taken as the
literal prompt). ``--trust`` is capability-gated (seed 000 §6: "Arg builders use
those flags ... for example ... Cursor's ``--trust``"). Resume is capture-style:
the CLI mints the chat id (reported as ``session_id`` on the stream) and a later
turn continues it with ``--resume <id>``; cursor-agent has no ``--session-id``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.defs.shared import cap_found, model_flag, options_with_ids, resume_id
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    AuthProbe,
    BuildOptions,
    ListModels,
    McpInjection,
    ModelOption,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
)

__all__ = ["AGENT_DEF", "parse_cursor_models"]

#: seed 000 §10: "Cursor runs with ``--force`` and capability-gated ``--trust``".
_HEADLESS: tuple[str, ...] = ("--force", "--trust")

_NO_MODELS = re.compile(r"no models available", re.IGNORECASE)
_HEADER = re.compile(r"^(available models|models)\s*:?$", re.IGNORECASE)
#: ``<id>`` or ``<id> - <label>``; ids follow the custom-model id alphabet (ref §6).
_MODEL_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._/:@-]*)(?:\s+-\s+(.+))?$")


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """argv for one cursor-agent print-mode turn (ARGV-CURSOR-001); prompt on stdin."""
    args = ["--print", "--output-format", "stream-json", "--stream-partial-output", "--force"]
    # seed 000 §5.5 / §6: --trust only when `cursor-agent --help` lists it.
    if cap_found(options, "trust"):
        args.append("--trust")
    # seed 000 §5.5: `--workspace <project-cwd>` chooses the starting workspace.
    if ctx.cwd:
        args += ["--workspace", ctx.cwd]
    model = model_flag(options)
    if model is not None:
        args += ["--model", model]
    # ref §8.3: `[--resume id]`, only a stored (captured) id, never a host-minted one.
    stored = resume_id(ctx)
    if stored is not None:
        args += ["--resume", stored]
    return args


def parse_cursor_models(stdout: str) -> list[ModelOption] | None:
    """Parse ``cursor-agent models`` (ref §8.3, ARGV-CURSOR-002).

    One model per line, either ``<id>`` or ``<id> - <label>``; a heading line
    (``Available models``), blank lines and ``#`` comments are skipped. When the
    account is not signed in the CLI prints "No models available for this
    account." -- that is not a model list, so the result is ``None`` (as it is
    when no id is found) and detection falls back to ``fallback_models``.
    """
    text = stdout.strip()
    if not text or _NO_MODELS.search(text):
        return None
    out: list[ModelOption] = [DEFAULT_MODEL_OPTION]
    seen = {DEFAULT_MODEL_OPTION.id}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or _HEADER.match(line):
            continue
        match = _MODEL_LINE.match(line)
        if match is None:
            continue
        model_id = match.group(1)
        if model_id in seen:
            continue
        seen.add(model_id)
        label = (match.group(2) or "").strip() or model_id
        out.append(ModelOption(model_id, label))
    return out if len(out) > 1 else None


AGENT_DEF = AgentDef(
    id="cursor-agent",
    name="Cursor Agent",
    bin="cursor-agent",
    bin_env_key="CURSOR_AGENT_BIN",  # ref §5.2
    build_args=build_args,
    stream_format="json-event-stream",
    event_parser="cursor-agent",
    prompt_delivery=PromptDelivery.STDIN,
    headless_flags=_HEADLESS,
    help_args=("--help",),
    capability_flags={"--trust": "trust"},
    auth_probe=AuthProbe(args=("status",), timeout_ms=5000),  # seed 000 §5.5
    list_models=ListModels(args=("models",), parse=parse_cursor_models),
    fallback_models=(
        DEFAULT_MODEL_OPTION,
        *options_with_ids(
            ("auto", "auto"),
            ("sonnet-4", "sonnet-4"),
            ("sonnet-4-thinking", "sonnet-4-thinking"),
            ("gpt-5", "gpt-5"),
        ),
    ),
    resume_style=ResumeStyle.CAPTURE,
    # seed 002 §8.1: no external MCP injection for cursor-agent.
    external_mcp_injection=McpInjection.NONE,
    docs_url="https://docs.cursor.com/en/cli/overview",
    # Stderr that means the resumed session is gone (seed 000 §8 recovery).
    resume_failure_patterns=(r"chat not found", r"no chat found", r"could not find chat"),
)
