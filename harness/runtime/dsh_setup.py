"""``harness dsh setup``: install the pinned ``open-design`` profile through the user's own dsh.

Rules: DSHSETUP-STARTUP-001.
Design: docs/design/dsh.md#harness.runtime.dsh_setup
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from harness.defs.deepseek_harness import AGENT_DEF, PROFILE
from harness.defs.types import CompatibilityProbe, VersionPolicy
from harness.errors import HarnessError
from harness.host.launch import FileSystemView, RealFileSystem, launch_env, resolve_executable
from harness.profile_bundle.build_bundle import MANIFEST_NAME, PACKAGE
from harness.runtime.detect import (
    COMPATIBILITY_PROBE_TIMEOUT_MS,
    VERSION_PROBE_TIMEOUT_MS,
    ProbeRunner,
    VersionProbeOutcome,
    classify_version_probe,
    is_tested_version,
)
from harness.runtime.probe import ProbeResult, run_probe
from harness.secrets.redact import Redactor

__all__ = [
    "INSTALL_TIMEOUT_S",
    "PACKAGE",
    "PROFILE",
    "AskConfirmation",
    "Bundle",
    "BundleManifest",
    "DshSetupError",
    "RunCommand",
    "SetupDone",
    "SetupFacts",
    "SetupFailed",
    "SetupFailure",
    "SetupReport",
    "SetupStatus",
    "Step",
    "StepKind",
    "embedded_bundle",
    "install_argv",
    "load_bundle",
    "plan_step",
    "read_manifest",
    "setup_dsh",
    "setup_dsh_async",
]

#: ``dsh plugin add`` installs a package (npm/pnpm work inside dsh): a generous bound.
INSTALL_TIMEOUT_S = 300.0
_MAX_OUTPUT_BYTES = 1024 * 1024
_EXCERPT_CHARS = 300
_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


class SetupFailure(str, enum.Enum):
    """Why a setup stopped; :attr:`DshSetupError.code` is ``DSH_SETUP_<NAME>``."""

    #: The embedded tarball's SHA-256 differs from the manifest (DSHSETUP-VERIFY-001).
    BUNDLE_TAMPERED = "bundle-tampered"
    #: The manifest is unreadable or names another package or profile (DSHSETUP-VERIFY-001).
    BUNDLE_INVALID = "bundle-invalid"
    #: No ``dsh`` to run (DSHSETUP-MISSING-001).
    NOT_FOUND = "not-found"
    #: ``dsh --version`` failed, was empty or unparseable (DSHSETUP-VERSION-001).
    VERSION_UNUSABLE = "version-unusable"
    #: No ``--yes`` and no terminal to ask on (DSHSETUP-CONFIRM-001).
    CONFIRMATION_REQUIRED = "confirmation-required"
    #: ``dsh plugin ... add`` did not succeed (DSHSETUP-PINNED-001).
    INSTALL_FAILED = "install-failed"
    #: After the install, the probe frame is missing or incompatible (DSHSETUP-PROBE-001).
    INCOMPATIBLE = "incompatible"


class DshSetupError(HarnessError):
    """A setup that stopped; ``failure`` says why, ``rule`` which rule it enforces."""

    code = "DSH_SETUP_FAILED"

    def __init__(self, failure: SetupFailure, message: str, *, rule: str) -> None:
        super().__init__(message, rule=rule)
        self.failure = failure
        self.code = f"DSH_SETUP_{failure.name}"

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "rule": self.rule}


class SetupStatus(str, enum.Enum):
    #: A compatible profile is in place (installed now, or already there).
    READY = "ready"
    #: The user declined; nothing was changed.
    CANCELLED = "cancelled"


class StepKind(str, enum.Enum):
    """The commands a setup may run, in order."""

    VERSION = "version"
    #: The probe before installing: an existing compatible profile ends the setup.
    PRECHECK = "precheck"
    INSTALL = "install"
    #: The probe after installing: the hard compatibility gate (seed 001 §5).
    PROBE = "probe"


# --------------------------------------------------------------------------- the bundle


@dataclass(frozen=True)
class BundleManifest:
    """``manifest.json`` of the embedded bundle (seed 001 §4 "SHA-256 manifest")."""

    file: str
    sha256: str
    profile: str
    package: str
    version: str

    @classmethod
    def from_json(cls, data: Any) -> BundleManifest:
        """Validate a parsed manifest; ``ValueError`` names the bad field."""
        if not isinstance(data, dict):
            raise ValueError("the manifest must be a JSON object")
        values: dict[str, str] = {}
        for name in ("file", "sha256", "profile", "package", "version"):
            value = data.get(name)
            if not isinstance(value, str) or not value:
                raise ValueError(f"manifest field {name!r} must be a non-empty string")
            values[name] = value
        if not _SHA256_HEX.match(values["sha256"]):
            raise ValueError("manifest field 'sha256' must be 64 lowercase hex digits")
        if Path(values["file"]).name != values["file"]:
            raise ValueError("manifest field 'file' must be a bare file name")
        return cls(**values)


@dataclass(frozen=True)
class Bundle:
    """The tarball a setup would install: where it is, what the manifest says, what it is."""

    manifest: BundleManifest
    #: The path handed to ``dsh plugin ... add``.
    path: str
    #: SHA-256 (hex) of the bytes actually read from ``path``.
    sha256: str


def read_manifest() -> BundleManifest:
    """The embedded ``harness/profile_bundle/manifest.json``."""
    ref = resources.files("harness.profile_bundle").joinpath(MANIFEST_NAME)
    try:
        data = json.loads(ref.read_text(encoding="utf-8"))
        return BundleManifest.from_json(data)
    except (OSError, ValueError) as exc:
        raise DshSetupError(
            SetupFailure.BUNDLE_INVALID,
            f"the embedded profile bundle manifest is unusable: {exc}",
            rule="DSHSETUP-VERIFY-001",
        ) from None


def load_bundle(tarball: Path, manifest: BundleManifest) -> Bundle:
    """Hash ``tarball`` (read once, whole) and pair it with ``manifest``."""
    try:
        data = tarball.read_bytes()
    except OSError as exc:
        raise DshSetupError(
            SetupFailure.BUNDLE_INVALID,
            f"cannot read the profile bundle {tarball}: {exc.strerror or exc}",
            rule="DSHSETUP-VERIFY-001",
        ) from None
    return Bundle(manifest=manifest, path=str(tarball), sha256=hashlib.sha256(data).hexdigest())


@contextmanager
def embedded_bundle() -> Iterator[Bundle]:
    """The bundle shipped as package data, on a real path for as long as the block runs."""
    manifest = read_manifest()
    ref = resources.files("harness.profile_bundle").joinpath(manifest.file)
    with resources.as_file(ref) as path:
        yield load_bundle(Path(path), manifest)


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class SetupReport:
    """What a finished setup says (``harness dsh setup --json`` prints :meth:`to_json`)."""

    status: SetupStatus
    #: The parsed ``dsh --version``.
    version: str | None
    #: The untested-version warning, when there is one (seed 001 §5).
    warning: str | None
    #: Whether ``dsh plugin ... add`` ran and succeeded in this setup.
    installed: bool
    #: The ``plugin_version`` of the compatible probe frame (None when cancelled).
    plugin_version: str | None
    #: Why an install was needed (the pre-check's verdict), when it was.
    reason: str | None
    profile: str
    package: str
    bundle_version: str
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "version": self.version,
            "warning": self.warning,
            "installed": self.installed,
            "plugin_version": self.plugin_version,
            "reason": self.reason,
            "profile": self.profile,
            "package": self.package,
            "bundle_version": self.bundle_version,
            "sha256": self.sha256,
        }


@dataclass(frozen=True)
class SetupFacts:
    """Everything known so far; each field is filled by the step that learns it."""

    bundle: Bundle
    #: The resolved ``dsh`` to spawn (None: not found).
    launch_path: str | None
    #: Why a set ``DSH_BIN`` was ignored, for the not-found message.
    override_problem: str | None = None
    #: ``--yes``: the user confirmed on the command line.
    assume_yes: bool = False
    #: A terminal is there to ask on.
    interactive: bool = False
    version: ProbeResult | None = None
    precheck: ProbeResult | None = None
    #: The user's answer (None: not asked yet).
    confirmed: bool | None = None
    install: ProbeResult | None = None
    probe: ProbeResult | None = None


@dataclass(frozen=True)
class RunCommand:
    kind: StepKind
    argv: tuple[str, ...]
    timeout_s: float
    max_output_bytes: int = _MAX_OUTPUT_BYTES


@dataclass(frozen=True)
class AskConfirmation:
    question: str


@dataclass(frozen=True)
class SetupDone:
    report: SetupReport


@dataclass(frozen=True)
class SetupFailed:
    error: DshSetupError


Step = RunCommand | AskConfirmation | SetupDone | SetupFailed


def install_argv(launch_path: str, bundle: Bundle) -> tuple[str, ...]:
    """seed 001 §4: ``dsh plugin --profile open-design add <embedded pinned tarball>``.

    DSHSETUP-PINNED-001: the profile is the def's constant and the package is the verified
    bundle; no caller-chosen value and no environment variable takes part.
    """
    return (launch_path, "plugin", "--profile", PROFILE, "add", bundle.path)


def _excerpt(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _EXCERPT_CHARS else line[: _EXCERPT_CHARS - 1] + "…"


def _ended(result: ProbeResult) -> str:
    tail = _excerpt(result.stderr)
    return f"{result.describe()}: {tail}" if tail else result.describe()


def _first_line(stdout: str) -> str | None:
    for line in stdout.splitlines():
        if line.strip():
            return line.strip()
    return None


def _policy() -> VersionPolicy:
    policy = AGENT_DEF.version_policy
    assert policy is not None, "the DeepSeek Harness def declares a version policy"
    return policy


def _compat() -> CompatibilityProbe:
    compat = AGENT_DEF.compatibility_probe
    assert compat is not None, "the DeepSeek Harness def declares a compatibility probe"
    return compat


def _probe_command(kind: StepKind, launch_path: str) -> RunCommand:
    compat = _compat()
    timeout_ms = compat.timeout_ms or COMPATIBILITY_PROBE_TIMEOUT_MS
    return RunCommand(kind, (launch_path, *compat.args), timeout_ms / 1000.0)


def _probe_verdict(result: ProbeResult) -> tuple[str | None, str]:
    """``(plugin_version, "")`` for a compatible probe, else ``(None, why)``.

    seed 001 §5: the frame must carry the runtime identity, protocol version and the
    phase-required capabilities; the def's parser checks exactly that and its messages
    name fields, never values (ref §2.8).
    """
    command = " ".join((AGENT_DEF.bin, *_compat().args))
    if not result.ok:
        return None, f"`{command}` {_ended(result)}"
    try:
        return _compat().parse(result.stdout), ""
    except ValueError as exc:
        return None, f"`{command}` printed no compatible probe frame ({exc})"


def _version(facts: SetupFacts) -> tuple[str, str | None] | SetupFailed:
    """seed 001 §5 version policy: ``(version, warning)`` or the failure (DSHSETUP-VERSION-*)."""
    result = facts.version
    assert result is not None
    command = " ".join((AGENT_DEF.bin, *AGENT_DEF.version_args))
    outcome = classify_version_probe(result)
    if outcome is not VersionProbeOutcome.SPAWNED:
        return SetupFailed(
            DshSetupError(
                SetupFailure.NOT_FOUND,
                f"{facts.launch_path} cannot be run ({result.describe()}); install the official "
                "DeepSeek Harness (seed 000 §5.12) or point DSH_BIN at it",
                rule="DSHSETUP-MISSING-001",
            )
        )
    if not result.ok:
        return SetupFailed(
            DshSetupError(
                SetupFailure.VERSION_UNUSABLE,
                f"`{command}` {_ended(result)}; a usable dsh version is required",
                rule="DSHSETUP-VERSION-001",
            )
        )
    raw = _first_line(result.stdout)
    policy = _policy()
    version = policy.parse(raw) if raw is not None and policy.parse is not None else raw
    if not version:
        what = "printed nothing" if raw is None else f"printed {_excerpt(raw)!r}"
        return SetupFailed(
            DshSetupError(
                SetupFailure.VERSION_UNUSABLE,
                f"`{command}` {what}, which is not a version; tested versions: "
                + ", ".join(policy.supported_versions),
                rule="DSHSETUP-VERSION-001",
            )
        )
    warning = None
    if not is_tested_version(policy, version):
        warning = (
            f"dsh {version} is not a tested version (tested: "
            + ", ".join(policy.supported_versions)
            + "); continuing, the profile probe decides compatibility"
        )
    return version, warning


def _bundle_problem(bundle: Bundle) -> SetupFailed | None:
    """seed 001 §4 "OD verifies the tarball hash before invocation" (DSHSETUP-VERIFY-001)."""
    manifest = bundle.manifest
    if manifest.package != PACKAGE or manifest.profile != PROFILE:
        return SetupFailed(
            DshSetupError(
                SetupFailure.BUNDLE_INVALID,
                f"the bundle manifest names package {manifest.package!r} for profile "
                f"{manifest.profile!r}; only {PACKAGE!r} for {PROFILE!r} is installed",
                rule="DSHSETUP-VERIFY-001",
            )
        )
    if bundle.sha256.lower() != manifest.sha256:
        return SetupFailed(
            DshSetupError(
                SetupFailure.BUNDLE_TAMPERED,
                f"profile bundle {bundle.path} has SHA-256 {bundle.sha256}, but the manifest "
                f"pins {manifest.sha256}; refusing to install it (dsh was not called)",
                rule="DSHSETUP-VERIFY-001",
            )
        )
    return None


def _report(
    facts: SetupFacts,
    status: SetupStatus,
    version: str,
    warning: str | None,
    *,
    installed: bool,
    plugin_version: str | None,
    reason: str | None,
) -> SetupDone:
    manifest = facts.bundle.manifest
    return SetupDone(
        SetupReport(
            status=status,
            version=version,
            warning=warning,
            installed=installed,
            plugin_version=plugin_version,
            reason=reason,
            profile=PROFILE,
            package=manifest.package,
            bundle_version=manifest.version,
            sha256=manifest.sha256,
        )
    )


def _question(facts: SetupFacts, reason: str) -> str:
    manifest = facts.bundle.manifest
    command = " ".join(("dsh", *install_argv(str(facts.launch_path), facts.bundle)[1:]))
    return (
        f"DeepSeek Harness needs the {PROFILE!r} profile ({reason}).\n"
        f"Install {manifest.package} {manifest.version} (sha256 {manifest.sha256}) "
        f"into your dsh by running:\n  {command}\n"
        "Proceed?"
    )


def plan_step(facts: SetupFacts) -> Step:
    """The next step of a setup, decided from ``facts`` alone (pure: no IO, no clock).

    Order (seed 001 §4, §5): verify the bundle; ``dsh`` must exist; ``dsh --version``;
    probe (an existing compatible profile ends here: no prompt, no reinstall); confirm
    (``--yes``, or a yes on a terminal); ``dsh plugin --profile open-design add``; probe
    again, which must be compatible and report the pinned version.
    """
    # seed 001 §4 (DSHSETUP-VERIFY-001): before anything runs dsh.
    problem = _bundle_problem(facts.bundle)
    if problem is not None:
        return problem
    launch_path = facts.launch_path
    if launch_path is None:
        # seed 001 §4: "If dsh itself is absent, ... points users to the official installer."
        why = f" ({facts.override_problem})" if facts.override_problem else ""
        return SetupFailed(
            DshSetupError(
                SetupFailure.NOT_FOUND,
                f"dsh was not found on PATH{why}; install the official DeepSeek Harness "
                "(seed 000 §5.12) or set DSH_BIN to its absolute path",
                rule="DSHSETUP-MISSING-001",
            )
        )
    if facts.version is None:
        timeout_ms = AGENT_DEF.version_probe_timeout_ms or VERSION_PROBE_TIMEOUT_MS
        return RunCommand(
            StepKind.VERSION, (launch_path, *AGENT_DEF.version_args), timeout_ms / 1000.0
        )
    checked = _version(facts)
    if isinstance(checked, SetupFailed):
        return checked
    version, warning = checked

    if facts.precheck is None:
        return _probe_command(StepKind.PRECHECK, launch_path)
    existing, reason = _probe_verdict(facts.precheck)
    if existing is not None:
        # seed 001 §4 (DSHSETUP-EXISTING-001): "no prompt or reinstall occurs".
        return _report(
            facts,
            SetupStatus.READY,
            version,
            warning,
            installed=False,
            plugin_version=existing,
            reason=None,
        )

    # seed 001 §4, §14 (DSHSETUP-CONFIRM-001): explicit user authority.
    if not facts.assume_yes:
        if facts.confirmed is None:
            if not facts.interactive:
                return SetupFailed(
                    DshSetupError(
                        SetupFailure.CONFIRMATION_REQUIRED,
                        f"installing the {PROFILE!r} profile into dsh needs your confirmation: "
                        "run `harness dsh setup` on a terminal, or pass --yes",
                        rule="DSHSETUP-CONFIRM-001",
                    )
                )
            return AskConfirmation(_question(facts, reason))
        if not facts.confirmed:
            return _report(
                facts,
                SetupStatus.CANCELLED,
                version,
                warning,
                installed=False,
                plugin_version=None,
                reason=reason,
            )

    if facts.install is None:
        argv = install_argv(launch_path, facts.bundle)
        return RunCommand(StepKind.INSTALL, argv, INSTALL_TIMEOUT_S)
    if not facts.install.ok:
        command = " ".join(("dsh", *install_argv(launch_path, facts.bundle)[1:]))
        return SetupFailed(
            DshSetupError(
                SetupFailure.INSTALL_FAILED,
                f"`{command}` {_ended(facts.install)}",
                rule="DSHSETUP-PINNED-001",
            )
        )

    if facts.probe is None:
        return _probe_command(StepKind.PROBE, launch_path)
    # seed 001 §5, §14 (DSHSETUP-PROBE-001): "pinned, verified by probe".
    plugin_version, why = _probe_verdict(facts.probe)
    if plugin_version is None:
        return SetupFailed(
            DshSetupError(
                SetupFailure.INCOMPATIBLE,
                f"the {PROFILE!r} profile was installed but is not usable: {why}",
                rule="DSHSETUP-PROBE-001",
            )
        )
    pinned = facts.bundle.manifest.version
    if plugin_version != pinned:
        return SetupFailed(
            DshSetupError(
                SetupFailure.INCOMPATIBLE,
                f"after installing {facts.bundle.manifest.package} {pinned}, the {PROFILE!r} "
                f"profile reports plugin_version {_excerpt(plugin_version)!r}",
                rule="DSHSETUP-PROBE-001",
            )
        )
    return _report(
        facts,
        SetupStatus.READY,
        version,
        warning,
        installed=True,
        plugin_version=plugin_version,
        reason=reason,
    )


# --------------------------------------------------------------------------- the IO loop


def _with(facts: SetupFacts, kind: StepKind, result: ProbeResult) -> SetupFacts:
    if kind is StepKind.VERSION:
        return replace(facts, version=result)
    if kind is StepKind.PRECHECK:
        return replace(facts, precheck=result)
    if kind is StepKind.INSTALL:
        return replace(facts, install=result)
    return replace(facts, probe=result)


def _redacted(report: SetupReport, redactor: Redactor) -> SetupReport:
    def r(text: str | None) -> str | None:
        return None if text is None else redactor.redact(text)

    return replace(
        report,
        version=r(report.version),
        warning=r(report.warning),
        plugin_version=r(report.plugin_version),
        reason=r(report.reason),
    )


async def setup_dsh_async(
    *,
    assume_yes: bool,
    ask: Callable[[str], bool] | None,
    env: Mapping[str, str],
    platform: str = sys.platform,
    home: str | None = None,
    fs: FileSystemView | None = None,
    interpreter_dir: str | None = None,
    runner: ProbeRunner = run_probe,
    bundle: Bundle | None = None,
) -> SetupReport:
    """Run a setup to its end; raise :class:`DshSetupError` when it stops.

    ``ask`` asks the user a yes/no question on a terminal (None: there is no terminal).
    ``bundle`` replaces the embedded bundle and exists for tests only (the tampered-bundle
    proof); no command-line option reaches it. Every command goes through ``runner``
    (:func:`harness.runtime.probe.run_probe`), with the launch env a run of the def would get.
    Messages and the report pass through :class:`harness.secrets.redact.Redactor` (secret env
    values and key-shaped tokens never reach the caller; seed 001 §11, §14).
    """
    chosen: AbstractContextManager[Bundle] = (
        embedded_bundle() if bundle is None else nullcontext(bundle)
    )
    with chosen as picked:
        return await _drive(
            picked,
            assume_yes=assume_yes,
            ask=ask,
            env=env,
            platform=platform,
            home=home if home is not None else str(Path.home()),
            fs=fs or RealFileSystem(),
            interpreter_dir=interpreter_dir,
            runner=runner,
        )


async def _drive(
    bundle: Bundle,
    *,
    assume_yes: bool,
    ask: Callable[[str], bool] | None,
    env: Mapping[str, str],
    platform: str,
    home: str,
    fs: FileSystemView,
    interpreter_dir: str | None,
    runner: ProbeRunner,
) -> SetupReport:
    redactor = Redactor(env=env)
    resolution = resolve_executable(AGENT_DEF, platform=platform, env=env, fs=fs, home=home)
    child_env = launch_env(
        env,
        resolution,
        platform=platform,
        interpreter_dir=interpreter_dir,
        home=home,
        defn=AGENT_DEF,
    )
    facts = SetupFacts(
        bundle=bundle,
        launch_path=resolution.launch_path,
        override_problem=resolution.override_problem,
        assume_yes=assume_yes,
        interactive=ask is not None,
    )
    while True:
        step = plan_step(facts)
        if isinstance(step, SetupDone):
            return _redacted(step.report, redactor)
        if isinstance(step, SetupFailed):
            error = step.error
            raise DshSetupError(error.failure, redactor.redact(error.message), rule=str(error.rule))
        if isinstance(step, AskConfirmation):
            assert ask is not None  # plan_step asks only when facts.interactive
            facts = replace(facts, confirmed=bool(ask(redactor.redact(step.question))))
            continue
        result = await runner(
            list(step.argv),
            env=child_env,
            timeout_s=step.timeout_s,
            max_output_bytes=step.max_output_bytes,
        )
        facts = _with(facts, step.kind, result)


def setup_dsh(
    *,
    assume_yes: bool,
    ask: Callable[[str], bool] | None,
    env: Mapping[str, str],
    platform: str = sys.platform,
    home: str | None = None,
    fs: FileSystemView | None = None,
    interpreter_dir: str | None = None,
    runner: ProbeRunner = run_probe,
    bundle: Bundle | None = None,
) -> SetupReport:
    """Synchronous :func:`setup_dsh_async` (same arguments)."""
    return asyncio.run(
        setup_dsh_async(
            assume_yes=assume_yes,
            ask=ask,
            env=env,
            platform=platform,
            home=home,
            fs=fs,
            interpreter_dir=interpreter_dir,
            runner=runner,
            bundle=bundle,
        )
    )
