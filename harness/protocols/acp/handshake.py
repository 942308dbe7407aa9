"""The handshake: ``initialize``, ``session/new`` or ``session/load``, and the model.

ref §2.6 steps 1-3. Which result moves the handshake on is the session's table of
result handlers; each handler here reads one answer, records what it learned in the run
context and writes the next request, until the turn writes the prompt.

Design: docs/design/protocols.md#harness.protocols.acp
"""

from __future__ import annotations

from typing import Any

from harness.events import Status
from harness.protocols.acp.config import PROTOCOL_VERSION
from harness.protocols.acp.context import RunContext, bounded
from harness.protocols.acp.continuation import Continuation
from harness.protocols.acp.mcp import servers_for_version
from harness.protocols.acp.turn import Turn
from harness.protocols.base import Actions
from harness.protocols.jsonrpc import JsonItem

__all__ = ["MODEL_CONFIG_IDS", "Handshake"]

#: ref §2.6 step 3: config option ids that select the model (case-insensitive).
MODEL_CONFIG_IDS = frozenset({"model", "models", "modelid", "modelids"})


class Handshake:
    """The handshake of one run, up to the prompt."""

    def __init__(self, run: RunContext, turn: Turn, continuation: Continuation) -> None:
        self._run = run
        self._turn = turn
        self._continuation = continuation
        #: The config option that selects the model, when the agent offers one.
        self._model_config_id: str | None = None

    def initialize(self, actions: Actions) -> None:
        """Write ``initialize`` (ref §2.6 step 1; rule ACP-INIT-001)."""
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": {
                "fs": {"readTextFile": False, "writeTextFile": False},
                "terminal": False,
            },
            "clientInfo": self._run.config.client_info,
        }
        self._run.send_request(actions, "initialize", params)

    # -- results ---------------------------------------------------------------------------

    def on_initialize(self, result: Any, item: JsonItem, actions: Actions) -> None:
        run = self._run
        if not isinstance(result, dict):
            self._invalid_result(actions, "initialize", "result is not an object", item)
            return
        info = result.get("agentInfo")
        run.agent_info = dict(info) if isinstance(info, dict) else None
        caps = result.get("agentCapabilities")
        run.agent_capabilities = dict(caps) if isinstance(caps, dict) else {}
        servers = self._servers_for_agent(actions)
        if run.continuing is not None:
            self._continuation.load(actions, servers)
        else:
            self._open_session(actions, servers)

    def on_session(self, result: Any, item: JsonItem, actions: Actions) -> None:
        """The answer to ``session/new`` or ``session/load``: adopt the ids, then the model."""
        run = self._run
        resumed = self._resumed()
        opened = self._opened(result, item, actions, resumed)
        if opened is None:
            return
        session_id, answer = opened
        run.session_id = session_id
        durable = answer.get("openCodeSessionId")
        # A load keeps the handle it loaded unless the agent names the durable one itself.
        handle = resumed or session_id
        run.durable_session_id = durable if isinstance(durable, str) and durable else handle
        option = _model_option(answer.get("configOptions"))
        self._model_config_id = option["id"] if option is not None else None
        current = _current_model(answer, option)
        if current is not None:
            actions.events.append(Status(label="model", model=current))
        self._select_model(actions)

    def on_model(self, result: Any, item: JsonItem, actions: Actions) -> None:
        run = self._run
        assert run.request is not None and run.request.model is not None
        actions.events.append(Status(label="model", model=run.request.model.strip()))
        self._turn.send_prompt(actions)

    def on_default_model(self, actions: Actions) -> None:
        """ref §2.6: a recoverable model error -> status{model:'default'}, go on to the
        prompt (rule ACP-MODEL-002)."""
        actions.events.append(Status(label="model", model="default"))
        self._turn.send_prompt(actions)

    # -- steps -----------------------------------------------------------------------------

    def _open_session(self, actions: Actions, servers: list[dict[str, Any]]) -> None:
        run = self._run
        assert run.request is not None
        resume = run.request.resume_session_id
        if not resume:
            # ref §2.6 step 2 (rule ACP-SESSION-001).
            params = {"cwd": run.request.cwd, "mcpServers": servers}
            run.send_request(actions, "session/new", params)
            return
        if run.agent_capabilities.get("loadSession") is not True:
            # wire §A.1.2 capability gating: session/load only with
            # agentCapabilities.loadSession. Never start a fresh session instead
            # (rule ACP-SESSION-003).
            run.fail(
                actions,
                code="ACP_LOAD_UNSUPPORTED",
                message=f"cannot resume ACP session {resume!r}: the agent does not advertise "
                "agentCapabilities.loadSession",
                rule="ACP-SESSION-003",
            )
            return
        # ref §2.6 step 2 (buildAcpSessionLoadParams): the same mcpServers as
        # session/new, because strict agents reject a bare load (ACP-SESSION-002).
        params = {"sessionId": resume, "cwd": run.request.cwd, "mcpServers": servers}
        run.send_request(actions, "session/load", params)

    def _resumed(self) -> str | None:
        """The session handle this run loads (``None`` or empty: a new session)."""
        run = self._run
        assert run.request is not None
        if run.continuing is not None:
            return run.continuing.durable_session_id
        return run.request.resume_session_id

    def _opened(
        self, result: Any, item: JsonItem, actions: Actions, resumed: str | None
    ) -> tuple[str, dict[str, Any]] | None:
        """The session id the answer gives and the answer, or ``None`` when the run failed."""
        if resumed:
            answer = result if isinstance(result, dict) else {}
            # LoadSessionResponse carries no sessionId in the schema; an agent whose ACP
            # session id differs from the durable handle it loads (Vela: a per-process ACP
            # id over an OpenCode session) names the id its updates will carry.
            named = answer.get("sessionId")
            session_id = named if isinstance(named, str) and named else resumed
            if self._run.continuing is not None and not self._continuation.same_history(
                answer, actions
            ):
                return None
            return session_id, answer
        if not isinstance(result, dict):
            self._invalid_result(actions, "session/new", "result is not an object", item)
            return None
        created = result.get("sessionId")
        if not isinstance(created, str) or not created:
            # ref §2.6 step 3: "No sessionId -> fail invalid session/new response".
            self._invalid_result(actions, "session/new", "no sessionId", item)
            return None
        return created, result

    def _select_model(self, actions: Actions) -> None:
        """ref §2.6 step 3 (rule ACP-MODEL-001): the request's model, else the prompt."""
        run = self._run
        assert run.request is not None and run.session_id is not None
        model = (run.request.model or "").strip()
        if not model or model == "default":
            self._turn.send_prompt(actions)
        elif self._model_config_id is not None:
            option = self._model_config_id
            params = {"sessionId": run.session_id, "configId": option, "value": model}
            run.send_request(actions, "session/set_config_option", params)
        else:
            params = {"sessionId": run.session_id, "modelId": model}
            run.send_request(actions, "session/set_model", params)

    def _servers_for_agent(self, actions: Actions) -> list[dict[str, Any]]:
        """ref §2.6 step 2: withhold stdio servers from agents >= the def's version
        (rule ACP-MCP-002)."""
        run = self._run
        floor = run.config.stdio_mcp_removed_in_version
        version = (run.agent_info or {}).get("version")
        kept = servers_for_version(run.mcp_servers, version, floor)
        withheld = len(run.mcp_servers) - len(kept)
        if withheld:
            run.core.count("withheld_mcp_servers", withheld)
            actions.events.append(
                Status(
                    label="mcp_withheld",
                    detail=f"{withheld} stdio MCP server(s) withheld: agent {version} >= {floor}",
                )
            )
        return kept

    def _invalid_result(self, actions: Actions, method: str, why: str, item: JsonItem) -> None:
        # ref §2.6 step 3: "fail invalid session/new response: <raw line>" (ACP-RESULT-001).
        self._run.fail(
            actions,
            code="ACP_INVALID_RESPONSE",
            message=f"invalid {method} response: {why}",
            rule="ACP-RESULT-001",
            line=bounded(item.text, 2000),
        )


def _model_option(options: Any) -> dict[str, Any] | None:
    """The config option that selects the model (ref §2.6 step 3)."""
    if not isinstance(options, list):
        return None
    for option in options:
        if (
            isinstance(option, dict)
            and isinstance(option.get("id"), str)
            and option["id"].lower() in MODEL_CONFIG_IDS
        ):
            return option
    return None


def _current_model(result: dict[str, Any], option: dict[str, Any] | None) -> str | None:
    # ref §2.6 step 3: "current model from models.currentModelId / configOptions".
    models = result.get("models")
    if isinstance(models, dict) and isinstance(models.get("currentModelId"), str):
        return str(models["currentModelId"])
    if option is not None and isinstance(option.get("currentValue"), str):
        return str(option["currentValue"])
    return None
