"""Executable resolution and launch environment: from ``def.bin`` to a spawnable path.

Pure functions of ``(platform, env, filesystem view, home, arch)``: nothing here
reads ``os.environ``, the real disk or the host platform unless the caller
passes :class:`RealFileSystem`; so Windows and macOS cases run on Linux with a
:class:`FakeFileSystem`. Only :mod:`harness.runtime.probe` spawns processes.

Design: docs/design/host.md#harness.host.launch
"""

from __future__ import annotations

import ntpath
import os
import platform as _host_platform
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Protocol

from harness.defs.types import AgentDef, EnvStripRule, EnvValueRule, NodeWrapperNative

__all__ = [
    "ENV_TOOLCHAIN_DIRS",
    "HOME_TOOLCHAIN_DIRS",
    "NATIVE_TARGET_TRIPLES",
    "NODE_WRAPPER_HEAD_BYTES",
    "SYSTEM_TOOLCHAIN_DIRS",
    "WINDOWS_FALLBACK_EXTENSIONS",
    "FakeFile",
    "FakeFileSystem",
    "FileSystemView",
    "RealFileSystem",
    "Resolution",
    "apply_env_strip_rules",
    "bundled_path",
    "dedupe_path_entries",
    "expand_home",
    "find_native_binary",
    "host_arch",
    "launch_env",
    "looks_like_node_wrapper",
    "native_target_triple",
    "path_env_key",
    "resolve_executable",
    "resolve_on_path",
    "user_toolchain_dirs",
    "windows_extensions",
]

#: seed 002 §5.2 (LAUNCH-CODEX-NATIVE-002): sniffing a possible node wrapper reads at most
#: 64 KiB, because the selected path may be a ~190 MB native binary.
NODE_WRAPPER_HEAD_BYTES = 64 * 1024

#: ref §5.2: on win32 an override is executable iff its extension is in PATHEXT ∪ these,
#: and the PATH walk tries ``''``, then PATHEXT entries, then these.
WINDOWS_FALLBACK_EXTENSIONS = (".EXE", ".CMD", ".BAT")

#: What ``PATHEXT`` means when the variable is absent (the Windows default, trimmed).
_DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD"

#: seed 002 §5.2 / ref §5.2 (LAUNCH-CODEX-NATIVE-001): ``(platform, arch) -> target triple``
#: of the vendored native binary. Platform uses ``sys.platform`` names, arch uses node's.
NATIVE_TARGET_TRIPLES: Mapping[tuple[str, str], str] = {
    ("darwin", "arm64"): "aarch64-apple-darwin",
    ("darwin", "x64"): "x86_64-apple-darwin",
    ("linux", "x64"): "x86_64-unknown-linux-musl",
    ("linux", "arm64"): "aarch64-unknown-linux-musl",
    ("win32", "x64"): "x86_64-pc-windows-msvc",
    ("win32", "arm64"): "aarch64-pc-windows-msvc",
}

#: ``platform.machine()`` spellings -> node's ``process.arch`` names.
_ARCH_ALIASES = {
    "x86_64": "x64",
    "amd64": "x64",
    "x64": "x64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "armv8": "arm64",
}


# --------------------------------------------------------------------------- filesystem


class FileSystemView(Protocol):
    """The few questions resolution asks the filesystem (real or fake)."""

    def exists(self, path: str) -> bool: ...

    def is_file(self, path: str) -> bool: ...

    def is_executable(self, path: str) -> bool:
        """POSIX ``access(X_OK)`` on a regular file."""
        ...

    def read_head(self, path: str, max_bytes: int) -> bytes:
        """At most ``max_bytes`` from the start of ``path``; ``b""`` when unreadable."""
        ...

    def realpath(self, path: str) -> str: ...

    def listdir(self, path: str) -> list[str]:
        """Entry names of a directory; ``[]`` when it is not a readable directory."""
        ...


