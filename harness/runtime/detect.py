"""Detection: is each agent CLI installed, which version, what does it support.

Design: docs/design/detection.md#harness.runtime.detect
"""

from __future__ import annotations

import asyncio
import enum
import os
import re
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from harness.defs.types import DEFAULT_MODEL_OPTION, AgentDef, ModelOption, VersionPolicy
from harness.host.detect_result import AuthStatus, DetectionResult, Diagnostic, DiagnosticCode
from harness.host.launch import (
    FileSystemView,
    RealFileSystem,
    Resolution,
    launch_env,
    resolve_executable,
)
from harness.runtime.probe import ProbeResult, run_probe
from harness.streams.base import js_trim

__all__ = [
    "AUTH_PROBE_TIMEOUT_MS",
    "CAPABILITY_CACHE",
    "COMPATIBILITY_PROBE_TIMEOUT_MS",
    "HELP_PROBE_TIMEOUT_MS",
    "MODELS_PROBE_TIMEOUT_MS",
    "VERSION_PROBE_TIMEOUT_MS",
    "AuthStatus",
    "CapabilityCache",
    "DetectionResult",
    "Diagnostic",
    "DiagnosticCode",
    "ExecutableStamp",
    "ProbeRunner",
    "VersionProbeOutcome",
    "capabilities_for_run",
    "classify_auth",
    "classify_version_probe",
    "detect_agent",
    "detect_all",
    "detect_all_sync",
    "detect_stream",
    "executable_stamp",
    "is_tested_version",
    "probe_agent",
]

# ref §5.1 / §5.4: per-probe defaults when the def does not say.
VERSION_PROBE_TIMEOUT_MS = 3000
HELP_PROBE_TIMEOUT_MS = 5000
MODELS_PROBE_TIMEOUT_MS = 5000
AUTH_PROBE_TIMEOUT_MS = 5000
COMPATIBILITY_PROBE_TIMEOUT_MS = 5000

# ref §5.1: the output caps upstream passes as ``maxBuffer``.
_VERSION_MAX_BYTES = 1024 * 1024
_COMPAT_MAX_BYTES = 1024 * 1024
_HELP_MAX_BYTES = 4 * 1024 * 1024
_MODELS_MAX_BYTES = 8 * 1024 * 1024
_AUTH_MAX_BYTES = 1024 * 1024

#: Longest excerpt of CLI output quoted in a diagnostic or auth message.
_EXCERPT_CHARS = 200


