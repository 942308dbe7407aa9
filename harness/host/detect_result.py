"""What detection found about one def: :class:`DetectionResult` and its diagnostics.

Plain data, kept apart from the probing in :mod:`harness.runtime.detect` so the host policy that
reads a result (selection, sessions) does not depend on the module that spawns probes.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.defs.types import DEFAULT_MODEL_OPTION, ModelOption

__all__ = ["AuthStatus", "DetectionResult", "Diagnostic", "DiagnosticCode"]


class DiagnosticCode(str, enum.Enum):
    """Machine-readable diagnostic codes of a :class:`DetectionResult`."""

    #: No executable on PATH, toolchain dirs or app bundle.
    NOT_ON_PATH = "not-on-path"
    #: The ``<ID>_BIN`` override was set but ignored (not absolute / missing / not executable).
    OVERRIDE_IGNORED = "override-ignored"
    #: Version probe: EACCES or exit 126.
    NOT_EXECUTABLE = "not-executable"
    #: Version probe: ENOENT / ENOTDIR or exit 127.
    MISSING_TARGET = "missing-target"
    #: The version probe ran but gave no version (informational; still available).
    VERSION_UNKNOWN = "version-unknown"
    #: ``version_policy.require_version`` and no version.
    VERSION_REQUIRED = "version-required"
    #: A parseable version outside the tested set (warning; still available).
    VERSION_UNTESTED = "version-untested"
    #: The compatibility probe failed or its ``parse`` raised.
    INCOMPATIBLE = "incompatible"
    #: The help probe failed: every optional flag is off.
    HELP_PROBE_FAILED = "help-probe-failed"
    #: The model listing failed or was empty: fallback models are shown.
    MODELS_FALLBACK = "models-fallback"
    #: Detection of this def raised unexpectedly (fault isolation).
    PROBE_CRASHED = "probe-crashed"


class AuthStatus(str, enum.Enum):
    OK = "ok"
    MISSING = "missing"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Diagnostic:
    code: DiagnosticCode
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code.value, "message": self.message}


@dataclass(frozen=True)
class DetectionResult:
    """One def's detection outcome (ref §5.1 step 8)."""

    id: str
    name: str
    available: bool
    #: ``selected_path``: the executable the user installed.
    path: str | None
    #: What runs spawn (differs for a node wrapper with a vendored native binary).
    launch_path: str | None
    version: str | None
    #: capability key -> found in help output; ``{}`` when the help probe failed or none.
    capabilities: Mapping[str, bool] = field(default_factory=dict)
    models: tuple[ModelOption, ...] = (DEFAULT_MODEL_OPTION,)
    #: ``"live"`` (from the listing command) or ``"fallback"`` (the def's static list).
    models_source: str = "fallback"
    #: Only set when the def declares ``auth_probe`` (seed 000 §9).
    auth_status: AuthStatus | None = None
    auth_message: str | None = None
    #: Companion version from a successful compatibility probe.
    companion_version: str | None = None
    diagnostics: tuple[Diagnostic, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "available": self.available,
            "path": self.path,
            "launch_path": self.launch_path,
            "version": self.version,
            "capabilities": dict(self.capabilities),
            "models": [{"id": m.id, "label": m.label} for m in self.models],
            "models_source": self.models_source,
        }
        # seed 000 §2 step 3 / §9: no auth field at all for a def that declares no probe.
        if self.auth_status is not None:
            out["auth_status"] = self.auth_status.value
            out["auth_message"] = self.auth_message
        if self.companion_version is not None:
            out["companion_version"] = self.companion_version
        out["diagnostics"] = [d.to_json() for d in self.diagnostics]
        return out