class RealFileSystem:
    """:class:`FileSystemView` over the machine's own disk."""

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def is_file(self, path: str) -> bool:
        return os.path.isfile(path)

    def is_executable(self, path: str) -> bool:
        return os.path.isfile(path) and os.access(path, os.X_OK)

    def read_head(self, path: str, max_bytes: int) -> bytes:
        try:
            with open(path, "rb") as fh:
                return fh.read(max_bytes)
        except OSError:
            return b""

    def realpath(self, path: str) -> str:
        return os.path.realpath(path)

    def listdir(self, path: str) -> list[str]:
        try:
            return sorted(os.listdir(path))
        except OSError:
            return []


@dataclass(frozen=True)
class FakeFile:
    """One file of a :class:`FakeFileSystem`.

    ``size`` may exceed ``len(data)`` to stand for a huge file without allocating
    it; reads past ``data`` return zero bytes up to ``size``.
    """

    data: bytes = b""
    executable: bool = True
    size: int | None = None

    @property
    def length(self) -> int:
        return len(self.data) if self.size is None else max(self.size, len(self.data))


class FakeFileSystem:
    """A dict-backed :class:`FileSystemView` for tests on any OS.

    Paths use ``platform``'s syntax; on ``win32`` lookups are case-insensitive
    and ``/`` equals ``\\``. Parent directories of every file exist implicitly;
    ``dirs`` adds empty ones, ``links`` maps a path to its symlink target (for
    :meth:`realpath`). ``reads`` records every :meth:`read_head` call as
    ``(path, max_bytes)`` so tests can prove how much was asked for.
    """

    def __init__(
        self,
        files: Mapping[str, FakeFile | bytes] | None = None,
        *,
        platform: str = "linux",
        dirs: Iterable[str] = (),
        links: Mapping[str, str] | None = None,
    ) -> None:
        self.platform = platform
        self._pm = _pathmod(platform)
        self._files: dict[str, FakeFile] = {}
        self._dirs: set[str] = set()
        self._links: dict[str, str] = {}
        self.reads: list[tuple[str, int]] = []
        for path, spec in (files or {}).items():
            self.add(path, spec)
        for d in dirs:
            self.add_dir(d)
        for src, dst in (links or {}).items():
            self._links[self._key(src)] = dst

    def _key(self, path: str) -> str:
        pm = self._pm
        return str(pm.normcase(pm.normpath(path)))

    def _add_parents(self, key: str) -> None:
        pm = self._pm
        parent = pm.dirname(key)
        while parent and parent not in self._dirs:
            self._dirs.add(parent)
            up = pm.dirname(parent)
            if up == parent:
                break
            parent = up

    def add(self, path: str, spec: FakeFile | bytes = b"", *, executable: bool = True) -> None:
        """Add a file; ``bytes`` means ``FakeFile(data, executable)``."""
        entry = spec if isinstance(spec, FakeFile) else FakeFile(spec, executable=executable)
        key = self._key(path)
        self._files[key] = entry
        self._add_parents(key)

    def add_dir(self, path: str) -> None:
        key = self._key(path)
        self._dirs.add(key)
        self._add_parents(key)

    def _resolve(self, path: str) -> str:
        key = self._key(path)
        seen: set[str] = set()
        while key in self._links and key not in seen:
            seen.add(key)
            target = self._links[key]
            if not self._pm.isabs(target):
                target = self._pm.join(self._pm.dirname(key), target)
            key = self._key(target)
        return key

    def exists(self, path: str) -> bool:
        key = self._resolve(path)
        return key in self._files or key in self._dirs

    def is_file(self, path: str) -> bool:
        return self._resolve(path) in self._files

    def is_executable(self, path: str) -> bool:
        entry = self._files.get(self._resolve(path))
        return entry is not None and entry.executable

    def read_head(self, path: str, max_bytes: int) -> bytes:
        self.reads.append((path, max_bytes))
        entry = self._files.get(self._resolve(path))
        if entry is None:
            return b""
        want = min(max_bytes, entry.length)
        head = entry.data[:want]
        return head + b"\0" * (want - len(head))

    def realpath(self, path: str) -> str:
        key = self._key(path)
        current = str(self._pm.normpath(path))
        if key not in self._links:
            return current
        seen: set[str] = set()
        while self._key(current) in self._links and self._key(current) not in seen:
            seen.add(self._key(current))
            target = self._links[self._key(current)]
            if not self._pm.isabs(target):
                target = self._pm.join(self._pm.dirname(current), target)
            current = str(self._pm.normpath(target))
        return current

    def listdir(self, path: str) -> list[str]:
        key = self._resolve(path)
        if key not in self._dirs:
            return []
        pm = self._pm
        names = {pm.basename(p) for p in (*self._files, *self._dirs) if pm.dirname(p) == key}
        names.discard("")
        return sorted(names)


