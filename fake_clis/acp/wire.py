"""What the ACP server, its channel and its renderer share: the protocol's constants,
session and turn state, and the exceptions that end a turn.
"""

from __future__ import annotations

from fake_clis import jsonio

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from fake_clis.scenario import Step

__all__ = [
    "AUTH_REQUIRED",
    "COMPACTION_CODE",
    "COMPACTION_MESSAGE",
    "CONTEXT_SIZE",
    "CONTINUE_CAPABILITY",
    "CONTINUE_METHOD",
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
    "is_durable_id",
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
#: What a durable id (amr's own ``ses_<hex>``) may hold: it names a file.
_DURABLE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def is_durable_id(text: str) -> bool:
    """Whether an amr fake writes and reads ``text`` as a durable id: 1-200 of
    ``[A-Za-z0-9_-]`` (what ``re.match(r"^[A-Za-z0-9_-]{1,200}$", text)`` said, a final
    ``\\n`` let through as that ``$`` did)."""
    core = text[:-1] if text.endswith("\n") else text
    return 1 <= len(core) <= 200 and all(char in _DURABLE_CHARS for char in core)


EOF = object()


class Session:
    """One ACP session of this process: its cwd, model and turns so far."""

    __slots__ = (
        "always_allowed",
        "approvals",
        "cwd",
        "durable_id",
        "history_changed",
        "loaded",
        "model",
        "session_id",
        "turns",
    )

    def __init__(
        self,
        session_id: str,
        cwd: str,
        model: str,
        turns: list[dict[str, Any]] | None = None,
        *,
        always_allowed: set[str] | None = None,
        approvals: int = 0,
        durable_id: str = "",
        loaded: bool = False,
        history_changed: bool = False,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.model = model
        self.turns: list[dict[str, Any]] = [] if turns is None else turns
        #: Tool kinds the client allowed for the whole session (``allow_always``).
        self.always_allowed: set[str] = set() if always_allowed is None else always_allowed
        #: hermes: its approval requests are numbered per session (``edit-approval-<n>``).
        self.approvals = approvals
        #: The id the session is saved under: amr's ``openCodeSessionId``; the others' ACP id.
        self.durable_id = durable_id
        #: Opened by ``session/load`` in this process (``_session/continue`` needs that).
        self.loaded = loaded
        #: amr ``history: changed``: the load found another history than the one saved.
        self.history_changed = history_changed
        if not self.durable_id:
            self.durable_id = self.session_id


class Turn:
    __slots__ = (
        "cost",
        "prompt",
        "text",
        "thinking",
        "tools",
        "usage",
    )

    def __init__(
        self,
        prompt: str,
        *,
        text: list[str] | None = None,
        thinking: list[str] | None = None,
        tools: list[dict[str, Any]] | None = None,
        usage: dict[str, int] | None = None,
        cost: float = 0.0,
    ) -> None:
        self.prompt = prompt
        self.text: list[str] = [] if text is None else text
        self.thinking: list[str] = [] if thinking is None else thinking
        self.tools: list[dict[str, Any]] = [] if tools is None else tools
        self.usage: dict[str, int] = {} if usage is None else usage
        self.cost = cost


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
