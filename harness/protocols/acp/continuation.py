"""AMR native continuation: when an interrupted prompt may go on in a new process, and how.

seed 000 "AMR compaction continuation (ACP extension v1)". A prompt interrupted by the
compaction fails this process, never retryable; only when every condition holds does
the run carry the evidence for a new process, which loads the same durable session and
sends ``_session/continue`` with only the cursor (rules ACP-AMR-CONTINUE-001..006).

Design: docs/design/protocols.md#harness.protocols.acp
"""

from __future__ import annotations

from typing import Any

from harness.events import Status
from harness.protocols.acp.amr_extension import (
    CONTINUE_METHOD,
    ContinuationEvidence,
    advertised_version,
    parse_continuation_evidence,
    supports_native_continue,
)
from harness.protocols.acp.context import RunContext, bounded
from harness.protocols.acp.schema import excerpt
from harness.protocols.base import Actions

__all__ = [
    "CONTINUATION_EXHAUSTED",
    "CONTINUATION_HISTORY",
    "CONTINUATION_INCOMPLETE",
    "CONTINUATION_UNSUPPORTED",
    "Continuation",
    "start_status",
]

#: seed 000 "AMR compaction continuation": the interrupted prompt, however it ends.
CONTINUATION_INCOMPLETE = "AMR_CONTINUATION_INCOMPLETE"
#: ... and the continuing process's own failures.
CONTINUATION_UNSUPPORTED = "AMR_CONTINUATION_UNSUPPORTED"
CONTINUATION_HISTORY = "AMR_CONTINUATION_HISTORY_MISMATCH"
CONTINUATION_EXHAUSTED = "AMR_CONTINUATION_EXHAUSTED"


def start_status(continuing: ContinuationEvidence) -> Status:
    """The status that says where the second process of the run begins."""
    cursor = continuing.cursor
    return Status(
        label="continuation",
        session_id=continuing.durable_session_id,
        detail=(
            f"{CONTINUE_METHOD} after the compaction interruption (user message "
            f"{cursor.user_message_id}, assistant message "
            f"{cursor.assistant_message_id})"
        ),
    )


