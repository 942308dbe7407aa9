"""The pinned open-design bundle under the real ``dsh`` (PyPI deepseek-harness-runtime-bin).

Runs when the recipe's runtime is installed in the live cache (``harness live install
deepseek-harness``) and skips otherwise. The world is the recipe's own (temporary HOME and
DSH_HOME, the bundle laid out as a profile, the provider pointed at the scripted model
server on loopback, telemetry off). What the recipe's scenarios cannot show is proved here:
the probe, a cancel of a running request, a missing resume target, and ``harness dsh setup``
installing the bundle for real through ``dsh plugin``, which forwards to pnpm (the recipe's
pinned tool, installed beside dsh by ``harness live install deepseek-harness``).

Rules: DSHBUNDLE-PLUGIN-001, DSHBUNDLE-CANCEL-001, DSHBUNDLE-RESUME-001, DSHSETUP-PINNED-001.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.live.home import LiveDirs, build_env, make_dirs, placeholder_values, write_home_files
from harness.live.install import default_cache_dir, installed_bin, installed_tool
from harness.live.recipes import Recipe, recipe_for
from harness.modelserver import ModelServer
from harness.protocols.dsh_frames import parse_runtime_frame

pytestmark = [pytest.mark.live, pytest.mark.posix, pytest.mark.timeout(300)]


@pytest.fixture
def recipe() -> Recipe:
    found = recipe_for("deepseek-harness")
    assert found is not None and found.package is not None
    return found


@pytest.fixture
def dsh(recipe: Recipe) -> str:
    path = installed_bin(recipe, default_cache_dir())
    if path is None:
        assert recipe.package is not None
        pytest.skip(
            f"PyPI {recipe.package.key} is not installed under {default_cache_dir()} "
            "(harness live install deepseek-harness)"
        )
    return str(path)


class World:
    def __init__(self, recipe: Recipe, dirs: LiveDirs, server: ModelServer) -> None:
        values = placeholder_values(recipe, dirs, base_url=server.url, port=server.port)
        write_home_files(recipe, dirs, values)
        self.dirs = dirs
        self.env = build_env(recipe, dirs, values)


@pytest.fixture
def world(recipe: Recipe, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[World]:
    scenario = getattr(request, "param", "text")
    with ModelServer(scenario) as server:
        yield World(recipe, make_dirs(tmp_path), server)


def _execute(world: World, **fields: Any) -> str:
    command = {
        "v": 1,
        "type": "execute",
        "request_id": "live-1",
        "cwd": str(world.dirs.cwd),
        "prompt": "Say hello please.",
        "mcp_servers": [],
        **fields,
    }
    return json.dumps(command) + "\n"


def _frames(stdout: str) -> list[dict[str, Any]]:
    frames = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    for frame in frames:
        parse_runtime_frame(frame)
    return frames


@pytest.mark.rule("DSHBUNDLE-PLUGIN-001")
def test_the_real_dsh_boots_the_bundle_and_answers_the_probe(dsh: str, world: World) -> None:
    proc = subprocess.run(
        [dsh, "--profile", "open-design", "--probe"],
        env=world.env,
        cwd=world.dirs.cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    (probe,) = _frames(proc.stdout)
    assert probe["type"] == "probe" and probe["runtime"] == "open-design"
    assert probe["plugin_version"] == "0.1.0" and all(probe["capabilities"].values())


@pytest.mark.rule("DSHBUNDLE-RESUME-001")
def test_a_missing_resume_target_fails_under_the_real_dsh(dsh: str, world: World) -> None:
    proc = subprocess.run(
        [dsh, "--profile", "open-design", "--stdio"],
        input=_execute(world, resume_session_id="session-never-saved"),
        env=world.env,
        cwd=world.dirs.cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    frames = _frames(proc.stdout)
    assert [f["type"] for f in frames] == ["ready", "result"], proc.stderr
    result = frames[-1]
    assert result["status"] == "failed" and result["resume_rejected"] is True
    assert result["session_id"] == "session-never-saved"
    assert result["error"]["code"] == "SESSION_NOT_FOUND"
    assert proc.returncode == 1
    # no session was created in its place
    assert not list((world.dirs.home / ".dsh").glob("sessions/**/*.jsonl"))


@pytest.mark.rule("DSHBUNDLE-CANCEL-001")
@pytest.mark.parametrize("world", ["hang"], indirect=True)
def test_a_cancel_ends_a_running_request_under_the_real_dsh(dsh: str, world: World) -> None:
    proc = subprocess.Popen(
        [dsh, "--profile", "open-design", "--stdio"],
        env=world.env,
        cwd=world.dirs.cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert json.loads(proc.stdout.readline())["type"] == "ready"
        proc.stdin.write(_execute(world))
        proc.stdin.flush()
        session = json.loads(proc.stdout.readline())
        assert session["type"] == "session" and session["resumed"] is False
        # the model call hangs: only the cancel can end the run
        proc.stdin.write(json.dumps({"v": 1, "type": "cancel", "request_id": "live-1"}) + "\n")
        proc.stdin.flush()
        rest = _frames(proc.stdout.read())
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    assert rest[-1]["type"] == "result" and rest[-1]["status"] == "cancelled"
    assert rest[-1]["session_id"] == session["session_id"]
    assert [f["type"] for f in rest].count("result") == 1


@pytest.mark.rule("DSHSETUP-PINNED-001")
def test_harness_dsh_setup_installs_the_bundle_into_the_real_dsh(
    dsh: str, recipe: Recipe, tmp_path: Path
) -> None:
    pnpm = installed_tool(recipe, "pnpm", default_cache_dir())
    if pnpm is None:
        pytest.skip(
            f"the recipe's pnpm is not installed under {default_cache_dir()} (`dsh plugin` "
            "forwards to pnpm; harness live install deepseek-harness)"
        )
    dirs = make_dirs(tmp_path)
    env = build_env(recipe, dirs, {"home": str(dirs.home), "base_url": "", "fake_key": "x"})
    env = {k: v for k, v in env.items() if not k.startswith("DEEPSEEK_")}
    env["DSH_HOME"] = str(dirs.home / "dsh-home")
    env["DSH_BIN"] = dsh
    env["PATH"] = f"{Path(pnpm).parent}:{env.get('PATH', '')}"
    # The bundle is a local tarball without dependencies: pnpm needs no registry, and a dead
    # loopback one proves it (no network but loopback).
    env["npm_config_registry"] = "http://127.0.0.1:9/"
    env["npm_config_update_notifier"] = "false"
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "dsh", "setup", "--yes", "--json"],
        env=env,
        cwd=dirs.cwd,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["status"] == "ready" and report["installed"] is True
    assert report["plugin_version"] == "0.1.0"
    profile = json.loads(
        (dirs.home / "dsh-home/profiles/open-design/package.json").read_text("utf-8")
    )
    assert profile["dsh"]["profile"]["bundles"] == [
        "@deepseek-ai/dsh-base",
        "@open-design/dsh-runtime",
    ]
