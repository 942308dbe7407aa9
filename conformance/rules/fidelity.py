"""Engine fidelity: a run behaves as the host's own run would (seed 000, seed 002).

Replay sees what a live run sees (design §Recordings): enforced by
:func:`harness.capture.replay_capture`; tests in ``tests/capture/test_driver.py``.

Capabilities reach real runs (seed 002 §5.5); enforced by :mod:`harness.runtime.detect`
(:class:`~harness.runtime.detect.CapabilityCache`,
:func:`~harness.runtime.detect.capabilities_for_run`), :mod:`harness.runner.prepare` and
the run check in :mod:`conformance.checks.runs`; tests in
``tests/runner/test_capabilities.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        id="FIDELITY-CAPS-001",
        tier=Tier.MANDATORY,
        statement=(
            "build_args reads the help-probe findings of the executable the run spawns, kept "
            "per executable stamp (a replaced binary is probed again): a flag its help does "
            "not list is never passed, one it lists and the def gates on is."
        ),
        citation="seed 002 §5.5",
    ),
    Rule(
        id="FIDELITY-REPLAY-001",
        tier=Tier.MANDATORY,
        statement=(
            "A replay feeds the session the whole capture, after its finish too, and ends "
            "with end_of_output, as a live run does: a frame the session fails after the "
            "finish (a dsh frame after the terminal result) fails the replay."
        ),
        citation="design §Recordings; seed 001 §6",
    ),
    Rule(
        id="FIDELITY-REPLAY-002",
        tier=Tier.MANDATORY,
        statement=(
            "A capture whose run failed before the prompt was sent (an ACP agent refusing "
            "session/new, the host then sending authenticate) is replayed with the request "
            "the host opened, and the replay reports the agent's error."
        ),
        citation="design §Recordings; ref §2.6",
    ),
    Rule(
        id="FIDELITY-RETIRED-001",
        tier=Tier.MANDATORY,
        statement=(
            "A retired def (Gemini) is kept and runs when asked for by id, but agent "
            "selection never picks it by default, and the agent list says it is retired."
        ),
        citation="seed 000 §3",
        formats=(),
    ),
    Rule(
        id="FIDELITY-BUDGET-001",
        tier=Tier.MANDATORY,
        statement=(
            "The POSIX argv prompt budget is a named generation with its source (current: "
            "100000 off darwin and 262144 on darwin; seed-002: 120000; legacy: the def's "
            "number); the argv guard applies the def's generation unless a run asks for another."
        ),
        citation="seed 002 §6.3; ref §4.1",
        formats=(),
    ),
    Rule(
        id="FIDELITY-EMPTY-001",
        tier=Tier.MANDATORY,
        statement=(
            "A run that ends without any output a person can use (no text, thinking, tool "
            "call or result, artifact or written file) fails with AGENT_EMPTY_OUTPUT, even "
            "with exit 0."
        ),
        citation="seed 000 §5.10; seed 002 §4.4",
    ),
    Rule(
        id="FIDELITY-AUTH-001",
        tier=Tier.MANDATORY,
        statement=(
            "A failure nothing in the stream explains whose stderr or CLI log carries an "
            "authentication signature fails with AGENT_AUTH_REQUIRED and the def's guidance "
            "(DeepSeek: its config file and key variable), else the host's generic one."
        ),
        citation="seed 000 §5.11; ref §5.4",
    ),
    Rule(
        id="FIDELITY-FAILURE-001",
        tier=Tier.MANDATORY,
        statement=(
            "Such a failure is classified as ref §5.4 orders it: authentication before "
            "RATE_LIMITED before UPSTREAM_UNAVAILABLE; a bare status number counts only with "
            "HTTP context, never as an exit code."
        ),
        citation="ref §5.4",
    ),
    Rule(
        id="FIDELITY-LOGFILE-001",
        tier=Tier.MANDATORY,
        statement=(
            "A def silent on failure (agy print mode) gets a fresh log file the runner "
            "creates, passes before -p, reads after a failed run to classify it, and removes."
        ),
        citation="seed 002 §4.4",
        formats=("plain",),
    ),
    Rule(
        id="FIDELITY-OPENCODE-LOG-001",
        tier=Tier.MANDATORY,
        statement=(
            "After a failed OpenCode run the newest log OpenCode wrote during it is read: "
            "the last HTTP statusCode it names classifies the failure (401/403 auth, 429 "
            "rate limit, 5xx upstream), else its keywords do."
        ),
        citation="seed 002 §7.4",
        formats=("json-event-stream",),
    ),
    Rule(
        id="FIDELITY-ACP-MODELS-001",
        tier=Tier.MANDATORY,
        statement=(
            "Detection discovers an ACP agent's models by writing initialize and session/new "
            "to its stdin and reading the session/new result (models.availableModels, else a "
            "model config option's choices); no answer falls back to the def's models."
        ),
        citation="seed 002 §4.5; ref §2.6",
        formats=("acp-json-rpc",),
    ),
    Rule(
        id="FIDELITY-MIDTURN-001",
        tier=Tier.MANDATORY,
        statement=(
            "A user message the host sends during a turn is written to a held-open "
            "stream-json stdin, which then stays open until that message's own terminal "
            "turn; where the protocol takes none, the run reports it was not forwarded."
        ),
        citation="seed 002 §6.2; ref §2.1.8",
    ),
)
