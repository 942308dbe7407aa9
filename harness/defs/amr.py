"""AMR (the Vela CLI's ACP stdio mode) over ``acp-json-rpc``.

Seed 000 §3 puts ``amr`` (Vela) in the ``acp-json-rpc`` catalog row; ref §8.3 gives the argv
``vela agent run --runtime opencode`` (a private OpenCode server forwarded over ACP), the
``VELA_DEFAULT_MODEL`` operator pin, ACP ``session/load`` resume and a 30-minute inactivity
ceiling (ref §10.1: "Copilot, dsh and amr declare 30 min"). Seed 000 §12 ("AMR compaction
continuation") requires ``loadSession`` on AMR's ``initialize`` response, so resume is ACP load.
A model selection AMR refuses ends the run with ``AMR_MODEL_UNAVAILABLE`` (ref §2.6 step 3,
``modelUnavailableErrorCode``) rather than falling back to the runtime's default model.

Live models come from ``vela model list --format json`` (ref §8.3), a JSON object
``{"source": "remote", "data": [{"id": ...}, ...]}``. Upstream retries that command twice
(250/750 ms); a retry schedule is engine behaviour, not def data, so it is not modelled here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AcpOptions,
    AgentDef,
    BuildOptions,
    ListModels,
    McpInjection,
    ModelOption,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
)

__all__ = ["AGENT_DEF", "parse_vela_model_list"]


def parse_vela_model_list(stdout: str) -> list[ModelOption] | None:
    """Parse ``vela model list --format json``; ``None`` (-> fallbacks) when it is not that shape.

    The shape is one JSON object with ``source == "remote"`` and a ``data`` array of objects
    carrying a string ``id``. Blank and duplicate ids are dropped; the synthetic
    ``default`` option is prepended like every other live list (ref §8.3).
    """
    try:
        value = json.loads(stdout)
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("source") != "remote":
        return None
    data = value.get("data")
    if not isinstance(data, list):
        return None
    out: list[ModelOption] = [DEFAULT_MODEL_OPTION]
    seen = {DEFAULT_MODEL_OPTION.id}
    for item in data:
        raw = item.get("id") if isinstance(item, dict) else None
        model_id = raw.strip() if isinstance(raw, str) else ""
        if not model_id or model_id in seen:
            continue
        seen.add(model_id)
        out.append(ModelOption(model_id, model_id))
    return out if len(out) > 1 else None


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    """Fixed argv (ref §8.3 amr row). The prompt and the model travel as ACP frames."""
    return ["agent", "run", "--runtime", "opencode"]


AGENT_DEF = AgentDef(
    id="amr",
    name="AMR",
    bin="vela",
    bin_env_key="VELA_BIN",  # ref §5.2
    build_args=_build_args,
    stream_format="acp-json-rpc",
    prompt_delivery=PromptDelivery.PROTOCOL,
    supports_image_paths=True,
    list_models=ListModels(
        args=("model", "list", "--format", "json"),
        parse=parse_vela_model_list,
        timeout_ms=10_000,
    ),
    # ref §8.3: the model is chosen through ACP session/set_model from the live catalog only.
    supports_custom_model=False,
    default_model_env_var="VELA_DEFAULT_MODEL",
    resume_style=ResumeStyle.ACP_LOAD,
    # ref §7 / §8.3 "MCP injection": amr is not in the acp-merge list, and seed 002 §8.1 does
    # not name it either; external MCP servers are therefore not forwarded (a reportable value).
    external_mcp_injection=McpInjection.NONE,
    inactivity_timeout_ms=30 * 60 * 1000,
    acp=AcpOptions(
        # ref §2.6 step 3: AMR fails a model it cannot select instead of running on its
        # default.
        model_unavailable_error_code="AMR_MODEL_UNAVAILABLE",
        # seed 000 §12: Vela continues its OpenCode runtime's interrupted turns natively.
        native_continue_runtime="opencode",
    ),
)