# --------------------------------------------------------------------------- small helpers


def _pathmod(platform: str) -> ModuleType:
    """``ntpath`` for win32, ``posixpath`` otherwise (paths are platform parameters)."""
    return ntpath if platform == "win32" else posixpath


def _env_get(env: Mapping[str, str], key: str, platform: str) -> str | None:
    """``env[key]``; case-insensitive on win32, where the environment is."""
    if key in env:
        return env[key]
    if platform == "win32":
        upper = key.upper()
        for k, v in env.items():
            if k.upper() == upper:
                return v
    return None


def host_arch() -> str:
    """This machine's architecture in node's ``process.arch`` spelling (``x64``, ``arm64``)."""
    machine = _host_platform.machine().lower()
    return _ARCH_ALIASES.get(machine, machine)


def expand_home(path: str, home: str, platform: str) -> str:
    """Expand a leading ``~`` (alone, ``~/…`` or on win32 ``~\\…``) against ``home``.

    ``~user`` forms are left alone (a relative path, so an override using one is
    rejected as not absolute rather than guessed).
    """
    seps = ("/", "\\") if platform == "win32" else ("/",)
    if path == "~":
        return home
    if len(path) >= 2 and path[0] == "~" and path[1] in seps:
        return str(_pathmod(platform).join(home, path[2:]))
    return path


def path_env_key(env: Mapping[str, str], platform: str) -> str:
    """The key holding the search path: ``PATH``; on win32 found case-insensitively.

    seed 002 §5.3 (LAUNCH-ENV-002): Windows spells it ``Path``; reading ``env["PATH"]``
    there yields nothing and a rebuilt PATH would lose every system entry.
    """
    if platform != "win32":
        return "PATH"
    for k in env:
        if k.upper() == "PATH":
            return k
    return "Path"


def _path_delimiter(platform: str) -> str:
    return ";" if platform == "win32" else ":"


def _normalize_dir(entry: str, platform: str) -> str:
    """Dedupe key of a PATH entry (ref §5.3): no trailing slashes; lowercase on win32."""
    seps = "/\\" if platform == "win32" else "/"
    stripped = entry.rstrip(seps) or entry[:1]
    return stripped.lower() if platform == "win32" else stripped


def dedupe_path_entries(entries: Iterable[str], platform: str) -> list[str]:
    """Drop empty entries and later duplicates (ref §5.3 normalization); keep first spelling."""
    seen: set[str] = set()
    out: list[str] = []
    for entry in entries:
        if not entry:
            continue
        key = _normalize_dir(entry, platform)
        if key in seen:
            continue
        seen.add(key)
        out.append(entry)
    return out


def _split_path_value(value: str | None, platform: str) -> list[str]:
    if not value:
        return []
    return [e for e in value.split(_path_delimiter(platform)) if e]


def _path_entries(env: Mapping[str, str], platform: str) -> list[str]:
    """Every PATH entry; on win32 from every case variant of the key, first key first."""
    if platform != "win32":
        return _split_path_value(env.get("PATH"), platform)
    entries: list[str] = []
    for k, v in env.items():
        if k.upper() == "PATH":
            entries.extend(_split_path_value(v, platform))
    return entries


# --------------------------------------------------------------------------- toolchain dirs

_ALL = frozenset({"linux", "darwin", "win32"})
_POSIX = frozenset({"linux", "darwin"})

