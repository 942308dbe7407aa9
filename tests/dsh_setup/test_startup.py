"""The profile install never happens implicitly (seed 001 §14: "never triggered silently").

Rule: DSHSETUP-STARTUP-001. With a fake ``dsh`` whose profile is missing (the state in which
an eager installer would act) reachable through both ``DSH_BIN`` and ``PATH``, importing the
harness, ``harness agents`` and ``harness detect`` must never run ``dsh plugin ... add``. The
detect case also proves the shim is wired: detection does call ``dsh --version`` and the probe.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.dsh_setup.conftest import DshWorld

pytestmark = pytest.mark.posix

_IMPORTS = (
    "import harness, harness.cli, harness.commands, harness.runtime.detect, harness.defs.registry, "
    "harness.runtime.dsh_setup, harness.commands.dsh, harness.profile_bundle"
)


def _env(world: DshWorld) -> dict[str, str]:
    env = world.env(FAKE_DSH_PROFILE="missing")
    env["PATH"] = os.pathsep.join([str(world.bin), env.get("PATH", "")])
    return env


def _run(world: DshWorld, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        env=_env(world),
        cwd=str(world.root),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.rule("DSHSETUP-STARTUP-001")
def test_importing_the_harness_calls_no_dsh(world: DshWorld) -> None:
    done = _run(world, ["-c", _IMPORTS])
    assert done.returncode == 0, done.stderr
    assert world.calls() == []
    assert not world.marker.exists()


@pytest.mark.rule("DSHSETUP-STARTUP-001")
def test_listing_agents_calls_no_dsh(world: DshWorld) -> None:
    done = _run(world, ["-m", "harness.cli", "agents", "--json"])
    assert done.returncode == 0, done.stderr
    assert "deepseek-harness" in done.stdout
    assert world.calls() == []
    assert not world.marker.exists()


@pytest.mark.rule("DSHSETUP-STARTUP-001")
def test_detection_probes_but_never_installs(world: DshWorld) -> None:
    done = _run(world, ["-m", "harness.cli", "detect", "--json"])
    assert done.returncode == 0, done.stderr
    results = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert results["deepseek-harness"]["available"] is False  # the profile is missing
    calls = world.calls()
    assert ["--version"] in calls
    assert ["--profile", "open-design", "--probe"] in calls
    assert [c for c in calls if "plugin" in c or "add" in c] == []
    assert world.plugin_adds() == []
    assert not world.marker.exists()