class ProbeRunner(Protocol):
    """The signature of :func:`harness.runtime.probe.run_probe` (injectable for tests)."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        timeout_s: float,
        max_output_bytes: int,
        cwd: str | None = None,
        stdin: bytes | None = None,
    ) -> Awaitable[ProbeResult]: ...


def _excerpt(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _EXCERPT_CHARS else line[: _EXCERPT_CHARS - 1] + "…"


def _fallback_models(defn: AgentDef) -> tuple[ModelOption, ...]:
    return tuple(defn.fallback_models) or (DEFAULT_MODEL_OPTION,)


def _unavailable(
    defn: AgentDef,
    diagnostics: Sequence[Diagnostic],
    *,
    resolution: Resolution | None = None,
    version: str | None = None,
) -> DetectionResult:
    """ref §5.1 ``unavailableAgent``: fallback models, no capabilities, no auth."""
    return DetectionResult(
        id=defn.id,
        name=defn.name,
        available=False,
        path=resolution.selected_path if resolution else None,
        launch_path=resolution.launch_path if resolution else None,
        version=version,
        capabilities={},
        models=_fallback_models(defn),
        models_source="fallback",
        diagnostics=tuple(diagnostics),
    )


# --------------------------------------------------------------------------- version probe


class VersionProbeOutcome(str, enum.Enum):
    """seed 002 §5.4: the three ways a version probe can end."""

    #: The CLI launched (its version may still be unknown).
    SPAWNED = "spawned"
    #: EACCES or exit 126: not invocable, not executable.
    NOT_EXECUTABLE = "not-executable"
    #: ENOENT / ENOTDIR or exit 127: not invocable, target missing.
    MISSING_TARGET = "missing-target"


def classify_version_probe(result: ProbeResult) -> VersionProbeOutcome:
    """seed 002 §5.4 (DETECT-VERSION-001/002/003), exactly.

    ``EACCES`` or exit 126 -> not executable; ``ENOENT``/``ENOTDIR`` or exit 127 ->
    missing; anything else (timeout, other non-zero exit, signal, other errno)
    -> spawned, so a CLI that rejects ``--version`` stays available.
    """
    if result.os_error == "EACCES" or result.exit_code == 126:
        return VersionProbeOutcome.NOT_EXECUTABLE
    if result.os_error in ("ENOENT", "ENOTDIR") or result.exit_code == 127:
        return VersionProbeOutcome.MISSING_TARGET
    return VersionProbeOutcome.SPAWNED


def _raw_version(stdout: str) -> str | None:
    """ref §5.1: ``stdout.trim().split('\\n')[0].trim() || null``: first non-blank line."""
    trimmed = js_trim(stdout)
    if not trimmed:
        return None
    return js_trim(trimmed.split("\n", 1)[0]) or None


def is_tested_version(policy: VersionPolicy, version: str) -> bool:
    """In ``supported_versions``, or fully matching ``supported_version_pattern`` (a regex)."""
    if version in policy.supported_versions:
        return True
    pattern = policy.supported_version_pattern
    return bool(pattern) and re.fullmatch(pattern or "", version) is not None


# --------------------------------------------------------------------------- auth

#: Text that means "not signed in" in a CLI's auth-status output (ref §5.4: the claude and
#: cursor classifiers and the AGENT_AUTH_REQUIRED class of ``classifyAgentServiceFailure``).
_AUTH_MISSING = re.compile(
    r"not\s+(?:authenticated|logged[ _-]?in|signed[ _-]?in)"
    r"|\bunauthenticated\b"
    r"|authentication\s+required"
    r"|(?:login|sign[ _-]?in)\s+required"
    r"|please\s+(?:sign|log)[ _-]?in"
    r"|\"(?:authenticated|loggedIn|logged_in)\"\s*:\s*false"
    r"|invalid\s+api\s+key"
    r"|\bunauthorized\b",
    re.IGNORECASE,
)


def classify_auth(defn: AgentDef, result: ProbeResult) -> tuple[AuthStatus, str]:
    """ref §5.4 (DETECT-AUTH-001): ``missing`` on an auth-failure signal in stdout/stderr,
    ``ok`` on a clean exit without one, else ``unknown`` with a short message."""
    assert defn.auth_probe is not None
    command = " ".join([defn.bin, *defn.auth_probe.args])
    text = f"{result.stdout}\n{result.stderr}"
    match = _AUTH_MISSING.search(text)
    if match is not None:
        line = next((ln for ln in text.splitlines() if match.group(0) in ln), match.group(0))
        return AuthStatus.MISSING, f"{defn.name} is not signed in (`{command}`: {_excerpt(line)})"
    if result.ok:
        return AuthStatus.OK, f"{defn.name} is signed in (`{command}`)"
    return (
        AuthStatus.UNKNOWN,
        f"{defn.name} authentication status could not be verified with `{command}` "
        f"({result.describe()}).",
    )


# --------------------------------------------------------------------------- one def


def _ms(value: int | None, default_ms: int) -> float:
    return (value if value is not None else default_ms) / 1000.0


def _live_models(parsed: Sequence[ModelOption]) -> tuple[ModelOption, ...]:
    """De-duplicate by id and put ``default`` first (adding it when missing)."""
    seen: set[str] = set()
    rest: list[ModelOption] = []
    default = DEFAULT_MODEL_OPTION
    for option in parsed:
        if option.id in seen:
            continue
        seen.add(option.id)
        if option.id == DEFAULT_MODEL_OPTION.id:
            default = option
        else:
            rest.append(option)
    return (default, *rest)


@dataclass(frozen=True)
class ExecutableStamp:
    """Which executable answered a probe: its path, size and modification time.

    An upgrade or a downgrade replaces the file, so its size or mtime changes and the
    stamp with it; the findings of the old file are not used for the new one.
    """

    path: str
    size: int
    mtime_ns: int


def executable_stamp(path: str) -> ExecutableStamp | None:
    """The stamp of ``path`` (links followed), or ``None`` when it cannot be read."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return ExecutableStamp(os.path.abspath(path), info.st_size, info.st_mtime_ns)