#: seed 002 §5.1, ref §5.2: user-level toolchain dirs a GUI-launched process's stripped PATH
#: misses. Searched after PATH and appended to every child's PATH (seed 002 §5.3), so the
#: search path and the spawn PATH stay symmetric. ``(platforms, path parts under ~)``.
HOME_TOOLCHAIN_DIRS: tuple[tuple[frozenset[str], tuple[str, ...]], ...] = (
    (_POSIX, (".local", "bin")),  # pipx, uv tool, native installers (claude)
    (_ALL, (".bun", "bin")),  # bun global installs (pi is `#!/usr/bin/env bun`)
    (_POSIX, (".npm-global", "bin")),  # the npm docs' recommended user prefix
    (_ALL, (".volta", "bin")),  # volta shims
    (_ALL, (".cargo", "bin")),  # cargo install
    (_ALL, (".deno", "bin")),  # deno install
)

#: ``(platforms, env var, path parts appended to its value)``; the value is used only when it
#: is an absolute path. NVM_BIN is the active nvm node's bin dir.
ENV_TOOLCHAIN_DIRS: tuple[tuple[frozenset[str], str, tuple[str, ...]], ...] = (
    (_ALL, "NVM_BIN", ()),
    (_ALL, "VOLTA_HOME", ("bin",)),
    (_ALL, "BUN_INSTALL", ("bin",)),
    (_ALL, "PNPM_HOME", ()),
    (_POSIX, "npm_config_prefix", ("bin",)),  # npm puts global shims in <prefix>/bin on POSIX
    (frozenset({"win32"}), "npm_config_prefix", ()),  # ... and directly in <prefix> on Windows
    (frozenset({"win32"}), "APPDATA", ("npm",)),  # default global npm prefix on Windows
    (_ALL, "CARGO_HOME", ("bin",)),
)

#: System package-manager dirs (Homebrew on Apple silicon and Intel; Linuxbrew).
SYSTEM_TOOLCHAIN_DIRS: Mapping[str, tuple[str, ...]] = {
    "darwin": ("/opt/homebrew/bin", "/usr/local/bin"),
    "linux": ("/home/linuxbrew/.linuxbrew/bin", "/usr/local/bin"),
    "win32": (),
}


def _version_key(name: str) -> tuple[int, ...]:
    nums = re.findall(r"\d+", name)
    return tuple(int(n) for n in nums)


def user_toolchain_dirs(
    platform: str,
    env: Mapping[str, str],
    home: str,
    *,
    fs: FileSystemView | None = None,
) -> list[str]:
    """The user toolchain bin dirs for ``platform``, in search order, de-duplicated.

    Order: env-derived dirs (``NVM_BIN`` first: the node the user last activated),
    home dirs, installed nvm node versions (newest first; only listed when ``fs``
    is given, from ``$NVM_DIR`` or ``~/.nvm``), then system dirs. Directories are
    not checked for existence: a missing one simply holds nothing.
    """
    pm = _pathmod(platform)
    dirs: list[str] = []
    for plats, var, parts in ENV_TOOLCHAIN_DIRS:
        if platform not in plats:
            continue
        value = (_env_get(env, var, platform) or "").strip()
        if value and pm.isabs(value):
            dirs.append(str(pm.join(value, *parts)) if parts else value)
    for plats, parts in HOME_TOOLCHAIN_DIRS:
        if platform in plats:
            dirs.append(str(pm.join(home, *parts)))
    if fs is not None:
        nvm_dir = (_env_get(env, "NVM_DIR", platform) or "").strip()
        root = nvm_dir if nvm_dir and pm.isabs(nvm_dir) else str(pm.join(home, ".nvm"))
        versions_dir = str(pm.join(root, "versions", "node"))
        for name in sorted(fs.listdir(versions_dir), key=_version_key, reverse=True):
            dirs.append(str(pm.join(versions_dir, name, "bin")))
    dirs.extend(SYSTEM_TOOLCHAIN_DIRS.get(platform, ()))
    return dedupe_path_entries(dirs, platform)


# --------------------------------------------------------------------------- resolution