class Continuation:
    """The continuation checks of one run, on both sides of the process boundary."""

    def __init__(self, run: RunContext) -> None:
        self._run = run

    # -- the continuing process -----------------------------------------------------------

    def load(self, actions: Actions, servers: list[dict[str, Any]]) -> None:
        """seed 000 "AMR compaction continuation": the new process loads the same durable
        session, only when it negotiated the extension (rule ACP-AMR-CONTINUE-002)."""
        run = self._run
        assert run.request is not None and run.continuing is not None
        unnegotiated = self._unnegotiated()
        if unnegotiated is not None:
            run.fail(
                actions,
                code=CONTINUATION_UNSUPPORTED,
                message=(
                    f"cannot continue the interrupted turn natively: the new process {unnegotiated}"
                ),
                rule="ACP-AMR-CONTINUE-002",
            )
            return
        durable = run.continuing.durable_session_id
        params = {"sessionId": durable, "cwd": run.request.cwd, "mcpServers": servers}
        run.send_request(actions, "session/load", params)

    def same_history(self, result: dict[str, Any], actions: Actions) -> bool:
        """seed 000: "missing or changed history ... stop with failure" (ACP-AMR-CONTINUE-003).

        The load must answer for the durable session the evidence named; an agent that
        reports another ``openCodeSessionId`` has changed history under us.
        """
        run = self._run
        assert run.continuing is not None
        reported = result.get("openCodeSessionId")
        expected = run.continuing.durable_session_id
        if reported is None or reported == expected:
            return True
        run.fail(
            actions,
            code=CONTINUATION_HISTORY,
            message=f"cannot continue the interrupted turn: session/load of {expected!r} answered "
            f"for session {excerpt(reported, 80)}",
            rule="ACP-AMR-CONTINUE-003",
        )
        return False

    def load_failed(self, text: str, actions: Actions) -> None:
        """seed 000: "missing ... history ... stop with failure"; never a new session and
        never the prompt again, whatever ``retryable`` the agent claims."""
        run = self._run
        assert run.continuing is not None
        run.fail(
            actions,
            code=CONTINUATION_HISTORY,
            message=bounded(
                f"cannot continue the interrupted turn: {text} "
                f"(loading {run.continuing.durable_session_id!r})"
            ),
            rule="ACP-AMR-CONTINUE-003",
        )

    # -- the interrupted process ------------------------------------------------------------

    def interrupted(self, text: str, data: Any, method: str, actions: Actions) -> None:
        """The prompt (or the continuation) ended in the compaction interruption.

        Whatever happens next, this process's run failed with a non-retryable error: the
        interruption never authorizes reseeding or replaying the prompt. Only when every
        condition holds is ``run.continuation`` set, for the host to continue in a new
        process. ``text`` is the error as the run reports it, ``data`` its ``error.data``.
        """
        run = self._run
        if method == CONTINUE_METHOD:
            # seed 000: "At most one native continuation is allowed per physical Run".
            run.fail(
                actions,
                code=CONTINUATION_EXHAUSTED,
                message=bounded(f"{text}; the run's one native continuation was interrupted again"),
                rule="ACP-AMR-CONTINUE-004",
            )
            return
        runtime = run.config.native_continue_runtime
        evidence = parse_continuation_evidence(data, runtime) if runtime else None
        refusal = self._refusal(evidence)
        if refusal is None:
            assert evidence is not None
            run.continuation = evidence
            run.core.count("continuations_offered")
            run.fail(
                actions,
                code=CONTINUATION_INCOMPLETE,
                message=bounded(
                    f"{text}; session {evidence.durable_session_id!r} can be continued natively"
                ),
                rule="ACP-AMR-CONTINUE-001",
            )
            return
        rule, why = refusal
        run.fail(
            actions,
            code=CONTINUATION_INCOMPLETE,
            message=bounded(f"{text}; not continued: {why}"),
            rule=rule,
        )

    def _refusal(self, evidence: ContinuationEvidence | None) -> tuple[str, str] | None:
        """Why an interrupted prompt may not be continued: ``(rule, reason)``, or ``None``.

        Checked before the failure flushes open tools: seed 000 "The daemon independently
        checks its tool frames before closing unfinished rows".
        """
        run = self._run
        if run.config.native_continue_runtime is None:
            return (
                "ACP-AMR-CONTINUE-002",
                "the def takes no native continuation (acp.native_continue_runtime is unset)",
            )
        unnegotiated = self._unnegotiated()
        if unnegotiated is not None:
            return ("ACP-AMR-CONTINUE-002", f"initialize {unnegotiated}")
        if evidence is None:
            return (
                "ACP-AMR-CONTINUE-006",
                "no complete continuation evidence (legacy wording or partial data is "
                "classified, never continued)",
            )
        if evidence.durable_session_id != run.durable_session_id:
            return (
                "ACP-AMR-CONTINUE-003",
                f"the evidence names session {evidence.durable_session_id!r}, this run "
                f"opened {run.durable_session_id!r}",
            )
        unknown = run.mapper.unannounced_tool_ids
        if unknown:
            return (
                "ACP-AMR-CONTINUE-005",
                f"unknown tool call(s) {', '.join(sorted(unknown))[:200]} "
                "(no tool_call announced them)",
            )
        pending = run.mapper.open_tool_ids
        if pending:
            return (
                "ACP-AMR-CONTINUE-005",
                f"tool call(s) {', '.join(sorted(pending))[:200]} have no terminal status",
            )
        return None

    def _unnegotiated(self) -> str | None:
        """Why ``initialize`` did not negotiate the extension, or ``None`` when it did."""
        caps = self._run.agent_capabilities
        if supports_native_continue(caps):
            return None
        version = excerpt(advertised_version(caps), 40)
        return (
            f"did not negotiate {CONTINUE_METHOD} version 1 (advertised: {version}, "
            f"loadSession: {caps.get('loadSession')!r})"
        )
