"""Sessions an agent process opens: ``session/new``, ``session/load`` and the model.

wire §A.1.2; ref §2.6 steps 2-3 and "MCP env format"; amr's two ids (seed 000 "AMR
compaction continuation"). A load replays the saved history as ``session/update``
notifications before it answers.

Design: docs/design/fakes.md#fake_clis.acp.server
"""

from __future__ import annotations

import os

from fake_clis import ids
from fake_clis.acp.agent import at_least
from fake_clis.acp.process import Handler
from fake_clis.acp.wire import (
    AUTH_REQUIRED,
    INVALID_PARAMS,
    INVALID_REQUEST,
    NOT_FOUND,
    SESSION_GONE,
    Session,
    chunk_update,
    is_durable_id,
)

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["Sessions"]


class Sessions(Handler):
    """Opening sessions and choosing their model."""

    def on_session_new(self, request_id: Any, params: dict[str, Any]) -> None:
        self._record_session_params("session/new", params)
        if not self._check_session_params(request_id, params):
            return
        if self.agent.native_continue:
            self._native_session_new(request_id, params)
            return
        session = Session(
            self.process.new_session_id(), params["cwd"], self.process.default_model()
        )
        self.sessions[session.session_id] = session
        self.run.record["session_id"] = session.session_id
        self.run.record["resumed"] = False
        self.out.result(request_id, {"sessionId": session.session_id, **self._model_state(session)})

    def _native_session_new(self, request_id: Any, params: dict[str, Any]) -> None:
        """amr: a per-process ACP id and the durable ``openCodeSessionId`` (saved at once,
        with the ledger rows of this process so far)."""
        session = Session(
            _acp_session_id(),
            params["cwd"],
            self.process.default_model(),
            durable_id=self.process.new_session_id(),
        )
        self.sessions[session.session_id] = session
        self.store.write_doc(session.durable_id, lambda doc: None, create=True)
        self.store.flush_ledger(session.durable_id)
        self.run.record.update(
            session_id=session.session_id, durable_session_id=session.durable_id, resumed=False
        )
        self.out.result(
            request_id,
            {
                "sessionId": session.session_id,
                "openCodeSessionId": session.durable_id,
                **self._model_state(session),
            },
        )

    def on_session_load(self, request_id: Any, params: dict[str, Any]) -> None:
        self._record_session_params("session/load", params)
        session_id = params.get("sessionId")
        if not isinstance(session_id, str) or not session_id:
            self.out.error(request_id, INVALID_PARAMS, "Invalid params: sessionId is required")
            return
        if not self._check_session_params(request_id, params):
            return
        if self.agent.native_continue:
            self._native_session_load(request_id, params, session_id)
            return
        saved = self.run.load_session(session_id)
        if saved is None:
            # wire §A.1.3 ErrorCode -32002 "Resource not found".
            self.out.error(
                request_id, NOT_FOUND, "Resource not found", {"uri": f"session:{session_id}"}
            )
            return
        turns = [t for t in saved.get("turns", []) if isinstance(t, dict)]
        last = turns[-1].get("model") if turns else None
        model = last if isinstance(last, str) else None
        session = Session(session_id, params["cwd"], model or self.process.default_model(), turns)
        self.sessions[session_id] = session
        self.run.record.update(session_id=session_id, resumed=True, prior_turns=len(turns))
        # wire §A.1.2: the history is replayed as session/update before the response.
        for turn in turns:
            self._replay(session_id, turn)
        self.out.result(request_id, self._model_state(session))

    def _native_session_load(self, request_id: Any, params: dict[str, Any], durable: str) -> None:
        """amr: load by the durable id, replay under a new ACP id, answer both ids.

        A pending continuation's ``history`` option decides what this load finds: ``missing``
        fails like a session that is gone, ``changed`` answers another ``openCodeSessionId``
        (and the continuation is then refused: the persisted history is not the cursor's).
        """
        saved = self.run.load_session(durable) if is_durable_id(durable) else None
        pending = saved.get("continuation") if saved is not None else None
        options = pending.get("options") if isinstance(pending, dict) else None
        history = options.get("history", "kept") if isinstance(options, dict) else "kept"
        if saved is None or history == "missing":
            # Upstream's words for a load of a session that is gone.
            self.out.error(
                request_id,
                INVALID_REQUEST,
                SESSION_GONE,
                {"kind": "resume_failed", "retryable": True},
            )
            return
        turns = [t for t in saved.get("turns", []) if isinstance(t, dict)]
        last = turns[-1].get("model") if turns else None
        model = last if isinstance(last, str) else self.process.default_model()
        session = Session(
            _acp_session_id(),
            params["cwd"],
            model,
            turns,
            durable_id=durable,
            loaded=True,
            history_changed=history == "changed",
        )
        self.sessions[session.session_id] = session
        self.store.flush_ledger(durable)
        self.run.record.update(
            session_id=session.session_id,
            durable_session_id=durable,
            resumed=True,
            prior_turns=len(turns),
        )
        for turn in turns:
            self._replay(session.session_id, turn)
        answered = self.process.new_session_id() if session.history_changed else durable
        self.out.result(
            request_id,
            {
                "sessionId": session.session_id,
                "openCodeSessionId": answered,
                **self._model_state(session),
            },
        )

    def _replay(self, session_id: str, turn: Mapping[str, Any]) -> None:
        prompt = str(turn.get("prompt", ""))
        self.out.update(session_id, chunk_update("user_message_chunk", prompt))
        thinking = str(turn.get("thinking", ""))
        if thinking:
            self.out.update(session_id, chunk_update("agent_thought_chunk", thinking))
        for tool in turn.get("tools", []):
            if isinstance(tool, dict):
                self.out.update(session_id, {"sessionUpdate": "tool_call", **tool})
        text = str(turn.get("text", ""))
        if text:
            self.out.update(session_id, chunk_update("agent_message_chunk", text))

    def on_set_model(self, request_id: Any, params: dict[str, Any]) -> None:
        session = self.process.session(request_id, params)
        if session is None:
            return
        model = params.get("modelId")
        known = {m for m, _ in self.agent.models}
        if not isinstance(model, str) or model not in known:
            self.out.error(request_id, INVALID_PARAMS, f"Invalid params: unknown model {model!r}")
            return
        session.model = model
        self.run.record["model"] = model
        self.run.record["model_via"] = "session/set_model"
        self.out.result(request_id, {})

    def on_set_config_option(self, request_id: Any, params: dict[str, Any]) -> None:
        session = self.process.session(request_id, params)
        if session is None:
            return
        if self.agent.model_channel == "models" or params.get("configId") != "model":
            self.out.error(
                request_id,
                INVALID_PARAMS,
                f"Invalid params: unknown config option {params.get('configId')!r}",
            )
            return
        value = params.get("value")
        if not isinstance(value, str) or value not in {m for m, _ in self.agent.models}:
            self.out.error(request_id, INVALID_PARAMS, f"Invalid params: unknown model {value!r}")
            return
        session.model = value
        self.run.record["model"] = value
        self.run.record["model_via"] = "session/set_config_option"
        self.out.result(request_id, {"configOptions": self._config_options(session)})

    def _check_session_params(self, request_id: Any, params: dict[str, Any]) -> bool:
        cwd = params.get("cwd")
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            self.out.error(
                request_id, INVALID_PARAMS, "Invalid params: cwd must be an absolute path"
            )
            return False
        servers = params.get("mcpServers")
        if not isinstance(servers, list):
            self.out.error(request_id, INVALID_PARAMS, "Invalid params: mcpServers is required")
            return False
        problem = self._mcp_problem(servers)
        if problem is not None:
            self.out.error(request_id, INVALID_PARAMS, f"Invalid params: {problem}")
            return False
        if not self.process.authenticated:
            # real-clis second batch (kimi): without credentials session/new is -32000.
            self.out.error(request_id, AUTH_REQUIRED, "Authentication required")
            return False
        return True

    def _mcp_problem(self, servers: list[Any]) -> str | None:
        """ref §2.6 / ref §7: the env shape per agent; kimi's stdio cut-off; transports."""
        for index, server in enumerate(servers):
            where = f"mcpServers[{index}]"
            if not isinstance(server, dict):
                return f"{where} must be an object"
            kind = server.get("type", "stdio")
            if kind in ("http", "sse"):
                problem = self._remote_problem(where, kind, server)
            elif kind == "stdio":
                problem = self._stdio_problem(where, server)
            else:
                problem = f"{where}.type: unknown transport {kind!r}"
            if problem is not None:
                return problem
        return None

    def _remote_problem(self, where: str, kind: str, server: dict[str, Any]) -> str | None:
        """An ``http``/``sse`` server: only http, only with ``mcpCapabilities.http``."""
        if not (kind == "http" and self.agent.mcp_http):
            return f"{where}: {kind} MCP servers are not supported by this agent"
        if not isinstance(server.get("url"), str) or not isinstance(server.get("headers"), list):
            return f"{where}: {kind} servers need url and headers"
        return None

    def _stdio_problem(self, where: str, server: dict[str, Any]) -> str | None:
        """A stdio server: refused past the agent's cut-off; its env in the agent's shape."""
        floor = self.agent.stdio_removed_in
        if floor is not None and at_least(self.process.version, floor):
            return f"{where}: stdio MCP servers are not supported since {self.agent.prog} {floor}"
        for key in ("name", "command"):
            if not isinstance(server.get(key), str):
                return f"{where}.{key} must be a string"
        args = server.get("args")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            return f"{where}.args must be an array of strings"
        env = server.get("env")
        if self.agent.env_format == "map":
            if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
                return f"{where}.env must be an object of strings (KEY: value)"
        elif not isinstance(env, list) or not all(
            isinstance(e, dict)
            and isinstance(e.get("name"), str)
            and isinstance(e.get("value"), str)
            for e in env
        ):
            return f"{where}.env must be an array of {{name, value}}"
        return None

    def _model_state(self, session: Session) -> dict[str, Any]:
        state: dict[str, Any] = {}
        if self.agent.model_channel in ("models", "both"):
            models = [{"modelId": m, "name": n} for m, n in self.agent.models]
            state["models"] = {"currentModelId": session.model, "availableModels": models}
        if self.agent.model_channel in ("config", "both"):
            state["configOptions"] = self._config_options(session)
        return state

    def _config_options(self, session: Session) -> list[dict[str, Any]]:
        return [
            {
                "id": "model",
                "name": "Model",
                "category": "model",
                "type": "select",
                "currentValue": session.model,
                "options": [{"value": m, "name": n} for m, n in self.agent.models],
            }
        ]

    def _record_session_params(self, method: str, params: dict[str, Any]) -> None:
        self.run.record.setdefault("session_new", []).append({"method": method, **params})
        self.run.record["mcp_servers"] = params.get("mcpServers")
        self.run.record["session_cwd"] = params.get("cwd")


def _acp_session_id() -> str:
    """amr: the ACP ``sessionId`` of one process (the durable id is ``openCodeSessionId``)."""
    return f"acp-{ids.uuid4_hex()}"