@dataclass(frozen=True)
class Resolution:
    """Where each source pointed, and what will be selected and spawned (ref §5.2)."""

    #: ① the ``<ID>_BIN`` override, when valid.
    configured_override_path: str | None
    #: ② the bundled executable (``bundled_path`` hook), when one exists.
    bundled_path: str | None
    #: ③ first hit of the PATH ∪ toolchain walk.
    path_resolved_path: str | None
    #: ④ darwin app bundle.
    app_bundle_path: str | None
    #: ``override or bundled or path or app bundle`` ("the one the user installed").
    selected_path: str | None
    #: What is spawned: ``selected_path``, or the vendored native binary behind a node wrapper.
    launch_path: str | None
    #: The exact de-duplicated dirs the PATH walk searched (for a not-on-path diagnostic).
    searched_dirs: tuple[str, ...] = ()
    #: The user toolchain dirs among them (appended to the child PATH by :func:`launch_env`).
    toolchain_dirs: tuple[str, ...] = ()
    #: Dirs to prepend to the child PATH besides ``dirname(selected_path)`` when
    #: ``launch_path`` differs (the native binary's dir and its vendor ``path/`` dir).
    native_path_dirs: tuple[str, ...] = ()
    #: Why a set override was ignored (``None`` when unset or valid).
    override_problem: str | None = None
    #: The raw override value, when the env key was set.
    override_value: str | None = None


def windows_extensions(env: Mapping[str, str]) -> list[str]:
    """ref §5.2 (LAUNCH-PATHEXT-001): ``''``, then PATHEXT entries, then ``.EXE .CMD .BAT``.

    Entries are dot-prefixed and de-duplicated case-insensitively (first spelling kept).
    """
    raw = _env_get(env, "PATHEXT", "win32")
    entries = (raw if raw is not None else _DEFAULT_PATHEXT).split(";")
    out: list[str] = [""]
    seen: set[str] = {""}
    for entry in (*entries, *WINDOWS_FALLBACK_EXTENSIONS):
        ext = entry.strip()
        if not ext:
            continue
        if not ext.startswith("."):
            ext = "." + ext
        if ext.upper() in seen:
            continue
        seen.add(ext.upper())
        out.append(ext)
    return out


def _override_path(
    defn: AgentDef, *, platform: str, env: Mapping[str, str], fs: FileSystemView, home: str
) -> tuple[str | None, str | None, str | None]:
    """``(valid path, problem, raw value)`` of the ``<ID>_BIN`` override.

    ref §5.2 step 1 (LAUNCH-OVERRIDE-001): trimmed, ``~`` expanded, absolute, a file,
    and executable (POSIX ``X_OK``; win32 an extension in PATHEXT ∪ .EXE/.CMD/.BAT);
    otherwise ignored.
    """
    if not defn.bin_env_key:
        return None, None, None
    raw = _env_get(env, defn.bin_env_key, platform)
    if raw is None:
        return None, None, None
    value = raw.strip()
    if not value:
        return None, None, raw
    pm = _pathmod(platform)
    path = expand_home(value, home, platform)
    key = defn.bin_env_key
    if not pm.isabs(path):
        return None, f"{key}={value!r} is not an absolute path", raw
    if not fs.is_file(path):
        return None, f"{key}={value!r} is not an existing file", raw
    if platform == "win32":
        ext = pm.splitext(path)[1].upper()
        allowed = {e.upper() for e in windows_extensions(env) if e}
        if ext not in allowed:
            exts = ", ".join(sorted(allowed))
            return None, f"{key}={value!r} has no executable extension ({exts})", raw
    elif not fs.is_executable(path):
        return None, f"{key}={value!r} is not executable (no X_OK)", raw
    return path, None, raw


def bundled_path(
    defn: AgentDef, *, platform: str, env: Mapping[str, str], fs: FileSystemView, home: str
) -> str | None:
    """② The executable bundled with the host application; a documented no-op hook.

    seed 002 §5 step ② ("only amr/vela have one" upstream): this project ships no
    bundle. A def opts in by declaring ``bundled_paths: tuple[str, ...]`` (absolute or
    ``~``-prefixed candidates, first existing file wins); no built-in def declares
    one. There is no agent-id branch here, only data.
    """
    candidates = defn.bundled_paths
    pm = _pathmod(platform)
    for candidate in candidates:
        if not isinstance(candidate, str) or not candidate.strip():
            continue
        path = expand_home(candidate.strip(), home, platform)
        if pm.isabs(path) and fs.is_file(path):
            return path
    return None


