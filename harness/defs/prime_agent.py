"""Prime Agent over ``pi-rpc`` (ref §8.3 prime-agent row, ref §2.7 last line).

Invocation: ``prime-agent --mode rpc [--cwd <cwd>] [--resume <id>]
[--provider <p> --model <m> | --model <M>] [--thinking <R>]``. A ``provider/model`` choice is
split into ``--provider`` and ``--model``; anything else goes to ``--model`` whole
(ref §8.3). ``None``/``default`` omits the model and the thinking flags.

Prime reopens its session from the process arguments (``--resume``) rather than through pi's
``new_session(parentSession)`` command; its session files live under
``~/.prime/agent/sessions`` (ref §2.7). Live models come from ``prime-agent model list``, a
whitespace-aligned ``provider model ...`` table (ref §8.3, 15 s).

Upstream declares ``acp-merge`` MCP injection on this def (ref §7), but a pi-rpc session has no
``mcpServers`` channel to merge into, so declaring it would drop servers silently; this def
declares ``NONE`` instead (design principle 3).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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

__all__ = ["AGENT_DEF", "parse_prime_model_list"]

_RULE_CELL = re.compile(r"^[-=─━|+]+$")


def parse_prime_model_list(stdout: str) -> list[ModelOption] | None:
    """``provider model ...`` rows -> ``provider/model`` options after ``default``.

    Header (first column ``provider``), rule and short rows are skipped, duplicates keep
    their first position; ``None`` when no row names a model.
    """
    out: list[ModelOption] = [DEFAULT_MODEL_OPTION]
    seen: set[str] = set()
    for raw in stdout.split("\n"):
        columns = raw.split()
        if len(columns) < 2 or columns[0].lower() == "provider":
            continue
        provider, model = columns[0], columns[1]
        if _RULE_CELL.match(provider):
            continue
        model_id = f"{provider}/{model}"
        if model_id in seen:
            continue
        seen.add(model_id)
        out.append(ModelOption(model_id, model_id))
    return out if len(out) > 1 else None


def _chosen(value: str | None) -> str | None:
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
    if context.cwd:
        args += ["--cwd", context.cwd]
    if context.resume_session_id:
        args += ["--resume", context.resume_session_id]
    model = _chosen(options.model)
    if model is not None:
        provider, slash, name = model.partition("/")
        if slash and provider and name:
            args += ["--provider", provider, "--model", name]
        else:
            args += ["--model", model]
    thinking = _chosen(options.reasoning)
    if thinking is not None:
        args += ["--thinking", thinking]
    return args


AGENT_DEF = AgentDef(
    id="prime-agent",
    name="Prime Agent",
    bin="prime-agent",
    build_args=_build_args,
    stream_format="pi-rpc",
    prompt_delivery=PromptDelivery.PROTOCOL,
    supports_image_paths=True,
    list_models=ListModels(args=("model", "list"), parse=parse_prime_model_list, timeout_ms=15_000),
    resume_style=ResumeStyle.PI_SESSION,
    external_mcp_injection=McpInjection.NONE,
    install_url="https://github.com/PrimeIntellect-ai/prime-agent",
    pi=PiOptions(session_dir="~/.prime/agent/sessions", resume_via_process_args=True),
)