#: How many executables' help answers are kept.
CAPABILITY_CACHE_ENTRIES = 256

#: (stamp, help argv, the def's flag -> key pairs): what one help probe answers.
_CapabilityKey = tuple[ExecutableStamp, tuple[str, ...], tuple[tuple[str, str], ...]]


def _capability_key(defn: AgentDef, stamp: ExecutableStamp) -> _CapabilityKey:
    return (stamp, tuple(defn.help_args or ()), tuple(sorted(defn.capability_flags.items())))


class CapabilityCache:
    """Help-probe findings per executable stamp (seed 002 §5.5: the capabilities map).

    Thread-safe and bounded (the oldest entry goes first). Only answers the executable
    really gave are kept: a probe that could not start, timed out or overflowed may
    answer otherwise next time, so it is not remembered.
    """

    def __init__(self, max_entries: int = CAPABILITY_CACHE_ENTRIES) -> None:
        self._max = max(1, max_entries)
        self._entries: OrderedDict[_CapabilityKey, dict[str, bool]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: _CapabilityKey) -> dict[str, bool] | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return dict(found)

    def put(self, key: _CapabilityKey, caps: Mapping[str, bool]) -> None:
        with self._lock:
            self._entries[key] = dict(caps)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


#: The process-wide findings: detection writes them, runs read them (FIDELITY-CAPS-001).
CAPABILITY_CACHE = CapabilityCache()


def _answered(result: ProbeResult) -> bool:
    """The executable itself answered (exited, by itself): a finding worth keeping."""
    return result.os_error is None and not result.timed_out and not result.output_overflow


async def _probe_capabilities(
    defn: AgentDef,
    argv0: str,
    env: Mapping[str, str],
    runner: ProbeRunner,
    cache: CapabilityCache | None = None,
) -> tuple[dict[str, bool], list[Diagnostic]]:
    """seed 002 §5.5 (DETECT-CAPS-001): substring match of each flag in help stdout.

    Only when the def declares ``help_args`` and ``capability_flags``. A failed help
    probe gives ``{}``: every optional flag off, the safe baseline for ``build_args``.
    Several flags naming one key are aliases: the key is on when any is found. With
    ``cache``, what the executable answered is stored under its stamp.
    """
    if defn.help_args is None or not defn.capability_flags:
        return {}, []
    stamp = executable_stamp(argv0) if cache is not None else None
    result = await runner(
        [argv0, *defn.help_args],
        env=env,
        timeout_s=_ms(defn.help_probe_timeout_ms, HELP_PROBE_TIMEOUT_MS),
        max_output_bytes=_HELP_MAX_BYTES,
    )
    if not result.ok:
        if cache is not None and stamp is not None and _answered(result):
            cache.put(_capability_key(defn, stamp), {})
        return {}, [
            Diagnostic(
                DiagnosticCode.HELP_PROBE_FAILED,
                f"`{' '.join([defn.bin, *defn.help_args])}` {result.describe()}; "
                "optional flags are off",
            )
        ]
    caps: dict[str, bool] = {}
    for flag, key in defn.capability_flags.items():
        caps[key] = caps.get(key, False) or flag in result.stdout
    if cache is not None and stamp is not None and stamp == executable_stamp(argv0):
        cache.put(_capability_key(defn, stamp), caps)
    return caps, []


