"""DeepSeek Harness (``dsh``) with the ``open-design`` profile over ``dsh-profile-jsonl``.

Design: docs/design/defs.md#harness.defs.deepseek_harness
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    CompatibilityProbe,
    ListModels,
    ModelOption,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
    VersionPolicy,
)
from harness.protocols.dsh_frames import parse_probe_stdout

__all__ = [
    "AGENT_DEF",
    "PROFILE",
    "PROTOCOL_VERSION",
    "REQUIRED_CAPABILITIES",
    "RUNTIME",
    "parse_dsh_version",
    "parse_models_output",
    "parse_probe_output",
]

PROFILE = "open-design"
RUNTIME = "open-design"
PROTOCOL_VERSION = 1
#: seed 001 §5: the phase-one capabilities a probe frame must report as ``true``.
REQUIRED_CAPABILITIES = ("session_resume", "session_cancel", "structured_events")

#: A semver-ish token: ``[v]MAJOR.MINOR.PATCH[-prerelease][+build]``, alone on its word.
_VERSION = re.compile(r"(?:^|\s)v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)(?=\s|$)")
#: ref §2.8: optional ``compatibility_generation`` syntax.
_GENERATION = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
#: ref §8.3 "supported ... + pattern": any 0.1.x release, and the release-candidate lines the
#: profile package's peer ranges can install (0.1.0-rc.6+, 0.1.1-rc.N, 0.1.2-rc.N). The
#: shipped bundle is also tested live on 0.2.1-rc.2 (PyPI deepseek-harness-runtime-bin
#: 0.2.1rc2, the live recipe), listed exactly: other 0.2 builds only warn.
_SUPPORTED_PATTERN = (
    r"^0\.1\.\d+$|^0\.1\.0-rc\.(?:[6-9]|[1-9]\d+)$|^0\.1\.1-rc\.\d+$|^0\.1\.2-rc\.\d+$"
    r"|^0\.2\.1-rc\.2$"
)


def parse_dsh_version(raw: str) -> str | None:
    """The version in a ``dsh --version`` line (``0.1.2-rc.1``, ``v0.1.2-rc.1``,
    ``dsh 0.1.2-rc.1``), without the ``v``; ``None`` when the line has no such token.

    seed 001 §5: an unparseable version is an error (``require_version``), so this never guesses.
    """
    match = _VERSION.search(raw.strip())
    return match.group(1) if match else None


def _is_int_one(value: Any) -> bool:
    # JSON ``true`` is a Python bool, and bool is an int subclass: exclude it explicitly.
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value == 1


def _single_json_line(stdout: str, what: str) -> Any:
    lines = [line for line in stdout.split("\n") if line.strip()]
    if len(lines) != 1:
        raise ValueError(f"{what}: expected exactly one JSON line, got {len(lines)}")
    try:
        return json.loads(lines[0])
    except ValueError:
        raise ValueError(f"{what}: the line is not valid JSON") from None


def parse_probe_output(stdout: str) -> str:
    """Validate the probe frame of seed 001 §5 and return its ``plugin_version``.

    One validator serves detection and the session: this delegates to
    :func:`harness.protocols.dsh_frames.parse_probe_stdout`, whose ``ValueError``
    names the failing field and never echoes received values (ref §2.8).
    """
    return parse_probe_stdout(stdout).plugin_version


def _non_empty_str(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def parse_models_output(stdout: str) -> list[ModelOption] | None:
    """``--models`` catalog -> ``default`` + ``provider/id`` options; ``None`` when malformed.

    Any malformed entry rejects the whole catalog (detection then reports the fallbacks).
    """
    try:
        frame = _single_json_line(stdout, "dsh models output")
    except ValueError:
        return None
    if (
        not isinstance(frame, dict)
        or not _is_int_one(frame.get("v"))
        or frame.get("type") != "models"
        or frame.get("runtime") != RUNTIME
        or not isinstance(frame.get("models"), list)
    ):
        return None
    out: list[ModelOption] = [DEFAULT_MODEL_OPTION]
    seen: set[str] = set()
    for entry in frame["models"]:
        if not isinstance(entry, dict) or not all(
            _non_empty_str(entry.get(key)) for key in ("provider", "provider_name", "id", "name")
        ):
            return None
        efforts = entry.get("reasoning_options")
        if efforts is not None and not (
            isinstance(efforts, list)
            and all(
                isinstance(e, dict)
                and _non_empty_str(e.get("id"))
                and _non_empty_str(e.get("name"))
                and isinstance(e.get("default", False), bool)
                for e in efforts
            )
        ):
            return None
        model_id = f"{entry['provider']}/{entry['id']}"
        if model_id in seen:
            continue
        seen.add(model_id)
        out.append(ModelOption(model_id, f"{entry['name']} · {entry['provider_name']}"))
    return out if len(out) > 1 else None


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    """Fixed argv (seed 001 §6). Model, reasoning and resume id go in the ``execute`` frame."""
    return ["--profile", PROFILE, "--stdio"]


AGENT_DEF = AgentDef(
    id="deepseek-harness",
    name="DeepSeek Harness",
    bin="dsh",
    bin_env_key="DSH_BIN",  # seed 001 §1
    build_args=_build_args,
    stream_format="dsh-profile-jsonl",
    prompt_delivery=PromptDelivery.PROTOCOL,
    list_models=ListModels(
        args=("--profile", PROFILE, "--models"), parse=parse_models_output, timeout_ms=10_000
    ),
    supports_custom_model=False,
    version_policy=VersionPolicy(
        supported_versions=("0.1.0-rc.8", "0.1.1-rc.2", "0.1.2-rc.1", "0.2.1-rc.2"),
        supported_version_pattern=_SUPPORTED_PATTERN,
        require_version=True,
        parse=parse_dsh_version,
    ),
    compatibility_probe=CompatibilityProbe(
        args=("--profile", PROFILE, "--probe"), parse=parse_probe_output, timeout_ms=10_000
    ),
    resume_style=ResumeStyle.PROFILE_STDIO,
    inactivity_timeout_ms=30 * 60 * 1000,
)
