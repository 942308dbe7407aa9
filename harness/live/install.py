"""``harness live install``: the pinned real CLIs, in a cache dir.

Layout under the cache dir (default ``<project>/.cache/live``, or
``$ADAPTER_HARNESS_CACHE``):

* npm: ``npm/<name>@<version>/`` installed with ``npm install --prefix``; the executable is
  ``node_modules/.bin/<bin>`` (or the recipe's ``bin_path`` under the prefix);
* PyPI: one venv per package, ``venv/<name>==<version>/``; the executable is
  ``bin/<bin>`` (``Scripts\\<bin>.exe`` on Windows).

Idempotent (LIVE-INSTALL-001): a marker file ``.harness-live-install.json`` is written
only after the install succeeded and its executable exists; when the marker is present
the install is skipped. A recipe with ``skip`` is never installed (LIVE-SKIP-001).
Every step is reported to ``out`` (what ran, how long it took).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.live.recipes import PackageSpec, Recipe

__all__ = [
    "CACHE_ENV",
    "MARKER",
    "InstallError",
    "InstallOutcome",
    "default_cache_dir",
    "find_python",
    "install_dir",
    "install_recipe",
    "installed_bin",
    "installed_tool",
    "python_accepted",
    "read_marker",
]

CACHE_ENV = "ADAPTER_HARNESS_CACHE"
MARKER = ".harness-live-install.json"
INSTALL_TIMEOUT_S = 900.0

Out = Callable[[str], None]


class InstallError(HarnessError):
    """An install that failed: the command, its exit code and the tail of its output."""

    code = "LIVE_INSTALL_FAILED"

    def __init__(self, message: str) -> None:
        super().__init__(message, rule="LIVE-INSTALL-001")


@dataclass(frozen=True)
class InstallOutcome:
    agent: str
    #: ``installed``, ``present`` (marker found, nothing ran) or ``skipped`` (recipe skip).
    action: str
    detail: str
    seconds: float = 0.0
    bin_path: str | None = None


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$ADAPTER_HARNESS_CACHE``, else ``<project>/.cache/live`` (the checkout holding this
    package when it has a ``pyproject.toml``), else ``./.cache/live``."""
    environ = os.environ if env is None else env
    configured = environ.get(CACHE_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    project = Path(__file__).resolve().parents[2]
    if (project / "pyproject.toml").is_file():
        return project / ".cache" / "live"
    return Path.cwd() / ".cache" / "live"


def install_dir(package: PackageSpec, cache_dir: Path) -> Path:
    if package.manager == "npm":
        return cache_dir / "npm" / package.key
    return cache_dir / "venv" / f"{package.name}=={package.version}"


def _bin_in(package: PackageSpec, prefix: Path, platform: str = sys.platform) -> Path:
    if package.bin_path:
        if not any(c in package.bin_path for c in "*?["):
            return prefix / package.bin_path
        # A wheel's bundled executable sits under lib/python3.X/site-packages: the X is
        # the venv's, so the recipe names it with a glob (one match, or none yet).
        matches = sorted(prefix.glob(package.bin_path))
        return matches[0] if len(matches) == 1 else prefix / package.bin_path
    if package.manager == "npm":
        name = package.bin + (".cmd" if platform == "win32" else "")
        return prefix / "node_modules" / ".bin" / name
    if platform == "win32":
        return prefix / "Scripts" / f"{package.bin}.exe"
    return prefix / "bin" / package.bin


def read_marker(prefix: Path) -> dict[str, object] | None:
    try:
        data = json.loads((prefix / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def installed_bin(recipe: Recipe, cache_dir: Path | None = None) -> Path | None:
    """The executable of the recipe's pinned install, when it exists and its venv (PyPI)
    was built with a Python the recipe accepts (else ``None``)."""
    if recipe.package is None or recipe.skipped:
        return None
    cache = cache_dir if cache_dir is not None else default_cache_dir()
    prefix = install_dir(recipe.package, cache)
    if _stale_venv(recipe.package, prefix):
        return None  # built with a Python the CLI does not run on: install again
    path = _bin_in(recipe.package, prefix)
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _python_version(python: str) -> tuple[tuple[int, int, int] | None, str]:
    """The ``(major, minor, micro)`` of an interpreter, or ``None`` and why it did not
    answer (a pyenv shim of a version that is not active exits non-zero)."""
    try:
        proc = subprocess.run(
            [python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except OSError as exc:
        return None, f"does not start ({exc.strerror})"
    except subprocess.TimeoutExpired:
        return None, "did not answer within 30 s"
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)$", proc.stdout.strip())
    if proc.returncode == 0 and m:
        return (int(m.group(1)), int(m.group(2)), int(m.group(3))), ""
    said = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
    return None, f"does not run (exit {proc.returncode}: {said[0][:120] if said else 'no output'})"


def _as_minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _managed_pythons(env: Mapping[str, str]) -> list[Path]:
    """Interpreters installed by pyenv (``$PYENV_ROOT``, ``~/.pyenv``) and by uv
    (``$UV_PYTHON_INSTALL_DIR``, ``$XDG_DATA_HOME/uv/python``, ``~/.local/share/uv/python``)."""
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    roots: list[Path] = []
    for pyenv_root in (env.get("PYENV_ROOT", ""), str(home / ".pyenv")):
        if pyenv_root:
            roots.append(Path(pyenv_root) / "versions")
    for uv_dir in (
        env.get("UV_PYTHON_INSTALL_DIR", ""),
        str(Path(env["XDG_DATA_HOME"]) / "uv" / "python") if env.get("XDG_DATA_HOME") else "",
        str(home / ".local" / "share" / "uv" / "python"),
    ):
        if uv_dir:
            roots.append(Path(uv_dir))
    found: list[Path] = []
    seen: set[Path] = set()
    for root in roots:
        try:
            versions = sorted(p for p in root.iterdir() if p.is_dir())
        except OSError:
            continue
        for version_dir in versions:
            candidate = version_dir / "bin" / "python3"
            key = candidate.resolve() if candidate.exists() else candidate
            if candidate.is_file() and key not in seen:
                seen.add(key)
                found.append(candidate)
    return found


def python_accepted(
    version: tuple[int, ...], minimum: str | None, allowed: Sequence[str] = ()
) -> bool:
    """Whether an interpreter of ``version`` may build the venv: at least ``minimum`` and,
    when ``allowed`` is given, one of those major.minor versions."""
    if minimum is not None and version[:2] < _as_minor(minimum):
        return False
    return not allowed or version[:2] in {_as_minor(v) for v in allowed}


def _wanted(minimum: str | None, allowed: Sequence[str]) -> str:
    if allowed:
        return "Python " + " or ".join(allowed)
    return f"Python >= {minimum}"


def find_python(
    minimum: str | None,
    env: Mapping[str, str] | None = None,
    *,
    allowed: Sequence[str] = (),
) -> str:
    """An interpreter that is at least ``minimum`` (``"3.12"``) and, when ``allowed`` names
    versions (``("3.13",)``), one of them: this one, ``python3.X`` on PATH, a pyenv version
    or a uv-managed one. Each candidate is run to learn its version (a pyenv shim of an
    inactive version does not run). Raises :class:`InstallError` naming every candidate and
    what it was."""
    if minimum is None and not allowed:
        return sys.executable
    environ = os.environ if env is None else env
    if python_accepted(sys.version_info[:3], minimum, allowed):
        return sys.executable
    tried = [f"{sys.executable} is {'.'.join(map(str, sys.version_info[:3]))}"]
    if allowed:
        minors = [_as_minor(v)[1] for v in allowed]
    else:
        assert minimum is not None
        low = _as_minor(minimum)[1]
        minors = list(range(low, low + 6))
    candidates: list[str] = []
    path = environ.get("PATH", "")
    for minor in minors:
        found = shutil.which(f"python3.{minor}", path=path)
        if found:
            candidates.append(found)
    candidates.extend(str(p) for p in _managed_pythons(environ))
    seen = {os.path.realpath(sys.executable)}
    for candidate in candidates:
        real = os.path.realpath(candidate)
        if real in seen:
            continue
        seen.add(real)
        version, why = _python_version(candidate)
        if version is None:
            tried.append(f"{candidate} {why}")
            continue
        if python_accepted(version, minimum, allowed):
            return candidate
        tried.append(f"{candidate} is {'.'.join(map(str, version))}")
    raise InstallError(
        f"the recipe needs {_wanted(minimum, allowed)} and none was found "
        f"(looked on PATH, in pyenv and uv installs: {'; '.join(tried)}); install one, "
        f"e.g. `pyenv install {allowed[0] if allowed else minimum}`"
    )


def _venv_version(prefix: Path) -> tuple[int, ...] | None:
    """The Python version a venv was built with (``pyvenv.cfg``), if it says."""
    try:
        text = (prefix / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"^\s*version(?:_info)?\s*=\s*(\d+)\.(\d+)(?:\.(\d+))?", text, re.MULTILINE)
    return tuple(int(g) for g in m.groups() if g is not None) if m else None


def _run(cmd: Sequence[str], out: Out, env: Mapping[str, str] | None) -> None:
    out("  $ " + " ".join(cmd))
    try:
        proc = subprocess.run(
            list(cmd),
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
            env=dict(env) if env is not None else None,
        )
    except FileNotFoundError as exc:
        raise InstallError(f"{cmd[0]}: not found ({exc.strerror})") from exc
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"{' '.join(cmd)}: timed out after {INSTALL_TIMEOUT_S:.0f} s") from exc
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-2000:]
        raise InstallError(f"{' '.join(cmd)}: exit {proc.returncode}\n{tail}")


def _stale_venv(package: PackageSpec, prefix: Path) -> str:
    """Why an existing venv cannot be kept (built with a Python the recipe does not
    accept), or ``""``."""
    if package.manager != "pypi":
        return ""
    version = _venv_version(prefix)
    if version is None or python_accepted(version, package.python, package.pythons):
        return ""
    return (
        f"{prefix} was built with Python {'.'.join(map(str, version))}, "
        f"but the recipe needs {_wanted(package.python, package.pythons)}"
    )


def install_recipe(
    recipe: Recipe,
    cache_dir: Path | None = None,
    *,
    out: Out = print,
    force: bool = False,
    env: Mapping[str, str] | None = None,
) -> InstallOutcome:
    """Install the recipe's pinned package, and the tools its live tests use beside it,
    unless their markers are present (or it is a skip)."""
    if recipe.skipped or recipe.package is None:
        reason = recipe.skip_reason or "the recipe has no package"
        out(f"{recipe.agent}: skipped ({reason})")
        return InstallOutcome(recipe.agent, "skipped", reason)
    cache = cache_dir if cache_dir is not None else default_cache_dir(env)
    for tool in recipe.tools:
        _install_package(recipe.agent, tool, cache, out=out, force=force, env=env)
    return _install_package(recipe.agent, recipe.package, cache, out=out, force=force, env=env)


def installed_tool(recipe: Recipe, name: str, cache_dir: Path | None = None) -> Path | None:
    """The executable of the recipe's pinned tool ``name`` (its package name), if installed."""
    cache = cache_dir if cache_dir is not None else default_cache_dir()
    for tool in recipe.tools:
        if tool.name == name:
            path = _bin_in(tool, install_dir(tool, cache))
            return path if path.is_file() and os.access(path, os.X_OK) else None
    return None


def _install_package(
    agent: str,
    package: PackageSpec,
    cache: Path,
    *,
    out: Out,
    force: bool,
    env: Mapping[str, str] | None,
) -> InstallOutcome:
    prefix = install_dir(package, cache)
    bin_path = _bin_in(package, prefix)
    marker = read_marker(prefix)
    stale = _stale_venv(package, prefix)
    if stale:
        out(f"{agent}: {stale}; rebuilding it")
        shutil.rmtree(prefix)
        marker = None
    if marker is not None and not force and bin_path.is_file():
        out(f"{agent}: {package.key} already installed in {prefix} (marker {MARKER})")
        return InstallOutcome(agent, "present", str(prefix), 0.0, str(bin_path))
    out(f"{agent}: installing {package.manager} {package.key} into {prefix}")
    started = time.monotonic()
    prefix.mkdir(parents=True, exist_ok=True)
    path = (os.environ if env is None else env).get("PATH", "")
    python = ""
    if package.manager == "npm":
        npm = shutil.which("npm", path=path)
        if npm is None:
            raise InstallError("npm is not on PATH")
        _run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
                str(prefix),
                f"{package.name}@{package.version}",
            ],
            out,
            env,
        )
    else:
        python = find_python(package.python, env, allowed=package.pythons)
        if not (prefix / "pyvenv.cfg").is_file():
            _run([python, "-m", "venv", str(prefix)], out, env)
        pip = prefix / ("Scripts" if sys.platform == "win32" else "bin") / "pip"
        _run(
            [
                str(pip),
                "install",
                "--disable-pip-version-check",
                "--quiet",
                f"{package.name}=={package.version}",
            ],
            out,
            env,
        )
    bin_path = _bin_in(package, prefix)  # a glob in bin_path matches only now
    if not bin_path.is_file():
        raise InstallError(
            f"{package.key} installed but its executable {bin_path} does not exist "
            f"(check the recipe's package.bin / package.bin_path)"
        )
    seconds = time.monotonic() - started
    (prefix / MARKER).write_text(
        json.dumps(
            {
                "agent": agent,
                "manager": package.manager,
                "name": package.name,
                "version": package.version,
                "bin": str(bin_path),
                **({"python": python} if python else {}),
                "seconds": round(seconds, 2),
                "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    out(f"{agent}: installed {package.key} in {seconds:.1f} s -> {bin_path}")
    return InstallOutcome(agent, "installed", str(prefix), seconds, str(bin_path))