async def capabilities_for_run(
    defn: AgentDef,
    launch_path: str,
    env: Mapping[str, str],
    *,
    runner: ProbeRunner = run_probe,
    cache: CapabilityCache = CAPABILITY_CACHE,
) -> tuple[dict[str, bool], list[Diagnostic]]:
    """The capabilities a run of ``launch_path`` passes to ``build_args`` (FIDELITY-CAPS-001).

    seed 002 §5.5: ``build_args`` reads the help probe's findings. They come from
    ``cache`` when this executable (same stamp) was probed before, by detection or an
    earlier run; otherwise the help probe runs now, exactly as detection runs it
    (``launch_path`` and the launch env), and its answer is kept. A def without a help
    probe gets ``{}``.
    """
    if defn.help_args is None or not defn.capability_flags:
        return {}, []
    stamp = executable_stamp(launch_path)
    if stamp is None:
        return await _probe_capabilities(defn, launch_path, env, runner, cache)
    key = _capability_key(defn, stamp)
    # Runs that start together (conform, a batch) wait for one probe, not one each.
    async with _one_probe_at_a_time(key):
        found = cache.get(key)
        if found is not None:
            return found, []
        return await _probe_capabilities(defn, launch_path, env, runner, cache)


#: Per event loop, a lock per capability key (a lock belongs to the loop it is used in).
_PROBE_LOCKS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[_CapabilityKey, asyncio.Lock]
] = weakref.WeakKeyDictionary()


def _one_probe_at_a_time(key: _CapabilityKey) -> asyncio.Lock:
    """The running loop's lock for ``key``: a run waits while another probes the same
    executable, then reads what that probe kept."""
    locks = _PROBE_LOCKS.setdefault(asyncio.get_running_loop(), {})
    lock = locks.get(key)
    if lock is None:
        if len(locks) >= CAPABILITY_CACHE_ENTRIES:
            locks.clear()  # bounded like the cache; a lock only matters while probing
        lock = locks[key] = asyncio.Lock()
    return lock


async def _probe_models(
    defn: AgentDef, argv0: str, env: Mapping[str, str], runner: ProbeRunner
) -> tuple[tuple[ModelOption, ...], str, list[Diagnostic]]:
    """ref §5.1 step 7 (DETECT-MODELS-001): ``parse`` the listing; ``None``, empty, a failed
    command or a raising ``parse`` -> the def's fallback models, source ``fallback``."""
    listing = defn.list_models
    if listing is None:
        return _fallback_models(defn), "fallback", []
    argv = [argv0, *listing.args]
    timeout_s = _ms(listing.timeout_ms, MODELS_PROBE_TIMEOUT_MS)
    if listing.stdin is None:
        result = await runner(
            argv, env=env, timeout_s=timeout_s, max_output_bytes=_MODELS_MAX_BYTES
        )
    else:
        # FIDELITY-ACP-MODELS-001: the handshake goes on stdin (only where a listing has one).
        result = await runner(
            argv,
            env=env,
            timeout_s=timeout_s,
            max_output_bytes=_MODELS_MAX_BYTES,
            stdin=listing.stdin,
        )
    command = " ".join([defn.bin, *listing.args])
    # An ACP server may stay up after answering: what it wrote before it was stopped counts.
    answered = result.ok or (listing.stdin is not None and bool(result.stdout.strip()))
    if not answered:
        problem = result.describe()
    else:
        try:
            parsed = listing.parse(result.stdout)
        except Exception as exc:
            problem = f"output not understood ({type(exc).__name__}: {exc})"
        else:
            if parsed:
                return _live_models(parsed), "live", []
            problem = "listed no models"
    diag = Diagnostic(DiagnosticCode.MODELS_FALLBACK, f"`{command}` {problem}; using fallbacks")
    return _fallback_models(defn), "fallback", [diag]


async def _probe_auth(
    defn: AgentDef, argv0: str, env: Mapping[str, str], runner: ProbeRunner
) -> tuple[AuthStatus, str] | None:
    """seed 000 §2 step 3, §9 (DETECT-AUTH-001): only a declared probe runs; none -> no auth."""
    probe = defn.auth_probe
    if probe is None:
        return None
    result = await runner(
        [argv0, *probe.args],
        env=env,
        timeout_s=_ms(probe.timeout_ms, AUTH_PROBE_TIMEOUT_MS),
        max_output_bytes=_AUTH_MAX_BYTES,
    )
    return classify_auth(defn, result)


