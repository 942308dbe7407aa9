"""One ACP agent process's shared state: what every method handler reads and changes.

The handlers (handshake, sessions, the prompt, the continuation) each own one part of
the protocol; they share this object rather than each other, as the renderer does.

Design: docs/design/fakes.md#fake_clis.acp.server
"""

from __future__ import annotations

from fake_clis import ids
from fake_clis.acp.agent import Agent
from fake_clis.acp.channel import Channel
from fake_clis.acp.output import Output
from fake_clis.acp.store import SessionStore
from fake_clis.acp.wire import NOT_FOUND, Session
from fake_clis.base import FakeRun

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["AgentProcess", "Handler"]


class AgentProcess:
    """The state of one fake agent process."""

    def __init__(self, run: FakeRun, agent: Agent) -> None:
        self.run = run
        self.agent = agent
        #: A turn failed with a scripted API error (see ``Agent.api_error_exit``).
        self.api_error_seen = False
        self.channel = Channel(run)
        self.out = Output(run)
        self.version = run.env.get("FAKE_CLI_VERSION") or agent.version
        self.sessions: dict[str, Session] = {}
        self.store = SessionStore(run, self.sessions)
        self.authenticated = run.scenario.auth != "missing" and run.env.get("FAKE_CLI_AUTH") != (
            "missing"
        )
        self.auto_approve = agent.auto_approve(run.parsed)
        run.record["prompt_via"] = "acp"
        run.record["auto_approve"] = self.auto_approve

    def new_session_id(self) -> str:
        if self.agent.session_prefix:
            return self.agent.session_prefix + ids.uuid4_hex()[:26]
        return ids.uuid4()

    def default_model(self) -> str:
        env = self.agent.default_model_env
        pinned = self.run.env.get(env) if env else None
        return pinned or self.agent.models[0][0]

    def session(self, request_id: Any, params: dict[str, Any]) -> Session | None:
        """The open session ``params`` names; answers -32002 and gives ``None`` if none."""
        session_id = params.get("sessionId")
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            self.out.error(
                request_id, NOT_FOUND, "Resource not found", {"uri": f"session:{session_id}"}
            )
        return session


class Handler:
    """A group of method handlers over one :class:`AgentProcess` (the names they use)."""

    def __init__(self, process: AgentProcess) -> None:
        self.process = process
        self.run = process.run
        self.agent = process.agent
        self.out = process.out
        self.store = process.store
        self.sessions = process.sessions
