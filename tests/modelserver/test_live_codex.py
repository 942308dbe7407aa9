"""A real codex CLI against the scripted server (MODEL-LIVE-001; marked ``live``).

Runs ``codex exec --json`` 0.171.0 with the setup real-clis.md records (a temporary
HOME with ``~/.codex/config.toml`` naming a ``mock`` provider on 127.0.0.1,
``wire_api = "responses"``, plugins and analytics off, a fake key in ``MOCK_API_KEY``,
TMPDIR in the test's tmp dir). Skips unless that codex is installed: set
``HARNESS_LIVE_CODEX`` to its path, or have it at ``/tmp/codex-cli`` (npm ``--prefix``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.modelserver import ModelServer

PINNED = "0.171.0"
CANDIDATES = [
    os.environ.get("HARNESS_LIVE_CODEX", ""),
    "/tmp/codex-cli/node_modules/.bin/codex",
]


def _codex() -> str | None:
    for candidate in CANDIDATES:
        if not candidate or not os.access(candidate, os.X_OK):
            continue
        try:
            out = subprocess.run(
                [candidate, "--version"], capture_output=True, timeout=30, check=False
            ).stdout.decode()
        except (OSError, subprocess.TimeoutExpired):
            continue
        if PINNED in out:
            return candidate
    return None


CODEX = _codex()
pytestmark = [
    pytest.mark.live,
    pytest.mark.posix,
    pytest.mark.skipif(CODEX is None, reason=f"codex {PINNED} is not installed"),
]


def _run(server: ModelServer, root: Path, prompt: str, *extra: str) -> list[dict[str, Any]]:
    assert CODEX is not None
    home, cwd, tmp = root / "home", root / "project", root / "tmp"
    for d in (home / ".codex", cwd, tmp):
        d.mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "config.toml").write_text(
        'model_provider = "mock"\n'
        "check_for_update_on_startup = false\n"
        "[model_providers.mock]\n"
        'name = "Mock"\n'
        f'base_url = "{server.base_url("/v1")}"\n'
        'env_key = "MOCK_API_KEY"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
        "[analytics]\nenabled = false\n"
        "[features]\nplugins = false\n"
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "TMPDIR": str(tmp),
        "MOCK_API_KEY": "fake-key-not-real",
    }
    proc = subprocess.run(
        [CODEX, "exec", "--json", "--skip-git-repo-check", "-m", "gpt-5.5", *extra],
        input=prompt.encode(),
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return [json.loads(line) for line in proc.stdout.decode().splitlines() if line.startswith("{")]


@pytest.mark.rule("MODEL-LIVE-001")
def test_codex_text_scenario(tmp_path: Path) -> None:
    with ModelServer("text", log_path=tmp_path / "requests.jsonl") as server:
        events = _run(server, tmp_path, "Say hello please.")
    messages = [
        e["item"]["text"]
        for e in events
        if e.get("type") == "item.completed" and e["item"]["type"] == "agent_message"
    ]
    assert messages == ["Hello from the fake model. PONG."]
    done = next(e for e in events if e.get("type") == "turn.completed")
    assert (done["usage"]["input_tokens"], done["usage"]["output_tokens"]) == (10, 8)
    assert [(r.method, r.path, r.api) for r in server.requests] == [
        ("POST", "/v1/responses", "openai-responses")
    ]
    assert "apply_patch" in server.requests[0].tool_names


@pytest.mark.rule("MODEL-LIVE-001", "MODEL-RESP-002")
def test_codex_writes_the_file_through_apply_patch(tmp_path: Path) -> None:
    with ModelServer("happy") as server:
        events = _run(server, tmp_path, "Create hello.html please.", "--sandbox", "workspace-write")
    written = tmp_path / "project" / "hello.html"
    assert written.read_text() == "<!doctype html>\n<h1>Hello</h1>\n"
    kinds = [e["item"]["type"] for e in events if e.get("type") == "item.completed"]
    assert kinds == ["reasoning", "agent_message", "file_change", "agent_message"]
    assert [r.reply_kind for r in server.requests] == ["tool_call", "text"]
    assert server.requests[1].message_roles[-1] == "custom_tool_call_output"