async def probe_agent(
    defn: AgentDef,
    *,
    env: Mapping[str, str],
    platform: str,
    home: str,
    fs: FileSystemView,
    arch: str | None = None,
    interpreter_dir: str | None = None,
    runner: ProbeRunner = run_probe,
) -> DetectionResult:
    """Detect one def (ref §5.1 ``probe``). May raise; :func:`detect_agent` isolates it."""
    diagnostics: list[Diagnostic] = []
    resolution = resolve_executable(defn, platform=platform, env=env, fs=fs, home=home, arch=arch)
    if resolution.override_problem:
        diagnostics.append(
            Diagnostic(DiagnosticCode.OVERRIDE_IGNORED, f"{resolution.override_problem}; ignored")
        )
    launch_path = resolution.launch_path
    if launch_path is None:
        names = ", ".join([defn.bin, *defn.fallback_bins])
        diagnostics.append(
            Diagnostic(
                DiagnosticCode.NOT_ON_PATH,
                f"{names} not found in {len(resolution.searched_dirs)} dirs: "
                + (";" if platform == "win32" else ":").join(resolution.searched_dirs),
            )
        )
        return _unavailable(defn, diagnostics, resolution=resolution)

    # seed 000 §2 step 1, seed 002 §5.4 (DETECT-LAUNCHPATH-001): probe what a run will spawn,
    # with the env it will spawn with.
    probe_env = launch_env(
        env,
        resolution,
        platform=platform,
        interpreter_dir=interpreter_dir,
        home=home,
        defn=defn,
    )

    # ---- version probe: seed 002 §5.4 classification (DETECT-VERSION-001..004)
    version_result = await runner(
        [launch_path, *defn.version_args],
        env=probe_env,
        timeout_s=_ms(defn.version_probe_timeout_ms, VERSION_PROBE_TIMEOUT_MS),
        max_output_bytes=_VERSION_MAX_BYTES,
    )
    outcome = classify_version_probe(version_result)
    if outcome is VersionProbeOutcome.NOT_EXECUTABLE:
        diagnostics.append(
            Diagnostic(
                DiagnosticCode.NOT_EXECUTABLE,
                f"{launch_path} is not executable ({version_result.describe()})",
            )
        )
        return _unavailable(defn, diagnostics, resolution=resolution)
    if outcome is VersionProbeOutcome.MISSING_TARGET:
        diagnostics.append(
            Diagnostic(
                DiagnosticCode.MISSING_TARGET,
                f"{launch_path} or its interpreter is missing ({version_result.describe()})",
            )
        )
        return _unavailable(defn, diagnostics, resolution=resolution)

    policy = defn.version_policy
    version: str | None = None
    if version_result.ok:
        raw = _raw_version(version_result.stdout)
        version = raw
        if raw is not None and policy is not None and policy.parse is not None:
            try:
                version = policy.parse(raw)
            except Exception as exc:
                version = None
                diagnostics.append(
                    Diagnostic(
                        DiagnosticCode.VERSION_UNKNOWN,
                        f"version {raw!r} not understood ({type(exc).__name__}: {exc})",
                    )
                )
    else:
        # seed 002 §5.4: launched but no version (rejects --version, timed out, ...).
        diagnostics.append(
            Diagnostic(
                DiagnosticCode.VERSION_UNKNOWN,
                f"`{' '.join([defn.bin, *defn.version_args])}` {version_result.describe()}",
            )
        )

    # ---- version policy: ref §5.1 steps 4 and 6 (DETECT-POLICY-001)
    if policy is not None and policy.require_version and not version:
        diagnostics.append(
            Diagnostic(
                DiagnosticCode.VERSION_REQUIRED,
                f"{defn.name} needs a readable version; tested: "
                + ", ".join(policy.supported_versions),
            )
        )
        return _unavailable(defn, diagnostics, resolution=resolution)

    # ---- compatibility probe: ref §5.1 step 5 (DETECT-COMPAT-001)
    companion: str | None = None
    compat = defn.compatibility_probe
    if compat is not None:
        compat_result = await runner(
            [launch_path, *compat.args],
            env=probe_env,
            timeout_s=_ms(compat.timeout_ms, COMPATIBILITY_PROBE_TIMEOUT_MS),
            max_output_bytes=_COMPAT_MAX_BYTES,
        )
        command = " ".join([defn.bin, *compat.args])
        if not compat_result.ok:
            diagnostics.append(
                Diagnostic(
                    DiagnosticCode.INCOMPATIBLE,
                    f"`{command}` {compat_result.describe()}: {_excerpt(compat_result.stderr)}",
                )
            )
            return _unavailable(defn, diagnostics, resolution=resolution, version=version)
        try:
            companion = compat.parse(compat_result.stdout)
        except Exception as exc:
            diagnostics.append(
                Diagnostic(
                    DiagnosticCode.INCOMPATIBLE,
                    f"`{command}` rejected: {type(exc).__name__}: {exc}",
                )
            )
            return _unavailable(defn, diagnostics, resolution=resolution, version=version)

    if policy is not None and version and not is_tested_version(policy, version):
        diagnostics.append(
            Diagnostic(
                DiagnosticCode.VERSION_UNTESTED,
                f"version {version!r} is untested; tested: " + ", ".join(policy.supported_versions),
            )
        )

    # ---- seed 002 §5.4 (DETECT-CONCURRENT-001): help, models and auth concurrently.
    (caps, cap_diags), (models, source, model_diags), auth = await asyncio.gather(
        # Only the real executor's answers are the executable's own (a stand-in runner
        # never fills the process-wide findings).
        _probe_capabilities(
            defn, launch_path, probe_env, runner, CAPABILITY_CACHE if runner is run_probe else None
        ),
        _probe_models(defn, launch_path, probe_env, runner),
        _probe_auth(defn, launch_path, probe_env, runner),
    )
    diagnostics.extend(cap_diags)
    diagnostics.extend(model_diags)
    return DetectionResult(
        id=defn.id,
        name=defn.name,
        available=True,
        path=resolution.selected_path,
        launch_path=launch_path,
        version=version,
        capabilities=caps,
        models=models,
        models_source=source,
        auth_status=auth[0] if auth else None,
        auth_message=auth[1] if auth else None,
        companion_version=companion,
        diagnostics=tuple(diagnostics),
    )


