"""The ACP agent process: the JSON-RPC loop, sessions, and what each method answers.

Design: docs/design/fakes.md#fake_clis.acp.server
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from fake_clis import ids, jsonio
from fake_clis.acp.agent import Agent, at_least
from fake_clis.acp.channel import Channel
from fake_clis.acp.render import TurnRenderer
from fake_clis.acp.wire import (
    AUTH_REQUIRED,
    COMPACTION_CODE,
    COMPACTION_MESSAGE,
    CONTINUE_CAPABILITY,
    CONTINUE_METHOD,
    DURABLE_ID,
    EOF,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSION,
    SESSION_GONE,
    STOP_REASONS,
    UNSAFE_CONTINUATION,
    ApiError,
    Compaction,
    Session,
    Stop,
    Turn,
    chunk_update,
    dumps,
)
from fake_clis.base import FakeRun

__all__ = ["AcpServer"]


class AcpServer:
    """One agent process: the JSON-RPC loop, sessions and the scenario renderer."""

    def __init__(self, run: FakeRun, agent: Agent) -> None:
        self.run = run
        self.agent = agent
        #: A turn failed with a scripted API error (see ``Agent.api_error_exit``).
        self.api_error_seen = False
        self.channel = Channel(run)
        self.version = run.env.get("FAKE_CLI_VERSION") or agent.version
        self.sessions: dict[str, Session] = {}
        self.authenticated = run.scenario.auth != "missing" and run.env.get("FAKE_CLI_AUTH") != (
            "missing"
        )
        self.next_request_id = 0
        self.auto_approve = agent.auto_approve(run.parsed)
        #: amr: ledger rows of requests not yet written to a saved session.
        self.ledger_buffer: list[dict[str, Any]] = []
        run.record["prompt_via"] = "acp"
        run.record["auto_approve"] = self.auto_approve

    # -- output ---------------------------------------------------------------------

    def send(self, frame: dict[str, Any]) -> None:
        self.run.out(dumps(frame))

    def result(self, request_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        body: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            body["data"] = data
        self.send({"jsonrpc": "2.0", "id": request_id, "error": body})

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        params = {"sessionId": session_id, "update": update}
        self.send({"jsonrpc": "2.0", "method": "session/update", "params": params})

    # -- the loop --------------------------------------------------------------------

    def serve(self) -> int:
        self.channel.start()
        while True:
            message = self.channel.inbox.get()
            if message is EOF:
                break
            self.dispatch(message)
        self.run.linger_if_asked()
        if not self.agent.exits_at_eof:
            self.run.hang()
        if self.api_error_seen and self.agent.api_error_exit is not None:
            return self.agent.api_error_exit
        return self.run.scenario.exit_code

    def dispatch(self, message: Any) -> None:
        if isinstance(message, tuple) and message[0] == "invalid":
            self.error(None, PARSE_ERROR, "Parse error")
            return
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            self.error(None, INVALID_REQUEST, "Invalid Request")
            return
        if message.get("jsonrpc") != "2.0" and "id" in message:
            self.error(message.get("id"), INVALID_REQUEST, "Invalid Request: jsonrpc must be 2.0")
            return
        method: str = message["method"]
        params = message.get("params")
        if "id" not in message:
            # Notifications: session/cancel is routed by the channel; others are ignored.
            self.run.record.setdefault("ignored_notifications", []).append(method)
            return
        request_id = message["id"]
        handler = _HANDLERS.get(method)
        if handler is None:
            self.error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
            return
        if not isinstance(params, dict):
            self.error(request_id, INVALID_PARAMS, f"Invalid params: {method} needs an object")
            return
        if self.agent.native_continue:
            self.ledger(method, params)
        handler(self, request_id, params)

    # -- handshake -------------------------------------------------------------------

    def on_initialize(self, request_id: Any, params: dict[str, Any]) -> None:
        version = params.get("protocolVersion")
        if not isinstance(version, int) or isinstance(version, bool):
            self.error(request_id, INVALID_PARAMS, "Invalid params: protocolVersion is required")
            return
        self.run.record["initialize"] = params
        capabilities: dict[str, Any] = {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": self.agent.mcp_http, "sse": False},
            "sessionCapabilities": {},
        }
        meta = dict(self.agent.capability_meta)
        if self.agent.native_continue:
            # The compaction step's ``advertise``: the extension version this run announces
            # (None: not announced), so a host's capability check can be exercised.
            step = next((s for s in self.run.scenario.steps if s.kind == "compaction"), None)
            version = step.get("advertise", 1) if step is not None else 1
            meta.pop(CONTINUE_CAPABILITY, None)
            if version is not None:
                meta[CONTINUE_CAPABILITY] = {"version": version}
        if meta:
            capabilities["_meta"] = meta
        self.result(
            request_id,
            {
                # wire §A.1.2: the agent answers with the version it speaks when the
                # client asks for another one.
                "protocolVersion": PROTOCOL_VERSION,
                "agentCapabilities": capabilities,
                "agentInfo": {
                    "name": self.agent.info_name,
                    "title": self.agent.info_title,
                    "version": self.version,
                },
                "authMethods": [dict(m) for m in self.agent.auth_methods],
            },
        )

    def on_authenticate(self, request_id: Any, params: dict[str, Any]) -> None:
        ids = {m.get("id") for m in self.agent.auth_methods}
        if params.get("methodId") not in ids:
            self.error(request_id, INVALID_PARAMS, f"Unknown auth method: {params.get('methodId')}")
            return
        self.authenticated = True
        self.result(request_id, {})

    # -- sessions ---------------------------------------------------------------------

    def _check_session_params(self, request_id: Any, params: dict[str, Any]) -> bool:
        cwd = params.get("cwd")
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            self.error(request_id, INVALID_PARAMS, "Invalid params: cwd must be an absolute path")
            return False
        servers = params.get("mcpServers")
        if not isinstance(servers, list):
            self.error(request_id, INVALID_PARAMS, "Invalid params: mcpServers is required")
            return False
        problem = self._mcp_problem(servers)
        if problem is not None:
            self.error(request_id, INVALID_PARAMS, f"Invalid params: {problem}")
            return False
        if not self.authenticated:
            # real-clis second batch (kimi): without credentials session/new is -32000.
            self.error(request_id, AUTH_REQUIRED, "Authentication required")
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
                if not (kind == "http" and self.agent.mcp_http):
                    return f"{where}: {kind} MCP servers are not supported by this agent"
                if not isinstance(server.get("url"), str) or not isinstance(
                    server.get("headers"), list
                ):
                    return f"{where}: {kind} servers need url and headers"
                continue
            if kind != "stdio":
                return f"{where}.type: unknown transport {kind!r}"
            floor = self.agent.stdio_removed_in
            if floor is not None and at_least(self.version, floor):
                return (
                    f"{where}: stdio MCP servers are not supported since {self.agent.prog} {floor}"
                )
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

    def _new_session_id(self) -> str:
        if self.agent.session_prefix:
            return self.agent.session_prefix + ids.uuid4_hex()[:26]
        return ids.uuid4()

    def _record_session_params(self, method: str, params: dict[str, Any]) -> None:
        self.run.record.setdefault("session_new", []).append({"method": method, **params})
        self.run.record["mcp_servers"] = params.get("mcpServers")
        self.run.record["session_cwd"] = params.get("cwd")

    def _default_model(self) -> str:
        env = self.agent.default_model_env
        pinned = self.run.env.get(env) if env else None
        return pinned or self.agent.models[0][0]

    def on_session_new(self, request_id: Any, params: dict[str, Any]) -> None:
        self._record_session_params("session/new", params)
        if not self._check_session_params(request_id, params):
            return
        if self.agent.native_continue:
            self._native_session_new(request_id, params)
            return
        session = Session(self._new_session_id(), params["cwd"], self._default_model())
        self.sessions[session.session_id] = session
        self.run.record["session_id"] = session.session_id
        self.run.record["resumed"] = False
        self.result(request_id, {"sessionId": session.session_id, **self._model_state(session)})

    def _native_session_new(self, request_id: Any, params: dict[str, Any]) -> None:
        """amr: a per-process ACP id and the durable ``openCodeSessionId`` (saved at once,
        with the ledger rows of this process so far)."""
        session = Session(
            _acp_session_id(),
            params["cwd"],
            self._default_model(),
            durable_id=self._new_session_id(),
        )
        self.sessions[session.session_id] = session
        self._write_doc(session.durable_id, lambda doc: None, create=True)
        self._flush_ledger(session.durable_id)
        self.run.record.update(
            session_id=session.session_id, durable_session_id=session.durable_id, resumed=False
        )
        self.result(
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
            self.error(request_id, INVALID_PARAMS, "Invalid params: sessionId is required")
            return
        if not self._check_session_params(request_id, params):
            return
        if self.agent.native_continue:
            self._native_session_load(request_id, params, session_id)
            return
        saved = self.run.load_session(session_id)
        if saved is None:
            # wire §A.1.3 ErrorCode -32002 "Resource not found".
            self.error(
                request_id, NOT_FOUND, "Resource not found", {"uri": f"session:{session_id}"}
            )
            return
        turns = [t for t in saved.get("turns", []) if isinstance(t, dict)]
        last = turns[-1].get("model") if turns else None
        model = last if isinstance(last, str) else None
        session = Session(session_id, params["cwd"], model or self._default_model(), turns)
        self.sessions[session_id] = session
        self.run.record.update(session_id=session_id, resumed=True, prior_turns=len(turns))
        # wire §A.1.2: the history is replayed as session/update before the response.
        for turn in turns:
            self._replay(session_id, turn)
        self.result(request_id, self._model_state(session))

    def _native_session_load(self, request_id: Any, params: dict[str, Any], durable: str) -> None:
        """amr: load by the durable id, replay under a new ACP id, answer both ids.

        A pending continuation's ``history`` option decides what this load finds: ``missing``
        fails like a session that is gone, ``changed`` answers another ``openCodeSessionId``
        (and the continuation is then refused: the persisted history is not the cursor's).
        """
        saved = self.run.load_session(durable) if DURABLE_ID.match(durable) else None
        pending = saved.get("continuation") if saved is not None else None
        options = pending.get("options") if isinstance(pending, dict) else None
        history = options.get("history", "kept") if isinstance(options, dict) else "kept"
        if saved is None or history == "missing":
            # Upstream's words for a load of a session that is gone.
            self.error(
                request_id,
                INVALID_REQUEST,
                SESSION_GONE,
                {"kind": "resume_failed", "retryable": True},
            )
            return
        turns = [t for t in saved.get("turns", []) if isinstance(t, dict)]
        last = turns[-1].get("model") if turns else None
        model = last if isinstance(last, str) else self._default_model()
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
        self._flush_ledger(durable)
        self.run.record.update(
            session_id=session.session_id,
            durable_session_id=durable,
            resumed=True,
            prior_turns=len(turns),
        )
        for turn in turns:
            self._replay(session.session_id, turn)
        answered = self._new_session_id() if session.history_changed else durable
        self.result(
            request_id,
            {
                "sessionId": session.session_id,
                "openCodeSessionId": answered,
                **self._model_state(session),
            },
        )

    def _replay(self, session_id: str, turn: Mapping[str, Any]) -> None:
        prompt = str(turn.get("prompt", ""))
        self.update(session_id, chunk_update("user_message_chunk", prompt))
        thinking = str(turn.get("thinking", ""))
        if thinking:
            self.update(session_id, chunk_update("agent_thought_chunk", thinking))
        for tool in turn.get("tools", []):
            if isinstance(tool, dict):
                self.update(session_id, {"sessionUpdate": "tool_call", **tool})
        text = str(turn.get("text", ""))
        if text:
            self.update(session_id, chunk_update("agent_message_chunk", text))

    def _session(self, request_id: Any, params: dict[str, Any]) -> Session | None:
        session_id = params.get("sessionId")
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            self.error(
                request_id, NOT_FOUND, "Resource not found", {"uri": f"session:{session_id}"}
            )
        return session

    def on_set_model(self, request_id: Any, params: dict[str, Any]) -> None:
        session = self._session(request_id, params)
        if session is None:
            return
        model = params.get("modelId")
        known = {m for m, _ in self.agent.models}
        if not isinstance(model, str) or model not in known:
            self.error(request_id, INVALID_PARAMS, f"Invalid params: unknown model {model!r}")
            return
        session.model = model
        self.run.record["model"] = model
        self.run.record["model_via"] = "session/set_model"
        self.result(request_id, {})

    def on_set_config_option(self, request_id: Any, params: dict[str, Any]) -> None:
        session = self._session(request_id, params)
        if session is None:
            return
        if self.agent.model_channel == "models" or params.get("configId") != "model":
            self.error(
                request_id,
                INVALID_PARAMS,
                f"Invalid params: unknown config option {params.get('configId')!r}",
            )
            return
        value = params.get("value")
        if not isinstance(value, str) or value not in {m for m, _ in self.agent.models}:
            self.error(request_id, INVALID_PARAMS, f"Invalid params: unknown model {value!r}")
            return
        session.model = value
        self.run.record["model"] = value
        self.run.record["model_via"] = "session/set_config_option"
        self.result(request_id, {"configOptions": self._config_options(session)})

    # -- the prompt turn ----------------------------------------------------------------

    def on_prompt(self, request_id: Any, params: dict[str, Any]) -> None:
        session = self._session(request_id, params)
        if session is None:
            return
        blocks = params.get("prompt")
        if not isinstance(blocks, list) or not blocks:
            self.error(
                request_id, INVALID_PARAMS, "Invalid params: prompt must be a non-empty array"
            )
            return
        text = "".join(
            str(b.get("text", ""))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        )
        self.run.record.setdefault("prompts", []).append(text)
        self.run.record.setdefault("prompt", text)
        self._run_turn(request_id, session, Turn(prompt=text), start=0, index=None)

    def _run_turn(
        self, request_id: Any, session: Session, turn: Turn, *, start: int, index: int | None
    ) -> None:
        """Render the scenario's steps from ``start`` into ``turn`` and answer the request;
        ``index`` is the saved turn this one continues (None: a new turn)."""
        renderer = TurnRenderer(self, session, request_id, turn)
        try:
            renderer.render(start)
        except ApiError as exc:
            self.api_error_seen = True
            self._save(session, turn, index)
            self.error(request_id, INTERNAL_ERROR, str(exc), renderer.api_error_data(exc.step))
            return
        except Compaction as exc:
            self._interrupt(request_id, session, turn, index, exc)
            return
        except Stop:
            pass
        cancelled = self.channel.cancelled(request_id)
        if cancelled:
            stop = "cancelled"
        else:
            wanted = self.run.scenario.stop_reason
            stop = wanted if wanted in STOP_REASONS else "end_turn"
            if self.agent.turn_end_update:
                # ref §2.6 step 5: Kiro ends a turn with its own session update.
                self.update(session.session_id, {"sessionUpdate": "turn_end", "stopReason": stop})
        self._save(session, turn, index)
        result: dict[str, Any] = {"stopReason": stop}
        if turn.usage:
            result["usage"] = dict(turn.usage)
        self.result(request_id, result)

    def _save(self, session: Session, turn: Turn, index: int | None = None) -> int:
        """Save ``turn`` as a new turn (or over the saved turn ``index``); its index."""
        saved = {
            "prompt": turn.prompt,
            "text": "".join(turn.text),
            "thinking": "".join(turn.thinking),
            "tools": turn.tools,
            # The model in use, so session/load restores it.
            "model": session.model,
        }
        if index is None or not 0 <= index < len(session.turns):
            session.turns.append(saved)
            index = len(session.turns) - 1
        else:
            session.turns[index] = saved
        if self.agent.native_continue:
            turns = list(session.turns)
            self._write_doc(session.durable_id, lambda doc: doc.update(turns=turns), create=True)
        else:
            self.run.save_session(session.session_id, session.turns)
        return index

    # -- the compaction continuation (amr) -----------------------------------------------

    def _interrupt(
        self, request_id: Any, session: Session, turn: Turn, index: int | None, exc: Compaction
    ) -> None:
        """seed 000 "AMR compaction continuation": the turn so far is saved, with a pending
        continuation when the evidence is structured, then the request fails with it."""
        step = exc.step
        options = {
            "evidence": str(step.get("evidence", "structured")),
            "history": str(step.get("history", "kept")),
            "pending_tool": bool(step.get("pending_tool", False)),
            "repeat": bool(step.get("repeat", False)),
        }
        index = self._save(session, turn, index)
        cursor = {
            "version": 1,
            "userMessageId": f"msg_{ids.uuid4_hex()[:24]}",
            "assistantMessageId": f"msg_{ids.uuid4_hex()[:24]}",
            # Claimed even with a tool left in_progress (pending_tool), as upstream's fake
            # does: the host must check its own tool frames (seed 000: "The daemon
            # independently checks its tool frames").
            "toolResultsCommitted": True,
        }
        pending = {
            "cursor": cursor,
            "pid": os.getpid(),
            "next_step": exc.index + 1,
            "turn": index,
            "options": options,
            "usage": dict(turn.usage),
            "cost": turn.cost,
        }
        self._send_interruption(request_id, session, pending)

    def _send_interruption(
        self, request_id: Any, session: Session, pending: dict[str, Any]
    ) -> None:
        """Save ``pending`` (legacy evidence: none) and answer the request with the error."""
        structured = pending["options"]["evidence"] == "structured"

        def change(doc: dict[str, Any]) -> None:
            if structured:
                doc["continuation"] = pending
            else:
                doc.pop("continuation", None)

        self._write_doc(session.durable_id, change, create=True)
        self.run.record["compactions"] = int(self.run.record.get("compactions", 0)) + 1
        data: dict[str, Any] = {"kind": "opencode_prompt_error"}
        if structured:
            data = {
                "kind": "opencode_continuation_incomplete",
                "code": COMPACTION_CODE,
                "runtime": "opencode",
                "phase": "post_tool_resume",
                "retryable": False,
                "openCodeSessionId": session.durable_id,
                "continuation": pending["cursor"],
            }
        self.error(request_id, INVALID_REQUEST, COMPACTION_MESSAGE, data)

    def on_continue(self, request_id: Any, params: dict[str, Any]) -> None:
        """``_session/continue {sessionId, continuation}``: the rest of the interrupted turn,
        without a user message, when it is safe (seed 000: the new process loads the same
        durable session and sends only the cursor; OpenCode rechecks persisted history)."""
        if not self.agent.native_continue:
            self.error(request_id, METHOD_NOT_FOUND, f"Method not found: {CONTINUE_METHOD}")
            return
        entry: dict[str, Any] = {
            "params": params,
            "loaded": False,
            "previous_alive": None,
            "accepted": False,
            "reason": None,
        }
        self.run.record.setdefault("continues", []).append(entry)
        session_id = params.get("sessionId")
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        pending: Any = None
        if session is not None:
            entry["loaded"] = session.loaded
            saved = self.run.load_session(session.durable_id)
            pending = saved.get("continuation") if saved is not None else None
            if isinstance(pending, dict) and isinstance(pending.get("pid"), int):
                entry["previous_alive"] = _pid_alive(pending["pid"])
        extra = sorted(set(params) - {"sessionId", "continuation"})
        reason: str | None = None
        if session is None:
            reason = f"unknown session {session_id!r}"
        elif "prompt" in params:
            reason = "a continuation carries no prompt"
        elif extra:
            reason = f"unexpected params {extra}"
        elif not session.loaded:
            reason = "the session was not loaded by this process"
        elif session.history_changed:
            reason = "the persisted history changed"
        elif not isinstance(pending, dict):
            reason = "no continuation is pending"
        elif entry["previous_alive"] is not False:
            reason = "the interrupted process is still alive"
        elif not _same_json(params.get("continuation"), pending.get("cursor")):
            reason = "the cursor is not the saved one"
        if reason is not None or session is None or not isinstance(pending, dict):
            entry["reason"] = reason
            self.error(request_id, INVALID_REQUEST, UNSAFE_CONTINUATION)
            return
        entry["accepted"] = True
        # One continuation per interruption: the pending record is consumed.
        self._write_doc(session.durable_id, lambda doc: doc.pop("continuation", None))
        options = dict(pending.get("options") or {})
        if options.get("repeat"):
            # The continuation is interrupted again, with the same evidence (once).
            again = {**pending, "pid": os.getpid(), "options": {**options, "repeat": False}}
            self._send_interruption(request_id, session, again)
            return
        index = int(pending.get("turn", len(session.turns) - 1))
        saved_turn = session.turns[index] if 0 <= index < len(session.turns) else {}
        turn = Turn(
            prompt=str(saved_turn.get("prompt", "")),
            text=[str(saved_turn.get("text", ""))],
            thinking=[str(saved_turn.get("thinking", ""))],
            tools=[t for t in saved_turn.get("tools", []) if isinstance(t, dict)],
            usage={k: v for k, v in dict(pending.get("usage") or {}).items() if isinstance(v, int)},
            cost=float(pending.get("cost", 0.0)),
        )
        self._run_turn(
            request_id, session, turn, start=int(pending.get("next_step", 0)), index=index
        )

    # -- the saved session document (amr) ----------------------------------------------

    def _doc_path(self, durable: str) -> Path | None:
        if not DURABLE_ID.match(durable):
            return None
        return Path(self.run.session_dir, f"{durable}.json")

    def _write_doc(
        self, durable: str, change: Callable[[dict[str, Any]], Any], *, create: bool = False
    ) -> bool:
        """Read-modify-write the saved session ``durable`` (replaced atomically); False
        when it does not exist and ``create`` is false."""
        path = self._doc_path(durable)
        if path is None:
            return False
        doc = self.run.load_session(durable)
        if doc is None:
            if not create:
                return False
            doc = {"id": durable, "turns": []}
        change(doc)
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        scratch.write_text(jsonio.dumps(doc), encoding="utf-8")
        os.replace(scratch, path)
        return True

    def ledger(self, method: str, params: dict[str, Any]) -> None:
        """One ledger row for a request, written to the session it names when that is
        saved already (else kept until this process creates or loads one)."""
        self.ledger_buffer.append(
            {"pid": os.getpid(), "method": method, "has_prompt": "prompt" in params}
        )
        named = params.get("sessionId")
        if method == "session/load":
            target = named if isinstance(named, str) else None
        else:
            session = self.sessions.get(named) if isinstance(named, str) else None
            target = session.durable_id if session is not None else None
        if target is not None:
            self._flush_ledger(target)

    def _flush_ledger(self, durable: str) -> None:
        rows, self.ledger_buffer = self.ledger_buffer, []
        if rows and not self._write_doc(
            durable, lambda doc: doc.setdefault("ledger", []).extend(rows)
        ):
            self.ledger_buffer = rows + self.ledger_buffer

    def next_id(self) -> int:
        request_id = self.next_request_id
        self.next_request_id += 1
        return request_id


_HANDLERS: dict[str, Callable[[AcpServer, Any, dict[str, Any]], None]] = {
    "initialize": AcpServer.on_initialize,
    "authenticate": AcpServer.on_authenticate,
    "session/new": AcpServer.on_session_new,
    "session/load": AcpServer.on_session_load,
    "session/set_model": AcpServer.on_set_model,
    "session/set_config_option": AcpServer.on_set_config_option,
    "session/prompt": AcpServer.on_prompt,
    CONTINUE_METHOD: AcpServer.on_continue,
}


def _acp_session_id() -> str:
    """amr: the ACP ``sessionId`` of one process (the durable id is ``openCodeSessionId``)."""
    return f"acp-{ids.uuid4_hex()}"


def _same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values (``1`` is not ``true``, ``1`` is not ``1.0``)."""
    return jsonio.dumps(a, sort_keys=True) == jsonio.dumps(b, sort_keys=True)


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (an exited, reaped process does not)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.OpenProcess.restype = ctypes.c_void_p
        process_query_limited_information = 0x1000
        still_active = 259
        handle = kernel32.OpenProcess(process_query_limited_information, False, pid)
        if not handle:
            # ERROR_ACCESS_DENIED: it exists, owned by someone else.
            return ctypes.get_last_error() == 5
        try:
            code = ctypes.c_ulong()
            if not kernel32.GetExitCodeProcess(ctypes.c_void_p(handle), ctypes.byref(code)):
                return True
            return code.value == still_active
        finally:
            kernel32.CloseHandle(ctypes.c_void_p(handle))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Linux: an exited process its parent has not reaped yet (a zombie) is not alive.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            state = stat.read().rpartition(")")[2].split()[:1]
    except OSError:
        return True
    return state not in (["Z"], ["X"])
