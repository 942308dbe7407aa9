"""``harness live install`` with a stand-in npm on PATH (LIVE-INSTALL-001)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from harness.live.install import (
    MARKER,
    InstallError,
    find_python,
    install_recipe,
    installed_bin,
    installed_tool,
    read_marker,
)
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
def test_the_recipes_tools_are_installed_beside_it(tmp_path: Path) -> None:
    env = _env(tmp_path)
    tool = {"manager": "npm", "name": "@scope/tool", "version": "2.0.0", "bin": "x"}
    recipe = parse_recipe(
        {
            "format": "live-recipe-v1",
            "agent": "x",
            "package": {"manager": "npm", "name": "@scope/x", "version": "1.2.3", "bin": "x"},
            "tools": [tool],
            "provider": "anthropic",
            "scenarios": ["text"],
        },
        path="x.json",
    )
    cache = tmp_path / "cache"
    assert installed_tool(recipe, "@scope/tool", cache) is None
    outcome = install_recipe(recipe, cache, out=lambda _m: None, env=env)
    assert outcome.action == "installed" and outcome.bin_path == str(installed_bin(recipe, cache))
    prefix = cache / "npm" / "@scope" / "tool@2.0.0"
    assert installed_tool(recipe, "@scope/tool", cache) == prefix / "node_modules/.bin/x"
    assert read_marker(prefix) is not None
    assert installed_tool(recipe, "not-a-tool", cache) is None
    log = (tmp_path / "npm.log").read_text().splitlines()
    assert [line.rsplit(" ", 1)[1] for line in log] == ["@scope/tool@2.0.0", "@scope/x@1.2.3"]
    # Both markers hold: nothing runs again.
    assert install_recipe(recipe, cache, out=lambda _m: None, env=env).action == "present"
    assert len((tmp_path / "npm.log").read_text().splitlines()) == 2


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


# -- which Python builds a PyPI CLI's venv ------------------------------------------------------
#: A stand-in interpreter: answers the version probe and makes a venv with a pip that
#: installs a bin ``x`` (args: ``-m venv PREFIX`` / ``install ... SPEC``).
FAKE_PYTHON = """#!/bin/sh
if [ "$1" = "-m" ]; then
  mkdir -p "$3/bin"
  printf 'home = /x\\nversion = {version}\\n' > "$3/pyvenv.cfg"
  printf '#!/bin/sh\\nmkdir -p "$(dirname "$0")"; printf "#!/bin/sh\\\\n" > "$(dirname "$0")/x"; \
chmod +x "$(dirname "$0")/x"\\n' > "$3/bin/pip"
  chmod +x "$3/bin/pip"
  echo "$0" >> "$PY_LOG"
  exit 0