async def detect_agent(
    defn: AgentDef,
    *,
    env: Mapping[str, str],
    platform: str,
    home: str,
    fs: FileSystemView,
    arch: str | None = None,
    interpreter_dir: str | None = None,
    runner: ProbeRunner = run_probe,
) -> DetectionResult:
    """:func:`probe_agent`, fault-isolated (DETECT-ISOLATION-001).

    seed 002 §5.4 (``safeProbe``, upstream issue #2297): one def's probe raising must not
    empty the list; it becomes that def's unavailable result with a diagnostic.
    """
    try:
        return await probe_agent(
            defn,
            env=env,
            platform=platform,
            home=home,
            fs=fs,
            arch=arch,
            interpreter_dir=interpreter_dir,
            runner=runner,
        )
    except Exception as exc:
        return _unavailable(
            defn,
            [
                Diagnostic(
                    DiagnosticCode.PROBE_CRASHED, f"detection raised {type(exc).__name__}: {exc}"
                )
            ],
        )


# --------------------------------------------------------------------------- many defs


async def _detect_indexed(
    defs: Sequence[AgentDef],
    *,
    env: Mapping[str, str],
    platform: str,
    home: str | None,
    fs: FileSystemView | None,
    arch: str | None,
    interpreter_dir: str | None,
    concurrency: int | None,
    runner: ProbeRunner,
) -> AsyncIterator[tuple[int, DetectionResult]]:
    """Probe every def concurrently; yield ``(index, result)`` as each completes.

    ``concurrency`` bounds how many defs are probed at once (ref §5.1:
    ``max(1, min(n, c))``); ``None`` probes all at once (DETECT-PARALLEL-001). Closing
    the iterator early cancels the rest, which kills their probe processes.
    """
    home_dir = home if home is not None else os.path.expanduser("~")
    view: FileSystemView = fs if fs is not None else RealFileSystem()
    interp = interpreter_dir if interpreter_dir is not None else os.path.dirname(sys.executable)
    limit = len(defs) if concurrency is None else max(1, min(len(defs), int(concurrency)))
    next_index = 0
    running: dict[asyncio.Task[DetectionResult], int] = {}

    def launch_next() -> None:
        nonlocal next_index
        index = next_index
        next_index += 1
        task = asyncio.ensure_future(
            detect_agent(
                defs[index],
                env=env,
                platform=platform,
                home=home_dir,
                fs=view,
                arch=arch,
                interpreter_dir=interp,
                runner=runner,
            )
        )
        running[task] = index

    try:
        while next_index < len(defs) and len(running) < limit:
            launch_next()
        while running:
            done, _ = await asyncio.wait(set(running), return_when=asyncio.FIRST_COMPLETED)
            # seed 002 §5.4 (DETECT-ORDER-001): completion order; ties by registry order.
            for task in sorted(done, key=lambda t: running[t]):
                index = running.pop(task)
                if next_index < len(defs):
                    launch_next()
                yield index, task.result()
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)


