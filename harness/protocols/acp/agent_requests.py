"""Requests the agent sends us: permission is answered, every other method is refused.

wire §A.1.2: ``fs/*`` and ``terminal/*`` only when advertised, and we advertise neither,
so each gets -32601 and no request is left unanswered (rule ACP-RPC-003). Permission
requests are answered by the def-independent order of ref §2.6 (rules ACP-PERM-001..003).

Design: docs/design/protocols.md#harness.protocols.acp
"""

from __future__ import annotations

from typing import Any

from harness.events import Status
from harness.protocols import jsonrpc
from harness.protocols.acp.context import RunContext, bounded
from harness.protocols.acp.schema import excerpt
from harness.protocols.acp.state import Phase
from harness.protocols.base import Actions
from harness.protocols.jsonrpc import Request

__all__ = ["AgentRequests", "choose_permission_option"]


def choose_permission_option(options: Any) -> str | None:
    """The ``optionId`` to select, or ``None`` when no option is acceptable.

    ref §2.6, newer ``rpc.ts`` order (rule ACP-PERM-001): ``optionId ==
    'approve_for_session'`` -> first ``kind: allow_always`` -> first ``kind:
    allow_once``. Only string option ids can be answered (schema ``PermissionOptionId``).
    """
    if not isinstance(options, list):
        return None
    usable = [o for o in options if isinstance(o, dict) and isinstance(o.get("optionId"), str)]
    for option in usable:
        if option["optionId"] == "approve_for_session":
            return str(option["optionId"])
    for kind in ("allow_always", "allow_once"):
        for option in usable:
            if option.get("kind") == kind:
                return str(option["optionId"])
    return None


class AgentRequests:
    """Answers the agent's requests within one run."""

    def __init__(self, run: RunContext) -> None:
        self._run = run

    def on_request(self, request: Request, actions: Actions) -> None:
        if request.method == "session/request_permission":
            self._on_permission(request, actions)
            return
        # Every other request gets -32601 so none is left unanswered (ACP-RPC-003).
        self._run.core.count("unsupported_requests")
        self._run.send(
            actions,
            jsonrpc.error_response(
                request.id,
                jsonrpc.METHOD_NOT_FOUND,
                bounded(f"Method not found: {request.method}", 200),
            ),
            {request.id: request.method},
        )

    def _on_permission(self, request: Request, actions: Actions) -> None:
        run = self._run
        run.core.count("permission_requests")
        params = request.params if isinstance(request.params, dict) else {}
        if run.core.phase is Phase.CANCELLING:
            # wire §A.1.3: after session/cancel the client MUST answer permission
            # requests with outcome "cancelled" (rule ACP-PERM-003).
            run.reply(actions, request, {"outcome": {"outcome": "cancelled"}})
            actions.events.append(Status(label="permission_request", detail="cancelled"))
            return
        chosen = choose_permission_option(params.get("options"))
        if chosen is None:
            # ref §2.6: "No acceptable option ... fatal unhandled ACP permission request"
            # (rule ACP-PERM-002); the request is still answered first.
            run.reply(actions, request, {"outcome": {"outcome": "cancelled"}})
            run.fail(
                actions,
                code="ACP_PERMISSION_UNHANDLED",
                message=f"unhandled ACP permission request: {excerpt(params, 300)}",
                rule="ACP-PERM-002",
            )
            return
        run.reply(actions, request, {"outcome": {"outcome": "selected", "optionId": chosen}})
        actions.events.append(Status(label="permission_request", detail=chosen))
