"""What the ACP server, its channel and its renderer share: the protocol's constants,
session and turn state, and the exceptions that end a turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fake_clis import jsonio
from fake_clis.scenario import Step

__all__ = [
    "AUTH_REQUIRED",
    "COMPACTION_CODE",
    "COMPACTION_MESSAGE",
    "CONTEXT_SIZE",
    "CONTINUE_CAPABILITY",
    "CONTINUE_METHOD",
    "DURABLE_ID",
    "EOF",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "NOT_FOUND",
    "PARSE_ERROR",
    "PROTOCOL_VERSION",
    "SESSION_GONE",
    "STOP_REASONS",
    "TOOL_KINDS",
    "UNSAFE_CONTINUATION",
    "ApiError",
    "Compaction",
    "Session",
    "Stop",
    "Turn",
    "chunk_update",
    "dumps",
]


#: wire §A.1.2: the only stable protocol version.
PROTOCOL_VERSION = 1

# JSON-RPC / ACP error codes (wire §A.1.3 ``ErrorCode``).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
AUTH_REQUIRED = -32000
NOT_FOUND = -32002

#: wire §A.1.3 ``StopReason`` (v1 is a closed enum).
STOP_REASONS = frozenset({"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"})
#: wire §A.1.3 ``ToolKind``.
TOOL_KINDS = frozenset(
    {"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode"}
)
CONTEXT_SIZE = 200_000

# seed 000 "AMR compaction continuation (ACP extension v1)"; the words are upstream's
# (Open Design packages/contracts/src/api/amr-continuation.ts and its test fake).
CONTINUE_METHOD = "_session/continue"
CONTINUE_CAPABILITY = "com.open-design.nativeSessionContinue"
COMPACTION_MESSAGE = "opencode compaction continuation ended before prompt completion"
COMPACTION_CODE = "OPENCODE_COMPACTION_CONTINUATION_INCOMPLETE"
UNSAFE_CONTINUATION = "unsafe continuation"
SESSION_GONE = "session gone"
#: The durable ids an amr fake writes and reads (its own ``ses_<hex>``): file-name safe.
DURABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,200}$")

EOF = object()


@dataclass
class Session:
    session_id: str
    cwd: str
    model: str
    turns: list[dict[str, Any]] = field(default_factory=list)
    #: Tool kinds the client allowed for the whole session (``allow_always``).
    always_allowed: set[str] = field(default_factory=set)
    #: hermes: its approval requests are numbered per session (``edit-approval-<n>``).
    approvals: int = 0
    #: The id the session is saved under: amr's ``openCodeSessionId``; the others' ACP id.
    durable_id: str = ""
    #: Opened by ``session/load`` in this process (``_session/continue`` needs that).
    loaded: bool = False
    #: amr ``history: changed``: the load found another history than the one saved.
    history_changed: bool = False

    def __post_init__(self) -> None:
        if not self.durable_id:
            self.durable_id = self.session_id


@dataclass
class Turn:
    prompt: str
    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    cost: float = 0.0


def dumps(frame: Any) -> str:
    return jsonio.dumps(frame, ensure_ascii=False, separators=(",", ":"))


class Stop(Exception):
    """Stop the turn: the client cancelled, or stdin closed under a pending request."""


class ApiError(Exception):
    def __init__(self, step: Step) -> None:
        super().__init__(str(step.get("message", "API error")))
        self.step = step


class Compaction(Exception):
    """The scenario's ``compaction`` step at ``index``: the prompt ends with evidence."""

    def __init__(self, index: int, step: Step) -> None:
        super().__init__("compaction")
        self.index = index
        self.step = step


def chunk_update(kind: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
