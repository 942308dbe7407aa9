"""Codex CLI over ``codex exec --json`` (seed 000 §5.3, seed 002 §4.2, ref §8.3).

Design: docs/design/defs.md#harness.defs.codex
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.defs.shared import (
    UnsupportedOptionError,
    choice_flag,
    clamp_codex_reasoning,
    env_value,
    model_flag,
    nonempty,
    options_with_ids,
    resume_id,
)
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    AuthProbe,
    BuildOptions,
    EnvStripRule,
    ListModels,
    McpInjection,
    ModelOption,
    NodeWrapperNative,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
    Transport,
)

__all__ = [
    "AGENT_DEF",
    "CODEX_REASONING_IDS",
    "codex_needs_danger_full_access",
    "parse_codex_debug_models",
]

_ID = "codex"

#: ref §8.3: reasoning ids ``default, none, minimal, low, medium, high, xhigh``.
CODEX_REASONING_IDS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh")

_WORKSPACE_WRITE: tuple[str, ...] = ("--sandbox", "workspace-write")
_NETWORK_ON = "sandbox_workspace_write.network_access=true"
_DEFAULT_PERMISSIONS = 'default_permissions=":workspace"'


def codex_needs_danger_full_access(platform: str, env: Mapping[str, str]) -> bool:
    """Whether Codex must run with ``danger-full-access`` instead of ``workspace-write``.

    seed 000 §10 / seed 002 §4.2 (ARGV-CODEX-003): Windows has no OS-level Codex
    sandbox and its fallback policy rejects every shell; WSL reports ``linux``
    but hits the same path; operators may force it with
    ``OD_CODEX_SANDBOX=danger-full-access`` (any other value keeps the default).
    A pure function of its arguments so every platform is testable anywhere.
    """
    override = env_value(env, "OD_CODEX_SANDBOX", platform)
    if override is not None and override.strip() == "danger-full-access":
        return True
    if platform == "win32":
        return True
    distro = env_value(env, "WSL_DISTRO_NAME", platform)
    return distro is not None and distro.strip() != ""


def _reasoning_args(options: BuildOptions) -> list[str]:
    effort = choice_flag(options.reasoning)
    if effort is None:
        return []
    if effort not in CODEX_REASONING_IDS:
        raise UnsupportedOptionError(
            _ID,
            "reasoning",
            effort,
            f"expected one of {list(CODEX_REASONING_IDS)}",
            rule="ARGV-CODEX-005",
        )
    # seed 002 §4.5 (ARGV-CODEX-005): clamp to what the model family accepts.
    clamped = clamp_codex_reasoning(options.model, effort)
    return ["-c", f'model_reasoning_effort="{clamped}"']


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """argv for one ``codex exec`` / ``codex exec resume`` turn; prompt on stdin."""
    danger = codex_needs_danger_full_access(ctx.platform, ctx.env)
    thread_id = resume_id(ctx)
    if thread_id is None:
        # seed 002 §4.2 / ref §8.3 (ARGV-CODEX-001): create turn.
        args = ["exec", "--json", "--skip-git-repo-check"]
        if danger:
            # ARGV-CODEX-003: no network override under danger-full-access.
            args += ["--sandbox", "danger-full-access"]
        else:
            args += [*_WORKSPACE_WRITE, "-c", _NETWORK_ON]
        args += ["-c", _DEFAULT_PERMISSIONS]
    else:
        # seed 002 §4.2 (ARGV-CODEX-002): resume rejects --sandbox; mirror the same
        # policy through -c so turn_context stays byte-identical.
        args = ["exec", "resume", "--json", "--skip-git-repo-check"]
        if danger:
            args += ["-c", 'sandbox_mode="danger-full-access"']
        else:
            args += ["-c", 'sandbox_mode="workspace-write"', "-c", _NETWORK_ON]
        args += ["-c", _DEFAULT_PERMISSIONS]
    # ref §8.3 (ARGV-CODEX-004): exactly '1' (unset or 'true' -> no flag).
    if env_value(ctx.env, "OD_CODEX_DISABLE_PLUGINS", ctx.platform) == "1":
        args += ["--disable", "plugins"]
    if thread_id is None:
        # seed 002 §4.2: -C and --add-dir are create-only.
        if ctx.cwd:
            args += ["-C", ctx.cwd]
        for directory in nonempty(extra_allowed_dirs):
            args += ["--add-dir", directory]
    model = model_flag(options)
    if model is not None:
        args += ["--model", model]
    args += _reasoning_args(options)
    tier = choice_flag(options.service_tier)
    if tier is not None:
        args += ["-c", f'service_tier="{tier}"']
    if thread_id is not None:
        # seed 000 §5.3: `codex exec resume --json ... <thread-id>`, id last.
        args.append(thread_id)
    return args


def _str_field(entry: Mapping[str, Any], *keys: str) -> str:
    for key in keys:
        value = entry.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def parse_codex_debug_models(stdout: str) -> list[ModelOption] | None:
    """Parse ``codex debug models`` JSON (ref §8.3, ARGV-CODEX-006).

    ``{"models": [{"slug", "display_name", "visibility"}, ...]}`` (a bare array is
    accepted too). ``visibility == "hidden"`` entries are dropped; the label is
    ``display_name`` (else ``name``, else the id); ids are de-duplicated and
    :data:`DEFAULT_MODEL_OPTION` comes first. Anything unparseable, or no
    visible model, gives ``None`` (detection then uses the fallback list).
    """
    try:
        parsed: Any = json.loads(stdout)
    except ValueError:
        return None
    models = parsed.get("models") if isinstance(parsed, dict) else parsed
    if not isinstance(models, list):
        return None
    out: list[ModelOption] = [DEFAULT_MODEL_OPTION]
    seen = {DEFAULT_MODEL_OPTION.id}
    for entry in models:
        if not isinstance(entry, dict) or entry.get("visibility") == "hidden":
            continue
        model_id = _str_field(entry, "slug", "id")
        if not model_id or model_id in seen:
            continue
        seen.add(model_id)
        out.append(ModelOption(model_id, _str_field(entry, "display_name", "name") or model_id))
    return out if len(out) > 1 else None


def build_app_server_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """``codex app-server`` (stdio JSON-RPC). Model, sandbox, cwd and the prompt travel
    in ``thread/start`` / ``turn/start`` frames, not in argv (seed 000 §5.3)."""
    return ["app-server"]


AGENT_DEF = AgentDef(
    id=_ID,
    name="Codex CLI",
    bin="codex",
    bin_env_key="CODEX_BIN",  # ref §5.2
    # seed 002 §5.1: the desktop app hides the CLI inside its bundle; tried after PATH.
    app_bundle_paths=(
        "/Applications/Codex.app/Contents/Resources/codex",
        "~/Applications/Codex.app/Contents/Resources/codex",
    ),
    # seed 002 §5.2: an npm `#!/usr/bin/env node` wrapper is swapped for the vendored
    # native binary node_modules/@openai/codex-<platform>-<arch>/vendor/<triple>/codex/codex.
    node_wrapper_native=NodeWrapperNative("@openai/codex-", "codex", "codex"),
    build_args=build_args,
    stream_format="json-event-stream",
    event_parser="codex",
    prompt_delivery=PromptDelivery.STDIN,
    # ref §5.3: an inherited API key would override the user's login unless the
    # user points Codex at their own endpoint.
    strip_env=(
        EnvStripRule(keys=("OPENAI_API_KEY", "CODEX_API_KEY"), unless_set=("OPENAI_BASE_URL",)),
    ),
    headless_flags=_WORKSPACE_WRITE,
    auth_probe=AuthProbe(args=("login", "status"), timeout_ms=5000),  # seed 000 §5.3
    list_models=ListModels(args=("debug", "models"), parse=parse_codex_debug_models),
    # ref §8.3: static hints when `debug models` is unavailable.
    fallback_models=(
        DEFAULT_MODEL_OPTION,
        *options_with_ids(
            *(
                (m, m)
                for m in (
                    "gpt-5.5",
                    "gpt-5.4",
                    "gpt-5.4-mini",
                    "gpt-5.3-codex",
                    "gpt-5.1",
                    "gpt-5.1-codex-mini",
                    "gpt-5-codex",
                    "gpt-5",
                    "o3",
                    "o4-mini",
                )
            )
        ),
    ),
    reasoning_options=(
        ModelOption("default", "Default"),
        *options_with_ids(
            ("none", "None"),
            ("minimal", "Minimal"),
            ("low", "Low"),
            ("medium", "Medium"),
            ("high", "High"),
            ("xhigh", "XHigh"),
        ),
    ),
    resume_style=ResumeStyle.CAPTURE,
    # seed 002 §8.1: codex has no external MCP injection; NONE is reported, not hidden.
    external_mcp_injection=McpInjection.NONE,
    docs_url="https://github.com/openai/codex",
    install_url="https://www.npmjs.com/package/@openai/codex",
    # seed 000 §5.3: app-server is the default run transport; exec-json is legacy.
    transport_name="exec-json",
    alt_transports=(
        Transport(
            name="app-server",
            stream_format="codex-app-server",
            build_args=build_app_server_args,
            prompt_delivery=PromptDelivery.PROTOCOL,
        ),
    ),
    transport_env_var="OD_CODEX_TRANSPORT",
    default_transport="app-server",
    # Stderr that means the resumed session is gone (seed 000 §8 recovery).
    resume_failure_patterns=(r"no rollout found for thread id", r"thread/resume failed"),
)
