"""USERFILE-CONFORM-001: ``harness conform`` leaves nothing new in the working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import configuration

from conformance.checks.defs import _scratch_hypothesis_home

RULE = "USERFILE-CONFORM-001"
#: the property check that runs hypothesis, and where the reports go
_ONE_RULE = ("--rule", "ARGV-PURE-001", "--out")


def _conform(cwd: Path, out: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", "conform", "--agent", "claude", *_ONE_RULE, str(out)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.rule(RULE)
def test_the_property_checks_leave_no_cache_in_the_working_directory(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    proc = _conform(work, tmp_path / "out", env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "ARGV-PURE-001" in (tmp_path / "out" / "conform.json").read_text(encoding="utf-8")
    assert sorted(p.name for p in work.iterdir()) == []


@pytest.mark.rule(RULE)
def test_the_home_hypothesis_had_is_restored(tmp_path: Path) -> None:
    chosen = tmp_path / "chosen"
    configuration.set_hypothesis_home_dir(chosen)
    try:
        with _scratch_hypothesis_home():
            inside = configuration.storage_directory("x", intent_to_write=False).home_directory
        after = configuration.storage_directory("x", intent_to_write=False).home_directory
    finally:
        configuration.set_hypothesis_home_dir(None)
    assert inside != chosen and not inside.exists()
    assert after == chosen


@pytest.mark.rule(RULE)
def test_a_home_the_user_chose_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = tmp_path / "chosen"
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(chosen))
    configuration.set_hypothesis_home_dir(chosen)
    try:
        with _scratch_hypothesis_home():
            inside = configuration.storage_directory("x", intent_to_write=False).home_directory
    finally:
        configuration.set_hypothesis_home_dir(None)
    assert inside == chosen
