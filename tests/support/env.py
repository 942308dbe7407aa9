"""The environment a test gives a fake or real CLI: the runner's own, minus what steers one."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path

import pytest

from harness.defs.registry import BUILTIN_DEFS

__all__ = ["inherited_env", "isolated_project"]


def inherited_env(
    scrub_prefixes: Sequence[str], home: Path, *, drop: Collection[str] = ()
) -> dict[str, str]:
    """``os.environ`` without names starting with ``scrub_prefixes``, named in ``drop`` (any
    case) or ``PYTHONPATH``; ``HOME`` and ``USERPROFILE`` point at ``home``.

    A developer's shell must not steer a test run (a ``FAKE_CLI_SCENARIO``, an API key,
    another checkout on ``PYTHONPATH``), nor the real home directory.
    """
    prefixes = tuple(p.upper() for p in scrub_prefixes)
    dropped = {name.upper() for name in drop} | {"PYTHONPATH"}
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.upper().startswith(prefixes) and k.upper() not in dropped
    }
    env.update(HOME=str(home), USERPROFILE=str(home))
    return env


def isolated_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project dir for an in-process ``harness`` command: HOME under ``tmp_path``, and no
    built-in's executable override nor ``FAKE_CLI_SCENARIO`` inherited from the shell."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for defn in BUILTIN_DEFS:
        if defn.bin_env_key:
            monkeypatch.delenv(defn.bin_env_key, raising=False)
    monkeypatch.delenv("FAKE_CLI_SCENARIO", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    return project