def resolve_on_path(
    names: Sequence[str],
    dirs: Sequence[str],
    *,
    platform: str,
    env: Mapping[str, str],
    fs: FileSystemView,
    home: str,
) -> str | None:
    """ref §5.2 step 3 (LAUNCH-PATH-001): outer loop = name, inner loop = dirs.

    So ``names[0]`` anywhere on the path beats a fallback name found earlier on it.
    The check is that a file exists (no ``X_OK``): a present but non-executable file is
    selected, and the version probe then reports it as not executable instead of the
    def silently looking uninstalled. An absolute (or ``~``) name is checked as is.
    """
    pm = _pathmod(platform)
    exts = windows_extensions(env) if platform == "win32" else [""]
    for name in names:
        if not name:
            continue
        expanded = expand_home(name, home, platform)
        if pm.isabs(expanded):
            for ext in exts:
                if fs.is_file(expanded + ext):
                    return expanded + ext
            continue
        for d in dirs:
            for ext in exts:
                candidate = str(pm.join(d, name + ext))
                if fs.is_file(candidate):
                    return candidate
    return None


def resolve_executable(
    defn: AgentDef,
    *,
    platform: str,
    env: Mapping[str, str],
    fs: FileSystemView,
    home: str,
    arch: str | None = None,
) -> Resolution:
    """Find the executable for ``defn`` (ref §5.2; seed 002 §5.1-5.2).

    ``selected_path = override or bundled or PATH or app bundle`` (LAUNCH-ORDER-001).
    ``launch_path`` is the vendored native binary when ``defn.node_wrapper_native`` is
    set and the selected file is a node wrapper (LAUNCH-CODEX-NATIVE-001), else
    ``selected_path``. ``arch`` defaults to :func:`host_arch`.
    """
    pm = _pathmod(platform)
    override, problem, raw_override = _override_path(
        defn, platform=platform, env=env, fs=fs, home=home
    )
    bundled = bundled_path(defn, platform=platform, env=env, fs=fs, home=home)

    toolchain = user_toolchain_dirs(platform, env, home, fs=fs)
    searched = dedupe_path_entries([*_path_entries(env, platform), *toolchain], platform)
    on_path = resolve_on_path(
        [defn.bin, *defn.fallback_bins], searched, platform=platform, env=env, fs=fs, home=home
    )

    # seed 002 §5.1 (LAUNCH-APPBUNDLE-001): darwin only, after PATH, so an npm / Homebrew
    # install always wins over the copy hidden inside a desktop app bundle.
    app_bundle: str | None = None
    if platform == "darwin":
        for candidate in defn.app_bundle_paths:
            path = expand_home(candidate, home, platform)
            if pm.isabs(path) and fs.is_file(path):
                app_bundle = path
                break

    # ref §5.2: selectedPath = configuredOverridePath || builtInPath || pathResolvedPath
    #           || appBundlePath  (LAUNCH-ORDER-001)
    selected = override or bundled or on_path or app_bundle

    launch = selected
    native_dirs: tuple[str, ...] = ()
    if selected is not None and defn.node_wrapper_native is not None:
        native = find_native_binary(
            selected,
            defn.node_wrapper_native,
            platform=platform,
            arch=arch if arch is not None else host_arch(),
            fs=fs,
        )
        if native is not None:
            launch = native
            native_dir = str(pm.dirname(native))
            vendor_path_dir = str(pm.join(pm.dirname(native_dir), "path"))
            extra = [native_dir]
            if fs.exists(vendor_path_dir):
                extra.append(vendor_path_dir)
            native_dirs = tuple(extra)

    return Resolution(
        configured_override_path=override,
        bundled_path=bundled,
        path_resolved_path=on_path,
        app_bundle_path=app_bundle,
        selected_path=selected,
        launch_path=launch,
        searched_dirs=tuple(searched),
        toolchain_dirs=tuple(toolchain),
        native_path_dirs=native_dirs,
        override_problem=problem,
        override_value=raw_override,
    )


