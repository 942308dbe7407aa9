"""The ACP handshake an agent process answers: ``initialize`` and ``authenticate``.

wire §A.1.2, ref §2.6 step 1, real-clis second batch "ACP initialize results".

Design: docs/design/fakes.md#fake_clis.acp.server
"""

from __future__ import annotations

from fake_clis.acp.process import Handler
from fake_clis.acp.wire import CONTINUE_CAPABILITY, INVALID_PARAMS, PROTOCOL_VERSION

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Handshake"]


class Handshake(Handler):
    """``initialize`` and ``authenticate``."""

    def on_initialize(self, request_id: Any, params: dict[str, Any]) -> None:
        version = params.get("protocolVersion")
        if not isinstance(version, int) or isinstance(version, bool):
            self.out.error(
                request_id, INVALID_PARAMS, "Invalid params: protocolVersion is required"
            )
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
        self.out.result(
            request_id,
            {
                # wire §A.1.2: the agent answers with the version it speaks when the
                # client asks for another one.
                "protocolVersion": PROTOCOL_VERSION,
                "agentCapabilities": capabilities,
                "agentInfo": {
                    "name": self.agent.info_name,
                    "title": self.agent.info_title,
                    "version": self.process.version,
                },
                "authMethods": [dict(m) for m in self.agent.auth_methods],
            },
        )

    def on_authenticate(self, request_id: Any, params: dict[str, Any]) -> None:
        ids = {m.get("id") for m in self.agent.auth_methods}
        if params.get("methodId") not in ids:
            self.out.error(
                request_id, INVALID_PARAMS, f"Unknown auth method: {params.get('methodId')}"
            )
            return
        self.process.authenticated = True
        self.out.result(request_id, {})
