"""The temporary world of a live run (LIVE-ISOLATION-001)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.live.home import build_env, make_dirs, placeholder_values, write_home_files
from harness.live.recipes import recipe_for


@pytest.mark.rule("LIVE-ISOLATION-001")
def test_env_and_files_come_from_the_recipe_only(tmp_path: Path) -> None:
    recipe = recipe_for("pi")
    assert recipe is not None
    dirs = make_dirs(tmp_path)
    values = placeholder_values(recipe, dirs, base_url="http://127.0.0.1:4567", port=4567)
    written = write_home_files(recipe, dirs, values)
    models = json.loads((dirs.home / ".pi/agent/models.json").read_text())
    provider = models["providers"]["mock"]
    assert written == [dirs.home / ".pi/agent/models.json", dirs.home / ".pi/agent/settings.json"]
    settings = json.loads((dirs.home / ".pi/agent/settings.json").read_text())
    assert settings == {"retry": {"enabled": False}}  # no 2+4+8 s auto-retry on a scripted 500
    assert provider["baseUrl"] == "http://127.0.0.1:4567/v1"
    assert provider["apiKey"] == recipe.fake_key and provider["models"][0]["id"] == "mock-model"
    base = {
        "PATH": "/usr/bin",
        "ANTHROPIC_API_KEY": "sk-real",
        "HTTPS_PROXY": "http://p:1",
        "OPENAI_API_KEY": "sk-real2",
        "HOME": "/root",
        "LANG": "C.UTF-8",
    }
    env = build_env(recipe, dirs, values, base_env=base)
    assert env["HOME"] == str(dirs.home) and env["TMPDIR"] == str(dirs.tmp)
    assert env["PWD"] == str(dirs.cwd) and env["PI_OFFLINE"] == "1" and env["LANG"] == "C.UTF-8"
    assert not {"ANTHROPIC_API_KEY", "HTTPS_PROXY", "OPENAI_API_KEY"} & set(env)
    assert "sk-real" not in json.dumps(env)
    dirs.cleanup()
    assert not dirs.root.exists()


@pytest.mark.rule("LIVE-ISOLATION-001")
def test_codex_config_points_at_the_server(tmp_path: Path) -> None:
    recipe = recipe_for("codex")
    assert recipe is not None
    dirs = make_dirs(tmp_path)
    values = placeholder_values(recipe, dirs, base_url="http://127.0.0.1:9/", port=9)
    write_home_files(recipe, dirs, values)
    text = (dirs.home / ".codex/config.toml").read_text()
    assert 'base_url = "http://127.0.0.1:9/v1"' in text and 'model = "gpt-5.5"' in text
    env = build_env(recipe, dirs, values, base_env={"PATH": "/bin"})
    assert env["CODEX_HOME"] == f"{dirs.home}/.codex" and env["MOCK_API_KEY"] == recipe.fake_key
