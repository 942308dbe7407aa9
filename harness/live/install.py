"""``harness live install``: the pinned real CLIs, in a cache dir (issue 7 item 3).

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
        return prefix / package.bin_path
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
    """The executable of the recipe's pinned install, when it exists (else ``None``)."""
    if recipe.package is None or recipe.skipped:
        return None
    cache = cache_dir if cache_dir is not None else default_cache_dir()
    path = _bin_in(recipe.package, install_dir(recipe.package, cache))
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _python_version(python: str) -> tuple[int, int] | None:
    try:
        proc = subprocess.run(
            [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.match(r"^(\d+)\.(\d+)$", proc.stdout.strip())
    return (int(m.group(1)), int(m.group(2))) if m and proc.returncode == 0 else None


def find_python(minimum: str | None, env: Mapping[str, str] | None = None) -> str:
    """An interpreter >= ``minimum`` (``"3.12"``): this one, ``python3.X`` on PATH, or a
    pyenv version. Raises :class:`InstallError` naming what was tried."""
    if minimum is None:
        return sys.executable
    want = tuple(int(p) for p in minimum.split("."))
    if sys.version_info[:2] >= want:
        return sys.executable
    path = (os.environ if env is None else env).get("PATH", "")
    tried: list[str] = [sys.executable]
    candidates: list[str] = []
    for minor in range(want[1], want[1] + 6):
        found = shutil.which(f"python3.{minor}", path=path)
        if found:
            candidates.append(found)
    pyenv = Path.home() / ".pyenv" / "versions"
    if pyenv.is_dir():
        candidates.extend(str(p / "bin" / "python3") for p in sorted(pyenv.iterdir()))
    for candidate in candidates:
        tried.append(candidate)
        version = _python_version(candidate)
        if version is not None and version >= want:
            return candidate
    raise InstallError(f"no Python >= {minimum} found (tried {', '.join(tried)})")


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


def install_recipe(
    recipe: Recipe,
    cache_dir: Path | None = None,
    *,
    out: Out = print,
    force: bool = False,
    env: Mapping[str, str] | None = None,
) -> InstallOutcome:
    """Install the recipe's pinned package unless its marker is present (or it is a skip)."""
    if recipe.skipped or recipe.package is None:
        reason = recipe.skip_reason or "the recipe has no package"
        out(f"{recipe.agent}: skipped ({reason})")
        return InstallOutcome(recipe.agent, "skipped", reason)
    package = recipe.package
    cache = cache_dir if cache_dir is not None else default_cache_dir(env)
    prefix = install_dir(package, cache)
    bin_path = _bin_in(package, prefix)
    marker = read_marker(prefix)
    if marker is not None and not force and bin_path.is_file():
        out(f"{recipe.agent}: {package.key} already installed in {prefix} (marker {MARKER})")
        return InstallOutcome(recipe.agent, "present", str(prefix), 0.0, str(bin_path))
    out(f"{recipe.agent}: installing {package.manager} {package.key} into {prefix}")
    started = time.monotonic()
    prefix.mkdir(parents=True, exist_ok=True)
    path = (os.environ if env is None else env).get("PATH", "")
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
        python = find_python(package.python, env)
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
    if not bin_path.is_file():
        raise InstallError(
            f"{package.key} installed but its executable {bin_path} does not exist "
            f"(check the recipe's package.bin / package.bin_path)"
        )
    seconds = time.monotonic() - started
    (prefix / MARKER).write_text(
        json.dumps(
            {
                "agent": recipe.agent,
                "manager": package.manager,
                "name": package.name,
                "version": package.version,
                "bin": str(bin_path),
                "seconds": round(seconds, 2),
                "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    out(f"{recipe.agent}: installed {package.key} in {seconds:.1f} s -> {bin_path}")
    return InstallOutcome(recipe.agent, "installed", str(prefix), seconds, str(bin_path))