# --------------------------------------------------------------------------- node wrappers

_JS_EXTENSIONS = (".js", ".mjs", ".cjs")
_SHIM_EXTENSIONS = (".cmd", ".bat", ".ps1")
_NODE_WORD = re.compile(rb"(?<![A-Za-z0-9_])node(?:\.exe)?(?![A-Za-z0-9_])", re.IGNORECASE)
_JS_REF = re.compile(rb"\.[cm]?js\b", re.IGNORECASE)
_SH_SHEBANG = re.compile(rb"^#!\s*\S*/(?:env\s+)?(?:ba|da|z)?sh\b")
#: npm cmd-shim: ``"%dp0%\node_modules\...\cli.js"`` (older shims: ``%~dp0\``).
_CMD_SHIM_TARGET = re.compile(r"%~?dp0%?\\([^\"%\r\n]+?\.[cm]?js)", re.IGNORECASE)


def native_target_triple(platform: str, arch: str) -> str | None:
    """seed 002 §5.2: the vendored binary's target triple, ``None`` when unsupported."""
    return NATIVE_TARGET_TRIPLES.get((platform, arch))


def looks_like_node_wrapper(path: str, head: bytes, platform: str) -> bool:
    """Whether ``path`` (whose first bytes are ``head``) launches node (seed 002 §5.2).

    True for a ``.js``/``.mjs``/``.cjs`` file, a script whose shebang names node
    (``#!/usr/bin/env node``), a ``.cmd``/``.bat``/``.ps1`` shim that names node or a
    ``.js`` entry point, and
    npm's POSIX sh shim (``exec node "$basedir/…/cli.js"``). A native binary has no
    shebang and is never a wrapper.
    """
    pm = _pathmod(platform)
    ext = str(pm.splitext(path)[1]).lower()
    if ext in _JS_EXTENSIONS:
        return True
    if ext in _SHIM_EXTENSIONS:
        # npm cmd-shim: runs ``node`` (or ``%_prog%``) on a ``.js`` entry point.
        return bool(_NODE_WORD.search(head) or _JS_REF.search(head))
    if not head.startswith(b"#!"):
        return False
    first_line = head.split(b"\n", 1)[0]
    if _NODE_WORD.search(first_line):
        return True
    return bool(_SH_SHEBANG.match(first_line) and _NODE_WORD.search(head) and _JS_REF.search(head))


def _wrapper_start_dirs(selected: str, head: bytes, platform: str, fs: FileSystemView) -> list[str]:
    """Dirs to walk upward from: the wrapper's dir, its real dir, a cmd-shim's target dir."""
    pm = _pathmod(platform)
    starts = [str(pm.dirname(selected))]
    real = fs.realpath(selected)
    starts.append(str(pm.dirname(real)))
    if platform == "win32":
        match = _CMD_SHIM_TARGET.search(head.decode("utf-8", "replace"))
        if match:
            target = str(pm.join(pm.dirname(selected), match.group(1)))
            starts.append(str(pm.dirname(pm.normpath(target))))
    return dedupe_path_entries(starts, platform)


def find_native_binary(
    selected: str,
    spec: NodeWrapperNative,
    *,
    platform: str,
    arch: str,
    fs: FileSystemView,
) -> str | None:
    """The native binary behind a node wrapper, or ``None`` (seed 002 §5.2).

    Reads at most :data:`NODE_WRAPPER_HEAD_BYTES` of ``selected`` (LAUNCH-CODEX-NATIVE-002),
    then walks upward from the wrapper's directory looking for
    ``node_modules/<prefix><platform>-<arch>/vendor/<triple>/<bin_dir>/<bin_name>[.exe]``.
    """
    triple = native_target_triple(platform, arch)
    if triple is None:
        return None
    pm = _pathmod(platform)
    ext = str(pm.splitext(selected)[1]).lower()
    head = b"" if ext in _JS_EXTENSIONS else fs.read_head(selected, NODE_WRAPPER_HEAD_BYTES)
    if not looks_like_node_wrapper(selected, head, platform):
        return None
    package = f"{spec.package_prefix}{platform}-{arch}"
    exe = spec.bin_name + (".exe" if platform == "win32" else "")
    tail = ("node_modules", *package.split("/"), "vendor", triple, spec.bin_dir, exe)
    for start in _wrapper_start_dirs(selected, head, platform, fs):
        current = start
        while True:
            candidate = str(pm.join(current, *tail))
            if fs.is_file(candidate):
                return candidate
            parent = str(pm.dirname(current))
            if not parent or parent == current:
                break
            current = parent
    return None


