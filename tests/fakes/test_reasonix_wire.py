"""The reasonix fake speaks what reasonix 1.38.11 printed against the scripted model server
(recordings/real/reasonix/*.jsonl), where it differs from the other ACP agents."""

from __future__ import annotations

import pytest

from tests.fakes.conftest import FakeCli
from tests.fakes.test_acp import RawClient


@pytest.mark.rule("FAKE-ACP-006")
def test_reasonix_shell_call_carries_only_the_command(fake: FakeCli) -> None:
    assert fake.run("reasonix", ["--version"]).out == "reasonix v1.38.11\n"
    client = RawClient(fake, "reasonix", scenario="shell")
    session_id = client.handshake()
    client.request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    )
    call = client.until(
        lambda f: (
            f.get("method") == "session/update"
            and f["params"]["update"]["sessionUpdate"] == "tool_call"
        )
    )
    # recordings/real/reasonix/shell.jsonl: rawInput {"command": "echo hi"}, no cwd
    assert call["params"]["update"]["rawInput"] == {"command": "echo hi"}
    client.close()
