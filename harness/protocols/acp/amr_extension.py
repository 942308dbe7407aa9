"""The AMR native session continuation contract (ACP extension v1), as pure functions.

Design: docs/design/protocols.md#harness.protocols.acp.amr_extension
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CAPABILITY",
    "CONTINUE_METHOD",
    "ERROR_CODE",
    "SUPPORTED_VERSION",
    "ContinuationCursor",
    "ContinuationEvidence",
    "advertised_version",
    "is_continuation_incomplete",
    "parse_continuation_evidence",
    "parse_cursor",
    "supports_native_continue",
]

#: ``agentCapabilities._meta`` key that negotiates the extension.
CAPABILITY = "com.open-design.nativeSessionContinue"
#: The one version this host speaks.
SUPPORTED_VERSION = 1
#: ``error.data.code`` of the structured interruption.
ERROR_CODE = "OPENCODE_COMPACTION_CONTINUATION_INCOMPLETE"
#: The extension request (ACP reserves names starting with ``_`` for extensions).
CONTINUE_METHOD = "_session/continue"

#: The legacy wording, as the whole failure message (optionally behind the host's
#: ``json-rpc id <n>:`` and OpenCode's ``opencode event stream:`` prefixes).
_LEGACY_WORDING = re.compile(
    r"^(?:json-rpc id \d+: )?(?:opencode event stream: )?"
    r"opencode compaction continuation ended before prompt completion\s*$",
    re.IGNORECASE,
)
#: Identifiers in the evidence: non-blank, bounded.
_MAX_ID = 256


@dataclass(frozen=True)
class ContinuationCursor:
    """Where the persisted conversation stands: the last user and assistant messages."""

    user_message_id: str
    assistant_message_id: str

    def to_wire(self) -> dict[str, Any]:
        """The cursor exactly as ``_session/continue`` carries it (version 1)."""
        return {
            "version": SUPPORTED_VERSION,
            "userMessageId": self.user_message_id,
            "assistantMessageId": self.assistant_message_id,
            "toolResultsCommitted": True,
        }


@dataclass(frozen=True)
class ContinuationEvidence:
    """Complete evidence from an interrupted prompt: whose session, and where it stands."""

    durable_session_id: str
    cursor: ContinuationCursor


def _object(value: Any) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _identifier(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip()) and len(value) <= _MAX_ID


def advertised_version(agent_capabilities: Any) -> Any:
    """The value of ``_meta[CAPABILITY].version`` as sent (``None`` when absent)."""
    caps = _object(agent_capabilities)
    meta = _object(caps.get("_meta")) if caps is not None else None
    entry = _object(meta.get(CAPABILITY)) if meta is not None else None
    return entry.get("version") if entry is not None else None


def supports_native_continue(agent_capabilities: Any) -> bool:
    """``initialize`` advertised ``loadSession`` and version 1 of the extension."""
    caps = _object(agent_capabilities)
    if caps is None or caps.get("loadSession") is not True:
        return False
    version = advertised_version(caps)
    return type(version) is int and version == SUPPORTED_VERSION


def is_continuation_incomplete(message: str, data: Any) -> bool:
    """Whether an RPC failure is the compaction interruption (structured or legacy)."""
    details = _object(data)
    if details is not None and details.get("code") == ERROR_CODE:
        return True
    return bool(_LEGACY_WORDING.match(message or ""))


def parse_continuation_evidence(data: Any, runtime: str) -> ContinuationEvidence | None:
    """The evidence when it is complete, versioned and exact; ``None`` otherwise.

    Every field is required: ``code``, ``kind: opencode_continuation_incomplete``,
    ``runtime`` (the def's runtime), ``phase: post_tool_resume``, a non-blank ``openCodeSessionId``
    and a ``continuation`` of version 1 with ``toolResultsCommitted: true`` and both
    message ids.
    """
    details = _object(data)
    if details is None:
        return None
    cursor = parse_cursor(details.get("continuation"))
    if (
        details.get("code") != ERROR_CODE
        or details.get("kind") != "opencode_continuation_incomplete"
        or details.get("runtime") != runtime
        or details.get("phase") != "post_tool_resume"
        or not _identifier(details.get("openCodeSessionId"))
        or cursor is None
    ):
        return None
    return ContinuationEvidence(durable_session_id=str(details["openCodeSessionId"]), cursor=cursor)


def parse_cursor(value: Any) -> ContinuationCursor | None:
    """A version-1 cursor with ``toolResultsCommitted: true`` and both message ids, else
    ``None`` (also how a replay reads the cursor a recorded ``_session/continue`` sent)."""
    cursor = _object(value)
    if (
        cursor is None
        or type(cursor.get("version")) is not int
        or cursor.get("version") != SUPPORTED_VERSION
        or cursor.get("toolResultsCommitted") is not True
        or not _identifier(cursor.get("userMessageId"))
        or not _identifier(cursor.get("assistantMessageId"))
    ):
        return None
    return ContinuationCursor(
        user_message_id=str(cursor["userMessageId"]),
        assistant_message_id=str(cursor["assistantMessageId"]),
    )
