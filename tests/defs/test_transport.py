"""Transport selection (seed 000 §5.3): codex app-server by default, exec-json on request."""

from __future__ import annotations

import pytest

from harness.defs.codex import AGENT_DEF as CODEX
from harness.defs.transport import select_transport, transport_names
from harness.defs.types import BuildOptions, PromptDelivery, RuntimeContext
from harness.errors import AgentDefError


@pytest.mark.rule("DEF-TRANSPORT-001")
def test_codex_runs_app_server_by_default() -> None:
    chosen = select_transport(CODEX, {})
    assert chosen.stream_format == "codex-app-server"
    assert chosen.prompt_delivery is PromptDelivery.PROTOCOL
    assert chosen.build_args("p", [], [], BuildOptions(), RuntimeContext()) == ["app-server"]
    assert chosen.transport_name == "app-server"


@pytest.mark.rule("DEF-TRANSPORT-001")
def test_env_selects_the_legacy_exec_json_transport() -> None:
    chosen = select_transport(CODEX, {"OD_CODEX_TRANSPORT": "exec-json"})
    assert chosen is CODEX
    assert (chosen.stream_format, chosen.event_parser) == ("json-event-stream", "codex")
    assert chosen.build_args("p", [], [], BuildOptions(), RuntimeContext())[:2] == [
        "exec",
        "--json",
    ]


@pytest.mark.rule("DEF-TRANSPORT-001")
def test_explicit_name_beats_env_and_unknown_names_are_typed_errors() -> None:
    assert select_transport(
        CODEX, {"OD_CODEX_TRANSPORT": "exec-json"}, "app-server"
    ).stream_format == ("codex-app-server")
    assert transport_names(CODEX) == ("exec-json", "app-server")
    with pytest.raises(AgentDefError, match=r"unknown transport 'ws'.*exec-json.*app-server"):
        select_transport(CODEX, {"OD_CODEX_TRANSPORT": "ws"})