async def detect_stream(
    defs: Sequence[AgentDef],
    *,
    env: Mapping[str, str],
    platform: str = sys.platform,
    home: str | None = None,
    fs: FileSystemView | None = None,
    arch: str | None = None,
    interpreter_dir: str | None = None,
    concurrency: int | None = None,
    runner: ProbeRunner = run_probe,
) -> AsyncGenerator[DetectionResult, None]:
    """Yield each def's result as soon as it is known (seed 000 §9: paint a card per probe).

    Order is completion order (DETECT-ORDER-001); every def is yielded exactly once.
    ``home`` defaults to the user's home, ``fs`` to the real disk, ``interpreter_dir``
    to this Python's directory (prepended to each child's PATH, seed 002 §5.3).
    """
    async for _, result in _detect_indexed(
        defs,
        env=env,
        platform=platform,
        home=home,
        fs=fs,
        arch=arch,
        interpreter_dir=interpreter_dir,
        concurrency=concurrency,
        runner=runner,
    ):
        yield result


async def detect_all(
    defs: Sequence[AgentDef],
    *,
    env: Mapping[str, str],
    platform: str = sys.platform,
    home: str | None = None,
    fs: FileSystemView | None = None,
    arch: str | None = None,
    interpreter_dir: str | None = None,
    concurrency: int | None = None,
    runner: ProbeRunner = run_probe,
) -> list[DetectionResult]:
    """Every def's result, in the order of ``defs`` (ref §5.1, DETECT-ORDER-002)."""
    results: list[DetectionResult | None] = [None] * len(defs)
    async for index, result in _detect_indexed(
        defs,
        env=env,
        platform=platform,
        home=home,
        fs=fs,
        arch=arch,
        interpreter_dir=interpreter_dir,
        concurrency=concurrency,
        runner=runner,
    ):
        results[index] = result
    return [r for r in results if r is not None]


def detect_all_sync(
    defs: Sequence[AgentDef],
    *,
    env: Mapping[str, str],
    platform: str = sys.platform,
    home: str | None = None,
    fs: FileSystemView | None = None,
    arch: str | None = None,
    interpreter_dir: str | None = None,
    concurrency: int | None = None,
    runner: ProbeRunner = run_probe,
) -> list[DetectionResult]:
    """:func:`detect_all` for synchronous callers (runs its own event loop)."""
    return asyncio.run(
        detect_all(
            defs,
            env=env,
            platform=platform,
            home=home,
            fs=fs,
            arch=arch,
            interpreter_dir=interpreter_dir,
            concurrency=concurrency,
            runner=runner,
        )
    )
