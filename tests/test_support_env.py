"""The env a test gives a CLI (:func:`tests.support.env.inherited_env`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.env import inherited_env


def test_steering_names_are_dropped_and_home_is_private(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_CLI_SCENARIO", "crash")
    monkeypatch.setenv("fake_cli_lower", "x")
    monkeypatch.setenv("CLAUDE_BIN", "/elsewhere/claude")
    monkeypatch.setenv("PYTHONPATH", "/another/checkout")
    monkeypatch.setenv("KEEP_ME", "1")
    env = inherited_env(("FAKE_CLI_",), tmp_path, drop={"claude_bin"})
    assert not {"FAKE_CLI_SCENARIO", "fake_cli_lower", "CLAUDE_BIN", "PYTHONPATH"} & set(env)
    assert env["KEEP_ME"] == "1"
    assert env["HOME"] == env["USERPROFILE"] == str(tmp_path)
