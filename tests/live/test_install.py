"""``harness live install`` with a stand-in npm on PATH (LIVE-INSTALL-001)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from harness.live.install import MARKER, InstallError, install_recipe, installed_bin, read_marker
from harness.live.recipes import parse_recipe, recipe_for

pytestmark = pytest.mark.posix

FAKE_NPM = """#!/bin/sh
# args: install --no-audit --no-fund --loglevel=error --prefix PREFIX SPEC
echo "$@" >> "$NPM_LOG"
[ -n "$NPM_FAIL" ] && { echo "npm error 404 $7" >&2; exit 1; }
mkdir -p "$6/node_modules/.bin"
printf '#!/bin/sh\\necho 1.2.3\\n' > "$6/node_modules/.bin/x"
chmod +x "$6/node_modules/.bin/x"
"""


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    npm = bindir / "npm"
    npm.write_text(FAKE_NPM)
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    return {
        "PATH": f"{bindir}{os.pathsep}/usr/bin:/bin",
        "NPM_LOG": str(tmp_path / "npm.log"),
        **extra,
    }


RECIPE = parse_recipe(
    {
        "format": "live-recipe-v1",
        "agent": "x",
        "package": {"manager": "npm", "name": "@scope/x", "version": "1.2.3", "bin": "x"},
        "provider": "anthropic",
        "scenarios": ["text"],
    },
    path="x.json",
)


@pytest.mark.rule("LIVE-INSTALL-001")
def test_install_is_idempotent_through_the_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _env(tmp_path)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    cache = tmp_path / "cache"
    lines: list[str] = []
    first = install_recipe(RECIPE, cache, out=lines.append, env=env)
    prefix = cache / "npm" / "@scope" / "x@1.2.3"
    assert first.action == "installed" and first.bin_path == str(prefix / "node_modules/.bin/x")
    assert read_marker(prefix) is not None and (prefix / MARKER).is_file()
    assert installed_bin(RECIPE, cache) == prefix / "node_modules/.bin/x"
    second = install_recipe(RECIPE, cache, out=lines.append, env=env)
    assert second.action == "present"
    log = (tmp_path / "npm.log").read_text().splitlines()
    assert log == [
        f"install --no-audit --no-fund --loglevel=error --prefix {prefix} @scope/x@1.2.3"
    ]
    assert any("already installed" in line for line in lines)
    forced = install_recipe(RECIPE, cache, out=lines.append, env=env, force=True)
    assert (
        forced.action == "installed" and len((tmp_path / "npm.log").read_text().splitlines()) == 2
    )


@pytest.mark.rule("LIVE-INSTALL-001")
def test_a_failed_install_writes_no_marker(tmp_path: Path) -> None:
    env = _env(tmp_path, NPM_FAIL="1")
    cache = tmp_path / "cache"
    with pytest.raises(InstallError, match="exit 1"):
        install_recipe(RECIPE, cache, out=lambda _m: None, env=env)
    assert read_marker(cache / "npm" / "@scope" / "x@1.2.3") is None
    assert installed_bin(RECIPE, cache) is None


@pytest.mark.rule("LIVE-INSTALL-001", "LIVE-SKIP-001")
def test_a_skip_recipe_is_not_installed(tmp_path: Path) -> None:
    qoder = recipe_for("qoder")
    assert qoder is not None
    outcome = install_recipe(qoder, tmp_path, out=lambda _m: None, env={"PATH": ""})
    assert outcome.action == "skipped" and not any(tmp_path.iterdir())
