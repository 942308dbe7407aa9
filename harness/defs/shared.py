"""Helpers reused by several runtime definitions (not a registered agent).

Rules: ARGV-PURE-001.
Design: docs/design/defs.md#harness.defs.shared
"""

from __future__ import annotations

import json
import posixpath
import tempfile
from collections.abc import Iterable, Mapping
from typing import Any

from harness.defs.types import DEFAULT_MODEL_OPTION, BuildOptions, ModelOption, RuntimeContext
from harness.errors import HarnessError
from harness.protocols.acp.handshake import MODEL_CONFIG_IDS
from harness.protocols.options import choice_flag, clamp_codex_reasoning

__all__ = [
    "ACP_MODEL_DISCOVERY_INPUT",
    "OPENCODE_CAPABILITY_FLAGS",
    "OPENCODE_HELP_ARGS",
    "UnsupportedOptionError",
    "cap_found",
    "cap_not_denied",
    "choice_flag",
    "clamp_codex_reasoning",
    "env_value",
    "is_absolute_path",
    "model_flag",
    "new_session_id",
    "nonempty",
    "opencode_permission_bypass",
    "options_with_ids",
    "parse_acp_models",
    "parse_line_separated_models",
    "resume_id",
]


class UnsupportedOptionError(HarnessError):
    """A run option the def cannot express on this CLI (e.g. ``--effort`` not advertised).

    Raised by ``build_args`` instead of silently dropping a choice the user made
    (design principle 3: "unsupported" is a value the engine reports).
    """

    code = "AGENT_OPTION_UNSUPPORTED"

    def __init__(
        self, agent_id: str, option: str, value: str, problem: str, *, rule: str | None = None
    ) -> None:
        super().__init__(f"agent {agent_id!r}: option {option}={value!r}: {problem}", rule=rule)
        self.agent_id = agent_id
        self.option = option
        self.value = value


# --- options ---------------------------------------------------------------


def model_flag(options: BuildOptions) -> str | None:
    """The model to pass, or ``None`` when the CLI's own default applies.

    ref §8.3: "``options.model === 'default'`` always means 'omit the model flag'".
    """
    return choice_flag(options.model)


def cap_found(options: BuildOptions, key: str) -> bool:
    """A *newer* optional flag: on only when the help probe found it.

    seed 002 §5.5: a failed ``--help`` gives ``{}``, so every such flag is off
    (the safe baseline for old builds that reject unknown options).
    """
    return options.capabilities.get(key) is True


def cap_not_denied(options: BuildOptions, key: str) -> bool:
    """An *old* optional flag: on unless the probe explicitly said it is missing.

    seed 002 §4.1 / §9 ④: claude's ``--add-dir`` is gated ``caps.addDir !== false``
    because a failed probe should not drop a flag every supported build has.
    """
    return options.capabilities.get(key) is not False


def nonempty(values: Iterable[str]) -> list[str]:
    """Drop empty strings (upstream filters ``d.length > 0`` before every dir flag)."""
    return [v for v in values if isinstance(v, str) and v != ""]


def options_with_ids(*pairs: tuple[str, str]) -> tuple[ModelOption, ...]:
    """Build a ModelOption tuple from ``(id, label)`` pairs."""
    return tuple(ModelOption(i, label) for i, label in pairs)


# --- platform / env --------------------------------------------------------


def is_absolute_path(path: str, platform: str) -> bool:
    """``path`` is absolute under ``platform``'s rules, the same on every Python.

    Windows follows Node's ``path.win32.isAbsolute`` (the upstream adapters run on Node): a
    rooted path (``\\x``, ``/x``, UNC) or a drive letter with a separator (``C:\\x``).
    Python 3.13's ``ntpath.isabs`` no longer counts a rooted path without a drive, which
    would make a def's argv depend on the interpreter.
    """
    if platform == "win32":
        if not path:
            return False
        if path[0] in "\\/":
            return True
        return (
            len(path) > 2
            and path[0].isascii()
            and path[0].isalpha()
            and (path[1] == ":" and path[2] in "\\/")
        )
    return posixpath.isabs(path)


def env_value(env: Mapping[str, str], key: str, platform: str) -> str | None:
    """Look ``key`` up in the spawn env; case-insensitive on win32 (Windows env)."""
    if key in env:
        return env[key]
    if platform == "win32":
        folded = key.upper()
        for name, value in env.items():
            if name.upper() == folded:
                return value
    return None


# --- models -----------------------------------------------------------------