# --------------------------------------------------------------------------- launch env


def apply_env_value_rules(env: Mapping[str, str], rules: Iterable[EnvValueRule]) -> dict[str, str]:
    """ref §5.3 (LAUNCH-ENV-004): drop ``rule.key`` unless its value is an allowed one.

    Keys match case-insensitively (Windows env); values are compared trimmed.
    """
    out = dict(env)
    for rule in rules:
        for k in [k for k in out if k.upper() == rule.key.upper()]:
            if out[k].strip() not in rule.allowed:
                del out[k]
    return out


def apply_env_strip_rules(env: Mapping[str, str], rules: Iterable[EnvStripRule]) -> dict[str, str]:
    """ref §5.3 (LAUNCH-ENV-003): drop each rule's keys unless one of ``unless_set`` is set.

    Keys match case-insensitively (Windows env). "Set" means a value that is not
    empty after trimming whitespace.
    """
    out = dict(env)
    for rule in rules:
        guards = {k.upper() for k in rule.unless_set}
        if any(k.upper() in guards and v.strip() for k, v in out.items()):
            continue
        drop = {k.upper() for k in rule.keys}
        for k in [k for k in out if k.upper() in drop]:
            del out[k]
    return out


def launch_env(
    base_env: Mapping[str, str],
    resolution: Resolution,
    *,
    platform: str,
    interpreter_dir: str | None,
    home: str,
    defn: AgentDef,
) -> dict[str, str]:
    """The environment a child of ``defn`` is spawned with (seed 002 §5.3, ref §5.3).

    1. ``base_env`` overlaid with ``defn.env``, then ``defn.strip_env`` rules applied
       (LAUNCH-ENV-003).
    2. PATH (LAUNCH-ENV-001) = dedupe([interpreter_dir, dirname(selected_path),
       native binary dirs when ``launch_path`` differs, *existing PATH entries,
       *user toolchain dirs]). The toolchain dirs are the ones resolution searched, so
       a ``#!/usr/bin/env bun`` script found in ``~/.bun/bin`` can find ``bun`` too.
    3. The existing PATH key keeps its name (``Path`` on Windows) and case variants are
       merged into it, so no system entry is lost (LAUNCH-ENV-002).
    """
    merged: dict[str, str] = dict(base_env)
    for k, v in defn.env.items():
        if platform == "win32":
            for existing in [e for e in merged if e.upper() == k.upper() and e != k]:
                del merged[existing]
        merged[k] = v
    env = apply_env_value_rules(apply_env_strip_rules(merged, defn.strip_env), defn.env_value_rules)

    pm = _pathmod(platform)
    key = path_env_key(env, platform)
    existing_entries = _path_entries(env, platform)
    prepend: list[str] = []
    if interpreter_dir:
        prepend.append(interpreter_dir)
    selected = resolution.selected_path
    if selected:
        prepend.append(str(pm.dirname(selected)))
    if resolution.launch_path and resolution.launch_path != selected:
        prepend.extend(resolution.native_path_dirs or (str(pm.dirname(resolution.launch_path)),))
    toolchain = [*resolution.toolchain_dirs, *user_toolchain_dirs(platform, base_env, home)]
    entries = dedupe_path_entries([*prepend, *existing_entries, *toolchain], platform)

    if platform == "win32":
        for other in [k for k in env if k.upper() == "PATH" and k != key]:
            del env[other]
    env[key] = _path_delimiter(platform).join(entries)
    return env
