"""pi over ``pi-rpc`` (seed 000 §5.10).

Invocation: ``pi --mode rpc [--model M] [--thinking R] [--skill <dir>]...
[--append-system-prompt <dir>]...``. The prompt is an RPC ``prompt`` command on stdin, never argv.

Design: docs/design/defs.md#harness.defs.pi
"""

from __future__ import annotations

import ntpath
import posixpath
import re
from collections.abc import Sequence

from harness.defs.shared import is_absolute_path
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    ListModels,
    McpInjection,
    ModelOption,
    PiOptions,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
)

__all__ = ["AGENT_DEF", "THINKING_LEVELS", "parse_pi_model_table"]

#: seed 000 §5.10 "Thinking": the levels pi's ``--thinking`` accepts.
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_RULE_LINE = re.compile(r"^[-=─━\s|+]+$")


def parse_pi_model_table(stdout: str) -> list[ModelOption] | None:
    """``provider  model  ...`` rows -> ``provider/model`` options after ``default``.

    Rows count only after the table's header (first two columns ``provider`` and ``model``), so
    a diagnostic printed instead of the table is never mistaken for a model. Columns are split
    on any whitespace (tabs or aligned spaces); ANSI colour codes, rule lines, blank lines and
    rows with fewer than two columns are skipped; duplicates keep their first position.
    Returns ``None`` when no model row is found, so detection uses the fallbacks.
    """
    out: list[ModelOption] = [DEFAULT_MODEL_OPTION]
    seen: set[str] = set()
    in_table = False
    for raw in _ANSI.sub("", stdout).split("\n"):
        line = raw.strip()
        if not line or _RULE_LINE.match(line):
            continue
        columns = line.split()
        if [c.lower() for c in columns[:2]] == ["provider", "model"]:
            in_table = True
            continue
        if not in_table or len(columns) < 2:
            continue
        provider, model = columns[0], columns[1]
        model_id = f"{provider}/{model}"
        if model_id in seen:
            continue
        seen.add(model_id)
        out.append(ModelOption(model_id, f"{model} ({provider})"))
    return out if len(out) > 1 else None


def _chosen(value: str | None) -> str | None:
    """The user's choice, or ``None`` when unset or ``default`` (omit the flag)."""
    if not value or value == DEFAULT_MODEL_OPTION.id:
        return None
    return value


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    args = ["--mode", "rpc"]
    model = _chosen(options.model)
    if model is not None:
        args += ["--model", model]
    thinking = _chosen(options.reasoning)
    if thinking is not None:
        args += ["--thinking", thinking]
    skills: list[str] = []
    for skill_dir in context.skill_dirs:
        if is_absolute_path(skill_dir, context.platform) and skill_dir not in skills:
            skills.append(skill_dir)
    for skill_dir in skills:
        args += ["--skill", skill_dir]
    hinted: list[str] = []
    for extra in extra_allowed_dirs:
        absolute = is_absolute_path(extra, context.platform)
        if absolute and extra not in skills and extra not in hinted:
            hinted.append(extra)
    for extra in hinted:
        args += ["--append-system-prompt", extra]
    if context.cwd:
        # seed 000 §5.10 "Resume": the run captures the one changed file under
        # pi.session_dir; pi 0.73 stores sessions under ~/.pi/agent/sessions unless
        # told otherwise, so point it at <cwd>/.pi/sessions (`--session-dir`).
        join = ntpath.join if context.platform == "win32" else posixpath.join
        args += ["--session-dir", join(context.cwd, ".pi", "sessions")]
    return args


AGENT_DEF = AgentDef(
    id="pi",
    name="Pi",
    bin="pi",
    bin_env_key="PI_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="pi-rpc",
    prompt_delivery=PromptDelivery.PROTOCOL,
    # seed 000 §5.10 "Images": the RPC prompt command carries base64 images.
    supports_image_paths=True,
    version_probe_timeout_ms=15_000,
    list_models=ListModels(args=("--list-models",), parse=parse_pi_model_table, timeout_ms=60_000),
    fallback_models=(
        DEFAULT_MODEL_OPTION,
        ModelOption("anthropic/claude-sonnet-4-5", "Claude Sonnet 4.5 (anthropic)"),
        ModelOption("anthropic/claude-opus-4-5", "Claude Opus 4.5 (anthropic)"),
        ModelOption("openai/gpt-5", "GPT-5 (openai)"),
        ModelOption("openai/o4-mini", "o4-mini (openai)"),
        ModelOption("google/gemini-2.5-pro", "Gemini 2.5 Pro (google)"),
        ModelOption("google/gemini-2.5-flash", "Gemini 2.5 Flash (google)"),
    ),
    reasoning_options=(
        ModelOption(DEFAULT_MODEL_OPTION.id, "Default"),
        *(ModelOption(level, level) for level in THINKING_LEVELS),
    ),
    resume_style=ResumeStyle.PI_SESSION,
    pi=PiOptions(session_dir=".pi/sessions"),
    # seed 002 §8.1: pi is among the runtimes that get no external MCP injection.
    external_mcp_injection=McpInjection.NONE,
)