def parse_line_separated_models(text: str) -> list[ModelOption] | None:
    """Parse one-model-id-per-line ``<cli> models`` output (seed 002 §4.5).

    Lines are trimmed; blank lines and ``#`` comments are skipped; ids are
    de-duplicated in order; :data:`DEFAULT_MODEL_OPTION` is prepended. Returns
    ``None`` when no id remains, so detection falls back to ``fallback_models``
    (ref §5.1: "null/empty -> fallback").
    """
    out: list[ModelOption] = [DEFAULT_MODEL_OPTION]
    seen = {DEFAULT_MODEL_OPTION.id}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line in seen:
            continue
        seen.add(line)
        out.append(ModelOption(line, line))
    return out if len(out) > 1 else None


# --- opencode family ------------------------------------------------------------

#: ``opencode run --help`` is where the run flags live (ref §8.3).
OPENCODE_HELP_ARGS: tuple[str, ...] = ("run", "--help")

#: flag substring in ``opencode run --help`` -> capability key (ref §8.3).
OPENCODE_CAPABILITY_FLAGS: Mapping[str, str] = {
    "--dangerously-skip-permissions": "skipPermissions",
    "--auto": "autoApprove",
    "--dir": "workspaceDir",
    "--variant": "variantFlag",
    "--pure": "pureMode",
}


def opencode_permission_bypass(options: BuildOptions) -> list[str]:
    """The OpenCode non-interactive permission flag the help probe allows.

    seed 000 §5.6 / §10: ``--dangerously-skip-permissions`` only when
    ``opencode run --help`` advertises it, so older builds never see an unknown
    option. ref §8.3: builds that only document ``--auto`` get ``--auto``
    instead. Neither found (or the probe failed) -> no flag.
    """
    if cap_found(options, "skipPermissions"):
        return ["--dangerously-skip-permissions"]
    if cap_found(options, "autoApprove"):
        return ["--auto"]
    return []


def resume_id(ctx: RuntimeContext) -> str | None:
    """The stored native session id for this turn, or ``None`` on a first turn."""
    rid = ctx.resume_session_id
    return rid if isinstance(rid, str) and rid != "" else None


def new_session_id(ctx: RuntimeContext) -> str | None:
    """The host-minted id for a new specify-style session, or ``None``."""
    sid = ctx.new_session_id
    return sid if isinstance(sid, str) and sid != "" else None


# -- ACP model discovery (seed 002 §4.5 detectAcpModels; FIDELITY-ACP-MODELS-001) --------------
# An ACP agent has no models subcommand: detection writes this handshake to its stdin and
# reads the model state its session/new result reports (ref §2.6 step 3).

_CLIENT = {"name": "open-design-detect", "version": "runtime-adapter"}
#: ``initialize`` then ``session/new`` (ids 1 and 2) in an existing, neutral directory.
ACP_MODEL_DISCOVERY_INPUT: bytes = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": 1,
                "clientCapabilities": {"terminal": False},
                "clientInfo": _CLIENT,
            },
        }
    )
    + "\n"
    + json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": tempfile.gettempdir(), "mcpServers": []},
        }
    )
    + "\n"
).encode("utf-8")


def _session_result(stdout: str) -> dict[str, Any] | None:
    for line in stdout.splitlines():
        try:
            frame = json.loads(line)
        except ValueError:
            continue  # ACP agents may print banners on stdout (ref §2.6)
        if not isinstance(frame, dict) or frame.get("id") != 2:
            continue
        result = frame.get("result")
        if isinstance(result, dict):
            return dict(result)
    return None


def _option(value: Any, name: Any) -> ModelOption | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return ModelOption(value, name if isinstance(name, str) and name.strip() else value)


def parse_acp_models(stdout: str) -> list[ModelOption] | None:
    """The models of the ``session/new`` answer, or ``None`` when it reports none."""
    result = _session_result(stdout)
    if result is None:
        return None
    found: list[ModelOption] = []
    models = result.get("models")
    listed = models.get("availableModels") if isinstance(models, dict) else None
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, dict):
            option = _option(entry.get("modelId"), entry.get("name"))
            if option is not None:
                found.append(option)
    options = result.get("configOptions")
    for config in options if isinstance(options, list) and not found else []:
        if not (isinstance(config, dict) and str(config.get("id", "")).lower() in MODEL_CONFIG_IDS):
            continue
        choices = config.get("options")
        for choice in choices if isinstance(choices, list) else []:
            if isinstance(choice, dict):
                option = _option(choice.get("value"), choice.get("name"))
                if option is not None:
                    found.append(option)
    return found or None