fi
echo {version}
"""
#: A pyenv shim of a version that is not active: on PATH, but it does not run.
SHIM = """#!/bin/sh
echo "pyenv: $(basename "$0"): command not found" >&2
exit 127
"""


def _exe(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _pythons(tmp_path: Path, versions: tuple[str, ...]) -> dict[str, str]:
    """An env whose PATH holds only shims and whose pyenv root holds ``versions``."""
    shims = tmp_path / "shims"
    for v in versions:
        _exe(shims / f"python{v.rsplit('.', 1)[0]}", SHIM)
    root = tmp_path / "pyenv"
    for v in versions:
        _exe(root / "versions" / v / "bin" / "python3", FAKE_PYTHON.format(version=v))
    return {
        "PATH": f"{shims}{os.pathsep}/usr/bin:/bin",
        "PYENV_ROOT": str(root),
        "HOME": str(tmp_path / "home"),
        "PY_LOG": str(tmp_path / "py.log"),
    }


def _pypi(**package: object) -> dict[str, object]:
    return {
        "format": "live-recipe-v1",
        "agent": "x",
        "package": {"manager": "pypi", "name": "x-cli", "version": "1.0.0", "bin": "x", **package},
        "provider": "openai-chat",
        "scenarios": ["text"],
    }


@pytest.mark.rule("LIVE-INSTALL-001")
def test_find_python_skips_shims_that_do_not_run_and_versions_not_listed(
    tmp_path: Path,
) -> None:
    env = _pythons(tmp_path, ("3.97.1", "3.98.0", "3.99.2"))
    found = find_python("3.97", env, allowed=("3.98",))
    assert found == str(tmp_path / "pyenv" / "versions" / "3.98.0" / "bin" / "python3")
    # a minimum alone takes the first that is new enough
    assert find_python("3.99", env).endswith("3.99.2/bin/python3")


@pytest.mark.rule("LIVE-INSTALL-001")
def test_find_python_refuses_with_what_it_tried(tmp_path: Path) -> None:
    env = _pythons(tmp_path, ("3.97.1",))
    with pytest.raises(InstallError) as caught:
        find_python(None, env, allowed=("3.98", "3.99"))
    message = str(caught.value)
    assert "needs Python 3.98 or 3.99" in message
    assert "3.97.1/bin/python3 is 3.97.1" in message
    assert "command not found" not in message  # no shim of 3.98/3.99 exists here
    env = _pythons(tmp_path / "b", ("3.98.1",))
    (tmp_path / "b" / "pyenv" / "versions" / "3.98.1" / "bin" / "python3").unlink()
    with pytest.raises(InstallError, match=r"python3\.98 does not run \(exit 127: pyenv"):
        find_python(None, env, allowed=("3.98",))


@pytest.mark.rule("LIVE-INSTALL-001")
def test_find_python_looks_in_uv_managed_installs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    uv = home / ".local" / "share" / "uv" / "python" / "cpython-3.99.0-linux-x86_64-gnu"
    _exe(uv / "bin" / "python3", FAKE_PYTHON.format(version="3.99.0"))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    assert find_python(None, env, allowed=("3.99",)) == str(uv / "bin" / "python3")


@pytest.mark.rule("LIVE-INSTALL-001")
def test_a_pypi_install_uses_a_listed_python_and_rebuilds_a_venv_of_another(
    tmp_path: Path,
) -> None:
    env = _pythons(tmp_path, ("3.98.0", "3.99.1"))
    cache = tmp_path / "cache"
    prefix = cache / "venv" / "x-cli==1.0.0"
    # a venv left by an install with a Python the CLI does not run on
    _exe(prefix / "bin" / "x", "#!/bin/sh\n")
    (prefix / "pyvenv.cfg").write_text("home = /old\nversion = 3.98.0\n")
    (prefix / MARKER).write_text("{}")
    recipe = parse_recipe(_pypi(pythons=["3.99"]), path="x.json")
    assert installed_bin(recipe, cache) is None  # not usable as it is
    lines: list[str] = []
    outcome = install_recipe(recipe, cache, out=lines.append, env=env)
    assert outcome.action == "installed"
    assert any("built with Python 3.98.0, but the recipe needs Python 3.99" in m for m in lines)
    assert (tmp_path / "py.log").read_text().split() == [
        str(tmp_path / "pyenv" / "versions" / "3.99.1" / "bin" / "python3")
    ]
    marker = read_marker(prefix)
    assert marker is not None and str(marker["python"]).endswith("3.99.1/bin/python3")
    assert installed_bin(recipe, cache) == prefix / "bin" / "x"
    # no listed Python at all: refused before anything is made
    other = parse_recipe({**_pypi(pythons=["3.97"]), "agent": "y"}, path="y.json")
    with pytest.raises(InstallError, match=r"needs Python 3\.97"):
        install_recipe(other, tmp_path / "cache2", out=lambda _m: None, env=env)
    assert not (tmp_path / "cache2" / "venv" / "x-cli==1.0.0" / "pyvenv.cfg").exists()


@pytest.mark.rule("LIVE-INSTALL-001")
def test_a_bin_path_glob_finds_a_wheels_bundled_executable(tmp_path: Path) -> None:
    # codebuddy-agent-sdk and grok-cli-bin bundle their CLI under site-packages, whose
    # lib/python3.X part is the venv's own
    env = _pythons(tmp_path, ("3.99.1",))
    inside = '"$(dirname "$0")/../lib/python3.99/site-packages/x/bin'
    pip = (
        FAKE_PYTHON.format(version="3.99.1")
        .replace('mkdir -p "$(dirname "$0")";', f'mkdir -p {inside}";')
        .replace('"$(dirname "$0")/x"', f'{inside}/x"')
    )
    _exe(tmp_path / "pyenv" / "versions" / "3.99.1" / "bin" / "python3", pip)
    raw = _pypi(pythons=["3.99"], bin_path="lib/python3*/site-packages/x/bin/x")
    recipe = parse_recipe(raw, path="x.json")
    outcome = install_recipe(recipe, tmp_path / "cache", out=lambda _m: None, env=env)
    want = tmp_path / "cache" / "venv" / "x-cli==1.0.0" / "lib/python3.99/site-packages/x/bin/x"
    assert outcome.bin_path == str(want) and want.is_file()
    assert installed_bin(recipe, tmp_path / "cache") == want
