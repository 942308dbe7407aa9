"""Error responses to our requests: which end the run, which the handshake recovers from.

ref §2.6: a refused model selection falls back to the default model (or fails with the
def's ``model_unavailable_error_code``), an error to a cancelled prompt is the
cancellation, the compaction interruption goes to the continuation checks, and any other
error fails the run as ``json-rpc id <n>: <message>`` (rule ACP-ERROR-001).

Design: docs/design/protocols.md#harness.protocols.acp
"""

from __future__ import annotations

from typing import Any

from harness.protocols import jsonrpc
from harness.protocols.acp.amr_extension import CONTINUE_METHOD, is_continuation_incomplete
from harness.protocols.acp.context import RunContext, bounded
from harness.protocols.acp.continuation import Continuation
from harness.protocols.acp.handshake import Handshake
from harness.protocols.acp.state import Phase
from harness.protocols.acp.turn import Turn
from harness.protocols.base import Actions
from harness.protocols.jsonrpc import ErrorResponse

__all__ = ["ErrorResponses", "infer_retryable", "rpc_text"]

_FAILED = "AGENT_EXECUTION_FAILED"
_MODEL_METHODS = frozenset({"session/set_config_option", "session/set_model"})
#: The requests whose answer ends the turn.
_TURN_METHODS = frozenset({"session/prompt", CONTINUE_METHOD})
#: ref §2.6: a set_model/set_config error is recoverable when it is -32603 (the older
#: code's only case); -32601 is recoverable too, since an agent that does not know
#: session/set_model can still run the turn on its default model.
_RECOVERABLE_MODEL_CODES = frozenset({jsonrpc.INTERNAL_ERROR, jsonrpc.METHOD_NOT_FOUND})
#: ref §2.6 retryable inference (the reference elides part of the list; these are the
#: members it names).
_RETRYABLE_WORDS = (
    "upstream_error",
    "stream idle timeout",
    "overloaded",
    "gateway timeout",
    "service unavailable",
)


def infer_retryable(error: ErrorResponse) -> bool:
    """ref §2.6: ``error.data.retryable|isRetryable``, else inferred from the text."""
    data = error.data
    if isinstance(data, dict):
        for key in ("retryable", "isRetryable"):
            if isinstance(data.get(key), bool):
                return bool(data[key])
    parts = [error.message or "", *_strings(data)]
    text = " ".join(parts).lower()
    if "request_too_large" in text:
        return False
    if any(word in text for word in _RETRYABLE_WORDS):
        return True
    return '"is_retryable":true' in text.replace(" ", "")


def _strings(value: Any, depth: int = 0, limit: int = 64) -> list[str]:
    """String leaves of ``value`` (bounded), for text-based inference."""
    if isinstance(value, str):
        return [value[:4000]]
    out: list[str] = []
    if depth < 4 and isinstance(value, (dict, list)):
        items = value.values() if isinstance(value, dict) else value
        for item in items:
            out.extend(_strings(item, depth + 1, limit))
            if len(out) >= limit:
                break
    return out[:limit]


def rpc_text(error: ErrorResponse) -> str:
    """ref §2.6: ``json-rpc id <n>: <error.message|code|'json-rpc error'>``."""
    text = error.message or (str(error.code) if error.code is not None else "json-rpc error")
    return f"json-rpc id {error.id}: {text}"


class ErrorResponses:
    """What an error response does to one run."""

    def __init__(
        self, run: RunContext, handshake: Handshake, turn: Turn, continuation: Continuation
    ) -> None:
        self._run = run
        self._handshake = handshake
        self._turn = turn
        self._continuation = continuation

    def on_error(self, error: ErrorResponse, actions: Actions) -> None:
        run = self._run
        method = run.outstanding.pop(error.id, None) if error.id is not None else None
        if method is None:
            # ref §2.6: "-32603 on an id != expectedId is ignored (cleanup noise)".
            if error.code == jsonrpc.INTERNAL_ERROR or run.core.phase is Phase.CANCELLING:
                run.core.count("ignored_errors")
                return
        elif self._answered(method, error, actions):
            return
        # ref §2.6: "json-rpc id <n>: <error.message|code|'json-rpc error'>" (ACP-ERROR-001).
        run.fail(
            actions,
            code=_FAILED,
            message=bounded(rpc_text(error)),
            rule="ACP-ERROR-001",
            retryable=infer_retryable(error),
        )

    def _answered(self, method: str, error: ErrorResponse, actions: Actions) -> bool:
        """Handle an error to our ``method`` that is not a plain failure; ``False`` if it is."""
        run = self._run
        model_code = run.config.model_unavailable_error_code
        if method in _MODEL_METHODS and model_code is not None:
            # ref §2.6: AMR (``modelUnavailableErrorCode``) does not fall back to the
            # default model: the user must choose another (rule ACP-MODEL-003).
            run.fail(
                actions,
                code=model_code,
                message=bounded(f"{rpc_text(error)} (choose another model)"),
                rule="ACP-MODEL-003",
            )
        elif method in _MODEL_METHODS and error.code in _RECOVERABLE_MODEL_CODES:
            self._handshake.on_default_model(actions)
        elif method in _TURN_METHODS and run.core.phase is Phase.CANCELLING:
            # The agent answered our cancelled prompt with an error (e.g. -32800):
            # the user asked for the stop, so the run is cancelled, not failed. An
            # interrupted compaction is no exception (seed 000: "Cancellation ... stop").
            self._turn.complete(actions, "cancelled", None, usage_event=False)
        elif method in _TURN_METHODS and is_continuation_incomplete(
            error.message or "", error.data
        ):
            self._continuation.interrupted(rpc_text(error), error.data, method, actions)
        elif method == "session/load" and run.continuing is not None:
            self._continuation.load_failed(rpc_text(error), actions)
        else:
            return False
        return True
